// matmul_dmma.cu: C = alpha*op(A)*op(B) + beta*C in float64 on the FP64
// tensor cores (DMMA), 64x64 block tiles (128x64 for tn), for many products
// at once.
//
// Technique: each block of 128 threads (4 warps, 2 down x 2 across)
// computes a 64x64 tile of C; each warp a 32x32 piece of it, as 2x4
// tensor-core tiles of 16x8, whose 32 accumulators a thread holds in
// registers. Per step of 16 along K (two panels of BK = 8) a warp
// multiplies 8 tiles of 16x8x16 (mma.sync m16n8k16 on sm_90, Hopper's
// widest FP64 shape: DMMA.16x8x16 in SASS; eight m8n8k4 each on sm_80, the
// same fragments). The panels of op(A) and op(B) go from global to shared
// memory with cp.async (16-byte copies that bypass the registers,
// zero-filled past the edges; 8-byte ones where an operand is not 16-byte
// aligned) through a ring of 3 buffers of two panels each, so that the
// copies of the next two steps are in flight while the warps multiply.
// Each thread works out its copies' addresses and the tile's edges once
// (gemm::PanelCopy), so that a step costs a copy and a pointer add a
// chunk; only the last step of K tests K's end. Panels are stored as their
// source lies, never transposed: a source contiguous along k is kept in
// rows of 8 (k contiguous, read as 16-byte pairs), one contiguous along m
// or n in rows of 64 + 2 (read as 8-byte elements); the 2 elements of
// padding and the k order below make both reads free of bank conflicts.
// Within a panel a thread's fragment slots t and t+4 hold k = 2t and 2t+1
// instead of t and t+4: A and B use the same order, so the product is
// unchanged, and a thread's two values of one row are adjacent. Three
// blocks run on an SM at once (at most 168 registers a thread). Blocks run
// in groups of 8 block rows (a 1-D grid, Triton's grouped order) so that
// consecutive blocks share panels in L2.
// Shape:     block = 128 threads (x only); grid = (ceil(M/64)*ceil(N/64),
//            S, batch); dynamic shared memory DMMA_SHARED_BYTES (50,688).
//            tn: grid = (ceil(M/128)*ceil(N/64), S, batch), 4 warps of 64x32,
//            DMMA_TN_SHARED_BYTES (75,264), two blocks an SM (see the end).
// Follows:   the PTX ISA's mma.sync fragment layouts for .f64, and the
//            multistage cp.async pipeline of NVIDIA's Ampere GEMMs as CUTLASS
//            describes it ("Efficient GEMM in CUDA": a warp-level tile of
//            tensor-core operations, software-pipelined global loads), written
//            here from those descriptions.
// Fraction of cuBLAS (cuBLAS's DGEMM kernel time over this one's, same run,
// H100 80GB HBM3, 2026-11-23, goamp bench --device cuda): nn 0.76 at 1024,
// 0.78 at 2048, 0.79 at 4096 and 8192; 0.87 at 64x8192x8192, 0.82 at
// 8192x8192x64, 0.87 at 8192x64x8192; at 4096 (testdata/dmma_bench.cu) nt
// 0.82, tn 0.82 (128x64 tiles; 0.69 with 64x64), tt 0.79. Before
// PanelCopy (load_panel every step, ~450 instructions a step, 2.2x
// cuBLAS's count) nn made 0.71. Tiles of 128x64 or 64x128 with two blocks
// an SM make 0.74 to 0.80 in nn, nt and tt; fragments read a panel or a
// step ahead in a second set of registers, 0.66 to 0.78
// (docs/PERFORMANCE.md, "dmma").
//
// Contract: as matmul_reg128.cu's, for float64 only: row-major matrices;
// op(A) is M x K (A, stride lda, for nn and nt; A^T with A stored K x M
// for tn and tt); op(B) is K x N (B for nn and tn; B^T, B stored N x K, for
// nt and tt); C is M x N, stride ldc; batch b (blockIdx.z) at A +
// b*strideA, B + b*strideB, C + b*strideC. beta == 0 never reads C; alpha ==
// 0 never reads A or B. Split K as matmul_reg128's: with gridDim.y = S > 1,
// block row y takes K from y*kSlice to (y+1)*kSlice (kSlice a multiple of
// 8) and writes alpha*op(A)*op(B) over its part to work (S*M*N elements a
// product, row stride N, slice y of batch b at (b*S + y)*M*N) without
// touching C; matmul_reg128_reduce_f64 then adds the slices in order and
// beta*C into C. The result is the same from run to run. Each product
// element is a sum of exact double products rounded as the tensor core
// rounds (fused, round to nearest), within float64's usual error bound.
//
// Symbols: matmul_dmma_{nn,nt,tn,tt}_f64, each
//   (int M, int N, int K, double alpha, const double* A, int lda,
//    long long strideA, const double* B, int ldb, long long strideB,
//    double beta, double* C, int ldc, long long strideC, int kSlice,
//    double* work);

#include "dmma_mma.cuh"
#include "gemm_common.cuh"

namespace dmma {

using gemm::commit;
using gemm::wait_pending;

constexpr int GROUP = 8; // block rows a group of the grouped order
constexpr int BK = 8;    // K a step
constexpr int PAD = 2;   // padding of rows stored along m or n

// Shape is a kernel's tiling: BM x BN of C a block, WM x WN warps, STAGES
// buffers in the ring.
template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int KS_ = 1>
struct Shape {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_;
    // KS panels of BK along K a buffer of the ring; with KS = 2 a warp
    // multiplies 16x8x16 tiles (m16n8k16, Hopper's widest FP64 shape).
    static constexpr int KS = KS_;
    static_assert(KS == 1 || KS == 2, "one or two panels a buffer");
    static constexpr int THREADS = WM * WN * 32;
    static constexpr int WTM = BM / WM, WTN = BN / WN; // a warp's piece of C
    static constexpr int MT = WTM / 16, NT = WTN / 8;  // its tensor-core tiles
    static_assert(MT * 16 * WM == BM && NT * 8 * WN == BN, "whole tiles a warp");
    static_assert(STAGES >= 2, "a ring of two buffers at least");
    // A panel's elements in shared memory: rows of BK when its source is
    // contiguous along k, BK rows of W + PAD otherwise; the larger of the
    // two, so that every transpose shares one layout of the ring.
    static constexpr int PANEL_A = BK * (BM + PAD), PANEL_B = BK * (BN + PAD);
    static constexpr int STAGE = KS * (PANEL_A + PANEL_B);
    static constexpr int SHARED_BYTES = STAGES * STAGE * (int)sizeof(double);
};

template <bool TA, bool TB, class G>
__device__ __forceinline__ void matmul_dmma(int M, int N, int K, double alpha, const double* __restrict__ A, int lda,
                                            long long strideA, const double* __restrict__ B, int ldb,
                                            long long strideB, double beta, double* __restrict__ C, int ldc,
                                            long long strideC, int kSlice, double* __restrict__ work) {
    constexpr int BM = G::BM, BN = G::BN, STAGES = G::STAGES, THREADS = G::THREADS;
    constexpr int MT = G::MT, NT = G::NT, KS = G::KS;
    // A's panel is contiguous along k when A is not transposed; B's when it is.
    constexpr bool AK = !TA, BKC = TB;
    constexpr int SA = AK ? BK : BM + PAD; // row length of the shared panels
    constexpr int SB = BKC ? BK : BN + PAD;
    extern __shared__ __align__(16) double ring[];

    const int tid = threadIdx.x;
    const int lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;
    const int wm = warp / G::WN, wn = warp % G::WN;
    // Batch 0's operands: valid addresses for the copies that read nothing,
    // which the compiler can take from the kernel's parameters again
    // instead of keeping them in registers.
    const double* const A0 = A;
    const double* const B0 = B;
    A += blockIdx.z * strideA;
    B += blockIdx.z * strideB;

    int tileM, tileN;
    gemm::grouped_tile<GROUP>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
    const int m0 = tileM * BM, n0 = tileN * BN;

    double acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

    const int kBegin = blockIdx.y * kSlice;
    const int kEnd = kBegin + min(K - kBegin, kSlice); // kBegin + kSlice may pass 2^31
    // alpha is the same for every thread: all take one branch and meet the
    // same barriers.
    if (alpha != 0.0 && kBegin < kEnd) {
        const bool vecA = ((reinterpret_cast<uintptr_t>(A) & 15) == 0) && (lda % 2 == 0);
        const bool vecB = ((reinterpret_cast<uintptr_t>(B) & 15) == 0) && (ldb % 2 == 0);
        const int steps = (kEnd - kBegin + BK * KS - 1) / (BK * KS);
        // The ring: STAGES-1 steps in flight before the first multiply; each
        // step waits for its own copies, then starts the copies of the step
        // STAGES-1 ahead into the buffer the last step used (free: every
        // warp has passed the barrier after multiplying from it). A group is
        // committed every step, empty or not, so that the count of pending
        // groups says which step has landed. Buffer s holds KS panels of A,
        // then KS of B, each BK deep along K, filled by load(s).
        // fragments reads step s's fragments from the ring into a and b;
        // multiply adds their products into acc.
        typedef double FragA[MT][4 * KS];
        typedef double FragB[NT][2 * KS];
        auto fragments = [&](int s, FragA& a, FragB& b) {
            const double* As = ring + (s % STAGES) * G::STAGE;
            const double* Bs = As + KS * G::PANEL_A;
#pragma unroll
            for (int h = 0; h < KS; ++h) {
                const double* Ah = As + h * G::PANEL_A;
                const double* Bh = Bs + h * G::PANEL_B;
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    const int r = wm * G::WTM + i * 16 + g;
                    double* f = a[i] + 4 * h;
                    if (AK) {
                        const double2 lo = *reinterpret_cast<const double2*>(Ah + r * SA + 2 * t);
                        const double2 hi = *reinterpret_cast<const double2*>(Ah + (r + 8) * SA + 2 * t);
                        f[0] = lo.x; f[1] = hi.x; f[2] = lo.y; f[3] = hi.y;
                    } else {
                        f[0] = Ah[(2 * t) * SA + r];
                        f[1] = Ah[(2 * t) * SA + r + 8];
                        f[2] = Ah[(2 * t + 1) * SA + r];
                        f[3] = Ah[(2 * t + 1) * SA + r + 8];
                    }
                }
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    const int c = wn * G::WTN + j * 8 + g;
                    double* f = b[j] + 2 * h;
                    if (BKC) {
                        const double2 v = *reinterpret_cast<const double2*>(Bh + c * SB + 2 * t);
                        f[0] = v.x; f[1] = v.y;
                    } else {
                        f[0] = Bh[(2 * t) * SB + c];
                        f[1] = Bh[(2 * t + 1) * SB + c];
                    }
                }
            }
        };
        auto multiply = [&](const FragA& a, const FragB& b) {
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) mma_step(acc[i][j], a[i], b[j]);
        };
        // The ring: STAGES-1 steps in flight before the first multiply; each
        // step waits for its own copies, then starts the copies of the step
        // STAGES-1 ahead into the buffer the last step used (free: every
        // warp has passed the barrier after reading its fragments), then
        // reads its fragments and multiplies. A group is committed every
        // step, empty or not, so that the count of pending groups says which
        // step has landed. Buffer s holds KS panels of A, then KS of B, each
        // BK deep along K, filled by load(s). (Other orders were slower:
        // fragments read before the copies start, or read a panel or a step
        // ahead into a second set of registers; docs/PERFORMANCE.md.)
        auto run = [&](auto&& load) {
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
                FragA a;
                FragB b;
                fragments(s, a, b);
                multiply(a, b);
            }
            wait_pending<0>(); // no copy outlives the block
        };
        if (vecA && vecB) {
            // Both operands allow 16-byte copies: ca and cb work out their
            // addresses once, and test K's end in its last step alone.
            const unsigned base = gemm::smem_addr(ring);
            gemm::PanelCopy<double, AK ? BM : BK, AK ? BK : BM, SA, THREADS, !AK> ca(
                AK ? A + (size_t)m0 * lda + kBegin : A + (size_t)kBegin * lda + m0, lda, M - m0, base, tid);
            gemm::PanelCopy<double, BKC ? BN : BK, BKC ? BK : BN, SB, THREADS, !BKC> cb(
                BKC ? B + (size_t)n0 * ldb + kBegin : B + (size_t)kBegin * ldb + n0, ldb, N - n0, base, tid);
            const long long panelA = AK ? BK : (long long)BK * lda; // elements from one panel to the next
            const long long panelB = BKC ? BK : (long long)BK * ldb;
            run([&](int s) {
                const unsigned at = (s % STAGES) * G::STAGE * (unsigned)sizeof(double);
                const int kLeft = kEnd - kBegin - s * KS * BK;
#pragma unroll
                for (int h = 0; h < KS; ++h) {
                    const unsigned atA = at + h * G::PANEL_A * (unsigned)sizeof(double);
                    const unsigned atB = at + (KS * G::PANEL_A + h * G::PANEL_B) * (unsigned)sizeof(double);
                    if (kLeft >= KS * BK) {
                        ca.copy(atA, h * panelA);
                        cb.copy(atB, h * panelB);
                    } else {
                        ca.copy_edge(atA, h * panelA, kLeft - h * BK, A0);
                        cb.copy_edge(atB, h * panelB, kLeft - h * BK, B0);
                    }
                }
                ca.advance(KS * panelA);
                cb.advance(KS * panelB);
            });
        } else {
            // An operand that allows 8-byte copies only: load_panel works
            // out every chunk anew each step.
            run([&](int s) {
                double* As = ring + (s % STAGES) * G::STAGE;
                double* Bs = As + KS * G::PANEL_A;
#pragma unroll
                for (int h = 0; h < KS; ++h) {
                    const int k0 = kBegin + (s * KS + h) * BK;
                    double* Ah = As + h * G::PANEL_A;
                    double* Bh = Bs + h * G::PANEL_B;
                    if (AK) gemm::load_panel<double, BM, BK, SA, THREADS>(Ah, A + (size_t)m0 * lda + k0, lda, M - m0, kEnd - k0, vecA, A, tid);
                    else    gemm::load_panel<double, BK, BM, SA, THREADS>(Ah, A + (size_t)k0 * lda + m0, lda, kEnd - k0, M - m0, vecA, A, tid);
                    if (BKC) gemm::load_panel<double, BN, BK, SB, THREADS>(Bh, B + (size_t)n0 * ldb + k0, ldb, N - n0, kEnd - k0, vecB, B, tid);
                    else     gemm::load_panel<double, BK, BN, SB, THREADS>(Bh, B + (size_t)k0 * ldb + n0, ldb, kEnd - k0, N - n0, vecB, B, tid);
                }
            });
        }
    }

    // Where this thread's fragments go, worked out again from the thread's
    // index (read anew: a volatile asm is not merged with the first read),
    // and C's batch offset taken here: values kept through the loop for the
    // epilogue alone were spilled to local memory in nn.
    int tid2;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid2));
    const int lane2 = tid2 % 32, warp2 = tid2 / 32;
    const int rowBase = m0 + (warp2 / G::WN) * G::WTM + lane2 / 4;
    const int colBase = n0 + (warp2 % G::WN) * G::WTN + 2 * (lane2 % 4);
    const long long batch = blockIdx.z;
    gemm::store_fragments<double, MT, NT>(acc, rowBase, colBase, M, N, alpha, beta, C + batch * strideC, ldc, work,
                                          batch);
}

} // namespace dmma

// The shipped shapes. nn, nt and tt: 64x64 tiles, 4 warps of 32x32, a
// ring of 3 buffers of two panels (16 along K), three blocks an SM.
typedef dmma::Shape<64, 64, 2, 2, 3, 2> DmmaShape;
#define DMMA_SHARED_BYTES 50688
#define DMMA_BLOCKS_PER_SM 3
static_assert(DmmaShape::SHARED_BYTES == DMMA_SHARED_BYTES, "kernels.go's DMMASharedBytes");
// tn, whose panels both lie along m or n and are read as 8-byte elements:
// 128x64 tiles, 4 warps of 64x32 (each fragment feeds twice the products),
// two blocks an SM; 0.81 of cuBLAS at 4096 where 64x64 makes 0.69, while
// the other transposes lose 0.02 to 0.06 with it.
typedef dmma::Shape<128, 64, 2, 2, 3, 2> DmmaShapeTN;
#define DMMA_TN_TILE_M 128
#define DMMA_TN_SHARED_BYTES 75264
#define DMMA_TN_BLOCKS_PER_SM 2
static_assert(DmmaShapeTN::SHARED_BYTES == DMMA_TN_SHARED_BYTES && DmmaShapeTN::BM == DMMA_TN_TILE_M &&
                  DmmaShapeTN::BN == 64 && DmmaShapeTN::THREADS == DmmaShape::THREADS,
              "kernels.go's DMMATN constants");

#define MATMUL_DMMA(NAME, T, TA, TB, SHAPE, BLOCKS)                                                        \
    extern "C" __global__ void __launch_bounds__(SHAPE::THREADS, BLOCKS)                                  \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, long long strideA,               \
         const T* __restrict__ B, int ldb, long long strideB, T beta, T* __restrict__ C, int ldc,         \
         long long strideC, int kSlice, T* __restrict__ work) {                                           \
        dmma::matmul_dmma<TA, TB, SHAPE>(M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,   \
                                         strideC, kSlice, work);                                         \
    }

MATMUL_DMMA(matmul_dmma_nn_f64, double, false, false, DmmaShape, DMMA_BLOCKS_PER_SM)
MATMUL_DMMA(matmul_dmma_nt_f64, double, false, true, DmmaShape, DMMA_BLOCKS_PER_SM)
MATMUL_DMMA(matmul_dmma_tn_f64, double, true, false, DmmaShapeTN, DMMA_TN_BLOCKS_PER_SM)
MATMUL_DMMA(matmul_dmma_tt_f64, double, true, true, DmmaShape, DMMA_BLOCKS_PER_SM)
