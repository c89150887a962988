package irmath

import (
	"fmt"
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// builder appends IR to a current block, which moves when the code
// branches.
//
// The routines must mean the same on a GPU as in the interpreter, and the
// PTX back end writes float add, sub and mul without a rounding modifier,
// which lets ptxas contract a mul feeding an add into an fma. That would
// break the error-free transformations (TwoSum and friends) the routines
// rest on, so no float OpMul the builder makes feeds an add or sub, or is
// a routine's result (which the kernel may add to something): products
// are fma(x, y, -0), which is x*y rounded once (-0 leaves every product,
// ±0 included, as it is) and which nothing can fuse further, and
// polynomials are chains of explicit fmas. TestNoFusibleMul checks the
// rule on lowered code.
type builder struct {
	f      *ir.Func
	b      *ir.Block
	consts map[constKey]*ir.Value
}

type constKey struct {
	b    *ir.Block
	t    ir.Type
	bits uint64
}

func newBuilder(f *ir.Func, b *ir.Block) *builder {
	return &builder{f: f, b: b, consts: map[constKey]*ir.Value{}}
}

func (g *builder) op(op ir.Op, t ir.Type, args ...*ir.Value) *ir.Value {
	return g.b.Add(op, t, args...)
}

// konst returns a constant of type t with Const bits, one per block.
func (g *builder) konst(t ir.Type, bits uint64) *ir.Value {
	k := constKey{g.b, t, bits}
	if v, ok := g.consts[k]; ok {
		return v
	}
	v := g.b.Add(ir.OpConst, t)
	v.Const = bits
	g.consts[k] = v
	return v
}

// fc is a float constant of type t (F32 constants rounded to float32).
func (g *builder) fc(t ir.Type, x float64) *ir.Value {
	if t == ir.F32 {
		x = float64(float32(x))
	}
	return g.konst(t, math.Float64bits(x))
}

// c is a float64 constant.
func (g *builder) c(x float64) *ir.Value { return g.fc(ir.F64, x) }

// ic is an integer constant of type t.
func (g *builder) ic(t ir.Type, x int64) *ir.Value {
	bits := uint64(x)
	if t.Size() == 4 {
		bits = uint64(uint32(x))
	}
	return g.konst(t, bits)
}

func (g *builder) add(x, y *ir.Value) *ir.Value { return g.op(ir.OpAdd, x.Type, x, y) }
func (g *builder) sub(x, y *ir.Value) *ir.Value { return g.op(ir.OpSub, x.Type, x, y) }
func (g *builder) div(x, y *ir.Value) *ir.Value { return g.op(ir.OpDiv, x.Type, x, y) }
func (g *builder) neg(x *ir.Value) *ir.Value    { return g.op(ir.OpNeg, x.Type, x) }

// imul is an integer product (wrapping).
func (g *builder) imul(x, y *ir.Value) *ir.Value { return g.op(ir.OpMul, x.Type, x, y) }

// mul is x*y rounded once, as an fma that ptxas cannot contract further.
func (g *builder) mul(x, y *ir.Value) *ir.Value {
	return g.fma(x, y, g.fc(x.Type, math.Copysign(0, -1)))
}

// scale is x times a power of two: a plain mul, which must feed no add.
// It is exact unless it overflows or goes subnormal.
func (g *builder) scale(x, p2 *ir.Value) *ir.Value { return g.op(ir.OpMul, x.Type, x, p2) }

func (g *builder) math(fn ir.MathFn, fast bool, args ...*ir.Value) *ir.Value {
	v := g.op(ir.OpMath, args[0].Type, args...)
	v.Aux, v.Fast = int(fn), fast
	return v
}

func (g *builder) fma(x, y, z *ir.Value) *ir.Value { return g.math(ir.Fma, false, x, y, z) }
func (g *builder) abs(x *ir.Value) *ir.Value       { return g.math(ir.Abs, false, x) }
func (g *builder) trunc(x *ir.Value) *ir.Value     { return g.math(ir.Trunc, false, x) }
func (g *builder) sqrt(x *ir.Value) *ir.Value      { return g.math(ir.Sqrt, false, x) }

// horner evaluates c[0] + x*(c[1] + x*(c[2] + …)) with fmas.
func (g *builder) horner(x *ir.Value, c ...float64) *ir.Value {
	t := x.Type
	p := g.fc(t, c[len(c)-1])
	for i := len(c) - 2; i >= 0; i-- {
		p = g.fma(p, x, g.fc(t, c[i]))
	}
	return p
}

func (g *builder) cmp(op ir.Op, x, y *ir.Value) *ir.Value { return g.op(op, ir.Bool, x, y) }
func (g *builder) eq(x, y *ir.Value) *ir.Value            { return g.cmp(ir.OpEq, x, y) }
func (g *builder) ne(x, y *ir.Value) *ir.Value            { return g.cmp(ir.OpNe, x, y) }
func (g *builder) lt(x, y *ir.Value) *ir.Value            { return g.cmp(ir.OpLt, x, y) }
func (g *builder) le(x, y *ir.Value) *ir.Value            { return g.cmp(ir.OpLe, x, y) }
func (g *builder) gt(x, y *ir.Value) *ir.Value            { return g.cmp(ir.OpGt, x, y) }
func (g *builder) ge(x, y *ir.Value) *ir.Value            { return g.cmp(ir.OpGe, x, y) }

func (g *builder) and(x, y *ir.Value) *ir.Value { return g.op(ir.OpAnd, x.Type, x, y) }
func (g *builder) or(x, y *ir.Value) *ir.Value  { return g.op(ir.OpOr, x.Type, x, y) }
func (g *builder) xor(x, y *ir.Value) *ir.Value { return g.op(ir.OpXor, x.Type, x, y) }
func (g *builder) not(x *ir.Value) *ir.Value    { return g.op(ir.OpNot, x.Type, x) }

func (g *builder) sel(c, x, y *ir.Value) *ir.Value { return g.op(ir.OpSelect, x.Type, c, x, y) }

// shl and shr shift by a constant count or a U32 value.
func (g *builder) shl(x *ir.Value, n any) *ir.Value { return g.op(ir.OpShl, x.Type, x, g.count(n)) }
func (g *builder) shr(x *ir.Value, n any) *ir.Value { return g.op(ir.OpShr, x.Type, x, g.count(n)) }

func (g *builder) count(n any) *ir.Value {
	switch n := n.(type) {
	case int:
		return g.ic(ir.U32, int64(n))
	case *ir.Value:
		return n
	}
	panic(fmt.Sprintf("irmath: shift count %T", n))
}

func (g *builder) conv(t ir.Type, x *ir.Value) *ir.Value { return g.op(ir.OpConvert, t, x) }
func (g *builder) cast(t ir.Type, x *ir.Value) *ir.Value { return g.op(ir.OpBitcast, t, x) }

// bits returns x's bits as the unsigned integer of its size.
func (g *builder) bits(x *ir.Value) *ir.Value {
	if x.Type == ir.F32 {
		return g.cast(ir.U32, x)
	}
	return g.cast(ir.U64, x)
}

// fromBits is the float of u's size with u's bits.
func (g *builder) fromBits(u *ir.Value) *ir.Value {
	if u.Type.Size() == 4 {
		return g.cast(ir.F32, u)
	}
	return g.cast(ir.F64, u)
}

// signBit is true when x's sign bit is set (-0 and negative NaNs too).
func (g *builder) signBit(x *ir.Value) *ir.Value {
	if x.Type == ir.F32 {
		return g.lt(g.cast(ir.I32, x), g.ic(ir.I32, 0))
	}
	return g.lt(g.cast(ir.I64, x), g.ic(ir.I64, 0))
}

// xorSign flips x's sign where y's sign bit is set.
func (g *builder) xorSign(x, y *ir.Value) *ir.Value {
	bx, by := g.bits(x), g.bits(y)
	sign := g.ic(bx.Type, -1<<(8*x.Type.Size()-1))
	return g.fromBits(g.xor(bx, g.and(by, sign)))
}

// pow2 is 2^k as a float64 for an I64 k in [-1022, 1023], built from the
// exponent bits.
func (g *builder) pow2(k *ir.Value) *ir.Value {
	return g.cast(ir.F64, g.shl(g.add(k, g.ic(ir.I64, 1023)), 52))
}

// notMul panics if x is a float product: an operand of an exact
// transformation must not be one ptxas could fuse into it.
func notMul(xs ...*ir.Value) {
	for _, x := range xs {
		if x.Op == ir.OpMul && x.Type.IsFloat() {
			panic("irmath: internal error: a float mul feeds an exact transformation")
		}
	}
}

// twoSum returns s = x+y rounded and e, the exact error x+y-s (Knuth).
func (g *builder) twoSum(x, y *ir.Value) (s, e *ir.Value) {
	notMul(x, y)
	s = g.add(x, y)
	bb := g.sub(s, x)
	e = g.add(g.sub(x, g.sub(s, bb)), g.sub(y, bb))
	return s, e
}

// fastTwoSum is twoSum for |x| ≥ |y| (or x = 0) (Dekker).
func (g *builder) fastTwoSum(x, y *ir.Value) (s, e *ir.Value) {
	notMul(x, y)
	s = g.add(x, y)
	e = g.sub(y, g.sub(s, x))
	return s, e
}

// twoProd returns p = x*y rounded and e, the exact error x*y-p.
func (g *builder) twoProd(x, y *ir.Value) (p, e *ir.Value) {
	p = g.mul(x, y)
	return p, g.fma(x, y, g.neg(p))
}

// branch ends the current block with an If on cond to a new block, which
// the code after branch fills and ends with join; join then holds the phis
// of the two ways in.
//
//	g.b:  ... if cond then b1 else join
//	b1:   (what the caller adds)  jump join
//	join: phis
func (g *builder) branch(cond *ir.Value, comment string) (then, join *ir.Block) {
	then, join = g.f.NewBlock(), g.f.NewBlock()
	then.Comment = comment
	g.b.SetIf(cond, then, join)
	g.b = then
	return then, join
}

// merge ends the branch: g.b jumps to join, which becomes current, and for
// each pair of (value before the branch, value computed in it) gives the
// phi that chooses between them.
func (g *builder) merge(join *ir.Block, pairs ...[2]*ir.Value) []*ir.Value {
	g.b.SetJump(join)
	// join.Preds is [block of the If, block the branch ended in].
	g.b = join
	out := make([]*ir.Value, len(pairs))
	for i, p := range pairs {
		phi := join.AddPhi(p[0].Type)
		phi.Args = []*ir.Value{p[0], p[1]}
		out[i] = phi
	}
	return out
}
