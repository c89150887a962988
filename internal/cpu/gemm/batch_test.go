package gemm

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A batch gives, product for product, the bits that one call each gives
// (the blocking does not depend on the threads), whether its products run
// side by side (small ones) or one after another (ones that fill the
// machine), and leaves the padding of C's rows alone.
func TestBatchMatchesOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		m, n, k, count int
		transA, transB bool
	}{
		{1, 1, 1, 3, false, false},
		{8, 8, 8, 37, false, false},
		{13, 7, 29, 16, true, false},
		{100, 60, 70, 5, false, true},
		{64, 64, 64, 64, true, true},
		{71, 45, 33, 7, true, true},      // the column kernels' last rows and columns
		{300, 300, 300, 2, false, false}, // fills two cores alone: one after another
		{5, 4, 0, 3, false, false},       // K = 0: C = beta*C
	} {
		batchCase[float32](t, r, c.m, c.n, c.k, c.count, c.transA, c.transB, Float32, Float32Batch)
		batchCase[float64](t, r, c.m, c.n, c.k, c.count, c.transA, c.transB, Float64, Float64Batch)
	}
}

func batchCase[T float](t *testing.T, r *rand.Rand, m, n, k, count int, transA, transB bool,
	single func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int),
	batched func(bool, bool, int, int, int, T, [][]T, int, [][]T, int, T, [][]T, int)) {
	t.Helper()
	ar, ac, br, bc := m, k, k, n
	if transA {
		ar, ac = ac, ar
	}
	if transB {
		br, bc = bc, br
	}
	var as, bs, cs, want [][]T
	var lda, ldb, ldc int
	for range count {
		a, la := stored[T](r, ar, ac, 1)
		b, lb := stored[T](r, br, bc, 2)
		c, lc := stored[T](r, m, n, 3)
		lda, ldb, ldc = la, lb, lc
		as, bs, cs = append(as, a), append(bs, b), append(cs, c)
		want = append(want, slices.Clone(c))
	}
	alpha, beta := T(1.5), T(-0.5)
	for i := range want {
		single(transA, transB, m, n, k, alpha, as[i], lda, bs[i], ldb, beta, want[i], ldc)
	}
	batched(transA, transB, m, n, k, alpha, as, lda, bs, ldb, beta, cs, ldc)
	for i := range cs {
		for j := range cs[i] {
			g, w := cs[i][j], want[i][j]
			if g != w && !(g != g && w != w) { // the NaN padding stays NaN
				t.Fatalf("%T %dx%dx%d trans %v/%v, product %d of %d: element %d = %v, one call gives %v", g, m, n, k, transA, transB, i, count, j, g, w)
			}
		}
	}
}

// Bad arguments panic on the caller's goroutine, before any product runs.
func TestBatchPanics(t *testing.T) {
	ones := []float32{1, 1, 1, 1}
	a := [][]float32{ones, ones}                             // a first product that ran would write 2s into c[0]
	c := [][]float32{make([]float32, 4), make([]float32, 3)} // the second C is short
	for name, f := range map[string]func(){
		"lengths": func() { Float32Batch(false, false, 2, 2, 2, 1, a, 2, a[:1], 2, 0, c, 2) },
		"short C": func() { Float32Batch(false, false, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), "gemm:") {
					t.Errorf("%s: panic %v, want a gemm: message", name, p)
				}
			}()
			f()
		}()
		if c[0][0] != 0 {
			t.Errorf("%s: the first product ran before the check", name)
		}
	}
}

// TestBatchAllocations checks that a batch whose products run side by side
// allocates a few objects a call, not one a product: a team allocated for
// each product (its barrier points at itself, so it went to the heap) made
// two goroutines of a batch of 32x32 float64 products share cache lines
// and run at a third of one goroutine's rate.
func TestBatchAllocations(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n, count = 16, 256
	mats := func() [][]float64 {
		out := make([][]float64, count)
		for i := range out {
			out[i] = make([]float64, n*n)
			for j := range out[i] {
				out[i][j] = float64(j%7) - 3
			}
		}
		return out
	}
	a, b, c := mats(), mats(), mats()
	run := func() { Float64Batch(false, false, n, n, n, 1, a, n, b, n, 0, c, n) }
	run() // workspaces and buffers for the goroutines
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 10
	for range calls {
		run()
	}
	runtime.ReadMemStats(&after)
	if per := float64(after.Mallocs-before.Mallocs) / calls; per > count/8 {
		t.Fatalf("a batch of %d products made %.0f allocations a call; want a few", count, per)
	}
}

// TestBatchOnManyProcs runs batches with GOMAXPROCS 8, where products
// worth two threads run four at a time, each of the pool's workers that a
// batch takes starting a team of its own for its products.
func TestBatchOnManyProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ m, n, k, count int }{
		{160, 160, 160, 4}, // two threads a product, four products at once
		{96, 80, 120, 11},
		{16, 16, 16, 300}, // claimed in chunks
	} {
		batchCase[float32](t, r, c.m, c.n, c.k, c.count, false, true, Float32, Float32Batch)
		batchCase[float64](t, r, c.m, c.n, c.k, c.count, true, false, Float64, Float64Batch)
	}
}
