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

import "github.com/goamp/goamp/amp/precisemath"

// Float is the set of types the functions take.
type Float = precisemath.Float

// Sqrt returns the square root of x.
func Sqrt[T Float](x T) T { return precisemath.Sqrt(x) }

// Rsqrt returns 1/Sqrt(x).
func Rsqrt[T Float](x T) T { return precisemath.Rsqrt(x) }

// Fma returns x*y+z rounded once.
func Fma[T Float](x, y, z T) T { return precisemath.Fma(x, y, z) }

// Abs returns |x|.
func Abs[T Float](x T) T { return precisemath.Abs(x) }

// Floor returns the greatest integer value at most x.
func Floor[T Float](x T) T { return precisemath.Floor(x) }

// Ceil returns the least integer value at least x.
func Ceil[T Float](x T) T { return precisemath.Ceil(x) }

// Trunc returns the integer value of x, rounded toward zero.
func Trunc[T Float](x T) T { return precisemath.Trunc(x) }

// Exp returns e**x.
func Exp[T Float](x T) T { return precisemath.Exp(x) }

// Exp2 returns 2**x.
func Exp2[T Float](x T) T { return precisemath.Exp2(x) }

// Log returns the natural logarithm of x.
func Log[T Float](x T) T { return precisemath.Log(x) }

// Log2 returns the binary logarithm of x.
func Log2[T Float](x T) T { return precisemath.Log2(x) }

// Sin returns the sine of x (radians).
func Sin[T Float](x T) T { return precisemath.Sin(x) }

// Cos returns the cosine of x (radians).
func Cos[T Float](x T) T { return precisemath.Cos(x) }

// Pow returns x**y.
func Pow[T Float](x, y T) T { return precisemath.Pow(x, y) }

// Tanh returns the hyperbolic tangent of x.
func Tanh[T Float](x T) T { return precisemath.Tanh(x) }
