package opt

import (
	"math/bits"
	"slices"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// foldCompares turns the integer comparisons the analysis decides into
// constants, and folds Select, And, Or and Not of constants. A division or
// remainder of a value the analysis proves not negative by a power of two
// becomes a shift or a mask (a 64-bit division is a long subroutine on a
// GPU; `half /= 2` of a reduction's loop is a shift in CUDA C's unsigned
// arithmetic).
func foldCompares(f *ir.Func) {
	a := analyze(f)
	for _, b := range f.Blocks {
		for _, v := range slices.Clone(b.Values) {
			if v.Op.IsCompare() {
				if r, ok := a.decide(v); ok {
					makeConst(v, r)
				}
			}
			if (v.Op == ir.OpDiv || v.Op == ir.OpRem) && v.Type.IsInt() {
				divideByShifting(a, v)
			}
		}
	}
	foldBools(f)
}

// divideByShifting rewrites x / 2^k as x >> k and x % 2^k as x & (2^k-1)
// where x >= 0.
func divideByShifting(a *analysis, v *ir.Value) {
	d, ok := v.Args[1].ConstInt()
	if !ok || d < 2 || d&(d-1) != 0 {
		return
	}
	if r := a.rangeAt(v.Args[0], v.Block); v.Type.IsSigned() && (r.full || r.lo < 0) {
		return
	}
	k := int64(bits.TrailingZeros64(uint64(d)))
	c := v.Block.Func.NewValue(v.Block, ir.OpConst, ir.U32)
	c.Const = uint64(k)
	if v.Op == ir.OpRem {
		c.Type = v.Type
		c.Const = uint64(d - 1)
		if v.Type.Size() == 4 {
			c.Const = uint64(uint32(d - 1))
		}
		v.Op = ir.OpAnd
	} else {
		v.Op = ir.OpShr
	}
	insertBefore(v, c)
	v.Args = []*ir.Value{v.Args[0], c}
}

func makeConst(v *ir.Value, b bool) {
	v.Op, v.Args, v.Const = ir.OpConst, nil, 0
	if b {
		v.Const = 1
	}
}

func boolConst(v *ir.Value) (bool, bool) {
	if v.Op == ir.OpConst && v.Type == ir.Bool {
		return v.Const != 0, true
	}
	return false, false
}

// foldBools simplifies boolean operations and selects with constant
// operands, in block order (operands come first), repeating until stable.
func foldBools(f *ir.Func) {
	for changed := true; changed; {
		changed = false
		for _, b := range f.Blocks {
			for _, v := range b.Values {
				// Look through the copies folding leaves, so that a
				// constant a fold produced folds its users in turn.
				for i, x := range v.Args {
					v.Args[i] = copied(x)
				}
				if foldBool(v) {
					changed = true
				}
			}
		}
	}
}

func foldBool(v *ir.Value) bool {
	if foldInt(v) {
		return true
	}
	switch v.Op {
	case ir.OpNot:
		if v.Type == ir.Bool {
			if x, ok := boolConst(v.Args[0]); ok {
				makeConst(v, !x)
				return true
			}
		}
	case ir.OpAnd, ir.OpOr:
		if v.Type != ir.Bool {
			return false
		}
		x, okx := boolConst(v.Args[0])
		y, oky := boolConst(v.Args[1])
		and := v.Op == ir.OpAnd
		switch {
		case okx && oky:
			if and {
				makeConst(v, x && y)
			} else {
				makeConst(v, x || y)
			}
			return true
		case okx && x == and: // true && y, false || y
			replace(v, v.Args[1])
			return true
		case oky && y == and:
			replace(v, v.Args[0])
			return true
		case okx && x != and: // false && y, true || y
			makeConst(v, x)
			return true
		case oky && y != and:
			makeConst(v, y)
			return true
		}
	case ir.OpMax:
		// max(x, 0) of an unsigned x is x (the fault word, once its
		// checks are proven).
		if v.Type == ir.U32 || v.Type == ir.U64 {
			for i, a := range v.Args {
				if k, ok := a.ConstInt(); ok && k == 0 {
					replace(v, v.Args[1-i])
					return true
				}
			}
		}
	case ir.OpSelect:
		if c, ok := boolConst(v.Args[0]); ok {
			if c {
				replace(v, v.Args[1])
			} else {
				replace(v, v.Args[2])
			}
			return true
		}
	}
	return false
}

// replace makes v a copy of x: a value that computes nothing, which
// resolve looks through. Uses are redirected by resolveCopies.
func replace(v, x *ir.Value) {
	v.Op, v.Args, v.Aux = opCopy, []*ir.Value{x}, 0
}

// opCopy marks a value replaced by its single operand; no value keeps it
// after resolveCopies.
const opCopy = ir.Op(255)

// resolveCopies points every use of a copy at what it copies, and drops
// the copies.
func resolveCopies(f *ir.Func) {
	target := func(v *ir.Value) *ir.Value {
		for v.Op == opCopy {
			v = v.Args[0]
		}
		return v
	}
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			for i, x := range v.Args {
				v.Args[i] = target(x)
			}
		}
		if b.Cond != nil {
			b.Cond = target(b.Cond)
		}
	}
	for _, b := range f.Blocks {
		keep := b.Values[:0]
		for _, v := range b.Values {
			if v.Op != opCopy {
				keep = append(keep, v)
			}
		}
		b.Values = keep
	}
}

// simplifyCFG turns branches on constants into jumps, drops unreachable
// blocks (and their phi arguments), and merges straight-line blocks.
func simplifyCFG(f *ir.Func) {
	resolveCopies(f)
	for _, b := range f.Blocks {
		if b.Kind != ir.If {
			continue
		}
		c, ok := boolConst(b.Cond)
		if !ok && b.Succs[0] != b.Succs[1] {
			continue
		}
		keep, drop := b.Succs[0], b.Succs[1]
		if ok && !c {
			keep, drop = drop, keep
		}
		if keep != drop {
			removeEdge(b, drop)
		} else {
			// Both edges to one block: keep one, and the phi arguments of the first.
			removeEdgeAt(b, drop, lastIndex(drop.Preds, b))
		}
		b.Kind, b.Cond, b.Succs = ir.Jump, nil, []*ir.Block{keep}
	}
	removeUnreachable(f)
	mergeBlocks(f)
}

func lastIndex(bs []*ir.Block, b *ir.Block) int {
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i] == b {
			return i
		}
	}
	return -1
}

// removeEdge removes pred from to's predecessors, with the matching phi
// arguments.
func removeEdge(pred, to *ir.Block) {
	removeEdgeAt(pred, to, lastIndex(to.Preds, pred))
}

func removeEdgeAt(pred, to *ir.Block, i int) {
	if i < 0 {
		return
	}
	to.Preds = append(to.Preds[:i:i], to.Preds[i+1:]...)
	for _, v := range to.Values {
		if v.Op == ir.OpPhi {
			v.Args = append(v.Args[:i:i], v.Args[i+1:]...)
		}
	}
}

func removeUnreachable(f *ir.Func) {
	live := map[*ir.Block]bool{}
	for _, b := range f.ReversePostorder() {
		live[b] = true
	}
	var keep []*ir.Block
	for _, b := range f.Blocks {
		if live[b] {
			keep = append(keep, b)
			continue
		}
		for _, s := range b.Succs {
			if live[s] {
				removeEdge(b, s)
			}
		}
	}
	f.Blocks = keep
	// A phi left with one argument is that argument.
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if v.Op == ir.OpPhi && len(v.Args) == 1 {
				replace(v, v.Args[0])
			}
		}
	}
	resolveCopies(f)
}

// mergeBlocks joins b and its only successor s when s has no other
// predecessor: s's values and terminator move into b.
func mergeBlocks(f *ir.Func) {
	for changed := true; changed; {
		changed = false
		for _, b := range f.Blocks {
			if b.Kind != ir.Jump {
				continue
			}
			s := b.Succs[0]
			if s == b || len(s.Preds) != 1 || s == f.Blocks[0] {
				continue
			}
			for _, v := range s.Values {
				v.Block = b
				if v.Op == ir.OpPhi { // one predecessor: the phi is its argument
					replace(v, v.Args[0])
				}
			}
			b.Values = append(b.Values, s.Values...)
			b.Kind, b.Cond, b.Succs = s.Kind, s.Cond, s.Succs
			if b.Comment == "" {
				b.Comment = s.Comment
			}
			for _, t := range s.Succs {
				for i, p := range t.Preds {
					if p == s {
						t.Preds[i] = b
					}
				}
			}
			s.Values, s.Succs, s.Preds, s.Kind = nil, nil, nil, ir.Return
			var keep []*ir.Block
			for _, x := range f.Blocks {
				if x != s {
					keep = append(keep, x)
				}
			}
			f.Blocks = keep
			changed = true
			break
		}
	}
	resolveCopies(f)
}

// narrow does in 32 bits the 64-bit integer arithmetic whose result is
// only used truncated to 32 bits: a conversion to a 32-bit type of an
// add, sub, mul, and, or, xor or shl becomes the same operation on the
// operands converted to 32 bits (arithmetic modulo 2^32 agrees with
// arithmetic modulo 2^64 on the low 32 bits), and the conversion of a
// value widened from 32 bits is the value itself.
func narrow(f *ir.Func) {
	for _, b := range f.Blocks {
		var out []*ir.Value
		// Truncations already made in this block, so that an expression
		// used on many paths is truncated once (not once a path: that
		// grows exponentially).
		memo := map[truncKey]*ir.Value{}
		for _, v := range b.Values {
			if v.Op == ir.OpConvert && v.Type.Size() == 4 && v.Type.IsInt() && v.Args[0].Type.Size() == 8 && v.Args[0].Type.IsInt() {
				pre, r := truncate(f, b, v.Args[0], v.Type, memo)
				out = append(out, pre...)
				replace(v, r)
			}
			out = append(out, v)
		}
		b.Values = out
	}
	resolveCopies(f)
}

// truncate returns x (a 64-bit integer) truncated to the 32-bit type t,
// computed from 32-bit operands where it can be, and the values it made
// (to go before the use, in block b).
type truncKey struct {
	x *ir.Value
	t ir.Type
}

func truncate(f *ir.Func, b *ir.Block, x *ir.Value, t ir.Type, memo map[truncKey]*ir.Value) ([]*ir.Value, *ir.Value) {
	if r, ok := memo[truncKey{x, t}]; ok {
		return nil, r
	}
	pre, r := truncate1(f, b, x, t, memo)
	memo[truncKey{x, t}] = r
	return pre, r
}

func truncate1(f *ir.Func, b *ir.Block, x *ir.Value, t ir.Type, memo map[truncKey]*ir.Value) ([]*ir.Value, *ir.Value) {
	switch x.Op {
	case ir.OpConst:
		k, _ := x.ConstInt()
		c := newValue(f, b, ir.OpConst, t)
		c.Const = uint64(uint32(k))
		return []*ir.Value{c}, c
	case ir.OpConvert, ir.OpBitcast:
		src := x.Args[0]
		if src.Type.Size() == 4 && src.Type.IsInt() {
			if src.Type == t {
				return nil, src
			}
			c := newValue(f, b, ir.OpConvert, t, src)
			return []*ir.Value{c}, c
		}
		if src.Type.Size() == 8 && src.Type.IsInt() {
			// Between 64-bit types the low 32 bits are the source's.
			return truncate(f, b, src, t, memo)
		}
	case ir.OpSelect:
		p1, a := truncate(f, b, x.Args[1], t, memo)
		p2, c := truncate(f, b, x.Args[2], t, memo)
		r := newValue(f, b, ir.OpSelect, t, x.Args[0], a, c)
		return append(append(p1, p2...), r), r
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpAnd, ir.OpOr, ir.OpXor:
		p0, a := truncate(f, b, x.Args[0], t, memo)
		p1, c := truncate(f, b, x.Args[1], t, memo)
		r := newValue(f, b, x.Op, t, a, c)
		return append(append(p0, p1...), r), r
	}
	c := newValue(f, b, ir.OpConvert, t, x)
	return []*ir.Value{c}, c
}

func newValue(f *ir.Func, b *ir.Block, op ir.Op, t ir.Type, args ...*ir.Value) *ir.Value {
	return f.NewValue(b, op, t, args...)
}

// deadCode drops values nothing uses that have no effect.
func deadCode(f *ir.Func) {
	for changed := true; changed; {
		changed = false
		used := map[*ir.Value]bool{}
		for _, b := range f.Blocks {
			for _, v := range b.Values {
				for _, x := range v.Args {
					used[x] = true
				}
			}
			if b.Cond != nil {
				used[b.Cond] = true
			}
		}
		for _, b := range f.Blocks {
			keep := b.Values[:0]
			for _, v := range b.Values {
				if used[v] || hasEffect(v) {
					keep = append(keep, v)
				} else {
					changed = true
				}
			}
			b.Values = keep
		}
	}
}

func hasEffect(v *ir.Value) bool {
	switch v.Op {
	case ir.OpStore, ir.OpAtomic, ir.OpBarrier, ir.OpStatus, ir.OpShuffle:
		return true
	case ir.OpDiv, ir.OpRem:
		return v.Type.IsInt() // the front end guards them, but keep any trap
	}
	return false
}

// foldInt computes integer operations and conversions of constants.
func foldInt(v *ir.Value) bool {
	if !v.Type.IsInt() || len(v.Args) == 0 {
		return false
	}
	var xs []int64
	for _, a := range v.Args {
		if !a.Type.IsInt() {
			return false
		}
		k, ok := a.ConstInt()
		if !ok {
			return false
		}
		xs = append(xs, k)
	}
	var r int64
	t := v.Type
	switch v.Op {
	case ir.OpConvert:
		r = xs[0]
		if v.Args[0].Type == ir.U64 {
			r = int64(uint64(xs[0]))
		}
	case ir.OpAdd:
		r = xs[0] + xs[1]
	case ir.OpSub:
		r = xs[0] - xs[1]
	case ir.OpMul:
		r = xs[0] * xs[1]
	case ir.OpAnd:
		r = xs[0] & xs[1]
	case ir.OpOr:
		r = xs[0] | xs[1]
	case ir.OpXor:
		r = xs[0] ^ xs[1]
	default:
		return false
	}
	r = wrapInt(t, r)
	v.Op, v.Args, v.Aux = ir.OpConst, nil, 0
	switch t {
	case ir.I32, ir.U32:
		v.Const = uint64(uint32(r))
	default:
		v.Const = uint64(r)
	}
	return true
}
