package irmath

import (
	"fmt"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// Native reports whether the PTX back end computes OpMath fn on type t
// (with the Fast flag as given) itself, so that Lower leaves it alone: Sqrt,
// Fma, Abs, Floor, Ceil and Trunc always; Rsqrt for F32, and for F64 when
// Fast; Exp2, Log2, Sin, Cos and Tanh for F32 with Fast only (the
// hardware's approximations).
func Native(fn ir.MathFn, t ir.Type, fast bool) bool {
	switch fn {
	case ir.Sqrt, ir.Fma, ir.Abs, ir.Floor, ir.Ceil, ir.Trunc:
		return true
	case ir.Rsqrt:
		return t == ir.F32 || fast
	case ir.Exp2, ir.Log2, ir.Sin, ir.Cos, ir.Tanh:
		return t == ir.F32 && fast
	}
	return false
}

// Lower replaces, in place, every OpMath of f that the PTX back end does
// not take (see Native) with IR that computes it, and rewrites every use
// of the replaced values. A function that needs a branch (sin and cos of
// huge arguments) splits its block in two: the values after the OpMath
// move to a new block that also takes over the old block's terminator, so
// successors see the new block among their Preds.
func Lower(f *ir.Func) error {
	repl := map[*ir.Value]*ir.Value{}
	// f.Blocks grows as blocks split; the blocks holding the rest of a
	// split block are visited in their turn.
	for bi := 0; bi < len(f.Blocks); bi++ {
		b := f.Blocks[bi]
		for i := 0; i < len(b.Values); i++ {
			v := b.Values[i]
			if v.Op != ir.OpMath {
				continue
			}
			fn := ir.MathFn(v.Aux)
			if fn > ir.Tanh || !v.Type.IsFloat() || len(v.Args) != fn.Arity() {
				return fmt.Errorf("irmath: %s: b%d: %s: not a valid math function", f.Name, b.ID, v.LongString())
			}
			for _, a := range v.Args {
				if a.Type != v.Type {
					return fmt.Errorf("irmath: %s: b%d: %s: operand of type %s", f.Name, b.ID, v.LongString(), a.Type)
				}
			}
			if Native(fn, v.Type, v.Fast) {
				continue
			}
			repl[v] = lowerAt(f, b, i, v)
			// The values after v are now at the end of b or in a new
			// block; what lowerAt added is native either way.
		}
	}
	if len(repl) == 0 {
		return nil
	}
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			for i, a := range v.Args {
				if r, ok := repl[a]; ok {
					v.Args[i] = r
				}
			}
		}
	}
	return nil
}

// lowerAt replaces v, the i-th value of b, with the code computing it and
// returns the value that stands for v.
func lowerAt(f *ir.Func, b *ir.Block, i int, v *ir.Value) *ir.Value {
	rest := append([]*ir.Value(nil), b.Values[i+1:]...)
	b.Values = b.Values[:i]
	kind, cond, succs := b.Kind, b.Cond, b.Succs
	b.Kind, b.Cond, b.Succs = 0, nil, nil

	g := newBuilder(f, b)
	r := g.lower(v)

	end := g.b
	end.Kind, end.Cond, end.Succs = kind, cond, succs
	if end != b {
		end.Comment = b.Comment
		for _, s := range succs {
			for k, p := range s.Preds {
				if p == b {
					s.Preds[k] = end
				}
			}
		}
	}
	for _, w := range rest {
		w.Block = end
	}
	end.Values = append(end.Values, rest...)
	return r
}

// lower emits the code for v and returns its result.
func (g *builder) lower(v *ir.Value) *ir.Value {
	fn := ir.MathFn(v.Aux)
	x := v.Args[0]
	if fn == ir.Rsqrt {
		// F64 precise: sqrt.rn and div.rn are each correctly rounded, so
		// the result is within about an ulp.
		return g.div(g.fc(v.Type, 1), g.sqrt(x))
	}
	if v.Type == ir.F32 && v.Fast {
		return g.fast32(fn, v.Args)
	}
	if v.Type == ir.F32 {
		// F32 precise: the float64 routine, rounded once more.
		args := make([]*ir.Value, len(v.Args))
		for i, a := range v.Args {
			args[i] = g.conv(ir.F64, a)
		}
		return g.conv(ir.F32, g.soft(fn, args))
	}
	return g.soft(fn, v.Args)
}

// soft computes fn on float64 operands in software.
func (g *builder) soft(fn ir.MathFn, args []*ir.Value) *ir.Value {
	x := args[0]
	switch fn {
	case ir.Exp:
		return g.exp(x)
	case ir.Exp2:
		return g.exp2(x)
	case ir.Log:
		return g.log(x)
	case ir.Log2:
		return g.log2(x)
	case ir.Sin:
		return g.trig(x, false)
	case ir.Cos:
		return g.trig(x, true)
	case ir.Pow:
		return g.pow(x, args[1])
	case ir.Tanh:
		return g.tanh(x)
	}
	panic(fmt.Sprintf("irmath: no software %s", fn))
}
