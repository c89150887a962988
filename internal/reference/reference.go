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
// C (m x n), computed in float64. With beta == 0, C is not read (as in BLAS),
// so NaN in C does not reach the result; c may then be nil.
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

// Tolerance is the relative error a correct kernel may show in a product
// or dot product of type T over k terms: a sum of k products rounds at most
// k+2 times, and 4 leaves room for the different orders in which kernels add.
// Relative means relative to the bound returned by MatMulBound or Dot.
func Tolerance[T amp.Element](k int) float64 {
	return 4 * float64(k+2) * UnitRoundoff[T]()
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
// whose arithmetic wraps around, want is taken modulo 2^32 and any
// difference is +Inf.
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
