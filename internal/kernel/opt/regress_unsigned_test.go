package opt

import (
	"encoding/binary"
	"testing"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// u64FactKernel stores w <= 2^63-1 for a uint64 w above 5.
func u64FactKernel() *ir.Func {
	f := ir.NewFunc("u64fact")
	e := f.Entry()
	out := e.Add(ir.OpParam, ir.U64)
	out.Aux = f.AddParam("out", ir.U64)
	w := e.Add(ir.OpParam, ir.U64)
	w.Aux = f.AddParam("w", ir.U64)
	in, exit := f.NewBlock(), f.NewBlock()
	e.SetIf(e.Add(ir.OpGt, ir.Bool, w, e.Const(ir.U64, 5)), in, exit)
	c := in.Add(ir.OpLe, ir.Bool, w, in.Const(ir.U64, 1<<63-1))
	in.Add(ir.OpStore, ir.Void, out, in.Add(ir.OpConvert, ir.U32, c)).Space = ir.Global
	in.SetJump(exit)
	exit.SetReturn()
	return f
}

// TestUnsignedLowerBound: under w > 5 for a uint64 w, w <= 2^63-1 is not
// decided: w may be 2^64-1, past what an int64 interval holds.
func TestUnsignedLowerBound(t *testing.T) {
	f := u64FactKernel()
	Optimize(f)
	var got [2]uint32
	for k, g := range []*ir.Func{u64FactKernel(), f} {
		mem := interp.NewMemory()
		oa := mem.Alloc(8)
		if err := interp.Launch(g, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{oa, 1<<64 - 1}, mem); err != nil {
			t.Fatal(err)
		}
		got[k] = binary.LittleEndian.Uint32(mem.Bytes(oa, 4))
	}
	if got[0] != 0 || got[1] != got[0] {
		t.Errorf("w = 2^64-1: optimized %d, as written %d, want 0", got[1], got[0])
	}
}
