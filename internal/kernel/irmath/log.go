package irmath

import (
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// log(x) = e·ln 2 + log(m), x = m·2^e with m in [√2/2, √2), taken apart
// with integer ops on the bits (subnormals scaled by 2^54 first).
//
// log(m) = log(1+f) = 2·atanh(s), f = m-1 (exact by Sterbenz's lemma),
// s = f/(2+f), |s| ≤ 3-2√2 < 0.1716:
//
//	2·atanh(s) = 2s + 2s³/3 + 2s⁵/5 + … + 2s^27/27 + …
//
// With s² ≤ 0.02944 the first term left out, 2s^29/29, is below 2^-70 of
// 2s, and each further one is 35 times smaller. The terms fall off by a
// factor of 34 or more, so the routine keeps the result as a
// double-double and spends precision only where the terms are large:
// s = sh+sl (the division's remainder, exact with an fma, gives sl), s³
// and its product with 2/3 are double-doubles, and the terms from 2s⁵/5
// on (below 2^-12 of the result) are plain float64 Horner. The error of
// log(m) as a double-double is then about 2^-64 relative, which pow needs:
// y·log(x) may be as large as 745, and its absolute error becomes the
// relative error of the result.
//
// e·ln 2 adds in as e·ln2A (exact: ln2A has 42 bits and |e| < 2^11) plus
// e·ln2B, with TwoSum, which cancels nothing dangerous: for e ≠ 0 the
// result is at least ln(2)/2 in magnitude.

// logParts returns e (as a float64 integer) and L = Lh+Ll = log(m) for
// x = m·2^e as above. x must be positive and finite; other inputs give
// garbage the callers replace.
func (g *builder) logParts(x *ir.Value) (e, lh, ll *ir.Value) {
	sub := g.lt(x, g.c(0x1p-1022))
	xs := g.sel(sub, g.scale(x, g.c(0x1p54)), x)
	bias := g.sel(sub, g.ic(ir.I64, 1023+54), g.ic(ir.I64, 1023))
	ix := g.bits(xs)
	ei := g.sub(g.cast(ir.I64, g.shr(ix, 52)), bias)
	m := g.cast(ir.F64, g.or(g.and(ix, g.ic(ir.U64, 1<<52-1)), g.ic(ir.U64, 1023<<52)))
	big := g.gt(m, g.c(sqrt2))
	m = g.sel(big, g.scale(m, g.c(0.5)), m)
	ei = g.sel(big, g.add(ei, g.ic(ir.I64, 1)), ei)
	e = g.conv(ir.F64, ei)

	one, two := g.c(1), g.c(2)
	f := g.sub(m, one)
	dh, dl := g.fastTwoSum(two, f) // 2+f exactly
	sh := g.div(f, dh)
	// f - sh·dh is exact (the remainder of a correctly rounded division).
	rem := g.fma(g.neg(sh), dh, f)
	rem = g.fma(g.neg(sh), dl, rem)
	sl := g.div(rem, dh)

	// z = s² as zh+zl, zl carrying the cross term 2·sh·sl.
	sh2 := g.add(sh, sh)
	zh, ze := g.twoProd(sh, sh)
	zl := g.fma(sh2, sl, ze)
	// s³ = c3h + c3l.
	c3h, c3e := g.twoProd(zh, sh)
	c3l := g.fma(zl, sh, g.fma(zh, sl, c3e))
	// (2/3)·s³ = t1h + t1l.
	t1h, t1e := g.twoProd(c3h, g.c(twoThirdsHi))
	t1l := g.fma(c3l, g.c(twoThirdsHi), g.fma(c3h, g.c(twoThirdsLo), t1e))
	// s³·(2/5 + 2z/7 + … + 2z^11/27).
	t2 := g.mul(c3h, g.mul(zh, g.horner(zh, atanhCoef[2:]...)))

	// L = 2sh + t1h + (2sl + t1l + t2).
	lh, ll = g.fastTwoSum(sh2, t1h)
	ll = g.add(ll, g.add(g.add(t1l, t2), g.add(sl, sl)))
	return e, lh, ll
}

// logDD returns log(x) as a double-double, for positive finite x.
func (g *builder) logDD(x *ir.Value) (rh, rl *ir.Value) {
	e, lh, ll := g.logParts(x)
	rh, rl = g.twoSum(g.mul(e, g.c(ln2A)), lh)
	rl = g.add(rl, g.fma(e, g.c(ln2B), ll))
	return g.fastTwoSum(rh, rl)
}

// logSpecial gives log and log2 their values outside (0, +Inf): -Inf at
// ±0, +Inf at +Inf, NaN below 0 and at NaN.
func (g *builder) logSpecial(x, r *ir.Value) *ir.Value {
	r = g.sel(g.eq(x, g.c(0)), g.c(math.Inf(-1)), r)
	r = g.sel(g.eq(x, g.c(math.Inf(1))), x, r)
	return g.sel(g.ge(x, g.c(0)), r, g.c(math.NaN()))
}

func (g *builder) log(x *ir.Value) *ir.Value {
	rh, _ := g.logDD(x)
	return g.logSpecial(x, rh)
}

// log2(x) = e + L·log2(e), the product a double-double: e is exact, so
// log2 of a power of two is exact too.
func (g *builder) log2(x *ir.Value) *ir.Value {
	e, lh, ll := g.logParts(x)
	mh, me := g.twoProd(lh, g.c(log2eHi))
	ml := g.fma(ll, g.c(log2eHi), g.fma(lh, g.c(log2eLo), me))
	sh, sl := g.twoSum(e, mh)
	r := g.add(sh, g.add(sl, ml))
	return g.logSpecial(x, r)
}
