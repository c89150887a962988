package ptx

import (
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// Helpers that build IR by hand, as the front end would.

func param(b *ir.Block, i int) *ir.Value {
	v := b.Add(ir.OpParam, b.Func.Params[i].Type)
	v.Aux = i
	return v
}

func special(b *ir.Block, s ir.Special) *ir.Value {
	v := b.Add(ir.OpSpecial, ir.U32)
	v.Aux = int(s)
	return v
}

func load(b *ir.Block, sp ir.Space, t ir.Type, addr *ir.Value) *ir.Value {
	v := b.Add(ir.OpLoad, t, addr)
	v.Space = sp
	return v
}

func store(b *ir.Block, sp ir.Space, addr, x *ir.Value) {
	v := b.Add(ir.OpStore, ir.Void, addr, x)
	v.Space = sp
}

func atomic(b *ir.Block, sp ir.Space, op ir.Atomic, t ir.Type, args ...*ir.Value) *ir.Value {
	v := b.Add(ir.OpAtomic, t, args...)
	v.Space = sp
	v.Aux = int(op)
	return v
}

func shuffle(b *ir.Block, mode ir.Shuffle, width uint64, x, lane *ir.Value) *ir.Value {
	v := b.Add(ir.OpShuffle, x.Type, x, lane)
	v.Aux = int(mode)
	v.Const = width
	return v
}

func barrier(b *ir.Block, uniform bool) {
	v := b.Add(ir.OpBarrier, ir.Void)
	if uniform {
		v.Aux = 1
	}
}

func mathOp(b *ir.Block, fn ir.MathFn, fast bool, args ...*ir.Value) *ir.Value {
	v := b.Add(ir.OpMath, args[0].Type, args...)
	v.Aux = int(fn)
	v.Fast = fast
	return v
}

// offset is base + k (a byte offset) in base's address type.
func offset(b *ir.Block, base *ir.Value, k int64) *ir.Value {
	return b.Add(ir.OpAdd, base.Type, base, b.Const(base.Type, k))
}

// buildSaxpy is y[i] = a*x[i] + y[i] behind a bounds check.
func buildSaxpy() *ir.Func {
	f := ir.NewFunc("saxpy")
	f.Comment = []string{"saxpy.go:10: func saxpy(idx amp.Index, a float32, x, y amp.ArrayView[float32])"}
	f.MaxThreads = 256
	f.AddParam("n", ir.I32)
	f.AddParam("a", ir.F32)
	f.AddParam("x.data", ir.U64)
	f.AddParam("y.data", ir.U64)
	entry, body, done := f.Entry(), f.NewBlock(), f.NewBlock()
	body.Comment = "saxpy.go:12"

	n := param(entry, 0)
	i := entry.Add(ir.OpAdd, ir.U32,
		entry.Add(ir.OpMul, ir.U32, special(entry, ir.CtaidX), special(entry, ir.NtidX)),
		special(entry, ir.TidX))
	in := entry.Add(ir.OpLt, ir.Bool, entry.Add(ir.OpConvert, ir.I32, i), n)
	entry.SetIf(in, body, done)

	a, x, y := param(body, 1), param(body, 2), param(body, 3)
	off := body.Add(ir.OpShl, ir.U64, body.Add(ir.OpConvert, ir.U64, i), body.Const(ir.U32, 2))
	ax, ay := body.Add(ir.OpAdd, ir.U64, x, off), body.Add(ir.OpAdd, ir.U64, y, off)
	r := body.Add(ir.OpAdd, ir.F32,
		body.Add(ir.OpMul, ir.F32, a, load(body, ir.Global, ir.F32, ax)),
		load(body, ir.Global, ir.F32, ay))
	store(body, ir.Global, ay, r)
	body.SetJump(done)
	done.SetReturn()
	return f
}

// buildLoop is a loop whose header is its own latch (a critical edge
// into a block with phis), carrying i++, the chain x, y = y, x+y and the
// cycle a, b = b, a; then an if/else whose join has an f32 and a Bool phi.
func buildLoop() *ir.Func {
	f := ir.NewFunc("loop")
	f.Comment = []string{"loop.go:3", "(two comment lines)"}
	f.AddParam("n", ir.I32)
	f.AddParam("p", ir.F32)
	f.AddParam("q", ir.F32)
	f.AddParam("out", ir.U64)
	b0, b1, b2, b3, b4, b5 := f.Entry(), f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock()
	b1.Comment = "loop.go:6: for i < n"

	n, p, q := param(b0, 0), param(b0, 1), param(b0, 2)
	i0, x0, y0 := b0.Const(ir.I32, 0), b0.Const(ir.U32, 0), b0.Const(ir.U32, 1)
	b0.SetJump(b1)

	i, x, y, a, b := b1.AddPhi(ir.I32), b1.AddPhi(ir.U32), b1.AddPhi(ir.U32), b1.AddPhi(ir.F32), b1.AddPhi(ir.F32)
	s := b1.Add(ir.OpAdd, ir.U32, x, y)
	i1 := b1.Add(ir.OpAdd, ir.I32, i, b1.Const(ir.I32, 1))
	b1.SetIf(b1.Add(ir.OpLt, ir.Bool, i1, n), b1, b2)
	i.Args = []*ir.Value{i0, i1}
	x.Args = []*ir.Value{x0, y}
	y.Args = []*ir.Value{y0, s}
	a.Args = []*ir.Value{p, b}
	b.Args = []*ir.Value{q, a}

	b2.SetIf(b2.Add(ir.OpGt, ir.Bool, x, b2.Const(ir.U32, 100)), b3, b4)
	t3 := b3.Add(ir.OpMul, ir.F32, a, b3.ConstFloat(ir.F32, 2))
	yes := b3.Const(ir.Bool, 1)
	b3.SetJump(b5)
	t4 := b4.Add(ir.OpAdd, ir.F32, b, b4.ConstFloat(ir.F32, 1))
	no := b4.Const(ir.Bool, 0)
	b4.SetJump(b5)

	r, flag := b5.AddPhi(ir.F32), b5.AddPhi(ir.Bool)
	r.Args = []*ir.Value{t3, t4}
	flag.Args = []*ir.Value{yes, no}
	out := param(b5, 3)
	store(b5, ir.Global, out, x)
	store(b5, ir.Global, offset(b5, out, 4), b5.Add(ir.OpConvert, ir.U32, flag))
	store(b5, ir.Global, offset(b5, out, 8), r)
	b5.SetReturn()
	return f
}

// buildReduce is a shared-memory tree reduction: a barrier after the
// stores, then halving strides with a barrier each, and thread 0 writing
// the block's sum. It also has a block nothing reaches.
func buildReduce() *ir.Func {
	f := ir.NewFunc("reduce")
	f.MaxThreads = 256
	f.AddParam("in", ir.U64)
	f.AddParam("out", ir.U64)
	f.AddShared("tile", ir.F32, 256)
	b := make([]*ir.Block, 9)
	b[0] = f.Entry()
	for k := 1; k < len(b); k++ {
		b[k] = f.NewBlock()
	}
	in, out := param(b[0], 0), param(b[0], 1)
	tid, ctaid := special(b[0], ir.TidX), special(b[0], ir.CtaidX)
	gid := b[0].Add(ir.OpAdd, ir.U32, b[0].Add(ir.OpMul, ir.U32, ctaid, special(b[0], ir.NtidX)), tid)
	four := b[0].Const(ir.U32, 2)
	ga := b[0].Add(ir.OpAdd, ir.U64, in, b[0].Add(ir.OpShl, ir.U64, b[0].Add(ir.OpConvert, ir.U64, gid), four))
	tile := b[0].Add(ir.OpSharedAddr, ir.U32)
	mine := b[0].Add(ir.OpAdd, ir.U32, tile, b[0].Add(ir.OpShl, ir.U32, tid, four))
	store(b[0], ir.Shared, mine, load(b[0], ir.Global, ir.F32, ga))
	barrier(b[0], false)
	s0 := b[0].Const(ir.U32, 128)
	b[0].SetJump(b[1])

	s := b[1].AddPhi(ir.U32)
	b[1].SetIf(b[1].Add(ir.OpGt, ir.Bool, s, b[1].Const(ir.U32, 0)), b[2], b[5])

	b[2].SetIf(b[2].Add(ir.OpLt, ir.Bool, tid, s), b[3], b[4])

	other := b[3].Add(ir.OpAdd, ir.U32, mine, b[3].Add(ir.OpShl, ir.U32, s, four))
	sum := b[3].Add(ir.OpAdd, ir.F32, load(b[3], ir.Shared, ir.F32, mine), load(b[3], ir.Shared, ir.F32, other))
	store(b[3], ir.Shared, mine, sum)
	b[3].SetJump(b[4])

	barrier(b[4], true)
	s2 := b[4].Add(ir.OpShr, ir.U32, s, b[4].Const(ir.U32, 1))
	b[4].SetJump(b[1])
	s.Args = []*ir.Value{s0, s2}

	b[5].SetIf(b[5].Add(ir.OpEq, ir.Bool, tid, b[5].Const(ir.U32, 0)), b[6], b[7])

	oa := b[6].Add(ir.OpAdd, ir.U64, out, b[6].Add(ir.OpShl, ir.U64, b[6].Add(ir.OpConvert, ir.U64, ctaid), four))
	store(b[6], ir.Global, oa, load(b[6], ir.Shared, ir.F32, tile))
	b[6].SetJump(b[7])

	b[7].SetReturn()

	b[8].Comment = "unreachable: not emitted"
	b[8].Add(ir.OpBarrier, ir.Void)
	b[8].SetJump(b[7])
	return f
}

// buildAtomics uses every atomic operation in global and shared memory,
// atomics on a local array, and a status report when a CAS fails.
func buildAtomics() *ir.Func {
	f := ir.NewFunc("atomics")
	f.AddParam("counters", ir.U64)
	f.AddParam("sums", ir.U64)
	f.AddParam("status", ir.U64)
	f.AddShared("bins", ir.F32, 32)
	f.AddShared("bins", ir.U32, 3) // a second array of the same name
	f.AddLocal("scratch", ir.I32, 4)
	b0, b1, b2 := f.Entry(), f.NewBlock(), f.NewBlock()
	b1.Comment = "atomics.go:20: the CAS failed"

	pc, ps, rec := param(b0, 0), param(b0, 1), param(b0, 2)
	tid := special(b0, ir.TidX)
	atomic(b0, ir.Global, ir.AtomicAdd, ir.U32, pc, b0.Const(ir.U32, 1))
	atomic(b0, ir.Global, ir.AtomicAdd, ir.I32, offset(b0, pc, 4), b0.Const(ir.I32, -1))
	bin := b0.Add(ir.OpAdd, ir.U32, b0.Add(ir.OpSharedAddr, ir.U32),
		b0.Add(ir.OpShl, ir.U32, b0.Add(ir.OpAnd, ir.U32, tid, b0.Const(ir.U32, 31)), b0.Const(ir.U32, 2)))
	atomic(b0, ir.Shared, ir.AtomicAdd, ir.F32, bin, b0.ConstFloat(ir.F32, 1.5))
	cnt := b0.Add(ir.OpSharedAddr, ir.U32)
	cnt.Aux = 1
	atomic(b0, ir.Shared, ir.AtomicMax, ir.U32, cnt, tid)
	atomic(b0, ir.Global, ir.AtomicAdd, ir.F64, ps, b0.ConstFloat(ir.F64, 0.25))
	atomic(b0, ir.Global, ir.AtomicAdd, ir.U64, offset(b0, ps, 8), b0.Const(ir.U64, 1))
	atomic(b0, ir.Global, ir.AtomicMin, ir.I64, offset(b0, ps, 16), b0.Const(ir.I64, -3))
	atomic(b0, ir.Global, ir.AtomicMax, ir.U64, offset(b0, ps, 24), b0.Add(ir.OpConvert, ir.U64, tid))
	atomic(b0, ir.Global, ir.AtomicExch, ir.F32, offset(b0, pc, 8), b0.ConstFloat(ir.F32, 2))
	atomic(b0, ir.Global, ir.AtomicExch, ir.U64, offset(b0, ps, 32), b0.Const(ir.U64, 7))
	old := atomic(b0, ir.Global, ir.AtomicCAS, ir.U32, offset(b0, pc, 12), b0.Const(ir.U32, 0), tid)
	atomic(b0, ir.Shared, ir.AtomicCAS, ir.U32, offset(b0, cnt, 4), tid, b0.Const(ir.U32, 9))
	atomic(b0, ir.Global, ir.AtomicCAS, ir.F64, offset(b0, ps, 40), b0.ConstFloat(ir.F64, 0), b0.ConstFloat(ir.F64, 1))

	la := b0.Add(ir.OpLocalAddr, ir.U64)
	store(b0, ir.Local, la, b0.Const(ir.I32, 0))
	atomic(b0, ir.Local, ir.AtomicAdd, ir.I32, la, b0.Const(ir.I32, 5))
	atomic(b0, ir.Local, ir.AtomicMin, ir.I32, offset(b0, la, 4), b0.Const(ir.I32, -5))
	atomic(b0, ir.Local, ir.AtomicExch, ir.I32, offset(b0, la, 8), b0.Const(ir.I32, 6))
	atomic(b0, ir.Local, ir.AtomicCAS, ir.I32, offset(b0, la, 12), b0.Const(ir.I32, 0), b0.Const(ir.I32, 7))
	store(b0, ir.Global, offset(b0, pc, 16), load(b0, ir.Local, ir.I32, la))
	b0.SetIf(b0.Add(ir.OpNe, ir.Bool, old, b0.Const(ir.U32, 0)), b1, b2)

	w0 := b1.Add(ir.OpConvert, ir.I64, tid)
	zero := b1.Const(ir.I64, 0)
	b1.Add(ir.OpStatus, ir.Void, rec, b1.Const(ir.U32, ir.StatusOutOfBounds), b1.Const(ir.U32, 2), w0, zero, zero)
	b1.SetJump(b2)
	b2.SetReturn()
	return f
}

// buildShuffle is a warp sum by shfl.down, then the other modes and group
// widths, and a barrier threads may reach apart.
func buildShuffle() *ir.Func {
	f := ir.NewFunc("warpsum")
	f.AddParam("in", ir.U64)
	f.AddParam("out", ir.U64)
	b0, b1, b2 := f.Entry(), f.NewBlock(), f.NewBlock()
	in, out := param(b0, 0), param(b0, 1)
	tid := special(b0, ir.TidX)
	lane := special(b0, ir.LaneID)
	v := load(b0, ir.Global, ir.F32, b0.Add(ir.OpAdd, ir.U64, in,
		b0.Add(ir.OpShl, ir.U64, b0.Add(ir.OpConvert, ir.U64, tid), b0.Const(ir.U32, 2))))
	for _, d := range []int64{16, 8, 4, 2, 1} {
		v = b0.Add(ir.OpAdd, ir.F32, v, shuffle(b0, ir.ShuffleDown, 32, v, b0.Const(ir.U32, d)))
	}
	x := shuffle(b0, ir.ShuffleXor, 16, b0.Add(ir.OpConvert, ir.I32, tid), b0.Const(ir.U32, 1))
	u := shuffle(b0, ir.ShuffleUp, 8, tid, b0.Const(ir.U32, 1))
	w := shuffle(b0, ir.ShuffleIdx, 32, v, b0.Const(ir.U32, 0))
	one := shuffle(b0, ir.ShuffleIdx, 1, tid, lane)
	b0.SetIf(b0.Add(ir.OpEq, ir.Bool, lane, b0.Const(ir.U32, 0)), b1, b2)

	store(b1, ir.Global, out, w)
	store(b1, ir.Global, offset(b1, out, 4), x)
	store(b1, ir.Global, offset(b1, out, 8), u)
	store(b1, ir.Global, offset(b1, out, 12), one)
	b1.SetJump(b2)

	barrier(b2, false)
	b2.SetReturn()
	return f
}

// buildMath uses every OpMath the back end writes.
func buildMath() *ir.Func {
	f := ir.NewFunc("mathops")
	f.AddParam("x", ir.F32)
	f.AddParam("y", ir.F64)
	f.AddParam("out", ir.U64)
	b := f.Entry()
	x, y, out := param(b, 0), param(b, 1), param(b, 2)
	var rs []*ir.Value
	for _, fast := range []bool{false, true} {
		for _, v := range []*ir.Value{x, y} {
			rs = append(rs,
				mathOp(b, ir.Sqrt, fast, v),
				mathOp(b, ir.Rsqrt, fast, v),
				mathOp(b, ir.Fma, fast, v, v, v),
				mathOp(b, ir.Abs, fast, v),
				mathOp(b, ir.Floor, fast, v),
				mathOp(b, ir.Ceil, fast, v),
				mathOp(b, ir.Trunc, fast, v))
		}
	}
	for _, fn := range []ir.MathFn{ir.Exp2, ir.Log2, ir.Sin, ir.Cos, ir.Tanh} {
		rs = append(rs, mathOp(b, fn, true, x))
	}
	for k, r := range rs {
		store(b, ir.Global, offset(b, out, int64(8*k)), r)
	}
	b.SetReturn()
	return f
}

// buildMinMax is Go's float min and max.
func buildMinMax() *ir.Func {
	f := ir.NewFunc("minmax")
	f.AddParam("a", ir.F32)
	f.AddParam("b", ir.F32)
	f.AddParam("c", ir.F64)
	f.AddParam("d", ir.F64)
	f.AddParam("out", ir.U64)
	e := f.Entry()
	a, b, c, d, out := param(e, 0), param(e, 1), param(e, 2), param(e, 3), param(e, 4)
	for k, r := range []*ir.Value{
		e.Add(ir.OpMin, ir.F32, a, b), e.Add(ir.OpMax, ir.F32, a, b),
		e.Add(ir.OpMin, ir.F64, c, d), e.Add(ir.OpMax, ir.F64, c, d),
	} {
		store(e, ir.Global, offset(e, out, int64(8*k)), r)
	}
	e.SetReturn()
	return f
}

var convTypes = []ir.Type{ir.Bool, ir.I32, ir.U32, ir.I64, ir.U64, ir.F32, ir.F64}

// buildConvert converts every type to every type.
func buildConvert() *ir.Func {
	f := ir.NewFunc("convert")
	src := map[ir.Type]*ir.Value{}
	b := f.Entry()
	for _, t := range convTypes[1:] {
		f.AddParam(t.String(), t)
	}
	for i, t := range convTypes[1:] {
		src[t] = param(b, i)
	}
	src[ir.Bool] = b.Add(ir.OpNe, ir.Bool, src[ir.U32], b.Const(ir.U32, 0))
	for _, from := range convTypes {
		for _, to := range convTypes {
			b.Add(ir.OpConvert, to, src[from])
		}
	}
	b.SetReturn()
	return f
}

// buildArith covers the other ops: integer and float arithmetic,
// comparisons (Bool ones too), selects, bitcasts, constants and the
// special registers.
func buildArith() *ir.Func {
	f := ir.NewFunc("arith")
	types := []ir.Type{ir.I32, ir.U32, ir.I64, ir.U64, ir.F32, ir.F64}
	for _, t := range types {
		f.AddParam(t.String()+"x", t)
		f.AddParam(t.String()+"y", t)
	}
	b := f.Entry()
	args := map[ir.Type][2]*ir.Value{}
	for i, t := range types {
		args[t] = [2]*ir.Value{param(b, 2*i), param(b, 2*i+1)}
	}
	cond := b.Add(ir.OpLt, ir.Bool, args[ir.I32][0], args[ir.I32][1])
	count := b.Add(ir.OpAnd, ir.U32, args[ir.U32][1], b.Const(ir.U32, 31))
	for _, t := range types {
		x, y := args[t][0], args[t][1]
		ops := []ir.Op{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMin, ir.OpMax}
		if t.IsInt() {
			ops = append(ops, ir.OpRem, ir.OpAnd, ir.OpOr, ir.OpXor)
		}
		for _, op := range ops {
			b.Add(op, t, x, y)
		}
		if t.IsInt() {
			b.Add(ir.OpShl, t, x, count)
			b.Add(ir.OpShr, t, x, count)
			b.Add(ir.OpNot, t, x)
		}
		b.Add(ir.OpNeg, t, x)
		for _, op := range []ir.Op{ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe} {
			b.Add(op, ir.Bool, x, y)
		}
		b.Add(ir.OpSelect, t, cond, x, y)
	}
	p := b.Add(ir.OpGt, ir.Bool, args[ir.F32][0], args[ir.F32][1])
	for _, op := range []ir.Op{ir.OpAnd, ir.OpOr, ir.OpXor} {
		b.Add(op, ir.Bool, cond, p)
	}
	b.Add(ir.OpNot, ir.Bool, p)
	for _, op := range []ir.Op{ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe} {
		b.Add(op, ir.Bool, cond, p)
	}
	b.Add(ir.OpSelect, ir.Bool, cond, p, b.Const(ir.Bool, 1))
	b.Add(ir.OpBitcast, ir.F32, args[ir.I32][0])
	b.Add(ir.OpBitcast, ir.U32, args[ir.F32][0])
	b.Add(ir.OpBitcast, ir.I64, args[ir.F64][0])
	b.Add(ir.OpBitcast, ir.F64, args[ir.U64][0])
	b.Add(ir.OpBitcast, ir.U32, args[ir.I32][0])
	for _, c := range []struct {
		t ir.Type
		x int64
	}{
		{ir.I32, -7}, {ir.I32, 65537}, {ir.I32, -2147483648}, {ir.U32, 4294967295}, {ir.U32, 65536},
		{ir.I64, -1}, {ir.I64, -9223372036854775808}, {ir.U64, -1}, {ir.U64, 1 << 40},
	} {
		b.Const(c.t, c.x)
	}
	for _, x := range []float64{1.5, math.Copysign(0, -1), 3.4028234663852886e38} {
		b.ConstFloat(ir.F32, x)
	}
	nan := b.Add(ir.OpConst, ir.F64)
	nan.Const = 0x7FF8000000000001
	b.ConstFloat(ir.F64, 3.141592653589793)
	for s := ir.TidX; s <= ir.LaneID; s++ {
		special(b, s)
	}
	b.SetReturn()
	return f
}
