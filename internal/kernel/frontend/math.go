package frontend

import (
	"math"

	"golang.org/x/tools/go/ssa"

	"github.com/goamp/goamp/internal/kernel/ir"
)

var mathFns = map[string]ir.MathFn{
	"Sqrt": ir.Sqrt, "Rsqrt": ir.Rsqrt, "FMA": ir.Fma, "Fma": ir.Fma, "Abs": ir.Abs,
	"Floor": ir.Floor, "Ceil": ir.Ceil, "Trunc": ir.Trunc,
	"Exp": ir.Exp, "Exp2": ir.Exp2, "Log": ir.Log, "Log2": ir.Log2,
	"Sin": ir.Sin, "Cos": ir.Cos, "Pow": ir.Pow, "Tanh": ir.Tanh,
}

// mathCall compiles a call of package math (float64, precise) or of
// amp/fastmath and amp/precisemath (float32 or float64).
func (c *compiler) mathCall(fr *frame, in *ssa.Call, name string, fast bool) value {
	args := in.Common().Args
	x := func(i int) *ir.Value { return c.scalar(fr, args[i]) }
	if fn, ok := mathFns[name]; ok {
		var ops []*ir.Value
		for i := range args {
			ops = append(ops, x(i))
		}
		if len(ops) != fn.Arity() {
			c.fail(in.Pos(), "math.%s: %d operands", name, len(ops))
		}
		v := c.cur.Add(ir.OpMath, ops[0].Type, ops...)
		v.Aux, v.Fast = int(fn), fast
		return v
	}
	switch name {
	case "Min", "Max":
		// Go's math.Max is the builtin max (NaN wins, -0 < +0) but for
		// +Inf, which wins over NaN; math.Min likewise for -Inf.
		op, inf := ir.OpMin, math.Inf(-1)
		if name == "Max" {
			op, inf = ir.OpMax, math.Inf(1)
		}
		a, b := x(0), x(1)
		m := c.cur.Add(op, a.Type, a, b)
		k := c.fconst(a.Type, inf)
		either := c.cur.Add(ir.OpOr, ir.Bool, c.cmp(ir.OpEq, a, k), c.cmp(ir.OpEq, b, k))
		return c.cur.Add(ir.OpSelect, a.Type, either, k, m)
	case "Float32bits":
		return c.cur.Add(ir.OpBitcast, ir.U32, x(0))
	case "Float32frombits":
		return c.cur.Add(ir.OpBitcast, ir.F32, x(0))
	case "Float64bits":
		return c.cur.Add(ir.OpBitcast, ir.U64, x(0))
	case "Float64frombits":
		return c.cur.Add(ir.OpBitcast, ir.F64, x(0))
	case "NaN":
		return c.fconst(ir.F64, math.NaN())
	case "Inf":
		s := x(0)
		pos, neg := c.fconst(ir.F64, math.Inf(1)), c.fconst(ir.F64, math.Inf(-1))
		return c.cur.Add(ir.OpSelect, ir.F64, c.cmp(ir.OpGe, s, c.iconst(s.Type, 0)), pos, neg)
	case "IsNaN":
		a := x(0)
		return c.cmp(ir.OpNe, a, a)
	case "IsInf":
		a, s := x(0), x(1)
		abs := c.cur.Add(ir.OpMath, a.Type, a)
		abs.Aux = int(ir.Abs)
		inf := c.cmp(ir.OpEq, abs, c.fconst(a.Type, math.Inf(1)))
		zero := c.iconst(s.Type, 0)
		pos := c.and(inf, c.cmp(ir.OpGt, a, c.fconst(a.Type, 0)))
		neg := c.and(inf, c.cmp(ir.OpLt, a, c.fconst(a.Type, 0)))
		r := c.cur.Add(ir.OpSelect, ir.Bool, c.cmp(ir.OpGt, s, zero), pos, inf)
		return c.cur.Add(ir.OpSelect, ir.Bool, c.cmp(ir.OpLt, s, zero), neg, r)
	case "Signbit":
		a := x(0)
		if a.Type == ir.F32 {
			return c.cmp(ir.OpLt, c.cur.Add(ir.OpBitcast, ir.I32, a), c.iconst(ir.I32, 0))
		}
		return c.cmp(ir.OpLt, c.cur.Add(ir.OpBitcast, ir.I64, a), c.iconst(ir.I64, 0))
	}
	c.fail(in.Pos(), "math function %s is not available in kernels (see the list in the README's \"Writing your own kernels\")", name)
	return nil
}
