// Package openblas opens the system's OpenBLAS at run time with purego (no
// cgo) so that benchmarks can measure goamp against it in the same process.
// Nothing outside benchmarks uses it; goamp never needs OpenBLAS to run.
package openblas

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/goamp/goamp/internal/dynlib"
)

// Library is the shared object tried first: Debian's libopenblas0-pthread
// package installs it.
const Library = "libopenblas.so.0"

// ErrUnavailable is returned by Open when OpenBLAS cannot be loaded.
var ErrUnavailable = errors.New("openblas: not available")

// CBLAS enumerations (cblas.h).
const (
	rowMajor = 101
	noTrans  = 111
	trans    = 112
)

// BLAS is an opened OpenBLAS.
type BLAS struct {
	sgemm      func(order, transA, transB, m, n, k int32, alpha float32, a *float32, lda int32, b *float32, ldb int32, beta float32, c *float32, ldc int32)
	dgemm      func(order, transA, transB, m, n, k int32, alpha float64, a *float64, lda int32, b *float64, ldb int32, beta float64, c *float64, ldc int32)
	setThreads func(n int32)
	getConfig  func() string
}

var (
	once    sync.Once
	opened  *BLAS
	openErr error
)

// Open loads OpenBLAS once and returns it, or an error wrapping
// ErrUnavailable saying why it could not.
func Open() (*BLAS, error) {
	once.Do(func() {
		lib, err := dynlib.Open(Library)
		if err != nil {
			openErr = fmt.Errorf("%w: %v (Debian: apt-get install libopenblas0-pthread)", ErrUnavailable, err)
			return
		}
		b := new(BLAS)
		defer func() {
			if r := recover(); r != nil { // RegisterLibFunc panics on a missing symbol
				openErr = fmt.Errorf("%w: %s: %v", ErrUnavailable, Library, r)
			}
		}()
		purego.RegisterLibFunc(&b.sgemm, lib, "cblas_sgemm")
		purego.RegisterLibFunc(&b.dgemm, lib, "cblas_dgemm")
		purego.RegisterLibFunc(&b.setThreads, lib, "openblas_set_num_threads")
		purego.RegisterLibFunc(&b.getConfig, lib, "openblas_get_config")
		opened = b
	})
	return opened, openErr
}

// SetThreads sets how many threads OpenBLAS uses.
func (b *BLAS) SetThreads(n int) { b.setThreads(int32(n)) }

// Config is OpenBLAS's description of its build (version, core, threads).
func (b *BLAS) Config() string { return b.getConfig() }

func op(t bool) int32 {
	if t {
		return trans
	}
	return noTrans
}

// first returns a pointer to x's first element, or nil for an empty slice.
func first[T any](x []T) *T {
	if len(x) == 0 {
		return nil
	}
	return &x[0]
}

// Sgemm is cblas_sgemm on row-major matrices, with gemm.Float32's arguments.
func (b *BLAS) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	b.sgemm(rowMajor, op(transA), op(transB), int32(m), int32(n), int32(k), alpha, first(a), int32(lda), first(bm), int32(ldb), beta, first(c), int32(ldc))
}

// Dgemm is cblas_dgemm on row-major matrices, with gemm.Float64's arguments.
func (b *BLAS) Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, bm []float64, ldb int, beta float64, c []float64, ldc int) {
	b.dgemm(rowMajor, op(transA), op(transB), int32(m), int32(n), int32(k), alpha, first(a), int32(lda), first(bm), int32(ldb), beta, first(c), int32(ldc))
}
