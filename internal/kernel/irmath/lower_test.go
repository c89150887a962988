package irmath

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

var allFns = []ir.MathFn{ir.Sqrt, ir.Rsqrt, ir.Fma, ir.Abs, ir.Floor, ir.Ceil, ir.Trunc, ir.Exp, ir.Exp2, ir.Log, ir.Log2, ir.Sin, ir.Cos, ir.Pow, ir.Tanh}

func TestNative(t *testing.T) {
	want := map[string]bool{}
	for _, fn := range []ir.MathFn{ir.Sqrt, ir.Fma, ir.Abs, ir.Floor, ir.Ceil, ir.Trunc} {
		for _, k := range []string{"f32", "f32 fast", "f64", "f64 fast"} {
			want[fn.String()+" "+k] = true
		}
	}
	want["rsqrt f32"], want["rsqrt f32 fast"], want["rsqrt f64 fast"] = true, true, true
	for _, fn := range []ir.MathFn{ir.Exp2, ir.Log2, ir.Sin, ir.Cos, ir.Tanh} {
		want[fn.String()+" f32 fast"] = true
	}
	for _, fn := range allFns {
		for _, typ := range []ir.Type{ir.F32, ir.F64} {
			for _, fast := range []bool{false, true} {
				k := fn.String() + " " + typ.String()
				if fast {
					k += " fast"
				}
				if got := Native(fn, typ, fast); got != want[k] {
					t.Errorf("Native(%s) = %v", k, got)
				}
			}
		}
	}
}

// TestLowerLeavesNative: a native OpMath stays, untouched.
func TestLowerLeavesNative(t *testing.T) {
	for _, fn := range allFns {
		for _, typ := range []ir.Type{ir.F32, ir.F64} {
			for _, fast := range []bool{false, true} {
				if !Native(fn, typ, fast) || fn.Arity() == 3 {
					continue
				}
				f := mathKernel(fn, typ, fast)
				before := f.String()
				if err := Lower(f); err != nil {
					t.Fatal(err)
				}
				if after := f.String(); after != before {
					t.Errorf("%s %s fast=%v changed:\n%s", fn, typ, fast, after)
				}
			}
		}
	}
}

// TestNoFusibleMul checks the builder's rule (see builder): in lowered
// code no float OpMul is an operand of a float add or sub, nor the result,
// so ptxas has nothing to contract and the GPU computes what the
// interpreter does.
func TestNoFusibleMul(t *testing.T) {
	for _, fn := range allFns {
		for _, typ := range []ir.Type{ir.F32, ir.F64} {
			for _, fast := range []bool{false, true} {
				if Native(fn, typ, fast) || fn.Arity() == 3 {
					continue
				}
				f := lowered(t, fn, typ, fast)
				n := 0
				for _, b := range f.Blocks {
					for _, v := range b.Values {
						n++
						// The result, stored here, might as well be added
						// to something by the kernel.
						if v.Op == ir.OpStore && v.Args[1].Op == ir.OpMul {
							t.Errorf("%s %s fast=%v: the result is a mul: %s", fn, typ, fast, v.Args[1].LongString())
						}
						if (v.Op == ir.OpAdd || v.Op == ir.OpSub) && v.Type.IsFloat() {
							for _, a := range v.Args {
								if a.Op == ir.OpMul {
									t.Errorf("%s %s fast=%v: %s takes %s", fn, typ, fast, v.LongString(), a.LongString())
								}
							}
						}
					}
				}
				t.Logf("%s %s fast=%v: %d values", fn, typ, fast, n)
			}
		}
	}
}

// TestLowerSplits lowers several math values in one block, two of them
// sin and cos (which split their block), with the block's If terminator,
// a phi in a successor and a later use all depending on lowered values,
// plus a math value in an unreachable block.
func TestLowerSplits(t *testing.T) {
	f := ir.NewFunc("chain")
	f.AddParam("x", ir.U64)
	f.AddParam("out", ir.U64)
	entry := f.Entry()
	pos, neg, join, dead := f.NewBlock(), f.NewBlock(), f.NewBlock(), f.NewBlock()
	entry.Comment = "chain.go:1"
	param := func(b *ir.Block, i int) *ir.Value {
		v := b.Add(ir.OpParam, ir.U64)
		v.Aux = i
		return v
	}
	mathOp := func(b *ir.Block, fn ir.MathFn, args ...*ir.Value) *ir.Value {
		v := b.Add(ir.OpMath, ir.F64, args...)
		v.Aux = int(fn)
		return v
	}
	ld := entry.Add(ir.OpLoad, ir.F64, param(entry, 0))
	ld.Space = ir.Global
	a := mathOp(entry, ir.Sin, ld)
	b := mathOp(entry, ir.Exp, a)
	c := mathOp(entry, ir.Cos, b)
	s := entry.Add(ir.OpAdd, ir.F64, a, c)
	entry.SetIf(entry.Add(ir.OpGt, ir.Bool, c, entry.ConstFloat(ir.F64, 0)), pos, neg)
	p := mathOp(pos, ir.Pow, b, s)
	pos.SetJump(join)
	neg.SetJump(join)
	phi := join.AddPhi(ir.F64)
	phi.Args = []*ir.Value{p, c}
	r := join.Add(ir.OpAdd, ir.F64, phi, mathOp(join, ir.Log, b))
	st := join.Add(ir.OpStore, ir.Void, param(join, 1), r)
	st.Space = ir.Global
	join.SetReturn()
	mathOp(dead, ir.Tanh, dead.ConstFloat(ir.F64, 1))
	dead.SetReturn()

	if err := Lower(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil {
		t.Fatalf("%v\n%s", err, f)
	}
	for _, blk := range f.Blocks {
		for _, v := range blk.Values {
			if v.Op == ir.OpMath && !Native(ir.MathFn(v.Aux), v.Type, v.Fast) {
				t.Errorf("%s left in b%d", v.LongString(), blk.ID)
			}
		}
	}
	// The If moved to the block that ends the second split; its
	// successors name it as their predecessor.
	if entry.Kind != ir.If || entry.Succs[0] == pos {
		t.Errorf("entry's terminator was not moved")
	}
	if len(pos.Preds) != 1 || pos.Preds[0].Succs[0] != pos || pos.Preds[0].Comment != "chain.go:1" {
		t.Errorf("pos's predecessor is not the moved If's block")
	}

	for _, x := range []float64{0.3, -2, 1e10, 1e300, 7} {
		m := interp.NewMemory()
		xa, oa := m.Alloc(8), m.Alloc(8)
		binary.LittleEndian.PutUint64(m.Bytes(xa, 8), math.Float64bits(x))
		if err := interp.Launch(f, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{xa, oa}, m); err != nil {
			t.Fatal(err)
		}
		got := math.Float64frombits(binary.LittleEndian.Uint64(m.Bytes(oa, 8)))
		av := math.Sin(x)
		bv := math.Exp(av)
		cv := math.Cos(bv)
		want := cv
		if cv > 0 {
			want = math.Pow(bv, av+cv)
		}
		want += math.Log(bv)
		if d := math.Abs(got-want) / math.Abs(want); d > 1e-15 {
			t.Errorf("x=%v: %v, want %v", x, got, want)
		}
	}
}

func TestLowerErrors(t *testing.T) {
	for _, mod := range []func(v *ir.Value){
		func(v *ir.Value) { v.Aux = int(ir.Tanh) + 1 },
		func(v *ir.Value) { v.Args = v.Args[:0] },
	} {
		f := mathKernel(ir.Sin, ir.F64, false)
		for _, b := range f.Blocks {
			for _, v := range b.Values {
				if v.Op == ir.OpMath {
					mod(v)
				}
			}
		}
		if err := Lower(f); err == nil || !strings.Contains(err.Error(), "irmath: k_sin: b1: ") {
			t.Errorf("Lower of a bad math value: %v", err)
		}
	}
}

// TestF64FastAndRsqrt: F64 Fast lowers to the same software routines as
// precise, and precise F64 Rsqrt to 1/sqrt.
func TestF64FastAndRsqrt(t *testing.T) {
	xs := []float64{0.5, 3, 100, 1e-300, 1e300, 0, -1, inf, nan, 5e-324}
	for _, fn := range []ir.MathFn{ir.Exp, ir.Log, ir.Sin, ir.Tanh} {
		a := run(t, lowered(t, fn, ir.F64, false), ir.F64, xs, nil)
		b := run(t, lowered(t, fn, ir.F64, true), ir.F64, xs, nil)
		for i := range xs {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Errorf("%s(%v): fast %v, precise %v", fn, xs[i], b[i], a[i])
			}
		}
	}
	got := run(t, lowered(t, ir.Rsqrt, ir.F64, false), ir.F64, xs, nil)
	for i, x := range xs {
		want := 1 / math.Sqrt(x)
		if math.Float64bits(got[i]) != math.Float64bits(want) && !(got[i] != got[i] && want != want) {
			t.Errorf("rsqrt(%v) = %v, want %v", x, got[i], want)
		}
	}
}
