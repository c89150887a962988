package gonumblas

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is gonum's native BLAS with Sgemm, Dgemm, Sdot and Ddot run
// by goamp. Its zero value is ready to use, and it is safe for concurrent
// use, as gonum's is. Pass it to blas64.Use and blas32.Use to make gonum's
// matrix packages use it.
type Implementation struct {
	// gonum.Implementation provides every routine not overridden here.
	gonum.Implementation
}

// Implementation must keep satisfying every BLAS interface gonum defines:
// blas64.Use and blas32.Use take it as blas.Float64 and blas.Float32, and
// the complex routines come unchanged from the embedded implementation.
var (
	_ blas.Float32    = Implementation{}
	_ blas.Float64    = Implementation{}
	_ blas.Complex64  = Implementation{}
	_ blas.Complex128 = Implementation{}
)

// Panic values, identical to gonum's (unexported) ones in
// gonum.org/v1/gonum/blas/gonum/errors.go, so that code that recovers a
// panic, and gonum's test suite, cannot tell the two implementations apart.
const (
	zeroIncX = "blas: zero x index increment"
	zeroIncY = "blas: zero y index increment"

	mLT0 = "blas: m < 0"
	nLT0 = "blas: n < 0"
	kLT0 = "blas: k < 0"

	badTranspose = "blas: illegal transpose"

	badLdA = "blas: bad leading dimension of A"
	badLdB = "blas: bad leading dimension of B"
	badLdC = "blas: bad leading dimension of C"

	shortX = "blas: insufficient length of x"
	shortY = "blas: insufficient length of y"
	shortA = "blas: insufficient length of a"
	shortB = "blas: insufficient length of b"
	shortC = "blas: insufficient length of c"
)
