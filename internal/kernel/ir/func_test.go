package ir

import "testing"

// TestClone: a clone prints as the original, and changing it leaves the
// original as it was.
func TestClone(t *testing.T) {
	f := NewFunc("k")
	e := f.Entry()
	p := e.Add(OpParam, I64)
	p.Aux = f.AddParam("n", I64)
	h, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	e.SetJump(h)
	i := h.AddPhi(I64)
	h.SetIf(h.Add(OpLt, Bool, i, p), body, exit)
	next := body.Add(OpAdd, I64, i, body.Const(I64, 1))
	body.SetJump(h)
	i.Args = []*Value{e.Const(I64, 0), next}
	exit.SetReturn()
	before := f.String()
	g := f.Clone()
	if g.String() != before {
		t.Fatalf("clone:\n%s\nwant:\n%s", g, before)
	}
	g.Name = "other"
	g.Blocks[1].Values[0].Args[0].Const = 7
	g.Blocks[2].Add(OpConst, I64)
	g.Params[0].NonNeg = true
	if f.String() != before || f.Params[0].NonNeg {
		t.Errorf("changing the clone changed the original:\n%s", f)
	}
	if err := g.Verify(); err != nil {
		t.Errorf("clone: %v", err)
	}
}
