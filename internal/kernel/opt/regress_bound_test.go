package opt

import (
	"testing"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// TestVersioningBoundInLoop: a loop whose bound is computed in its header
// (for i := 0; i < n-1; i++ { bad += uint64(i+1) < uint64(m) ? 0 : 1 },
// n-1 in the header, as go/ssa puts it) is not versioned on it: the bound
// does not exist before the loop.
func TestVersioningBoundInLoop(t *testing.T) {
	f := ir.NewFunc("hdr")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	out, n, m := param("out", ir.U64), param("n", ir.I64), param("m", ir.I64)
	f.Params[1].NonNeg, f.Params[2].NonNeg = true, true
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	e.SetJump(head)
	i := head.AddPhi(ir.I64)
	bad := head.AddPhi(ir.I64)
	lim := head.Add(ir.OpSub, ir.I64, n, head.Const(ir.I64, 2))
	head.SetIf(head.Add(ir.OpLt, ir.Bool, i, lim), body, exit)
	one := e.Const(ir.I64, 1)
	i1 := body.Add(ir.OpAdd, ir.I64, i, one)
	ok := body.Add(ir.OpLt, ir.Bool, body.Add(ir.OpConvert, ir.U64, i1), body.Add(ir.OpConvert, ir.U64, m))
	bad2 := body.Add(ir.OpAdd, ir.I64, bad, body.Add(ir.OpSelect, ir.I64, ok, body.Const(ir.I64, 0), body.Const(ir.I64, 1)))
	body.SetJump(head)
	i.Args = []*ir.Value{e.Const(ir.I64, 0), i1}
	bad.Args = []*ir.Value{e.Const(ir.I64, 0), bad2}
	exit.Add(ir.OpStore, ir.Void, out, bad).Space = ir.Global
	exit.SetReturn()
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	Optimize(f)
	t.Logf("%s", f)
	if err := f.Verify(); err != nil {
		t.Fatalf("%v\n%s", err, f)
	}
}
