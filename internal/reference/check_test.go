package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/precision"
)

// opMat returns op(X) (r x c) in float64: X, or X^T when trans (X then c x r).
func opMat[T amp.Element](trans bool, r, c int, x []T) []float64 {
	out := make([]float64, r*c)
	for i := range r {
		for j := range c {
			if trans {
				out[i*c+j] = float64(x[j*r+i])
			} else {
				out[i*c+j] = float64(x[i*c+j])
			}
		}
	}
	return out
}

// product returns alpha*op(A)*op(B) + beta*C0 in T: for floats the float64
// reference.MatMul rounded to T, for int32 the wrapping product.
func product[T amp.Element](tA, tB bool, m, n, k int, alpha T, a, b []T, beta T, c0 []T) []T {
	out := make([]T, m*n)
	if UnitRoundoff[T]() == 0 {
		oa, ob := opMat(tA, m, k, a), opMat(tB, k, n, b)
		for i := range m {
			for j := range n {
				var s T
				for p := range k {
					s += T(int32(oa[i*k+p])) * T(int32(ob[p*n+j]))
				}
				v := alpha * s
				if beta != 0 {
					v += beta * c0[i*n+j]
				}
				out[i*n+j] = v
			}
		}
		return out
	}
	want := MatMul(m, n, k, float64(alpha), opMat(tA, m, k, a), opMat(tB, k, n, b), float64(beta), ToFloat64(c0))
	for i, v := range want {
		out[i] = T(v)
	}
	return out
}

// accurate returns alpha*A*B + beta*C0 (no transposes) rounded to T from
// sums accurate to about one rounding (TwoProduct with FMA, TwoSum): the
// product a perfect kernel would give, free of the float64 reference's own
// error.
func accurate[T amp.Element](m, n, k int, alpha T, a, b []T, beta T, c0 []T) []T {
	out := make([]T, m*n)
	for i := range m {
		for j := range n {
			var hi, lo float64
			add := func(x, y float64) {
				p := x * y
				pe := math.FMA(x, y, -p)
				var e float64
				hi, e = twoSum(hi, p)
				lo += e + pe
			}
			for p := range k {
				add(float64(a[i*k+p]), float64(b[p*n+j]))
			}
			s := hi + lo
			hi, lo = 0, 0
			add(s, float64(alpha))
			if beta != 0 {
				add(float64(beta), float64(c0[i*n+j]))
			}
			out[i*n+j] = T(hi + lo)
		}
	}
	return out
}

type shape struct{ m, n, k int }

// blockedBudget returns a budget that splits the projections of an m x n x
// k product into about 8*(m+n)/m blocks of columns and 8*(m+n)/n of rows
// (at most a line a block), where the default budget would cover the whole
// product of the tests' small sizes.
func blockedBudget(m, n, k int) float64 { return float64(16 * (m + n) * max(k, 1)) }

// shapes are the products the tests check: empty, tiny, primes, skinny,
// k = 1, and sizes past the checks' blocks and parts.
var shapes = []shape{
	{0, 0, 0}, {0, 5, 3}, {4, 0, 3}, {3, 4, 0}, {1, 1, 1}, {1, 1, 0},
	{2, 3, 5}, {7, 11, 13}, {8, 8, 8}, {9, 9, 9}, {17, 19, 23}, {31, 29, 37},
	{1, 1, 300}, {1, 257, 1}, {200, 1, 150}, {300, 1, 1}, {64, 65, 1},
	{100, 3, 70}, {3, 100, 70}, {61, 67, 71},
}

// scalars are the alpha, beta pairs: plain, scaled, with C0, beta alone.
var scalars = [][2]float64{{1, 0}, {-2.5, 0}, {0.75, 1.25}, {0, 2}, {1, -1}}

var allTrans = [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}

func TestCheckMatMulPassesRightResults(t *testing.T) {
	testPasses[float32](t)
	testPasses[float64](t)
	testPasses[int32](t)
}

func testPasses[T amp.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sh := range shapes {
		for _, tr := range allTrans {
			for _, sc := range scalars {
				m, n, k := sh.m, sh.n, sh.k
				alpha, beta := T(sc[0]), T(sc[1])
				a, b, c0 := RandomSlice[T](r, m*k), RandomSlice[T](r, k*n), RandomSlice[T](r, m*n)
				c := product(tr[0], tr[1], m, n, k, alpha, a, b, beta, c0)
				ch := NewMatMulChecker(tr[0], tr[1], m, n, k, alpha, a, b, beta, c0, r)
				res := ch.Check(c)
				if !res.OK() || res.Err() != nil {
					t.Errorf("%T %dx%dx%d trans %v alpha %g beta %g: the rounded reference fails: %v", T(0), m, n, k, tr, sc[0], sc[1], res.Err())
				}
				// At these sizes the budget covers the whole product; a
				// smaller one splits the projections into blocks.
				blk := newMatMulChecker(tr[0], tr[1], m, n, k, alpha, a, b, beta, c0, r, blockedBudget(m, n, k))
				if res := blk.Check(c); !res.OK() || res.Partial {
					t.Errorf("%T %dx%dx%d trans %v alpha %g beta %g, blocked: the rounded reference fails: %+v", T(0), m, n, k, tr, sc[0], sc[1], res)
				}
				if res.Tolerance != Tolerance[T](k) {
					t.Errorf("%T k=%d: tolerance %g, want %g", T(0), k, res.Tolerance, Tolerance[T](k))
				}
				if m*n == 0 && (res.Worst != 0 || res.Where != "") {
					t.Errorf("%T %dx%d: empty C reported %+v", T(0), m, n, res)
				}
				if m*n > 0 && res.Where == "" {
					t.Errorf("%T %dx%dx%d: no Where", T(0), m, n, k)
				}
				// The same product without transposes, through CheckMatMul,
				// computing C over C0 as BLAS would.
				if !tr[0] && !tr[1] && beta != 0 {
					c = slices.Clone(c0)
					copy(c, product(false, false, m, n, k, alpha, a, b, beta, c0))
					if res := CheckMatMul(m, n, k, alpha, a, b, beta, c0, c, r); !res.OK() {
						t.Errorf("%T %dx%dx%d: CheckMatMul fails the right result: %v", T(0), m, n, k, res.Err())
					}
				}
			}
		}
	}
}

// TestCheckMatMulLongSums: at k = 5000 the float64 rounding of the check's
// own sums, were they plain, could be as large as the tolerance of a float64
// result; products accurate to the last bit, and the float64 reference
// rounded, pass.
func TestCheckMatMulLongSums(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sh := range []shape{{4, 5, 5000}, {1, 1, 5000}, {9, 2, 3001}} {
		m, n, k := sh.m, sh.n, sh.k
		a, b, c0 := RandomSlice[float64](r, m*k), RandomSlice[float64](r, k*n), RandomSlice[float64](r, m*n)
		// All positive too: no cancellation, so rounding errors in plain
		// sums drift one way.
		pa, pb := absOf(a), absOf(b)
		for _, c := range []struct {
			name string
			a, b []float64
			c    []float64
		}{
			{"accurate", a, b, accurate(m, n, k, 1.5, a, b, -0.5, c0)},
			{"rounded reference", a, b, product(false, false, m, n, k, 1.5, a, b, -0.5, c0)},
			{"accurate, positive", pa, pb, accurate(m, n, k, 1.5, pa, pb, -0.5, c0)},
		} {
			if res := CheckMatMul(m, n, k, 1.5, c.a, c.b, -0.5, c0, c.c, r); !res.OK() {
				t.Errorf("%dx%dx%d %s: %v", m, n, k, c.name, res.Err())
			}
		}
		a32, b32 := RandomSlice[float32](r, m*k), RandomSlice[float32](r, k*n)
		if res := CheckMatMul(m, n, k, 1, a32, b32, 0, nil, accurate(m, n, k, 1, a32, b32, 0, nil), r); !res.OK() {
			t.Errorf("float32 %dx%dx%d: %v", m, n, k, res.Err())
		}
	}
}

// TestCheckMatMulRigorousWherePlainSumsFail: row 0 of A is 1 followed by
// 4999 copies of 2^-54, each below half an ulp of 1, and B is all ones, so a
// plain float64 sum loses every small term: it is off by 4999*2^-54, about
// 2500u relative, more than the float64 tolerance for k = 5000 (about
// 1131u). The correctly rounded product must pass all the same (a check
// with plain float64 references would fail it, as MatMulErrors does), and
// the plainly summed one, wrong by more than the tolerance, must fail.
func TestCheckMatMulRigorousWherePlainSumsFail(t *testing.T) {
	const m, n, k = 3, 4, 5000
	a := make([]float64, m*k)
	for i := range m {
		a[i*k] = 1
		for p := 1; p < k; p++ {
			a[i*k+p] = 0x1p-54
		}
	}
	b := make([]float64, k*n)
	for i := range b {
		b[i] = 1
	}
	exact := 1 + float64(k-1)*0x1p-54 // one rounding of the exact sum
	right := make([]float64, m*n)
	for i := range right {
		right[i] = exact
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tr := range allTrans {
		at, bt := a, b
		if tr[0] {
			at = transpose(m, k, a)
		}
		if tr[1] {
			bt = transpose(k, n, b)
		}
		ch := NewMatMulChecker(tr[0], tr[1], m, n, k, 1, at, bt, 0, nil, r)
		if res := ch.Check(right); !res.OK() {
			t.Errorf("trans %v: the correctly rounded product fails: %v", tr, res.Err())
		}
		plain := product(tr[0], tr[1], m, n, k, 1, at, bt, 0, nil)
		if plain[0] != 1 {
			t.Fatalf("the plain sum kept the small terms: %v", plain[0])
		}
		if res := ch.Check(plain); res.OK() {
			t.Errorf("trans %v: the plainly summed product, off by 2500u, passes: %+v", tr, res)
		}
	}
	if e := slices.Max(MatMulErrors(m, n, k, 1, a, b, 0, nil, right)); e <= Tolerance[float64](k) {
		t.Errorf("MatMulErrors accepts the right product (error %g): the test no longer shows the point", e)
	}
}

// TestCheckMatMulEdgeOfTolerance: a C whose every element is off by nearly
// the tolerance, each error signed as the first random vector x so that all
// of them add up in C*x, passes (C*x is then as far off as a correct result
// can put it); the same at 1.2 times the tolerance fails. The test draws x
// as the checker does, first from a copy of its generator.
func TestCheckMatMulEdgeOfTolerance(t *testing.T) {
	testEdge[float32](t, 20, 30, 300, 0.9)
	testEdge[float64](t, 20, 30, 2000, 0.99)
	testEdge[float64](t, 3, 200, 1, 0.99)
}

func testEdge[T amp.Element](t *testing.T, m, n, k int, near float64) {
	r := rand.New(rand.NewPCG(15, 16))
	a, b, c0 := RandomSlice[T](r, m*k), RandomSlice[T](r, k*n), RandomSlice[T](r, m*n)
	alpha, beta := 1.25, -0.75
	x := RandomSlice[float64](rand.New(rand.NewPCG(17, 18)), n) // the checker's first draw
	right := ToFloat64(accurate(m, n, k, T(alpha), a, b, T(beta), c0))
	bound := MatMulBound(m, n, k, alpha, ToFloat64(a), ToFloat64(b), beta, ToFloat64(c0))
	tol := Tolerance[T](k)
	for _, f := range []float64{near, -near, 1.2, -1.2} {
		c := make([]T, m*n)
		for i := range m {
			for j := range n {
				c[i*n+j] = T(right[i*n+j] + math.Copysign(f*tol*bound[i*n+j], x[j]))
			}
		}
		// The default budget covers the whole product: every element is
		// compared. The small one splits the projections into blocks,
		// where the errors add up as in one projection.
		for _, budget := range []float64{refBudget, blockedBudget(m, n, k), 0} {
			res := newMatMulChecker(false, false, m, n, k, T(alpha), a, b, T(beta), c0, rand.New(rand.NewPCG(17, 18)), budget).Check(c)
			if math.Abs(f) < 1 && !res.OK() {
				t.Errorf("%T %dx%dx%d budget %g: errors of %g times the tolerance fail: %v", T(0), m, n, k, budget, f, res.Err())
			}
			if math.Abs(f) > 1 && res.OK() {
				t.Errorf("%T %dx%dx%d budget %g: errors of %g times the tolerance pass: %+v", T(0), m, n, k, budget, f, res)
			}
			if math.Abs(f) < 1 && res.Worst < 0.8*tol {
				t.Errorf("%T %dx%dx%d budget %g: errors of %g times the tolerance reported as %g of it", T(0), m, n, k, budget, f, res.Worst/tol)
			}
		}
	}
}

func transpose[T any](r, c int, x []T) []T {
	out := make([]T, r*c)
	for i := range r {
		for j := range c {
			out[j*r+i] = x[i*c+j]
		}
	}
	return out
}

// spoiler changes a right result c (m x n) of the case into a wrong one.
type spoiler[T amp.Element] struct {
	name string
	ok   func(m, n int) bool // whether it applies to the shape
	f    func(c []T, cs *wrongCase[T])
}

type wrongCase[T amp.Element] struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta T
	a, b, c0    []T
	bound       []float64 // M, the magnitude of each element's terms
}

// bump moves element (i, j) by f times the tolerance times its bound (by 1
// for int32).
func (cs *wrongCase[T]) bump(c []T, i, j int, f float64) {
	if UnitRoundoff[T]() == 0 {
		c[i*cs.n+j]++
		return
	}
	c[i*cs.n+j] += T(f * Tolerance[T](cs.k) * cs.bound[i*cs.n+j])
}

func spoilers[T amp.Element]() []spoiler[T] {
	any2 := func(m, n int) bool { return m >= 2 && n >= 2 }
	isFloat := UnitRoundoff[T]() != 0
	return []spoiler[T]{
		// Every row and column is checked whole up to 8: there one element
		// a little past the tolerance is caught anywhere.
		{"middle element off by 10x the tolerance, every line checked", func(m, n int) bool { return m <= allLines || n <= allLines },
			func(c []T, cs *wrongCase[T]) { cs.bump(c, cs.m/2, cs.n/2, 10) }},
		// Past that, the projections see one element when its error passes
		// the row's summed budget.
		{"middle element off by 10x its row's budget", func(m, n int) bool { return true },
			func(c []T, cs *wrongCase[T]) {
				i, j := cs.m/2, cs.n/2
				if !isFloat {
					c[i*cs.n+j] -= 1
					return
				}
				row := 0.0
				for q := range cs.n {
					row += cs.bound[i*cs.n+q]
				}
				c[i*cs.n+j] += T(10 * Tolerance[T](cs.k) * row)
			}},
		{"element of the last row off by 10x the tolerance", any2,
			func(c []T, cs *wrongCase[T]) { cs.bump(c, cs.m-1, cs.n/3, 10) }},
		{"element of the last column off by 10x the tolerance", any2,
			func(c []T, cs *wrongCase[T]) { cs.bump(c, cs.m/3, cs.n-1, 10) }},
		{"a 5x6 block off by 1%", func(m, n int) bool { return m >= 12 && n >= 14 },
			func(c []T, cs *wrongCase[T]) {
				for i := 6; i < 11; i++ {
					for j := 7; j < 13; j++ {
						if isFloat {
							c[i*cs.n+j] = T(float64(c[i*cs.n+j]) * 1.01)
						} else {
							c[i*cs.n+j] += 3
						}
					}
				}
			}},
		{"transposed", func(m, n int) bool { return m == n && m >= 2 },
			func(c []T, cs *wrongCase[T]) { copy(c, transpose(cs.m, cs.n, c)) }},
		{"alpha ignored", func(m, n int) bool { return true },
			func(c []T, cs *wrongCase[T]) {
				copy(c, product(cs.tA, cs.tB, cs.m, cs.n, cs.k, 1, cs.a, cs.b, cs.beta, cs.c0))
			}},
		{"beta ignored", func(m, n int) bool { return true },
			func(c []T, cs *wrongCase[T]) {
				copy(c, product(cs.tA, cs.tB, cs.m, cs.n, cs.k, cs.alpha, cs.a, cs.b, 0, nil))
			}},
		{"last k term dropped", func(m, n int) bool { return true },
			func(c []T, cs *wrongCase[T]) {
				a := slices.Clone(cs.a)
				for i := range cs.m { // column k-1 of op(A) is zero
					if cs.tA {
						a[(cs.k-1)*cs.m+i] = 0
					} else {
						a[i*cs.k+cs.k-1] = 0
					}
				}
				copy(c, product(cs.tA, cs.tB, cs.m, cs.n, cs.k, cs.alpha, a, cs.b, cs.beta, cs.c0))
			}},
		{"NaN in the middle", func(m, n int) bool { return isFloat },
			func(c []T, cs *wrongCase[T]) { c[cs.m/2*cs.n+cs.n/2] = T(math.NaN()) }},
		{"-Inf in the middle", func(m, n int) bool { return isFloat },
			func(c []T, cs *wrongCase[T]) { c[cs.m/2*cs.n+cs.n/2+1] = T(math.Inf(-1)) }},
		{"off by one in the middle", func(m, n int) bool { return !isFloat },
			func(c []T, cs *wrongCase[T]) { c[cs.m/2*cs.n+cs.n/2]++ }},
		{"off by one in the last element", func(m, n int) bool { return !isFloat },
			func(c []T, cs *wrongCase[T]) { c[len(c)-1]-- }},
	}
}

func TestCheckMatMulCatchesWrongResults(t *testing.T) {
	testCatches[float32](t)
	testCatches[float64](t)
	testCatches[int32](t)
}

func testCatches[T amp.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sh := range []shape{{41, 41, 29}, {5, 40, 7}, {40, 6, 33}, {3, 3, 1}, {67, 61, 1}, {30, 30, 300}} {
		for _, tr := range allTrans {
			m, n, k := sh.m, sh.n, sh.k
			alpha, beta := -1.5, 0.5
			if UnitRoundoff[T]() == 0 {
				alpha, beta = 3, -2
			}
			cs := &wrongCase[T]{tA: tr[0], tB: tr[1], m: m, n: n, k: k, alpha: T(alpha), beta: T(beta)}
			cs.a, cs.b, cs.c0 = RandomSlice[T](r, m*k), RandomSlice[T](r, k*n), RandomSlice[T](r, m*n)
			oa, ob := opMat(tr[0], m, k, cs.a), opMat(tr[1], k, n, cs.b)
			cs.bound = MatMulBound(m, n, k, float64(cs.alpha), oa, ob, float64(cs.beta), ToFloat64(cs.c0))
			right := product(tr[0], tr[1], m, n, k, cs.alpha, cs.a, cs.b, cs.beta, cs.c0)
			checkers := map[string]*MatMulChecker[T]{
				"":          NewMatMulChecker(tr[0], tr[1], m, n, k, cs.alpha, cs.a, cs.b, cs.beta, cs.c0, r),
				", blocked": newMatMulChecker(tr[0], tr[1], m, n, k, cs.alpha, cs.a, cs.b, cs.beta, cs.c0, r, blockedBudget(m, n, k)),
			}
			for how, ch := range checkers {
				if res := ch.Check(right); !res.OK() {
					t.Fatalf("%T %v trans %v%s: the right result fails: %v", T(0), sh, tr, how, res.Err())
				}
				for _, sp := range spoilers[T]() {
					if !sp.ok(m, n) {
						continue
					}
					c := slices.Clone(right)
					sp.f(c, cs)
					if slices.Equal(c, right) {
						continue // e.g. a symmetric product transposed
					}
					res := ch.Check(c)
					if res.OK() || res.Err() == nil {
						t.Errorf("%T %v trans %v%s: %s passed: %+v", T(0), sh, tr, how, sp.name, res)
					} else if res.Where == "" || !(res.Worst > res.Tolerance) {
						t.Errorf("%T %v trans %v%s: %s: odd report %+v", T(0), sh, tr, how, sp.name, res)
					}
				}
			}
		}
	}
}

// TestCheckMatMulReport: with every row checked whole, Worst is the error
// MatMulErrors finds, at the element it finds it.
func TestCheckMatMulReport(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const m, n, k = 6, 50, 40
	a, b := RandomSlice[float32](r, m*k), RandomSlice[float32](r, k*n)
	c := product(false, false, m, n, k, 1, a, b, 0, nil)
	ok := CheckMatMul(m, n, k, 1, a, b, 0, nil, c, r)
	if !ok.OK() || ok.Err() != nil || ok.Worst > ok.Tolerance || ok.Worst < 0 {
		t.Fatalf("right result: %+v", ok)
	}
	c[3*n+17] *= 1.001
	errs := MatMulErrors(m, n, k, 1, a, b, 0, nil, c)
	want := slices.Max(errs)
	res := CheckMatMul(m, n, k, 1, a, b, 0, nil, c, r)
	if res.OK() || res.Row != 3 || res.Col != 17 || !strings.Contains(res.Where, "(3, 17)") {
		t.Fatalf("report %+v, want the error at (3, 17)", res)
	}
	// They differ by the rounding of the two references, some u.
	if math.Abs(res.Worst-want) > 1e-9*want+1e-14 {
		t.Errorf("Worst %g, MatMulErrors %g", res.Worst, want)
	}
	if res.Got != float64(c[3*n+17]) {
		t.Errorf("Got %g, want C's element %g", res.Got, c[3*n+17])
	}
	if msg := res.Err().Error(); !strings.Contains(msg, "(3, 17)") || !strings.Contains(msg, "tolerance") {
		t.Errorf("Err() = %q", msg)
	}

	// A projection names its row.
	const big = 100
	a, b = RandomSlice[float32](r, big*k), RandomSlice[float32](r, k*big)
	c = product(false, false, big, big, k, 1, a, b, 0, nil)
	for j := range big {
		c[50*big+j] *= 1.5 // row 50 wrong, not one the checker samples unless by chance
	}
	res = NewMatMulChecker(false, false, big, big, k, 1, a, b, 0, nil, rand.New(rand.NewPCG(1, 1))).Check(c)
	if res.OK() || res.Row != 50 {
		t.Errorf("row 50 wrong: %+v", res)
	}
}

// TestCheckMatMulNonFinite: NaN and Inf that the product itself produces
// pass, and the rules for them follow MaxErr's.
func TestCheckMatMulNonFinite(t *testing.T) {
	nan, pinf := math.NaN(), math.Inf(1)
	type edit struct {
		name  string
		alpha float64
		beta  float64
		f     func(a, b, c0 []float64) // m x k, k x n, m x n; m, n, k = 20, 30, 25
	}
	const m, n, k = 20, 30, 25
	edits := []edit{
		{"NaN in A", 1, 0, func(a, b, c0 []float64) { a[7*k+3] = nan }},
		{"Inf in A", 1, 0, func(a, b, c0 []float64) { a[7*k+3] = pinf }},
		{"Inf in A, a zero in B", 1, 0, func(a, b, c0 []float64) { a[7*k+3] = pinf; b[3*n+5] = 0 }},
		{"+Inf and -Inf in a row of A", 1, 0, func(a, b, c0 []float64) { a[9*k+1], a[9*k+2] = pinf, -pinf }},
		{"NaN in B", -2, 0, func(a, b, c0 []float64) { b[4*n+11] = nan }},
		{"Inf in B, last column", 1, 0, func(a, b, c0 []float64) { b[(k-1)*n+n-1] = -pinf }},
		{"Inf in A and B", 1, 0.5, func(a, b, c0 []float64) { a[0] = pinf; b[2*n+6] = pinf }},
		{"NaN in C0", 1, 1, func(a, b, c0 []float64) { c0[5*n+6] = nan }},
		{"Inf in C0", 1, -1, func(a, b, c0 []float64) { c0[19*n+29] = pinf }},
		{"NaN in C0, beta 0", 1, 0, func(a, b, c0 []float64) { c0[5*n+6] = nan }},
		{"alpha NaN", nan, 0, func(a, b, c0 []float64) {}},
		{"beta Inf", 1, pinf, func(a, b, c0 []float64) {}},
		{"alpha 0, NaN in A", 0, 1, func(a, b, c0 []float64) { a[3] = nan }},
		{"overflow", 1, 0, func(a, b, c0 []float64) {
			for i := range a {
				a[i] *= 1e200
			}
			for i := range b {
				b[i] *= 1e200
			}
		}},
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, e := range edits {
		for _, tr := range allTrans {
			a, b, c0 := RandomSlice[float64](r, m*k), RandomSlice[float64](r, k*n), RandomSlice[float64](r, m*n)
			e.f(a, b, c0)
			want := MatMul(m, n, k, e.alpha, a, b, e.beta, c0)
			bound := MatMulBound(m, n, k, e.alpha, a, b, e.beta, c0)
			at, bt := a, b
			if tr[0] {
				at = transpose(m, k, a)
			}
			if tr[1] {
				bt = transpose(k, n, b)
			}
			ch := NewMatMulChecker(tr[0], tr[1], m, n, k, e.alpha, at, bt, e.beta, c0, r)
			c0[0] = 12345 // C0 is read by NewMatMulChecker only
			if res := ch.Check(want); !res.OK() {
				t.Errorf("%s trans %v: the product itself fails: %v", e.name, tr, res.Err())
			}
			// Every element changed in a way MaxErr rejects must fail.
			for _, idx := range []int{0, 7*n + 5, 9*n + 1, 4*n + 11, 5*n + 6, m*n - 1, 13*n + 17} {
				for _, v := range []float64{nan, pinf, -pinf, 0.5, want[idx] + 0.25} {
					c := slices.Clone(want)
					c[idx] = v
					if MaxErr(c[idx:idx+1], want[idx:idx+1], bound[idx:idx+1]) <= Tolerance[float64](k) {
						continue
					}
					if res := ch.Check(c); res.OK() {
						t.Errorf("%s trans %v: element %d set to %g (want %g) passes", e.name, tr, idx, v, want[idx])
					}
				}
			}
		}
	}
}

// TestCheckMatMulSameEverywhere: the sums split into parts by the matrices'
// shapes, not by the number of threads, so the report is the same to the
// bit whatever GOMAXPROCS: where the budget covers the whole product, and
// where it splits the projections into blocks (13 of columns, 9 of rows,
// with B transposed and C0 in the product).
func TestCheckMatMulSameEverywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		m, n, k int // several parts in every pass
		tA, tB  bool
		beta    float64
		budget  float64
	}{
		{300, 40, 500, true, false, 0, refBudget},
		{300, 450, 500, false, true, -0.5, 1 << 22},
	} {
		m, n, k := c.m, c.n, c.k
		// C is random: the report of a wrong result has the most to differ in.
		a, b, cc := RandomSlice[float64](r, m*k), RandomSlice[float64](r, k*n), RandomSlice[float64](r, m*n)
		var got []MatMulCheck
		for _, procs := range []int{1, 3, 16} {
			old := runtime.GOMAXPROCS(procs)
			got = append(got, newMatMulChecker(c.tA, c.tB, m, n, k, 1, a, b, c.beta, cc, rand.New(rand.NewPCG(1, 2)), c.budget).Check(cc))
			runtime.GOMAXPROCS(old)
		}
		for _, g := range got[1:] {
			if g != got[0] {
				t.Errorf("%dx%dx%d: GOMAXPROCS changed the report: %+v and %+v", m, n, k, got[0], g)
			}
		}
	}
}

// TestMatMulCheckerConcurrent: Check from several goroutines at once, with
// a NaN in A so that a row is checked apart from the projections at each
// call, reports what it reports alone.
func TestMatMulCheckerConcurrent(t *testing.T) {
	const m, n, k = 40, 50, 30
	r := rand.New(rand.NewPCG(19, 20))
	a, b := RandomSlice[float32](r, m*k), RandomSlice[float32](r, k*n)
	a[17*k+4] = float32(math.NaN())
	right := product(false, false, m, n, k, 1, a, b, 0, nil)
	wrong := slices.Clone(right)
	wrong[17*n+3] = 1 // finite where the reference is NaN
	ch := NewMatMulChecker(false, false, m, n, k, 1, a, b, 0, nil, r)
	want := []MatMulCheck{ch.Check(right), ch.Check(wrong)}
	if !want[0].OK() || want[1].OK() || want[1].Row != 17 || !strings.Contains(want[1].Where, "NaN") {
		t.Fatalf("alone: %+v, %+v", want[0], want[1])
	}
	got := make([]MatMulCheck, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = ch.Check([][]float32{right, wrong}[i%2]) })
	}
	wg.Wait()
	for i, g := range got {
		if w := want[i%2]; g.Worst != w.Worst || g.Where != w.Where {
			t.Errorf("call %d: %+v, alone %+v", i, g, w)
		}
	}
}

func TestCheckMatMulPanicsOnShortSlices(t *testing.T) {
	for name, f := range map[string]func(){
		"short A": func() {
			CheckMatMul(2, 2, 2, 1, make([]float32, 3), make([]float32, 4), 0, nil, make([]float32, 4), nil)
		},
		"short C0": func() {
			CheckMatMul(2, 2, 2, 1, make([]float32, 4), make([]float32, 4), 1, nil, make([]float32, 4), nil)
		},
		"short C": func() {
			NewMatMulChecker(false, false, 2, 2, 2, 1, make([]int32, 4), make([]int32, 4), 0, nil, rand.New(rand.NewPCG(1, 1))).Check(make([]int32, 3))
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestSigma: the bound on the check's sums stays near 18u however long they
// are, where a plain sum's grows as k*u.
func TestSigma(t *testing.T) {
	for _, k := range []int{1, 16, 17, 1000, 8192, 1 << 20} {
		s := sigma(k)
		if s <= 0 || s > 20*u64 {
			t.Errorf("sigma(%d) = %g u", k, s/u64)
		}
	}
	if sigma(0) != 0 || sigma(1) > 3*u64 {
		t.Errorf("sigma(0) = %g, sigma(1) = %g u", sigma(0), sigma(1)/u64)
	}
	if c := chain(0.5, 0.5); c != 1.25 {
		t.Errorf("chain(0.5, 0.5) = %g", c)
	}
}

func ExampleCheckMatMul() {
	r := rand.New(rand.NewPCG(1, 2))
	const m, n, k = 300, 200, 100
	a, b := RandomSlice[float32](r, m*k), RandomSlice[float32](r, k*n)
	c := make([]float32, m*n)
	for i, v := range MatMul(m, n, k, 1, ToFloat64(a), ToFloat64(b), 0, nil) {
		c[i] = float32(v)
	}
	res := CheckMatMul(m, n, k, 1, a, b, 0, nil, c, r)
	fmt.Println(res.OK())
	c[len(c)-1] += 0.01
	res = CheckMatMul(m, n, k, 1, a, b, 0, nil, c, r)
	fmt.Println(res.OK(), res.Row, res.Col)
	// Output:
	// true
	// false 299 199
}

func TestToleranceWorst(t *testing.T) {
	if got, want := ToleranceWorst[float32](1000), 4*1002*0x1p-24; got != want {
		t.Errorf("ToleranceWorst[float32](1000) = %g, want %g", got, want)
	}
	if ToleranceWorst[float64](1000) < Tolerance[float64](1000) {
		t.Error("the worst case is under the random walk's tolerance")
	}
}

// A product of operands rounded to BF16 passes NewMatMulCheckerTol with
// ToleranceIn's tolerance, fails the float32 one, and an element off by
// 5% of its magnitude fails both.
func TestMatMulCheckerTolInPrecision(t *testing.T) {
	const m, n, k = 40, 30, 300
	r := rand.New(rand.NewPCG(5, 6))
	a, b := RandomSlice[float32](r, m*k), RandomSlice[float32](r, k*n)
	ra, rb := precision.RoundSlice(precision.BF16, a), precision.RoundSlice(precision.BF16, b)
	want := MatMul(m, n, k, 1, ToFloat64(ra), ToFloat64(rb), 0, nil)
	c := make([]float32, m*n)
	for i := range c {
		c[i] = float32(want[i])
	}
	tol := ToleranceIn(k, precision.Unit(precision.BF16))
	if res := NewMatMulCheckerTol(false, false, m, n, k, 1, a, b, 0, nil, rand.New(rand.NewPCG(1, 2)), tol).Check(c); !res.OK() {
		t.Errorf("bf16 product, bf16 tolerance %.3g: %v", tol, res.Err())
	}
	if res := NewMatMulChecker(false, false, m, n, k, 1, a, b, 0, nil, rand.New(rand.NewPCG(1, 2))).Check(c); res.OK() {
		t.Errorf("bf16 product passed float32's tolerance (worst %.3g)", res.Worst)
	}
	bound := MatMulBound(m, n, k, 1, ToFloat64(a), ToFloat64(b), 0, nil)
	c[7*n+3] += float32(0.05 * bound[7*n+3])
	if res := NewMatMulCheckerTol(false, false, m, n, k, 1, a, b, 0, nil, rand.New(rand.NewPCG(1, 2)), tol).Check(c); res.OK() {
		t.Errorf("an element 5%% off passed the bf16 tolerance %.3g", tol)
	}
}
