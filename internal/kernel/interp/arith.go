package interp

import (
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

func f32(r uint64) float32 { return math.Float32frombits(uint32(r)) }
func f64(r uint64) float64 { return math.Float64frombits(r) }
func r32(x float32) uint64 { return uint64(math.Float32bits(x)) }
func r64(x float64) uint64 { return math.Float64bits(x) }

func b2r(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// convert follows Go's conversions, with PTX's cvt.rzi where Go leaves a
// float to integer conversion to the implementation (NaN, out of range).
func convert(from, to ir.Type, x uint64) uint64 {
	if from == to {
		return x
	}
	switch {
	case from.IsFloat():
		f := f64(x)
		if from == ir.F32 {
			f = float64(f32(x))
		}
		switch to {
		case ir.Bool:
			return b2r(f != 0)
		case ir.F32:
			return r32(float32(f))
		case ir.F64:
			return r64(f)
		}
		return floatToInt(f, to)
	case to == ir.Bool:
		return b2r(x != 0)
	}
	// From an integer or Bool: its value, extended by its signedness.
	var s int64
	signed := from.IsSigned()
	switch from {
	case ir.I32:
		s = int64(int32(x))
	case ir.I64:
		s = int64(x)
	}
	switch to {
	case ir.F32:
		if signed {
			return r32(float32(s))
		}
		return r32(float32(x))
	case ir.F64:
		if signed {
			return r64(float64(s))
		}
		return r64(float64(x))
	}
	if signed {
		x = uint64(s)
	}
	if to.Size() == 4 {
		return uint64(uint32(x))
	}
	return x
}

// floatToInt truncates toward zero and saturates like cvt.rzi: NaN is 0,
// values beyond the type's range its min or max.
func floatToInt(f float64, to ir.Type) uint64 {
	if f != f {
		return 0
	}
	f = math.Trunc(f)
	switch to {
	case ir.I32:
		switch {
		case f >= 1<<31:
			return uint64(uint32(math.MaxInt32))
		case f < -1<<31:
			return uint64(uint32(1 << 31))
		}
		return uint64(uint32(int32(f)))
	case ir.U32:
		switch {
		case f >= 1<<32:
			return math.MaxUint32
		case f <= 0:
			return 0
		}
		return uint64(uint32(f))
	case ir.I64:
		switch {
		case f >= 1<<63:
			return math.MaxInt64
		case f < -1<<63:
			return 1 << 63
		}
		return uint64(int64(f))
	case ir.U64:
		switch {
		case f >= 1<<64:
			return math.MaxUint64
		case f <= 0:
			return 0
		}
		return uint64(f)
	}
	return 0
}

// fma32 is x*y+z correctly rounded to float32. The product of two float32s
// is exact in float64, so p+z is the only rounding in float64; rounding that
// again to float32 can go wrong only when it lands exactly halfway between
// two float32s, and then the sign of the float64 sum's error decides.
func fma32(x, y, z float32) float32 {
	p := float64(x) * float64(y)
	s := p + float64(z)
	r := float32(s)
	if math.IsInf(s, 0) || s != s || float64(r) == s {
		return r
	}
	// The error of s: Knuth's TwoSum.
	bb := s - p
	e := (p - (s - bb)) + (float64(z) - bb)
	if e == 0 {
		return r
	}
	dir := float32(math.Inf(1))
	if float64(r) > s {
		dir = float32(math.Inf(-1))
	}
	o := math.Nextafter32(r, dir) // s lies between r and o
	if s-float64(r) != float64(o)-s {
		return r // not halfway: e cannot change the nearest float32
	}
	if (e > 0) == (float64(o) > s) {
		return o
	}
	return r
}

// mathFn computes an OpMath with Go's math, rounded to t.
func mathFn(fn ir.MathFn, t ir.Type, a, b, c uint64) uint64 {
	if t == ir.F32 {
		x, y, z := f32(a), f32(b), f32(c)
		if fn == ir.Fma {
			return r32(fma32(x, y, z))
		}
		return r32(float32(math64(fn, float64(x), float64(y), float64(z))))
	}
	return r64(math64(fn, f64(a), f64(b), f64(c)))
}

func math64(fn ir.MathFn, x, y, z float64) float64 {
	switch fn {
	case ir.Sqrt:
		return math.Sqrt(x)
	case ir.Rsqrt:
		return 1 / math.Sqrt(x)
	case ir.Fma:
		return math.FMA(x, y, z)
	case ir.Abs:
		return math.Abs(x)
	case ir.Floor:
		return math.Floor(x)
	case ir.Ceil:
		return math.Ceil(x)
	case ir.Trunc:
		return math.Trunc(x)
	case ir.Exp:
		return exp(x)
	case ir.Exp2:
		return math.Exp2(x)
	case ir.Log:
		return log(x)
	case ir.Log2:
		return math.Log2(x)
	case ir.Sin:
		return math.Sin(x)
	case ir.Cos:
		return math.Cos(x)
	case ir.Pow:
		return pow(x, y)
	case ir.Tanh:
		return math.Tanh(x)
	}
	return math.NaN()
}

// atomicOp computes the value an atomic leaves in memory, given what it
// found there (old) and its operands x and cmp (CAS: Args addr, cmp, new,
// so x is new).
func atomicOp(op ir.Atomic, t ir.Type, old, x, cmp uint64) (uint64, bool) {
	switch op {
	case ir.AtomicAdd:
		switch t {
		case ir.I32, ir.U32:
			return uint64(uint32(old + x)), true
		case ir.I64, ir.U64:
			return old + x, true
		case ir.F32:
			return r32(f32(old) + f32(x)), true
		case ir.F64:
			return r64(f64(old) + f64(x)), true
		}
	case ir.AtomicMin, ir.AtomicMax:
		var less bool // x < old
		switch t {
		case ir.I32:
			less = int32(x) < int32(old)
		case ir.U32:
			less = uint32(x) < uint32(old)
		case ir.I64:
			less = int64(x) < int64(old)
		case ir.U64:
			less = x < old
		default:
			return 0, false
		}
		if less == (op == ir.AtomicMin) && x != old {
			return x, true
		}
		return old, true
	case ir.AtomicExch:
		return x, true
	case ir.AtomicCAS:
		if old == cmp {
			return x, true
		}
		return old, true
	}
	return 0, false
}

// exp is math.Exp, but finite up to the true overflow threshold: Go's
// assembly Exp on amd64 gives +Inf once round(x/ln 2) reaches 1024, from
// x ≈ 709.09 on, where exp(x) is still as large as 1.8e308. There e^x is
// e^(x-1)·e, with x-1 exact and e as a double-double, so that the result
// is still within an ulp or so.
func exp(x float64) float64 {
	const eLo = 0x1.4d57ee2b1013ap-53 // e - math.E
	if x > 709 && x <= 710 {
		y := math.Exp(x - 1)
		return math.FMA(y, math.E, y*eLo)
	}
	return math.Exp(x)
}

// log is math.Log, but right for subnormal x: Go's assembly Log on amd64
// (and s390x) takes a subnormal's exponent field at face value
// (golang/go#56600, open as of Go 1.26), so the argument is scaled into
// the normal range first.
func log(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// pow is math.Pow, but right for subnormal |x|, for which math.Pow takes
// math.Log of x (see log): x^y = (x·2^54)^y · (2^-54)^y, each factor from
// math.Pow with a normal base. Where one factor overflows or underflows,
// the product would too.
func pow(x, y float64) float64 {
	if ax := math.Abs(x); ax > 0 && ax < 0x1p-1022 && y == y && !math.IsInf(y, 0) {
		return math.Pow(x*0x1p54, y) * math.Pow(0x1p-54, y)
	}
	return math.Pow(x, y)
}
