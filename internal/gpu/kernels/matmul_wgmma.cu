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
// matmul_mma.cu does (wgmma drops the low bits of a float32 it reads).
//
// A product of one slice of K and one batch may instead run as one
// kernel, matmul_wgmma_*_fused_*, whose blocks pack the operands
// themselves while they multiply (wg::Fusion): the producer warpgroup's
// other three warps pack pieces of 32 rows by 64 of K in the order the
// blocks need them and count them on flags in global memory, and the TMA
// thread waits on a chunk's flags before it copies the chunk's steps. The
// packing then overlaps the multiply, but shares the SMs and L2 with it:
// on the H100 it wins where one wave of blocks covers the product (TF32
// 2048^3: 0.78 of cuBLAS against 0.65; BF16 1.01 against 0.91) and loses
// past a few waves (BF16 8192^3: 1.36 against 1.52); gpu.gemmWGMMA picks.
//
// In TF32 an operand need not be packed at all when TMA can read it
// where it lies: a TMA descriptor of type TFLOAT32 rounds float32 to TF32
// (to nearest even) as it copies, as cuBLAS's TF32 kernels have it do.
// wgmma reads TF32 from shared memory only along K, and takes its first
// operand from registers in any layout, so:
//   - nt (both operands along K): matmul_wgmma_tf32_rs_tt_f32 computes
//     C^T = B A^T with B, read where it lies, in registers and A, read
//     where it lies, in shared memory; nothing is packed (0.97 of cuBLAS
//     at 4096^3; 0.95 with both in shared memory, matmul_wgmma_tf32_f32).
//   - tt and nn: matmul_wgmma_tf32_direct_{tt,nn}_f32 take op(A) (for nn,
//     computed as C^T = B^T A^T, op(B)^T), which lies along M, from
//     registers, loaded from boxes of 32 rows by 32 of K, and the other
//     operand, along K, from shared memory; nothing is packed. On the
//     H100 nn ran at 1.04 / 0.99 / 0.99 of cuBLAS at 2048 / 4096 / 8192
//     this way, tt at 1.01 / 0.97 / 1.01 (docs/PERFORMANCE.md, "TMA
//     rounds TF32").
//   - matmul_wgmma_tf32_rs_* take op(A) along K from registers (nn and
//     nt when the other operand cannot be read where it lies) and pack
//     op(B)^T alone; tt runs as C^T = B A the same way.
// The fragments in flight take registers past the 168 of a 384-thread
// block: the kernels that take A from registers move them from the
// producer warpgroup to the consumers with setmaxnreg (reg_alloc), and
// their packers load half items.
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
// beta and writes C. Tiles run in groups of 8 block rows (Triton's
// grouped order) so that consecutive blocks share panels in L2. TMA
// zero-fills what lies past M, N and K, so edge tiles need no code.
// The grid may be persistent: with fewer blocks than tiles (one an SM)
// block x multiplies tiles x, x + gridDim.x, ... of the grouped order,
// its ring running on from one tile to the next, so that the producer
// copies a tile's first steps while the consumers write the tile before.
// Shape:     block = 384 threads; grid = (X, S, batch) for S slices of K,
//            X up to ceil(M/128)*ceil(N/256) (the tiles; the fused kernels
//            take X = tiles); dynamic shared memory WGMMA_SHARED_BYTES (the
//            caller raises the kernel's limit).
// Follows:   the PTX ISA's wgmma, mbarrier and cp.async.bulk.tensor
//            sections (the matrix-descriptor format and the 128-byte
//            swizzled K-major layout), and the structure public Hopper
//            GEMMs describe (producer and consumer warpgroups over an
//            mbarrier ring); written here from those descriptions.
// Fraction of cuBLAS: see docs/PERFORMANCE.md ("Tensor cores on Hopper").
//
// Accuracy: as matmul_mma.cu's. Each element of op(A) and op(B) is
// rounded once to the precision (to nearest, ties to even: TMA's TFLOAT32
// copies and cvt.rn; FP16 overflows from 65520), products are exact
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
//   matmul_wgmma_{tf32,bf16,fp16}_fused_{nn,nt,tn,tt}_f32(int M, int N, int K,
//       float alpha, TensorMap a, TensorMap b, float beta, float* C, int ldc,
//       const float* srcA, int lda, const float* srcB, int ldb, void* packedA,
//       void* packedB, int ldd, unsigned* sync, int flags, int wave, int packers)
//     the multiply above for one product, K whole, alpha != 0 and K > 0,
//     with op(A) (srcA, M x K, or K x M for tn/tt) and op(B) (srcB, K x N,
//     or N x K for nt/tt) packed by the kernel into packedA and packedB
//     (what a and b describe; ldd as for the packing kernels). sync holds
//     1 + ceil(K/128) * (ceil(M/128) + ceil(N/256)) counters, all 0 at the
//     launch. flags: bit 0 when srcA is 16-byte aligned and lda a multiple
//     of 4, bit 1 the same for srcB and ldb, bit 2 for items of half a
//     chunk of K (64) rather than a whole one (128). wave: the blocks that run at once
//     (the SMs), which orders the packing; packers: warps a block that
//     pack (1 to 3; 3 is fastest). Grid (ceil(M/128)*ceil(N/256), 1, 1).
//   matmul_wgmma_tf32_rs_f32 (the arguments of matmul_wgmma_tf32_f32) and
//   matmul_wgmma_tf32_rs_fused_{nn,nt}_f32 (those of the fused kernels)
//     the same products with a describing op(A) where it lies: TFLOAT32
//     (TMA rounds it; a FLOAT32 descriptor would leave wgmma to truncate
//     it), 3-D {K, M, batch}, box {32, 128, 1}, 128-byte swizzle, which
//     needs A and its row and batch strides on 16 bytes; packedA and bit
//     0 of flags are unused, and sync's counters for op(A) are never
//     counted.
//   matmul_wgmma_tf32_rs_tt_f32 and matmul_wgmma_tf32_rs_fused_tt_f32 the
//     same for C^T = B A (a tt product's transpose: B, N x K, lies along
//     K): M and N are N and M, a describes B where it lies, b (or srcB,
//     ldb) is A, and C^T is written transposed into C.
//   matmul_wgmma_tf32_direct_{tt,nn}_f32 (the arguments of
//     matmul_wgmma_tf32_f32): nothing packed. _tt: a describes A (stored
//     K x M) where it lies, TFLOAT32, 3-D {M, K, batch}, box {32, 32, 1},
//     128-byte swizzle; b describes B (N x K) where it lies, TFLOAT32, as a
//     packed op(B)^T with 4-byte elements is. _nn: the same for C^T = B^T
//     A^T: M and N are N and M, a describes B (stored K x N) as _tt's a,
//     b describes A (M x K), and C^T is written transposed into C. Both
//     need the operands and their row and batch strides on 16 bytes.

#include "gemm_common.cuh"

#include <type_traits>

namespace wg {

// TMA's descriptor and the ring's mbarriers: gemm_common.cuh's.
using gemm::TensorMap;
using gemm::bar_arrive;
using gemm::bar_expect;
using gemm::bar_init;
using gemm::bar_wait;
using gemm::tma_load;

enum Precision { TF32, BF16, FP16 };

constexpr int BM = 128, BN = 256; // a block's tile of C
constexpr int STAGES = 4;         // buffers in the ring
constexpr int THREADS = 384;      // producer + 2 consumer warpgroups
constexpr int GROUP = 8;          // block rows a group of the grouped order
constexpr int ROW = 128;          // bytes of K a step: the 128-byte swizzle's span
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;
// A TF32 op(A) lying along M comes in boxes of 32 of M (128 bytes) by a
// step's 32 of K, swizzled.
constexpr int MN_BOX_ROWS = 32, MN_BOX_BYTES = MN_BOX_ROWS * 32 * 4;
static_assert(BM / MN_BOX_ROWS * MN_BOX_BYTES == A_BYTES, "a step's op(A) along M fills A's buffer");
// The ring, 1024 bytes for aligning it to the swizzle's 1024-byte pattern,
// and the 2*STAGES mbarriers.
constexpr int SHARED_BYTES = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;

// desc is the wgmma matrix descriptor of a K-major operand in the 128-byte
// swizzle starting at shared address addr: rows of 128 bytes, groups of 8
// rows 1024 bytes apart (the stride offset), the leading offset unused by
// this layout (1), swizzle mode 1 (128 bytes) in bits 62-63.
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}

// Registers a thread of a warpgroup may hold after setmaxnreg, for the
// kernels whose consumers take A from registers: 128 * producer + 256 *
// consumer <= 65536, multiples of 8.
constexpr int RA_PRODUCER_REGS = 40, RA_CONSUMER_REGS = 232;
constexpr int RA_PRODUCER_REGS_FUSED = 120, RA_CONSUMER_REGS_FUSED = 192;
template <int R> __device__ __forceinline__ void reg_alloc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R> __device__ __forceinline__ void reg_dealloc() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
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

// mma_tf32_rs is mma_tf32 with op(A) from registers: a holds this
// thread's four TF32 elements of the 64 x 8 panel (warp w of the
// warpgroup rows 16w to 16w+15; lane l row l/4 in a[0] and a[2], l/4 + 8
// in a[1] and a[3], column l%4 in a[0] and a[1], l%4 + 4 in a[2] and
// a[3]), as mma.sync m16n8k8 lays out each warp's 16 rows. The registers
// are read after the instruction issues: the caller keeps them until a
// wgmma.wait_group has seen this wgmma finish.
__device__ __forceinline__ void mma_tf32_rs(float (&d)[32][4], const unsigned (&a)[4], unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]), "+f"(d[17][0]), "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]), "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]), "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]), "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]), "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]), "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3]), "+f"(d[24][0]), "+f"(d[24][1]), "+f"(d[24][2]), "+f"(d[24][3]), "+f"(d[25][0]), "+f"(d[25][1]), "+f"(d[25][2]), "+f"(d[25][3]), "+f"(d[26][0]), "+f"(d[26][1]), "+f"(d[26][2]), "+f"(d[26][3]), "+f"(d[27][0]), "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]), "+f"(d[28][0]), "+f"(d[28][1]), "+f"(d[28][2]), "+f"(d[28][3]), "+f"(d[29][0]), "+f"(d[29][1]), "+f"(d[29][2]), "+f"(d[29][3]), "+f"(d[30][0]), "+f"(d[30][1]), "+f"(d[30][2]), "+f"(d[30][3]), "+f"(d[31][0]), "+f"(d[31][1]), "+f"(d[31][2]), "+f"(d[31][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// keep tells the compiler that a's registers are read here: an A fragment
// in flight in a wgmma must not be given to another value before the
// wgmma is seen done.
__device__ __forceinline__ void keep(unsigned (&a)[4]) {
    asm volatile("" : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3])::"memory");
}
WGMMA_M64N256(mma_bf16, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0")
WGMMA_M64N256(mma_fp16, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", ", 1, 1, 0, 0")

template <Precision P>
__device__ __forceinline__ void mma(float (&d)[32][4], unsigned long long a, unsigned long long b) {
    if (P == TF32) mma_tf32(d, a, b);
    else if (P == BF16) mma_bf16(d, a, b);
    else mma_fp16(d, a, b);
}

// round_to returns x rounded to the precision, as the packed type's bits.
template <Precision P> __device__ __forceinline__ unsigned round_to(float x);
template <> __device__ __forceinline__ unsigned round_to<TF32>(float x) {
    unsigned r;
    asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x)); // ties to even, as TMA's TFLOAT32 copies round
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

template <Precision P> struct Packed { typedef unsigned short type; };
template <> struct Packed<TF32> { typedef unsigned type; };

// store4 writes x[0..3] rounded to the precision at dst (16 bytes for
// TF32, 8 for the others; dst aligned to that).
template <Precision P> __device__ __forceinline__ void store4(typename Packed<P>::type* dst, float4 x) {
    if (P == TF32) {
        *reinterpret_cast<uint4*>(dst) = make_uint4(round_to<P>(x.x), round_to<P>(x.y), round_to<P>(x.z), round_to<P>(x.w));
    } else {
        *reinterpret_cast<uint2*>(dst) =
            make_uint2(round_to<P>(x.x) | round_to<P>(x.y) << 16, round_to<P>(x.z) | round_to<P>(x.w) << 16);
    }
}

// lds_u32 reads the 32 bits at shared address addr.
__device__ __forceinline__ unsigned lds_u32(unsigned addr) {
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ float4 load4(const float* p) {
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
}

// Fusion is what the fused kernels (matmul_wgmma_*_fused_*) need to pack
// the operands themselves: the caller's op(A) and op(B)^T sources, where
// the packed copies go (the memory the TMA descriptors describe), and the
// counters that tell the TMA thread which pieces are packed.
//
// The packing is cut into items: 32 rows of op(A) or of op(B)^T by half a
// chunk (KC/2 elements) of K. Warps 1 to 3 of the producer warpgroup of
// every block take items from a counter (sync[0]) in the order the blocks
// need them: first, chunk by chunk, the rows the first wave of blocks
// multiplies (wave blocks of the grouped order: a prefix of op(A)'s block
// rows and one of op(B)^T's block columns), then, chunk by chunk, the
// others. Each item is counted on its flag, one a chunk and block row of
// op(A), one a chunk and block column of op(B)^T, and before the copies of
// a chunk's steps the TMA thread waits until both of its flags have
// counted every item of its tile. A block's packers stop when its
// consumers are done; items left are taken by the blocks still running or
// by the blocks after them, so no block waits on work that no running
// block will do.
struct Fusion {
    const float* a; // op(A)'s source, transposed (K x M) when TA
    int lda;
    const float* b; // op(B)^T's source: B stored K x N (nn, tn: transposed) or N x K
    int ldb;
    void* pa; // packed op(A): M rows of ldd elements
    void* pb; // packed op(B)^T: N rows
    int ldd;
    unsigned* sync; // [0] items taken; then flags of A [chunks][tilesM], flags of B [chunks][tilesN]
    int flags;      // bit 0: a and lda allow 16-byte loads; bit 1: b and ldb; bit 2: items of half a chunk
    int wave;       // blocks that run at once (one an SM)
    int packers;    // warps of a block that pack (1 to PACKERS)
};

constexpr int KC = 128;       // K a chunk (elements): 4 steps of TF32, 2 of the 16-bit types
constexpr int ITEM_ROWS = 32; // rows an item
constexpr int PACKERS = 3;    // warps 1 to 3 of the producer warpgroup

// Plan is the items' order, the same in every thread: stage 0 holds, for
// each chunk, op(B)^T's rows below b0 and op(A)'s below a0 (what the
// first wave multiplies), stage 1 the rest, both as the items of 32 rows
// (one a chunk, or its two halves), op(B)^T's first. A block keeps one in
// shared memory: the packing warps' registers are full of their items'
// loads.
struct Plan {
    int M, N, chunks, tilesM, tilesN;
    int b0, a0, restB; // 32-row groups a chunk: stage 0's of op(B)^T and op(A), stage 1's of op(B)^T
    int half;          // 1: two items a chunk of 32 rows (K of KC / 2 each); 0: one
    int per0, per1;    // items a chunk in each stage
    unsigned total;
    __device__ void init(int M_, int N_, int K, int wave, bool halves, bool packA) {
        M = M_;
        N = N_;
        half = halves;
        wave = max(wave, 1);
        chunks = (K + KC - 1) / KC;
        tilesM = (M + BM - 1) / BM;
        tilesN = (N + BN - 1) / BN;
        // The tiles the first wave blocks of grouped_tile's order cover: a
        // prefix of block rows and one of block columns.
        const int perGroup = GROUP * tilesN;
        int firstA, firstB;
        if (wave >= perGroup) {
            firstB = tilesN;
            firstA = min(tilesM, wave / perGroup * GROUP + min(wave % perGroup, GROUP));
        } else {
            firstA = min(wave, min(tilesM, GROUP));
            firstB = min(tilesN, (wave + firstA - 1) / firstA);
        }
        // Without packA op(A) is read where it lies: no items of it.
        const int pairsB = (N + ITEM_ROWS - 1) / ITEM_ROWS, pairsA = packA ? (M + ITEM_ROWS - 1) / ITEM_ROWS : 0;
        b0 = min(pairsB, firstB * (BN / ITEM_ROWS));
        a0 = min(pairsA, firstA * (BM / ITEM_ROWS));
        restB = pairsB - b0;
        per0 = (b0 + a0) << half;
        per1 = (restB + pairsA - a0) << half;
        total = (unsigned)chunks * (per0 + per1);
    }
    // item returns item i's operand (B or A), first row and first k.
    __device__ void item(unsigned i, bool& isB, int& row0, int& k0) const {
        const unsigned s0 = (unsigned)chunks * per0;
        int c;
        unsigned t;
        if (i < s0) {
            c = i / per0;
            t = i - (unsigned)c * per0;
            isB = t < (unsigned)b0 << half;
            row0 = (isB ? t >> half : (t >> half) - b0) * ITEM_ROWS;
        } else {
            const unsigned j = i - s0;
            c = j / per1;
            t = j - (unsigned)c * per1;
            isB = t < (unsigned)restB << half;
            row0 = (isB ? b0 + (t >> half) : a0 + (t >> half) - restB) * ITEM_ROWS;
        }
        k0 = c * KC + (t & half) * (KC / 2);
    }
    __device__ unsigned* flagA(unsigned* sync, int c, int tm) const { return sync + 1 + (size_t)c * tilesM + tm; }
    __device__ unsigned* flagB(unsigned* sync, int c, int tn) const {
        return sync + 1 + (size_t)chunks * tilesM + (size_t)c * tilesN + tn;
    }
    // The items of a tile's chunk: one or two for every 32 of its rows.
    __device__ unsigned itemsOfA(int tm) const { return (unsigned)(min(BM, M - tm * BM) + ITEM_ROWS - 1) / ITEM_ROWS << half; }
    __device__ unsigned itemsOfB(int tn) const { return (unsigned)(min(BN, N - tn * BN) + ITEM_ROWS - 1) / ITEM_ROWS << half; }
};

// publish counts the item whose rows this warp stored last on its flag
// (when there is one): every lane's stores are made visible at the GPU's
// scope and to the async proxy (the TMA copies that read them) before the
// count.
__device__ __forceinline__ void publish(unsigned*& flag, int lane) {
    if (!flag) return;
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
    __syncwarp();
    if (lane == 0) {
        __threadfence(); // after the barrier: orders every lane's stores before the count
        atomicAdd(flag, 1u);
    }
    flag = nullptr;
}

// pack_item packs one item with a warp: rows [r0, r0+32) of a rows x K
// matrix X by K from k0 to k0 + IK (a chunk or half of one), X[r][k] at
// src[r*ld + k] (src[k*ld + r] when T), rounded, to dst[r*ldd + k], in
// squares of 32 x 32, and publishes the item before (pending) as soon as
// its own loads are out: the fence then waits for the last item's stores
// and this item's loads at once. A source that allows 16-byte loads has
// all its squares loaded together (IK / 4 loads of 16 bytes a lane); a
// transposed square goes through tile, the warp's 32 x 33 floats. Items at
// the edges go element by element.
template <Precision P, bool T, int IK>
__device__ __forceinline__ void pack_item(const float* __restrict__ src, int ld, int rows, int K, int r0, int k0,
                                          typename Packed<P>::type* __restrict__ dst, int ldd, bool vec,
                                          float (*tile)[33], int lane, unsigned*& pending) {
    const int lr = lane / 8, lc = 4 * (lane % 8);
    if (vec && r0 + 32 <= rows && k0 + IK <= K) {
        float4 v[IK / 32][8];
#pragma unroll
        for (int d = 0; d < IK / 32; ++d)
#pragma unroll
            for (int i = 0; i < 8; ++i)
                v[d][i] = T ? load4(src + (size_t)(k0 + 32 * d + lr + 4 * i) * ld + r0 + lc)
                            : load4(src + (size_t)(r0 + lr + 4 * i) * ld + k0 + 32 * d + lc);
        publish(pending, lane);
#pragma unroll
        for (int d = 0; d < IK / 32; ++d) {
            const int k = k0 + 32 * d;
            if constexpr (!T) {
#pragma unroll
                for (int i = 0; i < 8; ++i) store4<P>(dst + (size_t)(r0 + lr + 4 * i) * ldd + k + lc, v[d][i]);
            } else {
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    tile[lc][lr + 4 * i] = v[d][i].x;
                    tile[lc + 1][lr + 4 * i] = v[d][i].y;
                    tile[lc + 2][lr + 4 * i] = v[d][i].z;
                    tile[lc + 3][lr + 4 * i] = v[d][i].w;
                }
                __syncwarp();
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const float* t = tile[lr + 4 * i] + lc;
                    store4<P>(dst + (size_t)(r0 + lr + 4 * i) * ldd + k + lc, make_float4(t[0], t[1], t[2], t[3]));
                }
                __syncwarp(); // the tile is read before the next square overwrites it
            }
        }
        return;
    }
    publish(pending, lane);
#pragma unroll 1
    for (int k = k0; k < min(k0 + IK, K); k += 32) {
        const bool inK = k + lane < K;
        if (!T) {
            for (int y = 0; y < 32 && r0 + y < rows; ++y)
                if (inK) dst[(size_t)(r0 + y) * ldd + k + lane] = round_to<P>(src[(size_t)(r0 + y) * ld + k + lane]);
        } else {
            for (int y = 0; y < 32 && k + y < K; ++y)
                if (r0 + lane < rows) tile[lane][y] = src[(size_t)(k + y) * ld + r0 + lane];
            __syncwarp();
            for (int y = 0; y < 32 && r0 + y < rows; ++y)
                if (inK) dst[(size_t)(r0 + y) * ldd + k + lane] = round_to<P>(tile[y][lane]);
            __syncwarp();
        }
    }
}

// pack_item_of packs an item of half a chunk or a whole one; with SPLIT a
// whole one as its two halves, one after the other (half the registers).
template <Precision P, bool T, bool SPLIT = false>
__device__ __forceinline__ void pack_item_of(bool half, const float* __restrict__ src, int ld, int rows, int K, int r0,
                                             int k0, typename Packed<P>::type* __restrict__ dst, int ldd, bool vec,
                                             float (*tile)[33], int lane, unsigned*& pending) {
    if (half || SPLIT) {
        pack_item<P, T, KC / 2>(src, ld, rows, K, r0, k0, dst, ldd, vec, tile, lane, pending);
        if (!half) pack_item<P, T, KC / 2>(src, ld, rows, K, r0, k0 + KC / 2, dst, ldd, vec, tile, lane, pending);
    } else
        pack_item<P, T, KC>(src, ld, rows, K, r0, k0, dst, ldd, vec, tile, lane, pending);
}

// wait_count waits until *p >= want (an acquire at the GPU's scope).
__device__ __forceinline__ void wait_count(const unsigned* p, unsigned want) {
    for (;;) {
        unsigned v;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
        if (v >= want) return;
        __nanosleep(32);
    }
}

// store_fragments_t is gemm::store_fragments for a kernel that computes
// C^T (TC): the warp's tiles are of the product the kernel sees (M x N,
// C^T's shape), and each element (r, c) goes to C[c*ldc + r] (to
// work[c*M + r] for a slice of K: C's layout, so that the reduce kernel
// adds the slices as usual). A warp's 8 rows of a column are 32
// contiguous bytes of C; elements go one an access.
template <int NT>
__device__ __forceinline__ void store_fragments_t(const float (&acc)[NT][4], int rowBase, int colBase, int M, int N,
                                                  float alpha, float beta, float* __restrict__ C, int ldc,
                                                  float* __restrict__ work, long long batch) {
    const bool toWork = gridDim.y > 1;
    float* const D = toWork ? work + ((size_t)batch * gridDim.y + blockIdx.y) * (size_t)M * N : C;
    const int ldd = toWork ? M : ldc;
    const float b = toWork ? 0.0f : beta;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int row = rowBase + h * 8;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int col = colBase + j * 8 + e;
                if (col >= N) continue;
                float* p = D + (size_t)col * ldd + row;
                const float v = alpha * acc[j][2 * h + e];
                *p = b != 0.0f ? v + b * *p : v;
            }
    }
}

// RA (TF32 only): tmA describes op(A) where it lies, as TFLOAT32, so
// that TMA rounds it (to nearest even) as it copies it, and the consumers
// read their fragments of it from shared memory into registers (wgmma
// takes A from registers and, in TF32, from shared memory only along K).
// Without MN op(A) lies along K (M x K, rows of K): tmA's boxes are a
// step's 32 of K by BM rows, in the 128-byte swizzle. With MN it lies
// along M (stored K x M, op(A) of tn or tt): tmA describes that K x M
// matrix, boxes of 32 of M (128 bytes) by a step's 32 of K in the
// 128-byte swizzle, BM / 32 of them a step. (Boxes of 8 of M, unswizzled,
// make a warp's fragment loads free of bank conflicts, but TMA copies
// their 32-byte rows slowly: TF32 nn 4096^3 ran at 0.70 of cuBLAS.) TC:
// the product is C^T (M and N are C^T's, its rows C's columns), written
// transposed into C.
template <Precision P, bool FUSED, bool TA, bool TB, bool RA = false, bool TC = false, bool MN = false>
__device__ __forceinline__ void matmul(int M, int N, int K, float alpha, const TensorMap& tmA, const TensorMap& tmB,
                                       float beta, float* __restrict__ C, int ldc, long long strideC, int kSlice,
                                       float* __restrict__ work, const Fusion& fu) {
    constexpr int ELEM = P == TF32 ? 4 : 2;
    constexpr int BK = ROW / ELEM; // K a step
    extern __shared__ unsigned char shared[];
    const unsigned base = (gemm::smem_addr(shared) + 1023) & ~1023u;
    const unsigned full = base + STAGES * STAGE_BYTES, empty = full + STAGES * 8;

    const int tid = threadIdx.x, wgIdx = tid / 128;
    const int batch = blockIdx.z;
    const int tilesM = (M + BM - 1) / BM, tilesN = (N + BN - 1) / BN, tiles = tilesM * tilesN;
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

    __shared__ int consumersDone; // consumer warpgroups past their last step (FUSED)
    __shared__ Plan plan;         // the order of the packing's items (FUSED)
    if (FUSED && tid == 0) {
        consumersDone = 0;
        plan.init(M, N, K, fu.wave, fu.flags & 4, !RA);
    }
    __syncthreads();
    if constexpr (RA) {
        // The consumers' A fragments in flight need registers past the
        // 168 of 384 threads; the producer gives up what it can (its
        // packers, in the fused kernels, load half items at most).
        if (wgIdx == 0)
            reg_dealloc<FUSED ? RA_PRODUCER_REGS_FUSED : RA_PRODUCER_REGS>();
        else
            reg_alloc<FUSED ? RA_CONSUMER_REGS_FUSED : RA_CONSUMER_REGS>();
    }

    if (wgIdx == 0) {
        if constexpr (FUSED) { // the non-fused kernels compile none of the packing
            if (tid >= 32) {
                __shared__ float tiles[PACKERS][32][33];
                const int lane = tid % 32, w = tid / 32 - 1;
                if (w >= max(fu.packers, 1)) return; // one warp at least: blocks wait on the packing
                typedef typename Packed<P>::type Out;
                unsigned next = 0;             // lane 0: the item this warp takes next
                unsigned* pending = nullptr;   // the flag of the item stored last, not yet counted
                if (lane == 0) next = atomicAdd(fu.sync, 1u);
                for (;;) {
                    const unsigned i = __shfl_sync(0xffffffffu, next, 0);
                    if (i >= plan.total) break;
                    // An item taken is always packed: the check comes before
                    // the next is taken, whose answer is needed only after
                    // this one.
                    if (lane == 0)
                        next = *(volatile int*)&consumersDone == 2 ? plan.total : atomicAdd(fu.sync, 1u);
                    bool isB;
                    int row0, k0;
                    plan.item(i, isB, row0, k0);
                    const int c = k0 / KC;
                    if (isB)
                        pack_item_of<P, !TB, RA>(plan.half, fu.b, fu.ldb, N, K, row0, k0, static_cast<Out*>(fu.pb), fu.ldd,
                                             fu.flags & 2, tiles[w], lane, pending);
                    else
                        pack_item_of<P, TA, RA>(plan.half, fu.a, fu.lda, M, K, row0, k0, static_cast<Out*>(fu.pa), fu.ldd,
                                            fu.flags & 1, tiles[w], lane, pending);
                    pending = isB ? plan.flagB(fu.sync, c, row0 / BN) : plan.flagA(fu.sync, c, row0 / BM);
                }
                publish(pending, lane);
                return;
            }
        }
        if (tid == 0) {
            // ring counts the steps of this block's tiles: the ring runs
            // on across them, so the copies of a tile's first steps go out
            // while the consumers still write the tile before.
            int ring = 0;
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int tileM, tileN;
                gemm::grouped_tile<GROUP>(tile, tilesM, tilesN, tileM, tileN);
                const int m0 = tileM * BM, n0 = tileN * BN;
                for (int s = 0; s < steps; ++s, ++ring) {
                    const int slot = ring % STAGES;
                    if (FUSED && s * BK % KC == 0) {
                        const int c = s * BK / KC;
                        if (!RA) wait_count(plan.flagA(fu.sync, c, tileM), plan.itemsOfA(tileM));
                        wait_count(plan.flagB(fu.sync, c, tileN), plan.itemsOfB(tileN));
                        asm volatile("fence.proxy.async.global;\n" ::: "memory");
                    }
                    // The buffer's previous use must be over; a new barrier's
                    // "previous phase" (parity 1) counts as over.
                    bar_wait(empty + 8 * slot, ((ring / STAGES) & 1) ^ 1);
                    const unsigned a = base + slot * STAGE_BYTES, bar = full + 8 * slot;
                    bar_expect(bar, STAGE_BYTES);
                    if constexpr (MN) {
#pragma unroll
                        for (int i = 0; i < BM / MN_BOX_ROWS; ++i)
                            tma_load(a + i * MN_BOX_BYTES, &tmA, m0 + MN_BOX_ROWS * i, kBegin + s * BK, batch, bar);
                    } else {
                        tma_load(a, &tmA, kBegin + s * BK, m0, batch, bar);
                    }
                    tma_load(a + A_BYTES, &tmB, kBegin + s * BK, n0, batch, bar);
                }
            }
        }
        return;
    }

    const int cons = wgIdx - 1; // this consumer's 64 rows of the tile
    const int lane = tid % 32, warp = (tid / 32) % 4;

    // RA: a fragment set a wgmma of 8 along K, four a step; a set is
    // refilled once the wgmma that read it, four wgmmas back, is done.
    // Along K, row r of the step's 128 x 32 panel is 128 bytes at r*128,
    // its 16-byte pieces swizzled by r % 8 (here lane/4: the rows are 8-row
    // aligned), so a warp's 32 loads hit 32 banks. Along M (MN), row m and
    // column k of the panel are in box m/32, its row k of 128 bytes, 16-byte
    // piece ((m%32)/4) ^ (k%8), word m%4: this thread's four elements (rows
    // m and m + 8, columns k and k + 4, k%8 = t or t + 4) at offsets fixed
    // for the kernel, plus 8 rows a wgmma. A warp's loads take two passes
    // (lanes of t and t ^ 1 share pieces).
    static_assert(!RA || (P == TF32 && !TA), "A from registers: TF32 (MN says how op(A) lies)");
    const int fg = lane / 4, ft = lane % 4; // the fragment's row group and column
    const unsigned rowOff = (cons * 64 + warp * 16 + fg) * ROW + 4 * ft;
    unsigned mnOff[4] = {};
    if constexpr (MN) {
        const int m = cons * 64 + warp * 16 + fg, c0 = (m % MN_BOX_ROWS) / 4;
        const unsigned box = m / MN_BOX_ROWS * MN_BOX_BYTES + 4 * (m % 4);
        mnOff[0] = box + ft * ROW + ((c0 ^ ft) << 4);
        mnOff[1] = box + ft * ROW + (((c0 + 2) ^ ft) << 4);
        mnOff[2] = box + (ft + 4) * ROW + ((c0 ^ (ft + 4)) << 4);
        mnOff[3] = box + (ft + 4) * ROW + (((c0 + 2) ^ (ft + 4)) << 4);
    }
    unsigned ra[4][4] = {};

    // The block's tiles, gridDim.x apart in the grouped order (one, when
    // the grid has a block a tile; a persistent grid has fewer blocks, each
    // walking several). ring counts the steps of the tiles before, as the
    // producer does; the last step's buffer of a tile is given back once
    // the tile's wgmmas are done, so that the producer's copies for the
    // next tile overlap this tile's epilogue.
    float acc[32][4];
    int ring = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ring += steps) {
        int tileM, tileN;
        gemm::grouped_tile<GROUP>(tile, tilesM, tilesN, tileM, tileN);
        const int m0 = tileM * BM, n0 = tileN * BN;
#pragma unroll
        for (int j = 0; j < 32; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;

        if constexpr (RA) {
            for (int s = 0; s < steps; ++s) {
                const int slot = (ring + s) % STAGES;
                bar_wait(full + 8 * slot, ((ring + s) / STAGES) & 1);
                const unsigned st = base + slot * STAGE_BYTES, b = st + A_BYTES;
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) {
                    wg_wait<3>(); // the wgmma that read set kk is done
                    // At kk == 3 every wgmma of the step before is done.
                    if (kk == 3 && s > 0 && lane == 0) bar_arrive(empty + 8 * ((ring + s - 1) % STAGES));
                    keep(ra[kk]);
                    if constexpr (MN) {
                        const unsigned p = st + kk * 8 * ROW;
                        ra[kk][0] = lds_u32(p + mnOff[0]);
                        ra[kk][1] = lds_u32(p + mnOff[1]);
                        ra[kk][2] = lds_u32(p + mnOff[2]);
                        ra[kk][3] = lds_u32(p + mnOff[3]);
                    } else {
                        const unsigned lo = st + rowOff + (((2 * kk) ^ fg) << 4),
                                       hi = st + rowOff + (((2 * kk + 1) ^ fg) << 4);
                        ra[kk][0] = lds_u32(lo);
                        ra[kk][1] = lds_u32(lo + 8 * ROW);
                        ra[kk][2] = lds_u32(hi);
                        ra[kk][3] = lds_u32(hi + 8 * ROW);
                    }
                    wg_fence();
                    mma_tf32_rs(acc, ra[kk], desc(b + 32 * kk));
                    wg_commit();
                }
            }
            wg_wait<0>();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) keep(ra[kk]);
        } else {
            for (int s = 0; s < steps; ++s) {
                const int slot = (ring + s) % STAGES;
                bar_wait(full + 8 * slot, ((ring + s) / STAGES) & 1);
                const unsigned a = base + slot * STAGE_BYTES + cons * 64 * ROW, b = base + slot * STAGE_BYTES + A_BYTES;
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) mma<P>(acc, desc(a + 32 * kk), desc(b + 32 * kk));
                wg_commit();
                // The step before this one is done with its buffer.
                wg_wait<1>();
                if (s > 0 && lane == 0) bar_arrive(empty + 8 * ((ring + s - 1) % STAGES));
            }
            wg_wait<0>();
        }
        if (steps > 0 && lane == 0) bar_arrive(empty + 8 * ((ring + steps - 1) % STAGES));
        settle(acc);
        // This block's packers may stop once its last tile is multiplied.
        if (FUSED && tile + (int)gridDim.x >= tiles && tid % 128 == 0) atomicAdd(&consumersDone, 1);

        float(&frag)[1][32][4] = *reinterpret_cast<float(*)[1][32][4]>(&acc);
        const int rowBase = m0 + cons * 64 + warp * 16 + lane / 4, colBase = n0 + 2 * (lane % 4);
        if constexpr (TC)
            store_fragments_t<32>(acc, rowBase, colBase, M, N, alpha, beta, C + batch * strideC, ldc, work, batch);
        else
            gemm::store_fragments<float, 1, 32>(frag, rowBase, colBase, M, N, alpha, beta, C + batch * strideC, ldc,
                                                work, batch);
    }
}

template <Precision P, bool T>
__device__ __forceinline__ void pack(int rows, int K, const float* __restrict__ src, int ld, long long stride,
                                     void* __restrict__ dst, int ldd, long long strideD) {
    typedef typename Packed<P>::type Out;
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
        wg::matmul<P, false, false, false>(M, N, K, alpha, a, b, beta, C, ldc, strideC, kSlice, work, wg::Fusion{}); \
    }
MATMUL_WGMMA(matmul_wgmma_tf32_f32, float, wg::TF32)
MATMUL_WGMMA(matmul_wgmma_bf16_f32, float, wg::BF16)
MATMUL_WGMMA(matmul_wgmma_fp16_f32, float, wg::FP16)

// matmul_wgmma_tf32_rs_f32: as matmul_wgmma_tf32_f32, but a describes
// op(A) where it lies (float32, not rounded; nn and nt), rounded to TF32
// by the consumers on its way to wgmma; only op(B)^T is packed.
// matmul_wgmma_tf32_rs_tt_f32 does the same for a tt product computed as
// C^T = op(B)^T op(A)^T, whose first operand, B, lies along K: M and N are
// C^T's (C's N and M), a describes B, b the packed op(A), and C^T is
// written transposed into C (ldc and strideC C's own).
#define MATMUL_WGMMA_RS(NAME, T, TC)                                                                         \
    extern "C" __global__ void __launch_bounds__(wg::THREADS, 1)                                             \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ wg::TensorMap a,                              \
         const __grid_constant__ wg::TensorMap b, T beta, T* __restrict__ C, int ldc, long long strideC,      \
         int kSlice, T* __restrict__ work) {                                                                 \
        wg::matmul<wg::TF32, false, false, false, true, TC>(M, N, K, alpha, a, b, beta, C, ldc, strideC, kSlice, \
                                                             work, wg::Fusion{});                            \
    }
MATMUL_WGMMA_RS(matmul_wgmma_tf32_rs_f32, float, false)
MATMUL_WGMMA_RS(matmul_wgmma_tf32_rs_tt_f32, float, true)

// matmul_wgmma_tf32_direct_tt_f32: a tt product with nothing packed: a
// describes A (stored K x M) where it lies, TFLOAT32, along M (boxes of
// 32 of M by 32 of K, swizzled), and b describes B (N x K) where it lies,
// TFLOAT32, as a packed op(B)^T is described; TMA rounds both as it
// copies them. matmul_wgmma_tf32_direct_nn_f32 is the same kernel for an
// nn product computed as C^T = B^T A^T: M and N are C^T's (C's N and M), a
// describes B (stored K x N) along N and b describes A (M x K), and C^T is
// written transposed into C (ldc and strideC C's own). An nt product runs
// as C^T on matmul_wgmma_tf32_rs_tt_f32, a describing B and b A, both
// where they lie.
#define MATMUL_WGMMA_DIRECT(NAME, T, TC)                                                                     \
    extern "C" __global__ void __launch_bounds__(wg::THREADS, 1)                                             \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ wg::TensorMap a,                              \
         const __grid_constant__ wg::TensorMap b, T beta, T* __restrict__ C, int ldc, long long strideC,      \
         int kSlice, T* __restrict__ work) {                                                                 \
        wg::matmul<wg::TF32, false, false, false, true, TC, true>(M, N, K, alpha, a, b, beta, C, ldc, strideC, \
                                                                   kSlice, work, wg::Fusion{});              \
    }
MATMUL_WGMMA_DIRECT(matmul_wgmma_tf32_direct_tt_f32, float, false)
MATMUL_WGMMA_DIRECT(matmul_wgmma_tf32_direct_nn_f32, float, true)

// The fused kernels: one product (no batch, no split of K), its operands
// packed by the kernel itself as it runs (wg::Fusion); NAME's transposes
// are those of op(A) and op(B), as in the other techniques' nn/nt/tn/tt.
#define MATMUL_WGMMA_FUSED(NAME, T, P, TA, TB)                                                                 \
    extern "C" __global__ void __launch_bounds__(wg::THREADS, 1)                                             \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ wg::TensorMap a,                              \
         const __grid_constant__ wg::TensorMap b, T beta, T* __restrict__ C, int ldc, const T* srcA, int lda, \
         const T* srcB, int ldb, void* packedA, void* packedB, int ldd, unsigned* sync, int flags, int wave, \
         int packers) {                                                                                      \
        const wg::Fusion fu{srcA, lda, srcB, ldb, packedA, packedB, ldd, sync, flags, wave, packers};        \
        wg::matmul<P, true, TA, TB>(M, N, K, alpha, a, b, beta, C, ldc, 0, K, nullptr, fu);                  \
    }
MATMUL_WGMMA_FUSED(matmul_wgmma_tf32_fused_nn_f32, float, wg::TF32, false, false)
MATMUL_WGMMA_FUSED(matmul_wgmma_tf32_fused_nt_f32, float, wg::TF32, false, true)
MATMUL_WGMMA_FUSED(matmul_wgmma_tf32_fused_tn_f32, float, wg::TF32, true, false)
MATMUL_WGMMA_FUSED(matmul_wgmma_tf32_fused_tt_f32, float, wg::TF32, true, true)
MATMUL_WGMMA_FUSED(matmul_wgmma_bf16_fused_nn_f32, float, wg::BF16, false, false)
MATMUL_WGMMA_FUSED(matmul_wgmma_bf16_fused_nt_f32, float, wg::BF16, false, true)
MATMUL_WGMMA_FUSED(matmul_wgmma_bf16_fused_tn_f32, float, wg::BF16, true, false)
MATMUL_WGMMA_FUSED(matmul_wgmma_bf16_fused_tt_f32, float, wg::BF16, true, true)
MATMUL_WGMMA_FUSED(matmul_wgmma_fp16_fused_nn_f32, float, wg::FP16, false, false)
MATMUL_WGMMA_FUSED(matmul_wgmma_fp16_fused_nt_f32, float, wg::FP16, false, true)
MATMUL_WGMMA_FUSED(matmul_wgmma_fp16_fused_tn_f32, float, wg::FP16, true, false)
MATMUL_WGMMA_FUSED(matmul_wgmma_fp16_fused_tt_f32, float, wg::FP16, true, true)

// The fused TF32 kernels with op(A) read where it lies and rounded in
// registers (matmul_wgmma_tf32_rs_f32): the kernel packs op(B)^T alone;
// a describes srcA, and packedA is unused. _tt computes C^T as
// matmul_wgmma_tf32_rs_tt_f32 does: the caller passes C^T's M and N, B
// as srcA (described by a) and A as srcB (K x M, packed as op(B)^T of an
// nn product would be), and C as it is.
#define MATMUL_WGMMA_RS_FUSED(NAME, T, TB, TC)                                                                \
    extern "C" __global__ void __launch_bounds__(wg::THREADS, 1)                                             \
    NAME(int M, int N, int K, T alpha, const __grid_constant__ wg::TensorMap a,                              \
         const __grid_constant__ wg::TensorMap b, T beta, T* __restrict__ C, int ldc, const T* srcA, int lda, \
         const T* srcB, int ldb, void* packedA, void* packedB, int ldd, unsigned* sync, int flags, int wave, \
         int packers) {                                                                                      \
        const wg::Fusion fu{srcA, lda, srcB, ldb, packedA, packedB, ldd, sync, flags, wave, packers};        \
        wg::matmul<wg::TF32, true, false, TB, true, TC>(M, N, K, alpha, a, b, beta, C, ldc, 0, K, nullptr, fu); \
    }
MATMUL_WGMMA_RS_FUSED(matmul_wgmma_tf32_rs_fused_nn_f32, float, false, false)
MATMUL_WGMMA_RS_FUSED(matmul_wgmma_tf32_rs_fused_nt_f32, float, true, false)
MATMUL_WGMMA_RS_FUSED(matmul_wgmma_tf32_rs_fused_tt_f32, float, false, true)

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
