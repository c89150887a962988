// Package precisemath holds the math functions a goamp kernel calls for
// full-precision results, for float32 and float64: C++ AMP's
// concurrency::precise_math. On the CPU they compute in float64 with
// package math and round to the argument's type; in a kernel compiled for a
// GPU they become the GPU's correctly rounded instructions (Sqrt, Fma,
// Abs, Floor, Ceil, Trunc) or goamp's software routines (the
// transcendental functions, within a few ulp).
//
// Package math's float64 functions may be called in kernels too and mean
// the same as these.
package precisemath

import "math"

// Float is the set of types the functions take.
type Float interface{ ~float32 | ~float64 }

// Sqrt returns the square root of x.
func Sqrt[T Float](x T) T { return T(math.Sqrt(float64(x))) }

// Rsqrt returns 1/Sqrt(x).
func Rsqrt[T Float](x T) T { return T(1 / math.Sqrt(float64(x))) }

// Fma returns x*y+z rounded once.
func Fma[T Float](x, y, z T) T {
	// For float32 operands the float64 FMA is exact in its product, so
	// rounding its result to float32 is the float32 FMA but for rare
	// double-rounding cases.
	return T(math.FMA(float64(x), float64(y), float64(z)))
}

// Abs returns |x|.
func Abs[T Float](x T) T { return T(math.Abs(float64(x))) }

// Floor returns the greatest integer value at most x.
func Floor[T Float](x T) T { return T(math.Floor(float64(x))) }

// Ceil returns the least integer value at least x.
func Ceil[T Float](x T) T { return T(math.Ceil(float64(x))) }

// Trunc returns the integer value of x, rounded toward zero.
func Trunc[T Float](x T) T { return T(math.Trunc(float64(x))) }

// Exp returns e**x.
func Exp[T Float](x T) T { return T(math.Exp(float64(x))) }

// Exp2 returns 2**x.
func Exp2[T Float](x T) T { return T(math.Exp2(float64(x))) }

// Log returns the natural logarithm of x.
func Log[T Float](x T) T { return T(math.Log(float64(x))) }

// Log2 returns the binary logarithm of x.
func Log2[T Float](x T) T { return T(math.Log2(float64(x))) }

// Sin returns the sine of x (radians).
func Sin[T Float](x T) T { return T(math.Sin(float64(x))) }

// Cos returns the cosine of x (radians).
func Cos[T Float](x T) T { return T(math.Cos(float64(x))) }

// Pow returns x**y.
func Pow[T Float](x, y T) T { return T(math.Pow(float64(x), float64(y))) }

// Tanh returns the hyperbolic tangent of x.
func Tanh[T Float](x T) T { return T(math.Tanh(float64(x))) }
