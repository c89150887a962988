package opt

import (
	"testing"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// addresses defined in one order, accessed in the other.
func addrOrderKernel() *ir.Func {
	f := ir.NewFunc("addrorder")
	e := f.Entry()
	param := func(name string, t ir.Type) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		return v
	}
	p, q, out := param("p", ir.U64), param("q", ir.U64), param("out", ir.U64)
	x := e.Add(ir.OpAdd, ir.U64, p, q)
	a2 := e.Add(ir.OpAdd, ir.U64, x, e.Const(ir.U64, 16))
	a1 := e.Add(ir.OpAdd, ir.U64, x, e.Const(ir.U64, 8))
	l1 := e.Add(ir.OpLoad, ir.I64, a1)
	l1.Space = ir.Global
	l2 := e.Add(ir.OpLoad, ir.I64, a2)
	l2.Space = ir.Global
	e.Add(ir.OpStore, ir.Void, out, e.Add(ir.OpAdd, ir.I64, l1, l2)).Space = ir.Global
	e.SetReturn()
	return f
}

// TestSplitAddressesOrder: a base that addresses share is made before the
// first of them in the block, whatever the order of their accesses.
func TestSplitAddressesOrder(t *testing.T) {
	f := addrOrderKernel()
	Optimize(f)
	if err := f.Verify(); err != nil {
		t.Fatalf("%v\n%s", err, f)
	}
	mem := interp.NewMemory()
	xa, oa := mem.Alloc(64), mem.Alloc(8)
	if err := interp.Launch(f, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []uint64{xa, 0, oa}, mem); err != nil {
		t.Fatal(err)
	}
}
