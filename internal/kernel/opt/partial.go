package opt

import (
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// unrollBy is how many iterations a loop with a trip count known only at
// run time does a step: enough for the GPU to have four iterations' loads
// in flight at once, as the unrolling nvcc does for CUDA C's loops.
const unrollBy = 4

// unrollPartly unrolls, by unrollBy, each loop `for i := c; i < n; i += s`
// (s a small positive constant, or a value fixed before the loop: the
// grid-stride loop's stride; n the same every iteration) whose body is
// one block: a loop that runs unrollBy iterations a step while
// i + (unrollBy-1)*s < n, then the original loop for what is left. With a
// step fixed only at run time the unrolled loop also requires
// 0 < s <= 2^40 and |n| <= 2^62, so that nothing it computes wraps; if
// that does not hold, the original loop does all the iterations.
func unrollPartly(f *ir.Func) {
	a := analyze(f)
	var heads []*ir.Block
	for _, h := range f.Blocks {
		if partlyUnrollable(a, h) {
			heads = append(heads, h)
		}
	}
	for _, h := range heads {
		unrollLoop(f, h)
	}
	if len(heads) > 0 {
		resolveCopies(f)
	}
}

func partlyUnrollable(a *analysis, h *ir.Block) bool {
	if h.Kind != ir.If || len(h.Preds) != 2 || !isLatch(h.Succs[0], h) || h.Succs[1] == h {
		return false
	}
	body := h.Succs[0]
	if h.Preds[1] != body || h.Preds[0] == body {
		return false
	}
	if (len(h.Values)+len(body.Values))*unrollBy > maxUnrolled {
		return false
	}
	for _, v := range append(append([]*ir.Value(nil), h.Values...), body.Values...) {
		switch v.Op {
		case ir.OpBarrier, ir.OpShuffle:
			return false
		case ir.OpPhi:
			if v.Block == body {
				return false
			}
		}
	}
	ind, ok := induction(h)
	if !ok || ind.n.Block == h || ind.n.Block == body {
		return false
	}
	if ind.s == 0 {
		return true // the unrolled loop tests its own guard (stepGuard)
	}
	// n - (unrollBy-1)*s must not wrap: n's range says so.
	rn := a.rangeOf(ind.n)
	return !rn.full && rn.lo >= math.MinInt32+int64(unrollBy)*ind.s
}

// inductionVar is a loop's test `iv < n` (signed), iv a phi of the header
// stepped in the loop's body by a positive constant s (step is that
// constant) or by a value computed before the loop (step is that value, s
// is 0).
type inductionVar struct {
	iv, n, step *ir.Value
	s           int64
}

// induction recognizes h's induction variable; h's body is h.Succs[0].
func induction(h *ir.Block) (inductionVar, bool) {
	c := h.Cond
	if c.Op != ir.OpLt || !c.Args[0].Type.IsSigned() {
		return inductionVar{}, false
	}
	iv, n := c.Args[0], c.Args[1]
	if iv.Op != ir.OpPhi || iv.Block != h {
		return inductionVar{}, false
	}
	next := iv.Args[1]
	if next.Op != ir.OpAdd || next.Args[0] != iv {
		return inductionVar{}, false
	}
	step := next.Args[1]
	if s, isConst := step.ConstInt(); isConst {
		if s < 1 || s > 64 {
			return inductionVar{}, false
		}
		return inductionVar{iv: iv, n: n, step: step, s: s}, true
	}
	if step.Block == h || step.Block == h.Succs[0] || step.Type != iv.Type || iv.Type != ir.I64 {
		return inductionVar{}, false
	}
	return inductionVar{iv: iv, n: n, step: step}, true
}

// stepGuard computes in b, for a loop whose step is fixed only at run
// time, the condition 0 < s <= 2^40 && -2^62 <= n <= 2^62, under which
// the induction variable neither wraps nor goes down while it is below n.
func stepGuard(b *ir.Block, ind inductionVar) *ir.Value {
	t := ind.iv.Type
	c := b.Add(ir.OpLt, ir.Bool, b.Const(t, 0), ind.step)
	c = b.Add(ir.OpAnd, ir.Bool, c, b.Add(ir.OpLe, ir.Bool, ind.step, b.Const(t, 1<<40)))
	c = b.Add(ir.OpAnd, ir.Bool, c, b.Add(ir.OpLe, ir.Bool, ind.n, b.Const(t, 1<<62)))
	return b.Add(ir.OpAnd, ir.Bool, c, b.Add(ir.OpLe, ir.Bool, b.Const(t, -(1<<62)), ind.n))
}

func unrollLoop(f *ir.Func, h *ir.Block) {
	body := h.Succs[0]
	ind, _ := induction(h)
	iv, n := ind.iv, ind.n
	pre := h.Preds[0]
	h4, b4 := f.NewBlock(), f.NewBlock()
	// pre -> h4 instead of h.
	for i, x := range pre.Succs {
		if x == h {
			pre.Succs[i] = h4
		}
	}
	h4.Preds = []*ir.Block{pre}
	var phis, rest []*ir.Value
	cur := map[*ir.Value]*ir.Value{}
	var q []*ir.Value
	for _, v := range h.Values {
		if v.Op == ir.OpPhi {
			p := h4.AddPhi(v.Type)
			p.Args = []*ir.Value{v.Args[0]}
			phis, q = append(phis, v), append(q, p)
			cur[v] = p
		} else {
			rest = append(rest, v)
		}
	}
	// h4: go on while iv + (unrollBy-1)*s < n, that is iv < n - (unrollBy-1)*s.
	var lim *ir.Value
	if ind.s != 0 {
		lim = h4.Add(ir.OpSub, n.Type, n, h4.Const(n.Type, int64(unrollBy-1)*ind.s))
	} else {
		lim = h4.Add(ir.OpSub, n.Type, n, h4.Add(ir.OpMul, n.Type, ind.step, h4.Const(n.Type, unrollBy-1)))
	}
	var ivq *ir.Value
	for i, p := range phis {
		if p == iv {
			ivq = q[i]
		}
	}
	c4 := h4.Add(ir.OpLt, ir.Bool, ivq, lim)
	if ind.s == 0 {
		c4 = h4.Add(ir.OpAnd, ir.Bool, stepGuard(h4, ind), c4)
	}
	h4.SetIf(c4, b4, h)
	// b4: unrollBy copies of the header's computations and the body.
	clone := func(vs []*ir.Value) {
		for _, v := range vs {
			c := b4.Add(v.Op, v.Type)
			c.Aux, c.Const, c.Space, c.Fast = v.Aux, v.Const, v.Space, v.Fast
			for _, x := range v.Args {
				if m, ok := cur[x]; ok {
					x = m
				}
				c.Args = append(c.Args, x)
			}
			cur[v] = c
		}
	}
	for range unrollBy {
		clone(rest)
		clone(body.Values)
		next := make([]*ir.Value, len(phis))
		for i, p := range phis {
			x := p.Args[1]
			if m, ok := cur[x]; ok {
				x = m
			}
			next[i] = x
		}
		for i, p := range phis {
			cur[p] = next[i]
		}
	}
	b4.SetJump(h4)
	for i, p := range phis {
		q[i].Args = append(q[i].Args, cur[p])
	}
	// The original loop finishes: it is entered from h4 with q's values.
	// h4's SetIf appended h4 to h's preds; the edge from pre goes.
	for i, x := range h.Preds {
		if x == pre {
			h.Preds = append(h.Preds[:i:i], h.Preds[i+1:]...)
			for j, p := range phis {
				p.Args = append(p.Args[:i:i], p.Args[i+1:]...)
				p.Args = append(p.Args, q[j])
			}
			break
		}
	}
}
