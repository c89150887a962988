// gemm_bench.cu: checks matmul_reg128.cu's kernels against a float64 host
// reference on odd shapes (every transpose, type, alpha/beta case, padded
// and misaligned operands, batches), then times them against cuBLAS in one
// process, interleaved run by run, and prints kernel time over cuBLAS's.
// It exists to develop the kernels on the GPU machine without the Go side;
// the Go conformance suite remains the check of record.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o gemm_bench gemm_bench.cu -lcublas -lcuda
//   ./gemm_bench check          # correctness only
//   ./gemm_bench bench [reps]   # timing table (float32, then float64)
//   ./gemm_bench skinny [reps]  # M or N of 64 or less: the shipped split against others
//   ./gemm_bench relayout [reps] # operands copied transposed first (transpose.cu), the other layout's kernel
//   ./gemm_bench pipe REPS [i..] # every transpose at 2048-8192: shipped against loop variants (PIPE, SNAKE, split or not)
//   ./gemm_bench pipeskinny REPS # 64x8192x8192 and 8192x64x8192: shipped against the 64-wide tiles' loop variants
//   ./gemm_bench tn REPS        # tn at 2048-8192: shipped against the cp.async variants
//   ./gemm_bench tma REPS [i..] # tn fed by TMA: odd shapes checked, then 2048-8192 against the shipped kernel
//                               # (build with -gencode=arch=compute_90,code=sm_90 ... -lcublas -lcuda)
//   ./gemm_bench one T N REPS   # one transpose (0 nn .. 3 tt) at n = N, as gpu.Gemm runs it (for ncu)
#include "../matmul_reg128.cu"
#include "../transpose.cu"

#include "bench_common.cuh"
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>


typedef void (*KernelF32)(int, int, int, float, const float*, int, long long, const float*, int, long long, float, float*, int, long long, int, float*);
typedef void (*KernelF64)(int, int, int, double, const double*, int, long long, const double*, int, long long, double, double*, int, long long, int, double*);
typedef void (*KernelI32)(int, int, int, int, const int*, int, long long, const int*, int, long long, int, int*, int, long long, int, int*);

template <typename T> struct Kernels;
template <> struct Kernels<float> {
    static constexpr const char* name = "float32";
    static KernelF32 get(int t) {
        KernelF32 k[4] = {matmul_reg128_nn_f32, matmul_reg128_nt_f32, matmul_reg128_tn_f32, matmul_reg128_tt_f32};
        return k[t];
    }
    // The 64x128 (m64) and 128x64 (n64) tiles, float32 only.
    static KernelF32 m64(int t) {
        KernelF32 k[4] = {matmul_reg128_m64_nn_f32, matmul_reg128_m64_nt_f32, matmul_reg128_m64_tn_f32, matmul_reg128_m64_tt_f32};
        return k[t];
    }
    static KernelF32 n64(int t) {
        KernelF32 k[4] = {matmul_reg128_n64_nn_f32, matmul_reg128_n64_nt_f32, matmul_reg128_n64_tn_f32, matmul_reg128_n64_tt_f32};
        return k[t];
    }
    // The kernel without split K (tn only).
    static KernelF32 whole(int t) {
        KernelF32 k[4] = {nullptr, nullptr, matmul_reg128_whole_tn_f32, nullptr};
        return k[t];
    }
    static void reduce(dim3 g, int M, int N, int S, const float* w, float beta, float* C, int ldc, long long sC) {
        matmul_reg128_reduce_f32<<<g, 256>>>(M, N, S, w, beta, C, ldc, sC);
    }
};
template <> struct Kernels<double> {
    static constexpr const char* name = "float64";
    static KernelF64 m64(int) { return nullptr; }
    static KernelF64 whole(int) { return nullptr; }
    static KernelF64 n64(int) { return nullptr; }
    static KernelF64 get(int t) {
        KernelF64 k[4] = {matmul_reg128_nn_f64, matmul_reg128_nt_f64, matmul_reg128_tn_f64, matmul_reg128_tt_f64};
        return k[t];
    }
    static void reduce(dim3 g, int M, int N, int S, const double* w, double beta, double* C, int ldc, long long sC) {
        matmul_reg128_reduce_f64<<<g, 256>>>(M, N, S, w, beta, C, ldc, sC);
    }
};
template <> struct Kernels<int> {
    static constexpr const char* name = "int32";
    static KernelI32 m64(int) { return nullptr; }
    static KernelI32 whole(int) { return nullptr; }
    static KernelI32 n64(int) { return nullptr; }
    static KernelI32 get(int t) {
        KernelI32 k[4] = {matmul_reg128_nn_i32, matmul_reg128_nt_i32, matmul_reg128_tn_i32, matmul_reg128_tt_i32};
        return k[t];
    }
    static void reduce(dim3 g, int M, int N, int S, const int* w, int beta, int* C, int ldc, long long sC) {
        matmul_reg128_reduce_i32<<<g, 256>>>(M, N, S, w, beta, C, ldc, sC);
    }
};

// Tiling variants of the nn kernels, timed by "variants" mode to choose
// the shipped shapes.
#define VARIANT(NAME, T, G, THREADS, MINB)                                                   \
    __global__ void __launch_bounds__(THREADS, MINB)                                         \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, long long strideA, \
         const T* __restrict__ B, int ldb, long long strideB, T beta, T* __restrict__ C,     \
         int ldc, long long strideC, int kSlice, T* work) {                                  \
        matmul_reg<T, false, false, G>(M, N, K, alpha, A, lda, strideA, B, ldb, strideB,     \
                                       beta, C, ldc, strideC, kSlice, work);                 \
    }
typedef Tiling<128, 128, 16, 8, 8, 256> T_128x128x16_8x8;
typedef Tiling<128, 128, 8, 8, 16, 128> T_128x128x8_8x16;
typedef Tiling<128, 256, 8, 8, 16, 256> T_128x256x8_8x16;
typedef Tiling<128, 64, 8, 8, 8, 128> T_128x64x8_8x8;
typedef Tiling<64, 64, 8, 8, 8, 64> T_64x64x8_8x8;
typedef Tiling<128, 128, 8, 8, 8, 256> T_128x128x8_8x8;
typedef Tiling<128, 256, 8, 8, 16, 256, 2> T_128x256x8_8x16_2;
typedef Tiling<256, 128, 8, 16, 8, 256, 2> T_256x128x8_16x8_2;
typedef Tiling<128, 128, 8, 8, 8, 256, 2> T_128x128x8_8x8_2;
typedef Tiling<128, 128, 8, 8, 16, 128, 2> T_128x128x8_8x16_2;
VARIANT(v_f32_a, float, T_128x128x8_8x8, 256, 2)
VARIANT(v_f32_b, float, T_128x128x16_8x8, 256, 2)
VARIANT(v_f32_c, float, T_128x128x8_8x16, 128, 2)
VARIANT(v_f32_d, float, T_128x256x8_8x16, 256, 1)
VARIANT(v_f32_e, float, T_128x64x8_8x8, 128, 4)
VARIANT(v_f32_f, float, T_64x64x8_8x8, 64, 6)
VARIANT(v_f32_g, float, T_128x256x8_8x16_2, 256, 1)
VARIANT(v_f32_h, float, T_256x128x8_16x8_2, 256, 1)
VARIANT(v_f32_i, float, T_128x128x8_8x8_2, 256, 2)
VARIANT(v_f32_j, float, T_128x128x8_8x16_2, 128, 2)
VARIANT(v_f64_a, double, T_128x128x8_8x8, 256, 1)
VARIANT(v_f64_c, double, T_64x64x8_8x8, 64, 4)
VARIANT(v_f64_d, double, T_128x64x8_8x8, 128, 2)

// Variants of the loop itself (Tiling's PIPE and SNAKE), for each
// transpose, with or without split K, timed by "pipe" mode against the
// shipped kernels as gpu.Gemm launches them; and the 64x128 and 128x64
// tiles with the PIPE loop, timed by "pipeskinny".
#define VARIANT_T(NAME, T, TA, TB, G, THREADS, MINB, SPLIT)                                  \
    __global__ void __launch_bounds__(THREADS, MINB)                                         \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, long long strideA, \
         const T* __restrict__ B, int ldb, long long strideB, T beta, T* __restrict__ C,     \
         int ldc, long long strideC, int kSlice, T* work) {                                  \
        matmul_reg<T, TA, TB, G, SPLIT>(M, N, K, alpha, A, lda, strideA, B, ldb, strideB,    \
                                        beta, C, ldc, strideC, kSlice, work);                \
    }
#define VARIANT4(NAME, G, THREADS, MINB, SPLIT)                                 \
    VARIANT_T(NAME##_nn, float, false, false, G, THREADS, MINB, SPLIT)          \
    VARIANT_T(NAME##_nt, float, false, true, G, THREADS, MINB, SPLIT)           \
    VARIANT_T(NAME##_tn, float, true, false, G, THREADS, MINB, SPLIT)           \
    VARIANT_T(NAME##_tt, float, true, true, G, THREADS, MINB, SPLIT)
typedef Tiling<128, 128, 8, 8, 8, 256, 2, false, false> P_base;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, false> P_pipe2;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true> P_pipe2snake;
typedef Tiling<64, 128, 8, 8, 8, 128, 2, true> P_m64pipe;
typedef Tiling<128, 64, 8, 8, 8, 128, 2, true> P_n64pipe;
typedef Tiling<64, 128, 8, 8, 8, 128, 2, true, true> P_m64pipesnake;
typedef Tiling<128, 64, 8, 8, 8, 128, 2, true, true> P_n64pipesnake;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 1> P_cols;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 2> P_pairs;
VARIANT4(p_cols, P_cols, 256, 2, true)
VARIANT4(p_colswhole, P_cols, 256, 2, false)
VARIANT4(p_pairs, P_pairs, 256, 2, true)
VARIANT4(p_pairswhole, P_pairs, 256, 2, false)
VARIANT4(p_base, P_base, 256, 2, false)
VARIANT4(p_pipe2, P_pipe2, 256, 2, false)
VARIANT4(p_pipe2snake, P_pipe2snake, 256, 2, false)
VARIANT4(p_pipe2split, P_pipe2, 256, 2, true)
VARIANT4(p_pipe2snakesplit, P_pipe2snake, 256, 2, true)
VARIANT4(p_m64pipe, P_m64pipe, 128, 3, true)
VARIANT4(p_n64pipe, P_n64pipe, 128, 3, true)
VARIANT4(p_m64pipesnake, P_m64pipesnake, 128, 3, true)
VARIANT4(p_n64pipesnake, P_n64pipesnake, 128, 3, true)

// tn through cp.async: both of tn's panels lie along m and n, so they can
// be copied to shared memory without registers or transposes. The first
// try (2026-11-23, the loop before PIPE, 3 or 4 stages) made 0.81 to 0.84
// of cuBLAS at 2048 to 8192 against the register-staged kernel's 0.85 to
// 0.86; the second (matmul_async_tn_pipe, with PIPE, 2026-11-24) 0.79 to
// 0.91 against 0.92 to 0.94 (docs/PERFORMANCE.md). Kept for the next try.
namespace {
// asyncPanel starts the copy of a BK x W panel whose source row k (of K)
// is contiguous along i (of extent): src[k*ld + i]. Pieces of 16 bytes;
// parts past an edge are zero-filled. Needs 16-byte aligned rows; vec
// false takes the element-by-element path.
template <typename T, int BK, int W, int THREADS>
__device__ __forceinline__ void asyncPanel(T (*S)[W], const T* __restrict__ src, int ld, int i0, int extent,
                                           int k0, int K, bool vec, int tid) {
    constexpr int E = 16 / sizeof(T);             // elements a piece
    constexpr int PIECES = BK * W / E;
    static_assert(PIECES % THREADS == 0, "whole pieces a thread");
#pragma unroll
    for (int j = 0; j < PIECES / THREADS; ++j) {
        const int q = tid + j * THREADS;
        const int k = q / (W / E), i = (q % (W / E)) * E;
        const int gk = k0 + k, gi = i0 + i;
        if (vec) {
            const int valid = (gk < K) ? max(0, min(E, extent - gi)) : 0;
            const T* p = valid > 0 ? src + (size_t)gk * ld + gi : src;
            gemm::copy16(&S[k][i], p, valid * (int)sizeof(T));
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                S[k][i + e] = (gk < K && gi + e < extent) ? src[(size_t)gk * ld + gi + e] : T(0);
        }
    }
}

// matmul_async_tn_pipe is reg128's tn kernel with its panels copied by
// cp.async (asyncPanel) into a ring of STAGES buffers in dynamic shared
// memory, with the fragment pipeline (Tiling's PIPE, SNAKE and ORDER; no
// split K): k+1's values of A and B load from shared memory while k's
// multiply-adds run, and the step's wait for the next stage's copies and
// its barrier sit before the last k's multiply-adds. No registers stage
// the global loads, which was to leave the fragment sets room in the 128
// registers of two blocks an SM; the copies' address and bounds arithmetic
// took it instead (the BK = 8 variants spill 16 to 40 bytes).
template <typename T, class G, int STAGES>
__device__ __forceinline__ void matmul_async_tn_pipe(int M, int N, int K, T alpha,
                                                     const T* __restrict__ A, int lda, long long strideA,
                                                     const T* __restrict__ B, int ldb, long long strideB,
                                                     T beta, T* __restrict__ C, int ldc, long long strideC) {
    typedef typename Acc<T>::type U;
    constexpr int BM = G::BM, BN = G::BN, BK = G::BK, TM = G::TM, TN = G::TN, THREADS = G::THREADS;
    constexpr int QM = TM / 4, QN = TN / 4;
    constexpr int SM = BM / QM, SN = BN / QN;
    static_assert(BK % 2 == 0, "fragment sets alternate");
    extern __shared__ __align__(16) unsigned char dyn[];
    T (*As)[BK][BM] = reinterpret_cast<T (*)[BK][BM]>(dyn);
    T (*Bs)[BK][BN] = reinterpret_cast<T (*)[BK][BN]>(dyn + (size_t)STAGES * BK * BM * sizeof(T));

    const int tid = threadIdx.x;
    const long long batch = blockIdx.z;
    A += batch * strideA;
    B += batch * strideB;
    C += batch * strideC;
    int tileM, tileN;
    gemm::grouped_tile<GROUP>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
    const int m0 = tileM * BM, n0 = tileN * BN;
    const int tx = tid % G::TC, ty = tid / G::TC;

    U acc[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c) acc[r][c] = U(0);

    if (alpha != T(0) && K > 0) {
        const bool vecA = ((reinterpret_cast<uintptr_t>(A) & 15) == 0) && (lda % (16 / sizeof(T)) == 0);
        const bool vecB = ((reinterpret_cast<uintptr_t>(B) & 15) == 0) && (ldb % (16 / sizeof(T)) == 0);
        const int steps = (K + BK - 1) / BK;
        auto issue = [&](int st) {
            if (st < steps) {
                asyncPanel<T, BK, BM, THREADS>(As[st % STAGES], A, lda, m0, M, st * BK, K, vecA, tid);
                asyncPanel<T, BK, BN, THREADS>(Bs[st % STAGES], B, ldb, n0, N, st * BK, K, vecB, tid);
            }
            gemm::commit(); // empty groups too: wait counts stay uniform
        };
        auto outer = [&](const T (&a)[QM][4], const T (&b)[QN][4]) {
            if (G::ORDER == 1) {
#pragma unroll
                for (int c = 0; c < TN; ++c)
#pragma unroll
                    for (int r0 = 0; r0 < TM; ++r0) {
                        const int r = (G::SNAKE && (c & 1)) ? TM - 1 - r0 : r0;
                        acc[r][c] += U(a[r / 4][r % 4]) * U(b[c / 4][c % 4]);
                    }
            } else {
#pragma unroll
                for (int r = 0; r < TM; ++r)
#pragma unroll
                    for (int c0 = 0; c0 < TN; ++c0) {
                        const int c = (G::SNAKE && (r & 1)) ? TN - 1 - c0 : c0;
                        acc[r][c] += U(a[r / 4][r % 4]) * U(b[c / 4][c % 4]);
                    }
            }
        };
        T fa[2][QM][4], fb[2][QN][4];
        auto frag = [&](int i, int buf, int kk) {
#pragma unroll
            for (int q = 0; q < QM; ++q) Quad<T>::load(&As[buf][kk][q * SM + ty * 4], fa[i][q]);
#pragma unroll
            for (int q = 0; q < QN; ++q) Quad<T>::load(&Bs[buf][kk][q * SN + tx * 4], fb[i][q]);
        };
#pragma unroll
        for (int st = 0; st < STAGES - 1; ++st) issue(st);
        gemm::wait_pending<STAGES - 2>();
        __syncthreads();
        frag(0, 0, 0);
        for (int s = 0; s < steps; ++s) {
            const int buf = s % STAGES;
            // Buffer (s-1) % STAGES was last read before step s-1's barrier.
            issue(s + STAGES - 1);
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                if (kk == BK - 1) {
                    gemm::wait_pending<STAGES - 2>(); // step s+1's copies, this thread's
                    __syncthreads();           // everyone's; and buffer s read by all
                    if (s + 1 < steps) frag(0, (s + 1) % STAGES, 0);
                } else {
                    frag((kk + 1) & 1, buf, kk + 1);
                }
                outer(fa[kk & 1], fb[kk & 1]);
            }
        }
        gemm::wait_pending<0>();
    }

    store_tile<T, G>(acc, alpha, beta, C, ldc, nullptr, batch, M, N, m0, n0, tx, ty);
}

} // namespace

// tn fed by TMA (2026-11-25): both of tn's panels lie along m and n, as
// TMA's boxes do (a box of BM x BK of A^T, K x M, lands as BK rows of BM,
// the k-major panel the loop reads), so one thread copies a step's two
// panels with two instructions: no registers stage them, no thread
// computes an address or a bound (parts past an edge arrive as zeros).
// A ring of STAGES buffers, each with a "full" mbarrier that TMA's bytes
// complete. SYNC: the step's barrier (before its last k, as PIPE places
// it) frees the buffer read in the step before, into which thread 0 then
// copies step s+STAGES-1. Otherwise each warp arrives on the buffer's
// "empty" mbarrier when it has read it, and thread 0 waits for the buffer
// read LAG steps before, so warps meet at no barrier.
namespace {
template <class G, int STAGES, bool SYNC, int LAG>
__device__ __forceinline__ void matmul_tma_tn_pipe(int M, int N, int K, float alpha, const gemm::TensorMap* mapA,
                                                   const gemm::TensorMap* mapB, float beta, float* __restrict__ C,
                                                   int ldc, long long strideC) {
    constexpr int BM = G::BM, BN = G::BN, BK = G::BK, TM = G::TM, TN = G::TN, THREADS = G::THREADS;
    constexpr int QM = TM / 4, QN = TN / 4;
    constexpr int SM = BM / QM, SN = BN / QN;
    static_assert(BK % 2 == 0, "fragment sets alternate");
    static_assert(LAG >= 1 && LAG < STAGES, "a buffer freed before it is refilled");
    constexpr unsigned BYTES = (BM + BN) * BK * sizeof(float);
    extern __shared__ __align__(128) unsigned char dynTma[]; // TMA writes 128-byte aligned boxes
    float (*As)[BK][BM] = reinterpret_cast<float (*)[BK][BM]>(dynTma);
    float (*Bs)[BK][BN] = reinterpret_cast<float (*)[BK][BN]>(dynTma + (size_t)STAGES * BK * BM * sizeof(float));
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];

    const int tid = threadIdx.x;
    const int batch = blockIdx.z;
    C += batch * strideC;
    int tileM, tileN;
    gemm::grouped_tile<GROUP>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
    const int m0 = tileM * BM, n0 = tileN * BN;
    const int tx = tid % G::TC, ty = tid / G::TC;

    float acc[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c) acc[r][c] = 0.f;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gemm::bar_init(gemm::smem_addr(&full[s]), 1);
            gemm::bar_init(gemm::smem_addr(&empty[s]), THREADS / 32);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (alpha != 0.f && K > 0) {
        const int steps = (K + BK - 1) / BK;
        auto issue = [&](int st) { // thread 0
            const int slot = st % STAGES;
            const unsigned bar = gemm::smem_addr(&full[slot]);
            gemm::bar_expect(bar, BYTES);
            gemm::tma_load(gemm::smem_addr(&As[slot][0][0]), mapA, m0, st * BK, batch, bar);
            gemm::tma_load(gemm::smem_addr(&Bs[slot][0][0]), mapB, n0, st * BK, batch, bar);
        };
        auto outer = [&](const float (&a)[QM][4], const float (&b)[QN][4]) {
            if (G::ORDER == 1) {
#pragma unroll
                for (int c = 0; c < TN; ++c)
#pragma unroll
                    for (int r0 = 0; r0 < TM; ++r0) {
                        const int r = (G::SNAKE && (c & 1)) ? TM - 1 - r0 : r0;
                        acc[r][c] += a[r / 4][r % 4] * b[c / 4][c % 4];
                    }
            } else if (G::ORDER == 2) {
#pragma unroll
                for (int p = 0; p < TM / 2; ++p)
#pragma unroll
                    for (int c0 = 0; c0 < TN; ++c0) {
                        const int c = (G::SNAKE && (p & 1)) ? TN - 1 - c0 : c0;
#pragma unroll
                        for (int r = 2 * p; r < 2 * p + 2; ++r) acc[r][c] += a[r / 4][r % 4] * b[c / 4][c % 4];
                    }
            } else {
#pragma unroll
                for (int r = 0; r < TM; ++r)
#pragma unroll
                    for (int c0 = 0; c0 < TN; ++c0) {
                        const int c = (G::SNAKE && (r & 1)) ? TN - 1 - c0 : c0;
                        acc[r][c] += a[r / 4][r % 4] * b[c / 4][c % 4];
                    }
            }
        };
        float fa[2][QM][4], fb[2][QN][4];
        auto frag = [&](int i, int buf, int kk) {
#pragma unroll
            for (int q = 0; q < QM; ++q) Quad<float>::load(&As[buf][kk][q * SM + ty * 4], fa[i][q]);
#pragma unroll
            for (int q = 0; q < QN; ++q) Quad<float>::load(&Bs[buf][kk][q * SN + tx * 4], fb[i][q]);
        };
        if (tid == 0)
            for (int st = 0; st < STAGES - LAG && st < steps; ++st) issue(st);
        gemm::bar_wait(gemm::smem_addr(&full[0]), 0);
        frag(0, 0, 0);
        for (int s = 0; s < steps; ++s) {
            const int buf = s % STAGES;
            if (tid == 0 && s + STAGES - LAG < steps) {
                // Its buffer was read in step s-LAG.
                if (!SYNC && s >= LAG) gemm::bar_wait(gemm::smem_addr(&empty[(s - LAG) % STAGES]), ((s - LAG) / STAGES) & 1);
                issue(s + STAGES - LAG);
            }
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                if (kk == BK - 1) {
                    if (SYNC) {
                        __syncthreads();
                    } else {
                        __syncwarp();
                        if ((tid & 31) == 0) gemm::bar_arrive(gemm::smem_addr(&empty[buf]));
                    }
                    if (s + 1 < steps) {
                        gemm::bar_wait(gemm::smem_addr(&full[(s + 1) % STAGES]), ((s + 1) / STAGES) & 1);
                        frag(0, (s + 1) % STAGES, 0);
                    }
                } else {
                    frag((kk + 1) & 1, buf, kk + 1);
                }
                outer(fa[kk & 1], fb[kk & 1]);
            }
        }
    }

    store_tile<float, G>(acc, alpha, beta, C, ldc, nullptr, 0, M, N, m0, n0, tx, ty);
}
} // namespace

typedef void (*TmaTnKernel)(int, int, int, float, const gemm::TensorMap, const gemm::TensorMap, float, float*, int,
                            long long);
#define TMA_TN(NAME, G, STAGES, SYNC, LAG, MINB)                                                                   \
    __global__ void __launch_bounds__(256, MINB)                                                                   \
    NAME(int M, int N, int K, float alpha, const __grid_constant__ gemm::TensorMap a,                              \
         const __grid_constant__ gemm::TensorMap b, float beta, float* __restrict__ C, int ldc, long long sC) {    \
        matmul_tma_tn_pipe<G, STAGES, SYNC, LAG>(M, N, K, alpha, &a, &b, beta, C, ldc, sC);                        \
    }
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 0> TM_rows;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 1> TM_cols;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 2> TM_pairs;
typedef Tiling<128, 128, 16, 8, 8, 256, 2, true, true, 0> TM_rows16;
typedef Tiling<128, 128, 16, 8, 8, 256, 2, true, true, 1> TM_cols16;
TMA_TN(tma_rows_s4, TM_rows, 4, true, 1, 2)
TMA_TN(tma_cols_s4, TM_cols, 4, true, 1, 2)
TMA_TN(tma_pairs_s4, TM_pairs, 4, true, 1, 2)
TMA_TN(tma_rows16_s3, TM_rows16, 3, true, 1, 2)
TMA_TN(tma_rows16_s4, TM_rows16, 4, true, 1, 2)
TMA_TN(tma_cols16_s4, TM_cols16, 4, true, 1, 2)
TMA_TN(tma_rows_s4_free, TM_rows, 4, false, 2, 2)
TMA_TN(tma_cols_s4_free, TM_cols, 4, false, 2, 2)
TMA_TN(tma_rows_s6_free, TM_rows, 6, false, 2, 2)
TMA_TN(tma_rows16_s4_free, TM_rows16, 4, false, 2, 2)
TMA_TN(tma_cols16_s4_free, TM_cols16, 4, false, 2, 2)
struct TmaTn {
    const char* name;
    TmaTnKernel fn;
    int bk, stages;
};
static TmaTn variantsTma[] = {
    {"tma rows bk8 4st sync", tma_rows_s4, 8, 4},         {"tma cols bk8 4st sync", tma_cols_s4, 8, 4},
    {"tma pairs bk8 4st sync", tma_pairs_s4, 8, 4},       {"tma rows bk16 3st sync", tma_rows16_s3, 16, 3},
    {"tma rows bk16 4st sync", tma_rows16_s4, 16, 4},     {"tma cols bk16 4st sync", tma_cols16_s4, 16, 4},
    {"tma rows bk8 4st free", tma_rows_s4_free, 8, 4},    {"tma cols bk8 4st free", tma_cols_s4_free, 8, 4},
    {"tma rows bk8 6st free", tma_rows_s6_free, 8, 6},    {"tma rows bk16 4st free", tma_rows16_s4_free, 16, 4},
    {"tma cols bk16 4st free", tma_cols16_s4_free, 16, 4},
};

// tmaMapF32 describes a K x extent operand (row stride ld, batches stride
// apart) for boxes of 128 x bk.
static gemm::TensorMap tmaMapF32(const float* p, int extent, int K, int ld, long long stride, int batch, int bk) {
    CUtensorMap m;
    cuuint64_t dim[3] = {(cuuint64_t)extent, (cuuint64_t)K, (cuuint64_t)batch};
    cuuint64_t gstride[2] = {(cuuint64_t)ld * 4, (cuuint64_t)stride * 4};
    cuuint32_t box[3] = {128, (cuuint32_t)bk, 1};
    cuuint32_t estride[3] = {1, 1, 1};
    CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float*>(p), dim, gstride, box,
                                        estride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled: error %d (extent %d K %d ld %d batch %d)\n", (int)r, extent, K, ld, batch);
        exit(2);
    }
    gemm::TensorMap out;
    memcpy(&out, &m, sizeof out);
    return out;
}
template <typename T>
static void tmaLaunch(const TmaTn&, int, int, int, T, const T*, int, const T*, int, T, T*, int) {
    fprintf(stderr, "TMA-fed tn is float32 only\n");
    exit(2);
}
static void tmaLaunch(const TmaTn& v, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                      float beta, float* C, int ldc) {
    const gemm::TensorMap ma = tmaMapF32(A, M, K, lda, (long long)K * lda, 1, v.bk);
    const gemm::TensorMap mb = tmaMapF32(B, N, K, ldb, (long long)K * ldb, 1, v.bk);
    const int smem = 256 * v.bk * v.stages * (int)sizeof(float);
    static bool attr[64];
    const int idx = (int)(&v - variantsTma);
    if (!attr[idx]) {
        CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        attr[idx] = true;
    }
    v.fn<<<dim3(((M + 127) / 128) * ((N + 127) / 128), 1, 1), 256, smem>>>(M, N, K, alpha, ma, mb, beta, C, ldc, 0);
}

#define ASYNC_TN_PIPE(NAME, T, G, STAGES, THREADS, MINB)                                    \
    __global__ void __launch_bounds__(THREADS, MINB)                                         \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, long long strideA, \
         const T* __restrict__ B, int ldb, long long strideB, T beta, T* __restrict__ C,     \
         int ldc, long long strideC, int, T*) {                                              \
        matmul_async_tn_pipe<T, G, STAGES>(M, N, K, alpha, A, lda, strideA, B, ldb, strideB, \
                                           beta, C, ldc, strideC);                           \
    }
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 0> AP_rows;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 1> AP_cols;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, false, 0> AP_plain;
typedef Tiling<128, 256, 8, 8, 16, 256, 2, true, true, 0> AP_wide;
typedef Tiling<128, 128, 16, 8, 8, 256, 2, true, true, 0> AP_rows16;
ASYNC_TN_PIPE(ap_tn_rows3, float, AP_rows, 3, 256, 2)
ASYNC_TN_PIPE(ap_tn_rows4, float, AP_rows, 4, 256, 2)
ASYNC_TN_PIPE(ap_tn_cols3, float, AP_cols, 3, 256, 2)
ASYNC_TN_PIPE(ap_tn_cols4, float, AP_cols, 4, 256, 2)
ASYNC_TN_PIPE(ap_tn_plain4, float, AP_plain, 4, 256, 2)
ASYNC_TN_PIPE(ap_tn_wide4, float, AP_wide, 4, 256, 1)
ASYNC_TN_PIPE(ap_tn_rows16_3, float, AP_rows16, 3, 256, 2)

template <typename T>
struct Variant {
    const char* name;
    void (*fn)(int, int, int, T, const T*, int, long long, const T*, int, long long, T, T*, int, long long, int, T*);
    int bm, bn, threads;
    int S; // slices of K (0 or 1: none)
    int smem = 0; // dynamic shared memory, bytes
};
static Variant<float> variantsF32[] = {
    {"128x128x8 8x8 256t", v_f32_a, 128, 128, 256}, {"128x128x16 8x8 256t", v_f32_b, 128, 128, 256},
    {"128x128x8 8x16 128t", v_f32_c, 128, 128, 128}, {"128x256x8 8x16 256t", v_f32_d, 128, 256, 256},
    {"128x64x8 8x8 128t", v_f32_e, 128, 64, 128},   {"64x64x8 8x8 64t", v_f32_f, 64, 64, 64},
    {"128x256x8 8x16 2ah", v_f32_g, 128, 256, 256}, {"256x128x8 16x8 2ah", v_f32_h, 256, 128, 256},
    {"128x128x8 8x8 2ah", v_f32_i, 128, 128, 256},  {"128x128x8 8x16 128t 2ah", v_f32_j, 128, 128, 128},
};
// The cp.async variants of tn (matmul_async_tn_pipe, their stages in
// dynamic shared memory), timed by "tn".
struct TNPipe {
    const char* name;
    KernelF32 fn;
    int bm, bn, bk, stages;
};
static TNPipe variantsTNPipe[] = {
    {"async pipe rows 3st", ap_tn_rows3, 128, 128, 8, 3},   {"async pipe rows 4st", ap_tn_rows4, 128, 128, 8, 4},
    {"async pipe cols 3st", ap_tn_cols3, 128, 128, 8, 3},   {"async pipe cols 4st", ap_tn_cols4, 128, 128, 8, 4},
    {"async pipe nosnake 4st", ap_tn_plain4, 128, 128, 8, 4}, {"async pipe 128x256 8x16 4st", ap_tn_wide4, 128, 256, 8, 4},
    {"async pipe rows bk16 3st", ap_tn_rows16_3, 128, 128, 16, 3},
};
static Variant<double> variantsF64[] = {
    {"128x128x8 8x8 256t", v_f64_a, 128, 128, 256}, {"64x64x8 8x8 64t", v_f64_c, 64, 64, 64},       {"128x64x8 8x8 128t", v_f64_d, 128, 64, 128},
};

// The loop variants by transpose (0 nn .. 3 tt).
struct PipeVariant {
    const char* name;
    KernelF32 fn[4];
    int bm, bn, threads;
};
#define PV(NAME, LABEL, BM, BN, TH) {LABEL, {NAME##_nn, NAME##_nt, NAME##_tn, NAME##_tt}, BM, BN, TH}
static PipeVariant pipeVariants[] = {
    PV(p_base, "old loop, whole", 128, 128, 256),
    PV(p_pipe2, "pipe, whole", 128, 128, 256),
    PV(p_pipe2snake, "pipe+snake, whole", 128, 128, 256),
    PV(p_pipe2split, "pipe, split", 128, 128, 256),
    PV(p_pipe2snakesplit, "pipe+snake, split", 128, 128, 256),
    PV(p_cols, "pipe, columns snake, split", 128, 128, 256),
    PV(p_colswhole, "pipe, columns snake, whole", 128, 128, 256),
    PV(p_pairs, "pipe, row pairs snake, split", 128, 128, 256),
    PV(p_pairswhole, "pipe, row pairs snake, whole", 128, 128, 256),
};
static PipeVariant skinnyVariants[] = {
    PV(p_m64pipe, "m64 pipe", 64, 128, 128),
    PV(p_n64pipe, "n64 pipe", 128, 64, 128),
    PV(p_m64pipesnake, "m64 pipe+snake", 64, 128, 128),
    PV(p_n64pipesnake, "n64 pipe+snake", 128, 64, 128),
};

static const char* transName[4] = {"nn", "nt", "tn", "tt"};

// The block shapes gpu.Gemm (internal/gpu/gemm.go) picks, mirrored here:
// 128x128, or for float32 with M or N of 64 or less 64x128 (m64) or 128x64
// (n64) blocks of 128 threads, three an SM.
struct Shape {
    int bm, bn, threads, perSM, which; // which: 0 128x128, 1 m64, 2 n64
};
template <typename T>
static Shape shapeFor(int M, int N) {
    if (std::is_same<T, float>::value && M <= 64 && M <= N) return {64, 128, 128, 3, 1};
    if (std::is_same<T, float>::value && N <= 64) return {128, 64, 128, 3, 2};
    return {128, 128, 256, std::is_same<T, double>::value ? 1 : 2, 0};
}

// splitFor is the split of K that gpu.Gemm chooses: none while the tiles of
// C fill the GPU, else as many slices of at least 256 along K as fit in it
// perSM blocks deep (never a second, part-filled wave), at most 16.
static int splitFor(int M, int N, int K, int batch, Shape sh) {
    static int sms = 0;
    if (!sms) CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    long long tiles = (long long)((M + sh.bm - 1) / sh.bm) * ((N + sh.bn - 1) / sh.bn) * batch;
    if (tiles >= sms || K < 512) return 1;
    long long want = (sms * sh.perSM) / tiles;
    return (int)std::max(1LL, std::min({want, (long long)K / 256, 16LL}));
}

// launchKind picks, for products of one slice of K with 128x128 tiles,
// 0: the kernels with split K; 1: the one without where there is one (tn,
// float32), as gpu.Gemm does.
static int launchKind = 1;

// launch runs the shipped kernels as gpu.Gemm would, split S ways along K
// (S = 0: as splitFor chooses), with a workspace of its own.
template <typename T>
static void launch(int t, int M, int N, int K, T alpha, const T* A, int lda, long long sA, const T* B, int ldb,
                   long long sB, T beta, T* C, int ldc, long long sC, int batch, int S = 0) {
    if (M == 0 || N == 0 || batch == 0) return;
    const Shape sh = shapeFor<T>(M, N);
    auto kern = sh.which == 1 ? Kernels<T>::m64(t) : sh.which == 2 ? Kernels<T>::n64(t) : Kernels<T>::get(t);
    const int blocks = ((M + sh.bm - 1) / sh.bm) * ((N + sh.bn - 1) / sh.bn);
    if (S == 0) S = splitFor(M, N, K, batch, sh);
    int kSlice = std::max(K, 1);
    if (S > 1 && K > 0) {
        kSlice = ((K + S - 1) / S + 7) / 8 * 8;
        S = (K + kSlice - 1) / kSlice;
    }
    if (S <= 1) {
        if (sh.which == 0 && launchKind == 1 && Kernels<T>::whole(t)) kern = Kernels<T>::whole(t);
        kern<<<dim3(blocks, 1, batch), sh.threads>>>(M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, kSlice, nullptr);
        return;
    }
    static T* work = nullptr;
    static size_t have = 0;
    size_t need = (size_t)S * M * N * batch * sizeof(T);
    if (need > have) {
        if (work) CK(cudaFree(work));
        CK(cudaMalloc(&work, need));
        have = need;
    }
    kern<<<dim3(blocks, S, batch), sh.threads>>>(M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, kSlice, work);
    Kernels<T>::reduce(dim3(std::min<long long>(((long long)M * N + 255) / 256, 1024), batch), M, N, S, work, beta, C, ldc, sC);
}

// The host reference: op(A) and op(B) as row-major storage says.
template <typename T>
static void reference(int t, int M, int N, int K, double alpha, const std::vector<T>& A, size_t offA, int lda,
                      const std::vector<T>& B, size_t offB, int ldb, double beta, const std::vector<T>& C0,
                      size_t offC, int ldc, std::vector<double>& out) {
    const bool ta = t >= 2, tb = t & 1;
    out.assign((size_t)M * N, 0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k) {
                double a = ta ? A[offA + (size_t)k * lda + i] : A[offA + (size_t)i * lda + k];
                double b = tb ? B[offB + (size_t)j * ldb + k] : B[offB + (size_t)k * ldb + j];
                s += a * b;
            }
            double c = beta != 0 ? (double)C0[offC + (size_t)i * ldc + j] : 0;
            out[(size_t)i * N + j] = alpha * s + beta * c;
        }
}

static int failures = 0;

template <typename T>
static T randomValue(std::mt19937_64& r) {
    if (std::is_same<T, int>::value) return T((int)(r() % 19) - 9);
    return T(std::uniform_real_distribution<double>(-1, 1)(r));
}

// checkOne runs one product (batch of 2 when batched) and compares every
// element of C, written and unwritten (padding must keep its poison).
template <typename T>
static void checkOne(std::mt19937_64& r, int t, int M, int N, int K, int pad, int misalign, bool batched,
                     double alpha, double beta, int S = 1) {
    const bool ta = t >= 2, tb = t & 1;
    const int rowsA = ta ? K : M, colsA = ta ? M : K;
    const int rowsB = tb ? N : K, colsB = tb ? K : N;
    const int lda = colsA + pad, ldb = colsB + pad, ldc = N + pad;
    const int batch = batched ? 2 : 1;
    const long long sA = (long long)rowsA * lda + 3, sB = (long long)rowsB * ldb + 5, sC = (long long)M * ldc + 7;
    const size_t nA = misalign + sA * batch + 1, nB = misalign + sB * batch + 1, nC = misalign + sC * batch + 1;
    std::vector<T> A(nA), B(nB), C(nC);
    for (auto& v : A) v = randomValue<T>(r);
    for (auto& v : B) v = randomValue<T>(r);
    const T poison = std::is_same<T, int>::value ? T(0x5a5a5a5a) : T(NAN);
    for (auto& v : C) v = beta != 0 ? randomValue<T>(r) : poison;
    std::vector<T> C0 = C;
    T *dA, *dB, *dC;
    CK(cudaMalloc(&dA, nA * sizeof(T)));
    CK(cudaMalloc(&dB, nB * sizeof(T)));
    CK(cudaMalloc(&dC, nC * sizeof(T)));
    CK(cudaMemcpy(dA, A.data(), nA * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), nB * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, C.data(), nC * sizeof(T), cudaMemcpyHostToDevice));
    launch<T>(t, M, N, K, T(alpha), dA + misalign, lda, sA, dB + misalign, ldb, sB, T(beta), dC + misalign, ldc, sC, batch, S);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C.data(), dC, nC * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dC));
    std::vector<char> inside(nC, 0);
    double worst = 0;
    bool bad = false;
    for (int b = 0; b < batch; ++b) {
        std::vector<double> ref;
        reference<T>(t, M, N, K, alpha, A, misalign + b * sA, lda, B, misalign + b * sB, ldb, beta, C0, misalign + b * sC, ldc, ref);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                size_t at = misalign + b * sC + (size_t)i * ldc + j;
                inside[at] = 1;
                double got = (double)C[at], want = ref[(size_t)i * N + j];
                if (std::is_same<T, int>::value) {
                    if ((int)(long long)want != (int)got) bad = true;
                    continue;
                }
                // Error bound: K products of numbers up to 1, each rounded.
                double eps = std::is_same<T, float>::value ? 1.2e-7 : 2.3e-16;
                double tol = 4 * eps * (std::abs(alpha) * (K + 2) + std::abs(beta) * 2) + 1e-30;
                double err = std::abs(got - want);
                if (!(err <= tol)) bad = true;
                worst = std::max(worst, err / tol);
            }
    }
    for (size_t at = 0; at < nC; ++at) {
        if (inside[at]) continue;
        bool same = std::is_same<T, int>::value ? C[at] == C0[at] : (std::isnan((double)C0[at]) ? std::isnan((double)C[at]) : C[at] == C0[at]);
        if (!same) bad = true;
    }
    if (bad) {
        failures++;
        printf("FAIL %s %s M=%d N=%d K=%d pad=%d misalign=%d batch=%d alpha=%g beta=%g split=%d worst=%.3g\n", Kernels<T>::name,
               transName[t], M, N, K, pad, misalign, batch, alpha, beta, S, worst);
    }
}

template <typename T>
static void checkAll(std::mt19937_64& r) {
    const int shapes[][3] = {{1, 1, 1},     {1, 1, 0},     {2, 3, 5},      {7, 13, 5},     {17, 1, 33},
                             {1, 300, 129}, {300, 1, 64},  {127, 129, 131}, {128, 128, 8},  {128, 256, 16},
                             {129, 127, 9}, {257, 131, 67}, {64, 200, 300}, {333, 65, 7},   {250, 250, 250},
                             {64, 300, 600}, {40, 129, 77},  {300, 64, 900}, {200, 33, 31},   {64, 64, 64}};
    int n = 0;
    for (int t = 0; t < 4; ++t)
        for (auto& s : shapes) {
            const double alphas[] = {1, -0.75, 0};
            for (double alpha : alphas) {
                double beta = (n % 3 == 0) ? 0 : (n % 3 == 1 ? 1 : 0.5);
                if (std::is_same<T, int>::value) { alpha = std::round(alpha * 2); beta = std::round(beta * 2); }
                checkOne<T>(r, t, s[0], s[1], s[2], n % 2 ? 0 : 3, n % 5 == 0 ? 1 : 0, n % 4 == 0, alpha, beta, 1 + n % 4);
                n++;
            }
        }
    printf("check %s: %d products, %d failures so far\n", Kernels<T>::name, n, failures);
    fflush(stdout);
}

// ---- timing ----

// Relayout: operands copied transposed (transpose.cu) before the kernel of
// the other layout runs, as gpu.GemmOn's relayout does.
struct Relayout {
    bool a, b;
};
static void transposeLaunch(int R, int C, const float* src, int ld, float* dst, int ldT) {
    transpose_f32<<<dim3((C + 31) / 32, std::min((R + 31) / 32, 65535), 1), dim3(32, 8)>>>(R, C, src, ld, 0, dst, ldT, 0);
}
static void transposeLaunch(int R, int C, const double* src, int ld, double* dst, int ldT) {
    transpose_f64<<<dim3((C + 31) / 32, std::min((R + 31) / 32, 65535), 1), dim3(32, 8)>>>(R, C, src, ld, 0, dst, ldT, 0);
}
static void transposeLaunch(int R, int C, const int* src, int ld, int* dst, int ldT) {
    transpose_i32<<<dim3((C + 31) / 32, std::min((R + 31) / 32, 65535), 1), dim3(32, 8)>>>(R, C, src, ld, 0, dst, ldT, 0);
}

template <typename T> struct Blas;
template <> struct Blas<float> {
    static void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* al,
                     const float* A, int lda, const float* B, int ldb, const float* be, float* C, int ldc) {
        CB(cublasSgemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc));
    }
};
template <> struct Blas<double> {
    static void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* al,
                     const double* A, int lda, const double* B, int ldb, const double* be, double* C, int ldc) {
        CB(cublasDgemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc));
    }
};



template <typename T>
static void benchOne(cublasHandle_t h, int t, int M, int N, int K, int reps, const Variant<T>* v = nullptr,
                     const Relayout* rl = nullptr, const TmaTn* tv = nullptr) {
    const bool ta = t >= 2, tb = t & 1;
    const int lda = ta ? M : K, ldb = tb ? K : N, ldc = N;
    T *A, *B, *C, *Cb;
    size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;
    CK(cudaMalloc(&A, nA * sizeof(T)));
    CK(cudaMalloc(&B, nB * sizeof(T)));
    CK(cudaMalloc(&C, nC * sizeof(T)));
    CK(cudaMalloc(&Cb, nC * sizeof(T)));
    fillRandom<<<1024, 256>>>(A, nA, 1);
    fillRandom<<<1024, 256>>>(B, nB, 2);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> tOurs, tBlas;
    const T one = 1, zero = 0;
    T* work = nullptr;
    if (v && v->S > 1) CK(cudaMalloc(&work, (size_t)v->S * nC * sizeof(T)));
    // A stored rA x cA, B rB x cB; transposed copies with rows padded to 4.
    const int rA = ta ? K : M, cA = ta ? M : K, rB = tb ? N : K, cB = tb ? K : N;
    const int ldAt = (rA + 3) / 4 * 4, ldBt = (rB + 3) / 4 * 4;
    T *At = nullptr, *Bt = nullptr;
    if (rl && rl->a) CK(cudaMalloc(&At, (size_t)cA * ldAt * sizeof(T)));
    if (rl && rl->b) CK(cudaMalloc(&Bt, (size_t)cB * ldBt * sizeof(T)));
    for (int i = 0; i <= reps; ++i) {
        for (int which = 0; which < 2; ++which) {
            spinKernel<<<1, 1>>>(200000);
            CK(cudaEventRecord(e0));
            if (which == 0 && tv) {
                tmaLaunch(*tv, M, N, K, one, A, lda, B, ldb, zero, C, ldc);
            } else if (which == 0 && rl) {
                if (rl->a) transposeLaunch(rA, cA, A, lda, At, ldAt);
                if (rl->b) transposeLaunch(rB, cB, B, ldb, Bt, ldBt);
                const int t2 = ((ta != rl->a) ? 2 : 0) | ((tb != rl->b) ? 1 : 0);
                launch<T>(t2, M, N, K, one, rl->a ? At : A, rl->a ? ldAt : lda, 0, rl->b ? Bt : B, rl->b ? ldBt : ldb, 0,
                          zero, C, ldc, 0, 1);
            } else if (which == 0 && v && v->S > 1) {
                dim3 grid(((M + v->bm - 1) / v->bm) * ((N + v->bn - 1) / v->bn), v->S, 1);
                const int kSlice = ((K + v->S - 1) / v->S + 7) / 8 * 8;
                v->fn<<<grid, v->threads>>>(M, N, K, one, A, lda, 0, B, ldb, 0, zero, C, ldc, 0, kSlice, work);
                Kernels<T>::reduce(dim3(std::min<long long>(((long long)M * N + 255) / 256, 1024), 1), M, N,
                                   (K + kSlice - 1) / kSlice, work, zero, C, ldc, 0);
            } else if (which == 0 && v) {
                dim3 grid(((M + v->bm - 1) / v->bm) * ((N + v->bn - 1) / v->bn), 1, 1);
                v->fn<<<grid, v->threads, v->smem>>>(M, N, K, one, A, lda, 0, B, ldb, 0, zero, C, ldc, 0, K, nullptr);
            } else if (which == 0)
                launch<T>(t, M, N, K, one, A, lda, 0, B, ldb, 0, zero, C, ldc, 0, 1);
            else  // row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
                Blas<T>::gemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, B, ldb,
                              A, lda, &zero, Cb, ldc);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (i > 0) (which == 0 ? tOurs : tBlas).push_back(ms);
        }
    }
    // Compare with cuBLAS: relative Frobenius error.
    std::vector<T> hc(nC), hb(nC);
    CK(cudaMemcpy(hc.data(), C, nC * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), Cb, nC * sizeof(T), cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < nC; ++i) {
        double d = (double)hc[i] - (double)hb[i];
        num += d * d;
        den += (double)hb[i] * hb[i];
    }
    double rel = std::sqrt(num / std::max(den, 1e-300));
    std::sort(tOurs.begin(), tOurs.end());
    std::sort(tBlas.begin(), tBlas.end());
    float mo = tOurs[tOurs.size() / 2], mb = tBlas[tBlas.size() / 2];
    double flops = 2.0 * M * N * K;
    printf("%-20s %-7s %s %5d x %5d x %5d  reg128 %8.3f ms %6.1f TFLOP/s  cuBLAS %8.3f ms %6.1f TFLOP/s  cuBLAS/ours %.3f  relerr %.2e%s\n",
           tv ? tv->name : v ? v->name : rl ? (rl->a ? (rl->b ? "relayout A+B" : "relayout A") : "relayout B") : "shipped", Kernels<T>::name, transName[t], M, N, K, mo, flops / mo / 1e9, mb, flops / mb / 1e9, mb / mo, rel,
           rel > (std::is_same<T, float>::value ? 1e-4 : 1e-12) ? "  FAIL" : "");
    if (rel > (std::is_same<T, float>::value ? 1e-4 : 1e-12)) failures++;
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(Cb));
    if (work) CK(cudaFree(work));
    if (At) CK(cudaFree(At));
    if (Bt) CK(cudaFree(Bt));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IONBF, 0); // lines reach a pipe even if a run dies
    std::string mode = argc > 1 ? argv[1] : "check";
    if (mode == "variants") {
        int reps = argc > 2 ? atoi(argv[2]) : 10;
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        // Optional: one variant (its index) at one size, for a profiler.
        if (argc > 4) {
            int n = atoi(argv[4]);
            benchOne<float>(h, 0, n, n, n, reps, &variantsF32[atoi(argv[3])]);
        } else {
            for (auto& v : variantsF32)
                for (int n : {1024, 2048, 4096}) benchOne<float>(h, 0, n, n, n, reps, &v);
            for (auto& v : variantsF32) benchOne<float>(h, 0, 64, 8192, 8192, reps, &v);
            for (auto& v : variantsF64)
                for (int n : {1024, 4096}) benchOne<double>(h, 0, n, n, n, reps, &v);
        }
        CB(cublasDestroy(h));
    } else if (mode == "pick") {
        // pick REPS i,j,k...: those f32 nn variants at 2048, 4096 and 8192, twice.
        int reps = atoi(argv[2]);
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        for (int round = 0; round < 2; ++round)
            for (int n : {2048, 4096, 8192})
                for (int a = 3; a < argc; ++a) benchOne<float>(h, 0, n, n, n, reps, &variantsF32[atoi(argv[a])]);
        CB(cublasDestroy(h));
    } else if (mode == "pipe") {
        // pipe REPS [i,j,...]: the shipped kernels, then those loop variants
        // (all when none named) for every transpose at 2048, 4096 and 8192,
        // two rounds.
        int reps = atoi(argv[2]);
        std::vector<int> pick;
        for (int a = 3; a < argc; ++a) pick.push_back(atoi(argv[a]));
        if (pick.empty())
            for (int i = 0; i < (int)(sizeof(pipeVariants) / sizeof(pipeVariants[0])); ++i) pick.push_back(i);
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        for (int round = 0; round < 2; ++round)
            for (int t = 0; t < 4; ++t)
                for (int n : {2048, 4096, 8192}) {
                    benchOne<float>(h, t, n, n, n, reps);
                    for (int i : pick) {
                        const PipeVariant& pv = pipeVariants[i];
                        Variant<float> v = {pv.name, pv.fn[t], pv.bm, pv.bn, pv.threads, 1};
                        benchOne<float>(h, t, n, n, n, reps, &v);
                    }
                }
        CB(cublasDestroy(h));
    } else if (mode == "pipeskinny") {
        // pipeskinny REPS: 64 x 8192 x 8192 and 8192 x 64 x 8192, split 6
        // ways, every transpose, shipped against the PIPE loop's tiles,
        // two rounds.
        int reps = atoi(argv[2]);
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        for (int round = 0; round < 2; ++round)
            for (int t = 0; t < 4; ++t)
                for (int m64 = 1; m64 >= 0; --m64) {
                    const int M = m64 ? 64 : 8192, N = m64 ? 8192 : 64;
                    benchOne<float>(h, t, M, N, 8192, reps);
                    for (const PipeVariant& pv : skinnyVariants) {
                        if ((pv.bm == 64) != (m64 == 1)) continue;
                        Variant<float> v = {pv.name, pv.fn[t], pv.bm, pv.bn, pv.threads, 6};
                        benchOne<float>(h, t, M, N, 8192, reps, &v);
                    }
                }
        CB(cublasDestroy(h));
    } else if (mode == "split") {
        int reps = atoi(argv[2]);
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        for (int t = 0; t < 4; ++t) benchOne<float>(h, t, 1024, 1024, 1024, reps);
        benchOne<float>(h, 0, 64, 8192, 8192, reps);
        benchOne<float>(h, 0, 8192, 64, 8192, reps);
        benchOne<float>(h, 0, 8192, 8192, 64, reps);
        benchOne<float>(h, 0, 512, 512, 8192, reps);
        benchOne<double>(h, 0, 1024, 1024, 1024, reps);
        benchOne<double>(h, 0, 64, 8192, 8192, reps);
        CB(cublasDestroy(h));
    } else if (mode == "tn") {
        int reps = argc > 2 ? atoi(argv[2]) : 10;
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        // tn REPS: the shipped tn kernel against the cp.async variants at
        // 2048, 4096 and 8192, two rounds.
        for (int round = 0; round < 2; ++round)
            for (int n : {2048, 4096, 8192}) {
                benchOne<float>(h, 2, n, n, n, reps);
                for (auto& p : variantsTNPipe) {
                    Variant<float> v = {p.name, p.fn, p.bm, p.bn, 256, 1,
                                        (p.bm + p.bn) * p.bk * p.stages * (int)sizeof(float)};
                    benchOne<float>(h, 2, n, n, n, reps, &v);
                }
            }
        CB(cublasDestroy(h));
    } else if (mode == "tma") {
        // tma REPS [i..]: odd shapes checked against cuBLAS (alpha and
        // beta not 1 and 0, leading dimensions padded), then tn at 2048,
        // 4096 and 8192, the shipped kernel against the TMA-fed variants
        // (all, or those named), two rounds.
        int reps = argc > 2 ? atoi(argv[2]) : 10;
        std::vector<int> pick;
        for (int a = 3; a < argc; ++a) pick.push_back(atoi(argv[a]));
        if (pick.empty())
            for (int i = 0; i < (int)(sizeof(variantsTma) / sizeof(variantsTma[0])); ++i) pick.push_back(i);
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        const int shapes[][3] = {{1, 1, 1}, {1, 7, 3}, {5, 1, 9}, {127, 129, 131}, {128, 128, 8}, {200, 72, 17},
                                 {1000, 999, 1001}, {64, 300, 5}, {257, 255, 1024}, {3, 513, 2000}};
        for (const auto& sh : shapes)
            for (int i : pick) {
                const int M = sh[0], N = sh[1], K = sh[2];
                const int lda = (M + 3) / 4 * 4 + 4, ldb = (N + 3) / 4 * 4, ldc = N + 1;
                float *A, *B, *C, *Cb;
                CK(cudaMalloc(&A, (size_t)K * lda * 4));
                CK(cudaMalloc(&B, (size_t)K * ldb * 4));
                CK(cudaMalloc(&C, (size_t)M * ldc * 4));
                CK(cudaMalloc(&Cb, (size_t)M * ldc * 4));
                fillRandom<<<256, 256>>>(A, (size_t)K * lda, 3);
                fillRandom<<<256, 256>>>(B, (size_t)K * ldb, 4);
                fillRandom<<<256, 256>>>(C, (size_t)M * ldc, 5);
                CK(cudaMemcpy(Cb, C, (size_t)M * ldc * 4, cudaMemcpyDeviceToDevice));
                const float alpha = 1.5f, beta = -0.5f;
                tmaLaunch(variantsTma[i], M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
                CK(cudaGetLastError());
                CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N, M, K, &alpha, B, ldb, A, lda, &beta, Cb, ldc));
                CK(cudaDeviceSynchronize());
                std::vector<float> hc((size_t)M * ldc), hb((size_t)M * ldc);
                CK(cudaMemcpy(hc.data(), C, hc.size() * 4, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(hb.data(), Cb, hb.size() * 4, cudaMemcpyDeviceToHost));
                double worst = 0;
                for (size_t e = 0; e < hc.size(); ++e)
                    worst = std::max(worst, std::fabs((double)hc[e] - hb[e]) / std::sqrt((double)K + 1));
                const bool bad = !(worst < 1e-4); // a k step lost or doubled: about 0.3 / sqrt(K)
                if (bad) failures++;
                printf("check %-26s %4d x %4d x %4d  worst %.2e%s\n", variantsTma[i].name, M, N, K, worst, bad ? "  FAIL" : "");
                CK(cudaFree(A));
                CK(cudaFree(B));
                CK(cudaFree(C));
                CK(cudaFree(Cb));
            }
        for (int round = 0; round < 2; ++round)
            for (int n : {2048, 4096, 8192}) {
                benchOne<float>(h, 2, n, n, n, reps);
                for (int i : pick) benchOne<float>(h, 2, n, n, n, reps, nullptr, nullptr, &variantsTma[i]);
            }
        CB(cublasDestroy(h));
    } else if (mode == "skinny") {
        // skinny REPS: M or N of 64 or less, the shipped split against
        // others.
        int reps = argc > 2 ? atoi(argv[2]) : 10;
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        // The shipped split (6 ways: 384 blocks, one wave three an SM)
        // against 7 (the split before: 448 blocks, a second wave of 52)
        // and 5, for every transpose.
        for (int round = 0; round < 2; ++round)
            for (int t = 0; t < 4; ++t) {
                Variant<float> m64[] = {{"64x128 S5", Kernels<float>::m64(t), 64, 128, 128, 5},
                                        {"64x128 S7 (before)", Kernels<float>::m64(t), 64, 128, 128, 7}};
                Variant<float> n64[] = {{"128x64 S5", Kernels<float>::n64(t), 128, 64, 128, 5},
                                        {"128x64 S7 (before)", Kernels<float>::n64(t), 128, 64, 128, 7}};
                benchOne<float>(h, t, 64, 8192, 8192, reps);
                for (auto& v : m64) benchOne<float>(h, t, 64, 8192, 8192, reps, &v);
                benchOne<float>(h, t, 8192, 64, 8192, reps);
                for (auto& v : n64) benchOne<float>(h, t, 8192, 64, 8192, reps, &v);
            }
        for (int m : {16, 32, 48})
            benchOne<float>(h, 0, m, 8192, 8192, reps);
        benchOne<float>(h, 0, 64, 4096, 4096, reps);
        benchOne<float>(h, 0, 64, 16384, 4096, reps);
        benchOne<float>(h, 0, 64, 2048, 2048, reps);
        benchOne<float>(h, 0, 2048, 64, 2048, reps);
        CB(cublasDestroy(h));
    } else if (mode == "relayout") {
        // relayout REPS: each transpose as shipped against its operands
        // copied transposed first and the other layout's kernel, two rounds.
        int reps = argc > 2 ? atoi(argv[2]) : 10;
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        const Relayout ra = {true, false}, rb = {false, true}, rab = {true, true};
        for (int round = 0; round < 2; ++round)
            for (int n : {1536, 2048, 4096, 8192}) {
                benchOne<float>(h, 1, n, n, n, reps); // nt
                benchOne<float>(h, 1, n, n, n, reps, nullptr, &ra); // -> tt
                benchOne<float>(h, 0, n, n, n, reps); // nn
                benchOne<float>(h, 0, n, n, n, reps, nullptr, &rab); // -> tt
                benchOne<float>(h, 2, n, n, n, reps); // tn
                benchOne<float>(h, 2, n, n, n, reps, nullptr, &rb); // -> tt
            }
        CB(cublasDestroy(h));
    } else if (mode == "one") {
        // one T N REPS: transpose T (0 nn, 1 nt, 2 tn, 3 tt) at n = N, as
        // gpu.Gemm launches it, for a profiler.
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        benchOne<float>(h, atoi(argv[2]), atoi(argv[3]), atoi(argv[3]), atoi(argv[3]), atoi(argv[4]));
        CB(cublasDestroy(h));
    } else if (mode == "check") {
        std::mt19937_64 r(20261123);
        launchKind = 0; // the kernels with split K, then those without
        checkAll<float>(r);
        launchKind = 1;
        checkAll<float>(r);
        checkAll<double>(r);
        checkAll<int>(r);
    } else {
        int reps = argc > 2 ? atoi(argv[2]) : 10;
        std::string which = argc > 3 ? argv[3] : "all";
        cublasHandle_t h;
        CB(cublasCreate(&h));
        // Plain FP32: no TF32 tensor cores for cuBLAS (the default math mode).
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        const int sq[] = {1024, 2048, 4096, 8192};
        if (which == "all" || which == "f32") {
            for (int n : sq) benchOne<float>(h, 0, n, n, n, reps);
            for (int t = 1; t < 4; ++t) benchOne<float>(h, t, 4096, 4096, 4096, reps);
            benchOne<float>(h, 0, 64, 8192, 8192, reps);
            benchOne<float>(h, 0, 8192, 8192, 64, reps);
            benchOne<float>(h, 0, 8192, 64, 8192, reps);
        }
        if (which == "all" || which == "f64") {
            for (int n : {1024, 2048, 4096}) benchOne<double>(h, 0, n, n, n, reps);
        }
        CB(cublasDestroy(h));
    }
    printf("%s: %d failures\n", mode.c_str(), failures);
    return failures ? 1 : 0;
}
