//go:build linux && (amd64 || arm64)

package cublas

import (
	"fmt"
	"strings"

	"github.com/ebitengine/purego"
	"github.com/goamp/goamp/internal/dynlib"
)

// openLibrary dlopens the first of Libraries that opens and binds every
// entry point. A library that opens but lacks a symbol is refused whole:
// a half-bound cuBLAS would fail later, further from the cause.
func openLibrary() (*library, error) {
	var first error
	for _, name := range Libraries {
		h, err := dynlib.Open(name)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		l := &library{path: name}
		for _, s := range l.symbols() {
			addr, err := purego.Dlsym(h, s.name)
			if err != nil || addr == 0 {
				return nil, fmt.Errorf("%w: %s has no symbol %s", ErrUnavailable, name, s.name)
			}
			purego.RegisterFunc(s.fn, addr)
		}
		return l, nil
	}
	// The first library's error says why (usually "cannot open shared
	// object file"); the others only failed the same way.
	return nil, fmt.Errorf("%w: %v (also tried %s; install the CUDA toolkit's cuBLAS, or put its folder on LD_LIBRARY_PATH)",
		ErrUnavailable, first, strings.Join(Libraries[1:], ", "))
}
