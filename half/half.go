// Package half holds the 16-bit floating-point storage types of goamp:
// Float16, IEEE 754 binary16 (NumPy's float16, '<f2' in a .npy file), and
// BFloat16, the upper half of a float32. Neither is an arithmetic type
// here: values are converted to float32 to compute (exactly: every value
// of either is a float32; every product of two Float16 values is exact in
// float32, and so is every product of two BFloat16 values that neither
// overflows nor underflows float32's range, which is BFloat16's too) and
// rounded back, to nearest even, to store.
package half

import "math"

// Float16 is an IEEE 754 binary16 value by its bits: 1 sign bit, 5 bits of
// exponent (bias 15), 10 of mantissa. Its largest finite value is 65504,
// its least positive normal 2^-14 and its least positive subnormal 2^-24.
type Float16 uint16

// BFloat16 is a bfloat16 value by its bits: the upper 16 bits of a
// float32 (1 sign bit, 8 bits of exponent, 7 of mantissa).
type BFloat16 uint16

// Float16From rounds x to the nearest Float16, ties to even: magnitudes of
// 65520 and more become infinities, those of 2^-25 and less zeros (with
// x's sign); NaN stays NaN.
func Float16From(x float32) Float16 {
	b := math.Float32bits(x)
	sign := uint32(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return Float16(sign | 0x7e00 | mant>>13) // a quiet NaN, whatever x's payload
		}
		return Float16(sign | 0x7c00)
	}
	e := exp - 127 + 15 // the binary16 exponent field, before rounding
	switch {
	case e >= 0x1f:
		return Float16(sign | 0x7c00)
	case e <= 0:
		// A subnormal (or zero) in binary16: units of 2^-24.
		if e < -10 {
			return Float16(sign) // under 2^-25: rounds to zero
		}
		m := mant | 0x800000
		shift := uint(14 - e)
		q := m >> shift
		rem, halfway := m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > halfway || rem == halfway && q&1 == 1 {
			q++ // may reach 0x400, the least normal: its encoding too
		}
		return Float16(sign | q)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to 0x7c00: infinity
	}
	return Float16(sign | h)
}

// Float32 returns h as a float32, exactly.
func (h Float16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		v := float32(mant) * 0x1p-24 // exact: mant < 2^10
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}

// BFloat16From rounds x to the nearest BFloat16, ties to even; magnitudes
// past its largest finite value become infinities; NaN stays NaN.
func BFloat16From(x float32) BFloat16 {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return BFloat16(b>>16 | 0x40) // a quiet NaN, whatever x's payload
	}
	return BFloat16((b + 0x7fff + (b>>16)&1) >> 16)
}

// Float32 returns b as a float32, exactly.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// Float16s returns x rounded to Float16, element by element.
func Float16s(x []float32) []Float16 {
	out := make([]Float16, len(x))
	for i, v := range x {
		out[i] = Float16From(v)
	}
	return out
}

// BFloat16s returns x rounded to BFloat16, element by element.
func BFloat16s(x []float32) []BFloat16 {
	out := make([]BFloat16, len(x))
	for i, v := range x {
		out[i] = BFloat16From(v)
	}
	return out
}

// Float32s returns the values of h (Float16s or BFloat16s) as float32s,
// exactly.
func Float32s[T interface {
	~uint16
	Float32() float32
}](h []T) []float32 {
	out := make([]float32, len(h))
	for i, v := range h {
		out[i] = v.Float32()
	}
	return out
}
