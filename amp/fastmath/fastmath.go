// Package fastmath holds the math functions a goamp kernel calls when
// speed matters more than the last bits: C++ AMP's concurrency::fast_math.
// In a kernel compiled for a GPU, the float32 functions become the GPU's
// hardware approximations (ex2.approx, lg2.approx, sin.approx, cos.approx,
// tanh.approx, rsqrt.approx, sqrt.approx; a few ulp on their main ranges,
// less accurate near the ends, with large arguments of Sin and Cos losing
// accuracy fastest); float64 has no such instructions and gets the same
// software routines as package precisemath. On the CPU they compute in
// float64 and round to the argument's type, so CPU results can be more
// accurate than the GPU's: compare with a tolerance.
package fastmath

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
