package opt

import (
	"encoding/binary"
	"testing"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// columnSumKernel sums column j of a row-major matrix at x with row
// stride s over rows [0, n), into out[0]; one thread. Each iteration
// keeps the thread's fault word, a one-word local, as the front end
// writes it for a checked view access: load it, take the max with 0,
// store it back. The element's address is x + (i*s + j)*8: the 64-bit
// multiply strength reduction removes from the loop.
func columnSumKernel() *ir.Func {
	f := ir.NewFunc("colsum")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	x, out, n, s, j := param("x", ir.U64), param("out", ir.U64), param("n", ir.I64), param("s", ir.I64), param("j", ir.I64)
	f.Params[2].NonNeg = true
	fault := e.Add(ir.OpLocalAddr, ir.U64)
	fault.Aux = f.AddLocal("fault", ir.U32, 1)
	e.Add(ir.OpStore, ir.Void, fault, e.Const(ir.U32, 0)).Space = ir.Local
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	e.SetJump(head)
	i := head.AddPhi(ir.I64)
	sum := head.AddPhi(ir.I64)
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, n), body, exit)
	idx := body.Add(ir.OpAdd, ir.I64, body.Add(ir.OpMul, ir.I64, i, s), j)
	addr := body.Add(ir.OpAdd, ir.U64, x, body.Add(ir.OpMul, ir.U64, body.Add(ir.OpConvert, ir.U64, idx), body.Const(ir.U64, 8)))
	l := body.Add(ir.OpLoad, ir.I64, addr)
	l.Space = ir.Global
	old := body.Add(ir.OpLoad, ir.U32, fault)
	old.Space = ir.Local
	body.Add(ir.OpStore, ir.Void, fault, body.Add(ir.OpMax, ir.U32, old, body.Const(ir.U32, 0))).Space = ir.Local
	s2 := body.Add(ir.OpAdd, ir.I64, body.Add(ir.OpMul, ir.I64, sum, body.Const(ir.I64, 3)), l)
	next := body.Add(ir.OpAdd, ir.I64, i, body.Const(ir.I64, 1))
	body.SetJump(head)
	i.Args = []*ir.Value{e.Const(ir.I64, 0), next}
	sum.Args = []*ir.Value{e.Const(ir.I64, 0), s2}
	w := exit.Add(ir.OpLoad, ir.U32, fault)
	w.Space = ir.Local
	exit.Add(ir.OpStore, ir.Void, out, exit.Add(ir.OpAdd, ir.I64, sum, exit.Add(ir.OpConvert, ir.I64, w))).Space = ir.Global
	exit.SetReturn()
	return f
}

// loopBlocks are the blocks on a cycle of f's control flow.
func loopBlocks(f *ir.Func) map[*ir.Block]bool {
	in := map[*ir.Block]bool{}
	for _, b := range f.Blocks {
		seen := map[*ir.Block]bool{}
		work := append([]*ir.Block(nil), b.Succs...)
		for len(work) > 0 {
			x := work[len(work)-1]
			work = work[:len(work)-1]
			if x == b {
				in[b] = true
				break
			}
			if !seen[x] {
				seen[x] = true
				work = append(work, x.Succs...)
			}
		}
	}
	return in
}

// TestStrengthReduction: after Optimize, no loop multiplies addresses (the address
// is a pointer stepped by s*8, the fault word's loads, max and stores are
// gone), and the sums are those of the kernel as written for every row
// count around the unrolling step, for positive, zero and negative
// strides (which wrap the same way in both).
func TestStrengthReduction(t *testing.T) {
	f := columnSumKernel()
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	loops := loopBlocks(f)
	if len(loops) == 0 {
		t.Fatalf("no loop left:\n%s", f)
	}
	for b := range loops {
		for _, v := range b.Values {
			if (v.Op == ir.OpMul && v.Type == ir.U64) || v.Op == ir.OpMax || (v.Space == ir.Local && (v.Op == ir.OpLoad || v.Op == ir.OpStore)) {
				t.Errorf("loop block b%d keeps %s:\n%s", b.ID, v.Op, f)
			}
		}
	}
	const rows, cols = 13, 5
	for n := range rows + 1 {
		for _, st := range []struct{ s, j, base int64 }{{cols, 2, 0}, {cols, 0, 0}, {0, 3, 0}, {-cols, 4, (rows - 1) * cols}} {
			var results [2]int64
			for k, g := range []*ir.Func{columnSumKernel(), f} {
				mem := interp.NewMemory()
				xa, oa := mem.Alloc(8*rows*cols), mem.Alloc(8)
				xb := mem.Bytes(xa, 8*rows*cols)
				for e := range rows * cols {
					binary.LittleEndian.PutUint64(xb[8*e:], uint64(e*e+1))
				}
				args := []uint64{xa + uint64(8*st.base), oa, uint64(n), uint64(st.s), uint64(st.j)}
				if err := interp.Launch(g, [3]int{1, 1, 1}, [3]int{1, 1, 1}, args, mem); err != nil {
					t.Fatal(err)
				}
				results[k] = int64(binary.LittleEndian.Uint64(mem.Bytes(oa, 8)))
			}
			if results[0] != results[1] {
				t.Errorf("n=%d s=%d j=%d: optimized %d, as written %d", n, st.s, st.j, results[1], results[0])
			}
		}
	}
}

// rowSumKernel has each of 8 threads fill its row of a tile_static 8x4
// array, s[tid*4 + i] = x[tid]*(i+1) for i < 4, and sum the row back into
// out[tid], all in one block, with addresses as the front end writes
// them: sym + (tid*4 + i)*4.
func rowSumKernel() *ir.Func {
	f := ir.NewFunc("rowsum")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	x, out := param("x", ir.U64), param("out", ir.U64)
	arr := f.AddShared("s", ir.I32, 32)
	tid := e.Add(ir.OpSpecial, ir.U32)
	tid.Aux = int(ir.TidX)
	g := func(base *ir.Value) *ir.Value {
		return e.Add(ir.OpAdd, ir.U64, base, e.Add(ir.OpMul, ir.U64, e.Add(ir.OpConvert, ir.U64, tid), e.Const(ir.U64, 4)))
	}
	xv := e.Add(ir.OpLoad, ir.I32, g(x))
	xv.Space = ir.Global
	elem := func(i int64) *ir.Value {
		sym := e.Add(ir.OpSharedAddr, ir.U32)
		sym.Aux = arr
		idx := e.Add(ir.OpAdd, ir.U32, e.Add(ir.OpMul, ir.U32, tid, e.Const(ir.U32, 4)), e.Const(ir.U32, i))
		return e.Add(ir.OpAdd, ir.U32, sym, e.Add(ir.OpMul, ir.U32, idx, e.Const(ir.U32, 4)))
	}
	for i := range int64(4) {
		e.Add(ir.OpStore, ir.Void, elem(i), e.Add(ir.OpMul, ir.I32, xv, e.Const(ir.I32, i+1))).Space = ir.Shared
	}
	var sum *ir.Value
	for i := range int64(4) {
		l := e.Add(ir.OpLoad, ir.I32, elem(i))
		l.Space = ir.Shared
		if sum == nil {
			sum = l
		} else {
			sum = e.Add(ir.OpAdd, ir.I32, sum, l)
		}
	}
	e.Add(ir.OpStore, ir.Void, g(out), sum).Space = ir.Global
	e.SetReturn()
	return f
}

// TestSplitAddresses: the eight tile_static accesses of a row share one
// base register and differ by constants, and the results are those of
// the kernel as written.
func TestSplitAddresses(t *testing.T) {
	f := rowSumKernel()
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	bases := map[*ir.Value]int{}
	for _, v := range f.Entry().Values {
		if (v.Op == ir.OpLoad || v.Op == ir.OpStore) && v.Space == ir.Shared {
			a := v.Args[0]
			if a.Op == ir.OpAdd && a.Args[1].Op == ir.OpConst {
				a = a.Args[0]
			}
			bases[a]++
		}
	}
	if len(bases) != 1 {
		t.Errorf("the accesses have %d bases, want 1:\n%s", len(bases), f)
	}
	var results [2][]int32
	for k, g := range []*ir.Func{rowSumKernel(), f} {
		mem := interp.NewMemory()
		xa, oa := mem.Alloc(4*8), mem.Alloc(4*8)
		xb := mem.Bytes(xa, 4*8)
		for i := range 8 {
			binary.LittleEndian.PutUint32(xb[4*i:], uint32(i*i+3))
		}
		if err := interp.Launch(g, [3]int{1, 1, 1}, [3]int{8, 1, 1}, []uint64{xa, oa}, mem); err != nil {
			t.Fatal(err)
		}
		ob := mem.Bytes(oa, 4*8)
		for i := range 8 {
			results[k] = append(results[k], int32(binary.LittleEndian.Uint32(ob[4*i:])))
		}
	}
	for i := range 8 {
		if want := int32((i*i + 3) * 10); results[0][i] != want || results[1][i] != want {
			t.Errorf("thread %d: optimized %d, as written %d, want %d", i, results[1][i], results[0][i], want)
		}
	}
}

// strideSumKernel sums x[i] for i = i0, i0+s, ... below n, into out[0],
// with every index checked against m as a view's is (a failed check reads
// 0 and sets out[1]); one thread. The step s is a parameter: the
// grid-stride loop of a reduction.
func strideSumKernel() *ir.Func {
	f := ir.NewFunc("stridesum")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	x, out, n, s, m, i0 := param("x", ir.U64), param("out", ir.U64), param("n", ir.I64), param("s", ir.I64), param("m", ir.I64), param("i0", ir.I64)
	f.Params[4].NonNeg = true
	f.Params[5].NonNeg = true
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
	bad2 := body.Add(ir.OpSelect, ir.I64, ok, bad, body.Const(ir.I64, 1))
	next := body.Add(ir.OpAdd, ir.I64, i, s)
	body.SetJump(head)
	i.Args = []*ir.Value{i0, next}
	sum.Args = []*ir.Value{e.Const(ir.I64, 0), s2}
	bad.Args = []*ir.Value{e.Const(ir.I64, 0), bad2}
	exit.Add(ir.OpStore, ir.Void, out, sum).Space = ir.Global
	exit.Add(ir.OpStore, ir.Void, exit.Add(ir.OpAdd, ir.U64, out, exit.Const(ir.U64, 8)), bad).Space = ir.Global
	exit.SetReturn()
	return f
}

// TestRuntimeStepLoop: a loop stepped by a parameter is versioned (a copy
// without the index check) and unrolled by four, its addresses stepped
// as pointers; the results, including a failed check's report, are those
// of the loop as written for steps that pass the guard and one (2^41)
// that does not.
func TestRuntimeStepLoop(t *testing.T) {
	f := strideSumKernel()
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpLoad }); n < unrollBy+2 {
		t.Errorf("%d loads: the loop is not unrolled or not versioned:\n%s", n, f)
	}
	const size = 40
	for _, st := range []struct{ n, s, m, i0 int64 }{
		{size, 1, size, 0}, {size, 3, size, 2}, {size - 3, 7, size, 1}, {size, 5, size - 6, 0},
		{3, 1, size, 0}, {0, 2, size, 0}, {size, 1 << 41, size, 4}, {size, 2, 0, 0},
	} {
		var results [2][2]int64
		for k, g := range []*ir.Func{strideSumKernel(), f} {
			mem := interp.NewMemory()
			xa, oa := mem.Alloc(8*size), mem.Alloc(16)
			xb := mem.Bytes(xa, 8*size)
			for e := range size {
				binary.LittleEndian.PutUint64(xb[8*e:], uint64(e*e+1))
			}
			args := []uint64{xa, oa, uint64(st.n), uint64(st.s), uint64(st.m), uint64(st.i0)}
			if err := interp.Launch(g, [3]int{1, 1, 1}, [3]int{1, 1, 1}, args, mem); err != nil {
				t.Fatal(err)
			}
			ob := mem.Bytes(oa, 16)
			results[k] = [2]int64{int64(binary.LittleEndian.Uint64(ob)), int64(binary.LittleEndian.Uint64(ob[8:]))}
		}
		if results[0] != results[1] {
			t.Errorf("%+v: optimized %v, as written %v", st, results[1], results[0])
		}
	}
}

// divKernel stores tid/4, tid%8 and p/4, p%8 for a parameter p that may
// be negative: out[4*tid ...].
func divKernel() *ir.Func {
	f := ir.NewFunc("div")
	e := f.Entry()
	out := e.Add(ir.OpParam, ir.U64)
	out.Aux = f.AddParam("out", ir.U64)
	p := e.Add(ir.OpParam, ir.I64)
	p.Aux = f.AddParam("p", ir.I64)
	tid := e.Add(ir.OpSpecial, ir.U32)
	tid.Aux = int(ir.TidX)
	t := e.Add(ir.OpConvert, ir.I64, tid)
	base := e.Add(ir.OpAdd, ir.U64, out, e.Add(ir.OpMul, ir.U64, e.Add(ir.OpConvert, ir.U64, tid), e.Const(ir.U64, 32)))
	for i, v := range []*ir.Value{
		e.Add(ir.OpDiv, ir.I64, t, e.Const(ir.I64, 4)), e.Add(ir.OpRem, ir.I64, t, e.Const(ir.I64, 8)),
		e.Add(ir.OpDiv, ir.I64, p, e.Const(ir.I64, 4)), e.Add(ir.OpRem, ir.I64, p, e.Const(ir.I64, 8)),
	} {
		e.Add(ir.OpStore, ir.Void, e.Add(ir.OpAdd, ir.U64, base, e.Const(ir.U64, int64(8*i))), v).Space = ir.Global
	}
	e.SetReturn()
	return f
}

// TestDivisionByShifting: a division and a remainder by powers of two of
// a value that is never negative become a shift and a mask; those of a
// value that may be negative stay (Go truncates towards zero); the
// results are Go's.
func TestDivisionByShifting(t *testing.T) {
	f := divKernel()
	Optimize(f)
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpDiv || v.Op == ir.OpRem }); n != 2 {
		t.Errorf("%d divisions and remainders left, want the 2 of the parameter:\n%s", n, f)
	}
	for _, p := range []int64{-13, -8, -1, 0, 5, 1<<40 + 7} {
		mem := interp.NewMemory()
		oa := mem.Alloc(32 * 16)
		if err := interp.Launch(f, [3]int{1, 1, 1}, [3]int{16, 1, 1}, []uint64{oa, uint64(p)}, mem); err != nil {
			t.Fatal(err)
		}
		ob := mem.Bytes(oa, 32*16)
		for tid := range int64(16) {
			want := []int64{tid / 4, tid % 8, p / 4, p % 8}
			for i, w := range want {
				if got := int64(binary.LittleEndian.Uint64(ob[32*tid+8*int64(i):])); got != w {
					t.Errorf("p=%d tid=%d result %d: %d, want %d", p, tid, i, got, w)
				}
			}
		}
	}
}

// TestCommonSubexpressions: a kernel's own test of i+1 < n and the view
// check of the same i+1 it guards become one comparison's fact: the check
// goes, as the two additions are made one value.
func TestCommonSubexpressions(t *testing.T) {
	f := ir.NewFunc("cse")
	e := f.Entry()
	n := e.Add(ir.OpParam, ir.I64)
	n.Aux = f.AddParam("n", ir.I64)
	f.Params[0].NonNeg = true
	out := e.Add(ir.OpParam, ir.U64)
	out.Aux = f.AddParam("out", ir.U64)
	tid := e.Add(ir.OpConvert, ir.I64, e.Add(ir.OpSpecial, ir.U32))
	guard := e.Add(ir.OpLt, ir.Bool, e.Add(ir.OpAdd, ir.I64, tid, e.Const(ir.I64, 1)), n)
	in, exit := f.NewBlock(), f.NewBlock()
	e.SetIf(guard, in, exit)
	i1 := in.Add(ir.OpAdd, ir.I64, tid, in.Const(ir.I64, 1))
	check := in.Add(ir.OpLt, ir.Bool, in.Add(ir.OpConvert, ir.U64, i1), in.Add(ir.OpConvert, ir.U64, n))
	in.Add(ir.OpStore, ir.Void, out, in.Add(ir.OpConvert, ir.U32, check)).Space = ir.Global
	in.SetJump(exit)
	exit.SetReturn()
	Optimize(f)
	if n := count(f, func(v *ir.Value) bool { return v.Op == ir.OpLt }); n != 1 {
		t.Errorf("%d comparisons, want the guard's alone:\n%s", n, f)
	}
}
