// matmul_reg128.cu: C = alpha*op(A)*op(B) + beta*C, register-tiled, 128x128
// block tiles, 8x8 elements of C a thread, for many products at once.
//
// Technique: each block of 256 threads computes a 128x128 tile of C. Per
// step of BK = 8 along K it holds a 128x8 panel of op(A) and an 8x128 panel
// of op(B) in shared memory, both stored k-major (S[k][m], S[k][n]), so that
// a thread reads its 8 values of A and its 8 values of B for one k with four
// 16-byte loads and makes 64 multiply-adds from them in registers. Thread
// (ty, tx) of the 16x16 grid owns rows ty*4..ty*4+3 and 64+ty*4..64+ty*4+3
// and the same columns of tx: two 4-wide pieces 64 apart, which keeps each
// warp's shared loads to whole 16-byte vectors without bank conflicts (A:
// two addresses a warp, broadcast; B: 16 consecutive vectors). Shared
// memory is double-buffered and the global loads run two steps ahead: each
// step's panels are read into one of two sets of registers while the block
// works on the step two before, and land in the free shared buffer at the
// end of the step before theirs, so each step has one barrier and a load
// has two steps (1024 multiply-adds a thread) to arrive. Within a step the
// values of A and B for k+1 are read from shared memory into a second set
// of registers while k's multiply-adds run, and the step's barrier sits
// before its last k's multiply-adds, so that the next step's first values
// load under them. A thread's 64 multiply-adds of a k run column by
// column with every other column's rows walked backwards (the 128x128
// kernels with split K), or row by row with every other row's columns
// walked backwards (tn's kernel without split K, the 64-wide tiles):
// ptxas schedules those orders best there, measured, not reasoned. A
// panel whose source is
// contiguous along m (or n) is copied with 16-byte loads and stores; one
// contiguous along k (A not transposed, B transposed) is loaded 16 bytes
// along k and stored transposed, into rows padded by 4 elements so that the
// 32 scalar stores of a warp hit 32 banks. Blocks run in groups of 8 block
// rows (a 1-D grid, mapped as Triton's grouped order): consecutive blocks
// share panels of A and B in L2. Loads past an edge of A or B give 0;
// stores past an edge of C are skipped; 16-byte accesses are used where the
// pointer and leading dimension allow them, element accesses elsewhere.
// Shape:     block = 256 threads (x only); grid = (ceil(M/128)*ceil(N/128),
//            S, batch); static shared memory 2*8*(132+128)*sizeof(T): 16.6
//            KiB for float32, 33.3 KiB for float64.
// Follows:   the register-blocked SGEMM of Volkov and Demmel ("Benchmarking
//            GPUs to tune dense linear algebra", SC08) and the 128x128x8,
//            8x8-a-thread, double-buffered shape of NVIDIA's own SGEMM kernels
//            as MAGMA and CUTLASS describe it (CUTLASS's "Efficient GEMM in
//            CUDA": thread tiles, outer products from shared memory,
//            software-pipelined tile loads), written here from those
//            descriptions.
// Fraction of cuBLAS through gpu.Gemm on an H100 (2026-11-25, goamp bench,
// docs/PERFORMANCE.md "tn fed by TMA"): float32 at n = 2048 to 8192 nn
// 0.98-1.02, nt 0.95-1.02, tn 0.98-1.02, tt 1.01-1.05, with tn on the
// kernel fed by TMA (matmul_tma_tn, below) and the other layouts on
// transposed copies into it; the figures that follow are the kernels
// without TMA.
// Fraction of cuBLAS (cuBLAS's kernel time over this one's, plain FP32 in
// the same run, H100 80GB HBM3, 2026-11-24, testdata/gemm_bench.cu "pipe",
// "pipeskinny" and "split" modes, two rounds): float32 at n = 2048, 4096
// and 8192 nn 0.946-0.956, nt 0.909-0.917 (gpu.Gemm runs large nt
// products as tt on a copy: 0.93-0.96), tn 0.914-0.940, tt 0.969-0.993;
// 0.96 to 1.03 at 1024 (split 4 ways along K); 1.12 at 8192x8192x64; 0.96
// at 512x512x8192; 0.92 to 0.99 at 64x8192x8192 and 8192x64x8192 in every
// transpose but 8192x64x8192 nt (0.84) (64x128 and 128x64 tiles, split 6
// ways). Blocks of 64x256 and 256x64 (256 threads, two an SM) made the
// same as 128x128 in nn and spilled in tn and tt (before the fragment
// pipeline). float64 0.22 to 0.31: cuBLAS runs on the FP64 tensor cores.
// Tiling variants tried, and what they made, are in docs/PERFORMANCE.md.
//
// Contract: row-major matrices. op(A) is M x K: A (M x K, row stride lda)
// for the nn and nt symbols, A^T with A stored K x M for tn and tt. op(B)
// is K x N: B (K x N, stride ldb) for nn and tn, B^T with B stored N x K
// for nt and tt. C is M x N with stride ldc. Batch b (blockIdx.z) works on
// A + b*strideA, B + b*strideB, C + b*strideC (elements). beta == 0 never
// reads C; alpha == 0 never reads A or B; int32 arithmetic wraps like Go's.
// M, N, K >= 0; launch nothing when M or N is 0.
//
// Split K, for products with too few tiles of C to fill the GPU: a grid of
// S > 1 block rows (gridDim.y) gives block row y the part of K from
// y*kSlice to (y+1)*kSlice (kSlice a multiple of 8); each writes
// alpha*op(A)*op(B) over its part to the workspace, S*M*N elements a
// product (row stride N, slice y of batch b at (b*S + y)*M*N), without
// touching C; then the reduce kernel, over grid (any, batch) of 1-D
// blocks, adds the S slices in order and beta*C into C. With S = 1
// (gridDim.y = 1, kSlice >= K) the kernel writes C itself and work is not
// used. The result is the same from run to run either way.
//
// Symbols: matmul_reg128_{nn,nt,tn,tt}_{f32,f64,i32} and, for float32 with
// 64x128 and 128x64 tiles (blocks of 128 threads; grids of
// ceil(M/64)*ceil(N/128) and ceil(M/128)*ceil(N/64) blocks),
// matmul_reg128_{m64,n64}_{nn,nt,tn,tt}_f32, and
// matmul_reg128_whole_tn_f32 (float32 tn, 128x128, compiled without split
// K: gridDim.y must be 1), each
//   (int M, int N, int K, T alpha, const T* A, int lda, long long strideA,
//    const T* B, int ldb, long long strideB, T beta, T* C, int ldc,
//    long long strideC, int kSlice, T* work);
// matmul_reg128_reduce_{f32,f64,i32}, each
//   (int M, int N, int S, const T* work, T beta, T* C, int ldc,
//    long long strideC);
// matmul_reg128_tma_tn_f32 (float32 tn fed by TMA, sm_90 and newer; its
// arguments and launch where it is defined, below; kSlice a multiple of
// 16).

#include "gemm_common.cuh"

namespace {

constexpr int PAD = 4;   // padding of panels stored transposed
constexpr int GROUP = 8; // block rows a group of the grouped order

// Tiling is a kernel's shape: BM x BN elements of C a block of THREADS
// threads, BK along K a step, TM x TN elements of C a thread (in 4x4
// pieces spaced BM/(TM/4) rows and BN/(TN/4) columns apart).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int THREADS_, int AHEAD_ = 1, bool PIPE_ = false,
          bool SNAKE_ = false, int ORDER_ = 0>
struct Tiling {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, THREADS = THREADS_;
    // AHEAD: how many steps ahead the global loads run (1: the next step's
    // panels load while the block works on this one; 2: the one after,
    // through a second set of registers, for twice the latency cover).
    static constexpr int AHEAD = AHEAD_;
    static_assert(AHEAD == 1 || AHEAD == 2, "one or two steps ahead");
    // PIPE: each k's values of A and B are read from shared memory into a
    // second register set while the multiply-adds of the k before run,
    // across the step's barrier too (the barrier sits before the last k's
    // multiply-adds). SNAKE: every other row (column, pair) of a thread's
    // multiply-adds is walked backwards. ORDER of a k's multiply-adds: 0
    // row by row, 1 column by column, 2 two rows at a time. The shipped
    // float32 and int32 kernels take PIPE and SNAKE, the 128x128 ones with
    // split K ORDER 1, tn's without split K and the 64-wide tiles ORDER 0;
    // float64 none of them. The other combinations are the harness's
    // (testdata/gemm_bench.cu); PIPE with AHEAD 1 is compiled by none now
    // (it measured 0.82-0.88 of cuBLAS against 0.87-0.96 with AHEAD 2).
    static constexpr bool PIPE = PIPE_, SNAKE = SNAKE_;
    static constexpr int ORDER = ORDER_;
    static constexpr int TC = BN / TN; // threads along a row of C
    static_assert((BM / TM) * (BN / TN) == THREADS, "one thread per TM x TN piece");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "4-wide pieces");
};

template <typename T> struct Acc { typedef T type; };
template <> struct Acc<int> { typedef unsigned int type; };

// Four consecutive elements moved as 16-byte accesses: one for float and
// int, two for double. p must be 16-byte aligned.
template <typename T> struct Quad;
template <> struct Quad<float> {
    static __device__ __forceinline__ void load(const float* p, float (&r)[4]) {
        float4 v = *reinterpret_cast<const float4*>(p);
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    }
    static __device__ __forceinline__ void store(float* p, const float (&r)[4]) {
        *reinterpret_cast<float4*>(p) = make_float4(r[0], r[1], r[2], r[3]);
    }
};
template <> struct Quad<int> {
    static __device__ __forceinline__ void load(const int* p, int (&r)[4]) {
        int4 v = *reinterpret_cast<const int4*>(p);
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    }
    static __device__ __forceinline__ void store(int* p, const int (&r)[4]) {
        *reinterpret_cast<int4*>(p) = make_int4(r[0], r[1], r[2], r[3]);
    }
};
template <> struct Quad<double> {
    static __device__ __forceinline__ void load(const double* p, double (&r)[4]) {
        double2 a = reinterpret_cast<const double2*>(p)[0];
        double2 b = reinterpret_cast<const double2*>(p)[1];
        r[0] = a.x; r[1] = a.y; r[2] = b.x; r[3] = b.y;
    }
    static __device__ __forceinline__ void store(double* p, const double (&r)[4]) {
        reinterpret_cast<double2*>(p)[0] = make_double2(r[0], r[1]);
        reinterpret_cast<double2*>(p)[1] = make_double2(r[2], r[3]);
    }
};

// Panel moves one operand's BK x W panel of a step from global memory to
// shared memory through registers: Q pieces of four elements a thread.
//
// KCONTIG false: the source is contiguous along m (or n): element (k, i) of
// the panel is at src[k*ld + i]; piece q of all THREADS*Q covers k = q/(W/4),
// i = (q%(W/4))*4..+3, and is stored as it is.
// KCONTIG true: contiguous along k: element (k, i) is at src[i*ld + k];
// piece q covers i = q/(BK/4), k = (q%(BK/4))*4..+3, stored transposed.
template <typename T, bool KCONTIG, int BK, int W, int THREADS>
struct Panel {
    static constexpr int Q = BK * W / (4 * THREADS);
    static_assert(Q * 4 * THREADS == BK * W, "whole pieces a thread");
    T v[Q][4];

    static __device__ __forceinline__ void piece(int tid, int j, int& k, int& i) {
        const int q = tid + j * THREADS;
        if (KCONTIG) { i = q / (BK / 4); k = (q % (BK / 4)) * 4; }
        else         { k = q / (W / 4); i = (q % (W / 4)) * 4; }
    }

    // load reads the panel at step k0 of the operand whose first row or
    // column of this block is i0; extent is the operand's size along i (M
    // or N), K its size along k. vec: 16-byte loads allowed (aligned base
    // and leading dimension a multiple of 4).
    __device__ __forceinline__ void load(int tid, const T* __restrict__ src, int ld, int i0, int extent,
                                         int k0, int K, bool vec) {
#pragma unroll
        for (int j = 0; j < Q; ++j) {
            int k, i;
            piece(tid, j, k, i);
            const int gi = i0 + i, gk = k0 + k;
            if (KCONTIG) {
                const T* p = src + (size_t)gi * ld + gk;
                if (vec && gi < extent && gk + 3 < K) {
                    Quad<T>::load(p, v[j]);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) v[j][e] = (gi < extent && gk + e < K) ? p[e] : T(0);
                }
            } else {
                const T* p = src + (size_t)gk * ld + gi;
                if (vec && gk < K && gi + 3 < extent) {
                    Quad<T>::load(p, v[j]);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) v[j][e] = (gk < K && gi + e < extent) ? p[e] : T(0);
                }
            }
        }
    }

    // store puts the registers into the shared panel S[BK][SW].
    template <int SW>
    __device__ __forceinline__ void store(int tid, T (*S)[SW]) const {
#pragma unroll
        for (int j = 0; j < Q; ++j) {
            int k, i;
            piece(tid, j, k, i);
            if (KCONTIG) {
#pragma unroll
                for (int e = 0; e < 4; ++e) S[k + e][i] = v[j][e];
            } else {
                Quad<T>::store(&S[k][i], v[j]);
            }
        }
    }
};

// store_tile writes a thread's TM x TN accumulators, the 4x4 pieces of
// Tiling G at (m0, n0) that thread (ty, tx) owns. With work == nullptr: C
// = alpha*acc + beta*C (C not read when beta is 0), 16-byte accesses
// where C and ldc allow them. Otherwise this block is one slice of K of a
// split product: alpha*acc goes to the slice's M x N part of work (row
// stride N, slice blockIdx.y of batch b at (b*S + y)*M*N), and the reduce
// kernel adds the slices and beta*C, in slice order.
template <typename T, class G>
__device__ __forceinline__ void store_tile(const typename Acc<T>::type (&acc)[G::TM][G::TN], T alpha, T beta,
                                           T* __restrict__ C, int ldc, T* __restrict__ work, long long batch,
                                           int M, int N, int m0, int n0, int tx, int ty) {
    typedef typename Acc<T>::type U;
    constexpr int TM = G::TM, QN = G::TN / 4;
    constexpr int SM = G::BM / (G::TM / 4), SN = G::BN / QN;
    if (work != nullptr) {
        T* W = work + ((size_t)batch * gridDim.y + blockIdx.y) * (size_t)M * N;
        const bool vecW = (N % 4 == 0);
#pragma unroll
        for (int r = 0; r < TM; ++r) {
            const int row = m0 + (r / 4) * SM + ty * 4 + r % 4;
            if (row >= M) continue;
#pragma unroll
            for (int h = 0; h < QN; ++h) {
                const int col = n0 + h * SN + tx * 4;
                T* p = W + (size_t)row * N + col;
                T out[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) out[e] = T(U(alpha) * acc[r][h * 4 + e]);
                if (vecW && col + 3 < N) {
                    Quad<T>::store(p, out);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        if (col + e < N) p[e] = out[e];
                }
            }
        }
        return;
    }
    const bool vecC = ((reinterpret_cast<uintptr_t>(C) & 15) == 0) && (ldc % 4 == 0);
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int row = m0 + (r / 4) * SM + ty * 4 + r % 4;
        if (row >= M) continue;
#pragma unroll
        for (int h = 0; h < QN; ++h) {
            const int col = n0 + h * SN + tx * 4;
            T* p = C + (size_t)row * ldc + col;
            if (vecC && col + 3 < N) {
                T old[4] = {T(0), T(0), T(0), T(0)}, out[4];
                if (beta != T(0)) Quad<T>::load(p, old);
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    out[e] = T(U(alpha) * acc[r][h * 4 + e] + (beta != T(0) ? U(beta) * U(old[e]) : U(0)));
                Quad<T>::store(p, out);
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    if (col + e < N) {
                        U v = U(alpha) * acc[r][h * 4 + e];
                        if (beta != T(0)) v += U(beta) * U(p[e]);
                        p[e] = T(v);
                    }
                }
            }
        }
    }
}

// SPLIT false compiles the kernel without split K (gridDim.y must be 1;
// kSlice and work are not read): ptxas schedules the loop differently
// then, faster for tn in rows (0.914-0.940 of cuBLAS against 0.908-0.930
// with split K in columns), slower for the other layouts
// (docs/PERFORMANCE.md).
template <typename T, bool TA, bool TB, class G, bool SPLIT = true>
__device__ __forceinline__ void matmul_reg(int M, int N, int K, T alpha,
                                           const T* __restrict__ A, int lda, long long strideA,
                                           const T* __restrict__ B, int ldb, long long strideB,
                                           T beta, T* __restrict__ C, int ldc, long long strideC,
                                           int kSlice, T* __restrict__ work) {
    typedef typename Acc<T>::type U;
    constexpr int BM = G::BM, BN = G::BN, BK = G::BK, TM = G::TM, TN = G::TN, THREADS = G::THREADS;
    constexpr int QM = TM / 4, QN = TN / 4;           // 4x4 pieces a thread, down and across
    constexpr int SM = BM / QM, SN = BN / QN;         // their spacing
    // A's panel is contiguous along k when A is not transposed; B's when it is.
    constexpr bool AK = !TA, BKC = TB;
    constexpr int AW = AK ? BM + PAD : BM;
    constexpr int BW = BKC ? BN + PAD : BN;
    __shared__ __align__(16) T As[2][BK][AW];
    __shared__ __align__(16) T Bs[2][BK][BW];

    const int tid = threadIdx.x;
    const long long batch = blockIdx.z;
    A += batch * strideA;
    B += batch * strideB;
    C += batch * strideC;

    // Grouped block order: GROUP block rows share the columns of B while
    // they walk across them.
    int tileM, tileN;
    gemm::grouped_tile<GROUP>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
    const int m0 = tileM * BM, n0 = tileN * BN;

    const int tx = tid % G::TC, ty = tid / G::TC;

    U acc[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c) acc[r][c] = U(0);

    // alpha is the same for every thread, so all take one branch and meet
    // the same barriers.
    // Split K: block row y of the grid takes K from kBegin to kEnd.
    const int kBegin = SPLIT ? blockIdx.y * kSlice : 0;
    const int kEnd = SPLIT ? kBegin + min(K - kBegin, kSlice) : K; // kBegin + kSlice may pass 2^31
    if (alpha != T(0) && kBegin < kEnd) {
        // 16-byte loads need the base and every row start aligned.
        const bool vecA = ((reinterpret_cast<uintptr_t>(A) & 15) == 0) && (lda % 4 == 0);
        const bool vecB = ((reinterpret_cast<uintptr_t>(B) & 15) == 0) && (ldb % 4 == 0);
        typedef Panel<T, AK, BK, BM, THREADS> PA;
        typedef Panel<T, BKC, BK, BN, THREADS> PB;
        const int steps = (kEnd - kBegin + BK - 1) / BK;
        // Step s works on the panels in shared buffer s%2; meanwhile the
        // global loads of step s+AHEAD go to registers (set (s+AHEAD)%2 when
        // two steps ahead), and step s+1's panels, loaded AHEAD-1 steps
        // earlier, go from their registers to buffer (s+1)%2 at its end.
        // One k's multiply-adds: TM x TN of them from TM values of A and TN
        // of B.
        auto outer = [&](const T (&a)[QM][4], const T (&b)[QN][4]) {
            if (G::ORDER == 1) {
#pragma unroll
                for (int c = 0; c < TN; ++c)
#pragma unroll
                    for (int r0 = 0; r0 < TM; ++r0) {
                        const int r = (G::SNAKE && (c & 1)) ? TM - 1 - r0 : r0;
                        acc[r][c] += U(a[r / 4][r % 4]) * U(b[c / 4][c % 4]);
                    }
            } else if (G::ORDER == 2) {
#pragma unroll
                for (int p = 0; p < TM / 2; ++p)
#pragma unroll
                    for (int c0 = 0; c0 < TN; ++c0) {
                        const int c = (G::SNAKE && (p & 1)) ? TN - 1 - c0 : c0;
#pragma unroll
                        for (int r = 2 * p; r < 2 * p + 2; ++r) acc[r][c] += U(a[r / 4][r % 4]) * U(b[c / 4][c % 4]);
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
        auto compute = [&](int buf) {
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                T a[QM][4], b[QN][4];
#pragma unroll
                for (int q = 0; q < QM; ++q) Quad<T>::load(&As[buf][kk][q * SM + ty * 4], a[q]);
#pragma unroll
                for (int q = 0; q < QN; ++q) Quad<T>::load(&Bs[buf][kk][q * SN + tx * 4], b[q]);
                outer(a, b);
            }
        };
        // Fragments (PIPE): f?[i] holds k's values where k % 2 == i. BK is
        // even, so a step always starts on set 0.
        T fa[2][QM][4], fb[2][QN][4];
        auto frag = [&](int i, int buf, int kk) {
#pragma unroll
            for (int q = 0; q < QM; ++q) Quad<T>::load(&As[buf][kk][q * SM + ty * 4], fa[i][q]);
#pragma unroll
            for (int q = 0; q < QN; ++q) Quad<T>::load(&Bs[buf][kk][q * SN + tx * 4], fb[i][q]);
        };
        // One step on buffer cur; when next, the next step's panels go from
        // (pa, pb) into the other buffer, and the barrier follows. PIPE:
        // the stores and the barrier come at the last k, before its
        // multiply-adds, and the next step's first fragments load while
        // they run. Otherwise the step's multiply-adds come first.
        auto step = [&](int cur, bool next, const PA& pa, const PB& pb) {
            if (G::PIPE) {
#pragma unroll
                for (int kk = 0; kk < BK; ++kk) {
                    if (kk == BK - 1) {
                        if (next) {
                            pa.store(tid, As[cur ^ 1]);
                            pb.store(tid, Bs[cur ^ 1]);
                        }
                        __syncthreads();
                        if (next) frag(0, cur ^ 1, 0);
                    } else {
                        frag((kk + 1) & 1, cur, kk + 1);
                    }
                    outer(fa[kk & 1], fb[kk & 1]);
                }
            } else {
                compute(cur);
                if (next) {
                    pa.store(tid, As[cur ^ 1]);
                    pb.store(tid, Bs[cur ^ 1]);
                }
                __syncthreads();
            }
        };
        if (G::AHEAD == 1) {
            PA pa;
            PB pb;
            pa.load(tid, A, lda, m0, M, kBegin, kEnd, vecA);
            pb.load(tid, B, ldb, n0, N, kBegin, kEnd, vecB);
            pa.store(tid, As[0]);
            pb.store(tid, Bs[0]);
            __syncthreads();
            if (G::PIPE) frag(0, 0, 0);
            for (int s = 0; s < steps; ++s) {
                const bool more = s + 1 < steps;
                if (more) {
                    pa.load(tid, A, lda, m0, M, kBegin + (s + 1) * BK, kEnd, vecA);
                    pb.load(tid, B, ldb, n0, N, kBegin + (s + 1) * BK, kEnd, vecB);
                }
                step(s & 1, more, pa, pb);
            }
        } else {
            // Register sets must be named at compile time: two steps a turn.
            PA pa0, pa1;
            PB pb0, pb1;
            pa0.load(tid, A, lda, m0, M, kBegin, kEnd, vecA);
            pb0.load(tid, B, ldb, n0, N, kBegin, kEnd, vecB);
            if (steps > 1) {
                pa1.load(tid, A, lda, m0, M, kBegin + BK, kEnd, vecA);
                pb1.load(tid, B, ldb, n0, N, kBegin + BK, kEnd, vecB);
            }
            pa0.store(tid, As[0]);
            pb0.store(tid, Bs[0]);
            __syncthreads();
            if (G::PIPE) frag(0, 0, 0);
            for (int s = 0; s < steps; s += 2) {
                // Even step s: loads s+2 into set 0, stores s+1 from set 1.
                if (s + 2 < steps) {
                    pa0.load(tid, A, lda, m0, M, kBegin + (s + 2) * BK, kEnd, vecA);
                    pb0.load(tid, B, ldb, n0, N, kBegin + (s + 2) * BK, kEnd, vecB);
                }
                step(0, s + 1 < steps, pa1, pb1);
                if (s + 1 >= steps) break;
                // Odd step s+1: loads s+3 into set 1, stores s+2 from set 0.
                if (s + 3 < steps) {
                    pa1.load(tid, A, lda, m0, M, kBegin + (s + 3) * BK, kEnd, vecA);
                    pb1.load(tid, B, ldb, n0, N, kBegin + (s + 3) * BK, kEnd, vecB);
                }
                step(1, s + 2 < steps, pa0, pb0);
            }
        }
    }

    store_tile<T, G>(acc, alpha, beta, C, ldc, SPLIT && gridDim.y > 1 ? work : nullptr, batch, M, N, m0, n0, tx,
                     ty);
}

// reduce adds the S slices of K that a split product left in work (each
// M x N, row stride N, batch b's at work + b*S*M*N) in slice order, and
// beta*C (not read when beta is 0): C = sum + beta*C.
template <typename T>
__device__ __forceinline__ void matmul_reduce(int M, int N, int S, const T* __restrict__ work, T beta,
                                              T* __restrict__ C, int ldc, long long strideC) {
    typedef typename Acc<T>::type U;
    const long long batch = blockIdx.y;
    const size_t plane = (size_t)M * N;
    const T* W = work + batch * S * plane;
    C += batch * strideC;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < plane; i += (size_t)gridDim.x * blockDim.x) {
        U sum = U(0);
        for (int s = 0; s < S; ++s) sum += U(W[s * plane + i]);
        const size_t row = i / N, col = i % N;
        T* p = C + row * ldc + col;
        if (beta != T(0)) sum += U(beta) * U(*p);
        *p = T(sum);
    }
}

// matmul_tma_tn is tn's float32 kernel with its panels copied by TMA
// (sm_90): in tn both panels lie along m and n, as TMA's boxes do (a box
// of BM x BK of A^T, stored K x M, lands as BK rows of BM: the k-major
// panel the loop reads), so one thread copies a step's two panels with two
// instructions. No registers stage them and no thread computes an address
// or a bound (parts past an edge arrive as zeros), which leaves the 128
// registers of two blocks an SM room for steps of 16 along K, half the
// barriers of reg128's 8. A ring of STAGES buffers in dynamic shared
// memory, each with a "full" mbarrier that TMA's bytes complete; the
// step's one barrier (before its last k, as PIPE places it) frees the
// buffer read in the step before, into which thread 0 then copies step
// s+STAGES-1. The loop is PIPE's, columns snaking (Tiling), measured best
// of 11 variants (rows, columns or row pairs; 8 or 16 along K; 3, 4 or 6
// stages; warps that meet at the barrier or only at "empty" mbarriers:
// testdata/gemm_bench.cu "tma", docs/PERFORMANCE.md). Split K as
// matmul_reg's, slices a multiple of BK long.
template <class G, int STAGES>
__device__ __forceinline__ void matmul_tma_tn(int M, int N, int K, float alpha, const gemm::TensorMap* mapA,
                                              const gemm::TensorMap* mapB, float beta, float* __restrict__ C,
                                              int ldc, long long strideC, int kSlice, float* __restrict__ work) {
    constexpr int BM = G::BM, BN = G::BN, BK = G::BK, TM = G::TM, TN = G::TN;
    constexpr int QM = TM / 4, QN = TN / 4;
    constexpr int SM = BM / QM, SN = BN / QN;
    static_assert(BK % 2 == 0, "fragment sets alternate");
    static_assert(G::PIPE, "the fragment pipeline's barrier placing frees the buffers");
    constexpr unsigned BYTES = (BM + BN) * BK * sizeof(float);
    extern __shared__ __align__(128) unsigned char ringTMA[]; // TMA writes 128-byte aligned boxes
    float (*As)[BK][BM] = reinterpret_cast<float (*)[BK][BM]>(ringTMA);
    float (*Bs)[BK][BN] = reinterpret_cast<float (*)[BK][BN]>(ringTMA + (size_t)STAGES * BK * BM * sizeof(float));
    __shared__ __align__(8) unsigned long long full[STAGES];

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
        for (int s = 0; s < STAGES; ++s) gemm::bar_init(gemm::smem_addr(&full[s]), 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int kBegin = blockIdx.y * kSlice;
    const int kEnd = kBegin + min(K - kBegin, kSlice); // kBegin + kSlice may pass 2^31
    if (alpha != 0.f && kBegin < kEnd) {
        // kSlice is a multiple of BK, so a slice's steps end at its end,
        // or, in the last slice, in TMA's zeros past K.
        const int steps = (kEnd - kBegin + BK - 1) / BK;
        auto issue = [&](int st) { // thread 0's
            // The buffer's last reads were the threads' ordinary loads,
            // ordered before this by the step's barrier; TMA writes
            // through the async proxy, which the PTX memory model orders
            // after them only across this fence.
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            const int slot = st % STAGES;
            const unsigned bar = gemm::smem_addr(&full[slot]);
            gemm::bar_expect(bar, BYTES);
            gemm::tma_load(gemm::smem_addr(&As[slot][0][0]), mapA, m0, kBegin + st * BK, batch, bar);
            gemm::tma_load(gemm::smem_addr(&Bs[slot][0][0]), mapB, n0, kBegin + st * BK, batch, bar);
        };
        static_assert(G::ORDER == 1 && G::SNAKE, "columns snaking, the order measured best");
        auto outer = [&](const float (&a)[QM][4], const float (&b)[QN][4]) {
#pragma unroll
            for (int c = 0; c < TN; ++c)
#pragma unroll
                for (int r0 = 0; r0 < TM; ++r0) {
                    const int r = (c & 1) ? TM - 1 - r0 : r0;
                    acc[r][c] += a[r / 4][r % 4] * b[c / 4][c % 4];
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
            for (int st = 0; st < STAGES - 1 && st < steps; ++st) issue(st);
        gemm::bar_wait(gemm::smem_addr(&full[0]), 0);
        frag(0, 0, 0);
        for (int s = 0; s < steps; ++s) {
            const int buf = s % STAGES;
            // Its buffer was read before the barrier of step s-1.
            if (tid == 0 && s + STAGES - 1 < steps) issue(s + STAGES - 1);
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                if (kk == BK - 1) {
                    __syncthreads(); // buffer s read by all
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
    store_tile<float, G>(acc, alpha, beta, C, ldc, gridDim.y > 1 ? work : nullptr, batch, M, N, m0, n0, tx, ty);
}

} // namespace

// The shipped shapes. 128x128 blocks of 256 threads, 8x8 elements a
// thread, global loads two steps ahead: float32 and int32 run two blocks an
// SM (at most 128 registers a thread), with the fragment pipeline and a
// snake order of the multiply-adds (PIPE, SNAKE, ORDER: +0.05 to +0.08 of
// cuBLAS in every layout, chosen by the harness's "pipe" mode among orders
// that only ptxas's schedule tells apart, docs/PERFORMANCE.md; nt spills 8
// bytes under the 128-register cap, and still gains); float64's 64
// accumulators alone take 128 registers, so its blocks get up to 255, run
// one an SM and keep the plain loop (not measured with the pipeline: dmma
// serves float64). For float32 products with M or N of 64 or less, 64x128
// and 128x64 blocks of 128 threads (three an SM: at four, 128 registers,
// they spill) leave no half-empty tiles.
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 1> Reg128;
typedef Tiling<128, 128, 8, 8, 8, 256, 2, true, true, 0> Reg128Rows;
typedef Tiling<128, 128, 8, 8, 8, 256, 2> Reg128F64;
typedef Tiling<64, 128, 8, 8, 8, 128, 2, true, true> Reg64x128;
typedef Tiling<128, 64, 8, 8, 8, 128, 2, true, true> Reg128x64;

#define MATMUL_REGTILED_SPLIT(NAME, T, TA, TB, TILING, THREADS, MINBLOCKS, SPLIT)                \
    extern "C" __global__ void __launch_bounds__(THREADS, MINBLOCKS)                             \
    NAME(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, long long strideA,     \
         const T* __restrict__ B, int ldb, long long strideB, T beta, T* __restrict__ C,         \
         int ldc, long long strideC, int kSlice, T* __restrict__ work) {                         \
        matmul_reg<T, TA, TB, TILING, SPLIT>(M, N, K, alpha, A, lda, strideA, B, ldb, strideB,   \
                                             beta, C, ldc, strideC, kSlice, work);               \
    }
#define MATMUL_REGTILED(NAME, T, TA, TB, TILING, THREADS, MINBLOCKS) \
    MATMUL_REGTILED_SPLIT(NAME, T, TA, TB, TILING, THREADS, MINBLOCKS, true)

MATMUL_REGTILED(matmul_reg128_nn_f32, float, false, false, Reg128, 256, 2)
MATMUL_REGTILED(matmul_reg128_nt_f32, float, false, true, Reg128, 256, 2)
MATMUL_REGTILED(matmul_reg128_tn_f32, float, true, false, Reg128, 256, 2)
MATMUL_REGTILED(matmul_reg128_tt_f32, float, true, true, Reg128, 256, 2)
MATMUL_REGTILED(matmul_reg128_nn_f64, double, false, false, Reg128F64, 256, 1)
MATMUL_REGTILED(matmul_reg128_nt_f64, double, false, true, Reg128F64, 256, 1)
MATMUL_REGTILED(matmul_reg128_tn_f64, double, true, false, Reg128F64, 256, 1)
MATMUL_REGTILED(matmul_reg128_tt_f64, double, true, true, Reg128F64, 256, 1)
MATMUL_REGTILED(matmul_reg128_nn_i32, int, false, false, Reg128, 256, 2)
MATMUL_REGTILED(matmul_reg128_nt_i32, int, false, true, Reg128, 256, 2)
MATMUL_REGTILED(matmul_reg128_tn_i32, int, true, false, Reg128, 256, 2)
MATMUL_REGTILED(matmul_reg128_tt_i32, int, true, true, Reg128, 256, 2)
// float32's 128x128 tn kernel again without split K and in rows, for the
// products that fill the GPU without it: ptxas schedules each layout's
// loop differently with and without the slice bounds and in each order,
// and tn alone runs faster so (0.914-0.940 of cuBLAS against 0.908-0.930
// at n = 2048 to 8192; nn, nt and tt 0.01-0.06 slower without split K:
// docs/PERFORMANCE.md).
MATMUL_REGTILED_SPLIT(matmul_reg128_whole_tn_f32, float, true, false, Reg128Rows, 256, 2, false)
MATMUL_REGTILED(matmul_reg128_m64_nn_f32, float, false, false, Reg64x128, 128, 3)
MATMUL_REGTILED(matmul_reg128_m64_nt_f32, float, false, true, Reg64x128, 128, 3)
MATMUL_REGTILED(matmul_reg128_m64_tn_f32, float, true, false, Reg64x128, 128, 3)
MATMUL_REGTILED(matmul_reg128_m64_tt_f32, float, true, true, Reg64x128, 128, 3)
MATMUL_REGTILED(matmul_reg128_n64_nn_f32, float, false, false, Reg128x64, 128, 3)
MATMUL_REGTILED(matmul_reg128_n64_nt_f32, float, false, true, Reg128x64, 128, 3)
MATMUL_REGTILED(matmul_reg128_n64_tn_f32, float, true, false, Reg128x64, 128, 3)
MATMUL_REGTILED(matmul_reg128_n64_tt_f32, float, true, true, Reg128x64, 128, 3)

// float32 tn fed by TMA (matmul_tma_tn; sm_90 and newer: the sm_80 code
// of this file traps, and gpu.Gemm launches it only on compute capability
// 9.0 or newer): 128x128 tiles, 16 along K a step, a ring of
// REG128_TMA_STAGES buffers, REG128_TMA_SHARED_BYTES of dynamic shared
// memory, the operands as TMA descriptors (3-D: {M or N, K, batch}, boxes
// of 128 x 16 x 1, no swizzle, zeros past the edges), each
//   (int M, int N, int K, float alpha, CUtensorMap a, CUtensorMap b,
//    float beta, float* C, int ldc, long long strideC, int kSlice,
//    float* work).
#define REG128_TMA_STAGES 4
// REG128_TMA_STAGES * (128 + 128) * 16 * sizeof(float)
#define REG128_TMA_SHARED_BYTES 65536
typedef Tiling<128, 128, 16, 8, 8, 256, 2, true, true, 1> Reg128TMA;
static_assert(REG128_TMA_SHARED_BYTES == REG128_TMA_STAGES * (128 + 128) * 16 * sizeof(float), "the ring's size");
#define MATMUL_TMA_TN(NAME, T, TILING, STAGES)                                                                     \
    extern "C" __global__ void __launch_bounds__(256, 2)                                                          \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ gemm::TensorMap a,                                 \
         const __grid_constant__ gemm::TensorMap b, T beta, T* __restrict__ C, int ldc, long long strideC,        \
         int kSlice, T* __restrict__ work) {                                                                      \
        MATMUL_TMA_TN_BODY(TILING, STAGES)                                                                        \
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define MATMUL_TMA_TN_BODY(TILING, STAGES) __trap(); /* no TMA before Hopper */
#else
#define MATMUL_TMA_TN_BODY(TILING, STAGES) \
    matmul_tma_tn<TILING, STAGES>(M, N, K, alpha, &a, &b, beta, C, ldc, strideC, kSlice, work);
#endif
MATMUL_TMA_TN(matmul_reg128_tma_tn_f32, float, Reg128TMA, REG128_TMA_STAGES)

#define MATMUL_REDUCE(NAME, T)                                                                \
    extern "C" __global__ void NAME(int M, int N, int S, const T* __restrict__ work, T beta,  \
                                    T* __restrict__ C, int ldc, long long strideC) {           \
        matmul_reduce<T>(M, N, S, work, beta, C, ldc, strideC);                               \
    }

MATMUL_REDUCE(matmul_reg128_reduce_f32, float)
MATMUL_REDUCE(matmul_reg128_reduce_f64, double)
MATMUL_REDUCE(matmul_reg128_reduce_i32, int)
