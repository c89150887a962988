package cpubench

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/goamp/goamp/internal/cpu/gemm"
	"github.com/goamp/goamp/internal/openblas"
)

// Float is the set of element types a library multiplies.
type Float interface{ float32 | float64 }

// GemmFunc sets C = alpha*op(A)*op(B) + beta*C for row-major matrices, with
// the arguments of gemm.Float32 and gemm.Float64: op(A) is m x k, op(B) k x n,
// C m x n, and lda, ldb, ldc are row strides.
type GemmFunc[T Float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// Library is a GEMM implementation the benchmark measures.
type Library struct {
	Name  string // "goamp", "gonum" or "openblas"; tables and sub-benchmarks use it
	Sgemm GemmFunc[float32]
	Dgemm GemmFunc[float64]
}

// Names of the libraries, in the order Libraries returns them: goamp first,
// as every ratio is goamp's against the others.
const (
	Goamp    = "goamp"
	Gonum    = "gonum"
	OpenBLAS = "openblas"
)

// LibraryNames lists every library the benchmark knows, present or not.
var LibraryNames = []string{Goamp, Gonum, OpenBLAS}

// gemmOf returns lib's multiply for element type T.
func gemmOf[T Float](lib Library) GemmFunc[T] {
	var f any = lib.Sgemm
	if _, double := any(T(0)).(float64); double {
		f = lib.Dgemm
	}
	return f.(GemmFunc[T])
}

// Libraries returns the libraries this machine can run: goamp and gonum
// always, OpenBLAS when libopenblas.so.0 opens. When it does not, missing says
// why (an error wrapping openblas.ErrUnavailable), and the caller decides
// whether that matters.
//
// OpenBLAS is told to use runtime.GOMAXPROCS(0) threads, the number goamp's
// pool and gonum use, so that the comparison is thread for thread; call
// Libraries again after changing GOMAXPROCS.
func Libraries() (libs []Library, missing error) {
	libs = []Library{
		{Name: Goamp, Sgemm: gemm.Float32, Dgemm: gemm.Float64},
		{Name: Gonum, Sgemm: gonumSgemm, Dgemm: gonumDgemm},
	}
	ob, err := openblas.Open()
	if err != nil {
		return libs, err
	}
	ob.SetThreads(runtime.GOMAXPROCS(0))
	return append(libs, Library{Name: OpenBLAS, Sgemm: ob.Sgemm, Dgemm: ob.Dgemm}), nil
}

// OpenBLASConfig returns OpenBLAS's description of its build (version,
// target core, thread limit), or why it is not available.
func OpenBLASConfig() string {
	ob, err := openblas.Open()
	if err != nil {
		return fmt.Sprintf("not available (%v)", err)
	}
	return ob.Config()
}

// KernelNames names goamp's micro-kernels on this machine, for the record of
// a measurement: "avx512-12x32 (float32), avx512-12x16 (float64)".
func KernelNames() string {
	return fmt.Sprintf("%s (float32), %s (float64)", gemm.KernelName(string(Float32)), gemm.KernelName(string(Float64)))
}

func blasTrans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func gonumSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gonum.Implementation{}.Sgemm(blasTrans(transA), blasTrans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func gonumDgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gonum.Implementation{}.Dgemm(blasTrans(transA), blasTrans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
