package opt

import (
	"encoding/binary"
	"testing"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// invariantCheckKernel: for i := i0; i < n; i += s { bad += (uint64(k) < uint64(m)) ? 0 : 1 }
func invariantCheckKernel() *ir.Func {
	f := ir.NewFunc("invcheck")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	out, n, s, m, k := param("out", ir.U64), param("n", ir.I64), param("s", ir.I64), param("m", ir.I64), param("k", ir.I64)
	f.Params[3].NonNeg = true
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	e.SetJump(head)
	i := head.AddPhi(ir.I64)
	bad := head.AddPhi(ir.I64)
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, n), body, exit)
	ok := body.Add(ir.OpLt, ir.Bool, body.Add(ir.OpConvert, ir.U64, k), body.Add(ir.OpConvert, ir.U64, m))
	bad2 := body.Add(ir.OpAdd, ir.I64, bad, body.Add(ir.OpSelect, ir.I64, ok, body.Const(ir.I64, 0), body.Const(ir.I64, 1)))
	next := body.Add(ir.OpAdd, ir.I64, i, s)
	body.SetJump(head)
	i.Args = []*ir.Value{e.Const(ir.I64, 0), next}
	bad.Args = []*ir.Value{e.Const(ir.I64, 0), bad2}
	exit.Add(ir.OpStore, ir.Void, out, bad).Space = ir.Global
	exit.SetReturn()
	return f
}

// TestVersioningKeepsInvariantChecks: a loop stepped by a run-time value
// whose unsigned check is of a value fixed before the loop (that may be
// negative) keeps the check: the test before the loop is not made signed.
func TestVersioningKeepsInvariantChecks(t *testing.T) {
	f := invariantCheckKernel()
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{-1, 3, 20} {
		var res [2]int64
		for j, g := range []*ir.Func{invariantCheckKernel(), f} {
			mem := interp.NewMemory()
			oa := mem.Alloc(8)
			if err := interp.Launch(g, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{oa, 10, 1, 10, uint64(k)}, mem); err != nil {
				t.Fatal(err)
			}
			res[j] = int64(binary.LittleEndian.Uint64(mem.Bytes(oa, 8)))
		}
		if res[0] != res[1] {
			t.Errorf("k=%d: optimized %d, as written %d\n%s", k, res[1], res[0], f)
		}
	}
}
