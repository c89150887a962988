package opt

import (
	"github.com/goamp/goamp/internal/kernel/ir"
)

// maxIfConverted is the most values a branch may hold to be turned into
// straight-line code: a conditional load of a tile element, not more.
const maxIfConverted = 32

// ifConvert turns small branches (an if, or an if-else, whose arms only
// compute, load, and update local variables) into straight-line code with
// selects, as CUDA C's conditional expressions compile: both arms run,
// the condition picks the results. A load in a converted arm reads a safe
// address when the arm would not have run (the status record, the first
// tile_static array, the local array itself), so no access is made that
// the original would not have made but to memory that is always there;
// a store to a local variable keeps the old value when the arm would not
// have run.
func ifConvert(f *ir.Func) bool {
	changed := false
	for _, a := range f.Blocks {
		if a.Kind == ir.If && convertAt(f, a) {
			changed = true
		}
	}
	if changed {
		resolveCopies(f)
	}
	return changed
}

func convertAt(f *ir.Func, a *ir.Block) bool {
	t, e := a.Succs[0], a.Succs[1]
	var join *ir.Block
	var arms []*ir.Block // arms[i] runs when the condition is (i == 0)
	switch {
	case isArm(t, a) && isArm(e, a) && t.Succs[0] == e.Succs[0]:
		join, arms = t.Succs[0], []*ir.Block{t, e}
	case isArm(t, a) && t.Succs[0] == e:
		join, arms = e, []*ir.Block{t, nil}
	case isArm(e, a) && e.Succs[0] == t:
		join, arms = t, []*ir.Block{nil, e}
	default:
		return false
	}
	if join == a {
		return false
	}
	for _, b := range arms {
		if b != nil && !convertible(b) {
			return false
		}
	}
	safe := safeAddresses(f)
	if safe == nil {
		return false
	}
	cond := a.Cond
	var out []*ir.Value
	for i, b := range arms {
		if b == nil {
			continue
		}
		for _, v := range b.Values {
			v.Block = a
			switch v.Op {
			case ir.OpLoad:
				alt := safe[v.Space]
				var addr *ir.Value
				if i == 0 {
					addr = f.NewValue(a, ir.OpSelect, v.Args[0].Type, cond, v.Args[0], alt)
				} else {
					addr = f.NewValue(a, ir.OpSelect, v.Args[0].Type, cond, alt, v.Args[0])
				}
				if v.Space == ir.Local {
					addr = v.Args[0] // the variable itself is always there
				} else {
					out = append(out, addr)
				}
				v.Args[0] = addr
				out = append(out, v)
			case ir.OpStore: // to a local variable: keep the old value on the other path
				old := f.NewValue(a, ir.OpLoad, v.Args[1].Type, v.Args[0])
				old.Space = ir.Local
				var val *ir.Value
				if i == 0 {
					val = f.NewValue(a, ir.OpSelect, v.Args[1].Type, cond, v.Args[1], old)
				} else {
					val = f.NewValue(a, ir.OpSelect, v.Args[1].Type, cond, old, v.Args[1])
				}
				v.Args[1] = val
				out = append(out, old, val, v)
			default:
				out = append(out, v)
			}
		}
	}
	// The join's phis choose by the condition.
	predOf := func(i int) *ir.Block {
		if arms[i] != nil {
			return arms[i]
		}
		return a
	}
	idx := func(p *ir.Block) int {
		for k, q := range join.Preds {
			if q == p {
				return k
			}
		}
		return -1
	}
	it, ie := idx(predOf(0)), idx(predOf(1))
	if it < 0 || ie < 0 {
		return false
	}
	var sels []*ir.Value
	for _, v := range join.Values {
		if v.Op != ir.OpPhi {
			break
		}
		s := f.NewValue(a, ir.OpSelect, v.Type, cond, v.Args[it], v.Args[ie])
		out = append(out, s)
		sels = append(sels, s)
	}
	a.Values = append(a.Values, out...)
	// Replace the two edges into the join by one from a.
	hi, lo := max(it, ie), min(it, ie)
	for _, k := range []int{hi, lo} {
		join.Preds = append(join.Preds[:k:k], join.Preds[k+1:]...)
	}
	n := 0
	for _, v := range join.Values {
		if v.Op != ir.OpPhi {
			break
		}
		v.Args = append(v.Args[:hi:hi], v.Args[hi+1:]...)
		v.Args = append(v.Args[:lo:lo], v.Args[lo+1:]...)
		v.Args = append(v.Args, sels[n])
		n++
	}
	join.Preds = append(join.Preds, a)
	a.Kind, a.Cond, a.Succs = ir.Jump, nil, []*ir.Block{join}
	var keep []*ir.Block
	for _, b := range f.Blocks {
		if b != arms[0] && b != arms[1] {
			keep = append(keep, b)
		}
	}
	f.Blocks = keep
	for _, b := range arms {
		if b != nil {
			b.Values, b.Preds, b.Succs = nil, nil, nil
		}
	}
	return true
}

// isArm reports whether b is reached only from a and jumps on.
func isArm(b, a *ir.Block) bool {
	return b != a && len(b.Preds) == 1 && b.Preds[0] == a && b.Kind == ir.Jump && b.Succs[0] != b
}

// convertible reports whether b only computes, loads, and stores to
// local scalar variables, and is small.
func convertible(b *ir.Block) bool {
	if len(b.Values) > maxIfConverted {
		return false
	}
	for _, v := range b.Values {
		switch v.Op {
		case ir.OpPhi, ir.OpAtomic, ir.OpBarrier, ir.OpShuffle, ir.OpStatus:
			return false
		case ir.OpStore:
			// Only a local scalar variable: an element of a local array
			// is at a computed address that may be out of range when
			// the arm would not have run.
			if v.Space != ir.Local || v.Args[0].Op != ir.OpLocalAddr {
				return false
			}
		case ir.OpLoad:
			if v.Space == ir.Local && v.Args[0].Op != ir.OpLocalAddr {
				return false
			}
		case ir.OpDiv, ir.OpRem:
			if v.Type.IsInt() {
				return false
			}
		case ir.OpMath:
			// Software math has branches of its own; the hardware
			// instructions are fine to run speculatively.
		}
	}
	return true
}

// safeAddresses gives, for each memory space, an address a converted load
// may read instead: the status record (the kernel's first parameter),
// the first shared array, and, for local loads, the variable itself (nil
// entry). nil if the kernel has no status parameter.
func safeAddresses(f *ir.Func) map[ir.Space]*ir.Value {
	if len(f.Params) == 0 || f.Params[0].Type != ir.U64 {
		return nil
	}
	entry := f.Blocks[0]
	var status *ir.Value
	for _, v := range entry.Values {
		if v.Op == ir.OpParam && v.Aux == 0 {
			status = v
			break
		}
	}
	if status == nil {
		return nil
	}
	m := map[ir.Space]*ir.Value{ir.Global: status}
	if len(f.Shared) > 0 {
		s := entry.Add(ir.OpSharedAddr, ir.U32)
		s.Aux = 0
		m[ir.Shared] = s
	}
	return m
}
