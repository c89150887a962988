// dot_shared.cu: per-block partial sums of x . y, tree reduction in shared memory.
//
// Technique: each thread accumulates x[i]*y[i] over a grid-stride loop, writes
// its sum to shared memory, and the block halves the active threads at each
// step (s = blockDim.x/2, /4, ... 1), with a barrier between steps; thread 0
// writes the block's sum to partials[blockIdx.x]. The host adds the
// gridDim.x partials (in float64 for float32 if it likes).
// Shape:     1-D grid of 1-D blocks; blockDim.x a power of two, 1 to 1024;
//            dynamic shared memory = blockDim.x * sizeof(T), given at launch.
// Follows:   the shared-memory dot product of Sanders & Kandrot, CUDA by
//            Example, ch. 5 (grid-stride loop, shared partial sums, tree
//            reduction, per-block partial sums), with the block size a launch
//            parameter instead of a #define; the tile_static sum of Microsoft
//            Learn's C++ AMP "Using Tiles" is the same idea.
// Fraction of cuBLAS: not measured (the benchmark has no dot case yet).
//
// Contract (shared with dot_warp.cu): n >= 0 elements of x and y (contiguous,
// stride 1); partials has gridDim.x elements, every one of them written (0 for
// a block with no elements); int32 arithmetic wraps like Go's int32.
//
// Symbols: dot_shared_f32, dot_shared_f64, dot_shared_i32, each
//   (int n, const T* x, const T* y, T* partials).

#include <cstddef>

// One dynamic shared array for every instantiation (extern __shared__ arrays
// of different types would clash); 8-byte aligned for float64.
extern __shared__ __align__(8) unsigned char dot_shared_smem[];

namespace {

template <typename T> struct Acc { typedef T type; };
template <> struct Acc<int> { typedef unsigned int type; };

template <typename T>
__device__ __forceinline__ void dot_shared(int n, const T* __restrict__ x,
                                           const T* __restrict__ y,
                                           T* __restrict__ partials) {
    typedef typename Acc<T>::type U;
    U* cache = reinterpret_cast<U*>(dot_shared_smem); // sizeof(U) == sizeof(T)
    const unsigned int tid = threadIdx.x;

    // Grid-stride loop; size_t so that i + stride cannot overflow near n = 2^31.
    U sum = U(0);
    const size_t stride = (size_t)blockDim.x * (size_t)gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + tid; i < (size_t)n; i += stride) {
        sum += U(x[i]) * U(y[i]);
    }
    cache[tid] = sum;
    __syncthreads();

    // Tree reduction: blockDim.x must be a power of two.
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            cache[tid] += cache[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = T(cache[0]);
    }
}

} // namespace

#define DOT_SHARED(NAME, T)                                                     \
    extern "C" __global__ void __launch_bounds__(1024)                          \
    NAME(int n, const T* __restrict__ x, const T* __restrict__ y,               \
         T* __restrict__ partials) {                                            \
        dot_shared<T>(n, x, y, partials);                                       \
    }

DOT_SHARED(dot_shared_f32, float)
DOT_SHARED(dot_shared_f64, double)
DOT_SHARED(dot_shared_i32, int)
