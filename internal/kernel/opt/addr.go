package opt

import (
	"slices"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// splitAddresses writes each memory access's address as a base plus a
// constant offset, the base shared by the accesses of a block that differ
// only by a constant: tile_static element [row*tile + i] of an unrolled
// loop is at (array + row*tile*size) + i*size, one register plus the
// offset that the back end's compiler folds into the load instruction
// ([r+imm]), where (row*tile + i)*size + array would take an addition per
// load. The arithmetic is that of the address's own width, wrapping as
// it does, so the address is the same however it is grouped.
func splitAddresses(f *ir.Func) {
	changed := false
	for _, b := range f.Blocks {
		s := &addrSplitter{f: f, b: b, forms: map[formKey]*lin{}, bases: map[string]*ir.Value{},
			canon: map[[2]int]*ir.Value{}, uses: map[string]int{}}
		var addrs []*ir.Value
		for _, v := range b.Values {
			if v.Op != ir.OpLoad && v.Op != ir.OpStore && v.Op != ir.OpAtomic {
				continue
			}
			if v.Space != ir.Shared && v.Space != ir.Global {
				continue
			}
			a := v.Args[0]
			if a.Op == ir.OpSelect { // an access whose check was not proven
				a = a.Args[1]
			}
			if a.Block == b && a.Type.IsInt() && !slices.Contains(addrs, a) {
				addrs = append(addrs, a)
				s.uses[s.baseKey(a)]++
			}
		}
		// In block order: a base is made just before the first address
		// that uses it, which must come before the others.
		slices.SortFunc(addrs, func(x, y *ir.Value) int { return slices.Index(b.Values, x) - slices.Index(b.Values, y) })
		for _, a := range addrs {
			if s.split(a) {
				changed = true
			}
		}
	}
	if changed {
		resolveCopies(f)
		deadCode(f)
	}
}

type addrSplitter struct {
	f     *ir.Func
	b     *ir.Block
	forms map[formKey]*lin
	bases map[string]*ir.Value // by the base's terms and type
	// canon holds the block's one copy of each operand-less value (an
	// array's address, a parameter, a special register), which the front
	// end repeats at each use: bases made of them are the same base.
	canon map[[2]int]*ir.Value
	uses  map[string]int // how many of the block's addresses have each base
}

// baseKey names the base of address a: its terms and type.
func (s *addrSplitter) baseKey(a *ir.Value) string {
	return lin{terms: s.form(a, a.Type).terms}.key() + "|" + a.Type.String()
}

// canonical is v, or for an operand-less value the block's one copy of it,
// placed first in the block.
func (s *addrSplitter) canonical(v *ir.Value) *ir.Value {
	switch v.Op {
	case ir.OpSharedAddr, ir.OpLocalAddr, ir.OpParam, ir.OpSpecial:
	default:
		return v
	}
	k := [2]int{int(v.Op), v.Aux}
	if c, ok := s.canon[k]; ok && c.Type == v.Type {
		return c
	}
	c := s.f.NewValue(s.b, v.Op, v.Type)
	c.Aux = v.Aux
	s.b.Values = slices.Insert(s.b.Values, 0, c)
	if s.b.Values[1].Op == ir.OpPhi {
		// Phis come first: put it after them.
		s.b.Values = s.b.Values[1:]
		i := 0
		for i < len(s.b.Values) && s.b.Values[i].Op == ir.OpPhi {
			i++
		}
		s.b.Values = slices.Insert(s.b.Values, i, c)
	}
	s.canon[k] = c
	return c
}

type formKey struct {
	v     *ir.Value
	width int
}

// sameWidth reports whether t is an integer of the address type at's width.
func sameWidth(t, at ir.Type) bool {
	return t.IsInt() && t.Size() == at.Size()
}

// form is v as a linear combination of opaque values, in v's width.
func (s *addrSplitter) form(v *ir.Value, at ir.Type) *lin {
	if l, ok := s.forms[formKey{v, at.Size()}]; ok {
		return l
	}
	var l lin
	switch {
	case v.Op == ir.OpConst:
		k, _ := v.ConstInt()
		l = constLin(k)
	case v.Op == ir.OpAdd || v.Op == ir.OpSub:
		x, y := s.form(v.Args[0], at), s.form(v.Args[1], at)
		sign := int64(1)
		if v.Op == ir.OpSub {
			sign = -1
		}
		l = x.add(*y, sign)
	case v.Op == ir.OpMul && (v.Args[1].Op == ir.OpConst || v.Args[0].Op == ir.OpConst):
		x, k := v.Args[0], v.Args[1]
		if x.Op == ir.OpConst {
			x, k = k, x
		}
		c, _ := k.ConstInt()
		l = s.form(x, at).scale(c)
	case v.Op == ir.OpShl && v.Args[1].Op == ir.OpConst:
		c, _ := v.Args[1].ConstInt()
		if c >= 0 && c < int64(8*at.Size()) && c < 62 {
			l = s.form(v.Args[0], at).scale(1 << c)
		} else {
			l = lin{terms: map[*ir.Value]int64{v: 1}}
		}
	case (v.Op == ir.OpConvert || v.Op == ir.OpBitcast) && sameWidth(v.Args[0].Type, at):
		l = *s.form(v.Args[0], at)
	default:
		l = lin{terms: map[*ir.Value]int64{s.canonical(v): 1}}
	}
	if !sameWidth(v.Type, at) {
		l = lin{terms: map[*ir.Value]int64{v: 1}}
	}
	s.forms[formKey{v, at.Size()}] = &l
	return &l
}

// split rewrites address a as base + constant where that helps: a has a
// base of more than one value, and a constant part or a base another
// address of the block shares.
func (s *addrSplitter) split(a *ir.Value) bool {
	l := s.form(a, a.Type)
	if len(l.terms) == 0 || (l.k == 0 && s.uses[s.baseKey(a)] < 2) {
		return false
	}
	if len(l.terms) == 1 && l.k == 0 {
		return false // a is its one term, or a multiple of it
	}
	// Already base + constant with a base that is one value.
	if a.Op == ir.OpAdd && (a.Args[1].Op == ir.OpConst || a.Args[0].Op == ir.OpConst) {
		x := a.Args[0]
		if x.Op == ir.OpConst {
			x = a.Args[1]
		}
		if xl := s.form(x, a.Type); len(xl.terms) == 1 && xl.k == 0 {
			for _, c := range xl.terms {
				if c == 1 {
					return false
				}
			}
		}
	}
	key := s.baseKey(a)
	base, ok := s.bases[key]
	if !ok {
		base = s.materialize(lin{terms: l.terms}, a.Type, a)
		s.bases[key] = base
	}
	if l.k == 0 {
		replace(a, base)
		return true
	}
	off := s.f.NewValue(s.b, ir.OpConst, a.Type)
	off.Const = uint64(l.k)
	if a.Type.Size() == 4 {
		off.Const = uint64(uint32(l.k))
	}
	insertBefore(a, off)
	a.Op, a.Aux, a.Const, a.Args = ir.OpAdd, 0, 0, []*ir.Value{base, off}
	return true
}

// materialize computes l in type t just before value at.
func (s *addrSplitter) materialize(l lin, t ir.Type, at *ir.Value) *ir.Value {
	add := func(op ir.Op, args ...*ir.Value) *ir.Value {
		v := s.f.NewValue(s.b, op, t, args...)
		insertBefore(at, v)
		return v
	}
	konst := func(c int64) *ir.Value {
		v := s.f.NewValue(s.b, ir.OpConst, t)
		v.Const = uint64(c)
		if t.Size() == 4 {
			v.Const = uint64(uint32(c))
		}
		insertBefore(at, v)
		return v
	}
	terms := make([]*ir.Value, 0, len(l.terms))
	for v := range l.terms {
		terms = append(terms, v)
	}
	slices.SortFunc(terms, func(a, b *ir.Value) int { return a.ID - b.ID })
	var sum *ir.Value
	for _, v := range terms {
		x := v
		if x.Type != t {
			x = add(ir.OpConvert, x)
		}
		if c := l.terms[v]; c != 1 {
			x = add(ir.OpMul, x, konst(c))
		}
		if sum == nil {
			sum = x
		} else {
			sum = add(ir.OpAdd, sum, x)
		}
	}
	return sum
}
