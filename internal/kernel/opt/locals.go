package opt

import (
	"github.com/goamp/goamp/internal/kernel/ir"
)

// forwardLocals keeps one-word local variables (the thread's fault word)
// in registers where it can: within a block, a load after a load or store
// of the same word takes that value, and a store of the value the word
// already holds goes. If what is left is one store of a constant in the
// entry block, every load is that constant. Once the checks of a loop are
// proven, its loads and stores of the fault word go entirely.
func forwardLocals(f *ir.Func) {
	for li, arr := range f.Locals {
		if arr.Len == 1 && scalarLocal(f, li) {
			forwardLocal(f, li)
		}
	}
}

// scalarLocal reports whether local li is only ever a load's or a store's
// address: its address is not stored, compared or offset.
func scalarLocal(f *ir.Func, li int) bool {
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			for i, x := range v.Args {
				if x.Op != ir.OpLocalAddr || x.Aux != li {
					continue
				}
				if i != 0 || (v.Op != ir.OpLoad && v.Op != ir.OpStore) || v.Space != ir.Local {
					return false
				}
			}
		}
		if b.Cond != nil && b.Cond.Op == ir.OpLocalAddr {
			return false
		}
	}
	return true
}

func isLocalAccess(v *ir.Value, li int) bool {
	return (v.Op == ir.OpLoad || v.Op == ir.OpStore) && v.Space == ir.Local &&
		v.Args[0].Op == ir.OpLocalAddr && v.Args[0].Aux == li
}

func forwardLocal(f *ir.Func, li int) {
	changed := false
	for _, b := range f.Blocks {
		var known *ir.Value // what the word holds here, if known
		keep := b.Values[:0]
		for _, v := range b.Values {
			if isLocalAccess(v, li) {
				if v.Op == ir.OpStore {
					v.Args[1] = copied(v.Args[1])
				}
				switch {
				case v.Op == ir.OpLoad && known != nil && known.Type == v.Type:
					replace(v, known)
					changed = true
				case v.Op == ir.OpLoad:
					known = v
				case v.Args[1] == known:
					changed = true
					continue // stores what is there
				default:
					known = v.Args[1]
				}
			}
			keep = append(keep, v)
		}
		b.Values = keep
	}
	if changed {
		resolveCopies(f)
	}
	// One store left, of a constant, first in the entry block: every load
	// reads that constant.
	var store *ir.Value
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if isLocalAccess(v, li) && v.Op == ir.OpStore {
				if store != nil {
					return
				}
				store = v
			}
		}
	}
	if store == nil || store.Block != f.Entry() || store.Args[1].Op != ir.OpConst {
		return
	}
	for _, v := range f.Entry().Values {
		if v == store {
			break
		}
		if isLocalAccess(v, li) {
			return // a load before the store
		}
	}
	k := store.Args[1]
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if isLocalAccess(v, li) && v.Op == ir.OpLoad && v.Type == k.Type {
				replace(v, k)
			}
		}
	}
	resolveCopies(f)
}

// copied is what x copies, x itself if it is not a copy.
func copied(x *ir.Value) *ir.Value {
	for x.Op == opCopy {
		x = x.Args[0]
	}
	return x
}
