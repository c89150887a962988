package opt

import (
	"github.com/goamp/goamp/internal/kernel/ir"
)

// versionLoops gives a loop whose index checks hold for every iteration
// when some condition on values fixed before the loop holds a second copy
// without those checks, and a test before the loop that picks the copy:
// loop versioning. A view index i of a loop `for i := c; i < n; i += s`
// needs checking against the view's extent m in every iteration of the
// original; n <= m, tested once, settles it for all of them.
//
// The loops handled are those unrollPartly handles: a header that tests
// the induction variable, a one-block body, an exit block reached only
// from the header, and a preheader that jumps to it.
func versionLoops(f *ir.Func) {
	a := analyze(f)
	var heads []*ir.Block
	for _, h := range f.Blocks {
		if h.Kind == ir.If && len(h.Preds) == 2 && isLatch(h.Succs[0], h) && h.Preds[1] == h.Succs[0] &&
			h.Preds[0] != h.Succs[0] && h.Preds[0].Kind == ir.Jump && len(h.Succs[1].Preds) == 1 && h.Succs[1] != h {
			if _, ok := induction(h); ok {
				heads = append(heads, h)
			}
		}
	}
	changed := false
	for _, h := range heads {
		if versionLoop(f, a, h) {
			changed = true
		}
	}
	if changed {
		resolveCopies(f)
	}
}

// inLoop reports whether v is computed in the loop of header h.
func inLoop(v *ir.Value, h *ir.Block) bool {
	return v.Block == h || v.Block == h.Succs[0]
}

// precondition returns, computed in block pre, a condition fixed before
// the loop under which check (an integer comparison in the loop's body)
// holds in every iteration; nil if there is none it can find.
func precondition(f *ir.Func, a *analysis, h, pre *ir.Block, check *ir.Value) *ir.Value {
	if check.Op != ir.OpLt || !check.Args[0].Type.IsInt() {
		return nil
	}
	x, y := check.Args[0], check.Args[1]
	body := h.Succs[0]
	// Compare the values under the conversions that keep them (the view
	// checks compare u64 conversions of Go ints).
	xr, yr := a.strip(x, body), a.strip(y, body)
	ind, _ := induction(h)
	if ind.s == 0 && xr.Op == ir.OpConvert && xr.Type == ir.U64 && xr.Args[0].Type == ir.I64 && inLoop(xr.Args[0], h) {
		// A step fixed at run time leaves iv's range unknown, but the
		// copy's guard keeps iv >= 0, and x = iv + d is checked below to
		// be that with d >= 0: the conversion keeps the value there. (A
		// value fixed before the loop keeps its conversion: it may be
		// negative, and its unsigned check fail.)
		xr = xr.Args[0]
	}
	if inLoop(ind.n, h) {
		return nil // the bound is computed in the loop: no test before it can use it
	}
	if inLoop(yr, h) || xr.Type != yr.Type {
		return nil
	}
	// Both sides fixed: the check itself, once, before the loop.
	if !inLoop(xr, h) {
		c := f.NewValue(pre, ir.OpLt, ir.Bool, xr, yr)
		pre.Values = append(pre.Values, c)
		return c
	}
	iv, n := ind.iv, ind.n
	// x is the induction variable plus d (d fixed, 0 <= d <= 1<<20),
	// perhaps converted to a type that keeps its values.
	rx := a.rangeAt(x, body)
	if ind.s == 0 {
		// A step fixed at run time: iv >= 0 throughout when it starts at 0
		// or more and goes up without wrapping, which the copy's guard
		// (stepGuard) makes sure of; x = iv + d with d >= 0 then too.
		rx = a.rangeOf(iv.Args[0])
	}
	base := xr
	var d *ir.Value
	switch {
	case base == iv:
	case base.Op == ir.OpAdd && base.Args[0] == iv && !inLoop(base.Args[1], h):
		d = base.Args[1]
	case base.Op == ir.OpAdd && base.Args[1] == iv && !inLoop(base.Args[0], h):
		d = base.Args[0]
	default:
		return nil
	}
	if rx.full || rx.lo < 0 {
		return nil // an unsigned check also needs x >= 0, which the range says
	}
	if d != nil {
		rd := a.rangeOf(d)
		if rd.full || rd.lo < 0 || rd.hi > 1<<20 {
			return nil
		}
	}
	// In the body iv < n, so x <= n - 1 + d: n + d <= y, that is
	// n <= y - d, settles x < y. y - d cannot wrap: y is at least
	// 0 - 1<<20 by its range.
	ry := a.rangeOf(yr)
	if ry.full || ry.lo < -(1<<40) {
		return nil
	}
	ys := yr
	if ys.Type != iv.Type || n.Type != iv.Type {
		return nil
	}
	lim := ys
	if d != nil {
		lim = f.NewValue(pre, ir.OpSub, ys.Type, ys, d)
		pre.Values = append(pre.Values, lim)
	}
	c := f.NewValue(pre, ir.OpLe, ir.Bool, n, lim)
	pre.Values = append(pre.Values, c)
	return c
}

func versionLoop(f *ir.Func, a *analysis, h *ir.Block) bool {
	body, exit, pre := h.Succs[0], h.Succs[1], h.Preds[0]
	// Not a loop with a barrier or a shuffle: the test before it may differ
	// between threads, and threads of a warp must meet at the same
	// bar.sync and shfl.sync instruction, not at copies of it.
	for _, v := range append(append([]*ir.Value(nil), h.Values...), body.Values...) {
		if v.Op == ir.OpBarrier || v.Op == ir.OpShuffle {
			return false
		}
	}
	var checks []*ir.Value
	var conds []*ir.Value
	for _, v := range body.Values {
		if v.Op != ir.OpLt || !v.Args[0].Type.IsInt() {
			continue
		}
		if _, ok := a.decide(v); ok {
			continue
		}
		if c := precondition(f, a, h, pre, v); c != nil {
			checks, conds = append(checks, v), append(conds, c)
		}
	}
	if len(checks) == 0 {
		return false
	}
	all := conds[0]
	for _, c := range conds[1:] {
		all = f.NewValue(pre, ir.OpAnd, ir.Bool, all, c)
		pre.Values = append(pre.Values, all)
	}
	if ind, _ := induction(h); ind.s == 0 {
		all = pre.Add(ir.OpAnd, ir.Bool, all, stepGuard(pre, ind))
	}
	// The copy: header h2 and body b2, the checks true there.
	h2, b2 := f.NewBlock(), f.NewBlock()
	m := map[*ir.Value]*ir.Value{}
	var phis []*ir.Value
	for _, v := range h.Values {
		if v.Op == ir.OpPhi {
			p := h2.AddPhi(v.Type)
			m[v] = p
			phis = append(phis, v)
		}
	}
	copyInto := func(dst *ir.Block, vs []*ir.Value) {
		for _, v := range vs {
			if v.Op == ir.OpPhi {
				continue
			}
			c := dst.Add(v.Op, v.Type)
			c.Aux, c.Const, c.Space, c.Fast = v.Aux, v.Const, v.Space, v.Fast
			for _, x := range v.Args {
				if y, ok := m[x]; ok {
					x = y
				}
				c.Args = append(c.Args, x)
			}
			m[v] = c
		}
	}
	copyInto(h2, h.Values)
	copyInto(b2, body.Values)
	for _, c := range checks {
		makeConst(m[c], true)
	}
	for _, v := range phis {
		// Args in h's order: [from pre, from body].
		back := v.Args[1]
		if y, ok := m[back]; ok {
			back = y
		}
		m[v].Args = []*ir.Value{v.Args[0], back}
	}
	// pre chooses: h2 when every check holds throughout, h (still its
	// successor, with its phi arguments) otherwise.
	pre.Kind, pre.Cond, pre.Succs = ir.If, all, []*ir.Block{h2, h}
	h2.Preds = []*ir.Block{pre}
	b2.SetJump(h2) // h2.Preds: pre, b2, as its phis' arguments
	h2.Kind, h2.Cond, h2.Succs = ir.If, m[h.Cond], []*ir.Block{b2, exit}
	b2.Preds = []*ir.Block{h2}
	exit.Preds = append(exit.Preds, h2)
	joinOutside(f, h, body, h2, b2, exit, m)
	return true
}

// joinOutside: exit's predecessors are now h and its copy. Its own phis
// get the copy's argument, and each value of h used after the loop gets a
// phi in exit that its outside uses then take.
func joinOutside(f *ir.Func, h, body, h2, b2, exit *ir.Block, m map[*ir.Value]*ir.Value) {
	mapped := func(x *ir.Value) *ir.Value {
		if y, ok := m[x]; ok {
			return y
		}
		return x
	}
	var old []*ir.Value
	for _, v := range exit.Values {
		if v.Op == ir.OpPhi {
			old = append(old, v)
		}
	}
	for _, v := range old {
		v.Args = append(v.Args, mapped(v.Args[0]))
	}
	isOld := map[*ir.Value]bool{}
	for _, v := range old {
		isOld[v] = true
	}
	joined := map[*ir.Value]*ir.Value{}
	join := func(x *ir.Value) *ir.Value {
		p, ok := joined[x]
		if !ok {
			p = exit.AddPhi(x.Type)
			p.Args = []*ir.Value{x, mapped(x)}
			joined[x] = p
		}
		return p
	}
	type use struct {
		v *ir.Value
		i int
	}
	var uses []use
	var conds []*ir.Block
	for _, b := range f.Blocks {
		if b == h || b == body || b == h2 || b == b2 {
			continue
		}
		for _, v := range b.Values {
			if isOld[v] {
				continue // its argument from h is right as it is
			}
			for i, x := range v.Args {
				if x.Block == h {
					uses = append(uses, use{v, i})
				}
			}
		}
		if b.Cond != nil && b.Cond.Block == h {
			conds = append(conds, b)
		}
	}
	for _, u := range uses {
		u.v.Args[u.i] = join(u.v.Args[u.i])
	}
	for _, b := range conds {
		b.Cond = join(b.Cond)
	}
}
