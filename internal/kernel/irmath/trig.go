package irmath

import (
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// sin and cos reduce |x| to r = |x| - q·π/2, |r| ≤ π/4 (a hair more when
// rounding picks the farther q), as a double-double rh+rl, and then take
// sin or cos of r by q mod 4 (and sin the sign of x).
//
// Up to cwLimit = 2^30 the reduction is Cody–Waite in three parts,
// π/2 = pio2A + pio2B + pio2C + δ, |δ| < 2^-163: q = round(|x|·2/π) (by an
// fma with the shifter), r1 = fma(-q, pio2A, |x|), exact for the reasons
// given for exp (q·pio2A and |x| are multiples of 2^-52 at |x| ≥ 1, and
// |r1| < 1); q·pio2B as a product and its exact error; q·pio2C rounded.
// The error left is q·(δ + 2^-53·|pio2C|) < 2^30·2^-161 = 2^-131. The
// float64 nearest a multiple of π/2 below 2^30 is 2^-60.5 from it (a
// lower bound from the continued fraction of 2/π, binade by binade:
// TestReductionHardestCase), so the reduced argument is good to 2^-70
// relative: full accuracy.
//
// Above 2^30 (up to the largest float64) the reduction is Payne–Hanek,
// exact integer arithmetic on the bits of 2/π (twoOverPiWords): with
// |x| = m·2^s, m a 53-bit integer, only the bits of 2/π from weight
// 2^(1-s) down matter modulo 4 (higher ones contribute multiples of 4 to
// m·2^s·2/π), and 192 of them, taken with shifts from the table, give
// |x|·2/π mod 4 as a fixed-point number with 126 fraction bits, wrong by
// less than 2^-125. The words are picked with a select chain, the 53×64
// bit products built from 32-bit halves. The fraction, converted exactly
// to a double-double and multiplied by π/2 (pio2A+pio2B), gives r with a
// relative error below 2^-63 even for the hardest case, 2^-60.9 from a
// multiple of π/2 (6381956970095103·2^797): the same accuracy as below
// 2^30. The huge path is a branch (a block of its own); every other input
// takes only the straight-line Cody–Waite code.
//
// Polynomials, on |r| ≤ π/4: the Taylor series of sin to r^17 and of cos
// to r^18. Both series alternate with terms that shrink, so the first
// term left out bounds the truncation error: r^19/19! < 2^-63·|r| (and
// sin r > 0.9·|r| there), r^20/20! < 2^-68 (and cos r > 0.7). The
// coefficients are 1/n! rounded. The sums are arranged
//
//	sin(rh+rl) = rh + (rh³·S(rh²) + rl·(1 - rh²/2))
//	cos(rh+rl) = w + (((1-w) - z/2) - (rh²-z)/2 + z²·C(z) - rh·rl),
//	             z = rh² rounded, w = 1 - z/2
//
// so that the big first term is exact (w and its rounding error too) and
// the rest, at most 0.11 (sin) or 0.02 (cos) of the result, carries the
// rounding errors: about 0.5 ulp plus a few hundredths.

// cwLimit is where the Cody–Waite reduction hands over to Payne–Hanek.
const cwLimit = 0x1p30

// trig returns sin(x), or cos(x) if cos.
func (g *builder) trig(x *ir.Value, cos bool) *ir.Value {
	ax := g.abs(x)
	// Huge and NaN arguments take the Cody–Waite path with 0, which keeps
	// its integer conversion in range; their results are chosen later.
	xc := g.sel(g.le(ax, g.c(cwLimit)), ax, g.c(0))
	t := g.fma(xc, g.c(twoOverPi), g.c(shifter))
	q := g.and(g.bits(t), g.ic(ir.U64, 3))
	nk := g.sub(g.c(shifter), t) // -round(|x|·2/π)
	r1 := g.fma(nk, g.c(pio2A), xc)
	p, pe := g.twoProd(nk, g.c(pio2B))
	rh, e := g.twoSum(r1, p)
	rl := g.add(e, g.fma(nk, g.c(pio2C), pe))
	rh, rl = g.fastTwoSum(rh, rl)

	huge := g.and(g.gt(ax, g.c(cwLimit)), g.lt(ax, g.c(math.Inf(1))))
	_, join := g.branch(huge, "irmath: Payne-Hanek reduction of a huge sin/cos argument")
	qh, rhh, rlh := g.payneHanek(ax)
	phis := g.merge(join, [2]*ir.Value{q, qh}, [2]*ir.Value{rh, rhh}, [2]*ir.Value{rl, rlh})
	q, rh, rl = phis[0], phis[1], phis[2]

	z, ze := g.twoProd(rh, rh)

	// sin(r) = rh + rh³·S(z) + rl·(1 - z/2), S(z) = -1/3! + z/5! - … + z^7/17!
	sc := make([]float64, 8)
	for i := range sc {
		if i%2 == 0 {
			sc[i] = -invFact[2*i+3]
		} else {
			sc[i] = invFact[2*i+3]
		}
	}
	w := g.fma(g.scale(rl, g.c(-0.5)), z, rl)
	sinr := g.add(rh, g.fma(g.mul(rh, z), g.horner(z, sc...), w))

	// cos(r) = 1 - z/2 + z²·C(z), C(z) = 1/4! - z/6! + … - z^7/18!
	cc := make([]float64, 8)
	for i := range cc {
		if i%2 == 0 {
			cc[i] = invFact[2*i+4]
		} else {
			cc[i] = -invFact[2*i+4]
		}
	}
	hz := g.mul(z, g.c(0.5))
	one := g.c(1)
	cw := g.sub(one, hz)
	tail := g.sub(g.sub(one, cw), hz) // exact: the rounding of 1 - z/2
	tail = g.fma(g.neg(rh), rl, tail) // - rh·rl
	tail = g.fma(ze, g.c(-0.5), tail) // - (rh² - z)/2
	tail = g.fma(g.mul(z, z), g.horner(z, cc...), tail)
	cosr := g.add(cw, tail)

	odd := g.ne(g.and(q, g.ic(ir.U64, 1)), g.ic(ir.U64, 0))
	var v, negate *ir.Value
	two := g.ic(ir.U64, 2)
	if cos {
		v = g.sel(odd, sinr, cosr)
		negate = g.ne(g.and(g.add(q, g.ic(ir.U64, 1)), two), g.ic(ir.U64, 0))
	} else {
		v = g.sel(odd, cosr, sinr)
		negate = g.ne(g.and(q, two), g.ic(ir.U64, 0))
	}
	v = g.sel(negate, g.neg(v), v)
	if !cos {
		v = g.xorSign(v, x)
	}
	return g.sel(g.lt(ax, g.c(math.Inf(1))), v, g.c(math.NaN()))
}

// payneHanek reduces ax, a finite float64 above 2^30, to q = round(ax·2/π)
// mod 4 (U64) and r = ax - q·π/2 (as far as mod 4 goes) as a double-double.
func (g *builder) payneHanek(ax *ir.Value) (q, rh, rl *ir.Value) {
	u64 := func(x uint64) *ir.Value { return g.ic(ir.U64, int64(x)) }
	ix := g.bits(ax)
	// ax = m·2^s, s = exponent field - 1075. In the bit string of
	// twoOverPiWords (word 0 the integer part), the bit of weight 2^-k of
	// 2/π is at position k+63; the bit that lands at weight 2^1 in
	// 2^s·2/π is k = s-1, position p = s+62 = exponent field - 1013, from
	// 40 (at 2^30) to 1033 (at the largest float64).
	m := g.or(g.and(ix, u64(1<<52-1)), u64(1<<52))
	p := g.sub(g.shr(ix, 52), u64(1013))
	d := g.shr(p, 6)
	sh := g.conv(ir.U32, g.and(p, u64(63)))
	rs := g.sub(g.ic(ir.U32, 64), sh) // a shift by 64 gives 0
	var w [4]*ir.Value
	for i := range w {
		w[i] = u64(twoOverPiWords[i])
	}
	for j := 1; j <= 16; j++ {
		at := g.eq(d, u64(uint64(j)))
		for i := range w {
			w[i] = g.sel(at, u64(twoOverPiWords[j+i]), w[i])
		}
	}
	z := func(i int) *ir.Value { return g.or(g.shl(w[i], sh), g.shr(w[i+1], rs)) }
	z0, z1, z2 := z(0), z(1), z(2)
	// m·(z0:z1:z2), fixed point with the binary point 2 bits into z0:
	// hi (weights 2^1 … 2^-62) and lo (2^-63 … 2^-126).
	l1 := g.imul(m, z1)
	lo := g.add(l1, g.mulHi(m, z2))
	carry := g.conv(ir.U64, g.lt(lo, l1))
	hi := g.add(g.add(g.imul(m, z0), g.mulHi(m, z1)), carry)

	// q = round(y) mod 4; f = y - round(y) in [-1/2, 1/2) is the low 62
	// bits of hi as a signed number (·2^-62) plus lo·2^-126.
	q = g.shr(g.add(hi, u64(1<<61)), 62)
	sf := g.shr(g.cast(ir.I64, g.shl(hi, 2)), 2)

	// f as a double-double: a = sf rounded, b = what rounding lost (an
	// integer below 2^9), c and d the two halves of lo, each exact.
	a := g.conv(ir.F64, sf)
	b := g.conv(ir.F64, g.sub(sf, g.conv(ir.I64, a)))
	c := g.conv(ir.F64, g.shr(lo, 11))
	dd := g.conv(ir.F64, g.and(lo, u64(1<<11-1)))
	a = g.mul(a, g.c(0x1p-62)) // exact, as are the next three
	b = g.mul(b, g.c(0x1p-62))
	c = g.mul(c, g.c(0x1p-115))
	dd = g.mul(dd, g.c(0x1p-126))
	// An exact sum keeps every bit that matters when f is tiny (a ≈ 0):
	// then b = 0, and the rounding of the rest is 2^-53 of the low part.
	fh, fl := g.twoSum(a, c)
	fl = g.add(fl, g.add(b, dd))
	fh, fl = g.fastTwoSum(fh, fl)

	// r = f·π/2.
	rh, re := g.twoProd(fh, g.c(pio2A))
	rl = g.fma(fl, g.c(pio2A), g.fma(fh, g.c(pio2B), re))
	rh, rl = g.fastTwoSum(rh, rl)
	return q, rh, rl
}

// mulHi returns the high 64 bits of the 128-bit product of U64 x and y,
// from 32-bit halves (the IR has no mul.hi).
func (g *builder) mulHi(x, y *ir.Value) *ir.Value {
	mask := g.ic(ir.U64, 1<<32-1)
	x0, x1 := g.and(x, mask), g.shr(x, 32)
	y0, y1 := g.and(y, mask), g.shr(y, 32)
	p00, p01 := g.imul(x0, y0), g.imul(x0, y1)
	p10, p11 := g.imul(x1, y0), g.imul(x1, y1)
	// Each of the three terms is below 2^32, so mid cannot overflow.
	mid := g.add(g.add(g.shr(p00, 32), g.and(p01, mask)), g.and(p10, mask))
	return g.add(g.add(p11, g.shr(p01, 32)), g.add(g.shr(p10, 32), g.shr(mid, 32)))
}
