//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"

	"github.com/ebitengine/purego"
	"github.com/goamp/goamp/internal/dynlib"
)

// openDriver dlopens libcuda.so.1 and binds every entry point the package
// uses. Where the driver API has versioned symbols (_v2) it binds those:
// the unversioned names are the CUDA 3.x ABI, kept only for old binaries,
// and some take 32-bit sizes.
func openDriver() (*driver, error) {
	lib, err := dynlib.Open(Library)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	d := new(driver)
	for _, s := range d.symbols() {
		var addr uintptr
		for _, name := range s.names {
			if a, err := purego.Dlsym(lib, name); err == nil && a != 0 {
				addr = a
				break
			}
		}
		if addr == 0 && s.optional {
			continue
		}
		if addr == 0 {
			return nil, fmt.Errorf("%w: %s has no symbol %s (driver too old?)", ErrNoDriver, Library, s.names[0])
		}
		purego.RegisterFunc(s.fn, addr)
	}
	return d, nil
}
