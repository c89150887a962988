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

// mma16x8x8 adds a(16x8) * b(8x8) into c(16x8), in the PTX ISA's fragment
// layout for a warp's lane (g = lane/4, t = lane%4): a = {A[g][t],
// A[g+8][t], A[g][t+4], A[g+8][t+4]}, b = {B[t][g], B[t+4][g]}, c = {C[g][2t],
// C[g][2t+1], C[g+8][2t], C[g+8][2t+1]}. sm_80 has the m8n8k4 shape only,
// whose fragments are the quarters of these: four of them do the same.
__device__ __forceinline__ void mma16x8x8(double (&c)[4], const double (&a)[4], const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[0]), "+d"(c[1]) : "d"(a[0]), "d"(b[0]));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[2]), "+d"(c[3]) : "d"(a[1]), "d"(b[0]));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[0]), "+d"(c[1]) : "d"(a[2]), "d"(b[1]));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[2]), "+d"(c[3]) : "d"(a[3]), "d"(b[1]));
#endif
}

// mma16x8x16 adds a(16x16) * b(16x8) into c(16x8): the fragments of two
// 16x8x8 steps side by side (a = the first step's four then the second's,
// b likewise), which is the PTX ISA's m16n8k16 layout for .f64.
__device__ __forceinline__ void mma16x8x16(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
    mma16x8x8(c, reinterpret_cast<const double(&)[4]>(a[0]), reinterpret_cast<const double(&)[2]>(b[0]));
    mma16x8x8(c, reinterpret_cast<const double(&)[4]>(a[4]), reinterpret_cast<const double(&)[2]>(b[2]));
#endif
}

// mma_step is a step of 8 or 16 along K, chosen by the fragments' sizes.
__device__ __forceinline__ void mma_step(double (&c)[4], const double (&a)[4], const double (&b)[2]) { mma16x8x8(c, a, b); }
__device__ __forceinline__ void mma_step(double (&c)[4], const double (&a)[8], const double (&b)[4]) { mma16x8x16(c, a, b); }

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

// The TMA-fed kernels (matmul_dmma_tma_*; sm_90): the same DMMA tiles of
// 64x64, their panels copied into shared memory by TMA
// (cp.async.bulk.tensor) instead of by every thread's cp.async. Nsight
// Compute put most of the cp.async kernels' instructions in their copies
// (addresses and edge tests: cuBLAS's DGEMM issues 0.6x as many); here one
// thread of a fifth, producer warp issues two to eight copies a step,
// which also zero-fill past every edge, and the four consumer warps do
// nothing but read fragments and multiply. 0.88 to 0.94 of cuBLAS where
// the cp.async kernels make 0.77 to 0.84 (docs/PERFORMANCE.md, "dmma fed
// by TMA").
//
// Panels are stored as TMA's 128-byte swizzle writes them, 16 doubles
// (one step of K) a row of 128 bytes:
//   - a source contiguous along k (op(A) of nn and nt, op(B) of nt and
//     tt): one box of 64 rows (m or n) x 16 k, row r at r*128, its 16-byte
//     chunk c at chunk c ^ (r % 8);
//   - a source contiguous along m or n: four boxes of 16 k x 16 (m or n),
//     box j at j*2048, row k at k*128, chunk c at c ^ (k % 8).
// A thread's fragment slot t (t = lane % 4) of a panel of 8 along K holds
// k = pi(t) = {0, 1, 4, 5}[t] and slot t+4 holds pi(t) + 2, in A and B
// alike (the product is the same sum): in that order every 8-byte fragment
// read of either layout touches each bank twice, the fewest for 256 bytes.
// Each buffer of the ring has a "full" mbarrier (TMA's bytes) and an
// "empty" one (an arrival a consumer warp once its fragments of the step
// are in registers).
template <int BM_, int BN_, int WM_, int WN_, int STAGES_>
struct TmaShape {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int CONSUMERS = WM * WN;
    static constexpr int THREADS = (CONSUMERS + 1) * 32; // and the producer warp
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
    gemm::grouped_tile<GROUP>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
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

    if (warp == G::CONSUMERS) {
        // The producer: step s's copies into buffer s % STAGES once the
        // consumers are done with its last use.
        if (lane == 0)
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

// The TMA-fed kernels: 64x64 tiles, 4 consumer warps of 32x32 and a
// producer warp, a ring of 4 buffers of one step (16 along K), three
// blocks an SM. sm_90 only: built for sm_80 their bodies are empty, and
// gpu.GemmOn runs them only from an image compiled for 9.0 or newer (their
// PTX version).
typedef dmma::TmaShape<64, 64, 2, 2, 4> DmmaTmaShape;
#define DMMA_TMA_THREADS 160
#define DMMA_TMA_SHARED_BYTES 66624
static_assert(DmmaTmaShape::THREADS == DMMA_TMA_THREADS && DmmaTmaShape::SHARED_BYTES == DMMA_TMA_SHARED_BYTES &&
                  DmmaTmaShape::BM == 64 && DmmaTmaShape::BN == 64,
              "kernels.go's DMMATMA constants");

// Symbols: matmul_dmma_tma_{nn,nt,tn,tt}_f64, each
//   (int M, int N, int K, double alpha, TensorMap a, TensorMap b,
//    double beta, double* C, int ldc, long long strideC, int kSlice,
//    double* work);
// a describes op(A) and b op(B) as they lie, float64, 3-D, 128-byte
// swizzle, elements past the edges read as zero: a source contiguous along
// k (A of nn and nt, B of nt and tt) as {K, rows, batch} in boxes of
// {16, 64, 1}, the others as {rows, K, batch} in boxes of {16, 16, 1}
// (rows: M for A, N for B); which asks A and B on 16 bytes with row and
// batch strides multiples of 2 elements. kSlice is a multiple of 16.
#define MATMUL_DMMA_TMA(NAME, T, TA, TB)                                                                        \
    extern "C" __global__ void __launch_bounds__(DMMA_TMA_THREADS, DMMA_BLOCKS_PER_SM)                         \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ gemm::TensorMap a,                             \
         const __grid_constant__ gemm::TensorMap b, T beta, T* __restrict__ C, int ldc, long long strideC,     \
         int kSlice, T* __restrict__ work) {                                                                   \
        DMMA_TMA_BODY(TA, TB)                                                                                  \
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define DMMA_TMA_BODY(TA, TB) \
    dmma::matmul_tma<TA, TB, DmmaTmaShape>(M, N, K, alpha, a, b, beta, C, ldc, strideC, kSlice, work);
#else
#define DMMA_TMA_BODY(TA, TB)
#endif

MATMUL_DMMA_TMA(matmul_dmma_tma_nn_f64, double, false, false)
MATMUL_DMMA_TMA(matmul_dmma_tma_nt_f64, double, false, true)
MATMUL_DMMA_TMA(matmul_dmma_tma_tn_f64, double, true, false)
MATMUL_DMMA_TMA(matmul_dmma_tma_tt_f64, double, true, true)
