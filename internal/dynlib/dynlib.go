// Package dynlib opens shared libraries at run time (dlopen through purego,
// no cgo) and keeps the reason when one will not open.
package dynlib

import (
	"fmt"
	"runtime"

	"github.com/ebitengine/purego"
)

// Open dlopens the library at path (a file name, searched for as dlopen
// does, or a path) with RTLD_NOW|RTLD_GLOBAL and returns its handle.
//
// dlopen leaves its reason for a failure in per-thread state that purego
// reads with a second call (dlerror): a goroutine moved to another thread
// in between, or another dlopen on the same thread, leaves the reason
// empty. Open keeps the goroutine on its thread for both calls, and says
// so when the reason is still empty.
func Open(path string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil && err.Error() == "" {
		return 0, fmt.Errorf("dlopen %s failed, and gave no reason", path)
	}
	return h, err
}
