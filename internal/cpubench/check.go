package cpubench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/goamp/goamp/internal/reference"
)

// checker holds float64 references for one case's product, computed once,
// against which each result is checked in O(n^2) time. A full float64
// reference product would cost n^3, as much as the slowest library's
// multiply (minutes for gonum at 4096), so the check looks at the product in
// two ways that are cheap and between them leave a wrong kernel nowhere to
// hide:
//
//   - Projections (Freivalds' test): for random vectors x and y, C*x must
//     equal op(A)*(op(B)*x), and y^T*C must equal (y^T*op(A))*op(B). Each is
//     O(n^2) in float64, and a wrong block, row, column, transpose or scale
//     anywhere in C moves them. Each projected element is held to the
//     tolerance for n terms relative to its bound |op(A)|*(|op(B)|*|x|): if
//     every element of C is within tol times the sum of the magnitudes of its
//     terms, then (C*x)_i is within tol times that bound, so a correct result
//     passes (the projection's own rounding, in float64, is far smaller).
//   - Whole rows and columns, element by element: the first, the last and a
//     random one of each, against their exact float64 values. Blocked
//     kernels go wrong at the edges, where blocks are partial; there even
//     one bad element is caught, where a projection averages it with n others.
//
// A NaN anywhere in C (the poison left where a library wrote nothing) makes
// its projections NaN, which fails.
type checker[T Float] struct {
	n   int
	tol float64

	// Projections: right vectors x (C*x) and left vectors y (y^T*C), each
	// with the reference value and bound of every element.
	right, left []projection

	// Rows and columns checked element by element.
	rows, cols      []int
	rowWant, rowBnd [][]float64
	colWant, colBnd [][]float64
	gotLine         []float64 // scratch for one row or column of C
}

type projection struct{ v, want, bound []float64 }

// newChecker computes the references for C = op(A)*op(B), A and B n x n
// row-major, drawing the random vectors and lines from r.
func newChecker[T Float](n int, tr Trans, a, b []T, r *rand.Rand) *checker[T] {
	ch := &checker[T]{n: n, tol: reference.Tolerance[T](n)}
	for range 2 {
		x := randomVector(r, n)
		// op(A)*(op(B)*x), and the bound |op(A)|*(|op(B)|*|x|).
		bx, bxAbs := matVec(tr.B, n, b, x)
		want, bound := matVecPair(tr.A, n, a, bx, bxAbs)
		ch.right = append(ch.right, projection{x, want, bound})
	}
	{
		// (y^T*op(A))*op(B) = op(B)^T*(op(A)^T*y): op(X)^T is X read with
		// the opposite transpose.
		y := randomVector(r, n)
		ay, ayAbs := matVec(!tr.A, n, a, y)
		want, bound := matVecPair(!tr.B, n, b, ay, ayAbs)
		ch.left = append(ch.left, projection{y, want, bound})
	}
	ch.rows = lines(n, r)
	ch.cols = lines(n, r)
	for _, i := range ch.rows {
		// Row i of op(A)*op(B) is op(B)^T * (row i of op(A)).
		want, bound := matVec(!tr.B, n, b, line(tr.A, n, a, i, true))
		ch.rowWant, ch.rowBnd = append(ch.rowWant, want), append(ch.rowBnd, bound)
	}
	for _, j := range ch.cols {
		// Column j of op(A)*op(B) is op(A) * (column j of op(B)).
		want, bound := matVec(tr.A, n, a, line(tr.B, n, b, j, false))
		ch.colWant, ch.colBnd = append(ch.colWant, want), append(ch.colBnd, bound)
	}
	ch.gotLine = make([]float64, n)
	return ch
}

// check returns an error describing how c, the n x n row-major result,
// differs from the product by more than the tolerance; nil if it does not.
func (ch *checker[T]) check(c []T) error {
	n := ch.n
	for _, p := range ch.right {
		got := project(false, n, c, p.v)
		if err := ch.compare("projection C*x", got, p.want, p.bound); err != nil {
			return err
		}
	}
	for _, p := range ch.left {
		got := project(true, n, c, p.v)
		if err := ch.compare("projection y^T*C", got, p.want, p.bound); err != nil {
			return err
		}
	}
	for k, i := range ch.rows {
		for j := range n {
			ch.gotLine[j] = float64(c[i*n+j])
		}
		if err := ch.compare(fmt.Sprintf("row %d", i), ch.gotLine, ch.rowWant[k], ch.rowBnd[k]); err != nil {
			return err
		}
	}
	for k, j := range ch.cols {
		for i := range n {
			ch.gotLine[i] = float64(c[i*n+j])
		}
		if err := ch.compare(fmt.Sprintf("column %d", j), ch.gotLine, ch.colWant[k], ch.colBnd[k]); err != nil {
			return err
		}
	}
	return nil
}

// compare fails when got strays from want by more than the tolerance
// relative to bound, naming where.
func (ch *checker[T]) compare(what string, got, want, bound []float64) error {
	worst, at := 0.0, 0
	for i := range got {
		if e := reference.MaxErr(got[i:i+1], want[i:i+1], bound[i:i+1]); e > worst {
			worst, at = e, i
		}
	}
	if worst > ch.tol {
		return fmt.Errorf("%s: error %.3g relative to the magnitude of the terms, tolerance %.3g (element %d is %g, want %g)",
			what, worst, ch.tol, at, got[at], want[at])
	}
	return nil
}

// randomVector returns n values uniform in [-1, 1).
func randomVector(r *rand.Rand, n int) []float64 { return reference.RandomSlice[float64](r, n) }

// lines picks the rows (or columns) checked element by element: the first,
// the last, and one at random, without repeats.
func lines(n int, r *rand.Rand) []int {
	out := []int{0}
	if n > 1 {
		out = append(out, n-1)
	}
	if mid := r.IntN(n); mid != 0 && mid != n-1 {
		out = append(out, mid)
	}
	return out
}

// line returns row i of op(X) (or, when row is false, column i), X n x n
// row-major, in float64.
func line[T Float](trans bool, n int, x []T, i int, row bool) []float64 {
	out := make([]float64, n)
	contiguous := row != trans // a row of X, or a column of X^T
	for j := range n {
		if contiguous {
			out[j] = float64(x[i*n+j])
		} else {
			out[j] = float64(x[j*n+i])
		}
	}
	return out
}

// matVec returns op(M)*v and |op(M)|*|v| in float64, M n x n row-major.
func matVec[T Float](trans bool, n int, m []T, v []float64) (y, yAbs []float64) {
	vAbs := make([]float64, n)
	for i, x := range v {
		vAbs[i] = math.Abs(x)
	}
	return matVecPair(trans, n, m, v, vAbs)
}

// matVecPair returns op(M)*v and |op(M)|*vAbs, in one pass over M: the
// second is the bound on the rounding error of the first, for vAbs the bound
// of v. Both walk M along its rows, whichever the transpose, for speed.
func matVecPair[T Float](trans bool, n int, m []T, v, vAbs []float64) (y, yAbs []float64) {
	y, yAbs = make([]float64, n), make([]float64, n)
	for i := range n {
		row := m[i*n : (i+1)*n]
		if trans {
			// op(M) = M^T: row i of M scaled by v[i] adds to every y.
			vi, vai := v[i], vAbs[i]
			for j, x := range row {
				f := float64(x)
				y[j] += f * vi
				yAbs[j] += math.Abs(f) * vai
			}
			continue
		}
		var s, sa float64
		for j, x := range row {
			f := float64(x)
			s += f * v[j]
			sa += math.Abs(f) * vAbs[j]
		}
		y[i], yAbs[i] = s, sa
	}
	return y, yAbs
}

// project returns op(M)*v in float64, M n x n row-major: matVecPair without
// the bound, for the result under test.
func project[T Float](trans bool, n int, m []T, v []float64) []float64 {
	y := make([]float64, n)
	for i := range n {
		row := m[i*n : (i+1)*n]
		if trans {
			vi := v[i]
			for j, x := range row {
				y[j] += float64(x) * vi
			}
			continue
		}
		var s float64
		for j, x := range row {
			s += float64(x) * v[j]
		}
		y[i] = s
	}
	return y
}
