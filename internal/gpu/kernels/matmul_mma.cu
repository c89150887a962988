// matmul_mma.cu: C = alpha*op(A)*op(B) + beta*C for float32 matrices on the
// tensor cores, the operands rounded to TF32, BF16 or FP16 and the products
// summed in float32, for many products at once. This is the Ampere path
// (mma.sync, sm_80 and newer): a reduced precision the caller asked for,
// never a silent one.
//
// Technique: each block of 256 threads (8 warps, 2 down x 4 across)
// computes a 128x128 tile of C; each warp a 64x32 piece of it, as 4x4
// tensor-core tiles of 16x8, whose 64 float32 accumulators a thread holds
// in registers. Per step of BK = 16 along K a warp runs 32 mma.sync
// m16n8k8 (TF32) or 16 m16n8k16 (BF16, FP16) on each of its tiles' k. The
// panels of op(A) and op(B) go from global to shared memory as float32
// with cp.async (16-byte copies that bypass the registers, zero-filled past
// the edges; 4-byte ones where an operand is not 16-byte aligned) through a
// ring of 4 steps, so that the copies of the next three steps are in
// flight while the warps multiply; a thread rounds its fragments to the
// precision as it reads them from shared memory (tf32() for TF32,
// cvt.rn.bf16x2.f32 and cvt.rn.f16x2.f32 for the others). Panels are stored
// as their source lies, never transposed: a source contiguous along k in
// rows of 16 + 4 elements, one contiguous along m or n in 16 rows of
// 128 + 8. Within a step lane l (t = l % 4) holds k = t, t+4, t+8 and t+12
// in its fragment slots, in the same order for A and B (for TF32 this is
// the instruction's own order; for BF16 and FP16 the pairs (t, t+4) and
// (t+8, t+12) stand in the slots of (2t, 2t+1) and (2t+8, 2t+9), which
// changes the order of the sum, not its terms); with that order and the
// padding above every fragment read is free of bank conflicts. Blocks run
// in groups of 8 block rows (Triton's grouped order) so that consecutive
// blocks share panels in L2.
// Shape:     block = 256 threads (x only); grid = (ceil(M/128)*ceil(N/128),
//            S, batch); dynamic shared memory MMA_SHARED_BYTES (81,920: the
//            caller raises the kernel's limit past 48 KiB).
// Follows:   the PTX ISA's mma.sync fragment layouts for .tf32, .bf16 and
//            .f16 with .f32 accumulators, and the multistage cp.async
//            pipeline of NVIDIA's Ampere GEMMs as CUTLASS describes it
//            ("Efficient GEMM in CUDA"), written here from those
//            descriptions; the same structure as matmul_dmma.cu.
// Fraction of cuBLAS: see docs/PERFORMANCE.md ("Tensor cores for float32:
// TF32, BF16 and FP16 on mma.sync").
//
// Accuracy: each element of op(A) and op(B) is rounded once to the
// precision (TF32: 10 bits of mantissa; BF16: 7 bits; FP16: 10 bits and a
// largest finite value of 65504; all round to nearest even, TF32 as
// Hopper's TMA and matmul_wgmma.cu round it), their products are exact, and the sums are the tensor
// core's float32 sums, which may truncate where float32 arithmetic would
// round. FP16 rounds magnitudes from 65520 up to infinity (65504 is its
// largest finite value).
//
// Contract: as matmul_reg128.cu's, for float32 only: row-major matrices;
// op(A) is M x K (A, stride lda, for nn and nt; A^T with A stored K x M
// for tn and tt); op(B) is K x N (B for nn and tn; B^T, B stored N x K, for
// nt and tt); C is M x N, stride ldc; batch b (blockIdx.z) at A +
// b*strideA, B + b*strideB, C + b*strideC. beta == 0 never reads C; alpha ==
// 0 never reads A or B. Split K as matmul_reg128's: with gridDim.y = S > 1,
// block row y takes K from y*kSlice to (y+1)*kSlice (kSlice a multiple of
// 16, this kernel's step; a step past the slice's end reads 0) and writes
// alpha*op(A)*op(B) over its part to work (S*M*N
// elements a product, row stride N, slice y of batch b at (b*S + y)*M*N)
// without touching C; matmul_reg128_reduce_f32 then adds the slices in
// order and beta*C into C. The result is the same from run to run.
//
// Symbols: matmul_mma_{tf32,bf16,fp16}_{nn,nt,tn,tt}_f32, each
//   (int M, int N, int K, float alpha, const float* A, int lda,
//    long long strideA, const float* B, int ldb, long long strideB,
//    float beta, float* C, int ldc, long long strideC, int kSlice,
//    float* work);

#include "gemm_common.cuh"

namespace mma {

using gemm::commit;
using gemm::wait_pending;

constexpr int GROUP = 8; // block rows a group of the grouped order
constexpr int BK = 16;   // K a step
constexpr int PADK = 4;  // padding of rows stored along k (16 + 4 elements)
constexpr int PADW = 8;  // padding of rows stored along m or n

// Precision is what the operands are rounded to.
enum Precision { TF32, BF16, FP16 };

// Shape is a kernel's tiling: BM x BN of C a block, WM x WN warps, STAGES
// buffers in the ring.
template <int BM_, int BN_, int WM_, int WN_, int STAGES_>
struct Shape {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int THREADS = WM * WN * 32;
    static constexpr int WTM = BM / WM, WTN = BN / WN; // a warp's piece of C
    static constexpr int MT = WTM / 16, NT = WTN / 8;  // its tensor-core tiles
    static_assert(MT * 16 * WM == BM && NT * 8 * WN == BN, "whole tiles a warp");
    static_assert(STAGES >= 2, "a ring of two buffers at least");
    // Rows along m or n must be 8 elements past a multiple of 32 (the
    // four t of a warp then read 32 different banks) and rows along k 4
    // past (the eight g do).
    static_assert((BM + PADW) % 32 == 8 && (BN + PADW) % 32 == 8 && (BK + PADK) % 32 == 20, "conflict-free rows");
    // A panel's elements in shared memory: W rows of BK + PADK when its
    // source is contiguous along k, BK rows of W + PADW otherwise; the
    // larger of the two, so that every transpose shares one ring.
    static constexpr int panel(int w) { return w * (BK + PADK) > BK * (w + PADW) ? w * (BK + PADK) : BK * (w + PADW); }
    static constexpr int PANEL_A = panel(BM), PANEL_B = panel(BN);
    static constexpr int STAGE = PANEL_A + PANEL_B;
    static constexpr int SHARED_BYTES = STAGES * STAGE * (int)sizeof(float);
};

// tf32 rounds x to TF32, to nearest even. sm_80 has only cvt.rna (ties
// away) for TF32, so the rounding is done on the bits there: add half a
// step less one, plus the kept part's last bit, and clear the 13 bits
// dropped. Infinities and NaNs stay as they are.
__device__ __forceinline__ unsigned tf32(float x) {
#if __CUDA_ARCH__ >= 900
    unsigned r;
    asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
#else
    const unsigned u = __float_as_uint(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return u;
    return (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
#endif
}
// pack2 rounds lo and hi to the 16-bit precision P and packs them, lo in the
// low half (the element of the lower k).
template <Precision P>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    unsigned r;
    if (P == BF16) asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    else           asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// Frag is one 16x8 tile's step of BK = 16: the A values of rows g and g+8
// and the B values of column g that lane (g, t) holds, at k = t + 4e.
// step multiplies them into c (c = {C[g][2t], C[g][2t+1], C[g+8][2t],
// C[g+8][2t+1]}, as every shape here has it).
template <Precision P>
__device__ __forceinline__ void step(float (&c)[4], const float (&a)[2][4], const float (&b)[4]) {
    if (P == TF32) {
        // Two m16n8k8: k = t and t+4 (e = 0, 1), then t+8 and t+12 (2, 3),
        // each in the instruction's slots {A[g][t], A[g+8][t], A[g][t+4],
        // A[g+8][t+4]} and {B[t][g], B[t+4][g]}.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                : "r"(tf32(a[0][2 * h])), "r"(tf32(a[1][2 * h])), "r"(tf32(a[0][2 * h + 1])), "r"(tf32(a[1][2 * h + 1])),
                  "r"(tf32(b[2 * h])), "r"(tf32(b[2 * h + 1])));
        }
    } else {
        // One m16n8k16: slots {A[g][2t..2t+1], A[g+8][2t..2t+1],
        // A[g][2t+8..2t+9], A[g+8][2t+8..2t+9]} and {B[2t..2t+1][g],
        // B[2t+8..2t+9][g]} take k = (t, t+4) and (t+8, t+12).
        const unsigned a0 = pack2<P>(a[0][0], a[0][1]), a1 = pack2<P>(a[1][0], a[1][1]);
        const unsigned a2 = pack2<P>(a[0][2], a[0][3]), a3 = pack2<P>(a[1][2], a[1][3]);
        const unsigned b0 = pack2<P>(b[0], b[1]), b1 = pack2<P>(b[2], b[3]);
        if (P == BF16)
            asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        else
            asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
}

template <Precision P, bool TA, bool TB, class G>
__device__ __forceinline__ void matmul_mma(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                                           long long strideA, const float* __restrict__ B, int ldb,
                                           long long strideB, float beta, float* __restrict__ C, int ldc,
                                           long long strideC, int kSlice, float* __restrict__ work) {
    constexpr int BM = G::BM, BN = G::BN, STAGES = G::STAGES, THREADS = G::THREADS;
    constexpr int MT = G::MT, NT = G::NT;
    // A's panel is contiguous along k when A is not transposed; B's when it is.
    constexpr bool AK = !TA, BKC = TB;
    constexpr int SA = AK ? BK + PADK : BM + PADW; // row length of the shared panels
    constexpr int SB = BKC ? BK + PADK : BN + PADW;
    extern __shared__ __align__(16) float ring[];

    const int tid = threadIdx.x;
    const int lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;
    const int wm = warp / G::WN, wn = warp % G::WN;
    const long long batch = blockIdx.z;
    A += batch * strideA;
    B += batch * strideB;
    C += batch * strideC;

    int tileM, tileN;
    gemm::grouped_tile<GROUP>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
    const int m0 = tileM * BM, n0 = tileN * BN;

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    const int kBegin = blockIdx.y * kSlice;
    const int kEnd = kBegin + min(K - kBegin, kSlice); // kBegin + kSlice may pass 2^31
    // alpha is the same for every thread: all take one branch and meet the
    // same barriers.
    if (alpha != 0.0f && kBegin < kEnd) {
        const bool vecA = ((reinterpret_cast<uintptr_t>(A) & 15) == 0) && (lda % 4 == 0);
        const bool vecB = ((reinterpret_cast<uintptr_t>(B) & 15) == 0) && (ldb % 4 == 0);
        const int steps = (kEnd - kBegin + BK - 1) / BK;
        auto load = [&](int s) {
            float* As = ring + (s % STAGES) * G::STAGE;
            float* Bs = As + G::PANEL_A;
            const int k0 = kBegin + s * BK;
            if (AK) gemm::load_panel<float, BM, BK, SA, THREADS>(As, A + (size_t)m0 * lda + k0, lda, M - m0, kEnd - k0, vecA, A, tid);
            else    gemm::load_panel<float, BK, BM, SA, THREADS>(As, A + (size_t)k0 * lda + m0, lda, kEnd - k0, M - m0, vecA, A, tid);
            if (BKC) gemm::load_panel<float, BN, BK, SB, THREADS>(Bs, B + (size_t)n0 * ldb + k0, ldb, N - n0, kEnd - k0, vecB, B, tid);
            else     gemm::load_panel<float, BK, BN, SB, THREADS>(Bs, B + (size_t)k0 * ldb + n0, ldb, kEnd - k0, N - n0, vecB, B, tid);
        };
        // The ring, as matmul_dmma.cu's: STAGES-1 steps in flight before the
        // first multiply; each step waits for its own copies, then starts
        // the copies of the step STAGES-1 ahead into the buffer the last
        // step used; a group is committed every step, empty or not.
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < steps) load(s);
            commit();
        }
        for (int s = 0; s < steps; ++s) {
            wait_pending<STAGES - 2>();
            __syncthreads();
            if (s + STAGES - 1 < steps) load(s + STAGES - 1);
            commit();
            const float* As = ring + (s % STAGES) * G::STAGE;
            const float* Bs = As + G::PANEL_A;
            float b[NT][4];
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int c = wn * G::WTN + j * 8 + g;
#pragma unroll
                for (int e = 0; e < 4; ++e) b[j][e] = BKC ? Bs[c * SB + t + 4 * e] : Bs[(t + 4 * e) * SB + c];
            }
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                float a[2][4];
                const int r = wm * G::WTM + i * 16 + g;
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        a[h][e] = AK ? As[(r + 8 * h) * SA + t + 4 * e] : As[(t + 4 * e) * SA + r + 8 * h];
#pragma unroll
                for (int j = 0; j < NT; ++j) step<P>(acc[i][j], a, b[j]);
            }
        }
        wait_pending<0>(); // no copy outlives the block
    }

    const int rowBase = m0 + wm * G::WTM + g, colBase = n0 + wn * G::WTN + 2 * t;
    gemm::store_fragments<float, MT, NT>(acc, rowBase, colBase, M, N, alpha, beta, C, ldc, work, batch);
}

} // namespace mma

// The shipped shape: 128x128 tiles, 8 warps of 64x32, a ring of 4 steps,
// two blocks an SM.
typedef mma::Shape<128, 128, 2, 4, 4> MmaShape;
#define MMA_SHARED_BYTES 81920
#define MMA_BLOCKS_PER_SM 2
static_assert(MmaShape::SHARED_BYTES == MMA_SHARED_BYTES, "kernels.go's MMASharedBytes");

// T is float: the macro names the element type as the other files' do.
#define MATMUL_MMA(NAME, T, P, TA, TB)                                                                    \
    extern "C" __global__ void __launch_bounds__(MmaShape::THREADS, MMA_BLOCKS_PER_SM)                    \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, long long strideA,              \
         const T* __restrict__ B, int ldb, long long strideB, T beta, T* __restrict__ C, int ldc,          \
         long long strideC, int kSlice, T* __restrict__ work) {                                          \
        mma::matmul_mma<P, TA, TB, MmaShape>(M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, \
                                             strideC, kSlice, work);                                     \
    }

MATMUL_MMA(matmul_mma_tf32_nn_f32, float, mma::TF32, false, false)
MATMUL_MMA(matmul_mma_tf32_nt_f32, float, mma::TF32, false, true)
MATMUL_MMA(matmul_mma_tf32_tn_f32, float, mma::TF32, true, false)
MATMUL_MMA(matmul_mma_tf32_tt_f32, float, mma::TF32, true, true)
MATMUL_MMA(matmul_mma_bf16_nn_f32, float, mma::BF16, false, false)
MATMUL_MMA(matmul_mma_bf16_nt_f32, float, mma::BF16, false, true)
MATMUL_MMA(matmul_mma_bf16_tn_f32, float, mma::BF16, true, false)
MATMUL_MMA(matmul_mma_bf16_tt_f32, float, mma::BF16, true, true)
MATMUL_MMA(matmul_mma_fp16_nn_f32, float, mma::FP16, false, false)
MATMUL_MMA(matmul_mma_fp16_nt_f32, float, mma::FP16, false, true)
MATMUL_MMA(matmul_mma_fp16_tn_f32, float, mma::FP16, true, false)
MATMUL_MMA(matmul_mma_fp16_tt_f32, float, mma::FP16, true, true)
