// Package precision rounds float32 values to the reduced precisions the
// tensor cores multiply in (TF32, BF16, FP16), exactly as the GPU kernels
// round their operands, so that tests and result checks can build the
// product a kernel in that precision must return.
package precision

import (
	"fmt"
	"math"
)

// The precisions, as linalg.Precision and the CLI's --precision spell
// them.
const (
	Exact = "exact" // float32 arithmetic: no rounding of the operands
	TF32  = "tf32"  // 10 bits of mantissa, float32's exponent range
	BF16  = "bf16"  // 7 bits of mantissa, float32's exponent range
	FP16  = "fp16"  // 10 bits of mantissa, exponents -14 to 15 (largest 65504)
)

// Names lists the precisions, Exact first.
var Names = []string{Exact, TF32, BF16, FP16}

// format is a floating-point format's rounding: mantissa bits after the
// point, the least normal exponent and the largest finite value. Every
// format rounds to nearest, ties to even.
type format struct {
	mantissa, minExp int
	max              float64
}

var formats = map[string]format{
	TF32: {10, -126, (2 - 0x1p-10) * 0x1p127},
	BF16: {7, -126, (2 - 0x1p-7) * 0x1p127},
	FP16: {10, -14, 65504},
}

// Check returns an error naming the precisions when name is not one of
// them.
func Check(name string) error {
	if name == Exact {
		return nil
	}
	if _, ok := formats[name]; !ok {
		return fmt.Errorf("precision %q, want one of exact, tf32, bf16, fp16", name)
	}
	return nil
}

// Round returns x rounded to precision name as the tensor-core kernels
// round an operand: to nearest, ties to even (TF32 as Hopper's TMA copies
// of type TFLOAT32 and cvt.rn.tf32.f32 round it, BF16 and FP16 as
// cvt.rn does); magnitudes
// past the format's largest finite value become infinities; NaN and
// infinities stay. Exact (or an unknown name) returns x.
func Round(name string, x float32) float32 {
	f, ok := formats[name]
	if !ok || x == 0 || math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return x
	}
	a := math.Abs(float64(x))
	_, e := math.Frexp(a) // a = frac * 2^e, frac in [0.5, 1)
	exp := max(e-1, f.minExp)
	quantum := math.Ldexp(1, exp-f.mantissa)
	q := a / quantum // exact: a power-of-two scaling
	r := math.RoundToEven(q) * quantum
	if r > f.max {
		r = math.Inf(1)
	}
	if x < 0 {
		r = -r
	}
	return float32(r)
}

// RoundSlice returns a copy of x with every element rounded to precision
// name.
func RoundSlice(name string, x []float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = Round(name, v)
	}
	return out
}

// Unit returns the unit roundoff of precision name: the largest relative
// error of one rounding (2^-11 for TF32 and FP16, 2^-8 for BF16), and
// float32's 2^-24 for Exact.
func Unit(name string) float64 {
	if f, ok := formats[name]; ok {
		return math.Ldexp(1, -f.mantissa-1)
	}
	return 0x1p-24
}
