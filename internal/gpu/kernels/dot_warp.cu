// dot_warp.cu: per-block partial sums of x . y, reduced with warp shuffles.
//
// Technique: each thread accumulates x[i]*y[i] over a grid-stride loop; each
// warp then reduces its 32 values in registers with __shfl_down_sync (no
// shared memory, no barriers); lane 0 of each warp puts the warp's sum in
// shared memory; after one barrier the first warp reduces those (at most 32)
// values the same way and thread 0 writes partials[blockIdx.x]. The host adds
// the gridDim.x partials.
// Shape:     1-D grid of 1-D blocks; blockDim.x a power of two, 1 to 1024
//            (32 to 1024 for full warps; a block of 32 or fewer threads is one
//            warp and uses no shared memory); dynamic shared memory =
//            (blockDim.x/32) * sizeof(T), given at launch.
// Follows:   CUDA by Example's dot product (Sanders & Kandrot, ch. 5:
//            grid-stride loop, per-block partial sums), with the warp-shuffle
//            reduction of Luitjens, "Faster Parallel Reductions on Kepler"
//            (NVIDIA Developer Blog, 2014) in place of the shared-memory tree
//            for all but one step.
// Fraction of cuBLAS: not measured (the benchmark has no dot case yet).
//
// Contract: as dot_shared.cu (n >= 0, stride 1, partials has gridDim.x
// elements, each written; int32 wraps like Go's int32).
//
// Symbols: dot_warp_f32, dot_warp_f64, dot_warp_i32, each
//   (int n, const T* x, const T* y, T* partials).

#include <cstddef>

// One dynamic shared array for every instantiation (extern __shared__ arrays
// of different types would clash); 8-byte aligned for float64.
extern __shared__ __align__(8) unsigned char dot_warp_smem[];

namespace {

template <typename T> struct Acc { typedef T type; };
template <> struct Acc<int> { typedef unsigned int type; };

// warp_sum leaves in lane 0 the sum of the first width lanes' v (width a power
// of two, 1 to 32; mask names exactly the lanes that call it). Lanes >= width/2
// may read lanes outside the mask; their results are never used by lane 0.
template <typename U>
__device__ __forceinline__ U warp_sum(U v, unsigned int mask, unsigned int width) {
    for (unsigned int off = width / 2; off > 0; off >>= 1) {
        v += __shfl_down_sync(mask, v, off);
    }
    return v;
}

template <typename T>
__device__ __forceinline__ void dot_warp(int n, const T* __restrict__ x,
                                         const T* __restrict__ y,
                                         T* __restrict__ partials) {
    typedef typename Acc<T>::type U;
    const unsigned int tid = threadIdx.x;
    const unsigned int lane = tid & 31u;
    const unsigned int warp = tid >> 5;

    U sum = U(0);
    const size_t stride = (size_t)blockDim.x * (size_t)gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + tid; i < (size_t)n; i += stride) {
        sum += U(x[i]) * U(y[i]);
    }

    if (blockDim.x <= 32) {
        // One (possibly partial) warp: no shared memory, no barrier.
        const unsigned int mask = blockDim.x == 32 ? 0xffffffffu : ((1u << blockDim.x) - 1u);
        sum = warp_sum(sum, mask, blockDim.x);
        if (tid == 0) {
            partials[blockIdx.x] = T(sum);
        }
        return;
    }

    // Every warp is full (blockDim.x is a power of two above 32).
    U* warp_sums = reinterpret_cast<U*>(dot_warp_smem); // blockDim.x/32 entries
    sum = warp_sum(sum, 0xffffffffu, 32u);
    if (lane == 0) {
        warp_sums[warp] = sum;
    }
    __syncthreads();
    if (warp == 0) {
        const unsigned int nwarps = blockDim.x >> 5; // 2 to 32
        U v = lane < nwarps ? warp_sums[lane] : U(0);
        v = warp_sum(v, 0xffffffffu, 32u);
        if (lane == 0) {
            partials[blockIdx.x] = T(v);
        }
    }
}

} // namespace

#define DOT_WARP(NAME, T)                                                       \
    extern "C" __global__ void __launch_bounds__(1024)                          \
    NAME(int n, const T* __restrict__ x, const T* __restrict__ y,               \
         T* __restrict__ partials) {                                            \
        dot_warp<T>(n, x, y, partials);                                         \
    }

DOT_WARP(dot_warp_f32, float)
DOT_WARP(dot_warp_f64, double)
DOT_WARP(dot_warp_i32, int)
