package irmath

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// mathKernel builds out[i] = fn(x[i] [, y[i]]) over i < n, with values of
// type t, the math value in the middle of its block so that lowering it
// has code before and after to keep in place.
func mathKernel(fn ir.MathFn, t ir.Type, fast bool) *ir.Func {
	f := ir.NewFunc("k_" + fn.String())
	f.AddParam("n", ir.U32)
	f.AddParam("x", ir.U64)
	f.AddParam("y", ir.U64)
	f.AddParam("out", ir.U64)
	param := func(b *ir.Block, i int) *ir.Value {
		v := b.Add(ir.OpParam, f.Params[i].Type)
		v.Aux = i
		return v
	}
	special := func(b *ir.Block, s ir.Special) *ir.Value {
		v := b.Add(ir.OpSpecial, ir.U32)
		v.Aux = int(s)
		return v
	}
	entry := f.Entry()
	body, exit := f.NewBlock(), f.NewBlock()
	id := entry.Add(ir.OpAdd, ir.U32, entry.Add(ir.OpMul, ir.U32, special(entry, ir.CtaidX), special(entry, ir.NtidX)), special(entry, ir.TidX))
	entry.SetIf(entry.Add(ir.OpLt, ir.Bool, id, param(entry, 0)), body, exit)
	off := body.Add(ir.OpMul, ir.U64, body.Add(ir.OpConvert, ir.U64, id), body.Const(ir.U64, int64(t.Size())))
	at := func(i int) *ir.Value { return body.Add(ir.OpAdd, ir.U64, param(body, i), off) }
	load := func(i int) *ir.Value {
		v := body.Add(ir.OpLoad, t, at(i))
		v.Space = ir.Global
		return v
	}
	args := []*ir.Value{load(1)}
	if fn.Arity() == 2 {
		args = append(args, load(2))
	}
	m := body.Add(ir.OpMath, t, args...)
	m.Aux, m.Fast = int(fn), fast
	st := body.Add(ir.OpStore, ir.Void, at(3), m)
	st.Space = ir.Global
	body.SetJump(exit)
	exit.SetReturn()
	return f
}

// lowered is mathKernel after Lower, checked: it verifies, and no OpMath
// the back end cannot take is left.
func lowered(t testing.TB, fn ir.MathFn, typ ir.Type, fast bool) *ir.Func {
	t.Helper()
	f := mathKernel(fn, typ, fast)
	if err := Lower(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil {
		t.Fatalf("%v\n%s", err, f)
	}
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if v.Op == ir.OpMath && !Native(ir.MathFn(v.Aux), v.Type, v.Fast) {
				t.Fatalf("%s %s fast=%v: %s left after Lower", fn, typ, fast, v.LongString())
			}
		}
	}
	return f
}

// run runs a lowered kernel over xs (and ys) and returns the results, all
// as float64 (F32 values widened exactly).
func run(t testing.TB, f *ir.Func, typ ir.Type, xs, ys []float64) []float64 {
	t.Helper()
	n := len(xs)
	sz := typ.Size()
	m := interp.NewMemory()
	xa, ya, oa := m.Alloc(n*sz), m.Alloc(n*sz), m.Alloc(n*sz)
	put := func(addr uint64, vs []float64) {
		if vs == nil {
			return
		}
		b := m.Bytes(addr, n*sz)
		for i, v := range vs {
			if typ == ir.F32 {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
			} else {
				binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
			}
		}
	}
	put(xa, xs)
	put(ya, ys)
	const bs = 128
	if err := interp.Launch(f, [3]int{(n + bs - 1) / bs, 1, 1}, [3]int{bs, 1, 1}, []uint64{uint64(n), xa, ya, oa}, m); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	b := m.Bytes(oa, n*sz)
	for i := range out {
		if typ == ir.F32 {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		} else {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}
