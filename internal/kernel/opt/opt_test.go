package opt

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// tileKernel builds the pattern the optimizations exist for: a kernel
// whose blocks are tile x 1 threads (fixed when fixed is true) that copy
// x[tid] into a tile_static array with a bounds-checked index, then sum
// the array in a loop of tile steps (each index checked), and store the
// sum to out[ctaid*tile + tid]; a failed check stores 1 in a status word.
func tileKernel(tile int, fixed bool) *ir.Func {
	f := ir.NewFunc("tile")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	status, x, out := param("status", ir.U64), param("x", ir.U64), param("out", ir.U64)
	if fixed {
		f.Block = [3]int{tile, 1, 1}
	}
	arr := f.AddShared("buf", ir.F32, tile)
	tid := e.Add(ir.OpSpecial, ir.U32)
	tid.Aux = int(ir.TidX)
	ctaid := e.Add(ir.OpSpecial, ir.U32)
	ctaid.Aux = int(ir.CtaidX)
	tid64 := e.Add(ir.OpConvert, ir.I64, tid)
	base := e.Add(ir.OpSharedAddr, ir.U32)
	base.Aux = arr
	n := e.Const(ir.I64, int64(tile))
	four := e.Const(ir.U32, 4)
	fail := func(b *ir.Block) { // status word := 1
		b.Add(ir.OpStore, ir.Void, status, b.Const(ir.U32, 1)).Space = ir.Global
	}
	// checked stores x[global] into buf[i] when i < tile, else fails.
	checked := func(b *ir.Block, i *ir.Value, do func(b *ir.Block, addr *ir.Value)) *ir.Block {
		ok := b.Add(ir.OpLt, ir.Bool, b.Add(ir.OpConvert, ir.U64, i), b.Add(ir.OpConvert, ir.U64, n))
		yes, no, join := f.NewBlock(), f.NewBlock(), f.NewBlock()
		b.SetIf(ok, yes, no)
		addr := yes.Add(ir.OpAdd, ir.U32, base, yes.Add(ir.OpMul, ir.U32, yes.Add(ir.OpConvert, ir.U32, i), four))
		do(yes, addr)
		yes.SetJump(join)
		fail(no)
		no.SetJump(join)
		return join
	}
	g := e.Add(ir.OpAdd, ir.U64, e.Add(ir.OpMul, ir.U64, e.Add(ir.OpConvert, ir.U64, ctaid), e.Const(ir.U64, int64(tile))), e.Add(ir.OpConvert, ir.U64, tid))
	xv := e.Add(ir.OpLoad, ir.F32, e.Add(ir.OpAdd, ir.U64, x, e.Add(ir.OpMul, ir.U64, g, e.Const(ir.U64, 4))))
	xv.Space = ir.Global
	b := checked(e, tid64, func(b *ir.Block, addr *ir.Value) {
		b.Add(ir.OpStore, ir.Void, addr, xv).Space = ir.Shared
	})
	b.Add(ir.OpBarrier, ir.Void).Aux = 1
	// for i := 0; i < tile; i++ { sum += buf[i] }
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	b.SetJump(head)
	i := head.AddPhi(ir.I64)
	sum := head.AddPhi(ir.F32)
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, n), body, exit)
	var loaded *ir.Value
	after := checked(body, i, func(b *ir.Block, addr *ir.Value) {
		loaded = b.Add(ir.OpLoad, ir.F32, addr)
		loaded.Space = ir.Shared
	})
	v := after.AddPhi(ir.F32)
	v.Args = []*ir.Value{loaded, e.ConstFloat(ir.F32, 0)}
	next := after.Add(ir.OpAdd, ir.I64, i, after.Const(ir.I64, 1))
	s2 := after.Add(ir.OpAdd, ir.F32, sum, v)
	after.SetJump(head)
	i.Args = []*ir.Value{e.Const(ir.I64, 0), next}
	sum.Args = []*ir.Value{e.ConstFloat(ir.F32, 0), s2}
	exit.Add(ir.OpStore, ir.Void, exit.Add(ir.OpAdd, ir.U64, out, exit.Add(ir.OpMul, ir.U64, g, exit.Const(ir.U64, 4))), sum).Space = ir.Global
	exit.SetReturn()
	return f
}

// run launches f over blocks of tile threads and returns out and the
// status word.
func run(t *testing.T, f *ir.Func, tile, blocks int, x []float32) ([]float32, uint32) {
	t.Helper()
	mem := interp.NewMemory()
	st, xa, oa := mem.Alloc(8), mem.Alloc(4*len(x)), mem.Alloc(4*len(x))
	xb := mem.Bytes(xa, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(v))
	}
	if err := interp.Launch(f, [3]int{blocks, 1, 1}, [3]int{tile, 1, 1}, []uint64{st, xa, oa}, mem); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(x))
	ob := mem.Bytes(oa, 4*len(x))
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(ob[4*i:]))
	}
	return out, binary.LittleEndian.Uint32(mem.Bytes(st, 4))
}

func count(f *ir.Func, pred func(*ir.Value) bool) int {
	n := 0
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if pred(v) {
				n++
			}
		}
	}
	return n
}

// TestOptimizeTileKernel: with the block shape fixed, every check is
// proven, the loop is unrolled and the kernel is one block; the results
// are those of the unoptimized kernel.
func TestOptimizeTileKernel(t *testing.T) {
	const tile, blocks = 16, 5
	x := make([]float32, tile*blocks)
	for i := range x {
		x[i] = float32(rand.IntN(100))
	}
	want, wantStatus := run(t, tileKernel(tile, true), tile, blocks, x)
	f := tileKernel(tile, true)
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	got, status := run(t, f, tile, blocks, x)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("out[%d] = %v, unoptimized %v", i, got[i], want[i])
		}
	}
	if status != wantStatus || status != 0 {
		t.Errorf("status %d, unoptimized %d", status, wantStatus)
	}
	if n := len(f.Blocks); n != 1 {
		t.Errorf("%d blocks after optimizing, want 1 (checks removed, loop unrolled):\n%s", n, f)
	}
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpLoad && v.Space == ir.Shared }); n != tile {
		t.Errorf("%d shared loads, want %d (one an unrolled step)", n, tile)
	}
}

// TestOptimizeKeepsUnprovenChecks: without a fixed block shape a thread
// index may exceed the tile, so the store's check must stay, and a launch
// with blocks larger than the array still reports the failure.
func TestOptimizeKeepsUnprovenChecks(t *testing.T) {
	const tile = 8
	f := tileKernel(tile, false)
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 2*tile)
	_, status := run(t, f, 2*tile, 1, x) // 16 threads, an 8-element array
	if status != 1 {
		t.Errorf("status %d after an out-of-range index, want 1", status)
	}
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpLt }); n == 0 {
		t.Error("every comparison was folded, though the thread index is not bounded")
	}
}

func TestTripCount(t *testing.T) {
	for _, c := range []struct {
		start, step, limit int64
		op                 ir.Op
		stepOp             ir.Op
		want               int
		ok                 bool
	}{
		{0, 1, 16, ir.OpLt, ir.OpAdd, 16, true},
		{0, 3, 10, ir.OpLt, ir.OpAdd, 4, true},
		{128, 2, 0, ir.OpGt, ir.OpDiv, 8, true},
		{5, 1, 5, ir.OpLt, ir.OpAdd, 0, true},
		{0, 1, 1000, ir.OpLt, ir.OpAdd, 0, false}, // too many to unroll
	} {
		f := ir.NewFunc("loop")
		e := f.Entry()
		h, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
		e.SetJump(h)
		i := h.AddPhi(ir.I64)
		h.SetIf(h.Add(c.op, ir.Bool, i, e.Const(ir.I64, c.limit)), body, exit)
		next := body.Add(c.stepOp, ir.I64, i, body.Const(ir.I64, c.step))
		body.SetJump(h)
		i.Args = []*ir.Value{e.Const(ir.I64, c.start), next}
		exit.SetReturn()
		n, ok := tripCount(h, 0, 1, true)
		if ok != c.ok || ok && n != c.want {
			t.Errorf("%+v: %d, %v", c, n, ok)
		}
	}
}

// sumKernel sums x[0..n) in a loop whose trip count is a parameter, into
// out[0]; one thread.
func sumKernel() *ir.Func {
	f := ir.NewFunc("sum")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	x, out, n := param("x", ir.U64), param("out", ir.U64), param("n", ir.I64)
	f.Params[2].NonNeg = true
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	e.SetJump(head)
	i := head.AddPhi(ir.I64)
	sum := head.AddPhi(ir.I64)
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, n), body, exit)
	addr := body.Add(ir.OpAdd, ir.U64, x, body.Add(ir.OpMul, ir.U64, body.Add(ir.OpConvert, ir.U64, i), body.Const(ir.U64, 8)))
	l := body.Add(ir.OpLoad, ir.I64, addr)
	l.Space = ir.Global
	// sum = sum*3 + x[i]: the order of the iterations shows.
	s2 := body.Add(ir.OpAdd, ir.I64, body.Add(ir.OpMul, ir.I64, sum, body.Const(ir.I64, 3)), l)
	next := body.Add(ir.OpAdd, ir.I64, i, body.Const(ir.I64, 1))
	body.SetJump(head)
	i.Args = []*ir.Value{e.Const(ir.I64, 0), next}
	sum.Args = []*ir.Value{e.Const(ir.I64, 0), s2}
	exit.Add(ir.OpStore, ir.Void, out, sum).Space = ir.Global
	exit.SetReturn()
	return f
}

// TestPartialUnroll: a loop with a run-time trip count does four
// iterations a step and then the rest, with the results of the loop as
// written, for every count around the step.
func TestPartialUnroll(t *testing.T) {
	f := sumKernel()
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpLoad }); n != unrollBy+1 {
		t.Errorf("%d loads after unrolling, want %d:\n%s", n, unrollBy+1, f)
	}
	for n := range 14 {
		for _, g := range []*ir.Func{sumKernel(), f} {
			mem := interp.NewMemory()
			xa, oa := mem.Alloc(8*16), mem.Alloc(8)
			xb := mem.Bytes(xa, 8*16)
			var want int64
			for k := range 16 {
				binary.LittleEndian.PutUint64(xb[8*k:], uint64(k+1))
				if k < n {
					want = want*3 + int64(k+1)
				}
			}
			if err := interp.Launch(g, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{xa, oa, uint64(n)}, mem); err != nil {
				t.Fatal(err)
			}
			if got := int64(binary.LittleEndian.Uint64(mem.Bytes(oa, 8))); got != want {
				t.Errorf("n=%d: %d, want %d", n, got, want)
			}
		}
	}
}

// checkedSumKernel sums x[0..n) like sumKernel, each index checked against
// m (a view's extent): an index outside reads 0 and counts a failure,
// stored in out[1].
func checkedSumKernel() *ir.Func {
	f := ir.NewFunc("checked")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		f.Params[v.Aux].NonNeg = t == ir.I64
		return v
	}
	x, out, n, m := param("x", ir.U64), param("out", ir.U64), param("n", ir.I64), param("m", ir.I64)
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	e.SetJump(head)
	i := head.AddPhi(ir.I64)
	sum := head.AddPhi(ir.I64)
	bad := head.AddPhi(ir.I64)
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, n), body, exit)
	ok := body.Add(ir.OpLt, ir.Bool, body.Add(ir.OpConvert, ir.U64, i), body.Add(ir.OpConvert, ir.U64, m))
	addr := body.Add(ir.OpAdd, ir.U64, x, body.Add(ir.OpMul, ir.U64, body.Add(ir.OpConvert, ir.U64, i), body.Const(ir.U64, 8)))
	l := body.Add(ir.OpLoad, ir.I64, body.Add(ir.OpSelect, ir.U64, ok, addr, x))
	l.Space = ir.Global
	v := body.Add(ir.OpSelect, ir.I64, ok, l, body.Const(ir.I64, 0))
	s2 := body.Add(ir.OpAdd, ir.I64, body.Add(ir.OpMul, ir.I64, sum, body.Const(ir.I64, 3)), v)
	b2 := body.Add(ir.OpAdd, ir.I64, bad, body.Add(ir.OpSelect, ir.I64, ok, body.Const(ir.I64, 0), body.Const(ir.I64, 1)))
	next := body.Add(ir.OpAdd, ir.I64, i, body.Const(ir.I64, 1))
	body.SetJump(head)
	i.Args = []*ir.Value{e.Const(ir.I64, 0), next}
	sum.Args = []*ir.Value{e.Const(ir.I64, 0), s2}
	bad.Args = []*ir.Value{e.Const(ir.I64, 0), b2}
	exit.Add(ir.OpStore, ir.Void, out, sum).Space = ir.Global
	exit.Add(ir.OpStore, ir.Void, exit.Add(ir.OpAdd, ir.U64, out, exit.Const(ir.U64, 8)), bad).Space = ir.Global
	exit.SetReturn()
	return f
}

// TestLoopVersioning: the loop gets a copy without the check, taken when
// n <= m, and both copies give the results of the loop as written, on
// either side of the test.
func TestLoopVersioning(t *testing.T) {
	f := checkedSumKernel()
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpLe }); n == 0 {
		t.Errorf("no n <= m test before the loop:\n%s", f)
	}
	for n := range 12 {
		for _, m := range []int{0, 3, n - 1, n, n + 2, 16} {
			if m < 0 {
				continue
			}
			var res [2][2]int64
			for k, g := range []*ir.Func{checkedSumKernel(), f} {
				mem := interp.NewMemory()
				xa, oa := mem.Alloc(8*16), mem.Alloc(16)
				xb := mem.Bytes(xa, 8*16)
				for j := range 16 {
					binary.LittleEndian.PutUint64(xb[8*j:], uint64(j+1))
				}
				if err := interp.Launch(g, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{xa, oa, uint64(n), uint64(m)}, mem); err != nil {
					t.Fatal(err)
				}
				ob := mem.Bytes(oa, 16)
				res[k] = [2]int64{int64(binary.LittleEndian.Uint64(ob)), int64(binary.LittleEndian.Uint64(ob[8:]))}
			}
			if res[0] != res[1] {
				t.Errorf("n=%d m=%d: optimized %v, as written %v", n, m, res[1], res[0])
			}
		}
	}
}

// TestNoVersioningAcrossBarriers: a loop with a barrier is not copied
// (threads of a warp could take different copies and wait at different
// bar.sync instructions, which hangs a GPU).
func TestNoVersioningAcrossBarriers(t *testing.T) {
	f := checkedSumKernel()
	body := f.Blocks[2]
	b := f.NewValue(body, ir.OpBarrier, ir.Void)
	b.Aux = 1
	body.Values = append([]*ir.Value{b}, body.Values...)
	Optimize(f)
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpBarrier }); n != 1 {
		t.Errorf("%d barriers after optimizing, want 1", n)
	}
}
