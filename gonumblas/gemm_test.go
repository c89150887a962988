package gonumblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/goamp/goamp/internal/reference"
)

// testblas has no float32 tests and only a few fixed cases for Dgemm, so
// both precisions are also checked here over every transpose, strides wider
// than the rows, shapes 0, 1 and primes, and alpha and beta 0, 1 and others:
// against the float64 reference within reference.Tolerance, and against
// gonum's native routine, which must be within the same tolerance.

type gemmFunc[T float32 | float64] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// gemmPair returns our gemm and gonum's for T.
func gemmPair[T float32 | float64]() (ours, theirs gemmFunc[T]) {
	switch p := any(&ours).(type) {
	case *gemmFunc[float32]:
		*p = Implementation{}.Sgemm
		*any(&theirs).(*gemmFunc[float32]) = gonum.Implementation{}.Sgemm
	case *gemmFunc[float64]:
		*p = Implementation{}.Dgemm
		*any(&theirs).(*gemmFunc[float64]) = gonum.Implementation{}.Dgemm
	}
	return ours, theirs
}

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}

// alphaBeta are the scalars every shape is tried with: 0 and 1 take the
// quick paths, beta 0 must not read C (which holds NaN then), and the others
// make sure both are applied.
var alphaBeta = [][2]float64{{1, 0}, {0.7, -1.3}, {0, 0}, {0, 1}, {0, 2.5}, {1, 1}, {-1, 0.5}}

func TestGemm(t *testing.T) {
	t.Run("Sgemm", testGemm[float32])
	t.Run("Dgemm", testGemm[float64])
}

func testGemm[T float32 | float64](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ours, theirs := gemmPair[T]()
	dims := []int{0, 1, 2, 7, 17}
	for _, tA := range transposes {
		for _, tB := range transposes {
			for _, m := range dims {
				for _, n := range dims {
					for _, k := range dims {
						for i, ab := range alphaBeta {
							// Strides equal to the row length and wider,
							// alternately.
							pad := 3 * (i % 2)
							compareGemm(t, r, ours, theirs, tA, tB, m, n, k, T(ab[0]), T(ab[1]), pad)
						}
					}
				}
			}
		}
	}
	// Large enough to cross the engine's cache blocks (kc = 256, mc = 144
	// or 96) and to be split between threads. ConjTrans takes the same path
	// as Trans, which the small shapes above show.
	for _, tA := range transposes[:2] {
		for _, tB := range transposes[:2] {
			compareGemm(t, r, ours, theirs, tA, tB, 151, 97, 263, 0.7, -1.3, 5)
		}
	}
	compareGemm(t, r, ours, theirs, blas.NoTrans, blas.NoTrans, 67, 131, 300, 1, 0, 0)
}

// compareGemm runs one product with ours and gonum's on the same inputs and
// checks both against the float64 reference, and that ours leaves A, B and
// the parts of C outside the m x n matrix alone.
func compareGemm[T float32 | float64](t *testing.T, r *rand.Rand, ours, theirs gemmFunc[T], tA, tB blas.Transpose, m, n, k int, alpha, beta T, pad int) {
	t.Helper()
	name := fmt.Sprintf("%c%c m=%d n=%d k=%d alpha=%v beta=%v pad=%d", tA, tB, m, n, k, alpha, beta, pad)
	aT, bT := tA != blas.NoTrans, tB != blas.NoTrans
	ar, ac := m, k
	if aT {
		ar, ac = k, m
	}
	br, bc := k, n
	if bT {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	lda, ldb, ldc = max(lda, 1), max(ldb, 1), max(ldc, 1)
	a := reference.RandomSlice[T](r, ar*lda)
	b := reference.RandomSlice[T](r, br*ldb)
	c := reference.RandomSlice[T](r, m*ldc)
	if beta == 0 {
		for i := range c {
			c[i] = T(math.NaN())
		}
	}
	a0, b0 := append([]T(nil), a...), append([]T(nil), b...)
	c1, c2 := append([]T(nil), c...), append([]T(nil), c...)
	ours(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c1, ldc)
	theirs(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c2, ldc)

	if !sameBits(a, a0) || !sameBits(b, b0) {
		t.Errorf("%s: A or B changed", name)
	}
	// The reference wants dense row-major op(A), op(B) and C.
	opA, opB := make([]float64, m*k), make([]float64, k*n)
	for i := range m {
		for p := range k {
			if aT {
				opA[i*k+p] = float64(a[p*lda+i])
			} else {
				opA[i*k+p] = float64(a[i*lda+p])
			}
		}
	}
	for p := range k {
		for j := range n {
			if bT {
				opB[p*n+j] = float64(b[j*ldb+p])
			} else {
				opB[p*n+j] = float64(b[p*ldb+j])
			}
		}
	}
	cc := make([]float64, m*n)
	got1, got2 := make([]T, m*n), make([]T, m*n)
	for i := range m {
		for j := range n {
			cc[i*n+j] = float64(c[i*ldc+j])
			got1[i*n+j], got2[i*n+j] = c1[i*ldc+j], c2[i*ldc+j]
		}
		// Padding between rows is not part of C and must not change.
		for j := n; j < ldc && i*ldc+j < len(c); j++ {
			if !sameBits(c1[i*ldc+j:i*ldc+j+1], c[i*ldc+j:i*ldc+j+1]) {
				t.Errorf("%s: C[%d] outside the matrix changed", name, i*ldc+j)
				break
			}
		}
	}
	want := reference.MatMul(m, n, k, float64(alpha), opA, opB, float64(beta), cc)
	bound := reference.MatMulBound(m, n, k, float64(alpha), opA, opB, float64(beta), cc)
	tol := reference.Tolerance[T](k)
	if e := reference.MaxErr(got1, want, bound); e > tol {
		t.Errorf("%s: ours has error %.3g > tolerance %.3g", name, e, tol)
	}
	if e := reference.MaxErr(got2, want, bound); e > tol {
		t.Errorf("%s: gonum's has error %.3g > tolerance %.3g", name, e, tol)
	}
}

func sameBits[T float32 | float64](x, y []T) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] && !(x[i] != x[i] && y[i] != y[i]) {
			return false
		}
	}
	return true
}

// TestGemmAlphaZero checks that with alpha 0 neither A nor B is read (NaN
// there stays out of C) and with beta 0 C is not read either.
func TestGemmAlphaZero(t *testing.T) {
	nan := math.NaN()
	a := []float64{nan, nan, nan, nan}
	for _, beta := range []float64{0, 1, 2} {
		c := []float64{1, 2, 3, 4}
		if beta == 0 {
			c = []float64{nan, nan, nan, nan}
		}
		impl.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 0, a, 2, a, 2, beta, c, 2)
		for i, v := range c {
			want := beta * float64(i+1)
			if v != want {
				t.Errorf("beta=%v: C[%d] = %v, want %v", beta, i, v, want)
			}
		}
	}
	s := []float32{float32(nan), float32(nan)}
	cs := []float32{float32(nan), float32(nan)}
	impl.Sgemm(blas.Trans, blas.NoTrans, 1, 2, 1, 0, s, 1, s, 2, 0, cs, 2)
	if cs[0] != 0 || cs[1] != 0 {
		t.Errorf("Sgemm with alpha = beta = 0: C = %v, want zeros", cs)
	}
}

// TestGemmConcurrent runs products from several goroutines at once, as
// gonum's users may: the engine's shared thread pool must keep them apart.
func TestGemmConcurrent(t *testing.T) {
	const n, workers = 48, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			a := reference.RandomSlice[float64](r, n*n)
			b := reference.RandomSlice[float64](r, n*n)
			want := reference.MatMul(n, n, n, 1, a, b, 0, nil)
			bound := reference.MatMulBound(n, n, n, 1, a, b, 0, nil)
			for range 5 {
				c := make([]float64, n*n)
				impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n)
				if e := reference.MaxErr(c, want, bound); e > reference.Tolerance[float64](n) {
					t.Errorf("worker %d: error %.3g", w, e)
					return
				}
			}
		})
	}
	wg.Wait()
}
