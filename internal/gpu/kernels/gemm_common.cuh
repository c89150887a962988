// gemm_common.cuh: what the GEMM kernels share (matmul_reg128.cu,
// matmul_dmma.cu, matmul_mma.cu, matmul_wgmma.cu): the grouped order of
// their blocks, the cp.async copies of the tensor-core kernels' panels,
// TMA's copies and their mbarriers (sm_90), and the tensor-core kernels'
// epilogue. build.sh hashes it with the .cu files (SOURCES.sha256), so a
// change here asks for the fatbins to be rebuilt as a change to them does.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gemm {

// Grouped block order (Triton's): a 1-D grid walks GROUP block rows at a
// time across the columns, so that consecutive blocks share panels of A
// and B in L2. grouped_tile returns the tile (row, column) of block pid
// for a product of tilesM x tilesN tiles.
template <int GROUP>
__device__ __forceinline__ void grouped_tile(int pid, int tilesM, int tilesN, int& tileM, int& tileN) {
    const int perGroup = GROUP * tilesN;
    const int firstM = (pid / perGroup) * GROUP;
    const int groupRows = min(tilesM - firstM, GROUP);
    tileM = firstM + (pid % perGroup) % groupRows;
    tileN = (pid % perGroup) / groupRows;
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// TensorMap is CUDA's CUtensorMap (a TMA descriptor): 128 opaque bytes,
// 64-byte aligned, passed to a kernel as a __grid_constant__ parameter.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};

// The mbarriers of a ring of buffers that TMA fills (sm_90): bar_init
// sets bar's arrival count; bar_expect arrives on it and tells it bytes
// more are coming from TMA; bar_arrive arrives; bar_wait waits until the
// phase with this parity has completed.
__device__ __forceinline__ void bar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void bar_expect(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
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

// copy16 copies bytes (0 to 16, whole elements) from src to the 16-byte
// aligned dst in shared memory and zero-fills the rest of the 16;
// copy_elem does the same for one element (4 or 8 bytes). src must be a
// valid address even when bytes is 0.
template <typename T>
__device__ __forceinline__ void copy16(T* dst, const T* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes));
}
template <typename T>
__device__ __forceinline__ void copy_elem(T* dst, const T* src, int bytes) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte elements");
    if (sizeof(T) == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_pending() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// load_panel starts the copy of one operand's panel for a step: ROWS rows
// of COLS elements, row r at src + r*ld (the first element of the panel),
// into shared rows of SS elements, in 16-byte chunks a thread. Rows from
// rowsLeft on, and columns from colsLeft on, are past the operand's edge
// and read as 0. vec: src and ld allow 16-byte copies (else element by
// element). safe is any valid address of the operand.
template <typename T, int ROWS, int COLS, int SS, int THREADS>
__device__ __forceinline__ void load_panel(T* dst, const T* src, int ld, int rowsLeft, int colsLeft, bool vec,
                                           const T* safe, int tid) {
    constexpr int V = 16 / sizeof(T); // elements a chunk
    constexpr int CHUNKS = ROWS * COLS / V;
    static_assert(CHUNKS % THREADS == 0, "whole chunks a thread");
#pragma unroll
    for (int j = 0; j < CHUNKS / THREADS; ++j) {
        const int q = tid + j * THREADS;
        const int r = q / (COLS / V), c = (q % (COLS / V)) * V;
        T* d = dst + r * SS + c;
        const T* p = src + (size_t)r * ld + c;
        if (vec) {
            const int n = r < rowsLeft ? min(max(colsLeft - c, 0), V) : 0;
            copy16(d, n > 0 ? p : safe, n * (int)sizeof(T));
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const bool in = r < rowsLeft && c + e < colsLeft;
                copy_elem(d + e, in ? p + e : safe, in ? (int)sizeof(T) : 0);
            }
        }
    }
}

// PanelCopy is one thread's share of the copies of one operand's panels,
// worked out once a block so that a step costs a copy and a pointer add a
// chunk: load_panel recomputes every chunk's address and edge tests each
// step, which was about 350 of the ~450 instructions of a dmma step (ncu,
// docs/PERFORMANCE.md). A panel is ROWS rows of COLS elements as in
// load_panel; KROWS says which way K runs: along the rows (a source
// contiguous along m or n: row r of a panel is k0 + r) or along the
// columns (a source contiguous along k). The fixed side (m or n) is cut at
// the operand's edge once, here: a chunk past it copies 0 bytes (from a
// clamped address inside the operand), one across it the elements before
// the edge. The moving side (k) is tested by copy_edge alone, which a
// caller uses for the last step of its slice of K. Only for operands that
// allow 16-byte copies (load_panel's vec).
template <typename T, int ROWS, int COLS, int SS, int THREADS, bool KROWS>
struct PanelCopy {
    static constexpr int V = 16 / (int)sizeof(T);      // elements a chunk
    static constexpr int PER_ROW = COLS / V;           // chunks a row
    static constexpr int RSTEP = THREADS / PER_ROW;    // rows between a thread's chunks
    static constexpr int N = ROWS * PER_ROW / THREADS; // chunks a thread
    static_assert(PER_ROW * V == COLS && RSTEP * PER_ROW == THREADS && N * THREADS == ROWS * PER_ROW,
                  "a thread's chunks in one column, RSTEP rows apart");

    const T* src[N]; // chunk j's source at the next step
    int bytes[N];    // and how many of its bytes lie before the fixed edge
    unsigned dst;    // chunk 0's byte offset in a panel, from the shared base

    // origin is the panel's first element at the first step (row 0, column
    // 0), ld the operand's row stride, fixedLeft how many rows (K along the
    // columns) or columns (K along the rows) remain before the operand's
    // edge (at least 1), base the shared ring's address.
    __device__ __forceinline__ PanelCopy(const T* origin, int ld, int fixedLeft, unsigned base, int tid) {
        const int r0 = tid / PER_ROW, c = (tid % PER_ROW) * V;
        dst = base + (unsigned)((r0 * SS + c) * (int)sizeof(T));
#pragma unroll
        for (int j = 0; j < N; ++j) {
            const int r = r0 + j * RSTEP;
            if (KROWS) {
                const int n = min(max(fixedLeft - c, 0), V);
                bytes[j] = n * (int)sizeof(T);
                src[j] = origin + (size_t)r * ld + (n > 0 ? c : 0);
            } else {
                const bool in = r < fixedLeft;
                bytes[j] = in ? 16 : 0;
                src[j] = origin + (size_t)(in ? r : 0) * ld + c;
            }
        }
    }

    // copy starts the copies of one panel that lies wholly before the end
    // of K into the panel at byte offset at from the ring's base, koff
    // elements past the chunks' sources.
    __device__ __forceinline__ void copy(unsigned at, long long koff) const {
#pragma unroll
        for (int j = 0; j < N; ++j) cp(at + j * RSTEP * SS * (int)sizeof(T), src[j] + koff, bytes[j]);
    }

    // copy_edge is copy for a panel with kLeft (possibly 0 or less) of its
    // BK positions along K before the end of K: those past it read as 0,
    // from safe, any valid address of the operand.
    __device__ __forceinline__ void copy_edge(unsigned at, long long koff, int kLeft, const T* safe) const {
        // The thread's index read anew (a volatile asm is not merged with
        // other reads), so that it is not kept in a register for this step.
        int tid;
        asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
        const int r0 = tid / PER_ROW, c = (tid % PER_ROW) * V;
#pragma unroll
        for (int j = 0; j < N; ++j) {
            const int b = KROWS ? (r0 + j * RSTEP < kLeft ? bytes[j] : 0)
                                : (bytes[j] ? min(max(kLeft - c, 0), V) * (int)sizeof(T) : 0);
            cp(at + j * RSTEP * SS * (int)sizeof(T), b > 0 ? src[j] + koff : safe, b);
        }
    }

    // advance moves the sources on by elems elements (a step along K).
    __device__ __forceinline__ void advance(long long elems) {
#pragma unroll
        for (int j = 0; j < N; ++j) src[j] += elems;
    }

  private:
    __device__ __forceinline__ void cp(unsigned to, const T* from, int n) const {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst + to), "l"(from), "r"(n));
    }
};

// Two adjacent elements moved as one access: float2 or double2.
template <typename T> struct Pair;
template <> struct Pair<float> { typedef float2 type; };
template <> struct Pair<double> { typedef double2 type; };

// store_fragments writes a warp's MT x NT tensor-core tiles of 16x8 (acc
// in the mma.sync accumulator layout: element e of tile (i, j) at row
// rowBase + i*16 + (e/2)*8, column colBase + j*8 + e%2) of an M x N
// product. With a slice of K (gridDim.y > 1) it writes alpha*acc to this
// slice's M x N part of work (row stride N; the reduce kernel adds the
// slices and beta*C); otherwise C = alpha*acc + beta*C (C not read when
// beta is 0), two elements an access where aligned.
template <typename T, int MT, int NT>
__device__ __forceinline__ void store_fragments(const T (&acc)[MT][NT][4], int rowBase, int colBase, int M, int N,
                                                T alpha, T beta, T* __restrict__ C, int ldc, T* __restrict__ work,
                                                long long batch) {
    typedef typename Pair<T>::type P;
    // A slice of K goes to work, unscaled by beta, which the reduce kernel
    // applies once.
    const bool toWork = gridDim.y > 1;
    T* const D = toWork ? work + ((size_t)batch * gridDim.y + blockIdx.y) * (size_t)M * N : C;
    const int ldd = toWork ? N : ldc;
    const T b = toWork ? T(0) : beta;
    const bool vec = ((reinterpret_cast<uintptr_t>(D) % sizeof(P)) == 0) && (ldd % 2 == 0);
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = rowBase + i * 16 + h * 8;
            if (row >= M) continue;
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int col = colBase + j * 8;
                T* p = D + (size_t)row * ldd + col;
                T v0 = alpha * acc[i][j][2 * h], v1 = alpha * acc[i][j][2 * h + 1];
                if (vec && col + 1 < N) {
                    if (b != T(0)) {
                        const P old = *reinterpret_cast<const P*>(p);
                        v0 += b * old.x;
                        v1 += b * old.y;
                    }
                    P v;
                    v.x = v0;
                    v.y = v1;
                    *reinterpret_cast<P*>(p) = v;
                } else {
                    if (col < N) p[0] = b != T(0) ? v0 + b * p[0] : v0;
                    if (col + 1 < N) p[1] = b != T(0) ? v1 + b * p[1] : v1;
                }
            }
        }
}

} // namespace gemm
