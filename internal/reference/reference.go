// Package reference computes matrix products and dot products in float64,
// the yardstick every goamp kernel is checked against, and says how far a
// result of each element type may stray from it.
package reference

import (
	"math"
	"math/rand/v2"

	"github.com/goamp/goamp/amp"
)

// MatMul returns alpha*A*B + beta*C for row-major A (m x k), B (k x n) and
// C (m x n), computed in float64. As in BLAS, with beta == 0 C is not read,
// so NaN in C does not reach the result (c may then be nil), and with
// alpha == 0 A and B are not read, so the result is beta*C whatever they
// hold.
func MatMul(m, n, k int, alpha float64, a, b []float64, beta float64, c []float64) []float64 {
	return matmul(m, n, k, alpha, a, b, beta, c, func(x float64) float64 { return x })
}

// MatMulBound returns, for each element of alpha*A*B + beta*C, the sum of
// the magnitudes of the terms that make it: |alpha|*sum|a||b| + |beta*c|.
// Rounding error in a sum is at most a small multiple of this.
func MatMulBound(m, n, k int, alpha float64, a, b []float64, beta float64, c []float64) []float64 {
	return matmul(m, n, k, math.Abs(alpha), a, b, math.Abs(beta), c, math.Abs)
}

// matmul adds the terms f(a*b) in order of p for each element; the loops run
// i, p, j so that B and the output are read along rows.
func matmul(m, n, k int, alpha float64, a, b []float64, beta float64, c []float64, f func(float64) float64) []float64 {
	out := make([]float64, m*n)
	if alpha == 0 {
		k = 0 // A and B are not read
	}
	for i := range m {
		row := out[i*n : (i+1)*n]
		for p := range k {
			x := a[i*k+p]
			for j, y := range b[p*n : (p+1)*n] {
				row[j] += f(x * y)
			}
		}
		for j := range row {
			row[j] *= alpha
			if beta != 0 {
				row[j] += f(beta * c[i*n+j])
			}
		}
	}
	return out
}

// Dot returns sum x[i]*y[i] in float64, and the sum of the magnitudes of the
// terms.
func Dot(x, y []float64) (dot, bound float64) {
	for i := range x {
		dot += x[i] * y[i]
		bound += math.Abs(x[i] * y[i])
	}
	return dot, bound
}

// UnitRoundoff is half the gap between 1 and the next number of type T: the
// largest relative error of one rounding. It is 0 for int32, whose
// arithmetic is exact (modulo 2^32).
func UnitRoundoff[T amp.Element]() float64 {
	switch any(*new(T)).(type) {
	case float32:
		return 0x1p-24
	case float64:
		return 0x1p-53
	}
	return 0
}

// Tolerance is the error a correct kernel may show in a product or dot
// product of type T over k terms, relative to the sum of the magnitudes of
// the terms (the bound of MatMulBound or Dot).
//
// A sum of k terms rounds k-1 times. In the worst case the errors add up to
// about k*u (u the unit roundoff), but rounding to nearest makes them a random
// walk that grows as sqrt(k)*u; the worst case would let a kernel that drops a
// good part of a long sum pass. So the tolerance is 16*sqrt(k+2)*u, a wide
// margin over the random walk, or the worst case 4*(k+2)*u where that is
// smaller (k below 14).
func Tolerance[T amp.Element](k int) float64 {
	kk := float64(k + 2)
	return min(4*kk, 16*math.Sqrt(kk)) * UnitRoundoff[T]()
}

// ToleranceWorst is the worst-case bound of Tolerance's comment, 4*(k+2)*u:
// for sums whose rounding errors need not cancel, such as those of
// tensor-core adders that truncate.
func ToleranceWorst[T amp.Element](k int) float64 {
	return 4 * float64(k+2) * UnitRoundoff[T]()
}

// ToleranceIn is the tolerance for a float32 product or dot product of k
// terms whose operands were rounded, before the multiply, to a format of
// unit roundoff u (TF32 and FP16: 2^-11, BF16: 2^-8), relative to the
// magnitudes of the exact operands' terms. Each operand may be off by 2u
// of itself (one unit in its last place: rounded to nearest, or toward
// zero, as a library may do it), so each term by 4u(1+u), and every term
// the same way in the worst case; the float32 sum adds Tolerance[float32]
// of the rounded terms, whose magnitudes are at most (1+2u)^2 times the
// exact ones'.
func ToleranceIn(k int, u float64) float64 {
	return 4*u*(1+u) + Tolerance[float32](k)*(1+2*u)*(1+2*u)
}

// ToFloat64 converts a slice of any element type to float64.
func ToFloat64[T amp.Element](s []T) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// MaxErr returns the largest error of got against want, each relative to
// its bound (as from MatMulBound or Dot): the figure Tolerance limits. NaN
// in one but not the other, or infinities that differ, give +Inf. For int32,
// want must be exact in float64 (below 2^53 in magnitude); it is taken modulo
// 2^32, as int32 arithmetic wraps around, and any difference is +Inf. For
// int32 results of any size, use MatMulErrors or DotError.
func MaxErr[T amp.Element](got []T, want, bound []float64) float64 {
	worst := 0.0
	for i, w := range want {
		g := float64(got[i])
		if UnitRoundoff[T]() == 0 {
			if int32(int64(w)) != int32(got[i]) {
				return math.Inf(1)
			}
			continue
		}
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				return math.Inf(1)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				return math.Inf(1)
			}
		case bound[i] == 0:
			worst = max(worst, math.Abs(g-w))
		default:
			worst = max(worst, math.Abs(g-w)/bound[i])
		}
	}
	return worst
}

// RandomSlice returns n random elements: uniform in [-1, 1) for floats,
// integers in [-8, 8] for int32, so that int32 products stay far from
// overflow.
func RandomSlice[T amp.Element](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		if UnitRoundoff[T]() == 0 {
			s[i] = T(r.IntN(17) - 8)
		} else {
			s[i] = T(2*r.Float64() - 1)
		}
	}
	return s
}

// MatMulErrors returns, for each element of got, its error against
// alpha*A*B + beta*C (row-major, A m x k, B k x n, C m x n; C unread when
// beta is 0). For floats the error is relative to the sum of the magnitudes
// of the terms, as Tolerance expects, with the product computed in float64.
// For int32 the product is computed exactly, in wrapping int32 arithmetic
// like the kernels', and the error is 0 where got matches and +Inf where not.
func MatMulErrors[T amp.Element](m, n, k int, alpha T, a, b []T, beta T, c, got []T) []float64 {
	errs := make([]float64, m*n)
	if UnitRoundoff[T]() == 0 {
		// Integer addition and multiplication modulo 2^32 are exact and
		// associative, so this order gives the one right answer.
		if alpha == 0 {
			k = 0 // as in MatMul: A and B are not read
		}
		for i := range m {
			for j := range n {
				var s T
				for p := range k {
					s += a[i*k+p] * b[p*n+j]
				}
				v := alpha * s
				if beta != 0 {
					v += beta * c[i*n+j]
				}
				if got[i*n+j] != v {
					errs[i*n+j] = math.Inf(1)
				}
			}
		}
		return errs
	}
	af, bf, cf := ToFloat64(a), ToFloat64(b), ToFloat64(c)
	want := MatMul(m, n, k, float64(alpha), af, bf, float64(beta), cf)
	bound := MatMulBound(m, n, k, float64(alpha), af, bf, float64(beta), cf)
	for i := range errs {
		errs[i] = MaxErr(got[i:i+1], want[i:i+1], bound[i:i+1])
	}
	return errs
}

// DotError returns the error of got against the dot product of x and y, as
// MatMulErrors does for one element.
func DotError[T amp.Element](x, y []T, got T) float64 {
	return MatMulErrors(1, 1, len(x), 1, x, y, 0, nil, []T{got})[0]
}
