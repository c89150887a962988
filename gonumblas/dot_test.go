package gonumblas

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"

	"github.com/goamp/goamp/internal/reference"
)

// TestDot checks Sdot and Ddot over unit and other strides against the
// float64 reference and gonum's routines: within tolerance for unit strides
// (a different kernel, so other rounding), to the bit for the others (the
// same code). testblas.DdotTest covers Ddot's fixed cases too.
func TestDot(t *testing.T) {
	t.Run("Sdot", func(t *testing.T) { testDot(t, impl.Sdot, gonum.Implementation{}.Sdot) })
	t.Run("Ddot", func(t *testing.T) { testDot(t, impl.Ddot, gonum.Implementation{}.Ddot) })
}

func testDot[T float32 | float64](t *testing.T, ours, theirs func(int, []T, int, []T, int) T) {
	r := rand.New(rand.NewPCG(3, 4))
	incs := [][2]int{{1, 1}, {2, 1}, {1, 3}, {-1, 1}, {1, -1}, {-2, -3}, {4, 4}}
	for _, n := range []int{0, 1, 2, 3, 5, 8, 17, 31, 32, 33, 67, 1000, 4099} {
		for _, inc := range incs {
			incX, incY := inc[0], inc[1]
			lx, ly := 1+(n-1)*abs(incX), 1+(n-1)*abs(incY)
			// Slices one longer than needed, the extra element NaN: it must
			// not be read.
			x := reference.RandomSlice[T](r, max(lx, 0)+1)
			y := reference.RandomSlice[T](r, max(ly, 0)+1)
			x[len(x)-1], y[len(y)-1] = T(math.NaN()), T(math.NaN())
			if n == 0 {
				x, y = nil, nil
			}
			// The elements in the order the routine pairs them: a negative
			// increment starts at the far end.
			xs, ys := make([]float64, n), make([]float64, n)
			for i := range n {
				xs[i] = float64(x[index(i, n, incX)])
				ys[i] = float64(y[index(i, n, incY)])
			}
			want, bound := reference.Dot(xs, ys)
			got := ours(n, x, incX, y, incY)
			if e := reference.MaxErr([]T{got}, []float64{want}, []float64{bound}); e > reference.Tolerance[T](n) {
				t.Errorf("n=%d incX=%d incY=%d: got %v, want %v (error %.3g)", n, incX, incY, got, want, e)
			}
			ref := theirs(n, x, incX, y, incY)
			if incX != 1 || incY != 1 {
				if got != ref {
					t.Errorf("n=%d incX=%d incY=%d: got %v, gonum's %v: they should be the same", n, incX, incY, got, ref)
				}
			} else if e := reference.MaxErr([]T{ref}, []float64{want}, []float64{bound}); e > reference.Tolerance[T](n) {
				t.Errorf("n=%d: gonum's %v is off by %.3g", n, ref, e)
			}
		}
	}
}

// index is the slice index of element i of an n-vector with increment inc.
func index(i, n, inc int) int {
	if inc < 0 {
		return (n - 1 - i) * -inc
	}
	return i * inc
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
