// transpose.cu: dst = src^T for a batch of matrices: the copy that lets a
// GEMM whose operands lie one way run the kernel of another layout.
//
// Technique: the classic shared-memory transpose. A block of 32x8 threads
// moves a 32x32 tile: it reads the tile's rows from src (each warp one row
// of 32 consecutive elements at a time), stores them in a shared tile
// padded by one column, so that reading it by columns hits 32 banks, and
// writes the tile's columns as rows of dst, again 32 consecutive elements
// a warp. Tiles past an edge skip the elements outside the matrix; dst's
// elements past its rows (up to its leading dimension) are not written.
// Shape:     block = (32, 8); grid = (ceil(cols/32), min(ceil(rows/32),
//            65535), batch): grid rows past 65535 tiles loop.
// Follows:   NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++" (the
//            padded shared tile), written here from that description.
// Used by:   gpu.GemmOn (internal/gpu/gemm.go), which copies an operand
//            transposed into its workspace where the kernel of the other
//            layout is faster by more than the copy costs (see relayout
//            there and docs/PERFORMANCE.md).
//
// Contract: src is rows x cols with row stride lds, dst cols x rows with
// row stride ldd >= rows; batch b (blockIdx.z) works on src + b*strideSrc
// and dst + b*strideDst (elements). rows, cols >= 0.
//
// Symbols: transpose_f32, transpose_f64, transpose_i32, each
//   (int rows, int cols, const T* src, int lds, long long strideSrc,
//    T* dst, int ldd, long long strideDst).

#include <cstddef>

namespace transpose_detail {

constexpr int TILE = 32, ROWS = 8; // a tile, and the block's thread rows

template <typename T>
__device__ __forceinline__ void transpose(int rows, int cols, const T* __restrict__ src, int lds, long long strideSrc,
                                          T* __restrict__ dst, int ldd, long long strideDst) {
    __shared__ T tile[TILE][TILE + 1];
    src += blockIdx.z * strideSrc;
    dst += blockIdx.z * strideDst;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c0 = blockIdx.x * TILE;
    const int tileRows = (rows + TILE - 1) / TILE;
    for (int tr = blockIdx.y; tr < tileRows; tr += gridDim.y) {
        const int r0 = tr * TILE;
#pragma unroll
        for (int j = ty; j < TILE; j += ROWS) {
            const int r = r0 + j, c = c0 + tx;
            if (r < rows && c < cols) tile[j][tx] = src[(size_t)r * lds + c];
        }
        __syncthreads();
#pragma unroll
        for (int j = ty; j < TILE; j += ROWS) {
            const int c = c0 + j, r = r0 + tx;
            if (c < cols && r < rows) dst[(size_t)c * ldd + r] = tile[tx][j];
        }
        __syncthreads(); // the tile is refilled for the next grid row
    }
}

} // namespace transpose_detail

#define TRANSPOSE(NAME, T)                                                                             \
    extern "C" __global__ void __launch_bounds__(transpose_detail::TILE * transpose_detail::ROWS)       \
    NAME(int rows, int cols, const T* __restrict__ src, int lds, long long strideSrc, T* __restrict__ dst, \
         int ldd, long long strideDst) {                                                                \
        transpose_detail::transpose<T>(rows, cols, src, lds, strideSrc, dst, ldd, strideDst);           \
    }

TRANSPOSE(transpose_f32, float)
TRANSPOSE(transpose_f64, double)
TRANSPOSE(transpose_i32, int)
