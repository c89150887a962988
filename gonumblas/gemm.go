package gonumblas

import (
	"gonum.org/v1/gonum/blas"

	"github.com/goamp/goamp/internal/cpu/gemm"
)

// Dgemm performs one of the matrix-matrix operations
//
//	C = alpha * A * B + beta * C
//	C = alpha * Aᵀ * B + beta * C
//	C = alpha * A * Bᵀ + beta * C
//	C = alpha * Aᵀ * Bᵀ + beta * C
//
// where A is an m×k or k×m dense matrix, B is a k×n or n×k dense matrix, C is
// an m×n matrix, and alpha and beta are scalars. tA and tB specify whether A
// or B are transposed (blas.Trans and blas.ConjTrans mean the same for real
// matrices). All matrices are row-major with row strides lda, ldb and ldc.
//
// When alpha is 0, A and B are not read; when beta is 0, C is not read, so
// NaN there does not reach the result. It panics on invalid arguments
// exactly as gonum's Dgemm does.
func (Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	aTrans, bTrans, empty := checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if empty {
		return
	}
	// The engine sets C = beta*C itself, without reading C when beta is 0,
	// when alpha or k is 0: gonum's remaining quick returns.
	gemm.Float64(aTrans, bTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Sgemm is Dgemm for float32 matrices. Products are accumulated in float32,
// as in every BLAS sgemm.
func (Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	aTrans, bTrans, empty := checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if empty {
		return
	}
	gemm.Float32(aTrans, bTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// checkGemm checks the arguments of Sgemm and Dgemm in the order gonum's
// Dgemm does, panicking with the same values, and reports whether A and B
// are transposed and whether C is empty (m or n is 0: gonum returns before
// it checks the slices' lengths, and so must we). The engine checks its
// arguments too, with its own messages; after this, it never panics.
func checkGemm(tA, tB blas.Transpose, m, n, k, lenA, lda, lenB, ldb, lenC, ldc int) (aTrans, bTrans, empty bool) {
	switch tA {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	switch tB {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	aTrans = tA == blas.Trans || tA == blas.ConjTrans
	if aTrans {
		if lda < max(1, m) {
			panic(badLdA)
		}
	} else {
		if lda < max(1, k) {
			panic(badLdA)
		}
	}
	bTrans = tB == blas.Trans || tB == blas.ConjTrans
	if bTrans {
		if ldb < max(1, k) {
			panic(badLdB)
		}
	} else {
		if ldb < max(1, n) {
			panic(badLdB)
		}
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}

	if m == 0 || n == 0 {
		return aTrans, bTrans, true
	}

	// With k == 0 these checks can still fail (for m > 1 or n > 1), as
	// gonum's do.
	if aTrans {
		if lenA < (k-1)*lda+m {
			panic(shortA)
		}
	} else {
		if lenA < (m-1)*lda+k {
			panic(shortA)
		}
	}
	if bTrans {
		if lenB < (n-1)*ldb+k {
			panic(shortB)
		}
	} else {
		if lenB < (k-1)*ldb+n {
			panic(shortB)
		}
	}
	if lenC < (m-1)*ldc+n {
		panic(shortC)
	}
	return aTrans, bTrans, false
}
