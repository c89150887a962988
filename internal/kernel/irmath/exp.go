package irmath

import (
	"github.com/goamp/goamp/internal/kernel/ir"
)

// exp(x) = 2^k · exp(r), k = round(x/ln 2), |r| ≤ ln(2)/2 + tiny.
//
// Reduction (Cody–Waite with an fma): r1 = fma(-k, ln2Hi, x) is exact.
// k·ln2Hi is a multiple of 2^-53 (ln2Hi's ulp), and so is x when |x| ≥
// 1/2, so their difference, below 1/2 in magnitude, is a multiple of
// 2^-53 with at most 52 significant bits. Below 1/2, k is 0, or ±1 with
// |x| ≥ 0.34, a multiple of 2^-54, and the difference, below 0.36, fits
// in 53 bits. The next part, k·ln2Lo, goes in with TwoSum, so r is a
// double-double rh+rl; what is left out, k·(ln 2 - ln2Hi - ln2Lo) and the
// rounding of k·ln2Lo, is below 2^-97. pow hands in a double-double x,
// whose low part joins rl; rh+rl is then renormalized, as the core's
// correction rl·(1+rh) needs |rl| below rh's last bit.
//
// Polynomial: the Taylor series of exp to degree 13. On |r| ≤ 0.3466 the
// first term left out, r^14/14!, is below 4.1e-18 = 2^-57.7, and the
// series alternates or decreases geometrically beyond it, so the
// truncation error is under 2^-57 relative (exp(r) ≥ 0.7). The
// coefficients are 1/n! rounded (relative error 2^-53 each, on terms
// at most 0.06 of the result).
//
// exp(r) = 1 + r + r²·P(r) is summed as the double-double (1 + rh) +
// (r²P + rl(1+rh)), so the final rounding is the only one that matters:
// the error is about 0.5 ulp plus 2^-56 or so.
//
// Reconstruction: 2^k is built from exponent bits as 2^k1 · 2^k2 with
// k1 = k>>1 and k2 = k-k1, so that both factors are normal floats for any
// k the clamp allows (|x| ≤ 760 gives |k| ≤ 1097); the first product is
// exact, the second rounds once, to +Inf past the largest float64 and
// into the subnormals (or 0) below the smallest normal. A subnormal
// result is rounded twice (exp(r) first), so it can be off by one unit
// of the subnormal's last place.

// expLimit clamps exp's argument: beyond ±760, exp overflows or
// underflows anyway (the thresholds are 709.78 and -745.13), and the clamp
// keeps k, and 2^k1 and 2^k2, in range. A NaN passes through.
const expLimit = 760

// expReduce reduces xh+xl (a double-double, xl possibly a constant 0) to
// k (I64) and rh+rl with xh+xl = k·ln 2 + rh + rl.
func (g *builder) expReduce(xh, xl *ir.Value) (k, rh, rl *ir.Value) {
	lim := g.c(expLimit)
	c := g.sel(g.gt(xh, lim), lim, g.sel(g.lt(xh, g.neg(lim)), g.neg(lim), xh))
	// Once clamped, xl means nothing (and may be NaN if xh was ±Inf).
	xl = g.sel(g.eq(c, xh), xl, g.c(0))
	// The fma rounds x·log2(e) to an integer: the shifter's ulp is 1.
	t := g.fma(c, g.c(log2eHi), g.c(shifter))
	kf := g.sub(t, g.c(shifter))
	k = g.conv(ir.I64, kf)
	nk := g.neg(kf)
	r1 := g.fma(nk, g.c(ln2Hi), c)
	rh, e := g.twoSum(r1, g.mul(nk, g.c(ln2Lo)))
	// xl may be far above rh's last bit (pow's y·log|x| near 700 has one
	// of 1e-13), and expCore wants |rl| ≤ ulp(rh)/2: renormalize.
	rh, rl = g.twoSum(rh, g.add(e, xl))
	return k, rh, rl
}

// expCore returns exp(rh+rl) as a double-double eh+el, for |rh| ≤ 0.35.
func (g *builder) expCore(rh, rl *ir.Value) (eh, el *ir.Value) {
	c := make([]float64, 12)
	for i := range c {
		c[i] = invFact[i+2] // P(r) = 1/2! + r/3! + … + r^11/13!
	}
	p := g.horner(rh, c...)
	u := g.mul(rh, rh)
	// rl·exp(rh) ≈ rl·(1+rh): the rest, rl·rh²/2, is below 2^-57 of rl.
	w := g.fma(rl, rh, rl)
	s := g.fma(u, p, w)
	one := g.c(1)
	hi, lo := g.fastTwoSum(one, rh)
	return g.fastTwoSum(hi, g.add(lo, s))
}

// ldexp returns y·2^k for an I64 k with |k| ≤ 2046, rounding once. The
// last product is an fma like mul's: it is the routine's result, which
// the kernel may add to something, and ptxas must not fuse into that.
func (g *builder) ldexp(y, k *ir.Value) *ir.Value {
	k1 := g.shr(k, 1) // arithmetic: floor(k/2)
	k2 := g.sub(k, k1)
	return g.mul(g.scale(y, g.pow2(k1)), g.pow2(k2))
}

// expDD returns exp(xh+xl) rounded.
func (g *builder) expDD(xh, xl *ir.Value) *ir.Value {
	k, rh, rl := g.expReduce(xh, xl)
	eh, _ := g.expCore(rh, rl)
	return g.ldexp(eh, k)
}

func (g *builder) exp(x *ir.Value) *ir.Value { return g.expDD(x, g.c(0)) }

// exp2(x) = 2^k · exp(f·ln 2), k = round(x), f = x-k exact (|f| ≤ 1/2),
// f·ln 2 as a double-double: fh = f·ln2Hi rounded, with its exact error
// from an fma and f·ln2Lo added to it.
func (g *builder) exp2(x *ir.Value) *ir.Value {
	const lim = 1100 // 2^±1100 overflows or underflows; keeps |k| ≤ 2046
	c := g.sel(g.gt(x, g.c(lim)), g.c(lim), g.sel(g.lt(x, g.c(-lim)), g.c(-lim), x))
	kf := g.sub(g.add(c, g.c(shifter)), g.c(shifter))
	k := g.conv(ir.I64, kf)
	f := g.sub(c, kf)
	rh, e := g.twoProd(f, g.c(ln2Hi))
	rl := g.fma(f, g.c(ln2Lo), e)
	eh, _ := g.expCore(rh, rl)
	return g.ldexp(eh, k)
}
