// Package irmath lowers the math functions the PTX back end has no
// instruction for into other IR, so that the back end sees only the
// OpMath values Native accepts.
//
//   - float64, Fast or not: Exp, Exp2, Log, Log2, Sin, Cos, Pow and Tanh are
//     software routines written here in IR (the GPU has no float64
//     transcendental instructions, and goamp links no libdevice); Rsqrt
//     without Fast is 1/Sqrt, both correctly rounded.
//   - float32 without Fast: the same functions convert to float64, run the
//     float64 routine and round back. The float64 result is within 0.75
//     ulp, so the float32 one is the correctly rounded value except when
//     the exact value lies within about 2^-29 ulp of a rounding boundary.
//   - float32 with Fast: Exp is ex2.approx(x·log2 e), Log is
//     lg2.approx(x)·ln 2 and Pow is ex2.approx(y·lg2.approx(|x|)) with
//     pow's sign and special cases as selects, as CUDA's fast-math
//     intrinsics do; the rounding of x·log2 e costs up to 2|x| ulps (and
//     y·log2|x| likewise), on top of the hardware's own error. Exp2, Log2,
//     Sin, Cos and Tanh are native.
//
// Lower works in place: straight-line code replaces each value, and sin
// and cos also branch to a block of their own for arguments beyond 2^30
// (Payne–Hanek reduction), which splits the value's block.
//
// # The float64 routines
//
// Each routine reduces its argument exactly or to a double-double, runs a
// polynomial (Taylor series, with their truncation error bounded in the
// comments) and rebuilds the result with integer ops on the exponent bits;
// special values (NaN, ±Inf, ±0, overflow, underflow into the subnormals)
// come out as Go's math package documents them, pow's in the order of
// math.Pow's list. The methods are in exp.go (Cody–Waite reduction by
// ln 2 with an fma, degree-13 Taylor), log.go (2·atanh((m-1)/(m+1)) as a
// double-double), trig.go (three-part Cody–Waite reduction by π/2 up to
// 2^30, full accuracy there; exact Payne–Hanek beyond, to the largest
// float64), pow.go (pow as exp of a double-double y·log|x|) and tanh.go
// (u/(u+2), u = e^2|x| - 1 from exp's double-double core).
//
// Measured error, in ulps of the exact result (math/big at 256 bits, or
// 1400 bits for the reduction by π/2), over 200,000 points a range of
// which 10,000 or more were checked against the exact value, and every
// point against Go's math package (go test -run 'Accuracy|Report' -v
// ./internal/kernel/irmath -args -irmath.long):
//
//	exp    [-708, 709.7], [-1, 1], tiny          0.58
//	       subnormal results [-745.1, -708]      0.75
//	exp2   [-1022, 1024), [-1, 1], tiny          0.58
//	       subnormal results [-1075, -1022]      0.74
//	log    all positive float64s (subnormals     0.50
//	       too), [0.5, 2], 1 ± [2^-60, 1/4]
//	log2   the same                              0.50 (exact at powers of 2)
//	sin    [-π/4, π/4], [-100, 100], [1, 2^30]   0.71
//	       [2^30, 2^1024), near multiples of     0.72
//	       π/2, the float64s closest to them
//	cos    the same                              0.70
//	tanh   [-25, 25], tiny                       0.66
//	pow    x > 0 with the result anywhere in     0.74
//	       range, x near 1 with |y| huge, x < 0
//	       with integer y, subnormal x
//
// The tests assert 1 ulp (1.01 where the result is subnormal: rounded
// twice there). A GPU should compute the same bits as package interp: the
// routines use only correctly rounded operations, and every float product
// that feeds an add is an fma(x, y, -0), so ptxas has no mul and add to
// contract (see builder).
package irmath
