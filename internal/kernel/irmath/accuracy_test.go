package irmath

import (
	"flag"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/goamp/goamp/internal/kernel/ir"
)

var long = flag.Bool("irmath.long", false, "measure the error over many more points (slow; for the numbers in the docs)")

// points says how many inputs a range gets compared with Go's math and
// how many of them also with the math/big reference.
func points() (goN, bigN int) {
	switch {
	case *long:
		return 200_000, 10_000
	case raceEnabled:
		return 1500, 60
	}
	return 12000, 400
}

// Input generators.

func uniform(lo, hi float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() }
}

// logUniform gives ±(1+u)·2^e, e uniform in [lo, hi] (the sign random if
// signed), which reaches every binade, subnormals included.
func logUniform(lo, hi int, signed bool) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 {
		x := math.Ldexp(1+r.Float64(), lo+r.IntN(hi-lo+1))
		if signed && r.IntN(2) == 0 {
			x = -x
		}
		return x
	}
}

func unary(gen func(*rand.Rand) float64) func(*rand.Rand) (float64, float64) {
	return func(r *rand.Rand) (float64, float64) { return gen(r), 0 }
}

type inputRange struct {
	name string
	gen  func(*rand.Rand) (x, y float64)
	list []float64 // fixed inputs (x only), instead of gen
	// bound is the most ulp the F64 result may be off the exact value;
	// against Go's math (itself up to about an ulp off) the bound is one
	// more.
	bound float64
}

type fnSpec struct {
	fn     ir.MathFn
	goRef  func(x, y float64) float64
	bigRef func(x, y float64) *big.Float
	ranges []inputRange
	// ranges32 are the ranges for float32 (the inputs are rounded to
	// float32, and the bound is not used: precise float32 results must be
	// within half an ulp and a hair of Go's float64 result).
	ranges32 []inputRange
	// specials are compared bit for bit (NaNs as NaNs) with Go's math.
	specials [][2]float64
}

var (
	inf  = math.Inf(1)
	nan  = math.NaN()
	negZ = math.Copysign(0, -1)
)

var commonSpecials = [][2]float64{{0, 0}, {negZ, 0}, {inf, 0}, {-inf, 0}, {nan, 0}, {5e-324, 0}, {-5e-324, 0}, {1, 0}, {-1, 0}}

// trigHard lists float64s closest to multiples of π/2: for a binade
// 2^e, the denominators of the continued fraction of 2^(e-52)·2/π below
// 2^53 (and their neighbours) make x = q·2^(e-52) whose x·2/π is nearest
// an integer (see TestReductionHardestCase).
var trigHard = sync.OnceValue(func() []float64 {
	var out []float64
	for _, e := range []int{0, 1, 2, 4, 6, 7, 8, 10, 16, 24, 29, 30, 31, 40, 52, 60, 100, 200, 400, 797 + 52, 1000, 1023} {
		for _, q := range convergents(e) {
			x := math.Ldexp(float64(q), e-52)
			out = append(out, x, math.Nextafter(x, 0), math.Nextafter(x, inf))
		}
	}
	return append(out, 6381956970095103*0x1p797, 0x1.921fb54442d18p+0, 0x1.921fb54442d18p+1, 0x1.921fb54442d18p+2, 1e22, math.MaxFloat64)
})

var specs = []fnSpec{
	{
		fn:     ir.Exp,
		goRef:  func(x, _ float64) float64 { return math.Exp(x) },
		bigRef: func(x, _ float64) *big.Float { return refExp(bf(x)) },
		ranges: []inputRange{
			{name: "[-1,1]", gen: unary(uniform(-1, 1)), bound: 1},
			{name: "[-708,709.7]", gen: unary(uniform(-708, 709.7)), bound: 1},
			{name: "tiny ±[2^-60,1]", gen: unary(logUniform(-60, 0, true)), bound: 1},
			{name: "subnormal results [-745.1,-708]", gen: unary(uniform(-745.1, -708)), bound: 1.01},
			{name: "overflow edge", list: []float64{709.782712893383, 709.782712893384, 709.7827128933841, 709.79, 710, 800, 1e300}, bound: 1},
			{name: "underflow edge", list: []float64{-745.1332191019411, -745.1332191019412, -745.14, -746, -1e300, -708.3964185322641, -708.39641853226408}, bound: 1},
		},
		ranges32: []inputRange{
			{name: "[-1,1]", gen: unary(uniform(-1, 1))},
			{name: "[-87.3,88.7]", gen: unary(uniform(-87.3, 88.7))},
			{name: "subnormal results [-103.9,-87.3]", gen: unary(uniform(-103.9, -87.3))},
			{name: "tiny ±[2^-30,1]", gen: unary(logUniform(-30, 0, true))},
		},
		specials: append(commonSpecials, [2]float64{1e-300, 0}),
	},
	{
		fn:     ir.Exp2,
		goRef:  func(x, _ float64) float64 { return math.Exp2(x) },
		bigRef: func(x, _ float64) *big.Float { return refExp(newF().Mul(bf(x), bigLn2())) },
		ranges: []inputRange{
			{name: "[-1,1]", gen: unary(uniform(-1, 1)), bound: 1},
			{name: "[-1022,1023.9]", gen: unary(uniform(-1022, 1023.9)), bound: 1},
			{name: "subnormal results [-1075,-1022]", gen: unary(uniform(-1075, -1022)), bound: 1.01},
			{name: "tiny ±[2^-60,1]", gen: unary(logUniform(-60, 0, true)), bound: 1},
			{name: "integers and edges", list: []float64{-1074, -1075, -1076, -1074.5, -1022, 1023, 1024, 1023.9999999999999, 3, 10, -3, 0.5, 2000, -2000}, bound: 0.5},
		},
		ranges32: []inputRange{
			{name: "[-1,1]", gen: unary(uniform(-1, 1))},
			{name: "[-126,128]", gen: unary(uniform(-126, 128))},
			{name: "subnormal results [-150,-126]", gen: unary(uniform(-150, -126))},
		},
		specials: commonSpecials,
	},
	{
		fn:     ir.Log,
		goRef:  func(x, _ float64) float64 { return math.Log(x) },
		bigRef: func(x, _ float64) *big.Float { return refLog(bf(x)) },
		ranges: []inputRange{
			{name: "all positive", gen: unary(logUniform(-1074, 1023, false)), bound: 1},
			{name: "[0.5,2]", gen: unary(uniform(0.5, 2)), bound: 1},
			{name: "1±[2^-60,2^-2]", gen: unary(func(r *rand.Rand) float64 { return 1 + logUniform(-60, -2, true)(r) }), bound: 1},
			{name: "subnormals", gen: unary(logUniform(-1074, -1023, false)), bound: 1},
			{name: "edges", list: []float64{math.MaxFloat64, 0x1p-1022, 0x1p-1074, math.Sqrt2, math.Nextafter(math.Sqrt2, 0), math.E, 2, 0.5, 3, 10}, bound: 1},
		},
		ranges32: []inputRange{
			{name: "all positive", gen: unary(logUniform(-149, 127, false))},
			{name: "[0.5,2]", gen: unary(uniform(0.5, 2))},
			{name: "1±[2^-24,2^-2]", gen: unary(func(r *rand.Rand) float64 { return 1 + logUniform(-24, -2, true)(r) })},
		},
		specials: append(commonSpecials, [2]float64{-2, 0}),
	},
	{
		fn:     ir.Log2,
		goRef:  func(x, _ float64) float64 { return math.Log2(x) },
		bigRef: func(x, _ float64) *big.Float { l := refLog(bf(x)); return l.Quo(l, bigLn2()) },
		ranges: []inputRange{
			{name: "all positive", gen: unary(logUniform(-1074, 1023, false)), bound: 1},
			{name: "[0.5,2]", gen: unary(uniform(0.5, 2)), bound: 1},
			{name: "1±[2^-60,2^-2]", gen: unary(func(r *rand.Rand) float64 { return 1 + logUniform(-60, -2, true)(r) }), bound: 1},
			{name: "powers of two", list: []float64{0x1p-1074, 0x1p-1030, 0x1p-1022, 0.25, 2, 4, 0x1p100, 0x1p1023}, bound: 1e-9}, // exact, but for the reference's last bits
		},
		ranges32: []inputRange{
			{name: "all positive", gen: unary(logUniform(-149, 127, false))},
			{name: "[0.5,2]", gen: unary(uniform(0.5, 2))},
			{name: "1±[2^-24,2^-2]", gen: unary(func(r *rand.Rand) float64 { return 1 + logUniform(-24, -2, true)(r) })},
		},
		specials: append(commonSpecials, [2]float64{-2, 0}),
	},
	{
		fn:       ir.Sin,
		goRef:    func(x, _ float64) float64 { return math.Sin(x) },
		bigRef:   func(x, _ float64) *big.Float { s, _ := refSinCos(x); return s },
		ranges:   trigRanges,
		ranges32: trigRanges32,
		specials: commonSpecials,
	},
	{
		fn:       ir.Cos,
		goRef:    func(x, _ float64) float64 { return math.Cos(x) },
		bigRef:   func(x, _ float64) *big.Float { _, c := refSinCos(x); return c },
		ranges:   trigRanges,
		ranges32: trigRanges32,
		specials: commonSpecials,
	},
	{
		fn:     ir.Tanh,
		goRef:  func(x, _ float64) float64 { return math.Tanh(x) },
		bigRef: func(x, _ float64) *big.Float { return refTanh(x) },
		ranges: []inputRange{
			{name: "[-1,1]", gen: unary(uniform(-1, 1)), bound: 1},
			{name: "[-25,25]", gen: unary(uniform(-25, 25)), bound: 1},
			{name: "tiny ±[2^-1074,2^-2]", gen: unary(logUniform(-1074, -2, true)), bound: 1},
			{name: "edges", list: []float64{0.5493061443340548, 19.06, 22, 22.1, 1e300, -1e300}, bound: 1},
		},
		ranges32: []inputRange{
			{name: "[-1,1]", gen: unary(uniform(-1, 1))},
			{name: "[-10,10]", gen: unary(uniform(-10, 10))},
			{name: "tiny ±[2^-149,2^-2]", gen: unary(logUniform(-149, -2, true))},
		},
		specials: commonSpecials,
	},
	{
		fn:     ir.Pow,
		goRef:  math.Pow,
		bigRef: powRef,
		ranges: []inputRange{
			{name: "any x>0, result in range", gen: powWide(-1074, 1023), bound: 1},
			{name: "x near 1, y large", gen: func(r *rand.Rand) (float64, float64) {
				x := 1 + logUniform(-40, -3, true)(r)
				return x, uniform(-700, 700)(r) / math.Log(x)
			}, bound: 1},
			{name: "x<0, integer y", gen: func(r *rand.Rand) (float64, float64) {
				return -logUniform(-10, 10, false)(r), float64(r.IntN(201) - 100)
			}, bound: 1},
			{name: "x in [0,10], y in [-20,20]", gen: func(r *rand.Rand) (float64, float64) {
				return uniform(0, 10)(r), uniform(-20, 20)(r)
			}, bound: 1},
			{name: "subnormal x", gen: func(r *rand.Rand) (float64, float64) {
				return logUniform(-1074, -1023, false)(r), uniform(-0.9, 0.9)(r)
			}, bound: 1},
		},
		ranges32: []inputRange{
			{name: "any x>0, result in range", gen: powWide32},
			{name: "x near 1, y large", gen: func(r *rand.Rand) (float64, float64) {
				x := float64(float32(1 + logUniform(-23, -3, true)(r)))
				return x, uniform(-80, 80)(r) / math.Log(x)
			}},
			{name: "x<0, integer y", gen: func(r *rand.Rand) (float64, float64) {
				return -logUniform(-3, 3, false)(r), float64(r.IntN(41) - 20)
			}},
			{name: "x in [0,10], y in [-20,20]", gen: func(r *rand.Rand) (float64, float64) {
				return uniform(0, 10)(r), uniform(-20, 20)(r)
			}},
		},
		specials: powSpecials(),
	},
}

var trigRanges = []inputRange{
	{name: "[-π/4,π/4]", gen: unary(uniform(-math.Pi/4, math.Pi/4)), bound: 1},
	{name: "[-100,100]", gen: unary(uniform(-100, 100)), bound: 1},
	{name: "±[1,2^30]", gen: unary(logUniform(0, 29, true)), bound: 1},
	{name: "±[2^30,2^1024)", gen: unary(logUniform(30, 1023, true)), bound: 1},
	{name: "tiny ±[2^-1074,1]", gen: unary(logUniform(-1074, -1, true)), bound: 1},
	{name: "near multiples of π/2", gen: unary(func(r *rand.Rand) float64 {
		k := float64(r.IntN(1 << 24))
		return math.Nextafter(k*(math.Pi/2), []float64{-inf, 0, inf}[r.IntN(3)])
	}), bound: 1},
	{name: "hardest cases", list: nil, bound: 1}, // trigHard(), filled in at run time
}

var trigRanges32 = []inputRange{
	{name: "[-π/4,π/4]", gen: unary(uniform(-math.Pi/4, math.Pi/4))},
	{name: "[-100,100]", gen: unary(uniform(-100, 100))},
	{name: "±[1,2^30]", gen: unary(logUniform(0, 29, true))},
	{name: "±[2^30,2^128)", gen: unary(logUniform(30, 127, true))},
	{name: "tiny ±[2^-149,1]", gen: unary(logUniform(-149, -1, true))},
	{name: "near multiples of π/2", gen: unary(func(r *rand.Rand) float64 {
		k := float32(r.IntN(1 << 20))
		return float64(math.Nextafter32(k*(math.Pi/2), []float32{float32(-inf), 0, float32(inf)}[r.IntN(3)]))
	})},
}

// powWide32 makes float32 x^y land anywhere in [2^-149, 2^127].
func powWide32(r *rand.Rand) (float64, float64) {
	x := float64(float32(logUniform(-149, 127, false)(r)))
	if x == 1 {
		x = 3
	}
	return x, uniform(-149, 127)(r) / math.Log2(x)
}

// powWide makes x^y land anywhere in [2^lo, 2^hi].
func powWide(lo, hi int) func(*rand.Rand) (float64, float64) {
	return func(r *rand.Rand) (float64, float64) {
		x := logUniform(-1074, 1023, false)(r)
		if x == 1 {
			x = 3
		}
		t := uniform(float64(lo), float64(hi))(r)
		return x, t / math.Log2(x)
	}
}

func powRef(x, y float64) *big.Float {
	p := refPow(math.Abs(x), y)
	if x < 0 && math.Mod(y, 2) != 0 {
		p.Neg(p)
	}
	return p
}

func powSpecials() [][2]float64 {
	vals := []float64{0, negZ, 1, -1, 0.5, -0.5, 2, -2, 3, -3, 0.25, 1.5, -1.5, inf, -inf, nan, 5e-324, 1e308, -1e308, 1e-308, 4, 9}
	var out [][2]float64
	for _, x := range vals {
		for _, y := range vals {
			out = append(out, [2]float64{x, y})
		}
	}
	return out
}

type result struct {
	fn          ir.MathFn
	typ         string
	rng         string
	maxGo       float64
	xGo, yGo    float64
	maxBig      float64
	xBig, yBig  float64
	n, nBig     int
	goWrong     int // points where Go's math was off and the routine right
	bound       float64
	exceededBig bool
}

var (
	resultsMu sync.Mutex
	results   []result
)

// TestAccuracy64 runs every software float64 routine over its ranges in
// the interpreter and checks the ulp error against math/big (a sample)
// and Go's math (all points), and the special values bit for bit.
func TestAccuracy64(t *testing.T) {
	for _, s := range specs {
		t.Run(s.fn.String(), func(t *testing.T) {
			t.Parallel()
			f := lowered(t, s.fn, ir.F64, false)
			checkSpecials(t, f, ir.F64, s, false)
			for ri, rg := range s.ranges {
				xs, ys := inputs(s, ri, rg)
				got := run(t, f, ir.F64, xs, ys)
				res := result{fn: s.fn, typ: "f64", rng: rg.name, bound: rg.bound, n: len(xs)}
				_, bigN := points()
				for i := range xs {
					x, y := xs[i], ys[i]
					eGo := ulpErr64(got[i], s.goRef(x, y), false)
					// The exact reference checks a sample, and every point
					// where Go's math and the routine disagree by more
					// than the bound: on amd64 Go's Exp overflows early,
					// its Log and Pow get subnormals wrong, and its Sin
					// and Cos lose accuracy beyond 2^29.
					if i < bigN || rg.list != nil || !(eGo <= rg.bound) {
						res.nBig++
						eEx := ulpErr(got[i], s.bigRef(x, y), false)
						if eEx > res.maxBig || eEx != eEx {
							res.maxBig, res.xBig, res.yBig = eEx, x, y
						}
						if eGo > rg.bound+1 && eEx <= rg.bound {
							res.goWrong++
							continue
						}
					}
					if eGo > res.maxGo || eGo != eGo {
						res.maxGo, res.xGo, res.yGo = eGo, x, y
					}
				}
				record(res)
				if !(res.maxBig <= rg.bound) {
					t.Errorf("%s %s: %.3g ulp at x=%v y=%v (exact), bound %v", s.fn, rg.name, res.maxBig, res.xBig, res.yBig, rg.bound)
				}
				if !(res.maxGo <= rg.bound+1) {
					t.Errorf("%s %s: %.3g ulp at x=%v y=%v from Go's math, bound %v", s.fn, rg.name, res.maxGo, res.xGo, res.yGo, rg.bound+1)
				}
			}
		})
	}
}

// TestAccuracy32 checks the precise float32 functions (the float64 routine
// rounded to float32: within half an ulp and a hair of the exact value)
// and the fast ones, whose only error in the interpreter (which computes
// ex2 and lg2 exactly) is that of the lowering around the approximation.
func TestAccuracy32(t *testing.T) {
	for _, s := range specs {
		t.Run(s.fn.String(), func(t *testing.T) {
			t.Parallel()
			for _, fast := range []bool{false, true} {
				if fast && Native(s.fn, ir.F32, true) {
					continue
				}
				f := lowered(t, s.fn, ir.F32, fast)
				typ := "f32"
				if fast {
					typ = "f32 fast"
				}
				for ri, rg := range s.ranges32 {
					xs, ys := inputs(s, ri+100, rg)
					// Inputs at float32 precision.
					for i := range xs {
						xs[i], ys[i] = float64(float32(xs[i])), float64(float32(ys[i]))
					}
					got := run(t, f, ir.F32, xs, ys)
					res := result{fn: s.fn, typ: typ, rng: rg.name, n: len(xs)}
					for i := range xs {
						x, y := xs[i], ys[i]
						want := s.goRef(x, y)
						e := ulpErr64(got[i], want, true)
						bound := 0.5 + 1e-6 // one rounding of a float64 an ulp or so off
						if fast {
							bound = fastBound(s.fn, x, y, want)
						}
						if !(e <= bound) && !fast {
							// Go's math (Pow above all) may be off by enough
							// to matter: ask the exact reference.
							e = ulpErr(got[i], s.bigRef(x, y), true)
						}
						if e > bound || e != e {
							t.Errorf("%s %s %s: x=%v y=%v: %v, want %v (%.3g ulp, bound %.3g)", s.fn, typ, rg.name, x, y, got[i], want, e, bound)
							break
						}
						if e > res.maxGo {
							res.maxGo, res.xGo, res.yGo = e, x, y
						}
					}
					record(res)
				}
				checkSpecials(t, f, ir.F32, s, fast)
			}
		})
	}
}

// fastBound is the error the fast float32 lowering may add (in float32
// ulps), as CUDA documents for __expf and friends: exp(x) = exp2(x·log2 e)
// with the product rounded to float32 has a relative error of about
// |x|·2^-24, so up to 2|x| ulps; log(x) = log2(x)·ln 2 rounds twice; pow
// is exp2(y·log2 x) with the product's rounding error times y·log2 x.
func fastBound(fn ir.MathFn, x, y, want float64) float64 {
	switch fn {
	case ir.Exp:
		return 1.5 + 2*math.Abs(x)
	case ir.Log:
		return 2
	case ir.Pow:
		if want == 0 || math.IsInf(want, 0) {
			return inf // near underflow or overflow the fast path may round either way
		}
		return 2 + 3*math.Abs(y*math.Log2(math.Abs(x)))
	}
	return 0
}

func inputs(s fnSpec, ri int, rg inputRange) (xs, ys []float64) {
	list := rg.list
	if rg.name == "hardest cases" {
		list = trigHard()
	}
	if list != nil {
		return append([]float64(nil), list...), make([]float64, len(list))
	}
	goN, _ := points()
	r := rand.New(rand.NewPCG(uint64(s.fn), uint64(ri)))
	xs, ys = make([]float64, goN), make([]float64, goN)
	for i := range xs {
		xs[i], ys[i] = rg.gen(r)
	}
	return xs, ys
}

// checkSpecials compares the special values with Go's math (at the
// type's precision) bit for bit where the result is special too (NaN, an
// infinity, a zero, ±1: NaN matches any NaN), and with the exact reference
// to within an ulp where it is an ordinary number (pow(3, 0.5), log of a
// subnormal, where Go's math on amd64 is wrong), or within fastBound for
// the fast float32 functions.
func checkSpecials(t *testing.T, f *ir.Func, typ ir.Type, s fnSpec, fast bool) {
	t.Helper()
	xs, ys := make([]float64, len(s.specials)), make([]float64, len(s.specials))
	for i, p := range s.specials {
		xs[i], ys[i] = p[0], p[1]
		if typ == ir.F32 {
			xs[i], ys[i] = float64(float32(p[0])), float64(float32(p[1]))
		}
	}
	got := run(t, f, typ, xs, ys)
	for i := range xs {
		x, y := xs[i], ys[i]
		want := s.goRef(x, y)
		if typ == ir.F32 {
			want = float64(float32(want))
		}
		if want != want || math.IsInf(want, 0) || want == 0 || math.Abs(want) == 1 {
			if math.Float64bits(got[i]) != math.Float64bits(want) && !(got[i] != got[i] && want != want) {
				t.Errorf("%s %s(%v, %v) = %v, want %v", typ, s.fn, x, y, got[i], want)
			}
			continue
		}
		bound := 1.0
		if fast {
			bound = fastBound(s.fn, x, y, want)
		}
		if e := ulpErr(got[i], s.bigRef(x, y), typ == ir.F32); !(e <= bound) {
			t.Errorf("%s %s(%v, %v) = %v: %.3g ulp from the exact value", typ, s.fn, x, y, got[i], e)
		}
	}
}

func record(r result) {
	resultsMu.Lock()
	results = append(results, r)
	resultsMu.Unlock()
}

// TestReport prints the errors measured (go test -v -run 'Accuracy|Report'),
// after the accuracy tests (it runs last: parallel subtests finish before
// the next top-level test starts).
func TestReport(t *testing.T) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if len(results) == 0 {
		t.Skip("no accuracy results: run with -run 'Accuracy|Report'")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %-9s %-34s %10s %10s  %s\n", "fn", "type", "range", "max ulp", "vs Go", "points (exact ref) [Go wrong]")
	for _, fn := range []ir.MathFn{ir.Exp, ir.Exp2, ir.Log, ir.Log2, ir.Sin, ir.Cos, ir.Tanh, ir.Pow} {
		for _, typ := range []string{"f64", "f32", "f32 fast"} {
			for _, r := range results {
				if r.fn != fn || r.typ != typ {
					continue
				}
				exact := "-"
				if r.nBig > 0 {
					exact = fmt.Sprintf("%.3f", r.maxBig)
				}
				fmt.Fprintf(&b, "%-5s %-9s %-34s %10s %10.3f  %d (%d)", fn, typ, r.rng, exact, r.maxGo, r.n, r.nBig)
				if r.goWrong > 0 {
					fmt.Fprintf(&b, " [%d]", r.goWrong)
				}
				b.WriteString("\n")
			}
		}
	}
	t.Log("\n" + b.String())
}
