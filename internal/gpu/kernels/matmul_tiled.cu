// matmul_tiled.cu: C = alpha*A*B + beta*C with shared-memory tiles.
//
// Technique: each block computes a TILE x TILE tile of C, one thread per
// element; in each phase the block's threads copy a TILE x TILE tile of A and
// one of B into shared memory (tile_static in C++ AMP), wait at a barrier,
// take TILE multiply-adds from shared memory, and wait again. Every element of
// A and B is read from global memory once per tile instead of once per thread.
// Shape:     block = TILE x TILE threads (8x8, 16x16, 32x32); grid =
//            ceil(N/TILE) x ceil(M/TILE) (x: columns of C, y: rows);
//            static shared memory 2 * TILE * TILE * sizeof(T)
//            (32x32 float64: 16 KiB). No padding column: threads of a warp read
//            As[ty][k] (one broadcast address per ty) and Bs[k][tx]
//            (consecutive words), so there are no bank conflicts to avoid.
// Follows:   Kirk & Hwu, Programming Massively Parallel Processors, tiled
//            matrix multiply with boundary checks (ch. 4, 3rd ed.; ch. 5, 4th
//            ed.): tile loads that put 0 where no element exists, guarded
//            stores. MultiplyWithTiling of the C++ AMP "Walkthrough: Matrix
//            Multiplication" (Microsoft Learn) is the same technique for
//            square matrices; here for any M, N, K.
// Fraction of cuBLAS (float32 SGEMM, kernel time, `goamp bench --device cuda`,
// H100 80GB HBM3, 2026-11-22): tile 16: 0.21, 0.16, 0.16 and tile 32: 0.235,
// 0.18, 0.16 at n = 1024, 2048, 4096.
//
// Contract: as matmul_naive.cu (row-major, strides, beta == 0 never reads C,
// alpha == 0 never reads A or B, int32 wraps); the block must be exactly
// TILE x TILE threads.
//
// Symbols: matmul_tiled{8,16,32}_{f32,f64,i32}, each
//   (int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb,
//    T beta, T* C, int ldc).

#include <cstddef>

namespace {

template <typename T> struct Acc { typedef T type; };
template <> struct Acc<int> { typedef unsigned int type; };

template <typename T, int TILE>
__device__ __forceinline__ void matmul_tiled(int M, int N, int K, T alpha,
                                             const T* __restrict__ A, int lda,
                                             const T* __restrict__ B, int ldb,
                                             T beta, T* __restrict__ C, int ldc) {
    typedef typename Acc<T>::type U;
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty; // row of C and of A
    const int col = blockIdx.x * TILE + tx; // column of C and of B

    U acc = U(0);
    // alpha is the same for every thread of the block, so every thread takes
    // the same branch and reaches the same barriers.
    if (alpha != T(0)) {
        for (int k0 = 0; k0 < K; k0 += TILE) {
            // Bounds-checked loads: 0 where no element exists (PMPP's boundary checks).
            const int ka = k0 + tx; // column of A this thread loads
            const int kb = k0 + ty; // row of B this thread loads
            As[ty][tx] = (row < M && ka < K) ? A[(size_t)row * (size_t)lda + (size_t)ka] : T(0);
            Bs[ty][tx] = (kb < K && col < N) ? B[(size_t)kb * (size_t)ldb + (size_t)col] : T(0);
            __syncthreads();
#pragma unroll
            for (int k = 0; k < TILE; ++k) {
                acc += U(As[ty][k]) * U(Bs[k][tx]);
            }
            __syncthreads();
        }
        acc = U(alpha) * acc;
    }

    // Guarded store: threads outside C took part in the loads only.
    if (row < M && col < N) {
        T* c = C + (size_t)row * (size_t)ldc + (size_t)col;
        if (beta == T(0)) {
            *c = T(acc);
        } else {
            *c = T(acc + U(beta) * U(*c));
        }
    }
}

} // namespace

#define MATMUL_TILED(NAME, T, TILE)                                             \
    extern "C" __global__ void __launch_bounds__(TILE * TILE)                   \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,        \
         const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) { \
        matmul_tiled<T, TILE>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);    \
    }

MATMUL_TILED(matmul_tiled8_f32, float, 8)
MATMUL_TILED(matmul_tiled8_f64, double, 8)
MATMUL_TILED(matmul_tiled8_i32, int, 8)
MATMUL_TILED(matmul_tiled16_f32, float, 16)
MATMUL_TILED(matmul_tiled16_f64, double, 16)
MATMUL_TILED(matmul_tiled16_i32, int, 16)
MATMUL_TILED(matmul_tiled32_f32, float, 32)
MATMUL_TILED(matmul_tiled32_f64, double, 32)
MATMUL_TILED(matmul_tiled32_i32, int, 32)
