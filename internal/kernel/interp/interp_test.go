package interp

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// Helpers that keep the hand-built kernels short.

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

func conv(b *ir.Block, t ir.Type, x *ir.Value) *ir.Value { return b.Add(ir.OpConvert, t, x) }

// elem is the address of element i (U32) of an array of t at base (U64).
func elem(b *ir.Block, base, i *ir.Value, t ir.Type) *ir.Value {
	off := b.Add(ir.OpMul, ir.U64, conv(b, ir.U64, i), b.Const(ir.U64, int64(t.Size())))
	return b.Add(ir.OpAdd, ir.U64, base, off)
}

func ld(b *ir.Block, sp ir.Space, t ir.Type, addr *ir.Value) *ir.Value {
	v := b.Add(ir.OpLoad, t, addr)
	v.Space = sp
	return v
}

func st(b *ir.Block, sp ir.Space, addr, x *ir.Value) {
	v := b.Add(ir.OpStore, ir.Void, addr, x)
	v.Space = sp
}

func atomic(b *ir.Block, sp ir.Space, op ir.Atomic, t ir.Type, args ...*ir.Value) *ir.Value {
	v := b.Add(ir.OpAtomic, t, args...)
	v.Space, v.Aux = sp, int(op)
	return v
}

func barrier(b *ir.Block) { b.Add(ir.OpBarrier, ir.Void).Aux = 1 }

func shuffle(b *ir.Block, mode ir.Shuffle, width int, x, lane *ir.Value) *ir.Value {
	v := b.Add(ir.OpShuffle, x.Type, x, lane)
	v.Aux, v.Const = int(mode), uint64(width)
	return v
}

// globalID is ctaid.x*ntid.x + tid.x.
func globalID(b *ir.Block) *ir.Value {
	return b.Add(ir.OpAdd, ir.U32, b.Add(ir.OpMul, ir.U32, special(b, ir.CtaidX), special(b, ir.NtidX)), special(b, ir.TidX))
}

func mustLaunch(t *testing.T, f *ir.Func, grid, block [3]int, params []uint64, mem *Memory) {
	t.Helper()
	if err := Launch(f, grid, block, params, mem); err != nil {
		t.Fatalf("%v\n%s", err, f)
	}
}

func f32s(m *Memory, addr uint64, n int) []float32 {
	b := m.Bytes(addr, 4*n)
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func u32s(m *Memory, addr uint64, n int) []uint32 {
	b := m.Bytes(addr, 4*n)
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func putF32s(m *Memory, addr uint64, xs []float32) {
	b := m.Bytes(addr, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

func putU32s(m *Memory, addr uint64, xs []uint32) {
	b := m.Bytes(addr, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
}

func TestSaxpy(t *testing.T) {
	f := ir.NewFunc("saxpy")
	f.AddParam("n", ir.U32)
	f.AddParam("a", ir.F32)
	f.AddParam("x", ir.U64)
	f.AddParam("y", ir.U64)
	b := f.Entry()
	body, exit := f.NewBlock(), f.NewBlock()
	i := globalID(b)
	b.SetIf(b.Add(ir.OpLt, ir.Bool, i, param(b, 0)), body, exit)
	xa := elem(body, param(body, 2), i, ir.F32)
	ya := elem(body, param(body, 3), i, ir.F32)
	ax := body.Add(ir.OpMul, ir.F32, param(body, 1), ld(body, ir.Global, ir.F32, xa))
	st(body, ir.Global, ya, body.Add(ir.OpAdd, ir.F32, ax, ld(body, ir.Global, ir.F32, ya)))
	body.SetJump(exit)
	exit.SetReturn()

	const n = 1000
	m := NewMemory()
	x, y := m.Alloc(4*n), m.Alloc(4*n)
	if x == 0 || x%256 != 0 || y%256 != 0 || y <= x {
		t.Fatalf("addresses %#x %#x", x, y)
	}
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i)*0.5, float32(n-i)
	}
	putF32s(m, x, xs)
	putF32s(m, y, ys)
	const a = float32(1.25)
	mustLaunch(t, f, [3]int{(n + 127) / 128, 1, 1}, [3]int{128, 1, 1}, []uint64{n, uint64(math.Float32bits(a)), x, y}, m)
	for i, got := range f32s(m, y, n) {
		if want := a*xs[i] + ys[i]; got != want {
			t.Fatalf("y[%d] = %v, want %v", i, got, want)
		}
	}
}

// TestPhiSwap runs x, y = y, x+y n times: the two phis of the loop header
// read each other, which is right only if they copy in parallel.
func TestPhiSwap(t *testing.T) {
	f := ir.NewFunc("fib")
	f.AddParam("out", ir.U64)
	f.AddParam("n", ir.I64)
	entry := f.Entry()
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	zero, one := entry.Const(ir.I64, 0), entry.Const(ir.I64, 1)
	n := param(entry, 1)
	entry.SetJump(head)
	x, y, i := head.AddPhi(ir.I64), head.AddPhi(ir.I64), head.AddPhi(ir.I64)
	// p, q = q, p: phis that are each other's arguments.
	p, q := head.AddPhi(ir.I64), head.AddPhi(ir.I64)
	p.Args = []*ir.Value{entry.Const(ir.I64, 10), q}
	q.Args = []*ir.Value{entry.Const(ir.I64, 20), p}
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, n), body, exit)
	sum := body.Add(ir.OpAdd, ir.I64, x, y)
	i1 := body.Add(ir.OpAdd, ir.I64, i, one)
	body.SetJump(head)
	x.Args = []*ir.Value{zero, y}
	y.Args = []*ir.Value{one, sum}
	i.Args = []*ir.Value{zero, i1}
	st(exit, ir.Global, param(exit, 0), x)
	st(exit, ir.Global, exit.Add(ir.OpAdd, ir.U64, param(exit, 0), exit.Const(ir.U64, 8)), p)
	exit.SetReturn()

	m := NewMemory()
	out := m.Alloc(16)
	for _, c := range []struct{ n, want uint64 }{{0, 0}, {1, 1}, {2, 1}, {10, 55}, {90, 2880067194370816120}} {
		mustLaunch(t, f, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{out, c.n}, m)
		if got := binary.LittleEndian.Uint64(m.Bytes(out, 8)); got != c.want {
			t.Errorf("fib(%d) = %d, want %d", c.n, got, c.want)
		}
		if got, want := binary.LittleEndian.Uint64(m.Bytes(out+8, 8)), 10+10*(c.n%2); got != want {
			t.Errorf("after %d swaps p = %d, want %d", c.n, got, want)
		}
	}
}

// reduceKernel sums in[ctaid*bs : (ctaid+1)*bs] into out[ctaid] by a tree
// in shared memory, with a barrier before every step.
func reduceKernel(bs int) *ir.Func {
	f := ir.NewFunc("reduce")
	f.AddParam("in", ir.U64)
	f.AddParam("out", ir.U64)
	f.AddShared("pad", ir.U32, 3) // so that sh does not start at 0
	sh := f.AddShared("sh", ir.F32, bs)
	entry := f.Entry()
	head, step, add, next, tail, write, exit := f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock()
	tid := special(entry, ir.TidX)
	shBase := entry.Add(ir.OpSharedAddr, ir.U32)
	shBase.Aux = sh
	four := entry.Const(ir.U32, 4)
	myAddr := entry.Add(ir.OpAdd, ir.U32, shBase, entry.Add(ir.OpMul, ir.U32, tid, four))
	x := ld(entry, ir.Global, ir.F32, elem(entry, param(entry, 0), globalID(entry), ir.F32))
	st(entry, ir.Shared, myAddr, x)
	half := entry.Const(ir.U32, int64(bs/2))
	entry.SetJump(head)

	s := head.AddPhi(ir.U32)
	head.SetIf(head.Add(ir.OpGt, ir.Bool, s, head.Const(ir.U32, 0)), step, tail)
	barrier(step)
	step.SetIf(step.Add(ir.OpLt, ir.Bool, tid, s), add, next)
	other := add.Add(ir.OpAdd, ir.U32, myAddr, add.Add(ir.OpMul, ir.U32, s, four))
	sum := add.Add(ir.OpAdd, ir.F32, ld(add, ir.Shared, ir.F32, myAddr), ld(add, ir.Shared, ir.F32, other))
	st(add, ir.Shared, myAddr, sum)
	add.SetJump(next)
	s1 := next.Add(ir.OpShr, ir.U32, s, next.Const(ir.U32, 1))
	next.SetJump(head)
	s.Args = []*ir.Value{half, s1}

	barrier(tail)
	tail.SetIf(tail.Add(ir.OpEq, ir.Bool, tid, tail.Const(ir.U32, 0)), write, exit)
	st(write, ir.Global, elem(write, param(write, 1), special(write, ir.CtaidX), ir.F32), ld(write, ir.Shared, ir.F32, shBase))
	write.SetJump(exit)
	exit.SetReturn()
	return f
}

func TestSharedReduction(t *testing.T) {
	const bs, nb = 256, 5
	f := reduceKernel(bs)
	if got := f.SharedBytes(); got != 16+4*bs {
		t.Fatalf("SharedBytes = %d", got)
	}
	m := NewMemory()
	in, out := m.Alloc(4*bs*nb), m.Alloc(4*nb)
	xs := make([]float32, bs*nb)
	for i := range xs {
		xs[i] = float32(i % 97)
	}
	putF32s(m, in, xs)
	mustLaunch(t, f, [3]int{nb, 1, 1}, [3]int{bs, 1, 1}, []uint64{in, out}, m)
	for b, got := range f32s(m, out, nb) {
		var want float32
		for _, x := range xs[b*bs : (b+1)*bs] {
			want += x // small integers: exact in any order
		}
		if got != want {
			t.Errorf("block %d: %v, want %v", b, got, want)
		}
	}
}

func TestAtomics(t *testing.T) {
	f := ir.NewFunc("atomics")
	f.AddParam("g", ir.U64) // [0] add u32, [1] max i32, [2] min u32, [3] cas u32 lock, [4] f32 add, [5] exch
	f.AddParam("status", ir.U64)
	f.AddParam("olds", ir.U64)
	cnt := f.AddShared("cnt", ir.U32, 1)
	entry := f.Entry()
	fail, rest, last, exit := f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock()
	g := param(entry, 0)
	gi := func(b *ir.Block, k int) *ir.Value { return b.Add(ir.OpAdd, ir.U64, g, b.Const(ir.U64, int64(4*k))) }
	id := globalID(entry)
	tid := special(entry, ir.TidX)
	old := atomic(entry, ir.Global, ir.AtomicAdd, ir.U32, gi(entry, 0), entry.Const(ir.U32, 1))
	st(entry, ir.Global, elem(entry, param(entry, 2), id, ir.U32), old)
	signed := entry.Add(ir.OpSub, ir.I32, conv(entry, ir.I32, id), entry.Const(ir.I32, 50))
	atomic(entry, ir.Global, ir.AtomicMax, ir.I32, gi(entry, 1), signed)
	atomic(entry, ir.Global, ir.AtomicMin, ir.U32, gi(entry, 2), entry.Add(ir.OpXor, ir.U32, id, entry.Const(ir.U32, 0x55)))
	// The first thread to find the lock 0 takes it and writes its id+1.
	won := atomic(entry, ir.Global, ir.AtomicCAS, ir.U32, gi(entry, 3), entry.Const(ir.U32, 0), entry.Add(ir.OpAdd, ir.U32, id, entry.Const(ir.U32, 1)))
	_ = won
	atomic(entry, ir.Global, ir.AtomicAdd, ir.F32, gi(entry, 4), entry.ConstFloat(ir.F32, 0.5))
	atomic(entry, ir.Global, ir.AtomicExch, ir.U32, gi(entry, 5), id)
	shAddr := entry.Add(ir.OpSharedAddr, ir.U32)
	shAddr.Aux = cnt
	atomic(entry, ir.Shared, ir.AtomicAdd, ir.U32, shAddr, entry.Const(ir.U32, 2))
	// Threads with id%7 == 3 fail, reporting code 7, arg id, where (id, 1, 2).
	seven := entry.Add(ir.OpRem, ir.U32, id, entry.Const(ir.U32, 7))
	entry.SetIf(entry.Add(ir.OpEq, ir.Bool, seven, entry.Const(ir.U32, 3)), fail, rest)
	fail.Add(ir.OpStatus, ir.Void, param(fail, 1), fail.Const(ir.U32, 7), id, conv(fail, ir.I64, id), fail.Const(ir.I64, 1), fail.Const(ir.I64, -2))
	fail.SetJump(rest)
	barrier(rest)
	rest.SetIf(rest.Add(ir.OpEq, ir.Bool, tid, rest.Const(ir.U32, 0)), last, exit)
	// Thread 0 of each block adds the block's shared count into g[6].
	atomic(last, ir.Global, ir.AtomicAdd, ir.U32, gi(last, 6), ld(last, ir.Shared, ir.U32, shAddr))
	last.SetJump(exit)
	exit.SetReturn()

	const nb, bs = 3, 40
	m := NewMemory()
	g0, st, olds := m.Alloc(4*7), m.Alloc(ir.StatusRecordBytes), m.Alloc(4*nb*bs)
	putU32s(m, g0, []uint32{0, uint32(0x80000000), math.MaxUint32, 0, 0, 0, 0})
	mustLaunch(t, f, [3]int{nb, 1, 1}, [3]int{bs, 1, 1}, []uint64{g0, st, olds}, m)
	got := u32s(m, g0, 7)
	minX := uint32(math.MaxUint32)
	for id := uint32(0); id < nb*bs; id++ {
		minX = min(minX, id^0x55)
	}
	want := []uint32{nb * bs, uint32(nb*bs - 1 - 50), minX, 1, math.Float32bits(0.5 * nb * bs), nb*bs - 1, 2 * nb * bs}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("g[%d] = %#x, want %#x", i, got[i], want[i])
		}
	}
	// Threads run in order, so each got the count of those before it.
	for i, o := range u32s(m, olds, nb*bs) {
		if o != uint32(i) {
			t.Fatalf("old[%d] = %d", i, o)
		}
	}
	rec := m.Bytes(st, ir.StatusRecordBytes)
	code, arg := binary.LittleEndian.Uint32(rec), binary.LittleEndian.Uint32(rec[4:])
	w0, w1, w2 := int64(binary.LittleEndian.Uint64(rec[8:])), int64(binary.LittleEndian.Uint64(rec[16:])), int64(binary.LittleEndian.Uint64(rec[24:]))
	if code != 7 || arg != 3 || w0 != 3 || w1 != 1 || w2 != -2 {
		t.Errorf("status %d %d %d %d %d, want the first failure 7 3 3 1 -2", code, arg, w0, w1, w2)
	}
}

// warpSum builds a kernel in which every thread loads in[id], adds over
// its warp (or group of width lanes) with shuffle-down and stores the sum
// at out[id].
func warpSum(width int) *ir.Func {
	f := ir.NewFunc("warpsum")
	f.AddParam("in", ir.U64)
	f.AddParam("out", ir.U64)
	b := f.Entry()
	id := globalID(b)
	x := ld(b, ir.Global, ir.I32, elem(b, param(b, 0), id, ir.I32))
	for d := width / 2; d > 0; d /= 2 {
		x = b.Add(ir.OpAdd, ir.I32, x, shuffle(b, ir.ShuffleDown, width, x, b.Const(ir.U32, int64(d))))
	}
	st(b, ir.Global, elem(b, param(b, 1), id, ir.I32), x)
	b.SetReturn()
	return f
}

func TestShuffleReduction(t *testing.T) {
	for _, c := range []struct{ width, threads int }{{32, 64}, {8, 64}, {32, 40}} {
		f := warpSum(c.width)
		m := NewMemory()
		in, out := m.Alloc(4*c.threads), m.Alloc(4*c.threads)
		xs := make([]uint32, c.threads)
		for i := range xs {
			xs[i] = uint32(i*i + 1)
		}
		putU32s(m, in, xs)
		mustLaunch(t, f, [3]int{1, 1, 1}, [3]int{c.threads, 1, 1}, []uint64{in, out}, m)
		got := u32s(m, out, c.threads)
		// Lane 0 of each group holds the group's sum, when the group is
		// whole; check it against a direct model of shfl.down for every lane.
		want := append([]uint32(nil), xs...)
		for d := c.width / 2; d > 0; d /= 2 {
			next := make([]uint32, len(want))
			for i := range want {
				lane, base := i%32, i-i%32
				j := lane + d
				if j/c.width != lane/c.width || base+j >= c.threads {
					j = lane
				}
				next[i] = want[i] + want[base+j]
			}
			want = next
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("width %d, %d threads: out[%d] = %d, want %d", c.width, c.threads, i, got[i], want[i])
			}
		}
		if c.threads == 64 && c.width == 32 {
			var s uint32
			for _, x := range xs[:32] {
				s += x
			}
			if got[0] != s {
				t.Errorf("warp sum %d, want %d", got[0], s)
			}
		}
	}
}

// TestShuffleModes checks up, down, bfly and idx with every width against
// PTX's rule, written out independently of the interpreter's.
func TestShuffleModes(t *testing.T) {
	for mode := ir.ShuffleUp; mode <= ir.ShuffleIdx; mode++ {
		for width := 1; width <= 32; width *= 2 {
			for _, delta := range []uint32{0, 1, 3, 5, 17, 31, 33} {
				f := ir.NewFunc("shfl")
				f.AddParam("out", ir.U64)
				b := f.Entry()
				id := special(b, ir.TidX)
				x := b.Add(ir.OpAdd, ir.U32, id, b.Const(ir.U32, 1000))
				r := shuffle(b, mode, width, x, b.Const(ir.U32, int64(delta)))
				st(b, ir.Global, elem(b, param(b, 0), id, ir.U32), r)
				b.SetReturn()
				m := NewMemory()
				out := m.Alloc(4 * 32)
				mustLaunch(t, f, [3]int{1, 1, 1}, [3]int{32, 1, 1}, []uint64{out}, m)
				for lane, got := range u32s(m, out, 32) {
					d := int(delta & 31)
					g0 := lane / width * width
					src := lane
					switch mode {
					case ir.ShuffleUp:
						if lane-d >= g0 {
							src = lane - d
						}
					case ir.ShuffleDown:
						if lane+d < g0+width {
							src = lane + d
						}
					case ir.ShuffleXor:
						if j := lane ^ d; j < g0+width {
							src = j
						}
					case ir.ShuffleIdx:
						src = g0 + d%width
					}
					if want := uint32(1000 + src); got != want {
						t.Fatalf("%s width %d delta %d: lane %d got %d, want %d", mode, width, delta, lane, got, want)
					}
				}
			}
		}
	}
}

// TestBarrierAfterReturn: threads past the first 20 return at once; the
// others meet at a barrier, which must not wait for the returned ones,
// and then read what their neighbours wrote before it.
func TestBarrierAfterReturn(t *testing.T) {
	f := ir.NewFunc("early")
	f.AddParam("out", ir.U64)
	sh := f.AddShared("sh", ir.U32, 64)
	entry := f.Entry()
	work, exit := f.NewBlock(), f.NewBlock()
	tid := special(entry, ir.TidX)
	entry.SetIf(entry.Add(ir.OpLt, ir.Bool, tid, entry.Const(ir.U32, 20)), work, exit)
	base := work.Add(ir.OpSharedAddr, ir.U32)
	base.Aux = sh
	four := work.Const(ir.U32, 4)
	st(work, ir.Shared, work.Add(ir.OpAdd, ir.U32, base, work.Add(ir.OpMul, ir.U32, tid, four)), work.Add(ir.OpMul, ir.U32, tid, tid))
	barrier(work)
	nb := work.Add(ir.OpRem, ir.U32, work.Add(ir.OpAdd, ir.U32, tid, work.Const(ir.U32, 1)), work.Const(ir.U32, 20))
	v := ld(work, ir.Shared, ir.U32, work.Add(ir.OpAdd, ir.U32, base, work.Add(ir.OpMul, ir.U32, nb, four)))
	st(work, ir.Global, elem(work, param(work, 0), tid, ir.U32), v)
	work.SetJump(exit)
	exit.SetReturn()
	m := NewMemory()
	out := m.Alloc(4 * 64)
	mustLaunch(t, f, [3]int{2, 1, 1}, [3]int{64, 1, 1}, []uint64{out}, m)
	for i, got := range u32s(m, out, 64) {
		var want uint32
		if i < 20 {
			n := uint32((i + 1) % 20)
			want = n * n
		}
		if got != want {
			t.Errorf("out[%d] = %d, want %d", i, got, want)
		}
	}
}

// runConvert converts x (bits of type from, a U32 0 or 1 for Bool) to type
// to and returns the result's bits (Bool as 0 or 1).
func runConvert(t *testing.T, from, to ir.Type, x uint64) uint64 {
	t.Helper()
	f := ir.NewFunc("cvt")
	f.AddParam("out", ir.U64)
	pt := from
	if from == ir.Bool {
		pt = ir.U32
	}
	f.AddParam("x", pt)
	b := f.Entry()
	v := param(b, 1)
	if from == ir.Bool {
		v = b.Add(ir.OpNe, ir.Bool, v, b.Const(ir.U32, 0))
	}
	r := conv(b, to, v)
	if to == ir.Bool {
		r = b.Add(ir.OpSelect, ir.U64, r, b.Const(ir.U64, 1), b.Const(ir.U64, 0))
	} else {
		r = conv(b, ir.U64, b.Add(ir.OpBitcast, map[int]ir.Type{4: ir.U32, 8: ir.U64}[to.Size()], r))
	}
	st(b, ir.Global, param(b, 0), r)
	b.SetReturn()
	m := NewMemory()
	out := m.Alloc(8)
	mustLaunch(t, f, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{out, x}, m)
	return binary.LittleEndian.Uint64(m.Bytes(out, 8))
}

func TestConvert(t *testing.T) {
	fb := func(x float32) uint64 { return uint64(math.Float32bits(x)) }
	db := math.Float64bits
	nan32, nan64 := uint64(0x7fc00000), uint64(0x7ff8000000000000)
	inf := math.Inf(1)
	type c struct {
		from, to ir.Type
		x, want  uint64
	}
	cases := []c{
		// Float to integer: truncation and PTX's saturation.
		{ir.F64, ir.I32, db(-2.9), uint64(uint32(0xfffffffe))},
		{ir.F64, ir.I32, db(2.9), 2},
		{ir.F64, ir.I32, db(3e9), math.MaxInt32},
		{ir.F64, ir.I32, db(-3e9), 0x80000000},
		{ir.F64, ir.I32, db(-2147483648.9), 0x80000000},
		{ir.F64, ir.I32, db(2147483647.9), math.MaxInt32},
		{ir.F64, ir.I32, nan64, 0},
		{ir.F64, ir.I32, db(-inf), 0x80000000},
		{ir.F64, ir.U32, db(-0.9), 0},
		{ir.F64, ir.U32, db(-5), 0},
		{ir.F64, ir.U32, db(4294967295.5), math.MaxUint32},
		{ir.F64, ir.U32, db(5e9), math.MaxUint32},
		{ir.F64, ir.U32, nan64, 0},
		{ir.F64, ir.I64, db(9.3e18), math.MaxInt64},
		{ir.F64, ir.I64, db(-9.3e18), 1 << 63},
		{ir.F64, ir.I64, db(-9223372036854775808), 1 << 63},
		{ir.F64, ir.I64, db(-1.5), math.MaxUint64},
		{ir.F64, ir.I64, nan64, 0},
		{ir.F64, ir.U64, db(1.8446744073709552e19), math.MaxUint64},
		{ir.F64, ir.U64, db(1.8446744073709550e19), 18446744073709549568},
		{ir.F64, ir.U64, db(-1), 0},
		{ir.F64, ir.U64, db(inf), math.MaxUint64},
		{ir.F32, ir.I32, fb(-7.5), uint64(uint32(0xfffffff9))},
		{ir.F32, ir.I32, fb(3e9), math.MaxInt32},
		{ir.F32, ir.U32, fb(4e9), 4000000000},
		{ir.F32, ir.I64, nan32, 0},
		{ir.F32, ir.U64, fb(-0.5), 0},
		{ir.F32, ir.U64, fb(1e20), math.MaxUint64},
		// Float to float: round to nearest even, overflow to Inf.
		{ir.F64, ir.F32, db(1 + 0x1p-24), fb(1)},
		{ir.F64, ir.F32, db(1 + 0x1p-24 + 0x1p-50), fb(1 + 0x1p-23)},
		{ir.F64, ir.F32, db(1e39), fb(float32(inf))},
		{ir.F64, ir.F32, db(1e-46), fb(0)},
		{ir.F64, ir.F32, db(-0x1p-149), fb(float32(math.Copysign(0x1p-149, -1)))},
		{ir.F64, ir.F32, nan64, nan32},
		{ir.F32, ir.F64, fb(0x1p-149), db(0x1p-149)},
		{ir.F32, ir.F64, fb(float32(math.Copysign(0, -1))), db(math.Copysign(0, -1))},
		// Integer to float: round to nearest even from the full value.
		{ir.I64, ir.F32, 1<<24 + 1, fb(1 << 24)},
		{ir.I64, ir.F32, 1<<24 + 3, fb(1<<24 + 4)},
		{ir.U64, ir.F32, math.MaxUint64, fb(0x1p64)},
		{ir.U64, ir.F64, 1<<63 + 1025, db(0x1p63 + 2048)},
		{ir.I64, ir.F64, math.MaxUint64, db(-1)},
		{ir.I32, ir.F64, 0xffffffff, db(-1)},
		{ir.U32, ir.F64, 0xffffffff, db(4294967295)},
		{ir.I32, ir.F32, 0x7fffffff, fb(0x1p31)},
		{ir.U32, ir.F32, 0xffffffff, fb(0x1p32)},
		// Integer to integer: extension by the source's signedness, then
		// wrapping.
		{ir.I32, ir.I64, 0xffffffff, math.MaxUint64},
		{ir.I32, ir.U64, 0x80000000, 0xffffffff80000000},
		{ir.U32, ir.I64, 0xffffffff, 0xffffffff},
		{ir.I64, ir.I32, 0x123456789, 0x23456789},
		{ir.U64, ir.U32, math.MaxUint64, 0xffffffff},
		{ir.I32, ir.U32, 0xffffffff, 0xffffffff},
		{ir.U64, ir.I64, 1 << 63, 1 << 63},
		// Bool.
		{ir.Bool, ir.I32, 1, 1},
		{ir.Bool, ir.U64, 0, 0},
		{ir.Bool, ir.F64, 1, db(1)},
		{ir.Bool, ir.F32, 0, fb(0)},
		{ir.I32, ir.Bool, 0x80000000, 1},
		{ir.U64, ir.Bool, 0, 0},
		{ir.F64, ir.Bool, db(math.Copysign(0, -1)), 0},
		{ir.F64, ir.Bool, nan64, 1},
		{ir.F32, ir.Bool, fb(0x1p-149), 1},
		{ir.Bool, ir.Bool, 1, 1},
	}
	types := []ir.Type{ir.Bool, ir.I32, ir.U32, ir.I64, ir.U64, ir.F32, ir.F64}
	covered := map[[2]ir.Type]bool{}
	for _, c := range cases {
		covered[[2]ir.Type{c.from, c.to}] = true
		if got := runConvert(t, c.from, c.to, c.x); got != c.want {
			t.Errorf("%s -> %s of %#x: %#x, want %#x", c.from, c.to, c.x, got, c.want)
		}
	}
	// Every pair also converts a small value the obvious way.
	for _, from := range types {
		for _, to := range types {
			x := uint64(3)
			switch from {
			case ir.Bool:
				x = 1
			case ir.F32:
				x = fb(3)
			case ir.F64:
				x = db(3)
			}
			want := uint64(3)
			switch to {
			case ir.Bool:
				want = 1
			case ir.F32:
				want = fb(3)
			case ir.F64:
				want = db(3)
			}
			if from == ir.Bool && to != ir.Bool {
				want = map[ir.Type]uint64{ir.F32: fb(1), ir.F64: db(1)}[to]
				if to.IsInt() {
					want = 1
				}
			}
			if got := runConvert(t, from, to, x); got != want {
				t.Errorf("%s -> %s of %#x: %#x, want %#x", from, to, x, got, want)
			}
		}
	}
}

func TestFMA32(t *testing.T) {
	// Random operands, many of them made so that x*y+z lands near a
	// float32 halfway point, against exact big.Float arithmetic.
	rng := rand.New(rand.NewPCG(1, 2))
	exact := func(x, y, z float32) float32 {
		const prec = 1000 // wide enough for any float32 x*y+z
		p := new(big.Float).SetPrec(prec).Mul(big.NewFloat(float64(x)), big.NewFloat(float64(y)))
		p.Add(p, big.NewFloat(float64(z)))
		r, _ := p.Float32()
		return r
	}
	for i := range 200000 {
		x := math.Float32frombits(rng.Uint32())
		y := math.Float32frombits(rng.Uint32())
		var z float32
		switch i % 3 {
		case 0:
			z = math.Float32frombits(rng.Uint32())
		case 1: // z cancels most of x*y
			z = -float32(float64(x) * float64(y))
		default: // z a quarter ulp or so of x*y away
			x = float32(1 + float64(rng.Uint32()>>8)*0x1p-24)
			y = float32(1 + float64(rng.Uint32()>>8)*0x1p-24)
			z = float32(float64(rng.Uint32()>>8) * 0x1p-70)
		}
		if x != x || y != y || z != z || math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) || math.IsInf(float64(z), 0) {
			continue
		}
		if got, want := fma32(x, y, z), exact(x, y, z); got != want && !(got == 0 && want == 0) {
			t.Fatalf("fma32(%x, %x, %x) = %x, want %x", x, y, z, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	divf := func(t ir.Type) *ir.Func {
		f := ir.NewFunc("div")
		f.AddParam("x", t)
		f.AddParam("y", t)
		f.AddParam("out", ir.U64)
		b := f.Entry()
		q := b.Add(ir.OpDiv, t, param(b, 0), param(b, 1))
		st(b, ir.Global, param(b, 2), q)
		b.SetReturn()
		return f
	}
	m := NewMemory()
	out := m.Alloc(8)
	err := Launch(divf(ir.I32), [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{1, 0, out}, m)
	if err == nil || !strings.Contains(err.Error(), "interp: div: b0: v2 = div i32 v0 v1: integer division by zero") {
		t.Errorf("division by zero: %v", err)
	}
	// MinInt / -1 wraps.
	mustLaunch(t, divf(ir.I32), [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{0x80000000, 0xffffffff, out}, m)
	if got := binary.LittleEndian.Uint32(m.Bytes(out, 4)); got != 0x80000000 {
		t.Errorf("MinInt32 / -1 = %#x", got)
	}
	mustLaunch(t, divf(ir.I64), [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{1 << 63, math.MaxUint64, out}, m)
	if got := binary.LittleEndian.Uint64(m.Bytes(out, 8)); got != 1<<63 {
		t.Errorf("MinInt64 / -1 = %#x", got)
	}

	// Out of bounds.
	err = Launch(divf(ir.I32), [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{1, 1, out + 6}, m)
	if err == nil || !strings.Contains(err.Error(), "outside any allocation") {
		t.Errorf("out of bounds: %v", err)
	}

	// A loop that never ends.
	f := ir.NewFunc("hang")
	loop := f.NewBlock()
	f.Entry().SetJump(loop)
	loop.SetJump(loop)
	old := maxSteps
	maxSteps = 1e5
	defer func() { maxSteps = old }()
	if err := Launch(f, [3]int{1, 1, 1}, [3]int{1, 1, 1}, nil, m); err == nil || !strings.Contains(err.Error(), "does not end") {
		t.Errorf("endless loop: %v", err)
	}

	// A shuffle that half the warp skips.
	f = ir.NewFunc("half")
	entry := f.Entry()
	sh, exit := f.NewBlock(), f.NewBlock()
	entry.SetIf(entry.Add(ir.OpLt, ir.Bool, special(entry, ir.TidX), entry.Const(ir.U32, 16)), sh, exit)
	shuffle(sh, ir.ShuffleXor, 32, sh.Const(ir.U32, 1), sh.Const(ir.U32, 1))
	sh.SetJump(exit)
	exit.SetReturn()
	if err := Launch(f, [3]int{1, 1, 1}, [3]int{32, 1, 1}, nil, m); err == nil || !strings.Contains(err.Error(), "only part of a warp") {
		t.Errorf("partial shuffle: %v", err)
	}
	// Wrong parameter count and an invalid function.
	if err := Launch(divf(ir.I32), [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{1}, m); err == nil {
		t.Error("wrong parameter count accepted")
	}
	if err := Launch(divf(ir.I32), [3]int{1, 1, 1}, [3]int{2048, 1, 1}, []uint64{1, 1, out}, m); err == nil {
		t.Error("2048-thread block accepted")
	}
}

func TestMemoryBytesPanics(t *testing.T) {
	m := NewMemory()
	a := m.Alloc(16)
	m.Bytes(a, 16)
	m.Bytes(a+16, 0)
	defer func() {
		if recover() == nil {
			t.Error("Bytes past the end did not panic")
		}
	}()
	m.Bytes(a+8, 9)
}

// TestLocalAndMultiDim: each thread of a 3-D block writes its linear id
// into its own local array and reads it back; the specials say where it is.
func TestLocalAndMultiDim(t *testing.T) {
	f := ir.NewFunc("local")
	f.AddParam("out", ir.U64)
	arr := f.AddLocal("a", ir.U64, 4)
	b := f.Entry()
	la := b.Add(ir.OpLocalAddr, ir.U64)
	la.Aux = arr
	nx, ny := special(b, ir.NtidX), special(b, ir.NtidY)
	lin := b.Add(ir.OpAdd, ir.U32, special(b, ir.TidX), b.Add(ir.OpMul, ir.U32, nx, b.Add(ir.OpAdd, ir.U32, special(b, ir.TidY), b.Add(ir.OpMul, ir.U32, ny, special(b, ir.TidZ)))))
	slot := b.Add(ir.OpAdd, ir.U64, la, b.Const(ir.U64, 16))
	st(b, ir.Local, slot, conv(b, ir.U64, lin))
	v := ld(b, ir.Local, ir.U64, slot)
	v = b.Add(ir.OpAdd, ir.U64, v, ld(b, ir.Local, ir.U64, la)) // zeroed
	nthreads := b.Add(ir.OpMul, ir.U32, nx, b.Add(ir.OpMul, ir.U32, ny, special(b, ir.NtidZ)))
	cta := b.Add(ir.OpAdd, ir.U32, special(b, ir.CtaidX), b.Add(ir.OpMul, ir.U32, special(b, ir.NctaidX), special(b, ir.CtaidY)))
	idx := b.Add(ir.OpAdd, ir.U32, lin, b.Add(ir.OpMul, ir.U32, cta, nthreads))
	v = b.Add(ir.OpAdd, ir.U64, v, b.Add(ir.OpShl, ir.U64, conv(b, ir.U64, special(b, ir.LaneID)), b.Const(ir.U32, 32)))
	st(b, ir.Global, elem(b, param(b, 0), idx, ir.U64), v)
	b.SetReturn()
	m := NewMemory()
	const per = 4 * 3 * 2
	out := m.Alloc(8 * per * 6)
	mustLaunch(t, f, [3]int{3, 2, 1}, [3]int{4, 3, 2}, []uint64{out}, m)
	buf := m.Bytes(out, 8*per*6)
	for i := range per * 6 {
		got := binary.LittleEndian.Uint64(buf[8*i:])
		lin := i % per
		if want := uint64(lin) | uint64(lin%32)<<32; got != want {
			t.Fatalf("out[%d] = %#x, want %#x", i, got, want)
		}
	}
}

// BenchmarkInterp measures the interpreter's cost per value computed: a
// loop of float64 arithmetic, 8 values an iteration.
func BenchmarkInterp(b *testing.B) {
	f := ir.NewFunc("loop")
	f.AddParam("n", ir.I64)
	f.AddParam("out", ir.U64)
	entry := f.Entry()
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	one := entry.Const(ir.I64, 1)
	zero := entry.Const(ir.I64, 0)
	c := entry.ConstFloat(ir.F64, 1.0000001)
	x0 := entry.ConstFloat(ir.F64, 1)
	entry.SetJump(head)
	i, x := head.AddPhi(ir.I64), head.AddPhi(ir.F64)
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, param(head, 0)), body, exit)
	y := body.Add(ir.OpMul, ir.F64, x, c)
	y = body.Add(ir.OpAdd, ir.F64, y, c)
	y = body.Add(ir.OpSub, ir.F64, y, c)
	fm := body.Add(ir.OpMath, ir.F64, y, c, x)
	fm.Aux = int(ir.Fma)
	y = body.Add(ir.OpSelect, ir.F64, body.Add(ir.OpLt, ir.Bool, fm, y), fm, y)
	i1 := body.Add(ir.OpAdd, ir.I64, i, one)
	body.SetJump(head)
	i.Args = []*ir.Value{zero, i1}
	x.Args = []*ir.Value{x0, y}
	st(exit, ir.Global, param(exit, 1), x)
	exit.SetReturn()
	m := NewMemory()
	out := m.Alloc(8)
	b.ResetTimer()
	const iters = 1 << 20
	for range b.N {
		if err := Launch(f, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{iters, out}, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/iters/9, "ns/step")
}

// TestMathEdges: where Go's math package on amd64 is wrong (Exp near
// overflow, Log and Pow of subnormals), the interpreter is not.
func TestMathEdges(t *testing.T) {
	cases := []struct {
		fn   ir.MathFn
		x, y float64
		want float64
	}{
		{ir.Exp, 709.5743667371596, 0, 1.459593679089458e+308},
		{ir.Exp, 709.782712893383, 0, 1.7976931348604338e+308},
		{ir.Exp, 709.7827128933841, 0, math.Inf(1)},
		{ir.Exp, 709, 0, 8.218407461554972e+307},
		{ir.Log, 5e-324, 0, -744.4400719213812},
		{ir.Log, 1e-310, 0, -713.8053576988297},
		{ir.Pow, 5e-324, 0.5, 2.2227587494850775e-162},
		// Go's Pow itself is some ulps off here (as for any fractional
		// y with a large log x): the test is that it is not 3x off.
		{ir.Pow, 1e-310, -0.25, 3.1622776601683794e+77},
	}
	for _, c := range cases {
		got := math64(c.fn, c.x, c.y, 0)
		tol := 4e-16
		if c.fn == ir.Pow {
			tol = 1e-13
		}
		if d := math.Abs(got-c.want) / c.want; !(d <= tol) && got != c.want {
			t.Errorf("%s(%v, %v) = %v, want %v", c.fn, c.x, c.y, got, c.want)
		}
	}
}

// TestBoolOps: Bool logic, and comparisons with false < true.
func TestBoolOps(t *testing.T) {
	f := ir.NewFunc("bools")
	f.AddParam("out", ir.U64)
	f.AddParam("a", ir.U32)
	f.AddParam("b", ir.U32)
	blk := f.Entry()
	zero := blk.Const(ir.U32, 0)
	a := blk.Add(ir.OpNe, ir.Bool, param(blk, 1), zero)
	b := blk.Add(ir.OpNe, ir.Bool, param(blk, 2), zero)
	ops := []ir.Op{ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe, ir.OpAnd, ir.OpOr, ir.OpXor}
	bits := blk.Const(ir.U32, 0)
	for i, op := range ops {
		r := blk.Add(op, ir.Bool, a, b)
		bit := blk.Add(ir.OpSelect, ir.U32, r, blk.Const(ir.U32, 1<<i), zero)
		bits = blk.Add(ir.OpOr, ir.U32, bits, bit)
	}
	na := blk.Add(ir.OpSelect, ir.U32, blk.Add(ir.OpNot, ir.Bool, a), blk.Const(ir.U32, 1<<len(ops)), zero)
	bits = blk.Add(ir.OpOr, ir.U32, bits, na)
	st(blk, ir.Global, param(blk, 0), bits)
	blk.SetReturn()
	m := NewMemory()
	out := m.Alloc(4)
	for _, c := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		x, y := c[0], c[1]
		mustLaunch(t, f, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{out, b2r(x), b2r(y)}, m)
		want := []bool{x == y, x != y, !x && y, !x || y, x && !y, x || !y, x && y, x || y, x != y, !x}
		got := u32s(m, out, 1)[0]
		for i, w := range want {
			if (got>>i&1 == 1) != w {
				t.Errorf("%v, %v: op %d gives %v", x, y, i, !w)
			}
		}
	}
	// Arithmetic on Bool is not something the interpreter guesses at.
	g := ir.NewFunc("badbool")
	e := g.Entry()
	one := e.Const(ir.Bool, 1)
	e.Add(ir.OpAdd, ir.Bool, one, one)
	e.SetReturn()
	if err := Launch(g, [3]int{1, 1, 1}, [3]int{1, 1, 1}, nil, m); err == nil || !strings.Contains(err.Error(), "cannot run this") {
		t.Errorf("add of bools: %v", err)
	}
}
