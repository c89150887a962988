package opt

import (
	"slices"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// simplifySelects flattens the chains of selects that if-conversion makes
// of nested conditions, so that a load guarded by three conditions picks
// its address once:
//
//	select(c1, select(c2, x, y), y)  =>  select(c1 && c2, x, y)
//	select(c, max(x, w), x)          =>  max(x, select(c, w, 0))   (unsigned)
//
// The second is the fault word's update under a condition (max(x, 0) is x
// for an unsigned x); it lets the first apply to the update's chain too.
func simplifySelects(f *ir.Func) bool {
	changed := false
	for _, b := range f.Blocks {
		for _, v := range slices.Clone(b.Values) {
			for simplifySelect(f, v) {
				changed = true
			}
		}
	}
	if changed {
		resolveCopies(f)
	}
	return changed
}

func simplifySelect(f *ir.Func, v *ir.Value) bool {
	if v.Op != ir.OpSelect {
		return false
	}
	c, x, y := v.Args[0], copied(v.Args[1]), copied(v.Args[2])
	if equal(x, y) {
		replace(v, x)
		return true // v is a copy now: the next call does nothing
	}
	if x.Op == ir.OpSelect && equal(copied(x.Args[2]), y) {
		and := f.NewValue(v.Block, ir.OpAnd, ir.Bool, c, x.Args[0])
		insertBefore(v, and)
		v.Args = []*ir.Value{and, x.Args[1], y}
		return true
	}
	if (v.Type == ir.U32 || v.Type == ir.U64) && x.Op == ir.OpMax && (copied(x.Args[0]) == y || copied(x.Args[1]) == y) {
		w := x.Args[0]
		if copied(w) == y {
			w = x.Args[1]
		}
		zero := f.NewValue(v.Block, ir.OpConst, v.Type)
		insertBefore(v, zero)
		sel := f.NewValue(v.Block, ir.OpSelect, v.Type, c, w, zero)
		insertBefore(v, sel)
		v.Op, v.Args = ir.OpMax, []*ir.Value{y, sel}
		simplifySelect(f, sel)
		return false
	}
	return false
}

// equal reports whether x and y are the same value or equal constants.
func equal(x, y *ir.Value) bool {
	return x == y || (x.Op == ir.OpConst && y.Op == ir.OpConst && x.Type == y.Type && x.Const == y.Const)
}
