// matmul_naive.cu: C = alpha*A*B + beta*C, the simple model.
//
// Technique: one thread per element of C, each walking a row of A and a
// column of B straight from global memory (no shared memory, no reuse).
// Shape:     2-D grid of 2-D blocks, any block shape the host picks (up to
//            1024 threads; 16x16 is a sensible default); threadIdx.x/blockIdx.x
//            walk the columns of C, threadIdx.y/blockIdx.y its rows.
// Follows:   MultiplyWithAMP of the C++ AMP "Walkthrough: Matrix
//            Multiplication" (Microsoft Learn: parallel_for_each over the
//            product's extent), and gpu_Matrix_Mul_nonshared of Vaidya,
//            Hands-On GPU-Accelerated Computer Vision with OpenCV and CUDA,
//            ch. 3, with bounds checks
//            so that any M, N, K and any grid that covers C works.
// Fraction of cuBLAS (float32 SGEMM, kernel time, `goamp bench --device cuda`,
// H100 80GB HBM3, 2026-11-22): 0.14 at n=1024, 0.11 at 2048, 0.105 at 4096.
//
// Contract (shared by every matmul kernel in this folder):
//   row-major A (M x K, row stride lda), B (K x N, ldb), C (M x N, ldc);
//   beta == 0 never reads C (NaN or garbage in C does not leak);
//   alpha == 0 does not read A or B (C = beta*C, as reference BLAS does);
//   int32 arithmetic wraps like Go's int32 (done in unsigned internally);
//   the host launches nothing when M or N is 0 (a grid of 0 is invalid).
//
// Symbols: matmul_naive_f32, matmul_naive_f64, matmul_naive_i32, each
//   (int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb,
//    T beta, T* C, int ldc).

#include <cstddef>

namespace {

// Acc<T>::type is the type the kernel computes in: T for floating point,
// unsigned for int so that overflow wraps (signed overflow is UB in C++).
template <typename T> struct Acc { typedef T type; };
template <> struct Acc<int> { typedef unsigned int type; };

template <typename T>
__device__ __forceinline__ void matmul_naive(int M, int N, int K, T alpha,
                                             const T* __restrict__ A, int lda,
                                             const T* __restrict__ B, int ldb,
                                             T beta, T* __restrict__ C, int ldc) {
    typedef typename Acc<T>::type U;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) {
        return;
    }
    U acc = U(0);
    if (alpha != T(0)) {
        const T* a = A + (size_t)row * (size_t)lda;
        const T* b = B + (size_t)col;
        for (int k = 0; k < K; ++k) {
            acc += U(a[k]) * U(*b);
            b += ldb;
        }
        acc = U(alpha) * acc;
    }
    T* c = C + (size_t)row * (size_t)ldc + (size_t)col;
    if (beta == T(0)) {
        *c = T(acc);
    } else {
        *c = T(acc + U(beta) * U(*c));
    }
}

} // namespace

#define MATMUL_NAIVE(NAME, T)                                                   \
    extern "C" __global__ void __launch_bounds__(1024)                          \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,        \
         const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) { \
        matmul_naive<T>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);          \
    }

MATMUL_NAIVE(matmul_naive_f32, float)
MATMUL_NAIVE(matmul_naive_f64, double)
MATMUL_NAIVE(matmul_naive_i32, int)
