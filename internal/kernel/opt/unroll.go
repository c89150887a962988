package opt

import (
	"github.com/goamp/goamp/internal/kernel/ir"
)

// Limits of full unrolling: loops of at most maxTrips iterations whose
// unrolled body stays under maxUnrolled values. The tile loops of the
// textbook kernels (16 or 32 multiply-adds from tile_static memory) fit;
// CUDA C writes #pragma unroll on them.
const (
	maxTrips    = 64
	maxUnrolled = 2048
)

// unroll fully unrolls loops whose trip count is a constant: a header
// block that tests an induction variable (a phi starting at a constant,
// stepped by a constant) against a constant, and a body that is one block
// going back to the header. The unrolled body computes, in order, what the
// loop did; the header's values at the exit are the last copy's.
func unroll(f *ir.Func) bool {
	for _, h := range f.Blocks {
		if tryUnroll(f, h) {
			return true
		}
	}
	return false
}

func tryUnroll(f *ir.Func, h *ir.Block) bool {
	if h.Kind != ir.If || len(h.Preds) != 2 {
		return false
	}
	// The body: the successor that jumps straight back.
	var body, exit *ir.Block
	continueIf := true
	switch {
	case isLatch(h.Succs[0], h):
		body, exit = h.Succs[0], h.Succs[1]
	case isLatch(h.Succs[1], h):
		body, exit, continueIf = h.Succs[1], h.Succs[0], false
	default:
		return false
	}
	if exit == h || exit == body {
		return false
	}
	entryIdx, latchIdx := 0, 1
	if h.Preds[0] == body {
		entryIdx, latchIdx = 1, 0
	}
	if h.Preds[latchIdx] != body || h.Preds[entryIdx] == body {
		return false
	}
	trips, ok := tripCount(h, entryIdx, latchIdx, continueIf)
	if !ok || trips > maxTrips || trips*(len(h.Values)+len(body.Values)) > maxUnrolled {
		return false
	}
	for _, v := range body.Values {
		if v.Op == ir.OpPhi {
			return false
		}
	}

	// Unroll: values of the header (but its phis) and of the body, once an
	// iteration, then the header's once more for the exit.
	cur := map[*ir.Value]*ir.Value{}
	var phis, rest []*ir.Value
	for _, v := range h.Values {
		if v.Op == ir.OpPhi {
			phis = append(phis, v)
			cur[v] = v.Args[entryIdx]
		} else {
			rest = append(rest, v)
		}
	}
	var out []*ir.Value
	clone := func(vs []*ir.Value) {
		for _, v := range vs {
			c := f.NewValue(h, v.Op, v.Type)
			c.Aux, c.Const, c.Space, c.Fast = v.Aux, v.Const, v.Space, v.Fast
			for _, a := range v.Args {
				if m, ok := cur[a]; ok {
					a = m
				}
				c.Args = append(c.Args, a)
			}
			cur[v] = c
			out = append(out, c)
		}
	}
	for range trips {
		clone(rest)
		clone(body.Values)
		next := make([]*ir.Value, len(phis))
		for i, p := range phis {
			a := p.Args[latchIdx]
			if m, ok := cur[a]; ok {
				a = m
			}
			next[i] = a
		}
		for i, p := range phis {
			cur[p] = next[i]
		}
	}
	clone(rest)
	// The originals now stand for their last copies (the header's are what
	// the exit sees; the body's have no uses outside the loop).
	for _, v := range append(append([]*ir.Value(nil), h.Values...), body.Values...) {
		replace(v, cur[v])
	}
	h.Values = out
	removeEdge(body, h)
	removeEdge(h, body)
	h.Kind, h.Cond, h.Succs = ir.Jump, nil, []*ir.Block{exit}
	body.Values, body.Succs, body.Preds, body.Kind = nil, nil, nil, ir.Return
	var keep []*ir.Block
	for _, b := range f.Blocks {
		if b != body {
			keep = append(keep, b)
		}
	}
	f.Blocks = keep
	resolveCopiesEverywhere(f, h)
	return true
}

// isLatch reports whether b is a loop body of one block: reached only
// from h, and jumping back to it.
func isLatch(b, h *ir.Block) bool {
	return b != h && b.Kind == ir.Jump && b.Succs[0] == h && len(b.Preds) == 1 && b.Preds[0] == h
}

// tripCount simulates the header's test on its induction variable: the
// number of times the body runs, if the test compares a phi (constant
// start, constant step in the body) with a constant.
func tripCount(h *ir.Block, entryIdx, latchIdx int, continueIf bool) (int, bool) {
	c := h.Cond
	if !c.Op.IsCompare() || !c.Args[0].Type.IsInt() {
		return 0, false
	}
	iv, bound, op := c.Args[0], c.Args[1], c.Op
	if iv.Op != ir.OpPhi || iv.Block != h {
		iv, bound, op = c.Args[1], c.Args[0], swap(c.Op)
	}
	if iv.Op != ir.OpPhi || iv.Block != h {
		return 0, false
	}
	limit, ok := bound.ConstInt()
	if !ok {
		return 0, false
	}
	start, ok := iv.Args[entryIdx].ConstInt()
	if !ok {
		return 0, false
	}
	step := iv.Args[latchIdx]
	if step.Op != ir.OpAdd && step.Op != ir.OpSub && step.Op != ir.OpMul && step.Op != ir.OpDiv && step.Op != ir.OpShr && step.Op != ir.OpShl {
		return 0, false
	}
	if step.Args[0] != iv {
		return 0, false
	}
	k, ok := step.Args[1].ConstInt()
	if !ok {
		return 0, false
	}
	t := iv.Type
	x := start
	for n := 0; n <= maxTrips; n++ {
		holds := compareInts(op, t, x, limit)
		if holds != continueIf {
			return n, true
		}
		switch step.Op {
		case ir.OpAdd:
			x = wrapInt(t, x+k)
		case ir.OpSub:
			x = wrapInt(t, x-k)
		case ir.OpMul:
			x = wrapInt(t, x*k)
		case ir.OpDiv:
			if k == 0 {
				return 0, false
			}
			if t.IsSigned() {
				x = wrapInt(t, x/k)
			} else {
				x = wrapInt(t, int64(uint64(x)/uint64(k)))
			}
		case ir.OpShr, ir.OpShl:
			if k < 0 || k >= 64 {
				return 0, false
			}
			if step.Op == ir.OpShl {
				x = wrapInt(t, x<<k)
			} else if t.IsSigned() {
				x = wrapInt(t, x>>k)
			} else {
				x = wrapInt(t, int64(uint64(x)>>k))
			}
		}
	}
	return 0, false
}

// wrapInt reduces x to t's width (sign- or zero-extended back to int64).
func wrapInt(t ir.Type, x int64) int64 {
	switch t {
	case ir.I32:
		return int64(int32(x))
	case ir.U32:
		return int64(uint32(x))
	}
	return x
}

func compareInts(op ir.Op, t ir.Type, x, y int64) bool {
	if !t.IsSigned() && t == ir.U64 {
		a, b := uint64(x), uint64(y)
		switch op {
		case ir.OpLt:
			return a < b
		case ir.OpLe:
			return a <= b
		case ir.OpGt:
			return a > b
		case ir.OpGe:
			return a >= b
		case ir.OpEq:
			return a == b
		}
		return a != b
	}
	switch op {
	case ir.OpLt:
		return x < y
	case ir.OpLe:
		return x <= y
	case ir.OpGt:
		return x > y
	case ir.OpGe:
		return x >= y
	case ir.OpEq:
		return x == y
	}
	return x != y
}

// resolveCopiesEverywhere is resolveCopies; h's values are new and hold
// no copies, so the general pass does.
func resolveCopiesEverywhere(f *ir.Func, _ *ir.Block) { resolveCopies(f) }
