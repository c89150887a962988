// matmul_dmma_tma.cu: C = alpha*op(A)*op(B) + beta*C in float64 on the
// FP64 tensor cores of Hopper (sm_90a), the operands' panels copied into
// shared memory by TMA, for many products at once.
// build.sh: sm_90a only
//
// Technique: matmul_dmma.cu's DMMA steps (m16n8k8 on fragments read from
// shared memory) with its copies moved off the warps that multiply. Its
// cp.async kernels spend most of their instructions on the copies
// (addresses and edge tests: Nsight Compute, docs/PERFORMANCE.md); here
// one thread of a producer warpgroup issues a step's TMA copies
// (cp.async.bulk.tensor), which also zero-fill past every edge, and gives
// its warpgroup's registers to the consumers (setmaxnreg: 40 a thread for
// the producer, 208 for the consumers), so that each of the four consumer
// warps holds a 64x32 piece of a 128x64 tile: each fragment of B read from
// shared memory feeds twice the DMMAs it fed in a 32x32 piece, and B is
// read from L2 half as often as with 64x64 tiles (a quarter less traffic
// in all), whose reads had come near L2's bandwidth (6.1 TB/s at 4096).
// Two blocks an SM.
//
// Panels are stored as TMA's 128-byte swizzle writes them, 16 doubles
// (one step of K) a row of 128 bytes:
//   - a source contiguous along k (op(A) of nn and nt, op(B) of nt and
//     tt): one box of BM or BN rows (m or n) x 16 k, row r at r*128, its
//     16-byte chunk c at chunk c ^ (r % 8);
//   - a source contiguous along m or n: boxes of 16 k x 16 (m or n), box j
//     at j*2048, row k at k*128, chunk c at c ^ (k % 8).
// A thread's fragment slot t (t = lane % 4) of a panel of 8 along K holds
// k = pi(t) = {0, 1, 4, 5}[t] and slot t+4 holds pi(t) + 2, in A and B
// alike (the product is the same sum): in that order every 8-byte fragment
// read of either layout touches each bank twice, the fewest for 256 bytes.
// Each buffer of the ring has a "full" mbarrier (TMA's bytes) and an
// "empty" one (an arrival a consumer warp once the step's DMMAs, and so
// its fragment reads, are done).
// Follows:   the PTX ISA's mma.sync (.f64), mbarrier, cp.async.bulk.tensor
//            and setmaxnreg descriptions, and the producer/consumer
//            warp-specialized pipeline of NVIDIA's Hopper GEMMs as CUTLASS
//            describes it; written here from those descriptions.
// Fraction of cuBLAS (cuBLAS's DGEMM kernel time over this one's, H100
// 80GB HBM3, 2026-11-24, testdata/dmma_bench.cu "tma"): nn 0.92 / 0.93 /
// 0.94 and tt 0.90 / 0.92 / 0.93 at 2048 / 4096 / 8192 with 128x64 tiles
// (the 64x64 tiles of a producer warp and three blocks an SM made
// 0.87-0.91 there, and are kept for the products they suit, below;
// matmul_dmma.cu's cp.async kernels 0.77-0.80).
//
// Contract: matmul_dmma.cu's, with op(A) and op(B) given as TMA
// descriptors and kSlice a multiple of 16.
//
// Symbols: matmul_dmma_tma_{nn,nt,tn,tt}_f64 (128x64 tiles) and
// matmul_dmma_tma_64x64_{nn,nt,tn,tt}_f64 (64x64 tiles), each
//   (int M, int N, int K, double alpha, TensorMap a, TensorMap b,
//    double beta, double* C, int ldc, long long strideC, int kSlice,
//    double* work);
// a describes op(A) and b op(B) as they lie, float64, 3-D, 128-byte
// swizzle, elements past the edges read as zero: a source contiguous along
// k (A of nn and nt, B of nt and tt) as {K, rows, batch} in boxes of
// {16, tile rows, 1} (the tile's rows for A, 64 for B), the others as
// {rows, K, batch} in boxes of {16, 16, 1} (rows: M for A, N for B); which asks A and B on
// 16 bytes with row and batch strides multiples of 2 elements. Grid
// (ceil(M/128)*ceil(N/64), S, batch), DMMA_TMA_THREADS threads,
// DMMA_TMA_SHARED_BYTES of dynamic shared memory; for the 64x64 kernels
// (ceil(M/64)*ceil(N/64), S, batch), DMMA_TMA64_THREADS and
// DMMA_TMA64_SHARED_BYTES.

#include "dmma_mma.cuh"
#include "gemm_common.cuh"

namespace dmma {

// TmaShape is a tiling: BM x BN of C a block, WM x WN consumer warps,
// STAGES buffers in the ring.
template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int PWARPS_ = 1, int CREGS_ = 0>
struct TmaShape {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int CONSUMERS = WM * WN;
    // PWARPS: the producer's warps (4: a warpgroup, which with CREGS gives
    // its registers to the consumers by setmaxnreg; sm_90a).
    static constexpr int PWARPS = PWARPS_, CREGS = CREGS_;
    static constexpr int THREADS = (CONSUMERS + PWARPS) * 32; // and the producer
    static_assert(CREGS == 0 || (CONSUMERS % 4 == 0 && PWARPS == 4), "setmaxnreg takes whole warpgroups");
    static constexpr int WTM = BM / WM, WTN = BN / WN;
    static constexpr int MT = WTM / 16, NT = WTN / 8;
    static_assert(MT * 16 * WM == BM && NT * 8 * WN == BN && WTN % 16 == 0, "whole 16-row boxes a warp");
    static constexpr int ROW = 128, BOX = 2048, KSTEP = 16; // bytes a row, bytes a 16 x 16 box, K a step
    static constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;
    // The ring, 1024 bytes for aligning it to the swizzle's pattern, and
    // the 2*STAGES mbarriers.
    static constexpr int SHARED_BYTES = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;
};

// TmaSlots are a thread's fragment slots' byte offsets within a panel,
// worked out once: kofs for a source along k (rows r with r % 8 == g),
// mofs for one along m or n. [h][s]: panel h of the step (k 0-7 or 8-15),
// slot half s (t or t+4); mofs also [e]: rows 0-7 or 8-15 of a box.
struct TmaSlots {
    unsigned kofs[2][2];
    unsigned mofs[2][2][2];
    __device__ __forceinline__ TmaSlots(int g, int t) {
        const int pi = (t & 1) | ((t & 2) << 1);
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int s = 0; s < 2; ++s) {
                const int kk = 8 * h + pi + 2 * s;
                kofs[h][s] = g * 128 + (((kk >> 1) ^ g) << 4) + (kk & 1) * 8;
#pragma unroll
                for (int e = 0; e < 2; ++e) mofs[h][s][e] = kk * 128 + (((4 * e + (g >> 1)) ^ (kk & 7)) << 4) + (g & 1) * 8;
            }
    }
};

// lds reads the double at byte offset off of a panel: a plain load, which
// the compiler may schedule, kept after the wait for its copy by the
// barriers' memory clobbers.
__device__ __forceinline__ double lds(const unsigned char* tile, unsigned off) {
    return *reinterpret_cast<const double*>(tile + off);
}

// tma_frag_a reads A's fragment of the 16 rows from r0 (a multiple of 16)
// for panel h into f (mma16x8x8's a); tma_frag_b B's of the 8 columns from
// c0 + 8j (c0 a multiple of 16, j a constant once unrolled, so that the
// slot table is indexed by constants and stays in registers) into f (b).
template <bool AK>
__device__ __forceinline__ void tma_frag_a(double (&f)[4], const unsigned char* tile, int r0, int h, const TmaSlots& sl) {
    if (AK) {
        const unsigned char* p = tile + r0 * 128;
        f[0] = lds(p, sl.kofs[h][0]);
        f[1] = lds(p + 8 * 128, sl.kofs[h][0]);
        f[2] = lds(p, sl.kofs[h][1]);
        f[3] = lds(p + 8 * 128, sl.kofs[h][1]);
    } else {
        const unsigned char* p = tile + (r0 / 16) * 2048;
        f[0] = lds(p, sl.mofs[h][0][0]);
        f[1] = lds(p, sl.mofs[h][0][1]);
        f[2] = lds(p, sl.mofs[h][1][0]);
        f[3] = lds(p, sl.mofs[h][1][1]);
    }
}
template <bool BKM>
__device__ __forceinline__ void tma_frag_b(double (&f)[2], const unsigned char* tile, int c0, int j, int h, const TmaSlots& sl) {
    if (BKM) {
        const unsigned char* p = tile + (c0 + 8 * j) * 128;
        f[0] = lds(p, sl.kofs[h][0]);
        f[1] = lds(p, sl.kofs[h][1]);
    } else {
        const unsigned char* p = tile + (c0 / 16 + j / 2) * 2048;
        f[0] = lds(p, sl.mofs[h][0][j & 1]);
        f[1] = lds(p, sl.mofs[h][1][j & 1]);
    }
}

// matmul_tma is matmul_dmma's contract with op(A) and op(B) given as tensor
// maps (see the symbols at the end) and kSlice a multiple of 16.
template <bool TA, bool TB, class G>
__device__ __forceinline__ void matmul_tma(int M, int N, int K, double alpha, const gemm::TensorMap& tmA,
                                           const gemm::TensorMap& tmB, double beta, double* __restrict__ C, int ldc,
                                           long long strideC, int kSlice, double* __restrict__ work) {
    constexpr int BM = G::BM, BN = G::BN, STAGES = G::STAGES, MT = G::MT, NT = G::NT;
    constexpr bool AK = !TA, BKM = TB; // panels contiguous along k
    extern __shared__ unsigned char shared[];
    const unsigned base = (gemm::smem_addr(shared) + 1023) & ~1023u;
    const unsigned char* ring = shared + (base - gemm::smem_addr(shared)); // the same, as a pointer
    const unsigned full = base + STAGES * G::STAGE_BYTES, empty = full + STAGES * 8;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int batch = blockIdx.z;
    int tileM, tileN;
    gemm::grouped_tile<8>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
    const int m0 = tileM * BM, n0 = tileN * BN;
    const int kBegin = blockIdx.y * kSlice;
    const int kEnd = kBegin + min(K - kBegin, kSlice); // kBegin + kSlice may pass 2^31
    // alpha == 0 never reads A or B.
    const int steps = alpha != 0.0 && kBegin < kEnd ? (kEnd - kBegin + G::KSTEP - 1) / G::KSTEP : 0;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gemm::bar_init(full + 8 * s, 1);
            gemm::bar_init(empty + 8 * s, G::CONSUMERS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if constexpr (G::CREGS > 0) {
        if (warp >= G::CONSUMERS)
            asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        else
            asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(G::CREGS));
    }
    if (warp >= G::CONSUMERS) {
        // The producer: step s's copies into buffer s % STAGES once the
        // consumers are done with its last use.
        if (warp == G::CONSUMERS && lane == 0)
            for (int s = 0; s < steps; ++s) {
                const int slot = s % STAGES;
                gemm::bar_wait(empty + 8 * slot, ((s / STAGES) & 1) ^ 1);
                // The consumers' reads of the buffer (generic proxy) before
                // TMA's writes into it (async proxy).
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                const unsigned a = base + slot * G::STAGE_BYTES, b = a + G::A_BYTES, bar = full + 8 * slot;
                const int k0 = kBegin + s * G::KSTEP;
                gemm::bar_expect(bar, G::STAGE_BYTES);
                if (AK) {
                    gemm::tma_load(a, &tmA, k0, m0, batch, bar);
                } else {
#pragma unroll
                    for (int j = 0; j < BM / 16; ++j) gemm::tma_load(a + j * G::BOX, &tmA, m0 + 16 * j, k0, batch, bar);
                }
                if (BKM) {
                    gemm::tma_load(b, &tmB, k0, n0, batch, bar);
                } else {
#pragma unroll
                    for (int j = 0; j < BN / 16; ++j) gemm::tma_load(b + j * G::BOX, &tmB, n0 + 16 * j, k0, batch, bar);
                }
            }
        return;
    }

    const int g = lane / 4, t = lane % 4;
    const int wm = warp / G::WN, wn = warp % G::WN;
    const TmaSlots sl(g, t);
    double acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

    for (int s = 0; s < steps; ++s) {
        const int slot = s % STAGES;
        gemm::bar_wait(full + 8 * slot, (s / STAGES) & 1);
        const unsigned char* ta = ring + slot * G::STAGE_BYTES;
        const unsigned char* tb = ta + G::A_BYTES;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            double a[MT][4], b[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) tma_frag_a<AK>(a[i], ta, wm * G::WTM + 16 * i, h, sl);
#pragma unroll
            for (int j = 0; j < NT; ++j) tma_frag_b<BKM>(b[j], tb, wn * G::WTN, j, h, sl);
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) mma16x8x8(acc[i][j], a[i], b[j]);
        }
        // The buffer is free once every fragment read from it has landed:
        // the empty asm ties each tile's DMMA (which waits for its
        // fragments) before the arrival, which releases the reads.
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j) asm volatile("" : "+d"(acc[i][j][0]));
        __syncwarp();
        if (lane == 0) gemm::bar_arrive(empty + 8 * slot);
    }

    const int rowBase = m0 + wm * G::WTM + g;
    const int colBase = n0 + wn * G::WTN + 2 * t;
    gemm::store_fragments<double, MT, NT>(acc, rowBase, colBase, M, N, alpha, beta, C + (long long)batch * strideC, ldc,
                                          work, batch);
}

} // namespace dmma

// The tilings. 128x64 tiles, 4 consumer warps of 64x32, a producer
// warpgroup, a ring of 4 buffers of one step (16 along K), two blocks an
// SM: the one for most products.
typedef dmma::TmaShape<128, 64, 2, 2, 4, 4, 208> DmmaTmaShape;
#define DMMA_TMA_TILE_M 128
#define DMMA_TMA_THREADS 256
#define DMMA_TMA_SHARED_BYTES 99392
#define DMMA_TMA_BLOCKS_PER_SM 2
static_assert(DmmaTmaShape::THREADS == DMMA_TMA_THREADS && DmmaTmaShape::SHARED_BYTES == DMMA_TMA_SHARED_BYTES &&
                  DmmaTmaShape::BM == DMMA_TMA_TILE_M && DmmaTmaShape::BN == 64,
              "kernels.go's DMMATMA constants");
// The registers setmaxnreg shares out: 2 blocks of 128 consumers and 128
// producer threads within the SM's 65536.
static_assert(2 * 128 * (DmmaTmaShape::CREGS + 40) <= 65536, "setmaxnreg counts fit the register file");

// 64x64 tiles, 4 consumer warps of 32x32, a producer warp (no setmaxnreg),
// the same ring, three blocks an SM (the symbols' "64x64_"): for products
// of 64 rows or fewer, which would leave half of every 128-row tile empty,
// and for those whose 128x64 tiles are too few to fill the GPU where these
// fill it (1024^3: 0.85-0.90 of cuBLAS against 0.78-0.80; 64 x 8192 x
// 8192: 0.96-1.01 against 0.58-0.63; docs/PERFORMANCE.md). internal/gpu's
// dmmaTMATilingFor chooses.
typedef dmma::TmaShape<64, 64, 2, 2, 4> DmmaTma64Shape;
#define DMMA_TMA64_THREADS 160
#define DMMA_TMA64_SHARED_BYTES 66624
#define DMMA_TMA64_BLOCKS_PER_SM 3
static_assert(DmmaTma64Shape::THREADS == DMMA_TMA64_THREADS && DmmaTma64Shape::SHARED_BYTES == DMMA_TMA64_SHARED_BYTES &&
                  DmmaTma64Shape::BM == 64 && DmmaTma64Shape::BN == 64,
              "kernels.go's DMMATMA64 constants");

#define MATMUL_DMMA_TMA(NAME, SHAPE, THREADS, BLOCKS, T, TA, TB)                                               \
    extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS)                                             \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ gemm::TensorMap a,                             \
         const __grid_constant__ gemm::TensorMap b, T beta, T* __restrict__ C, int ldc, long long strideC,     \
         int kSlice, T* __restrict__ work) {                                                                   \
        dmma::matmul_tma<TA, TB, SHAPE>(M, N, K, alpha, a, b, beta, C, ldc, strideC, kSlice, work);           \
    }

#define MATMUL_DMMA_TMA128(NAME, T, TA, TB) \
    MATMUL_DMMA_TMA(NAME, DmmaTmaShape, DMMA_TMA_THREADS, DMMA_TMA_BLOCKS_PER_SM, T, TA, TB)
#define MATMUL_DMMA_TMA64(NAME, T, TA, TB) \
    MATMUL_DMMA_TMA(NAME, DmmaTma64Shape, DMMA_TMA64_THREADS, DMMA_TMA64_BLOCKS_PER_SM, T, TA, TB)

MATMUL_DMMA_TMA128(matmul_dmma_tma_nn_f64, double, false, false)
MATMUL_DMMA_TMA128(matmul_dmma_tma_nt_f64, double, false, true)
MATMUL_DMMA_TMA128(matmul_dmma_tma_tn_f64, double, true, false)
MATMUL_DMMA_TMA128(matmul_dmma_tma_tt_f64, double, true, true)
MATMUL_DMMA_TMA64(matmul_dmma_tma_64x64_nn_f64, double, false, false)
MATMUL_DMMA_TMA64(matmul_dmma_tma_64x64_nt_f64, double, false, true)
MATMUL_DMMA_TMA64(matmul_dmma_tma_64x64_tn_f64, double, true, false)
MATMUL_DMMA_TMA64(matmul_dmma_tma_64x64_tt_f64, double, true, true)
