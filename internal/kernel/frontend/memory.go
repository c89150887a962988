package frontend

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// layout is how a value of t lies in memory: natural alignment, bool as
// a u32 (the IR never stores predicates).
func (c *compiler) layout(t types.Type, pos token.Pos) layoutShape {
	if st, isBool, ok := scalarType(t); ok {
		if isBool {
			st = ir.U32
		}
		return layoutShape{elem: st, isBool: isBool, size: st.Size(), align: st.Size()}
	}
	switch u := t.Underlying().(type) {
	case *types.Array:
		e := c.layout(u.Elem(), pos)
		return layoutShape{size: e.size * int(u.Len()), align: e.align, fields: []layoutField{{0, e}}, count: int(u.Len())}
	case *types.Struct:
		if c.ampName(t) != "" {
			c.fail(pos, "kernels cannot keep %s in memory (take its address, or put it in an array or struct); use it as a value", typeName(t))
		}
		s := layoutShape{align: 1}
		off := 0
		for i := range u.NumFields() {
			f := c.layout(u.Field(i).Type(), pos)
			off = (off + f.align - 1) / f.align * f.align
			s.fields = append(s.fields, layoutField{off, f})
			off += f.size
			s.align = max(s.align, f.align)
		}
		s.size = (off + s.align - 1) / s.align * s.align
		return s
	}
	c.refuseType(t, pos)
	return layoutShape{}
}

// offset returns addr + k (in the address's type).
func (c *compiler) offset(addr *ir.Value, k int64) *ir.Value {
	if k == 0 {
		return addr
	}
	return c.binop(ir.OpAdd, addr, c.iconst(addr.Type, k))
}

func (c *compiler) alloc(fr *frame, in *ssa.Alloc) value {
	if in.Heap {
		c.refuseHeap(in)
	}
	t := c.resolve(fr, in.Type().(*types.Pointer).Elem())
	if c.ampName(t) != "" {
		return &cellVal{}
	}
	shape := c.layout(t, in.Pos())
	i := c.f.AddLocal(in.Comment, ir.U32, (shape.size+3)/4)
	addr := c.cur.Add(ir.OpLocalAddr, ir.U64)
	addr.Aux = i
	p := &ptrVal{space: ir.Local, addr: addr, shape: shape}
	// Go zeroes a new variable; GPU local memory is not zeroed.
	c.storeZero(p)
	return p
}

func (c *compiler) storeZero(p *ptrVal) {
	if p.shape.elem != ir.Void {
		var z *ir.Value
		if p.shape.elem.IsFloat() {
			z = c.fconst(p.shape.elem, 0)
		} else {
			z = c.iconst(p.shape.elem, 0)
		}
		c.cur.Add(ir.OpStore, ir.Void, p.addr, z).Space = p.space
		return
	}
	for _, f := range c.fieldPtrs(p) {
		c.storeZero(f)
	}
}

// fieldPtrs lists pointers to the fields (or elements) of an aggregate.
func (c *compiler) fieldPtrs(p *ptrVal) []*ptrVal {
	var out []*ptrVal
	if p.shape.count > 0 {
		e := p.shape.fields[0].shape
		for i := range p.shape.count {
			out = append(out, &ptrVal{p.space, c.offset(p.addr, int64(i*e.size)), e})
		}
		return out
	}
	for _, f := range p.shape.fields {
		out = append(out, &ptrVal{p.space, c.offset(p.addr, int64(f.off)), f.shape})
	}
	return out
}

func (c *compiler) load(p *ptrVal) value {
	if p.shape.elem != ir.Void {
		v := c.cur.Add(ir.OpLoad, p.shape.elem, p.addr)
		v.Space = p.space
		if p.shape.isBool {
			return c.cmp(ir.OpNe, v, c.iconst(ir.U32, 0))
		}
		return v
	}
	a := &aggVal{}
	for _, f := range c.fieldPtrs(p) {
		a.f = append(a.f, c.load(f))
	}
	return a
}

func (c *compiler) storeTo(p *ptrVal, v value, pos token.Pos) {
	if p.shape.elem != ir.Void {
		x, ok := v.(*ir.Value)
		if !ok {
			c.fail(pos, "storing a non-scalar where a scalar belongs")
		}
		if p.shape.isBool {
			x = c.cur.Add(ir.OpSelect, ir.U32, x, c.iconst(ir.U32, 1), c.iconst(ir.U32, 0))
		}
		c.cur.Add(ir.OpStore, ir.Void, p.addr, x).Space = p.space
		return
	}
	a, ok := v.(*aggVal)
	if !ok {
		c.fail(pos, "kernels cannot store this value in memory")
	}
	for i, f := range c.fieldPtrs(p) {
		c.storeTo(f, a.f[i], pos)
	}
}

func (c *compiler) store(fr *frame, in *ssa.Store) {
	switch p := c.value(fr, in.Addr).(type) {
	case *cellVal:
		if p.stored {
			c.fail(in.Pos(), "kernels cannot assign twice to a variable of type %s whose fields are used by address; use a new variable", typeName(in.Val.Type()))
		}
		p.v, p.stored = c.value(fr, in.Val), true
		return
	case *ptrVal:
		c.storeTo(p, c.value(fr, in.Val), in.Pos())
		return
	}
	c.fail(in.Pos(), "kernels can store only to TileStatic elements and local variables (write results with an array view's Set)")
}

func (c *compiler) fieldAddr(fr *frame, in *ssa.FieldAddr) value {
	x := c.value(fr, in.X)
	if cell, ok := x.(*cellVal); ok {
		return &fieldCellVal{cell: cell, t: in.X.Type().(*types.Pointer).Elem(), i: in.Field}
	}
	p, ok := x.(*ptrVal)
	if !ok || p.shape.count > 0 || in.Field >= len(p.shape.fields) {
		c.fail(in.Pos(), "kernels cannot take the address of field %s of %s", fieldName(in.X.Type(), in.Field), typeName(in.X.Type()))
	}
	f := p.shape.fields[in.Field]
	return &ptrVal{p.space, c.offset(p.addr, int64(f.off)), f.shape}
}

func (c *compiler) indexAddr(fr *frame, in *ssa.IndexAddr) value {
	i := c.convert(c.scalar(fr, in.Index), ir.I64)
	switch x := c.value(fr, in.X).(type) {
	case *staticVal:
		ok := c.inRange(i, x.n)
		if k, isConst := ok.ConstInt(); isConst && k == 0 {
			c.fail(in.Pos(), "index out of range of a TileStatic slice of length %d", x.n)
		}
		base := c.cur.Add(ir.OpSharedAddr, ir.U32)
		base.Aux = x.arr
		shape := layoutShape{elem: x.elem, size: x.elem.Size(), align: x.elem.Size()}
		// An index outside the slice is reported and then clamped to 0,
		// so the access stays inside the tile's memory.
		c.reportIf(c.not(ok), ir.StatusStaticBounds, x.call)
		safe := c.selectIndex(ok, i)
		off := c.binop(ir.OpMul, c.convert(safe, ir.U32), c.iconst(ir.U32, int64(x.elem.Size())))
		return &ptrVal{ir.Shared, c.binop(ir.OpAdd, base, off), shape}
	case *ptrVal:
		if x.shape.count == 0 {
			break
		}
		ok := c.inRange(i, int64(x.shape.count))
		c.reportIf(c.not(ok), ir.StatusStaticBounds, 0)
		safe := c.selectIndex(ok, i)
		e := x.shape.fields[0].shape
		off := c.binop(ir.OpMul, c.convert(safe, x.addr.Type), c.iconst(x.addr.Type, int64(e.size)))
		return &ptrVal{x.space, c.binop(ir.OpAdd, x.addr, off), e}
	}
	c.fail(in.Pos(), "kernels can index only TileStatic slices, arrays and array views (with At and Set)")
	return nil
}

// selectIndex is i where ok holds, else 0.
func (c *compiler) selectIndex(ok, i *ir.Value) *ir.Value {
	if k, isConst := ok.ConstInt(); isConst && k != 0 {
		return i
	}
	return c.cur.Add(ir.OpSelect, ir.I64, ok, i, c.iconst(ir.I64, 0))
}

// refuseHeap says why a variable go/ssa put on the heap cannot be in a
// kernel, naming the construct that put it there.
func (c *compiler) refuseHeap(in *ssa.Alloc) {
	for _, r := range *in.Referrers() {
		switch r := r.(type) {
		case *ssa.MakeClosure:
			c.fail(r.Fn.Pos(), "kernels cannot make closures or function values; write a top-level function and call it")
		case *ssa.Slice:
			for _, rr := range *r.Referrers() {
				if call, ok := rr.(*ssa.Call); ok {
					c.fail(call.Pos(), "kernels cannot call variadic functions such as %s", call.Call.Value.Name())
				}
			}
		}
	}
	switch in.Comment {
	case "makeslice":
		c.fail(in.Pos(), "kernels cannot make slices (make or append); use a fixed-size array, amp.TileStatic, or an array view")
	case "slicelit":
		c.fail(in.Pos(), "kernels cannot make slices; use a fixed-size array")
	}
	c.fail(in.Pos(), "variable %s escapes the kernel (its address outlives the call); kernels keep variables local", in.Comment)
}
