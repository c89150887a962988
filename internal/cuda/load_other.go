//go:build !(linux && (amd64 || arm64))

package cuda

import (
	"fmt"
	"runtime"
)

// openDriver reports that this platform has no driver to open: the package
// binds libcuda.so.1 on 64-bit Linux only, where NVIDIA ships it.
func openDriver() (*driver, error) {
	return nil, fmt.Errorf("%w: not supported on %s/%s", ErrNoDriver, runtime.GOOS, runtime.GOARCH)
}
