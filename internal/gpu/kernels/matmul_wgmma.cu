// matmul_wgmma.cu: C = alpha*op(A)*op(B) + beta*C for float32 matrices on
// Hopper's tensor cores (wgmma and TMA), the operands rounded to TF32,
// BF16 or FP16 and the products summed in float32, for many products at
// once. It is the Hopper path of matmul_mma.cu's contract: a reduced
// precision the caller asked for, never a silent one.
//
// build.sh: sm_90a only (wgmma exists on no other GPU).
//
// A product is two kernels. matmul_wgmma_*_pack_* first writes op(A)
// (M x K) and op(B)^T (N x K) to a workspace, rounded to the precision and
// laid out along K (what wgmma reads for every type: TF32 has no
// transposed form), rows padded to 16 bytes (what TMA needs);
// matmul_wgmma_* then multiplies the two. Packing costs one pass over the
// operands; it makes every transpose one kernel, halves the bytes the
// multiply reads for BF16 and FP16, and rounds TF32 to nearest as
// matmul_mma.cu does (wgmma would otherwise drop the low bits of a
// float32).
//
// Technique (matmul_wgmma_*): a block of 3 warpgroups computes a 128 x 256
// tile of C. Warpgroup 0 is the producer: one thread issues the TMA copies
// (cp.async.bulk.tensor) of each step's 128 x 128-byte panel of A and
// 256 x 128-byte panel of B, in the 128-byte swizzle, into a ring of
// STAGES buffers, each guarded by two mbarriers: "full" (the copies' bytes
// have landed) and "empty" (the consumers are done with it). Warpgroups 1
// and 2 are the consumers: each multiplies its 64 rows of A by the whole
// panel of B with wgmma m64n256 (4 a step, descriptors advanced 32 bytes
// along K inside the swizzled rows), keeps one step's wgmmas in flight
// while it waits for the next, and holds its 64 x 256 accumulators (128
// float32 a thread) in registers to the end, where it applies alpha and
// beta and writes C. Blocks run in groups of 8 block rows (Triton's
// grouped order) so that consecutive blocks share panels in L2. TMA
// zero-fills what lies past M, N and K, so edge tiles need no code.
// Shape:     block = 384 threads; grid = (ceil(M/128)*ceil(N/256), S,
//            batch) for S slices of K; dynamic shared memory WGMMA_SHARED_BYTES (the caller
//            raises the kernel's limit).
// Follows:   the PTX ISA's wgmma, mbarrier and cp.async.bulk.tensor
//            sections (the matrix-descriptor format and the 128-byte
//            swizzled K-major layout), and the structure public Hopper
//            GEMMs describe (producer and consumer warpgroups over an
//            mbarrier ring); written here from those descriptions.
// Fraction of cuBLAS: see docs/PERFORMANCE.md ("Tensor cores on Hopper").
//
// Accuracy: as matmul_mma.cu's. Each element of op(A) and op(B) is
// rounded once to the precision (TF32 to nearest, ties away; BF16 and
// FP16 to nearest even; FP16 overflows from 65520), products are exact
// and the sums are the tensor core's float32 sums, which may truncate.
//
// Contract:
//   matmul_wgmma_{tf32,bf16,fp16}_pack_{n,t}_f32(int rows, int K, const float* src,
//       int ld, long long stride, void* dst, int ldd, long long strideD)
//     writes the rows x K matrix X rounded, row r at dst + r*ldd (ldd
//     elements of the packed type: 4 bytes for TF32, 2 for the others),
//     batch b (blockIdx.z) at src + b*stride and dst + b*strideD. _n reads
//     X[r][k] at src[r*ld + k] (op(A) of nn/nt, op(B)^T of nt/tt); _t reads
//     it at src[k*ld + r] (op(A) of tn/tt, op(B)^T of nn/tn). Block 32 x 8
//     threads, grid (ceil(K/32), up to ceil(rows/32), batch).
//   matmul_wgmma_{tf32,bf16,fp16}_f32(int M, int N, int K, float alpha,
//       TensorMap a, TensorMap b, float beta, float* C, int ldc,
//       long long strideC, int kSlice, float* work)
//     a and b are TMA descriptors (cuTensorMapEncodeTiled, passed by
//     value) of the packed op(A) and op(B)^T: 3-D {K, rows, batch}, the
//     packed type (FLOAT32 for TF32), box {128 bytes of K, 128 rows for a,
//     256 for b, 1}, 128-byte swizzle, out-of-bounds elements 0. C is M x
//     N row-major, stride ldc, batch b (blockIdx.z) at C + b*strideC. beta
//     == 0 never reads C; with alpha == 0 the caller may skip the packing
//     (the kernel then reads nothing but C). Split K as matmul_mma's, with
//     kSlice a multiple of 64 (a step of the 16-bit kernels, two of
//     TF32's), so that no step reads past its slice but at K's end, where
//     TMA reads zeros.

#include "gemm_common.cuh"

#include <type_traits>

namespace wg {

// TensorMap is CUDA's CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};

enum Precision { TF32, BF16, FP16 };

constexpr int BM = 128, BN = 256; // a block's tile of C
constexpr int STAGES = 4;         // buffers in the ring
constexpr int THREADS = 384;      // producer + 2 consumer warpgroups
constexpr int GROUP = 8;          // block rows a group of the grouped order
constexpr int ROW = 128;          // bytes of K a step: the 128-byte swizzle's span
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;
// The ring, 1024 bytes for aligning it to the swizzle's 1024-byte pattern,
// and the 2*STAGES mbarriers.
constexpr int SHARED_BYTES = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;

__device__ __forceinline__ void bar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
// bar_expect arrives on bar and tells it bytes more are coming from TMA.
__device__ __forceinline__ void bar_expect(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// bar_wait waits until the phase of bar with this parity has completed.
__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// tma_load copies the box at (c0, c1, c2) of map into shared memory at dst
// and counts its bytes on bar.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap* map, int c0, int c1, int c2, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

// desc is the wgmma matrix descriptor of a K-major operand in the 128-byte
// swizzle starting at shared address addr: rows of 128 bytes, groups of 8
// rows 1024 bytes apart (the stride offset), the leading offset unused by
// this layout (1), swizzle mode 1 (128 bytes) in bits 62-63.
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// settle keeps the compiler from touching the accumulators across a
// wgmma.wait_group: to it they are read and written here.
__device__ __forceinline__ void settle(float (&d)[32][4]) {
#pragma unroll
    for (int j = 0; j < 32; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[j][e])::"memory");
}

// WGMMA_M64N256 defines NAME(d, a, b): one wgmma of a warpgroup, 64 x 256
// of C (d, in the accumulator layout: element e of d[j] at row 16*warp +
// lane/4 + 8*(e/2), column 8*j + 2*(lane%4) + e%2) plus the product of
// the 64 x K' and 256 x K' operands the descriptors a and b point at
// (K' = 16 for 16-bit types, 8 for TF32). TAIL is the instruction's
// scale and transpose operands. The 128 accumulators are written out.
#define WGMMA_M64N256(NAME, INSTR, TAIL)                                                    \
__device__ __forceinline__ void NAME(float (&d)[32][4], unsigned long long a, unsigned long long b) { \
    asm volatile(                                                                          \
    "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n" INSTR " {"                              \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"                \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"                \
    "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"                \
    "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"                \
    "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"                \
    "}, %128, %129, p" TAIL ";\n}\n"                                                  \
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),  \
          "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),  \
          "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),  \
          "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),  \
          "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),  \
          "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),  \
          "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),  \
          "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]),  \
          "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]), "+f"(d[17][0]), "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]),  \
          "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]),  \
          "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]), "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]),  \
          "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]), "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3]),  \
          "+f"(d[24][0]), "+f"(d[24][1]), "+f"(d[24][2]), "+f"(d[24][3]), "+f"(d[25][0]), "+f"(d[25][1]), "+f"(d[25][2]), "+f"(d[25][3]),  \
          "+f"(d[26][0]), "+f"(d[26][1]), "+f"(d[26][2]), "+f"(d[26][3]), "+f"(d[27][0]), "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]),  \
          "+f"(d[28][0]), "+f"(d[28][1]), "+f"(d[28][2]), "+f"(d[28][3]), "+f"(d[29][0]), "+f"(d[29][1]), "+f"(d[29][2]), "+f"(d[29][3]),  \
          "+f"(d[30][0]), "+f"(d[30][1]), "+f"(d[30][2]), "+f"(d[30][3]), "+f"(d[31][0]), "+f"(d[31][1]), "+f"(d[31][2]), "+f"(d[31][3])  \
        : "l"(a), "l"(b), "r"(1));                                                          \
}

WGMMA_M64N256(mma_tf32, "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", ", 1, 1")
WGMMA_M64N256(mma_bf16, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0")
WGMMA_M64N256(mma_fp16, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", ", 1, 1, 0, 0")

template <Precision P>
__device__ __forceinline__ void mma(float (&d)[32][4], unsigned long long a, unsigned long long b) {
    if (P == TF32) mma_tf32(d, a, b);
    else if (P == BF16) mma_bf16(d, a, b);
    else mma_fp16(d, a, b);
}

template <Precision P>
__device__ __forceinline__ void matmul(int M, int N, int K, float alpha, const TensorMap& tmA, const TensorMap& tmB,
                                       float beta, float* __restrict__ C, int ldc, long long strideC, int kSlice,
                                       float* __restrict__ work) {
    constexpr int ELEM = P == TF32 ? 4 : 2;
    constexpr int BK = ROW / ELEM; // K a step
    extern __shared__ unsigned char shared[];
    const unsigned base = (gemm::smem_addr(shared) + 1023) & ~1023u;
    const unsigned full = base + STAGES * STAGE_BYTES, empty = full + STAGES * 8;

    const int tid = threadIdx.x, wgIdx = tid / 128;
    const int batch = blockIdx.z;
    int tileM, tileN;
    gemm::grouped_tile<GROUP>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tileM, tileN);
    const int m0 = tileM * BM, n0 = tileN * BN;
    const int kBegin = blockIdx.y * kSlice;
    const int kEnd = kBegin + min(K - kBegin, kSlice); // kBegin + kSlice may pass 2^31
    const int steps = alpha != 0.0f && kBegin < kEnd ? (kEnd - kBegin + BK - 1) / BK : 0;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(full + 8 * s, 1);
            bar_init(empty + 8 * s, 8); // one arrival a consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wgIdx == 0) {
        if (tid == 0) {
            for (int s = 0; s < steps; ++s) {
                const int slot = s % STAGES;
                // The buffer's previous use must be over; a new barrier's
                // "previous phase" (parity 1) counts as over.
                bar_wait(empty + 8 * slot, ((s / STAGES) & 1) ^ 1);
                const unsigned a = base + slot * STAGE_BYTES, bar = full + 8 * slot;
                bar_expect(bar, STAGE_BYTES);
                tma_load(a, &tmA, kBegin + s * BK, m0, batch, bar);
                tma_load(a + A_BYTES, &tmB, kBegin + s * BK, n0, batch, bar);
            }
        }
        return;
    }

    const int cons = wgIdx - 1; // this consumer's 64 rows of the tile
    const int lane = tid % 32, warp = (tid / 32) % 4;
    float acc[32][4];
#pragma unroll
    for (int j = 0; j < 32; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;

    for (int s = 0; s < steps; ++s) {
        const int slot = s % STAGES;
        bar_wait(full + 8 * slot, (s / STAGES) & 1);
        const unsigned a = base + slot * STAGE_BYTES + cons * 64 * ROW, b = base + slot * STAGE_BYTES + A_BYTES;
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) mma<P>(acc, desc(a + 32 * kk), desc(b + 32 * kk));
        wg_commit();
        // The step before this one is done with its buffer.
        wg_wait<1>();
        if (s > 0 && lane == 0) bar_arrive(empty + 8 * ((s - 1) % STAGES));
    }
    wg_wait<0>();
    settle(acc);

    float(&frag)[1][32][4] = *reinterpret_cast<float(*)[1][32][4]>(&acc);
    const int rowBase = m0 + cons * 64 + warp * 16 + lane / 4, colBase = n0 + 2 * (lane % 4);
    gemm::store_fragments<float, 1, 32>(frag, rowBase, colBase, M, N, alpha, beta, C + batch * strideC, ldc, work,
                                        batch);
}

// round_to returns x rounded to the precision, as the packed type's bits.
template <Precision P> __device__ __forceinline__ unsigned round_to(float x);
template <> __device__ __forceinline__ unsigned round_to<TF32>(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}
template <> __device__ __forceinline__ unsigned round_to<BF16>(float x) {
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
    return r;
}
template <> __device__ __forceinline__ unsigned round_to<FP16>(float x) {
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
    return r;
}

template <Precision P, bool T>
__device__ __forceinline__ void pack(int rows, int K, const float* __restrict__ src, int ld, long long stride,
                                     void* __restrict__ dst, int ldd, long long strideD) {
    typedef typename std::conditional<P == TF32, unsigned, unsigned short>::type Out;
    __shared__ float tile[32][33]; // [row][k]
    src += blockIdx.z * stride;
    Out* out = static_cast<Out*>(dst) + blockIdx.z * strideD;
    const int k0 = blockIdx.x * 32, tx = threadIdx.x, ty = threadIdx.y;
    // Rows in steps of the grid's height: its y stops at 65535 blocks.
    for (int r0 = blockIdx.y * 32; r0 < rows; r0 += gridDim.y * 32) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int y = ty + 8 * i;
            if (!T) { // rows along y, K along x: reads run along k
                if (r0 + y < rows && k0 + tx < K) tile[y][tx] = src[(size_t)(r0 + y) * ld + k0 + tx];
            } else { // K along y, rows along x: reads run along the rows
                if (k0 + y < K && r0 + tx < rows) tile[tx][y] = src[(size_t)(k0 + y) * ld + r0 + tx];
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int y = ty + 8 * i;
            if (r0 + y < rows && k0 + tx < K) out[(size_t)(r0 + y) * ldd + k0 + tx] = (Out)round_to<P>(tile[y][tx]);
        }
        __syncthreads(); // the tile is read before the next rows overwrite it
    }
}

} // namespace wg

#define WGMMA_SHARED_BYTES 197696
static_assert(wg::SHARED_BYTES == WGMMA_SHARED_BYTES, "kernels.go's WGMMASharedBytes");

// T is float: the macros name the element type as the other files' do.
#define MATMUL_WGMMA(NAME, T, P)                                                                             \
    extern "C" __global__ void __launch_bounds__(wg::THREADS, 1)                                             \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ wg::TensorMap a,                              \
         const __grid_constant__ wg::TensorMap b, T beta, T* __restrict__ C, int ldc, long long strideC,      \
         int kSlice, T* __restrict__ work) {                                                                 \
        wg::matmul<P>(M, N, K, alpha, a, b, beta, C, ldc, strideC, kSlice, work);                           \
    }
MATMUL_WGMMA(matmul_wgmma_tf32_f32, float, wg::TF32)
MATMUL_WGMMA(matmul_wgmma_bf16_f32, float, wg::BF16)
MATMUL_WGMMA(matmul_wgmma_fp16_f32, float, wg::FP16)

#define WGMMA_PACK(NAME, T, P, TRANS)                                                                      \
    extern "C" __global__ void __launch_bounds__(256)                                                      \
    NAME(int rows, int K, const T* __restrict__ src, int ld, long long stride, void* __restrict__ dst,     \
         int ldd, long long strideD) {                                                                     \
        wg::pack<P, TRANS>(rows, K, src, ld, stride, dst, ldd, strideD);                                   \
    }
WGMMA_PACK(matmul_wgmma_tf32_pack_n_f32, float, wg::TF32, false)
WGMMA_PACK(matmul_wgmma_tf32_pack_t_f32, float, wg::TF32, true)
WGMMA_PACK(matmul_wgmma_bf16_pack_n_f32, float, wg::BF16, false)
WGMMA_PACK(matmul_wgmma_bf16_pack_t_f32, float, wg::BF16, true)
WGMMA_PACK(matmul_wgmma_fp16_pack_n_f32, float, wg::FP16, false)
WGMMA_PACK(matmul_wgmma_fp16_pack_t_f32, float, wg::FP16, true)
