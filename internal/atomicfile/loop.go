//go:build !plan9

package atomicfile

import "syscall"

// errLinkLoop is the error a chain of too many symbolic links wraps: the
// system's own, so that errors.Is(err, syscall.ELOOP) holds as for os.Open.
var errLinkLoop error = syscall.ELOOP
