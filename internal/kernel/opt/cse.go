package opt

import (
	"github.com/goamp/goamp/internal/kernel/ir"
)

// eliminateCommonSubexpressions makes a computation that repeats one
// made in a dominating block (or earlier in the same block) a copy of it.
// The front end computes `base+col` once for a kernel's own test and once
// for the view index it guards; made one value, the test's fact (base+col
// < k) settles the view's check of the same value.
func eliminateCommonSubexpressions(f *ir.Func) {
	idom := f.Dominators()
	children := map[*ir.Block][]*ir.Block{}
	for _, b := range f.ReversePostorder() {
		if d := idom[b]; d != b {
			children[d] = append(children[d], b)
		}
	}
	type key struct {
		op     ir.Op
		t      ir.Type
		aux    int
		c      uint64
		space  ir.Space
		fast   bool
		a0, a1 *ir.Value
		a2     *ir.Value
		n      int
	}
	avail := map[key]*ir.Value{}
	changed := false
	var walk func(b *ir.Block)
	walk = func(b *ir.Block) {
		var added []key
		for _, v := range b.Values {
			if !pure(v) {
				continue
			}
			k := key{op: v.Op, t: v.Type, aux: v.Aux, c: v.Const, space: v.Space, fast: v.Fast, n: len(v.Args)}
			for i, x := range v.Args {
				x = copied(x)
				switch i {
				case 0:
					k.a0 = x
				case 1:
					k.a1 = x
				case 2:
					k.a2 = x
				}
			}
			if w, ok := avail[k]; ok {
				replace(v, w)
				changed = true
				continue
			}
			avail[k] = v
			added = append(added, k)
		}
		for _, c := range children[b] {
			walk(c)
		}
		for _, k := range added {
			delete(avail, k)
		}
	}
	walk(f.Entry())
	if changed {
		resolveCopies(f)
	}
}

// pure reports whether v computes a value from its operands alone, with
// no effect and no dependence on memory: the same operands give the same
// value wherever it is computed.
func pure(v *ir.Value) bool {
	if len(v.Args) > 3 {
		return false
	}
	switch v.Op {
	case ir.OpConst, ir.OpParam, ir.OpSpecial, ir.OpSharedAddr, ir.OpLocalAddr,
		ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpMin, ir.OpMax, ir.OpAnd, ir.OpOr, ir.OpXor,
		ir.OpShl, ir.OpShr, ir.OpNeg, ir.OpNot, ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe,
		ir.OpConvert, ir.OpBitcast, ir.OpSelect, ir.OpMath:
		return true
	case ir.OpDiv, ir.OpRem:
		return v.Type.IsFloat() // an integer division may trap: each stays where it is
	}
	return false
}
