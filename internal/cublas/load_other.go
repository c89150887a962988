//go:build !(linux && (amd64 || arm64))

package cublas

import (
	"fmt"
	"runtime"
)

// openLibrary reports that this platform has no cuBLAS to open: like
// internal/cuda, the package binds NVIDIA's libraries on 64-bit Linux only.
func openLibrary() (*library, error) {
	return nil, fmt.Errorf("%w: not supported on %s/%s", ErrUnavailable, runtime.GOOS, runtime.GOARCH)
}
