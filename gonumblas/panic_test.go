package gonumblas

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// The argument checks of the routines we replace must be gonum's: for each
// call below, ours and gonum.Implementation{} must both panic with the same
// value, or both return. Several cases break more than one rule, to check
// which check comes first.

// recovered runs f and returns what it panicked with, or nil.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// gemmArgs is one call of Sgemm or Dgemm, minus the element type: the
// slices are given by their lengths.
type gemmArgs struct {
	tA, tB             blas.Transpose
	m, n, k            int
	alpha              float64
	lenA, lda          int
	lenB, ldb          int
	beta               float64
	lenC, ldc          int
	mustPanic, noPanic bool // what gonum does, as a check on the table
}

// good is a valid 3x4 = (3x5)(5x4) product with dense matrices.
func good() gemmArgs {
	return gemmArgs{tA: blas.NoTrans, tB: blas.NoTrans, m: 3, n: 4, k: 5, alpha: 1,
		lenA: 15, lda: 5, lenB: 20, ldb: 4, beta: 0, lenC: 12, ldc: 4}
}

func gemmCases() map[string]gemmArgs {
	cs := map[string]gemmArgs{}
	add := func(name string, mustPanic bool, f func(*gemmArgs)) {
		g := good()
		f(&g)
		g.mustPanic, g.noPanic = mustPanic, !mustPanic
		cs[name] = g
	}
	add("valid", false, func(g *gemmArgs) {})
	add("bad tA", true, func(g *gemmArgs) { g.tA = 0 })
	add("bad tA lower-case", true, func(g *gemmArgs) { g.tA = 't' })
	add("bad tB", true, func(g *gemmArgs) { g.tB = 'X' })
	add("bad tA and m < 0", true, func(g *gemmArgs) { g.tA, g.m = 0, -1 })
	add("bad tB and short c", true, func(g *gemmArgs) { g.tB, g.lenC = 0, 0 })
	add("m < 0", true, func(g *gemmArgs) { g.m = -1 })
	add("n < 0", true, func(g *gemmArgs) { g.n = -1 })
	add("k < 0", true, func(g *gemmArgs) { g.k = -1 })
	add("m, n, k < 0", true, func(g *gemmArgs) { g.m, g.n, g.k = -1, -1, -1 })
	add("n < 0 and bad lda", true, func(g *gemmArgs) { g.n, g.lda = -1, 0 })
	add("lda < k", true, func(g *gemmArgs) { g.lda = 4 })
	add("lda 0 with k 0", true, func(g *gemmArgs) { g.k, g.lda = 0, 0 })
	add("lda < m, A transposed", true, func(g *gemmArgs) { g.tA, g.lda = blas.Trans, 2 })
	add("lda = k < m, A conj-transposed", true, func(g *gemmArgs) { g.tA, g.m, g.lda = blas.ConjTrans, 6, 5 })
	add("ldb < n", true, func(g *gemmArgs) { g.ldb = 3 })
	add("ldb < k, B transposed", true, func(g *gemmArgs) { g.tB, g.ldb = blas.Trans, 4 })
	add("ldc < n", true, func(g *gemmArgs) { g.ldc = 3 })
	add("bad lda, ldb and ldc", true, func(g *gemmArgs) { g.lda, g.ldb, g.ldc = 1, 1, 1 })
	add("bad ldc and m 0", true, func(g *gemmArgs) { g.m, g.ldc = 0, 0 })
	add("short a", true, func(g *gemmArgs) { g.lenA = 14 })
	add("short a, A transposed", true, func(g *gemmArgs) { g.tA, g.lda, g.lenA = blas.Trans, 3, 14 })
	add("short b", true, func(g *gemmArgs) { g.lenB = 19 })
	add("short b, B transposed", true, func(g *gemmArgs) { g.tB, g.ldb, g.lenB = blas.Trans, 5, 19 })
	add("short c", true, func(g *gemmArgs) { g.lenC = 11 })
	add("short a, b and c", true, func(g *gemmArgs) { g.lenA, g.lenB, g.lenC = 0, 0, 0 })
	add("short b and c", true, func(g *gemmArgs) { g.lenB, g.lenC = 0, 0 })
	add("nil c with beta 0", true, func(g *gemmArgs) { g.lenC = 0 })
	add("short a, alpha 0", true, func(g *gemmArgs) { g.alpha, g.lenA = 0, 0 })
	add("short a, k 0", true, func(g *gemmArgs) { g.k, g.lda, g.lenA = 0, 1, 0 })
	add("short c, k 0 and alpha 0", true, func(g *gemmArgs) { g.k, g.lda, g.alpha, g.lenC = 0, 1, 0, 11 })
	add("strided, exact lengths", false, func(g *gemmArgs) {
		g.lda, g.ldb, g.ldc = 7, 6, 9
		g.lenA, g.lenB, g.lenC = 2*7+5, 4*6+4, 2*9+4
	})
	add("strided, short a", true, func(g *gemmArgs) { g.lda, g.lenA = 7, 2*7+4 })
	add("m 0, nil slices", false, func(g *gemmArgs) { g.m, g.lenA, g.lenB, g.lenC = 0, 0, 0, 0 })
	add("n 0, nil slices", false, func(g *gemmArgs) { g.n, g.ldb, g.lenA, g.lenB, g.lenC = 0, 1, 0, 0, 0 })
	add("k 0, m 1 and n 1, nil a and b", false, func(g *gemmArgs) { g.m, g.n, g.k, g.lda, g.ldb, g.lenA, g.lenB = 1, 1, 0, 1, 1, 0, 0 })
	add("all 0, strides 1", false, func(g *gemmArgs) { *g = gemmArgs{tA: blas.NoTrans, tB: blas.Trans, lda: 1, ldb: 1, ldc: 1} })
	add("all 0, stride 0", true, func(g *gemmArgs) { *g = gemmArgs{tA: blas.NoTrans, tB: blas.NoTrans, lda: 1, ldb: 1} })
	return cs
}

func TestGemmPanics(t *testing.T) {
	for name, g := range gemmCases() {
		d := func(f func(blas.Transpose, blas.Transpose, int, int, int, float64, []float64, int, []float64, int, float64, []float64, int)) any {
			return recovered(func() {
				f(g.tA, g.tB, g.m, g.n, g.k, g.alpha, make([]float64, g.lenA), g.lda, make([]float64, g.lenB), g.ldb, g.beta, make([]float64, g.lenC), g.ldc)
			})
		}
		s := func(f func(blas.Transpose, blas.Transpose, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)) any {
			return recovered(func() {
				f(g.tA, g.tB, g.m, g.n, g.k, float32(g.alpha), make([]float32, g.lenA), g.lda, make([]float32, g.lenB), g.ldb, float32(g.beta), make([]float32, g.lenC), g.ldc)
			})
		}
		comparePanics(t, "Dgemm "+name, d(impl.Dgemm), d(gonum.Implementation{}.Dgemm), g.mustPanic, g.noPanic)
		comparePanics(t, "Sgemm "+name, s(impl.Sgemm), s(gonum.Implementation{}.Sgemm), g.mustPanic, g.noPanic)
	}
}

// dotArgs is one call of Sdot or Ddot with slices given by their lengths.
type dotArgs struct {
	n, lenX, incX, lenY, incY int
	mustPanic                 bool
}

var dotCases = map[string]dotArgs{
	"valid":                  {n: 5, lenX: 5, incX: 1, lenY: 5, incY: 1},
	"valid, long slices":     {n: 5, lenX: 9, incX: 1, lenY: 7, incY: 1},
	"n 0, nil slices":        {n: 0, incX: 1, incY: 1},
	"n 0, strided":           {n: 0, incX: 3, incY: -2},
	"incX 0":                 {n: 5, lenX: 5, incX: 0, lenY: 5, incY: 1, mustPanic: true},
	"incY 0":                 {n: 5, lenX: 5, incX: 1, lenY: 5, incY: 0, mustPanic: true},
	"incX and incY 0":        {n: 5, lenX: 5, lenY: 5, mustPanic: true},
	"incX 0 and n < 0":       {n: -1, incX: 0, incY: 1, mustPanic: true},
	"incX 0 and n 0":         {n: 0, incX: 0, incY: 1, mustPanic: true},
	"incY 0 and short x":     {n: 5, lenX: 1, incX: 1, lenY: 5, incY: 0, mustPanic: true},
	"n < 0":                  {n: -1, incX: 1, incY: 1, mustPanic: true},
	"n < 0 with slices":      {n: -3, lenX: 5, incX: 1, lenY: 5, incY: 1, mustPanic: true},
	"n < 0, strided":         {n: -1, incX: 2, incY: 1, mustPanic: true},
	"short x":                {n: 5, lenX: 4, incX: 1, lenY: 5, incY: 1, mustPanic: true},
	"short y":                {n: 5, lenX: 5, incX: 1, lenY: 4, incY: 1, mustPanic: true},
	"short x and y":          {n: 5, incX: 1, incY: 1, mustPanic: true},
	"short x, strided":       {n: 3, lenX: 4, incX: 2, lenY: 3, incY: 1, mustPanic: true},
	"short y, strided":       {n: 3, lenX: 3, incX: 1, lenY: 6, incY: 3, mustPanic: true},
	"short y, negative inc":  {n: 3, lenX: 3, incX: 1, lenY: 4, incY: -2, mustPanic: true},
	"valid, strided":         {n: 3, lenX: 5, incX: 2, lenY: 7, incY: 3},
	"valid, negative incs":   {n: 3, lenX: 5, incX: -2, lenY: 3, incY: -1},
	"valid, mixed incs":      {n: 4, lenX: 4, incX: 1, lenY: 4, incY: -1},
	"valid, n 1 with inc 7":  {n: 1, lenX: 1, incX: 7, lenY: 1, incY: -7},
	"short x, n 1, unit inc": {n: 1, lenX: 0, incX: 1, lenY: 1, incY: 1, mustPanic: true},
}

func TestDotPanics(t *testing.T) {
	for name, c := range dotCases {
		d := func(f func(int, []float64, int, []float64, int) float64) any {
			return recovered(func() { f(c.n, make([]float64, c.lenX), c.incX, make([]float64, c.lenY), c.incY) })
		}
		s := func(f func(int, []float32, int, []float32, int) float32) any {
			return recovered(func() { f(c.n, make([]float32, c.lenX), c.incX, make([]float32, c.lenY), c.incY) })
		}
		comparePanics(t, "Ddot "+name, d(impl.Ddot), d(gonum.Implementation{}.Ddot), c.mustPanic, !c.mustPanic)
		comparePanics(t, "Sdot "+name, s(impl.Sdot), s(gonum.Implementation{}.Sdot), c.mustPanic, !c.mustPanic)
	}
}

// comparePanics checks that ours panicked with the same value as gonum's
// did, and that gonum's did what the table says (so that a case that
// stopped testing anything shows up).
func comparePanics(t *testing.T, name string, ours, theirs any, mustPanic, noPanic bool) {
	t.Helper()
	if ours != theirs {
		t.Errorf("%s: ours panics with %s, gonum's with %s", name, show(ours), show(theirs))
	}
	if mustPanic && theirs == nil {
		t.Errorf("%s: gonum's does not panic: the case tests nothing", name)
	}
	if noPanic && theirs != nil {
		t.Errorf("%s: gonum's panics with %s, but the case is meant to be valid", name, show(theirs))
	}
}

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}
