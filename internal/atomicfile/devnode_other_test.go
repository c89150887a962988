//go:build unix && !linux

package atomicfile

import "errors"

// mknodTwin is left out where the type of a device number differs from
// Linux's; tests that need a device node go without.
func mknodTwin(path, of string) error { return errors.ErrUnsupported }
