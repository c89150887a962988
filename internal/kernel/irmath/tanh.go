package irmath

import "github.com/goamp/goamp/internal/kernel/ir"

// tanh(x) = sign(x)·u/(u+2), u = e^(2|x|) - 1, with e^(2|x|) from exp's
// reduction and core as a double-double 2^k·(eh+el), so that u keeps full
// relative accuracy even for tiny |x| (where 2^k = 1 and eh+el = 1 + (a
// double-double near 2|x|)), and the division takes the remainder of
// u/(u+2) into account. Beyond |x| = 22 tanh rounds to ±1 (1 - tanh(22) <
// 2^-62), so |x| is clamped there, which also keeps 2^k small. The error is
// about 0.5 ulp plus the few 2^-60 of the double-double steps.
func (g *builder) tanh(x *ir.Value) *ir.Value {
	ax := g.abs(x)
	a := g.sel(g.gt(ax, g.c(22)), g.c(22), ax)
	k, rh, rl := g.expReduce(g.add(a, a), g.c(0))
	eh, el := g.expCore(rh, rl)
	p := g.pow2(k) // k ≤ 64
	eh, el = g.mul(eh, p), g.mul(el, p)
	// u = E - 1, E ≥ 1.
	uh, ue := g.fastTwoSum(eh, g.c(-1))
	ul := g.add(ue, el)
	uh, ul = g.fastTwoSum(uh, ul)
	// d = u + 2.
	dh, de := g.twoSum(uh, g.c(2))
	dl := g.add(de, ul)
	q := g.div(uh, dh)
	rem := g.add(g.fma(g.neg(q), dh, uh), ul)
	rem = g.fma(g.neg(q), dl, rem)
	t := g.add(q, g.div(rem, dh))
	return g.xorSign(t, x)
}
