package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/reference"
)

// gemmCase is one multiply: shapes, transposes, row-stride padding and
// scalars.
type gemmCase struct {
	transA, transB bool
	m, n, k        int
	padA, padB     int // extra elements at the end of each row
	padC           int
	alpha, beta    float64
}

func (c gemmCase) String() string {
	t := func(b bool) string {
		if b {
			return "T"
		}
		return "N"
	}
	return fmt.Sprintf("%s%s_%dx%dx%d_pad%d.%d.%d_a%g_b%g", t(c.transA), t(c.transB), c.m, c.n, c.k, c.padA, c.padB, c.padC, c.alpha, c.beta)
}

// stored returns a random rows x cols matrix with row stride cols+pad; the
// padding holds NaN, so that a read of it poisons the result.
func stored[T float](r *rand.Rand, rows, cols, pad int) ([]T, int) {
	ld := max(1, cols+pad)
	x := make([]T, max(0, (rows-1)*ld+cols))
	for i := range x {
		if i%ld < cols {
			x[i] = T(2*r.Float64() - 1)
		} else {
			x[i] = T(math.NaN())
		}
	}
	return x, ld
}

// dense returns op(X) as a dense row-major float64 rows x cols matrix.
func dense[T float](x []T, ld int, trans bool, rows, cols int) []float64 {
	out := make([]float64, rows*cols)
	for i := range rows {
		for j := range cols {
			if trans {
				out[i*cols+j] = float64(x[j*ld+i])
			} else {
				out[i*cols+j] = float64(x[i*ld+j])
			}
		}
	}
	return out
}

// check runs tc on eng and compares C with the float64 reference; it also
// checks that C's row padding is untouched.
func check[T float](t *testing.T, eng *engine[T], tc gemmCase, r *rand.Rand) {
	t.Helper()
	ar, ac := tc.m, tc.k
	if tc.transA {
		ar, ac = ac, ar
	}
	br, bc := tc.k, tc.n
	if tc.transB {
		br, bc = bc, br
	}
	a, lda := stored[T](r, ar, ac, tc.padA)
	b, ldb := stored[T](r, br, bc, tc.padB)
	c, ldc := stored[T](r, tc.m, tc.n, tc.padC)
	cIn := dense(c, ldc, false, tc.m, tc.n)
	if tc.beta == 0 {
		for i := range c {
			if i%ldc < tc.n {
				c[i] = T(math.NaN()) // must not be read
			}
		}
	}
	opA, opB := dense(a, lda, tc.transA, tc.m, tc.k), dense(b, ldb, tc.transB, tc.k, tc.n)
	alpha, beta := float64(T(tc.alpha)), float64(T(tc.beta))
	if alpha == 0 {
		opA, opB = make([]float64, len(opA)), make([]float64, len(opB)) // A and B are not read
	}
	want := reference.MatMul(tc.m, tc.n, tc.k, alpha, opA, opB, beta, cIn)
	bound := reference.MatMulBound(tc.m, tc.n, tc.k, alpha, opA, opB, beta, cIn)

	gemm(eng, tc.transA, tc.transB, tc.m, tc.n, tc.k, T(tc.alpha), a, lda, b, ldb, T(tc.beta), c, ldc)

	got := dense(c, ldc, false, tc.m, tc.n)
	gotT := make([]T, len(got))
	for i, g := range got {
		gotT[i] = T(g)
	}
	var tol float64
	switch any(T(0)).(type) {
	case float32:
		tol = reference.Tolerance[float32](tc.k)
		if e := reference.MaxErr(any(gotT).([]float32), want, bound); e > tol {
			t.Fatalf("%v (%s): error %.3g times the bound, tolerance %.3g", tc, eng.kernel.Name, e, tol)
		}
	case float64:
		tol = reference.Tolerance[float64](tc.k)
		if e := reference.MaxErr(any(gotT).([]float64), want, bound); e > tol {
			t.Fatalf("%v (%s): error %.3g times the bound, tolerance %.3g", tc, eng.kernel.Name, e, tol)
		}
	}
	for i := range c {
		if i%ldc >= tc.n && !math.IsNaN(float64(c[i])) {
			t.Fatalf("%v (%s): C's row padding at %d was written", tc, eng.kernel.Name, i)
		}
	}
}

// cases returns every transpose and scalar combination over shapes from
// empty through primes that no block size divides.
func cases() []gemmCase {
	shapes := [][3]int{
		{0, 0, 0}, {0, 5, 3}, {4, 0, 3}, {3, 4, 0}, {1, 1, 1}, {1, 17, 1}, {7, 1, 13},
		{6, 16, 4}, {6, 8, 5}, {12, 32, 8}, {5, 15, 3}, {13, 7, 29}, {37, 53, 41},
		{97, 101, 103}, {1, 300, 257}, {300, 1, 257}, {150, 170, 300},
		// Last panels of exactly NR/2 columns (float32 48 and 80, float64
		// 40) and of fewer (float32 40), in rows of whole MR blocks: the
		// half kernels writing C directly and through the scratch block.
		{24, 48, 20}, {16, 40, 33}, {48, 80, 30},
		// Last panels for the quarter kernels (NR/4 columns or fewer:
		// float32 72, 36 and 8, float64 36 and 20) and for a half and a
		// quarter kernel side by side (float32 56 and 52, float64 28 and
		// 26), whole and cut short; and (from a review) rows that A in
		// place or a short last row block meet with each of them, B read
		// where it lies.
		{24, 72, 20}, {48, 36, 12}, {24, 8, 9}, {24, 20, 7}, {24, 56, 17}, {48, 52, 9}, {24, 28, 31}, {24, 26, 5},
		{36, 56, 17}, {21, 56, 13}, {33, 88, 9}, {36, 28, 11}, {33, 28, 7}, {21, 44, 5}, {33, 20, 6}, {9, 24, 40}, {9, 12, 40},
	}
	scalars := [][2]float64{{1, 0}, {1, 1}, {-0.5, 2}, {0, 0.5}, {2.5, -0.0}}
	var out []gemmCase
	for si, s := range shapes {
		if raceEnabled && s[0]*s[1]*s[2] > 50*50*50 {
			continue
		}
		for ti := range 4 {
			for ki, ab := range scalars {
				out = append(out, gemmCase{
					transA: ti&1 != 0, transB: ti&2 != 0, m: s[0], n: s[1], k: s[2],
					padA: (si + ki) % 3, padB: (si + 2*ki) % 4, padC: ki % 2,
					alpha: ab[0], beta: ab[1],
				})
			}
		}
	}
	return out
}

// engines returns, for each micro-kernel this machine runs (the narrow ones
// too), the engine with
// the production block sizes and one with blocks small enough that every
// shape above crosses block edges in every loop.
func engines[T Element](prod []*engine[T]) []*engine[T] {
	var out []*engine[T]
	for _, e := range prod {
		for _, e := range []*engine[T]{e, e.narrow} { // the narrow kernel on every shape too
			if e == nil {
				continue
			}
			k := e.kernel
			out = append(out, e, &engine[T]{kernel: k, mc: 2 * k.MR, kc: 7, nc: 3*k.NR + 5})
		}
	}
	return out
}

func testEngine[T float](t *testing.T, prod []*engine[T]) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	for _, eng := range engines(prod) {
		t.Run(fmt.Sprintf("%s/mc%d_kc%d_nc%d", eng.kernel.Name, eng.mc, eng.kc, eng.nc), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			for _, tc := range cases() {
				check(t, eng, tc, r)
			}
		})
	}
}

func TestFloat32(t *testing.T) { testEngine(t, enginesF32) }
func TestFloat64(t *testing.T) { testEngine(t, enginesF64) }

// TestMatVec runs products of a few columns of C (the dot-product path up
// to 8 float32 or 4 float64 columns, the blocked one past that), on
// one thread and on several, against the float64 reference, with B's
// column contiguous (the path) and strided (the blocked engine).
func TestMatVec(t *testing.T) {
	defer func(old int) { minFlopsPerThread = old }(minFlopsPerThread)
	r := rand.New(rand.NewPCG(3, 4))
	for _, perThread := range []int{1 << 19, 64} {
		minFlopsPerThread = perThread
		for _, m := range []int{1, 5, 1000} { // A of 1000 rows: matVecMinA elements at least, k > 16
			for _, sh := range [][2]int{{1, 1}, {1, 257}, {2, 257}, {3, 100}, {4, 33}, {8, 17}, {9, 40}} {
				n, k := sh[0], sh[1]
				for ti := range 4 {
					for _, padB := range []int{0, 2} {
						tc := gemmCase{transA: ti&1 != 0, transB: ti&2 != 0, m: m, n: n, k: k, padA: 1, padB: padB, padC: 3, alpha: 1.5, beta: -0.5}
						check(t, engineF32, tc, r)
						check(t, engineF64, tc, r)
					}
				}
			}
		}
	}
}

// TestDirectB runs every case with B read where it lies whenever the
// strided kernels can take it (any number of panels of A, any B on one
// thread), not only for the products that use it by default: with A read
// where it lies too whenever the in-place kernels can take it, and with A
// always packed.
func TestDirectB(t *testing.T) {
	defer func(panels, bytes, aBytes int) {
		directBMaxPanels, directSmallBytes, inPlaceABytes = panels, bytes, aBytes
	}(directBMaxPanels, directSmallBytes, inPlaceABytes)
	directBMaxPanels, directSmallBytes = 1<<30, 1<<62
	for _, aBytes := range []int{1 << 62, 0} {
		inPlaceABytes = aBytes
		t.Run(fmt.Sprintf("inPlaceA=%v/float32", aBytes > 0), func(t *testing.T) { testEngine(t, enginesF32) })
		t.Run(fmt.Sprintf("inPlaceA=%v/float64", aBytes > 0), func(t *testing.T) { testEngine(t, enginesF64) })
	}
}

// TestThreads runs products big enough to split across threads with every
// thread count from 1 to 5, so that each split shape is exercised, with the
// B block packed by the team together and by each thread for itself, and
// by loose teams (the first case, with the production blocks).
func TestThreads(t *testing.T) {
	defer func(old, loose, loose32, many int) {
		minFlopsPerThread, minFlopsPerLooseThread, minFlopsPerLooseThread32, minFlopsPerLooseThreadMany = old, loose, loose32, many
	}(minFlopsPerThread, minFlopsPerLooseThread, minFlopsPerLooseThread32, minFlopsPerLooseThreadMany)
	minFlopsPerThread, minFlopsPerLooseThread, minFlopsPerLooseThread32, minFlopsPerLooseThreadMany = 1, 1, 1, 1
	defer func(old int) { privateBTotal = old }(privateBTotal)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(rand.Uint64(), 2))
	for _, total := range []int{0, privateBTotal} { // B shared, then private
		privateBTotal = total
		for procs := 1; procs <= 5; procs++ {
			runtime.GOMAXPROCS(procs)
			for _, tc := range []gemmCase{
				{m: 61, n: 67, k: 19, alpha: 1, beta: 0.5},
				{m: 5, n: 200, k: 9, alpha: 1, transA: true},
				{m: 200, n: 3, k: 9, alpha: -1, beta: 1, transB: true},
				{m: 97, n: 45, k: 300, alpha: 1, beta: -1, transA: true, transB: true},
			} {
				// The production blocks, and small ones, with which every
				// case takes several passes over k and n.
				for _, e := range engines([]*engine[float32]{engineF32}) {
					check(t, e, tc, r)
				}
				for _, e := range engines([]*engine[float64]{engineF64}) {
					check(t, e, tc, r)
				}
			}
		}
	}
}

// TestColumnGroups runs teams that split the B block's columns into groups,
// as teams of 8 threads or more do, on products small enough for a test:
// a group a thread, and blocks that take several passes over k (a team
// that needs no barrier takes no groups) with 8 panels of B or more.
func TestColumnGroups(t *testing.T) {
	defer func(old, loose, loose32, many int) {
		minFlopsPerThread, minFlopsPerLooseThread, minFlopsPerLooseThread32, minFlopsPerLooseThreadMany = old, loose, loose32, many
	}(minFlopsPerThread, minFlopsPerLooseThread, minFlopsPerLooseThread32, minFlopsPerLooseThreadMany)
	minFlopsPerThread, minFlopsPerLooseThread, minFlopsPerLooseThread32, minFlopsPerLooseThreadMany = 1, 1, 1, 1
	defer func(old, block, rows int) { groupThreads, groupsMinBlock, groupsMinRows = old, block, rows }(groupThreads, groupsMinBlock, groupsMinRows)
	groupThreads, groupsMinBlock, groupsMinRows = 1, 0, 0
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	for procs := 2; procs <= 5; procs++ {
		runtime.GOMAXPROCS(procs)
		for _, tc := range []gemmCase{
			{m: 263, n: 259, k: 21, alpha: 1, beta: 0.5, transB: true},
			{m: 300, n: 281, k: 30, alpha: -1, transA: true},
			// Several column blocks, the last narrower, and a shallower
			// last slice of k: groups that go through their passes at
			// their own pace must not pack where another still reads.
			{m: 270, n: 600, k: 23, alpha: 1, beta: 1},
			{m: 257, n: 410, k: 16, alpha: 1, transA: true, transB: true},
		} {
			for _, e := range groupEngines([]*engine[float32]{engineF32}) {
				check(t, e, tc, r)
			}
			for _, e := range groupEngines([]*engine[float64]{engineF64}) {
				check(t, e, tc, r)
			}
		}
	}
}

// groupEngines returns engines of prod's kernels (and their narrow twins)
// with blocks that give column groups to TestColumnGroups's products: a
// shallow kc, and nc of 8 panels and a part.
func groupEngines[T Element](prod []*engine[T]) []*engine[T] {
	var out []*engine[T]
	for _, e := range prod {
		for _, e := range []*engine[T]{e, e.narrow} {
			if e != nil {
				out = append(out, &engine[T]{kernel: e.kernel, mc: 2 * e.kernel.MR, kc: 7, nc: 8*e.kernel.NR + 5})
			}
		}
	}
	return out
}

// TestGroupsFor checks the column groups of teams that split C's rows.
func TestGroupsFor(t *testing.T) {
	for _, c := range []struct{ size, nc, nr, want int }{
		{1, 4096, 32, 1},
		{2, 4096, 32, 1},
		{7, 4096, 32, 1},
		{8, 4096, 32, 2},
		{16, 4096, 32, 4},
		{16, 256, 32, 2},  // 8 panels: 4 a group at least
		{15, 4096, 32, 3}, // a divisor of the team
		{13, 4096, 32, 1},
		{64, 4096, 16, maxGroups},
	} {
		if got := groupsFor(c.size, c.nc, c.nr); got != c.want {
			t.Errorf("groupsFor(%d, %d, %d) = %d, want %d", c.size, c.nc, c.nr, got, c.want)
		}
	}
}

// TestKernelsAgree runs every micro-kernel on the same packed panels and
// compares each assembly kernel with the portable one of its shape: its Go
// twin.
func TestKernelsAgree(t *testing.T) {
	testAgree(t, enginesF32)
	testAgree(t, enginesF64)
	testAgree(t, enginesI32)
}

func testAgree[T Element](t *testing.T, engines []*engine[T]) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	random := func() T {
		var x T
		switch any(x).(type) {
		case int32:
			return T(int32(r.Uint32())) // full range: products wrap
		}
		return T(2*r.Float64() - 1)
	}
	for _, e := range engines[1:] {
		k := e.kernel
		ref := portable[T]("go", k.MR, k.NR)
		for _, depth := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 64, 255} {
			for _, beta := range []T{0, 1, T(-3) / 4, 3} {
				a := make([]T, max(1, depth*ref.MR))
				b := make([]T, max(1, depth*ref.NR))
				for i := range a {
					a[i] = random()
				}
				for i := range b {
					b[i] = random()
				}
				ldc := ref.NR + 3
				c0 := make([]T, ref.MR*ldc)
				for i := range c0 {
					c0[i] = random()
				}
				want, got := append([]T(nil), c0...), append([]T(nil), c0...)
				if beta == 0 {
					poison(got, ldc, ref.NR)
				}
				alpha := T(3) / 2
				ref.Func(depth, &a[0], &b[0], &want[0], ldc, alpha, beta)
				k.Func(depth, &a[0], &b[0], &got[0], ldc, alpha, beta)
				for i := range want {
					if !agree(want[i], got[i], depth) {
						t.Fatalf("%s (%T) vs its Go twin, k=%d beta=%v: element %d is %v, want %v", k.Name, want[i], depth, beta, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestEdgeKernels checks each engine's edge kernels (NR/2 and NR/4
// columns, B read with a row stride) against the pure-Go twin on the same
// operands: A packed (Strided), in place (InPlace) and transposed in place
// (InPlaceT), B a panel of NR columns of which they read the first Cols.
func TestEdgeKernels(t *testing.T) {
	testEdges(t, enginesF32)
	testEdges(t, enginesF64)
}

func testEdges[T float](t *testing.T, engines []*engine[T]) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 5))
	ran := 0
	for _, e := range engines {
		for _, k := range []MicroKernel[T]{e.kernel, narrowKernel(e)} {
			for _, ek := range k.Edges {
				ran++
				mr, nr, cols := k.MR, k.NR, ek.Cols
				ref := portable[T]("go", mr, cols)
				for _, depth := range []int{1, 3, 4, 9, 64} {
					for _, beta := range []T{0, T(-3) / 4} {
						const lda = 70 // A in place: rows (or, transposed, k steps) lda apart
						ap, bp := make([]T, depth*mr), make([]T, depth*nr)
						aRows, aCols := make([]T, mr*lda+depth), make([]T, depth*lda+mr)
						bEdge := make([]T, depth*cols)
						for p := range depth {
							for i := range mr {
								x := T(2*r.Float64() - 1)
								ap[p*mr+i], aRows[i*lda+p], aCols[p*lda+i] = x, x, x
							}
							for j := range nr {
								bp[p*nr+j] = T(2*r.Float64() - 1)
							}
							copy(bEdge[p*cols:(p+1)*cols], bp[p*nr:])
						}
						ldc := cols + 3
						c0 := make([]T, mr*ldc)
						for i := range c0 {
							c0[i] = T(2*r.Float64() - 1)
						}
						alpha := T(3) / 2
						want := append([]T(nil), c0...)
						ref.Func(depth, &ap[0], &bEdge[0], &want[0], ldc, alpha, beta)
						for _, v := range []struct {
							name string
							run  func(c *T)
						}{
							{"Strided", func(c *T) { ek.Strided(depth, &ap[0], &bp[0], c, nr, ldc, alpha, beta) }},
							{"InPlace", func(c *T) { ek.InPlace(depth, &aRows[0], &bp[0], c, lda, nr, ldc, alpha, beta) }},
							{"InPlaceT", func(c *T) { ek.InPlaceT(depth, &aCols[0], &bp[0], c, lda, nr, ldc, alpha, beta) }},
						} {
							got := append([]T(nil), c0...)
							if beta == 0 {
								poison(got, ldc, cols)
							}
							v.run(&got[0])
							for i := range want {
								if !agree(want[i], got[i], depth) {
									t.Fatalf("%s edge %d %s (%T), k=%d beta=%v: element %d is %v, want %v", k.Name, cols, v.name, want[i], depth, beta, i, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
	if ran == 0 {
		t.Skip("SKIP: no edge kernels on this machine")
	}
}

// TestEdgeSplit pins which edge kernels cover a last panel of each width.
func TestEdgeSplit(t *testing.T) {
	noop := func(int, *float32, *float32, *float32, int, int, float32, float32) {}
	k := MicroKernel[float32]{MR: 12, NR: 32, Edges: []EdgeKernel[float32]{{Cols: 16, Strided: noop}, {Cols: 8, Strided: noop}}}
	widths := func(cols int) []int {
		first, second := k.edgeSplit(cols)
		var w []int
		for _, e := range []*EdgeKernel[float32]{first, second} {
			if e != nil {
				w = append(w, e.Cols)
			}
		}
		return w
	}
	for _, c := range []struct {
		cols int
		want []int
	}{{1, []int{8}}, {8, []int{8}}, {9, []int{16}}, {16, []int{16}}, {17, []int{16, 8}}, {24, []int{16, 8}}, {25, nil}, {31, nil}} {
		if got := widths(c.cols); !slices.Equal(got, c.want) {
			t.Errorf("a last panel of %d columns runs through edge kernels %v, want %v", c.cols, got, c.want)
		}
	}
	if first, _ := (&MicroKernel[float32]{NR: 32}).edgeSplit(3); first != nil {
		t.Error("a kernel without edge kernels chose one")
	}
}

// narrowKernel returns e's narrow engine's kernel, or e's own.
func narrowKernel[T Element](e *engine[T]) MicroKernel[T] {
	if e.narrow != nil {
		return e.narrow.kernel
	}
	return e.kernel
}

// poison sets the first nr elements of each row of c (row stride ldc) to
// NaN, or to a large number for int32: what a kernel told beta = 0 must not
// read.
func poison[T Element](c []T, ldc, nr int) {
	for i := range c {
		if i%ldc < nr {
			switch p := any(&c[i]).(type) {
			case *float32:
				*p = float32(math.NaN())
			case *float64:
				*p = math.NaN()
			case *int32:
				*p = math.MaxInt32
			}
		}
	}
}

// agree reports whether a kernel's element got matches its twin's want:
// exactly for int32, within rounding for the sums of depth products
// otherwise.
func agree[T Element](want, got T, depth int) bool {
	switch w := any(want).(type) {
	case int32:
		return w == any(got).(int32)
	}
	d := math.Abs(float64(want - got))
	return d <= 1e-4*float64(depth+1) && !math.IsNaN(float64(got))
}

// TestNoAllocations checks that a call in steady state, threaded or not,
// allocates nothing.
func TestNoAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, n := range []int{40, 300} {
		a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		allocs := testing.AllocsPerRun(5, func() {
			Float32(false, true, n, n, n, 1, a, n, b, n, 0, c, n)
		})
		if allocs != 0 {
			t.Errorf("n=%d: %v allocations a call", n, allocs)
		}
	}
	// A few columns of C as dot products (matVec), op(B)'s columns copied
	// (4 of them) or read where they lie (1).
	for _, n := range []int{4, 1} {
		const m, k = 300, 300
		a, b, c := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
		allocs := testing.AllocsPerRun(5, func() {
			Float64(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		})
		if allocs != 0 {
			t.Errorf("%dx%dx%d: %v allocations a call", m, n, k, allocs)
		}
	}
}

func FuzzGemm(f *testing.F) {
	f.Add(uint8(5), uint8(7), uint8(3), uint8(0), uint8(1), false)
	f.Add(uint8(37), uint8(1), uint8(40), uint8(3), uint8(2), true)
	f.Fuzz(func(t *testing.T, m, n, k, pads, scalars uint8, double bool) {
		tc := gemmCase{
			m: int(m % 50), n: int(n % 50), k: int(k % 50),
			transA: pads&1 != 0, transB: pads&2 != 0,
			padA: int(pads>>2) % 3, padB: int(pads>>4) % 3, padC: int(pads>>6) % 2,
			alpha: []float64{1, -2, 0, 0.5}[scalars%4], beta: []float64{0, 1, -1.5}[(scalars/4)%3],
		}
		r := rand.New(rand.NewPCG(uint64(m)<<16|uint64(n)<<8|uint64(k), uint64(pads)))
		if double {
			for _, e := range engines(enginesF64) {
				check(t, e, tc, r)
			}
			return
		}
		for _, e := range engines(enginesF32) {
			check(t, e, tc, r)
		}
	})
}

// float is the element types whose results are checked against a tolerance;
// int32 results are checked exactly (TestInt32).
type float interface{ float32 | float64 }

// TestInt32 checks the int32 engine exactly, wrap-around included, with
// full-range values as well as small ones, over the same cases.
func TestInt32(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 4))
	for _, eng := range engines(enginesI32) {
		for _, tc := range cases() {
			for _, full := range []bool{false, true} {
				checkInt32(t, eng, tc, r, full)
			}
		}
	}
}

func checkInt32(t *testing.T, eng *engine[int32], tc gemmCase, r *rand.Rand, full bool) {
	t.Helper()
	gen := func(rows, cols, pad int) ([]int32, int) {
		ld := max(1, cols+pad)
		x := make([]int32, max(0, (rows-1)*ld+cols))
		for i := range x {
			if full {
				x[i] = int32(r.Uint32())
			} else {
				x[i] = int32(r.IntN(17)) - 8
			}
		}
		return x, ld
	}
	ar, ac, br, bc := tc.m, tc.k, tc.k, tc.n
	if tc.transA {
		ar, ac = ac, ar
	}
	if tc.transB {
		br, bc = bc, br
	}
	a, lda := gen(ar, ac, tc.padA)
	b, ldb := gen(br, bc, tc.padB)
	c, ldc := gen(tc.m, tc.n, tc.padC)
	alpha, beta := int32(tc.alpha*2), int32(tc.beta*2) // the float cases' scalars, made whole
	want := make([]int32, len(c))
	copy(want, c)
	for i := range tc.m {
		for j := range tc.n {
			var sum int32
			for p := range tc.k {
				var x, y int32
				if tc.transA {
					x = a[p*lda+i]
				} else {
					x = a[i*lda+p]
				}
				if tc.transB {
					y = b[j*ldb+p]
				} else {
					y = b[p*ldb+j]
				}
				sum += x * y
			}
			want[i*ldc+j] = alpha*sum + beta*c[i*ldc+j]
		}
	}
	gemm(eng, tc.transA, tc.transB, tc.m, tc.n, tc.k, alpha, a, lda, b, ldb, beta, c, ldc)
	for i := range c {
		if c[i] != want[i] {
			t.Fatalf("%v (full range %v): element %d is %d, want %d", tc, full, i, c[i], want[i])
		}
	}
}

// TestUnstartedHelpers: a team whose helpers see the call only after the
// caller has taken every band of its own column group. The caller may take
// back a helper whose group's bands are all taken, but not one of a group
// with bands left: those would stay unwritten (on the 16-core host a
// float32 512 product of four groups came back with NaN, the bench's
// poison, at C's element (0, 128), the first of the second group's).
func TestUnstartedHelpers(t *testing.T) {
	defer func(loose, direct, flops, threads, block, rows int) {
		loosePackBytes, directSmallBytes, minFlopsPerThread, groupThreads, groupsMinBlock, groupsMinRows = loose, direct, flops, threads, block, rows
	}(loosePackBytes, directSmallBytes, minFlopsPerThread, groupThreads, groupsMinBlock, groupsMinRows)
	// Teams with a shared B in one pass (onePass), never loose, in groups
	// of one thread.
	loosePackBytes, directSmallBytes, minFlopsPerThread = 0, 0, 1
	groupThreads, groupsMinBlock, groupsMinRows = 1, 0, 0
	defer testHelperLag.Store(0)
	testHelperLag.Store(int64(2 * time.Millisecond))
	checkOnePassProducts(t, 5)
}

// checkOnePassProducts checks two products of a onePass team's size (one
// pass over k and n, rows enough for bands) on 2, 3 and 4 threads.
func checkOnePassProducts(t *testing.T, seed uint64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(rand.Uint64(), seed))
	for procs := 2; procs <= 4; procs++ {
		runtime.GOMAXPROCS(procs)
		for _, tc := range []gemmCase{
			{m: 150, n: 256, k: 40, alpha: 1},
			{m: 97, n: 200, k: 33, alpha: 1, beta: 0.5, transA: true, transB: true},
		} {
			check(t, engineF32, tc, r)
			check(t, engineF64, tc, r)
		}
	}
}

// TestSharesOfLateHelpers: in a team that packs a shared B in one pass,
// the shares of B of helpers that start late (their cores taken by other
// programs) are packed by the threads that run, so that none of those
// waits for them and then packs all of B for itself.
func TestSharesOfLateHelpers(t *testing.T) {
	defer func(late, lateMin time.Duration, loose, direct, flops, threads, block, rows int) {
		lateShares, lateSharesMin, loosePackBytes, directSmallBytes, minFlopsPerThread, groupThreads, groupsMinBlock, groupsMinRows = late, lateMin, loose, direct, flops, threads, block, rows
	}(lateShares, lateSharesMin, loosePackBytes, directSmallBytes, minFlopsPerThread, groupThreads, groupsMinBlock, groupsMinRows)
	// onePass teams of one group.
	loosePackBytes, directSmallBytes, minFlopsPerThread = 0, 0, 1
	groupThreads, groupsMinBlock, groupsMinRows = 1, 1<<40, 1<<40
	// A share left to a helper held back 20ms would be waited for 1ms.
	lateShares, lateSharesMin = 1, time.Millisecond
	defer func(old int) { privateBTotal = old }(privateBTotal)
	privateBTotal = 0 // a shared B
	defer testHelperLag.Store(0)
	testHelperLag.Store(int64(20 * time.Millisecond))
	before := lateFallbacks.Load()
	checkOnePassProducts(t, 7)
	if n := lateFallbacks.Load() - before; n > 0 {
		t.Errorf("%d threads waited for shares of B left to late helpers, then packed all of it", n)
	}
}

// TestLateShares runs teams that pack a shared B together in one pass with
// no time to wait for one another's shares, and a thread that stops 5ms
// before it packs its second share, so that the others pack all of B for
// themselves (see awaitShares), and checks the products.
func TestLateShares(t *testing.T) {
	defer testShareLag.Store(0)
	testShareLag.Store(int64(5 * time.Millisecond))
	defer func(late, lateMin time.Duration, loose, direct, flops int) {
		lateShares, lateSharesMin, loosePackBytes, directSmallBytes, minFlopsPerThread = late, lateMin, loose, direct, flops
	}(lateShares, lateSharesMin, loosePackBytes, directSmallBytes, minFlopsPerThread)
	lateShares, lateSharesMin = 0, 0
	loosePackBytes, directSmallBytes, minFlopsPerThread = 0, 0, 1 // teams with a shared B, never loose
	defer func(old int) { privateBTotal = old }(privateBTotal)
	privateBTotal = 0
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	before := lateFallbacks.Load()
	for procs := 2; procs <= 4; procs++ {
		runtime.GOMAXPROCS(procs)
		for range 3 {
			for _, tc := range []gemmCase{
				{m: 97, n: 61, k: 45, alpha: 1, beta: 0.5},
				{m: 150, n: 33, k: 70, alpha: -1, beta: 1, transA: true, transB: true},
				{m: 120, n: 100, k: 9, alpha: 1, transB: true},
			} {
				check(t, engineF32, tc, r)
				check(t, engineF64, tc, r)
			}
		}
	}
	if lateFallbacks.Load() == before {
		t.Error("no thread packed B for itself: the late path went untested")
	}
}

// TestSharedBlockRegions: with column groups that meet at barriers of
// their own, what each group packs and reads of the shared B buffer, on
// every pass over blocks of any width and depth, stays within the group's
// own region (of the pass's half of the buffer, when it holds two
// blocks), so that a group ahead of another never writes where the other
// reads.
func TestSharedBlockRegions(t *testing.T) {
	eng := &engine[float32]{kernel: engineF32.kernel, mc: 24, kc: 7, nc: 8*engineF32.kernel.NR + 5}
	nr := eng.kernel.NR
	for _, dims := range [][2]int{{600, 23}, {261, 7}, {262, 8}, {40, 3}, {1000, 50}} {
		n, k := dims[0], dims[1]
		p := &problem[float32]{eng: eng, m: 300, n: n, k: k}
		for groups := 2; groups <= maxGroups; groups++ {
			for _, double := range []bool{false, true} {
				tm := &team{size: 2 * groups, splitRows: true, groups: groups, doubleB: double}
				_, size := p.sharedSizes(true, false, double, groups)
				region := p.groupRegion(groups)
				s := make([]float32, size)
				phase := 0
				for jc := 0; jc < n; jc += eng.nc {
					nc := min(eng.nc, n-jc)
					for pc := 0; pc < k; pc, phase = pc+eng.kc, phase+1 {
						kc := min(eng.kc, k-pc)
						// With two blocks, a pass's regions lie in its half.
						base := 0
						if double {
							base = phase % 2 * groups * region
						}
						for id := range tm.size {
							g := id % groups
							view := p.sharedBlock(s, tm, kc, nc, id, phase)
							start := cap(s) - cap(view)
							g0, g1 := share(nc, nr, groups, g)
							lo, hi := start+g0*kc, start+g0*kc+kc*roundUp(g1-g0, nr)
							rlo, rhi := base+g*region, base+(g+1)*region
							if g0 < g1 && (lo < rlo || hi > rhi || hi-start > len(view)) {
								t.Fatalf("n %d k %d, %d groups, block %dx%d, pass %d: group %d uses %d..%d, its region %d..%d (view of %d)",
									n, k, groups, kc, nc, phase, g, lo, hi, rlo, rhi, len(view))
							}
							j0, j1 := tm.packShare(nc, nr, id)
							if j0 < g0 || j1 > g1 {
								t.Fatalf("thread %d packs columns %d..%d outside its group's %d..%d", id, j0, j1, g0, g1)
							}
						}
					}
				}
			}
		}
	}
}
