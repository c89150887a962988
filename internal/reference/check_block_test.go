package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
)

// spoilTile moves each element of the b x b tile of c (n columns) at (i0,
// j0) by f times the tolerance times its bound, with random signs: the
// error of a wrong block of a product, in the units the check works in. A
// tile of a random float32 product with k terms set to zero is off by about
// 1/(12*k*2^-24) tolerances (|C_ij| is about sqrt(k)/3, M_ij about k/4):
// 170 at k = 8192, 43 at k = 32768, 30 at k = 47000.
func spoilTile[T amp.Element](c []T, bound []float64, n, k, i0, j0, b int, f float64, r *rand.Rand) {
	for i := i0; i < i0+b; i++ {
		for j := j0; j < j0+b; j++ {
			d := f * Tolerance[T](k) * bound[i*n+j]
			if r.IntN(2) == 0 {
				d = -d
			}
			c[i*n+j] += T(d)
		}
	}
}

// tileCase is a random product of float type T and its right result.
type tileCase[T amp.Element] struct {
	m, n, k int
	a, b    []T
	right   []T
	bound   []float64
}

func newTileCase[T amp.Element](m, n, k int, r *rand.Rand) tileCase[T] {
	a, b := RandomSlice[T](r, m*k), RandomSlice[T](r, k*n)
	return tileCase[T]{m: m, n: n, k: k, a: a, b: b,
		right: product(false, false, m, n, k, 1, a, b, 0, nil),
		bound: MatMulBound(m, n, k, 1, ToFloat64(a), ToFloat64(b), 0, nil)}
}

// TestCheckMatMulCatchesWrongTile: an 8x8 tile of a 512x512 float32
// product off by 30 times the tolerance (what a zeroed tile is at k near
// 47000) is caught, for every seed. The check of one projection over whole
// rows, which allowed each row the summed tolerance of its 512 elements,
// passed it but when a row or column checked whole fell in the tile (about
// 1 seed in 30). At these sizes the budget covers the whole product, and
// every element is compared.
func TestCheckMatMulCatchesWrongTile(t *testing.T) {
	const m, n, k = 512, 512, 8
	tc := newTileCase[float32](m, n, k, rand.New(rand.NewPCG(21, 22)))
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 23))
		ch := NewMatMulChecker(false, false, m, n, k, 1, tc.a, tc.b, 0, nil, r)
		if res := ch.Check(tc.right); !res.OK() {
			t.Fatalf("seed %d: the right product fails: %v", seed, res.Err())
		}
		c := slices.Clone(tc.right)
		i0, j0 := 100+int(seed)*37, 90+int(seed)*41
		spoilTile(c, tc.bound, n, k, i0, j0, 8, 30, r)
		res := ch.Check(c)
		if res.OK() {
			t.Errorf("seed %d: the 8x8 tile at (%d, %d), off by 30 tolerances, passes: %+v", seed, i0, j0, res)
		} else if res.Row < i0 || res.Row >= i0+8 || res.Col < j0 || res.Col >= j0+8 {
			t.Errorf("seed %d: the tile at (%d, %d) reported at (%d, %d): %s", seed, i0, j0, res.Row, res.Col, res.Where)
		}
	}
}

// TestBlockedProjectionsCatchTiles: the same at a budget scaled to the
// sizes (m*k*nb = 2^16 each side), where the projections are split into 16
// blocks of 32 columns and rows, as they are at m = n = k = 8192 with the
// default budget: a block's allowance is 16 times smaller than a whole
// row's, and the tile is caught for every seed, in a block or straddling
// two. With one block (a zero budget, as the check was before), it is
// caught only when a row or column checked whole falls in it.
func TestBlockedProjectionsCatchTiles(t *testing.T) {
	testBlockedTiles[float32](t)
	testBlockedTiles[float64](t)
}

func testBlockedTiles[T amp.Element](t *testing.T) {
	const m, n, k, seeds = 512, 512, 8, 6
	const budget = 2 * 16 * m * k
	if nb := blockCount(n, m, k, budget/2); nb != 16 || blockCount(n, m, k, budget) == n {
		t.Fatalf("%d blocks, want 16", nb)
	}
	tc := newTileCase[T](m, n, k, rand.New(rand.NewPCG(24, 25)))
	caught := map[float64]int{}
	for seed := range uint64(seeds) {
		for _, budget := range []float64{budget, 0} {
			ch := newMatMulChecker(false, false, m, n, k, 1, tc.a, tc.b, 0, nil, rand.New(rand.NewPCG(seed, 26)), budget)
			if res := ch.Check(tc.right); !res.OK() {
				t.Fatalf("%T seed %d budget %g: the right product fails: %v", T(0), seed, budget, res.Err())
			}
			// Inside a block of 32 (rows 224-255, columns 320-351), and
			// across the boundary of two (columns 412-419).
			for _, at := range [][2]int{{230 + int(seed), 330 + int(seed)}, {260 + int(seed), 412}} {
				c := slices.Clone(tc.right)
				spoilTile(c, tc.bound, n, k, at[0], at[1], 8, 30, rand.New(rand.NewPCG(seed, 27)))
				res := ch.Check(c)
				if !res.OK() {
					caught[budget]++
				} else if budget > 0 {
					t.Errorf("%T seed %d: blocked projections pass the tile at %v: %+v", T(0), seed, at, res)
				}
			}
		}
	}
	t.Logf("%T: an 8x8 tile off by 30 tolerances caught %d times of %d in 16 blocks, %d in one", T(0), caught[budget], 2*seeds, caught[0])
	if caught[0] > seeds {
		t.Errorf("%T: one block caught the tile %d times of %d: the test no longer shows what blocks add", T(0), caught[0], 2*seeds)
	}
}

// TestBlockCount: the blocks a budget buys, within the caps, and their
// boundaries.
func TestBlockCount(t *testing.T) {
	for _, c := range []struct {
		lines, other, k int
		budget          float64
		want            int
	}{
		{8192, 8192, 8192, refBudget / 2, 16},
		{1024, 1024, 65536, refBudget / 2, 16},
		{512, 512, 16, 1 << 17, 16},
		{512, 512, 16, refBudget, 512},         // the whole product fits
		{100, 50, 0, 0, 100},                   // k = 0 costs nothing
		{8192, 8192, 8192, 0, 1},               // at least one
		{1 << 20, 1 << 20, 1, refBudget, 4},    // kept references capped
		{4096, 8, 1 << 20, refBudget / 2, 4},   // partial products capped
		{8192, 1 << 30, 1 << 20, refBudget, 1}, // beyond the budget
		{3, 1 << 20, 1 << 20, float64(1 << 62), 3},
	} {
		if got := blockCount(c.lines, c.other, c.k, c.budget); got != c.want {
			t.Errorf("blockCount(%d, %d, %d, %g) = %d, want %d", c.lines, c.other, c.k, c.budget, got, c.want)
		}
	}
	for _, c := range [][2]int{{1, 1}, {10, 3}, {10, 10}, {8192, 16}, {67, 16}} {
		seg := blocks(c[0], c[1])
		if len(seg) != c[1]+1 || seg[0] != 0 || seg[c[1]] != c[0] {
			t.Errorf("blocks(%d, %d) = %v", c[0], c[1], seg)
		}
		for q := range c[1] {
			if w := seg[q+1] - seg[q]; w < c[0]/c[1] || w > c[0]/c[1]+1 {
				t.Errorf("blocks(%d, %d): block %d of %d lines", c[0], c[1], q, w)
			}
		}
	}
}

// floatCheckerOf returns the float checker NewMatMulChecker would make,
// with the budget given.
func floatCheckerOf[T amp.Element](tA, tB bool, m, n, k int, alpha T, a, b []T, beta T, c0 []T, r *rand.Rand, budget float64) *floatChecker[T] {
	return newFloatChecker(newProblem(tA, tB, m, n, k, alpha, a, b, beta, c0), r, budget)
}

// TestCheckMatMulNaNLines: NaN in every row of A (and in columns of B)
// makes the product NaN throughout; every element is checked, in O(m*n),
// where the check used to compute each such row whole at every Check, a
// full product: 4.2 s at n = 2048, minutes at 8192.
func TestCheckMatMulNaNLines(t *testing.T) {
	const m, n, k = 40, 50, 30
	r := rand.New(rand.NewPCG(28, 29))
	for _, tr := range allTrans {
		a, b, c0 := RandomSlice[float32](r, m*k), RandomSlice[float32](r, k*n), RandomSlice[float32](r, m*n)
		oa, ob := opMat(false, m, k, a), opMat(false, k, n, b)
		for i := range m {
			oa[i*k+(i*7)%k] = math.NaN()
		}
		ob[3*n+17] = math.NaN()
		at, bt := toOp[float32](tr[0], m, k, oa), toOp[float32](tr[1], k, n, ob)
		right := product(tr[0], tr[1], m, n, k, 1, at, bt, 0.5, c0)
		fc := floatCheckerOf(tr[0], tr[1], m, n, k, 1, at, bt, 0.5, c0, r, refBudget)
		if len(fc.nanRows) != m || len(fc.nanCols) != 1 || len(fc.lines) > 3 || fc.right.nb() != 0 {
			t.Fatalf("trans %v: %d NaN rows, %d NaN columns, %d lines checked whole, %d blocks", tr, len(fc.nanRows), len(fc.nanCols), len(fc.lines), fc.right.nb())
		}
		if res := fc.check(right); !res.OK() || res.Partial {
			t.Errorf("trans %v: the NaN product fails: %+v", tr, res)
		}
		for _, e := range []int{0, 17, 5*n + 17, 23*n + 31, m*n - 1} {
			c := slices.Clone(right)
			c[e] = 1
			if res := fc.check(c); res.OK() || res.Row != e/n || res.Col != e%n || !math.IsNaN(res.Want) {
				t.Errorf("trans %v: element (%d, %d) finite where NaN: %+v", tr, e/n, e%n, res)
			}
		}
	}
}

// toOp stores op(X) (r x c, float64) as X of type T: op(X) itself, or its
// transpose when trans.
func toOp[T amp.Element](trans bool, r, c int, op []float64) []T {
	if trans {
		op = transpose(r, c, op)
	}
	out := make([]T, len(op))
	for i, v := range op {
		out[i] = T(v)
	}
	return out
}

// TestCheckMatMulInfLinesCapped: Inf in every row of A keeps every row out
// of the projections. Within the budget all are checked whole; past it the
// first, the last and a random sample are, and the result says the check
// was partial, where the check used to compute them all at every Check.
func TestCheckMatMulInfLinesCapped(t *testing.T) {
	const m, n, k = 64, 64, 48
	r := rand.New(rand.NewPCG(30, 31))
	for _, tr := range allTrans {
		oa, ob := opMat(false, m, k, RandomSlice[float64](r, m*k)), opMat(false, k, n, RandomSlice[float64](r, k*n))
		for i := range m {
			oa[i*k+(i*5)%k] = math.Copysign(math.Inf(1), float64(i%3)-1)
		}
		ob[(k-1)*n+40] = math.Inf(-1) // and in column 40 of B
		at, bt := toOp[float64](tr[0], m, k, oa), toOp[float64](tr[1], k, n, ob)
		right := product(tr[0], tr[1], m, n, k, -1.5, at, bt, 0, nil)
		for _, budget := range []float64{refBudget, 20 * k * n} {
			fc := floatCheckerOf(tr[0], tr[1], m, n, k, -1.5, at, bt, 0, nil, rand.New(rand.NewPCG(1, 2)), budget)
			var checked []int
			colChecked := map[int]bool{} // column 40, and the columns sampled
			for _, l := range fc.lines {
				if l.col {
					colChecked[l.idx] = true
				} else if l.why == whyOperands {
					checked = append(checked, l.idx)
				}
			}
			wantRows := m
			if budget < refBudget {
				wantRows = 19 // and column 40, at about as much
			}
			if len(checked) != wantRows || checked[0] != 0 || checked[len(checked)-1] != m-1 || fc.p.a != nil || fc.p.b != nil {
				t.Fatalf("trans %v budget %g: rows %v checked whole (want %d with the first and the last), operands kept %v", tr, budget, checked, wantRows, fc.p.a != nil)
			}
			res := fc.check(right)
			if !res.OK() || res.Partial != (budget < refBudget) {
				t.Errorf("trans %v budget %g: the right product: %+v", tr, budget, res)
			}
			if res.Partial && !strings.Contains(res.Where, "partial check: only 19 of the 64 rows and 1 of the 1 columns") {
				t.Errorf("trans %v: partial, but Where says %q", tr, res.Where)
			}
			for i := range m {
				c := slices.Clone(right)
				j := (i * 3) % n
				c[i*n+j] = 2 // finite where the product is infinite
				wrong := fc.check(c)
				if in := slices.Contains(checked, i) || colChecked[j]; wrong.OK() == in {
					t.Errorf("trans %v budget %g: element (%d, %d) checked %v, wrong, passes %v: %+v", tr, budget, i, j, in, wrong.OK(), wrong)
				}
			}
		}
	}
}

// TestCheckMatMulWholeRowsCapped: with alpha infinite there are no
// projections: rows are checked whole, within the budget, and rows of NaN
// throughout, every element.
func TestCheckMatMulWholeRowsCapped(t *testing.T) {
	const m, n, k = 32, 24, 16
	r := rand.New(rand.NewPCG(32, 33))
	a, b, c0 := RandomSlice[float64](r, m*k), RandomSlice[float64](r, k*n), RandomSlice[float64](r, m*n)
	a[5*k+2] = math.NaN()
	right := product(false, false, m, n, k, math.Inf(1), a, b, 0.5, c0)
	for _, budget := range []float64{refBudget, 8 * k * n} {
		ch := newMatMulChecker(false, false, m, n, k, math.Inf(1), a, b, 0.5, c0, rand.New(rand.NewPCG(3, 4)), budget)
		res := ch.Check(right)
		if !res.OK() || res.Partial != (budget < refBudget) || (res.Partial && !strings.Contains(res.Where, "8 of the 31 rows")) {
			t.Errorf("budget %g: the right product: %+v", budget, res)
		}
		c := slices.Clone(right)
		c[5*n+7] = 1 // row 5 is NaN throughout, checked whatever the budget
		if res := ch.Check(c); res.OK() || res.Row != 5 || res.Col != 7 {
			t.Errorf("budget %g: finite in the NaN row: %+v", budget, res)
		}
	}
}

// TestMatMulCheckerKeepsNoOperands: every reference is made when the
// checker is, NaN and Inf lines included, so the operands may change after
// (the check used to keep A and B for them and read them at each Check).
func TestMatMulCheckerKeepsNoOperands(t *testing.T) {
	const m, n, k = 40, 30, 20
	r := rand.New(rand.NewPCG(34, 35))
	a, b, c0 := RandomSlice[float32](r, m*k), RandomSlice[float32](r, k*n), RandomSlice[float32](r, m*n)
	a[7*k+3] = float32(math.Inf(1))
	b[2*n+11] = float32(math.NaN())
	c0[9*n+4] = float32(math.Inf(-1))
	right := product(false, false, m, n, k, 2, a, b, 0.5, c0)
	ch := NewMatMulChecker(false, false, m, n, k, 2, a, b, 0.5, c0, r)
	clear(a)
	clear(b)
	copy(c0, right) // C computed over C0
	if res := ch.Check(c0); !res.OK() {
		t.Fatalf("the right product fails once the operands changed: %v", res.Err())
	}
	for _, e := range [][2]int{{7, 5}, {9, 4}, {9, 20}, {3, 11}, {20, 20}} {
		c := slices.Clone(right)
		c[e[0]*n+e[1]] = 0.5
		if res := ch.Check(c); res.OK() {
			t.Errorf("element %v set to 0.5 (want %g) passes", e, right[e[0]*n+e[1]])
		}
	}
}

// TestPickLines: all lines when they fit; else the first and the last of
// each kind, and random others while the budget lasts, in order.
func TestPickLines(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 37))
	rows, cols := []int{1, 4, 5, 9, 12}, []int{0, 3}
	if pr, pc := pickLines(rows, cols, 10, 20, 8, 8, 1000, r); !slices.Equal(pr, rows) || !slices.Equal(pc, cols) {
		t.Errorf("all fit: %v %v", pr, pc)
	}
	pr, pc := pickLines(rows, cols, 10, 20, 8, 8, 70, r)
	if len(pr) != 3 || pr[0] != 1 || pr[2] != 12 || !slices.Equal(pc, cols) || !slices.IsSorted(pr) {
		t.Errorf("budget 70: %v %v", pr, pc)
	}
	if pr, pc := pickLines(rows, nil, 10, 20, 8, 8, 0, r); !slices.Equal(pr, []int{1, 12}) || len(pc) != 0 {
		t.Errorf("no budget: %v %v", pr, pc)
	}
	seen := map[string]bool{}
	for range 50 {
		pr, _ := pickLines([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nil, 1, 1, 1, 1, 3, r)
		seen[fmt.Sprint(pr)] = true
	}
	if len(seen) < 5 {
		t.Errorf("the third line drawn from %d choices only: %v", len(seen), seen)
	}
}
