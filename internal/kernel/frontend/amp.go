package frontend

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// FastMathPath and PreciseMathPath are the packages of the math functions
// kernels call: C++ AMP's fast_math and precise_math.
const (
	FastMathPath    = "github.com/goamp/goamp/amp/fastmath"
	PreciseMathPath = "github.com/goamp/goamp/amp/precisemath"
)

// ampCall compiles a call of one of package amp's functions or methods.
func (c *compiler) ampCall(fr *frame, in *ssa.Call, obj *types.Func, fn *ssa.Function) value {
	args := in.Common().Args
	sig := obj.Type().(*types.Signature)
	arg := func(i int) value { return c.value(fr, args[i]) }
	i64 := func(i int) *ir.Value { return c.convert(c.scalar(fr, args[i]), ir.I64) }
	if sig.Recv() != nil {
		switch c.ampName(sig.Recv().Type()) + "." + obj.Name() {
		case "Index.At":
			return c.component(arg(0).(*indexVal).c[:], arg(0).(*indexVal).rank, i64(1))
		case "Index.Rank":
			return c.iconst(ir.I64, int64(arg(0).(*indexVal).rank))
		case "Index.Add":
			x, y := arg(0).(*indexVal), arg(1).(*indexVal)
			if x.rank != y.rank {
				c.fail(in.Pos(), "adding a rank-%d index to a rank-%d index", y.rank, x.rank)
			}
			out := &indexVal{rank: x.rank}
			for d := range x.rank {
				out.c[d] = c.binop(ir.OpAdd, x.c[d], y.c[d])
			}
			return out
		case "Extent.At":
			e := arg(0).(*extentVal)
			d := i64(1)
			if e.view != nil {
				// Past the view's rank the CPU panics; here the parameter
				// is 1. A fixed d is checked at launch (MinRank), any other
				// here.
				if k, ok := d.ConstInt(); ok && k >= 0 && k < ir.MaxRank {
					e.arg.MinRank = max(e.arg.MinRank, int(k)+1)
				} else {
					c.reportIf(c.cmp(ir.OpGe, c.convert(d, ir.U64), c.convert(e.view, ir.U64)), ir.StatusIndexRank, 0)
				}
			}
			return c.component(e.n[:], e.rank, d)
		case "Extent.Rank":
			if e := arg(0).(*extentVal); e.view != nil {
				return c.convert(e.view, ir.I64)
			}
			return c.iconst(ir.I64, int64(arg(0).(*extentVal).rank))
		case "Extent.Size":
			e := arg(0).(*extentVal)
			s := c.iconst(ir.I64, 1)
			for d := range e.rank {
				s = c.binop(ir.OpMul, s, e.n[d])
			}
			return s
		case "Extent.Contains":
			e, idx := arg(0).(*extentVal), arg(1).(*indexVal)
			in := c.bconst(true)
			if e.view != nil {
				in = c.cmp(ir.OpEq, e.view, c.iconst(ir.U32, int64(idx.rank)))
			} else if e.rank != idx.rank {
				return c.bconst(false)
			}
			for d := range idx.rank {
				in = c.and(in, c.cmp(ir.OpLt, c.convert(idx.c[d], ir.U64), c.convert(e.n[d], ir.U64)))
			}
			return in
		case "ArrayView.Extent":
			v := arg(0).(*viewVal)
			// The launcher passes 1 for the dimensions past the view's
			// rank, so that Size is right whatever the rank.
			return &extentVal{rank: ir.MaxRank, n: v.n, view: v.rank, arg: c.k.Args[v.arg]}
		case "ArrayView.At":
			idx := arg(1).(*indexVal)
			return c.viewLoad(arg(0).(*viewVal), idx.c[:idx.rank])
		case "ArrayView.At1":
			return c.viewLoad(arg(0).(*viewVal), []*ir.Value{i64(1)})
		case "ArrayView.At2":
			return c.viewLoad(arg(0).(*viewVal), []*ir.Value{i64(1), i64(2)})
		case "ArrayView.Set":
			idx := arg(1).(*indexVal)
			c.viewStore(arg(0).(*viewVal), idx.c[:idx.rank], c.scalar(fr, args[2]))
			return nil
		case "ArrayView.Set1":
			c.viewStore(arg(0).(*viewVal), []*ir.Value{i64(1)}, c.scalar(fr, args[2]))
			return nil
		case "ArrayView.Set2":
			c.viewStore(arg(0).(*viewVal), []*ir.Value{i64(1), i64(2)}, c.scalar(fr, args[3]))
			return nil
		case "ArrayView.AtomicAdd", "ArrayView.AtomicMin", "ArrayView.AtomicMax", "ArrayView.AtomicExchange", "ArrayView.AtomicCompareExchange":
			v, idx := arg(0).(*viewVal), arg(1).(*indexVal)
			var ops []*ir.Value
			for i := 2; i < len(args); i++ {
				ops = append(ops, c.scalar(fr, args[i]))
			}
			return c.viewAtomic(v, idx.c[:idx.rank], obj.Name(), ops, in)
		case "Barrier.Wait":
			b := c.cur.Add(ir.OpBarrier, ir.Void)
			b.Aux = 1
			c.barriers[b] = c.pos
			return nil
		}
		c.fail(in.Pos(), "method %s of amp.%s is not available in kernels", obj.Name(), c.ampName(sig.Recv().Type()))
	}
	switch obj.Name() {
	case "Index1", "Index2", "Index3":
		out := &indexVal{rank: len(args)}
		for d := range args {
			out.c[d] = i64(d)
		}
		return out
	case "Extent1", "Extent2", "Extent3":
		out := &extentVal{rank: len(args)}
		for d := range args {
			out.n[d] = i64(d)
		}
		return out
	case "TileStatic":
		return c.tileStatic(fr, in, fn)
	case "ShuffleDown", "ShuffleUp", "ShuffleXor", "ShuffleIdx":
		if c.tiled == nil {
			c.fail(in.Pos(), "amp.%s needs a tiled kernel (one taking an amp.TiledIndex): warps are parts of tiles", obj.Name())
		}
		return c.shuffle(obj.Name(), c.scalar(fr, args[1]), c.convert(c.scalar(fr, args[2]), ir.I64))
	case "AtomicAdd", "AtomicMin", "AtomicMax", "AtomicExchange", "AtomicCompareExchange":
		p, ok := arg(0).(*ptrVal)
		if !ok || p.shape.elem == ir.Void {
			c.fail(in.Pos(), "amp.%s takes a pointer to an element of TileStatic memory or a local variable", obj.Name())
		}
		var ops []*ir.Value
		for i := 1; i < len(args); i++ {
			ops = append(ops, c.scalar(fr, args[i]))
		}
		return c.atomic(p.space, p.addr, p.shape.elem, obj.Name(), ops, in)
	}
	c.fail(in.Pos(), "amp.%s is not available in kernels", obj.Name())
	return nil
}

// component is comps[d] of a rank-rank index or extent; a d outside the
// rank is reported (the CPU panics) and gives 0.
func (c *compiler) component(comps []*ir.Value, rank int, d *ir.Value) *ir.Value {
	if k, ok := d.ConstInt(); ok {
		if k >= 0 && int(k) < rank {
			return comps[k]
		}
		c.report(ir.StatusIndexRank, int(k))
		return c.iconst(ir.I64, 0)
	}
	ok := c.inRange(d, int64(rank))
	c.reportIf(c.not(ok), ir.StatusIndexRank, 0)
	r := c.iconst(ir.I64, 0)
	for k := range rank {
		r = c.cur.Add(ir.OpSelect, ir.I64, c.cmp(ir.OpEq, d, c.iconst(ir.I64, int64(k))), comps[k], r)
	}
	return r
}

// viewElement is the address of element idx of v and whether it lies in
// the view. The view's rank was checked at launch (Arg.Ranks).
func (c *compiler) viewElement(v *viewVal, idx []*ir.Value) (ok, addr *ir.Value) {
	k := len(idx)
	c.noteRank(v, k)
	ok = c.bconst(true)
	for d := range k {
		ok = c.and(ok, c.cmp(ir.OpLt, c.convert(idx[d], ir.U64), c.convert(v.n[d], ir.U64)))
	}
	off := idx[k-1]
	for d := range k - 1 {
		off = c.binop(ir.OpAdd, off, c.binop(ir.OpMul, idx[d], v.s[d]))
	}
	bytes := c.binop(ir.OpMul, c.convert(off, ir.U64), c.iconst(ir.U64, int64(v.elem.Size())))
	return ok, c.binop(ir.OpAdd, v.base, bytes)
}

func (c *compiler) noteRank(v *viewVal, k int) {
	a := c.k.Args[v.arg]
	if r := a.Ranks[c.rank]; r != 0 && r != k {
		c.fail(0, "array view %s is indexed with rank-%d and rank-%d indices; a kernel uses each view at one rank", a.Name, r, k)
	}
	a.Ranks[c.rank] = k
}

func (c *compiler) viewLoad(v *viewVal, idx []*ir.Value) *ir.Value {
	c.k.Args[v.arg].Read = true
	ok, addr := c.viewElement(v, idx)
	if k, isConst := ok.ConstInt(); isConst && k != 0 {
		l := c.cur.Add(ir.OpLoad, v.elem, addr)
		l.Space = ir.Global
		return l
	}
	// No branch: a load outside the view reads the status record instead
	// (always there) and gives 0, and the failure is noted for the report
	// at the kernel's end. Branch-free loads let the back end schedule and
	// unroll loops over views as it does unchecked CUDA C.
	safe := c.cur.Add(ir.OpSelect, ir.U64, ok, addr, c.status)
	l := c.cur.Add(ir.OpLoad, v.elem, safe)
	l.Space = ir.Global
	c.noteFault(ok, ir.StatusOutOfBounds, v.arg+1)
	var zero *ir.Value
	if v.elem.IsFloat() {
		zero = c.fconst(v.elem, 0)
	} else {
		zero = c.iconst(v.elem, 0)
	}
	return c.cur.Add(ir.OpSelect, v.elem, ok, l, zero)
}

// noteFault records, unless ok, the failure code/arg in the thread's
// fault word, which the kernel reports when the thread ends
// (reportFaults). Of several failures of one thread the word keeps the
// greatest code and argument: two instructions an access, no branch.
func (c *compiler) noteFault(ok *ir.Value, code, arg int) {
	if c.fault == nil {
		i := c.f.AddLocal("fault", ir.U32, 1)
		c.fault = c.entry.Add(ir.OpLocalAddr, ir.U64)
		c.fault.Aux = i
		c.entry.Add(ir.OpStore, ir.Void, c.fault, c.iconst(ir.U32, 0)).Space = ir.Local
	}
	old := c.cur.Add(ir.OpLoad, ir.U32, c.fault)
	old.Space = ir.Local
	word := c.cur.Add(ir.OpSelect, ir.U32, ok, c.iconst(ir.U32, 0), c.iconst(ir.U32, int64(code)<<16|int64(arg)))
	c.cur.Add(ir.OpStore, ir.Void, c.fault, c.cur.Add(ir.OpMax, ir.U32, old, word)).Space = ir.Local
}

// reportFaults makes every thread that noted a failure report it as it
// ends: each Return block first checks the fault word.
func (c *compiler) reportFaults() {
	if c.fault == nil {
		return
	}
	for _, b := range append([]*ir.Block(nil), c.f.Blocks...) {
		if b.Kind != ir.Return || len(b.Preds) == 0 && b != c.entry {
			continue
		}
		c.cur = b
		w := c.cur.Add(ir.OpLoad, ir.U32, c.fault)
		w.Space = ir.Local
		fail, done := c.f.NewBlock(), c.f.NewBlock()
		b.Kind = 0
		b.SetIf(c.cmp(ir.OpNe, w, c.iconst(ir.U32, 0)), fail, done)
		c.cur = fail
		code := c.cur.Add(ir.OpShr, ir.U32, w, c.iconst(ir.U32, 16))
		arg := c.cur.Add(ir.OpAnd, ir.U32, w, c.iconst(ir.U32, 0xffff))
		var where [3]*ir.Value
		for d := range 3 {
			if d < c.rank {
				where[d] = c.global.c[d]
			} else {
				where[d] = c.iconst(ir.I64, 0)
			}
		}
		c.cur.Add(ir.OpStatus, ir.Void, c.status, code, arg, where[0], where[1], where[2])
		fail.SetJump(done)
		done.SetReturn()
	}
}

func (c *compiler) viewStore(v *viewVal, idx []*ir.Value, x *ir.Value) {
	c.k.Args[v.arg].Write = true
	ok, addr := c.viewElement(v, idx)
	c.guarded(ok, ir.StatusOutOfBounds, v.arg+1, ir.Void, func() *ir.Value {
		c.cur.Add(ir.OpStore, ir.Void, addr, x).Space = ir.Global
		return nil
	})
}

func (c *compiler) tileStatic(fr *frame, in *ssa.Call, fn *ssa.Function) value {
	if c.tiled == nil {
		c.fail(in.Pos(), "amp.TileStatic needs a tiled kernel (one taking an amp.TiledIndex)")
	}
	if v, ok := c.staticsByCall[in]; ok {
		return v
	}
	targs := fn.TypeArgs()
	t := c.resolve(fr, targs[0])
	st, isBool, ok := scalarType(t)
	if !ok || isBool {
		c.fail(in.Pos(), "amp.TileStatic of %s: kernels keep only numeric scalars (int32, uint32, int, int64, uint, uint64, float32, float64) in tile_static memory", typeName(t))
	}
	n, ok := c.scalar(fr, in.Common().Args[1]).ConstInt()
	if !ok {
		c.fail(in.Pos(), "the length of amp.TileStatic must be a constant when the kernel is compiled (it is the size of the GPU's shared array); use a const")
	}
	if n < 0 {
		c.fail(in.Pos(), "amp.TileStatic of negative length %d", n)
	}
	bytes := int(n) * st.Size()
	c.sharedBytes = (c.sharedBytes+7)&^7 + bytes
	if c.sharedBytes > amp.MaxTileStaticBytes {
		c.fail(in.Pos(), "the kernel's TileStatic calls ask for %d bytes in all; a tile has %d", c.sharedBytes, amp.MaxTileStaticBytes)
	}
	c.statics++
	v := &staticVal{arr: c.f.AddShared("tile_static"+itoa(c.statics), st, int(n)), elem: st, n: n, call: c.statics}
	c.staticBlocks[c.cur] = c.pos
	return v
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// atomicOps maps amp's atomic functions to the IR's.
var atomicOps = map[string]ir.Atomic{
	"AtomicAdd": ir.AtomicAdd, "AtomicMin": ir.AtomicMin, "AtomicMax": ir.AtomicMax,
	"AtomicExchange": ir.AtomicExch, "AtomicCompareExchange": ir.AtomicCAS,
}

// atomic appends the read-modify-write name on the element of type t at
// addr in space; ops are the Go call's operands after the element.
func (c *compiler) atomic(space ir.Space, addr *ir.Value, t ir.Type, name string, ops []*ir.Value, in *ssa.Call) *ir.Value {
	op := atomicOps[name]
	if (op == ir.AtomicMin || op == ir.AtomicMax) && t.IsFloat() {
		c.fail(in.Pos(), "amp.%s of a float element: GPUs have no float atomic min or max; use AtomicCompareExchange in a loop", name)
	}
	v := c.cur.Add(ir.OpAtomic, t, append([]*ir.Value{addr}, ops...)...)
	v.Space, v.Aux = space, int(op)
	return v
}

// viewAtomic is an atomic on element idx of view v: checked like Set,
// skipped (and reported) outside the view, where it gives 0.
func (c *compiler) viewAtomic(v *viewVal, idx []*ir.Value, name string, ops []*ir.Value, in *ssa.Call) *ir.Value {
	a := c.k.Args[v.arg]
	a.Read, a.Write = true, true
	ok, addr := c.viewElement(v, idx)
	return c.guarded(ok, ir.StatusOutOfBounds, v.arg+1, v.elem, func() *ir.Value {
		return c.atomic(ir.Global, addr, v.elem, name, ops, in)
	})
}

var shuffleModes = map[string]ir.Shuffle{
	"ShuffleDown": ir.ShuffleDown, "ShuffleUp": ir.ShuffleUp, "ShuffleXor": ir.ShuffleXor, "ShuffleIdx": ir.ShuffleIdx,
}

// shuffle exchanges x within the warp (64-bit values as two 32-bit
// halves). Like a barrier, every lane must reach it: checkBarriers refuses
// one under a condition that varies between threads.
func (c *compiler) shuffle(name string, x, arg *ir.Value) *ir.Value {
	c.k.Shuffles = true
	mode := shuffleModes[name]
	lane := c.convert(arg, ir.U32)
	one := func(v *ir.Value) *ir.Value {
		s := c.cur.Add(ir.OpShuffle, v.Type, v, lane)
		s.Aux, s.Const = int(mode), 32
		c.barriers[s] = c.pos
		return s
	}
	if x.Type.Size() == 4 {
		return one(x)
	}
	bits := x
	if x.Type != ir.U64 {
		bits = c.cur.Add(ir.OpBitcast, ir.U64, x)
	}
	lo := one(c.convert(bits, ir.U32))
	hi := one(c.convert(c.cur.Add(ir.OpShr, ir.U64, bits, c.iconst(ir.U32, 32)), ir.U32))
	r := c.cur.Add(ir.OpOr, ir.U64, c.convert(lo, ir.U64), c.cur.Add(ir.OpShl, ir.U64, c.convert(hi, ir.U64), c.iconst(ir.U32, 32)))
	if x.Type == ir.U64 {
		return r
	}
	return c.cur.Add(ir.OpBitcast, x.Type, r)
}
