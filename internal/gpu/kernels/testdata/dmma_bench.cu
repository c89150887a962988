// dmma_bench.cu: checks matmul_dmma.cu's kernels against a float64 host
// reference (every transpose, alpha and beta cases, odd shapes, padded and
// misaligned operands, batches, products split along K), then times them
// against cuBLAS's DGEMM in one process, the two taking turns run by run,
// and prints cuBLAS's kernel time over ours. It exists to develop the
// kernel on the GPU machine; the Go conformance suite is the check of
// record.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o dmma_bench dmma_bench.cu -lcublas -lcuda
//   ./dmma_bench check
//   ./dmma_bench checktma          # the TMA-fed kernels (matmul_dmma_tma_*, and variants)
//   ./dmma_bench bench [reps]      # the shipped kernel: sizes and transposes
//   ./dmma_bench variants [reps [t]] # tiling variants, nn (or transpose t, 0-3)
//   ./dmma_bench relayout [reps]   # nn, tt, nt with operands copied transposed first (tn's layout)
//   ./dmma_bench tma [reps [t...]] # the TMA-fed kernels against the cp.async ones, transposes t
//   ./dmma_bench tmasmall [reps]   # the same at 1024 and on the skinny shapes
//   ./dmma_bench profile [n [v [t]]] # one product each, ours (or variant v; 100+i: TMA-fed i) and cuBLAS's, for ncu
#include "../matmul_dmma.cu"
#include "../matmul_dmma_tma.cu"
#include "../matmul_reg128.cu" // matmul_reg128_reduce_f64 finishes split products
#include "../transpose.cu"      // relayout: operands copied transposed first

#include <cuda.h>

#include "bench_common.cuh"
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>


typedef void (*Kernel)(int, int, int, double, const double*, int, long long, const double*, int, long long, double,
                       double*, int, long long, int, double*);
typedef void (*TmaKernel)(int, int, int, double, const gemm::TensorMap, const gemm::TensorMap, double, double*, int,
                          long long, int, double*);

struct Variant {
    const char* name;
    Kernel fn[4]; // nn, nt, tn, tt
    int bm, bn, threads, shared, perSM;
    int bmTN, sharedTN, perSMTN; // tn's, where its shape differs (the shipped kernels')
    TmaKernel tfn[4];            // TMA-fed kernels (matmul_tma), or none
};

// shapeFor returns v as transpose t launches it.
static Variant shapeFor(const Variant& v, int t) {
    Variant w = v;
    if (t == 2) {
        w.bm = v.bmTN;
        w.shared = v.sharedTN;
        w.perSM = v.perSMTN;
    }
    return w;
}

template <bool TA, bool TB, class G, int MINB>
__global__ void __launch_bounds__(G::THREADS, MINB)
    variant(int M, int N, int K, double alpha, const double* __restrict__ A, int lda, long long sA,
            const double* __restrict__ B, int ldb, long long sB, double beta, double* __restrict__ C, int ldc,
            long long sC, int kSlice, double* __restrict__ work) {
    dmma::matmul_dmma<TA, TB, G>(M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, kSlice, work);
}

// VARIANT(name, blocks an SM, Shape's arguments)
#define VARIANT(NAME, MINB, ...)                                                                         \
    {NAME,                                                                                              \
     {variant<false, false, dmma::Shape<__VA_ARGS__>, MINB>, variant<false, true, dmma::Shape<__VA_ARGS__>, MINB>, \
      variant<true, false, dmma::Shape<__VA_ARGS__>, MINB>, variant<true, true, dmma::Shape<__VA_ARGS__>, MINB>},  \
     dmma::Shape<__VA_ARGS__>::BM, dmma::Shape<__VA_ARGS__>::BN, dmma::Shape<__VA_ARGS__>::THREADS,       \
     dmma::Shape<__VA_ARGS__>::SHARED_BYTES, MINB, dmma::Shape<__VA_ARGS__>::BM,                          \
     dmma::Shape<__VA_ARGS__>::SHARED_BYTES, MINB}

template <bool TA, bool TB, class G, int MINB>
__global__ void __launch_bounds__(G::THREADS, MINB)
    tmaVariant(int M, int N, int K, double alpha, const __grid_constant__ gemm::TensorMap a,
               const __grid_constant__ gemm::TensorMap b, double beta, double* __restrict__ C, int ldc, long long sC,
               int kSlice, double* __restrict__ work) {
    dmma::matmul_tma<TA, TB, G>(M, N, K, alpha, a, b, beta, C, ldc, sC, kSlice, work);
}

// TVARIANT(name, blocks an SM, dmma::TmaShape's arguments): TMA-fed
// tilings other than the shipped one.
#define TVARIANT(NAME, MINB, ...)                                                                          \
    {NAME, {nullptr, nullptr, nullptr, nullptr}, dmma::TmaShape<__VA_ARGS__>::BM, dmma::TmaShape<__VA_ARGS__>::BN, \
     dmma::TmaShape<__VA_ARGS__>::THREADS, dmma::TmaShape<__VA_ARGS__>::SHARED_BYTES, MINB,                     \
     dmma::TmaShape<__VA_ARGS__>::BM, dmma::TmaShape<__VA_ARGS__>::SHARED_BYTES, MINB,                          \
     {tmaVariant<false, false, dmma::TmaShape<__VA_ARGS__>, MINB>, tmaVariant<false, true, dmma::TmaShape<__VA_ARGS__>, MINB>, \
      tmaVariant<true, false, dmma::TmaShape<__VA_ARGS__>, MINB>, tmaVariant<true, true, dmma::TmaShape<__VA_ARGS__>, MINB>}}

static Variant shipped = {"shipped 64x64 (tn 128x64) 3st k16",
                          {matmul_dmma_nn_f64, matmul_dmma_nt_f64, matmul_dmma_tn_f64, matmul_dmma_tt_f64},
                          64, 64, 128, DMMA_SHARED_BYTES, DMMA_BLOCKS_PER_SM,
                          DMMA_TN_TILE_M, DMMA_TN_SHARED_BYTES, DMMA_TN_BLOCKS_PER_SM};
// KS = 2: two panels of 8 along K a buffer, multiplied as m16n8k16.
// 128x64 with 2x2 warps of 64x32, two blocks an SM, is the shape of
// cuBLAS's DGEMM kernel on the H100 (ncu, docs/PERFORMANCE.md).
static Variant variants[] = {
    VARIANT("128x64 2x2w 3st k16 2b", 2, 128, 64, 2, 2, 3, 2),
    VARIANT("64x128 2x2w 3st k16 2b", 2, 64, 128, 2, 2, 3, 2),
    VARIANT("64x64 2x2w 2st k16", 3, 64, 64, 2, 2, 2, 2),
    VARIANT("64x64 2x2w 4st k16", 3, 64, 64, 2, 2, 4, 2),
    VARIANT("64x64 2x2w 4st k8", 3, 64, 64, 2, 2, 4, 1),
    VARIANT("128x128 2x4w 3st k16", 1, 128, 128, 2, 4, 3, 2),
};
// TMA-fed (matmul_dmma_tma.cu's kernels, and TmaShape variants).
// Measured and not taken (docs/PERFORMANCE.md): 3 buffers (0.01
// slower); 128x128 tiles with a producer warpgroup, one block an SM
// (0.91-0.94);
// the consumers' loop unrolled by the ring's 4 buffers (1.5% fewer
// instructions, 0.00-0.01 slower but in nt);
// 128x64, 64x128 and 128x128 tiles with a producer warp and no setmaxnreg
// (the registers of 10 warps an SM: spills, 0.32-0.91); 64x64 with
// m16n8k16 steps, with or without a producer warp (0.69-0.91).
static Variant tmaShipped = {"tma 128x64 pwg (shipped)", {nullptr, nullptr, nullptr, nullptr}, DMMA_TMA_TILE_M, 64,
                             DMMA_TMA_THREADS, DMMA_TMA_SHARED_BYTES, DMMA_TMA_BLOCKS_PER_SM, DMMA_TMA_TILE_M,
                             DMMA_TMA_SHARED_BYTES, DMMA_TMA_BLOCKS_PER_SM,
                             {matmul_dmma_tma_nn_f64, matmul_dmma_tma_nt_f64, matmul_dmma_tma_tn_f64, matmul_dmma_tma_tt_f64}};
static Variant tmaVariants[] = {
    tmaShipped,
    {"tma 64x64 pwarp 3b", {nullptr, nullptr, nullptr, nullptr}, 64, 64, DMMA_TMA64_THREADS,
     DMMA_TMA64_SHARED_BYTES, DMMA_TMA64_BLOCKS_PER_SM, 64, DMMA_TMA64_SHARED_BYTES, DMMA_TMA64_BLOCKS_PER_SM,
     {matmul_dmma_tma_64x64_nn_f64, matmul_dmma_tma_64x64_nt_f64, matmul_dmma_tma_64x64_tn_f64,
      matmul_dmma_tma_64x64_tt_f64}},
    TVARIANT("tma 64x128 pwg 208 2b", 2, 64, 128, 2, 2, 4, 4, 208),
};

static const char* transName[4] = {"nn", "nt", "tn", "tt"};

static void prepare(const Variant& v) {
    for (int t = 0; t < 4; ++t) {
        if (v.fn[t]) CK(cudaFuncSetAttribute(v.fn[t], cudaFuncAttributeMaxDynamicSharedMemorySize, shapeFor(v, t).shared));
        if (v.tfn[t]) CK(cudaFuncSetAttribute(v.tfn[t], cudaFuncAttributeMaxDynamicSharedMemorySize, v.shared));
    }
}

// tmaMap describes an operand for dmma::matmul_tma: alongK, rows x K with row
// stride ld (boxes of 16 x boxRows); otherwise K x rows (boxes of 16 x 16).
static gemm::TensorMap tmaMap(const double* p, bool alongK, int rows, int K, int ld, long long stride, int batch,
                              int boxRows) {
    CUtensorMap m;
    cuuint64_t dim[3] = {(cuuint64_t)(alongK ? K : rows), (cuuint64_t)(alongK ? rows : K), (cuuint64_t)batch};
    cuuint64_t gstride[2] = {(cuuint64_t)ld * 8, (cuuint64_t)stride * 8};
    cuuint32_t box[3] = {16, (cuuint32_t)(alongK ? boxRows : 16), 1};
    cuuint32_t estride[3] = {1, 1, 1};
    CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3, const_cast<double*>(p), dim, gstride,
                                        box, estride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled: error %d (rows %d K %d ld %d batch %d)\n", (int)r, rows, K, ld, batch);
        exit(2);
    }
    gemm::TensorMap out;
    memcpy(&out, &m, sizeof out);
    return out;
}
static long long tmaLaunches = 0; // products that took a TMA-fed kernel

// The split gpu.GemmOn chooses for this technique (as many slices as fit
// in one wave of v.perSM blocks an SM).
static int splitFor(int M, int N, int K, int batch, const Variant& v) {
    static int sms = 0;
    if (!sms) CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    long long tiles = (long long)((M + v.bm - 1) / v.bm) * ((N + v.bn - 1) / v.bn) * batch;
    if (tiles >= sms || K < 512) return 1;
    long long want = ((long long)sms * v.perSM) / tiles;
    return (int)std::max(1LL, std::min({want, (long long)K / 256, 16LL}));
}

static void launch(const Variant& vt, int t, int M, int N, int K, double alpha, const double* A, int lda, long long sA,
                   const double* B, int ldb, long long sB, double beta, double* C, int ldc, long long sC, int batch,
                   int S = 0) {
    if (M == 0 || N == 0 || batch == 0) return;
    if (vt.tfn[t]) {
        const bool ta = t >= 2, tb = t & 1;
        auto ok = [&](const double* X, int ld, long long stride) {
            return reinterpret_cast<uintptr_t>(X) % 16 == 0 && ld % 2 == 0 && (batch == 1 || (stride > 0 && stride % 2 == 0));
        };
        if (!ok(A, lda, sA) || !ok(B, ldb, sB)) {
            launch(shipped, t, M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch, S);
            return;
        }
        const Variant& v = vt;
        const int blocks = ((M + v.bm - 1) / v.bm) * ((N + v.bn - 1) / v.bn);
        if (S == 0) S = splitFor(M, N, K, batch, v);
        int kSlice = std::max(K, 1);
        if (S > 1 && K > 0) {
            kSlice = ((K + S - 1) / S + 15) / 16 * 16;
            S = (K + kSlice - 1) / kSlice;
        }
        S = std::max(S, 1);
        const int Km = std::max(K, 1);
        const gemm::TensorMap mA = tmaMap(A, !ta, M, Km, lda, batch > 1 ? sA : (long long)(ta ? Km : M) * lda, batch, v.bm);
        const gemm::TensorMap mB = tmaMap(B, tb, N, Km, ldb, batch > 1 ? sB : (long long)(tb ? N : Km) * ldb, batch, v.bn);
        static double* work = nullptr;
        static size_t have = 0;
        size_t need = S > 1 ? (size_t)S * M * N * batch * sizeof(double) : 0;
        if (need > have) {
            if (work) CK(cudaFree(work));
            CK(cudaMalloc(&work, need));
            have = need;
        }
        v.tfn[t]<<<dim3(blocks, S, batch), v.threads, v.shared>>>(M, N, K, alpha, mA, mB, beta, C, ldc, sC, kSlice,
                                                                    work);
        if (S > 1)
            matmul_reg128_reduce_f64<<<dim3(std::min<long long>(((long long)M * N + 255) / 256, 1024), batch), 256>>>(
                M, N, S, work, beta, C, ldc, sC);
        tmaLaunches++;
        return;
    }
    const Variant v = shapeFor(vt, t);
    const int blocks = ((M + v.bm - 1) / v.bm) * ((N + v.bn - 1) / v.bn);
    if (S == 0) S = splitFor(M, N, K, batch, v);
    int kSlice = std::max(K, 1);
    if (S > 1 && K > 0) {
        kSlice = ((K + S - 1) / S + 7) / 8 * 8;
        S = (K + kSlice - 1) / kSlice;
    }
    if (S <= 1) {
        v.fn[t]<<<dim3(blocks, 1, batch), v.threads, v.shared>>>(M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc,
                                                                   sC, kSlice, nullptr);
        return;
    }
    static double* work = nullptr;
    static size_t have = 0;
    size_t need = (size_t)S * M * N * batch * sizeof(double);
    if (need > have) {
        if (work) CK(cudaFree(work));
        CK(cudaMalloc(&work, need));
        have = need;
    }
    v.fn[t]<<<dim3(blocks, S, batch), v.threads, v.shared>>>(M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC,
                                                               kSlice, work);
    matmul_reg128_reduce_f64<<<dim3(std::min<long long>(((long long)M * N + 255) / 256, 1024), batch), 256>>>(
        M, N, S, work, beta, C, ldc, sC);
}

static int failures = 0;
// tmaAligned: checkOne makes leading dimensions and batch strides even,
// so that the TMA-fed kernels take the product rather than falling back.
static bool tmaAligned = false;

// checkOne runs one product (a batch of 2 when batched) and compares every
// element of C's storage: written ones with the reference, within float64's
// error bound for a sum of K products, and the others with their poison.
static void checkOne(const Variant& v, std::mt19937_64& r, int t, int M, int N, int K, int pad, int misalign,
                     bool batched, double alpha, double beta, int S = 1) {
    const bool ta = t >= 2, tb = t & 1;
    const int rowsA = ta ? K : M, colsA = ta ? M : K;
    const int rowsB = tb ? N : K, colsB = tb ? K : N;
    const int ev = tmaAligned ? 1 : 0;
    const int lda = (colsA + pad + ev) / (1 + ev) * (1 + ev), ldb = (colsB + pad + ev) / (1 + ev) * (1 + ev), ldc = N + pad;
    const int batch = batched ? 2 : 1;
    const long long sA = (long long)rowsA * lda + 3 + ev, sB = (long long)rowsB * ldb + 5 + ev, sC = (long long)M * ldc + 7;
    const size_t nA = misalign + sA * batch + 1, nB = misalign + sB * batch + 1, nC = misalign + sC * batch + 1;
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> A(nA), B(nB), C(nC);
    for (auto& x : A) x = u(r);
    for (auto& x : B) x = u(r);
    for (auto& x : C) x = beta != 0 ? u(r) : NAN;
    std::vector<double> C0 = C;
    double *dA, *dB, *dC;
    CK(cudaMalloc(&dA, nA * 8));
    CK(cudaMalloc(&dB, nB * 8));
    CK(cudaMalloc(&dC, nC * 8));
    CK(cudaMemcpy(dA, A.data(), nA * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), nB * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, C.data(), nC * 8, cudaMemcpyHostToDevice));
    launch(v, t, M, N, K, alpha, dA + misalign, lda, sA, dB + misalign, ldb, sB, beta, dC + misalign, ldc, sC, batch, S);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C.data(), dC, nC * 8, cudaMemcpyDeviceToHost));
    int bad = 0;
    std::vector<char> written(nC, 0);
    for (int b = 0; b < batch; ++b) {
        const size_t oA = misalign + b * sA, oB = misalign + b * sB, oC = misalign + b * sC;
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double s = 0, mag = 0;
                for (int k = 0; k < K; ++k) {
                    double a = ta ? A[oA + (size_t)k * lda + i] : A[oA + (size_t)i * lda + k];
                    double bb = tb ? B[oB + (size_t)j * ldb + k] : B[oB + (size_t)k * ldb + j];
                    s += a * bb;
                    mag += std::fabs(a * bb);
                }
                const size_t at = oC + (size_t)i * ldc + j;
                double want = alpha * s + (beta != 0 ? beta * C0[at] : 0);
                double tol = 4 * (K + 2) * 1.2e-16 * (std::fabs(alpha) * mag + (beta != 0 ? std::fabs(beta * C0[at]) : 0)) + 1e-300;
                written[at] = 1;
                if (!(std::fabs(C[at] - want) <= tol)) {
                    if (bad++ < 3)
                        printf("  %s %dx%dx%d b%d C[%d][%d] = %.17g, want %.17g (tol %.3g)\n", transName[t], M, N, K, b,
                               i, j, C[at], want, tol);
                }
            }
    }
    for (size_t i = 0; i < nC; ++i)
        if (!written[i] && !(std::isnan(C[i]) && std::isnan(C0[i])) && C[i] != C0[i]) {
            if (bad++ < 3) printf("  %s %dx%dx%d: element %zu outside C was written\n", transName[t], M, N, K, i);
        }
    if (bad) {
        failures++;
        printf("FAIL %s %s %dx%dx%d pad %d misalign %d batch %d alpha %g beta %g split %d: %d wrong\n", v.name,
               transName[t], M, N, K, pad, misalign, batch, alpha, beta, S, bad);
    }
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dC));
}

static void checkAll(const Variant& v, std::mt19937_64& r) {
    const int shapes[][3] = {{1, 1, 1},     {1, 1, 9},      {7, 5, 3},      {16, 8, 8},     {128, 128, 8},
                             {129, 127, 9}, {131, 257, 33}, {37, 300, 100}, {300, 37, 101}, {64, 64, 0},
                             {255, 129, 520}};
    for (int t = 0; t < 4; ++t) {
        for (auto& s : shapes) {
            checkOne(v, r, t, s[0], s[1], s[2], 0, 0, false, 1, 0);
            checkOne(v, r, t, s[0], s[1], s[2], 3, 1, false, -1.5, 0.5); // odd ld, off 16 bytes
            checkOne(v, r, t, s[0], s[1], s[2], 2, 0, true, 0.75, -2);   // even ld, batch
        }
        checkOne(v, r, t, 100, 90, 80, 1, 0, false, 0, 2); // alpha 0: C = beta*C
        checkOne(v, r, t, 70, 60, 1000, 0, 0, false, 1, 1, 3);
        checkOne(v, r, t, 70, 60, 1000, 1, 1, true, 2, 0, 4);
    }
}



// benchOne times v's transpose t against cuBLAS; with relayoutA or
// relayoutB the operand is first copied transposed (transpose.cu, inside
// the timed span) and the kernel of the other layout runs, as gpu.GemmOn's
// relayout does.
static void benchOne(cublasHandle_t h, const Variant& v, int t, int M, int N, int K, int reps, int S = 0,
                     bool relayoutA = false, bool relayoutB = false) {
    const bool ta = t >= 2, tb = t & 1;
    const int lda = ta ? M : K, ldb = tb ? K : N, ldc = N;
    double *A, *B, *C, *Cb;
    size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;
    const int rA = ta ? K : M, cA = ta ? M : K, rB = tb ? N : K, cB = tb ? K : N;
    const int ldAt = (rA + 3) / 4 * 4, ldBt = (rB + 3) / 4 * 4;
    double *At = nullptr, *Bt = nullptr;
    if (relayoutA) CK(cudaMalloc(&At, (size_t)cA * ldAt * 8));
    if (relayoutB) CK(cudaMalloc(&Bt, (size_t)cB * ldBt * 8));
    const int t2 = ((ta != relayoutA) ? 2 : 0) | ((tb != relayoutB) ? 1 : 0);
    CK(cudaMalloc(&A, nA * 8));
    CK(cudaMalloc(&B, nB * 8));
    CK(cudaMalloc(&C, nC * 8));
    CK(cudaMalloc(&Cb, nC * 8));
    fillRandom<<<1024, 256>>>(A, nA, 1);
    fillRandom<<<1024, 256>>>(B, nB, 2);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> tOurs, tBlas;
    const double one = 1, zero = 0;
    for (int i = 0; i <= reps; ++i) {
        for (int which = 0; which < 2; ++which) {
            spinKernel<<<1, 1>>>(200000);
            CK(cudaEventRecord(e0));
            if (which == 0 && (relayoutA || relayoutB)) {
                const dim3 tb32(32, 8);
                if (relayoutA)
                    transpose_f64<<<dim3((cA + 31) / 32, std::min((rA + 31) / 32, 65535)), tb32>>>(rA, cA, A, lda, 0, At, ldAt, 0);
                if (relayoutB)
                    transpose_f64<<<dim3((cB + 31) / 32, std::min((rB + 31) / 32, 65535)), tb32>>>(rB, cB, B, ldb, 0, Bt, ldBt, 0);
                launch(v, t2, M, N, K, one, relayoutA ? At : A, relayoutA ? ldAt : lda, 0, relayoutB ? Bt : B,
                       relayoutB ? ldBt : ldb, 0, zero, C, ldc, 0, 1, S);
            } else if (which == 0)
                launch(v, t, M, N, K, one, A, lda, 0, B, ldb, 0, zero, C, ldc, 0, 1, S);
            else // row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
                CB(cublasDgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, B, ldb,
                               A, lda, &zero, Cb, ldc));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (i > 0) (which == 0 ? tOurs : tBlas).push_back(ms);
        }
    }
    std::vector<double> hc(nC), hb(nC);
    CK(cudaMemcpy(hc.data(), C, nC * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), Cb, nC * 8, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < nC; ++i) {
        double d = hc[i] - hb[i];
        num += d * d;
        den += hb[i] * hb[i];
    }
    double rel = std::sqrt(num / std::max(den, 1e-300));
    std::sort(tOurs.begin(), tOurs.end());
    std::sort(tBlas.begin(), tBlas.end());
    float mo = tOurs[tOurs.size() / 2], mb = tBlas[tBlas.size() / 2];
    double flops = 2.0 * M * N * K;
    printf("%-26s %s %5d x %5d x %5d  dmma %8.3f ms %5.1f TFLOP/s  cuBLAS %8.3f ms %5.1f TFLOP/s  cuBLAS/ours %.3f  relerr %.1e%s\n",
           relayoutA ? (relayoutB ? "relayout A+B" : "relayout A") : relayoutB ? "relayout B" : v.name, transName[t], M, N, K, mo, flops / mo / 1e9, mb, flops / mb / 1e9, mb / mo, rel,
           rel > 1e-13 ? "  FAIL" : "");
    if (rel > 1e-13) failures++;
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(Cb));
    if (At) CK(cudaFree(At));
    if (Bt) CK(cudaFree(Bt));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IONBF, 0);
    std::string mode = argc > 1 ? argv[1] : "check";
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    prepare(shipped);
    for (auto& v : variants) prepare(v);
    for (auto& v : tmaVariants) prepare(v);
    std::mt19937_64 r(12345);
    if (mode == "check") {
        checkAll(shipped, r);
    } else if (mode == "checkvariants") {
        for (auto& v : variants) checkAll(v, r);
    } else if (mode == "checktma") {
        for (auto& v : tmaVariants) {
            for (int al = 0; al < 2; ++al) {
                tmaAligned = al == 1;
                const long long before = tmaLaunches;
                checkAll(v, r);
                printf("%s aligned %d: %lld products on TMA, failures so far %d\n", v.name, al, tmaLaunches - before, failures);
            }
        }
    } else if (mode == "bench" || mode == "variants" || mode == "split" || mode == "profile" || mode == "relayout" ||
               mode == "tma" || mode == "tmasmall") {
        cublasHandle_t h;
        CB(cublasCreate(&h));
        CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        if (mode == "profile") {
            // profile N: one product of the shipped kernel and one of cuBLAS
            // at N^3, nn, for a profiler (ncu --kernel-name ...).
            // profile N V [T]: variant V (0-based; 100 + i the TMA-fed i)
            // instead of the shipped kernel, transpose T.
            const int n = argc > 2 ? reps : 4096;
            const int vi = argc > 3 ? atoi(argv[3]) : -1; // 100 + i: TMA-fed variant i
            benchOne(h, vi < 0 ? shipped : vi >= 100 ? tmaVariants[vi - 100] : variants[vi], argc > 4 ? atoi(argv[4]) : 0, n, n, n, 1);
        } else if (mode == "bench") {
            for (int n : {1024, 2048, 4096, 8192}) benchOne(h, shipped, 0, n, n, n, reps);
            for (int t = 1; t < 4; ++t) benchOne(h, shipped, t, 4096, 4096, 4096, reps);
            benchOne(h, shipped, 0, 64, 8192, 8192, reps);
            benchOne(h, shipped, 0, 8192, 8192, 64, reps);
        } else if (mode == "tma") {
            // tma REPS [T...]: the TMA-fed variants against the shipped
            // kernel, transposes T (default all), 2048 / 4096 / 8192.
            std::vector<int> ts;
            for (int i = 3; i < argc; ++i) ts.push_back(atoi(argv[i]));
            if (ts.empty()) ts = {0, 1, 2, 3};
            for (int t : ts)
                for (int n : {2048, 4096, 8192}) {
                    benchOne(h, shipped, t, n, n, n, reps);
                    for (auto& v : tmaVariants) benchOne(h, v, t, n, n, n, reps);
                }
        } else if (mode == "tmasmall") {
            // tmasmall REPS: the cp.async and TMA-fed kernels where the
            // tiling matters: 1024 and the skinny shapes, every transpose.
            const int shapes[4][3] = {{1024, 1024, 1024}, {64, 8192, 8192}, {8192, 64, 8192}, {8192, 8192, 64}};
            for (int t = 0; t < 4; ++t)
                for (auto& sh : shapes) {
                    benchOne(h, shipped, t, sh[0], sh[1], sh[2], reps);
                    for (auto& v : tmaVariants) benchOne(h, v, t, sh[0], sh[1], sh[2], reps);
                }
        } else if (mode == "relayout") {
            // relayout REPS: nn, tt and nt as shipped against their operands
            // copied transposed first into tn's layout, two rounds.
            for (int round = 0; round < 2; ++round)
                for (int n : {2048, 3072, 4096, 8192}) {
                    benchOne(h, shipped, 2, n, n, n, reps);                    // tn, the target layout
                    benchOne(h, shipped, 0, n, n, n, reps);                    // nn
                    benchOne(h, shipped, 0, n, n, n, reps, 0, true, false);   // nn -> tn
                    benchOne(h, shipped, 3, n, n, n, reps);                    // tt
                    benchOne(h, shipped, 3, n, n, n, reps, 0, false, true);   // tt -> tn
                    benchOne(h, shipped, 1, n, n, n, reps);                    // nt
                    benchOne(h, shipped, 1, n, n, n, reps, 0, true, true);    // nt -> tn
                }
        } else if (mode == "split") {
            // split REPS: skinny products split 2 to 5 ways along K.
            for (int S : {2, 3, 4, 5}) {
                printf("S = %d\n", S);
                benchOne(h, shipped, 0, 64, 8192, 8192, reps, S);
                benchOne(h, shipped, 0, 8192, 64, 8192, reps, S);
            }
        } else {
            // variants REPS T: transpose T (0 nn, 1 nt, 2 tn, 3 tt).
            const int t = argc > 3 ? atoi(argv[3]) : 0;
            for (int n : {2048, 4096, 8192}) {
                benchOne(h, shipped, t, n, n, n, reps);
                for (auto& v : variants) benchOne(h, v, t, n, n, n, reps);
            }
        }
    } else {
        fprintf(stderr, "usage: dmma_bench check|checkvariants|bench [reps]|variants [reps]|split [reps]|profile [n]|checktma|tma [reps]|tmasmall [reps]\n");
        return 2;
    }
    printf("%s: %d failures\n", mode.c_str(), failures);
    return failures ? 1 : 0;
}
