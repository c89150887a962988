// Package gonumblas is a drop-in BLAS for gonum: gonum's own native
// implementation with its matrix multiplies (Sgemm, Dgemm) and unit-stride
// dot products (Sdot, Ddot) replaced by goamp's packed engine (AVX-512 or
// AVX2/FMA micro-kernels in Go assembly).
//
// A gonum program switches to it with one line each for float64 and float32,
// before its first matrix operation:
//
//	blas64.Use(gonumblas.Implementation{}) // gonum.org/v1/gonum/blas/blas64: mat.Dense, lapack64, ...
//	blas32.Use(gonumblas.Implementation{}) // gonum.org/v1/gonum/blas/blas32
//
// Everything else (level 1 and 2, the other level-3 routines, the complex
// types) is gonum's code, reached through the embedded gonum.Implementation,
// so behaviour only changes where goamp is faster. The replaced routines
// check their arguments exactly as gonum's do: the same conditions, in the
// same order, panicking with the same strings, and the same quick returns.
//
// Two differences remain, both where BLAS leaves the result open:
//
//   - Sums are added in another order, so results differ from gonum's in the
//     last bits (each is within rounding error of the exact product).
//   - When alpha is 0, Sgemm and Dgemm do not read A and B at all, as the
//     reference BLAS does; gonum still multiplies them by 0 when beta != 1, so
//     NaN or Inf in A or B can reach C there but not here. Conversely, gonum
//     skips zero elements of A, so 0*Inf in a product gives 0 there but NaN
//     here, as IEEE arithmetic and the reference BLAS say.
//
// The engine runs on the CPU on every platform; on amd64 without AVX2 and
// FMA, on other architectures, or under the noasm build tag its portable Go
// kernels do the work.
package gonumblas
