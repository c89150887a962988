package irmath

import (
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// pow(x, y) = exp(y·log|x|), with log|x| a double-double (about 2^-64
// relative, see log.go), y·log|x| a double-double from an fma, and exp
// taking that double-double in its reduction: the product's error, at most
// 745·2^-64 absolute where the result is still finite and nonzero,
// becomes the result's relative error, under 0.35 ulp. Sign and special
// cases are selects, in the order Go's math.Pow checks them.
func (g *builder) pow(x, y *ir.Value) *ir.Value {
	ax := g.abs(x)
	lh, ll := g.logDD(ax)
	ph, pe := g.twoProd(y, lh)
	pl := g.fma(y, ll, pe)
	return g.powSpecial(x, y, g.expDD(ph, pl), false)
}

// powSpecial applies pow's sign and special cases, as Go's math.Pow
// documents them, to mag = |x|^y computed for finite nonzero x, y. y = 1/2
// is sqrt(x), correctly rounded (math.Pow does the same; its y = -1/2,
// 1/sqrt(x), would be two roundings, worse than the routine's 0.6 ulp).
// The F32 fast path shares the rest.
func (g *builder) powSpecial(x, y, mag *ir.Value, fast bool) *ir.Value {
	t := x.Type
	c := func(v float64) *ir.Value { return g.fc(t, v) }
	inf, zero, one := c(math.Inf(1)), c(0), c(1)
	ax := g.abs(x)
	yInt := g.eq(g.trunc(y), y) // true for ±Inf, false for NaN
	// y is odd when y/2 is not an integer; y/2 is exact unless y is the
	// smallest subnormal, which is no integer anyway.
	half := g.mul(y, c(0.5))
	yOdd := g.and(yInt, g.ne(g.trunc(half), half))
	negOdd := g.and(g.signBit(x), yOdd)

	// Finite nonzero x: a negative x takes the sign of (-1)^y, or is NaN
	// when y is not an integer.
	r := g.sel(negOdd, g.neg(mag), mag)
	r = g.sel(g.and(g.lt(x, zero), g.not(yInt)), c(math.NaN()), r)
	if !fast {
		r = g.sel(g.eq(y, c(0.5)), g.sqrt(x), r)
	}
	// x = ±0 or ±Inf: 0 or Inf, Inf when exactly one of "x is 0" and
	// "y > 0" holds; signed when x is negative and y an odd integer.
	zi := g.sel(g.xor(g.eq(ax, zero), g.gt(y, zero)), inf, zero)
	zi = g.sel(negOdd, g.neg(zi), zi)
	r = g.sel(g.or(g.eq(ax, zero), g.eq(ax, inf)), zi, r)
	// y = ±Inf: 1 at |x| = 1; else 0 or Inf, 0 when "|x| < 1" and
	// "y > 0" agree.
	yi := g.sel(g.xor(g.lt(ax, one), g.gt(y, zero)), inf, zero)
	yi = g.sel(g.eq(ax, one), one, yi)
	r = g.sel(g.eq(g.abs(y), inf), yi, r)
	r = g.sel(g.or(g.ne(x, x), g.ne(y, y)), c(math.NaN()), r)
	r = g.sel(g.eq(y, one), x, r)
	return g.sel(g.or(g.eq(y, zero), g.eq(x, one)), one, r)
}

// fast32 lowers the F32 Fast functions the hardware lacks onto the ones it
// has (ex2.approx and lg2.approx), as CUDA's fast-math intrinsics do; the
// rest of the F32 Fast functions are native.
func (g *builder) fast32(fn ir.MathFn, args []*ir.Value) *ir.Value {
	x := args[0]
	c := func(v float64) *ir.Value { return g.fc(ir.F32, v) }
	switch fn {
	case ir.Exp:
		return g.math(ir.Exp2, true, g.mul(x, c(math.Log2E)))
	case ir.Log:
		return g.mul(g.math(ir.Log2, true, x), c(math.Ln2))
	case ir.Pow:
		y := args[1]
		mag := g.math(ir.Exp2, true, g.mul(y, g.math(ir.Log2, true, g.abs(x))))
		return g.powSpecial(x, y, mag, true)
	}
	// Not reached: Lower sends only these here.
	panic("irmath: no fast F32 " + fn.String())
}
