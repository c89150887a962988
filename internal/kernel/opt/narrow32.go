package opt

import (
	"math"
	"slices"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// narrowByRange does in 32 bits the 64-bit comparisons and products whose
// operands the ranges prove to fit in 32 bits: a comparison of two values
// that fit in int32 (or both in uint32) compares their low halves, and a
// product of two such values multiplies their low halves widened again,
// which the GPU does in one instruction (mul.wide) where a 64-bit product
// takes three. narrow then computes the low halves from 32-bit operands.
// Go's indices are 64 bits; an entry compiled for small indices
// (ir.Func.SmallIndices) has ranges that make most of them fit.
func narrowByRange(f *ir.Func) bool {
	a := analyze(f)
	changed := false
	for _, b := range f.Blocks {
		for _, v := range slices.Clone(b.Values) {
			if len(v.Args) != 2 {
				continue
			}
			x, y := v.Args[0], v.Args[1]
			if x.Type.Size() != 8 || !x.Type.IsInt() || y.Type != x.Type {
				continue
			}
			var t ir.Type
			rx, ry := a.rangeAt(x, b), a.rangeAt(y, b)
			switch {
			case fitsIn(rx, math.MinInt32, math.MaxInt32) && fitsIn(ry, math.MinInt32, math.MaxInt32):
				t = ir.I32
			case fitsIn(rx, 0, math.MaxUint32) && fitsIn(ry, 0, math.MaxUint32):
				t = ir.U32
			default:
				continue
			}
			switch {
			case v.Op.IsCompare():
				if t == ir.I32 && !x.Type.IsSigned() && (rx.lo < 0 || ry.lo < 0) {
					continue
				}
				cx := f.NewValue(b, ir.OpConvert, t, x)
				cy := f.NewValue(b, ir.OpConvert, t, y)
				insertBefore(v, cx)
				insertBefore(v, cy)
				v.Args = []*ir.Value{cx, cy}
				changed = true
			case v.Op == ir.OpMul && (x.Op != ir.OpConvert || x.Args[0].Type.Size() != 4):
				// x and y widened from their low halves: the same values.
				var args []*ir.Value
				for _, z := range v.Args {
					lo := f.NewValue(b, ir.OpConvert, t, z)
					w := f.NewValue(b, ir.OpConvert, v.Type, lo)
					insertBefore(v, lo)
					insertBefore(v, w)
					args = append(args, w)
				}
				v.Args = args
				changed = true
			}
		}
	}
	return changed
}

func fitsIn(r interval, lo, hi int64) bool {
	return !r.full && r.lo >= lo && r.hi <= hi
}
