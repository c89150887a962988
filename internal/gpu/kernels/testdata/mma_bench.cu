// mma_bench.cu: checks matmul_mma.cu's kernels (float32 operands rounded
// to TF32, BF16 or FP16 on the tensor cores) against a float64 host
// reference of the rounded operands (every transpose, alpha and beta
// cases, odd shapes, padded and misaligned operands, batches, products
// split along K), then times them against cuBLAS's cublasGemmEx with the
// matching compute type (CUBLAS_COMPUTE_32F_FAST_TF32, _FAST_16BF,
// _FAST_16F; float32 storage) in one process, the two taking turns run by
// run, and prints cuBLAS's kernel time over ours. It exists to develop the
// kernels on the GPU machine; the Go conformance suite is the check of
// record. The last argument picks the kernels: mma (matmul_mma.cu, the
// default) or wgmma (matmul_wgmma.cu, Hopper's, packing the operands first
// and splitting K as gpu.GemmOn does).
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o mma_bench mma_bench.cu -lcublas -lcuda
//   ./mma_bench check [mma|wgmma|wgmma-direct|wgmma-fused|wgmma-rs|wgmma-rsf]
//   ./mma_bench bench [reps [mma|wgmma|wgmma-direct|wgmma-fused|wgmma-rs|wgmma-rsf]]
#include "../matmul_mma.cu"
#include "../matmul_wgmma.cu"
#include "../matmul_reg128.cu" // matmul_reg128_reduce_f32 finishes split products

#include "bench_common.cuh"
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>


typedef void (*Kernel)(int, int, int, float, const float*, int, long long, const float*, int, long long, float,
                       float*, int, long long, int, float*);

struct Prec {
    const char* name;
    Kernel fn[4]; // nn, nt, tn, tt
    cublasComputeType_t compute;
    double unit; // the rounding's unit: 2^-11 for TF32 and FP16, 2^-8 for BF16
};
static Prec precs[] = {
    {"tf32", {matmul_mma_tf32_nn_f32, matmul_mma_tf32_nt_f32, matmul_mma_tf32_tn_f32, matmul_mma_tf32_tt_f32},
     CUBLAS_COMPUTE_32F_FAST_TF32, 1.0 / 2048},
    {"bf16", {matmul_mma_bf16_nn_f32, matmul_mma_bf16_nt_f32, matmul_mma_bf16_tn_f32, matmul_mma_bf16_tt_f32},
     CUBLAS_COMPUTE_32F_FAST_16BF, 1.0 / 256},
    {"fp16", {matmul_mma_fp16_nn_f32, matmul_mma_fp16_nt_f32, matmul_mma_fp16_tn_f32, matmul_mma_fp16_tt_f32},
     CUBLAS_COMPUTE_32F_FAST_16F, 1.0 / 2048},
};
static const char* transName[4] = {"nn", "nt", "tn", "tt"};

// round_to is what the kernel does to an operand before it multiplies.
static double round_to(int p, float x) {
    if (p == 0) { // TF32: round to nearest even, to 10 bits
        unsigned u;
        memcpy(&u, &x, 4);
        if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
        float y;
        memcpy(&y, &u, 4);
        return y;
    }
    if (p == 1) return (double)__bfloat162float(__float2bfloat16_rn(x));
    return (double)__half2float(__float2half_rn(x));
}

static bool useWgmma = false;
// wgmmaDirect (the family wgmma-direct; docs/PERFORMANCE.md, "TF32
// operands read where they lie" and "TMA rounds TF32"; gpu.gemmWGMMA reads
// both operands of nn, nt and tt where they lie, through kernels that take
// one of them from registers):
// in TF32, an operand that already lies along K (A of nn and nt, B of nt
// and tt), 16-byte aligned with leading dimensions of multiples of 4, is
// read by TMA where it lies instead of being packed, rounded by TMA as it
// copies it (tensorMap's TFLOAT32; with FLOAT32 the tensor core would
// drop its low 13 bits).
static bool wgmmaDirect = false;
static bool directA = false, directB = false;
// wgmmaFused (the family wgmma-fused): a product of one batch and one
// slice of K runs matmul_wgmma_*_fused_*, which packs its operands itself
// while it multiplies; others run as wgmma.
static bool wgmmaFused = false;
// wgmmaRS (the families wgmma-rs and wgmma-rsf, an experiment): in TF32,
// op(A) of nn and nt, aligned, is read by TMA where it lies and rounded
// to TF32 by the consumers on its way to wgmma (A from registers), so
// only op(B)^T is packed: by the packing kernel (wgmma-rs) or, for one
// product of one slice, by the fused kernel (wgmma-rsf).
static bool wgmmaRS = false, rsFused = false;
static int benchRep = 0; // the timed run benchOne is in (0: its warm-up)
typedef void (*FusedKernel)(int, int, int, float, const wg::TensorMap, const wg::TensorMap, float, float*, int,
                            const float*, int, const float*, int, void*, void*, int, unsigned*, int, int, int);
static const FusedKernel fusedFn[3][4] = {
    {matmul_wgmma_tf32_fused_nn_f32, matmul_wgmma_tf32_fused_nt_f32, matmul_wgmma_tf32_fused_tn_f32, matmul_wgmma_tf32_fused_tt_f32},
    {matmul_wgmma_bf16_fused_nn_f32, matmul_wgmma_bf16_fused_nt_f32, matmul_wgmma_bf16_fused_tn_f32, matmul_wgmma_bf16_fused_tt_f32},
    {matmul_wgmma_fp16_fused_nn_f32, matmul_wgmma_fp16_fused_nt_f32, matmul_wgmma_fp16_fused_tn_f32, matmul_wgmma_fp16_fused_tt_f32}};

typedef void (*WgmmaKernel)(int, int, int, float, const wg::TensorMap, const wg::TensorMap, float, float*, int,
                            long long, int, float*);
typedef void (*PackKernel)(int, int, const float*, int, long long, void*, int, long long);
static const WgmmaKernel wgmmaFn[3] = {matmul_wgmma_tf32_f32, matmul_wgmma_bf16_f32, matmul_wgmma_fp16_f32};
static const FusedKernel rsFusedFn[3] = {matmul_wgmma_tf32_rs_fused_nn_f32, matmul_wgmma_tf32_rs_fused_nt_f32,
                                         matmul_wgmma_tf32_rs_fused_tt_f32};
static const PackKernel packFn[3][2] = {{matmul_wgmma_tf32_pack_n_f32, matmul_wgmma_tf32_pack_t_f32},
                                        {matmul_wgmma_bf16_pack_n_f32, matmul_wgmma_bf16_pack_t_f32},
                                        {matmul_wgmma_fp16_pack_n_f32, matmul_wgmma_fp16_pack_t_f32}};

static void prepare() {
    for (auto& p : precs)
        for (int t = 0; t < 4; ++t)
            CK(cudaFuncSetAttribute(p.fn[t], cudaFuncAttributeMaxDynamicSharedMemorySize, MMA_SHARED_BYTES));
    for (auto f : wgmmaFn) CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, WGMMA_SHARED_BYTES));
    for (auto& fs : fusedFn)
        for (auto f : fs) CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, WGMMA_SHARED_BYTES));
    for (auto f : rsFusedFn) CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, WGMMA_SHARED_BYTES));
    CK(cudaFuncSetAttribute(matmul_wgmma_tf32_rs_f32, cudaFuncAttributeMaxDynamicSharedMemorySize, WGMMA_SHARED_BYTES));
    CK(cudaFuncSetAttribute(matmul_wgmma_tf32_rs_tt_f32, cudaFuncAttributeMaxDynamicSharedMemorySize, WGMMA_SHARED_BYTES));
}

// tensorMap describes a packed operand (rows x K, row stride ldd elements,
// batch stride strideD) for TMA: boxes of 128 bytes of K by boxRows rows.
static wg::TensorMap tensorMap(int pi, const void* p, int rows, int K, int ldd, long long strideD, int batch,
                               int boxRows) {
    const int elem = pi == 0 ? 4 : 2;
    CUtensorMap m;
    cuuint64_t dim[3] = {(cuuint64_t)K, (cuuint64_t)rows, (cuuint64_t)batch};
    cuuint64_t stride[2] = {(cuuint64_t)ldd * elem, (cuuint64_t)strideD * elem};
    cuuint32_t box[3] = {(cuuint32_t)(128 / elem), (cuuint32_t)boxRows, 1};
    cuuint32_t estride[3] = {1, 1, 1};
    // TF32: TFLOAT32, so that TMA rounds an operand read where it lies (a
    // packed one is rounded already); the kernels that take A from
    // registers leave the rounding to it.
    const CUtensorMapDataType dt = pi == 0 ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32
                                 : pi == 1 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    CUresult r = cuTensorMapEncodeTiled(&m, dt, 3, const_cast<void*>(p), dim, stride, box, estride,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled: error %d (rows %d K %d ldd %d batch %d)\n", (int)r, rows, K, ldd, batch);
        exit(2);
    }
    wg::TensorMap out;
    memcpy(&out, &m, sizeof out);
    return out;
}

// wgmmaPhases picks what launchWgmma runs: 1 the packing, 2 the multiply,
// 3 both (bench times the packing alone too).
static int wgmmaPhases = 3;
static bool checking = false;

// launchWgmma packs op(A) and op(B)^T along K into a workspace and runs
// matmul_wgmma on them, split along K as gpu.GemmOn splits it (S = 0) or
// in S slices.
static void launchWgmma(int pi, int t, int M, int N, int K, float alpha, const float* A, int lda, long long sA,
                        const float* B, int ldb, long long sB, float beta, float* C, int ldc, long long sC,
                        int batch, int S) {
    const bool ta = t >= 2, tb = t & 1;
    const int elem = pi == 0 ? 4 : 2;
    const bool multiply = alpha != 0 && K > 0;
    const int Kp = multiply ? K : 1;
    const int ldd = (Kp + 16 / elem - 1) / (16 / elem) * (16 / elem);
    const long long pA = (long long)M * ldd, pB = (long long)N * ldd;
    static void* work = nullptr;
    static size_t have = 0;
    const size_t need = (size_t)(pA + pB) * batch * elem;
    if (need > have) {
        if (work) CK(cudaFree(work));
        CK(cudaMalloc(&work, need));
        have = need;
    }
    char* wA = static_cast<char*>(work);
    char* wB = wA + (size_t)pA * batch * elem;
    // Operands read where they lie (wgmma-direct, TF32 only).
    auto lies = [&](const float* X, int ld, long long stride) {
        return wgmmaDirect && pi == 0 && multiply && reinterpret_cast<uintptr_t>(X) % 16 == 0 && ld % 4 == 0 &&
               (batch == 1 || stride % 4 == 0);
    };
    directA = !ta && lies(A, lda, sA);
    directB = tb && lies(B, ldb, sB);
    const bool rsA = wgmmaRS && pi == 0 && !ta && multiply && reinterpret_cast<uintptr_t>(A) % 16 == 0 && lda % 4 == 0 &&
                     (batch == 1 || sA % 4 == 0);
    // Slices of K: one wave of 128x256 tiles, one block an SM, as splitK.
    static int sms = 0;
    if (!sms) CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const long long tiles0 = (long long)((M + wg::BM - 1) / wg::BM) * ((N + wg::BN - 1) / wg::BN) * batch;
    if (S == 0) S = tiles0 >= sms || K < 512 || !multiply ? 1 : (int)std::max(1LL, std::min({sms / tiles0, (long long)K / 256, 16LL}));
    int kSlice = std::max(K, 1);
    if (S > 1 && multiply) {
        kSlice = ((K + S - 1) / S + 63) / 64 * 64;
        S = (K + kSlice - 1) / kSlice;
    } else {
        S = 1;
    }
    static float* slices = nullptr;
    static size_t haveSlices = 0;
    if (S > 1 && (size_t)S * M * N * batch * 4 > haveSlices) {
        if (slices) CK(cudaFree(slices));
        haveSlices = (size_t)S * M * N * batch * 4;
        CK(cudaMalloc(&slices, haveSlices));
    }
    static unsigned* sync = nullptr;
    static size_t haveSync = 0;
    auto syncFor = [&](int tiles) {
        const size_t flags = 1 + (size_t)((K + wg::KC - 1) / wg::KC) * tiles;
        if (flags > haveSync) {
            if (sync) CK(cudaFree(sync));
            CK(cudaMalloc(&sync, flags * 4));
            haveSync = flags;
        }
        return flags;
    };
    // A tt product as its transpose C^T = B A, B (N x K) read where it
    // lies and A packed as op(B)^T of an nn product, into A's place.
    const bool rsT = wgmmaRS && pi == 0 && ta && tb && multiply && reinterpret_cast<uintptr_t>(B) % 16 == 0 &&
                     ldb % 4 == 0 && (batch == 1 || sB % 4 == 0);
    if (rsT) {
        const int tM = (N + wg::BM - 1) / wg::BM, tN = (M + wg::BN - 1) / wg::BN;
        const wg::TensorMap mA = tensorMap(0, B, N, K, ldb, batch > 1 ? sB : (long long)N * ldb, batch, wg::BM);
        const wg::TensorMap mB = tensorMap(0, wA, M, K, ldd, pA, batch, wg::BN);
        if (rsFused && batch == 1 && S == 1 && wgmmaPhases == 3) {
            const size_t flags = syncFor(tM + tN);
            static const int packers = getenv("PACKERS") ? atoi(getenv("PACKERS")) : wg::PACKERS;
            CK(cudaMemsetAsync(sync, 0, flags * 4));
            const bool vecA = reinterpret_cast<uintptr_t>(A) % 16 == 0 && lda % 4 == 0;
            rsFusedFn[2]<<<tM * tN, wg::THREADS, WGMMA_SHARED_BYTES>>>(N, M, K, alpha, mA, mB, beta, C, ldc, B, ldb, A,
                                                                      lda, wA, wA, ldd, sync, (vecA ? 2 : 0) | 4, sms,
                                                                      packers);
            return;
        }
        if (wgmmaPhases & 1)
            packFn[0][1]<<<dim3((K + 31) / 32, std::min((M + 31) / 32, checking ? 3 : 65535), batch), dim3(32, 8)>>>(
                M, K, A, lda, sA, wA, ldd, pA);
        if (!(wgmmaPhases & 2)) return;
        matmul_wgmma_tf32_rs_tt_f32<<<dim3(tM * tN, S, batch), wg::THREADS, WGMMA_SHARED_BYTES>>>(
            N, M, K, alpha, mA, mB, beta, C, ldc, sC, kSlice, slices);
        if (S > 1)
            matmul_reg128_reduce_f32<<<dim3(std::min<long long>(((long long)M * N + 255) / 256, 1024), batch), 256>>>(
                M, N, S, slices, beta, C, ldc, sC);
        return;
    }
    if ((wgmmaFused || (wgmmaRS && rsFused)) && multiply && batch == 1 && S == 1 && wgmmaPhases == 3) {
        const int tilesM = (M + wg::BM - 1) / wg::BM, tilesN = (N + wg::BN - 1) / wg::BN;
        const size_t flags = syncFor(tilesM + tilesN);
        // FUSED_MODE (a diagnosis, in timed runs after the first): 1 the
        // flags and the item counter set as if all were packed (the
        // operands packed by the runs before), the multiply alone; 2 the
        // flags set but the items packed again beside the multiply.
        static const int mode = getenv("FUSED_MODE") ? atoi(getenv("FUSED_MODE")) : 0;
        static const int packers = getenv("PACKERS") ? atoi(getenv("PACKERS")) : wg::PACKERS; // warps a block that pack
        // Items of half a chunk: HALF_ITEMS=1 always, 0 never; by default
        // in checks every other product, in benches never.
        static const int halfEnv = getenv("HALF_ITEMS") ? atoi(getenv("HALF_ITEMS")) : -1;
        static int fusedCalls = 0;
        const bool half = halfEnv >= 0 ? halfEnv == 1 : checking && fusedCalls++ % 2 == 1;
        CK(cudaMemsetAsync(sync, mode && benchRep > 0 ? 0x7f : 0, flags * 4));
        if (mode == 2 && benchRep > 0) CK(cudaMemsetAsync(sync, 0, 4));
        auto vec = [](const float* X, int ld) { return reinterpret_cast<uintptr_t>(X) % 16 == 0 && ld % 4 == 0; };
        const wg::TensorMap mA = rsA ? tensorMap(pi, A, M, K, lda, (long long)M * lda, 1, wg::BM)
                                     : tensorMap(pi, wA, M, K, ldd, pA, 1, wg::BM);
        const wg::TensorMap mB = tensorMap(pi, wB, N, K, ldd, pB, 1, wg::BN);
        (rsA ? rsFusedFn[tb] : fusedFn[pi][t])<<<tilesM * tilesN, wg::THREADS, WGMMA_SHARED_BYTES>>>(
            M, N, K, alpha, mA, mB, beta, C, ldc, A, lda, B, ldb, wA, wB, ldd, sync, (vec(A, lda) ? 1 : 0) | (vec(B, ldb) ? 2 : 0) | (half ? 4 : 0), sms,
            packers);
        return;
    }
    if (multiply && (wgmmaPhases & 1)) {
        const dim3 blk(32, 8);
        // In checks, few rows of blocks, to try the kernels' loop over rows.
        if (!directA && !rsA)
            packFn[pi][ta]<<<dim3((K + 31) / 32, std::min((M + 31) / 32, checking ? 3 : 65535), batch), blk>>>(M, K, A, lda, sA, wA, ldd, pA);
        if (!directB)
            packFn[pi][!tb]<<<dim3((K + 31) / 32, (N + 31) / 32, batch), blk>>>(N, K, B, ldb, sB, wB, ldd, pB);
    }
    const wg::TensorMap mA = directA || rsA ? tensorMap(pi, A, M, K, lda, batch > 1 ? sA : (long long)M * lda, batch, wg::BM)
                                     : tensorMap(pi, wA, M, Kp, ldd, pA, batch, wg::BM);
    const wg::TensorMap mB = directB ? tensorMap(pi, B, N, K, ldb, batch > 1 ? sB : (long long)N * ldb, batch, wg::BN)
                                     : tensorMap(pi, wB, N, Kp, ldd, pB, batch, wg::BN);
    if (!(wgmmaPhases & 2)) return;
    const int tiles = ((M + wg::BM - 1) / wg::BM) * ((N + wg::BN - 1) / wg::BN);
    (rsA ? matmul_wgmma_tf32_rs_f32 : wgmmaFn[pi])<<<dim3(tiles, S, batch), wg::THREADS, WGMMA_SHARED_BYTES>>>(M, N, multiply ? K : 0, alpha, mA, mB,
                                                                            beta, C, ldc, sC, kSlice, slices);
    if (S > 1)
        matmul_reg128_reduce_f32<<<dim3(std::min<long long>(((long long)M * N + 255) / 256, 1024), batch), 256>>>(
            M, N, S, slices, beta, C, ldc, sC);
}

// The split gpu.GemmOn chooses (MMA_BLOCKS_PER_SM blocks an SM: as many
// slices as fit in one wave).
static int splitFor(int M, int N, int K, int batch) {
    static int sms = 0;
    if (!sms) CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    long long tiles = (long long)((M + 127) / 128) * ((N + 127) / 128) * batch;
    if (tiles >= sms || K < 512) return 1;
    long long want = (long long)sms * MMA_BLOCKS_PER_SM / tiles;
    return (int)std::max(1LL, std::min({want, (long long)K / 256, 16LL}));
}

static void launch(const Prec& p, int t, int M, int N, int K, float alpha, const float* A, int lda, long long sA,
                   const float* B, int ldb, long long sB, float beta, float* C, int ldc, long long sC, int batch,
                   int S = 0) {
    if (M == 0 || N == 0 || batch == 0) return;
    if (useWgmma) {
        launchWgmma(int(&p - precs), t, M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch, S);
        return;
    }
    const int blocks = ((M + 127) / 128) * ((N + 127) / 128);
    if (S == 0) S = splitFor(M, N, K, batch);
    int kSlice = std::max(K, 1);
    if (S > 1 && K > 0) {
        kSlice = ((K + S - 1) / S + 7) / 8 * 8; // as Go's splitK: a multiple of 8, not of the step
        S = (K + kSlice - 1) / kSlice;
    }
    if (S <= 1) {
        p.fn[t]<<<dim3(blocks, 1, batch), MmaShape::THREADS, MMA_SHARED_BYTES>>>(M, N, K, alpha, A, lda, sA, B, ldb, sB,
                                                                                beta, C, ldc, sC, kSlice, nullptr);
        return;
    }
    static float* work = nullptr;
    static size_t have = 0;
    size_t need = (size_t)S * M * N * batch * sizeof(float);
    if (need > have) {
        if (work) CK(cudaFree(work));
        CK(cudaMalloc(&work, need));
        have = need;
    }
    p.fn[t]<<<dim3(blocks, S, batch), MmaShape::THREADS, MMA_SHARED_BYTES>>>(M, N, K, alpha, A, lda, sA, B, ldb, sB,
                                                                            beta, C, ldc, sC, kSlice, work);
    matmul_reg128_reduce_f32<<<dim3(std::min<long long>(((long long)M * N + 255) / 256, 1024), batch), 256>>>(
        M, N, S, work, beta, C, ldc, sC);
}

static int failures = 0;

// checkOne runs one product (a batch of 2 when batched) and compares every
// element of C's storage: written ones with the reference of the rounded
// operands, within float32's error bound for a sum of K products (the
// tensor core's sums), and the others with their poison. A kernel that
// paired the wrong k, or rounded to the wrong precision, misses by far
// more.
static void checkOne(int pi, std::mt19937_64& r, int t, int M, int N, int K, int pad, int misalign, bool batched,
                     float alpha, float beta, int S = 0) {
    const Prec& p = precs[pi];
    const bool ta = t >= 2, tb = t & 1;
    const int rowsA = ta ? K : M, colsA = ta ? M : K;
    const int rowsB = tb ? N : K, colsB = tb ? K : N;
    const int lda = colsA + pad, ldb = colsB + pad, ldc = N + pad;
    const int batch = batched ? 2 : 1;
    const long long sA = (long long)rowsA * lda + 3, sB = (long long)rowsB * ldb + 5, sC = (long long)M * ldc + 7;
    const size_t nA = misalign + sA * batch + 1, nB = misalign + sB * batch + 1, nC = misalign + sC * batch + 1;
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> A(nA), B(nB), C(nC);
    for (auto& x : A) x = u(r);
    for (auto& x : B) x = u(r);
    for (auto& x : C) x = beta != 0 ? u(r) : NAN;
    std::vector<float> C0 = C;
    float *dA, *dB, *dC;
    CK(cudaMalloc(&dA, nA * 4));
    CK(cudaMalloc(&dB, nB * 4));
    CK(cudaMalloc(&dC, nC * 4));
    CK(cudaMemcpy(dA, A.data(), nA * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), nB * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, C.data(), nC * 4, cudaMemcpyHostToDevice));
    launch(p, t, M, N, K, alpha, dA + misalign, lda, sA, dB + misalign, ldb, sB, beta, dC + misalign, ldc, sC, batch, S);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C.data(), dC, nC * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    double worstRounded = 0, worstExact = 0; // error over magnitude, against rounded and exact operands
    std::vector<char> written(nC, 0);
    for (int b = 0; b < batch; ++b) {
        const size_t oA = misalign + b * sA, oB = misalign + b * sB, oC = misalign + b * sC;
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double s = 0, exact = 0, mag = 0;
                for (int k = 0; k < K; ++k) {
                    float a = ta ? A[oA + (size_t)k * lda + i] : A[oA + (size_t)i * lda + k];
                    float bb = tb ? B[oB + (size_t)j * ldb + k] : B[oB + (size_t)k * ldb + j];
                    double ar = round_to(pi, a);
                    double br = round_to(pi, bb);
                    s += ar * br;
                    exact += (double)a * bb;
                    mag += std::fabs(ar * br);
                }
                const size_t at = oC + (size_t)i * ldc + j;
                double want = (double)alpha * s + (beta != 0 ? (double)beta * C0[at] : 0);
                double scale = std::fabs(alpha) * mag + (beta != 0 ? std::fabs(beta * C0[at]) : 0);
                double tol = 2 * (K + 4) * 6e-8 * scale + 1e-30;
                written[at] = 1;
                double err = std::fabs(C[at] - want);
                worstRounded = std::max(worstRounded, err / (scale + 1e-30));
                worstExact = std::max(worstExact, std::fabs(C[at] - ((double)alpha * exact + (beta != 0 ? (double)beta * C0[at] : 0))) / (scale + 1e-30));
                if (!(err <= tol)) {
                    if (bad++ < 3)
                        printf("  %s %s %dx%dx%d b%d C[%d][%d] = %.9g, want %.9g (tol %.3g)\n", p.name, transName[t], M, N,
                               K, b, i, j, C[at], want, tol);
                }
            }
    }
    for (size_t i = 0; i < nC; ++i)
        if (!written[i] && !(std::isnan(C[i]) && std::isnan(C0[i])) && C[i] != C0[i]) {
            if (bad++ < 3) printf("  %s %dx%dx%d: element %zu outside C was written\n", transName[t], M, N, K, i);
        }
    if (bad) {
        failures++;
        printf("FAIL %s %s %dx%dx%d pad %d misalign %d batch %d alpha %g beta %g split %d: %d wrong\n", p.name,
               transName[t], M, N, K, pad, misalign, batch, alpha, beta, S, bad);
    }
    static double seen[3] = {0, 0, 0};
    if (K >= 500 && worstExact > seen[pi]) {
        seen[pi] = worstExact;
        printf("  %s: largest error against the exact operands so far %.3g of the magnitude (unit %.3g), against the rounded %.3g\n",
               p.name, worstExact, p.unit, worstRounded);
    }
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dC));
}

static void checkAll(std::mt19937_64& r) {
    const int shapes[][3] = {{1, 1, 1},     {1, 1, 9},      {7, 5, 3},      {16, 8, 8},      {128, 128, 16},
                             {129, 127, 17}, {131, 257, 33}, {37, 300, 100}, {300, 37, 101}, {64, 64, 0},
                             {255, 129, 520}};
    // CHECK_TF32=1: TF32 alone.
    for (int pi = 0; pi < (getenv("CHECK_TF32") ? 1 : 3); ++pi) {
        for (int t = 0; t < 4; ++t) {
            for (auto& s : shapes) {
                checkOne(pi, r, t, s[0], s[1], s[2], 0, 0, false, 1, 0);
                checkOne(pi, r, t, s[0], s[1], s[2], 3, 1, false, -1.5f, 0.5f); // odd ld, off 16 bytes
                checkOne(pi, r, t, s[0], s[1], s[2], 2, 0, true, 0.75f, -2);    // even ld, batch
            }
            checkOne(pi, r, t, 100, 90, 80, 1, 0, false, 0, 2); // alpha 0: C = beta*C
            checkOne(pi, r, t, 70, 60, 1000, 0, 0, false, 1, 1, 3);
            checkOne(pi, r, t, 70, 60, 1000, 1, 1, true, 2, 0, 4);
            // One slice of K over several chunks, groups of block rows and
            // block columns (the fused kernels' items and flags).
            checkOne(pi, r, t, 300, 600, 1000, 0, 0, false, 1, 0, 1);
            checkOne(pi, r, t, 2100, 520, 300, 1, 1, false, 1, 0.5f, 1);
            checkOne(pi, r, t, 1030, 257, 161, 4, 0, false, -1, 0, 1);
        }
        printf("check %s: %d failures so far\n", precs[pi].name, failures);
    }
}



static void benchOne(cublasHandle_t h, int pi, int t, int M, int N, int K, int reps) {
    const Prec& p = precs[pi];
    const bool ta = t >= 2, tb = t & 1;
    const int lda = ta ? M : K, ldb = tb ? K : N, ldc = N;
    float *A, *B, *C, *Cb;
    size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;
    CK(cudaMalloc(&A, nA * 4));
    CK(cudaMalloc(&B, nB * 4));
    CK(cudaMalloc(&C, nC * 4));
    CK(cudaMalloc(&Cb, nC * 4));
    fillRandom<<<1024, 256>>>(A, nA, 1);
    fillRandom<<<1024, 256>>>(B, nB, 2);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> tOurs, tBlas;
    const float one = 1, zero = 0;
    for (int i = 0; i <= reps; ++i) {
        benchRep = i;
        for (int which = 0; which < 2; ++which) {
            spinKernel<<<1, 1>>>(200000);
            CK(cudaEventRecord(e0));
            if (which == 0)
                launch(p, t, M, N, K, one, A, lda, 0, B, ldb, 0, zero, C, ldc, 0, 1);
            else // row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
                CB(cublasGemmEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, B,
                                CUDA_R_32F, ldb, A, CUDA_R_32F, lda, &zero, Cb, CUDA_R_32F, ldc, p.compute,
                                CUBLAS_GEMM_DEFAULT));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (i > 0) (which == 0 ? tOurs : tBlas).push_back(ms);
        }
    }
    benchRep = 0;
    // The packing alone, for the wgmma kernels.
    std::vector<float> tPack;
    for (int i = 0; useWgmma && i <= reps; ++i) {
        wgmmaPhases = 1;
        spinKernel<<<1, 1>>>(200000);
        CK(cudaEventRecord(e0));
        launch(p, t, M, N, K, one, A, lda, 0, B, ldb, 0, zero, C, ldc, 0, 1);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        wgmmaPhases = 3;
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i > 0) tPack.push_back(ms);
    }
    std::sort(tPack.begin(), tPack.end());
    // Against cuBLAS's result: relative Frobenius difference (both rounded).
    std::vector<float> hc(nC), hb(nC);
    CK(cudaMemcpy(hc.data(), C, nC * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), Cb, nC * 4, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < nC; ++i) {
        double d = (double)hc[i] - hb[i];
        num += d * d;
        den += (double)hb[i] * hb[i];
    }
    const double rel = std::sqrt(num / std::max(den, 1e-300));
    std::sort(tOurs.begin(), tOurs.end());
    std::sort(tBlas.begin(), tBlas.end());
    const float mo = tOurs[tOurs.size() / 2], mb = tBlas[tBlas.size() / 2];
    const double flops = 2.0 * M * N * K;
    const bool bad = rel > 4 * p.unit;
    printf("%s %s %5d x %5d x %5d  %s %8.3f ms %6.1f TFLOP/s  cuBLAS %8.3f ms %6.1f TFLOP/s  cuBLAS/ours %.3f  reldiff %.1e%s",
           p.name, transName[t], M, N, K, useWgmma ? (wgmmaDirect ? "wgmma-d" : wgmmaRS ? (rsFused ? "wgmma-rsf" : "wgmma-rs") : wgmmaFused ? "wgmma-f" : "wgmma") : "mma", mo, flops / mo / 1e9, mb, flops / mb / 1e9, mb / mo, rel, bad ? "  FAIL" : "");
    if (!tPack.empty()) printf("  (packing %.3f ms)", tPack[tPack.size() / 2]);
    printf("\n");
    if (bad) failures++;
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(Cb));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IONBF, 0);
    const std::string mode = argc > 1 ? argv[1] : "check";
    const int reps = argc > 2 && isdigit((unsigned char)argv[2][0]) ? atoi(argv[2]) : 10;
    const std::string family = argc > 2 && !isdigit((unsigned char)argv[argc - 1][0]) ? argv[argc - 1] : "mma";
    if (family != "mma" && family != "wgmma" && family != "wgmma-direct" && family != "wgmma-fused" &&
        family != "wgmma-rs" && family != "wgmma-rsf") {
        fprintf(stderr, "mma_bench: no kernels named %s (mma, wgmma, wgmma-direct or wgmma-fused)\n", family.c_str());
        return 2;
    }
    useWgmma = family != "mma";
    wgmmaDirect = family == "wgmma-direct";
    wgmmaFused = family == "wgmma-fused";
    wgmmaRS = family == "wgmma-rs" || family == "wgmma-rsf";
    rsFused = family == "wgmma-rsf";
    prepare();
    if (mode == "check") {
        checking = true;
        std::mt19937_64 r(20261123);
        checkAll(r);
    } else if (mode == "bench") {
        cublasHandle_t h;
        CB(cublasCreate(&h));
        // BENCH_TF32=1: TF32's nn from 2048 to 8192 alone.
        if (getenv("BENCH_TF32")) {
            for (int n : {2048, 4096, 8192}) benchOne(h, 0, 0, n, n, n, reps);
            if (getenv("BENCH_TT"))
                for (int n : {2048, 4096, 8192}) benchOne(h, 0, 3, n, n, n, reps);
            if (getenv("BENCH_NT"))
                for (int n : {2048, 4096, 8192}) benchOne(h, 0, 1, n, n, n, reps);
            if (!getenv("BENCH_NO_BF16"))
                for (int n : {4096, 8192}) benchOne(h, 1, 0, n, n, n, reps);
            printf("%s: %d failures\n", mode.c_str(), failures);
            return failures ? 1 : 0;
        }
        for (int pi = 0; pi < 3; ++pi) {
            for (int n : {1024, 2048, 4096, 8192}) benchOne(h, pi, 0, n, n, n, reps);
            for (int t = 1; t < 4; ++t) benchOne(h, pi, t, 4096, 4096, 4096, reps);
        }
        benchOne(h, 0, 0, 64, 8192, 8192, reps);
        benchOne(h, 0, 0, 8192, 8192, 64, reps);
        CB(cublasDestroy(h));
    } else {
        fprintf(stderr, "usage: mma_bench check [mma|wgmma|wgmma-direct|wgmma-fused|wgmma-rs|wgmma-rsf] | bench [reps [mma|wgmma|wgmma-direct|wgmma-fused|wgmma-rs|wgmma-rsf]]\n");
        return 2;
    }
    printf("%s: %d failures\n", mode.c_str(), failures);
    return failures ? 1 : 0;
}
