// dot_onepass.cu: x . y in one kernel, the partial sums added on the device.
//
// Technique: each thread accumulates x[i]*y[i] over a grid-stride loop of
// 16-byte loads (float4, double2, int4) when both vectors are 16-byte
// aligned, element by element otherwise; each block reduces its threads'
// sums with warp shuffles and adds its partial, exactly, into a
// fixed-point accumulator by integer atomics that no one waits for. There
// is no last block: the kernel ends when the last block's atomics land,
// and the caller reads the accumulator (DOT_ONEPASS_WORDS words) and
// rounds it once. No partials go to the host, and there is one launch.
// The accumulator of float32 and float64 is DOT_ONEPASS_LIMBS signed
// 64-bit limbs, limb i worth 2^(32i - 1074), so that every finite double
// is a sum of at most three of them (a 53-bit significand at its
// exponent's place, cut into 32-bit pieces); DOT_ONEPASS_MAX_BLOCKS
// pieces of at most 2^32 cannot overflow a limb. The word after the limbs
// collects flags for partials that are not finite (1 +Inf, 2 -Inf, 4
// NaN). int32's accumulator is word 0, summed modulo 2^32.
// The accumulator must be zero before a launch. Block 0 clears another
// one, "next", which the caller's next launch on this pair of accumulators
// uses: so a pair needs no clearing between launches, as long as the
// caller has read each result before the launch after it.
// Deterministic: the grid is a fixed function of n (not of the GPU), every
// thread visits the same elements in the same order, and integer sums do
// not depend on the order of the atomics, so a product gives the same bits
// on every run; and the partials are added exactly.
// Accuracy: float32 products are accumulated in float64 (the kernel is
// bound by memory, so the wider adds cost nothing measurable), the
// partials' sum is exact, and the result is rounded to float32 once;
// int32 wraps like Go's int32.
// Shape:     1-D grid of at most DOT_ONEPASS_MAX_BLOCKS blocks of
//            DOT_ONEPASS_THREADS threads; the caller computes the grid with
//            the same rule as dot_onepass_blocks below.
// Follows:   CUDA by Example's dot product (ch. 5: grid-stride loop,
//            per-block partial sums); the accumulator is a small case of
//            Kulisch's long accumulator (exact sums in fixed point).
// Vectors of up to 128 MiB are read with loads that ask L2 for whole
// 256-byte lines (ld.global.nc.L2::256B): 0.84 -> 0.91 of the copy at 2^24
// float32 and 0.74 -> 0.84 at 2^22, but 0.97 -> 0.94 at 2^26, so larger
// vectors are read plainly.
// Fraction of the device-to-device copy bandwidth (H100, kernel time, L2
// flushed before each run, same run, 2026-11-24, internal/gpu's
// BenchmarkDotVsCopy): float32 0.793 at 2^20, 0.904 at 2^22, 0.926 at
// 2^24, 0.977 at 2^26, 1.013 at 2^28; float64 0.880, 0.928, 0.928, 1.012,
// 1.020 (the kernel before, whose last block added the partials: float32
// 0.665, 0.826, 0.908, 0.971, 1.012; docs/PERFORMANCE.md, "The dot
// product on the device").
//
// Contract: n >= 0; acc and next each DOT_ONEPASS_WORDS 8-byte words,
// acc all zero before the launch (next is all zero after it). Launches
// that share acc or next must not run at the same time.
//
// Symbols: dot_onepass_f32, dot_onepass_f64, dot_onepass_i32, each
//   (int n, const T* x, const T* y, unsigned long long* acc,
//    unsigned long long* next)

#include <cstddef>
#include <cstdint>

#define DOT_ONEPASS_THREADS 256
#define DOT_ONEPASS_MAX_BLOCKS 1024
#define DOT_ONEPASS_LIMBS 66
// The limbs and the flags word.
#define DOT_ONEPASS_WORDS 67
// Vectors of at most this many bytes are read in whole 256-byte lines.
#ifndef DOT_ONEPASS_LINE_BYTES
#define DOT_ONEPASS_LINE_BYTES (128u << 20)
#endif

namespace dot_onepass_detail {

template <typename T> struct Traits;
template <> struct Traits<float> {
    typedef double Acc;
    typedef float4 Vec;
    static constexpr int width = 4;
    __device__ static Acc dot(const Vec& a, const Vec& b) {
        Acc s = Acc(a.x) * Acc(b.x);
        s = fma(Acc(a.y), Acc(b.y), s);
        s = fma(Acc(a.z), Acc(b.z), s);
        return fma(Acc(a.w), Acc(b.w), s);
    }
    __device__ static Acc mul(float a, float b) { return Acc(a) * Acc(b); }
    __device__ static Vec load_line(const Vec* p) {
        Vec v;
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
        return v;
    }
};
template <> struct Traits<double> {
    typedef double Acc;
    typedef double2 Vec;
    static constexpr int width = 2;
    __device__ static Acc dot(const Vec& a, const Vec& b) { return fma(a.y, b.y, a.x * b.x); }
    __device__ static Acc mul(double a, double b) { return a * b; }
    __device__ static Vec load_line(const Vec* p) {
        Vec v;
        asm("ld.global.nc.L1::no_allocate.L2::256B.v2.f64 {%0,%1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
        return v;
    }
};
template <> struct Traits<int> {
    typedef unsigned int Acc;
    typedef int4 Vec;
    static constexpr int width = 4;
    __device__ static Acc dot(const Vec& a, const Vec& b) {
        return Acc(a.x) * Acc(b.x) + Acc(a.y) * Acc(b.y) + Acc(a.z) * Acc(b.z) + Acc(a.w) * Acc(b.w);
    }
    __device__ static Acc mul(int a, int b) { return Acc(a) * Acc(b); }
    __device__ static Vec load_line(const Vec* p) {
        Vec v;
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0,%1,%2,%3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
        return v;
    }
};

template <typename U>
__device__ __forceinline__ U warp_sum(U v) {
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;
}

// block_sum returns, in thread 0, the sum of every thread's v in a fixed
// order. All threads must call it.
template <typename U>
__device__ __forceinline__ U block_sum(U v, U* scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    U s = U(0);
    if (warp == 0) {
        s = lane < DOT_ONEPASS_THREADS / 32 ? scratch[lane] : U(0);
        s = warp_sum(s);
    }
    return s;
}

// load reads one vector: with LINE, asking L2 to fetch the whole 256 bytes
// around it from memory and L1 to keep none of it; else through the
// read-only cache (__ldg).
template <class Tr, bool LINE>
__device__ __forceinline__ typename Tr::Vec load(const typename Tr::Vec* p) {
    if (LINE) return Tr::load_line(p);
    return __ldg(p);
}

// vector_sum adds x[i]*y[i] over this thread's vectors of the grid-stride
// loop into sum.
template <class Tr, bool LINE>
__device__ __forceinline__ void vector_sum(size_t nv, const typename Tr::Vec* xv, const typename Tr::Vec* yv,
                                           size_t tid, size_t stride, typename Tr::Acc& sum) {
    // Two strides a step, all four loads issued before the first use, into
    // two sums. With L2 flushed before each run it times the same as one
    // stride a step (testdata/dot_bench.cu, "variants"); it is kept for
    // GPUs with fewer threads in flight.
    typename Tr::Acc sum2 = 0;
    size_t i = tid;
    for (; i + stride < nv; i += 2 * stride) {
        const typename Tr::Vec x0 = load<Tr, LINE>(xv + i), y0 = load<Tr, LINE>(yv + i);
        const typename Tr::Vec x1 = load<Tr, LINE>(xv + i + stride), y1 = load<Tr, LINE>(yv + i + stride);
        sum += Tr::dot(x0, y0);
        sum2 += Tr::dot(x1, y1);
    }
    if (i < nv) {
        sum += Tr::dot(load<Tr, LINE>(xv + i), load<Tr, LINE>(yv + i));
    }
    sum += sum2;
}

// add_partial adds a block's partial v exactly into acc: at most three
// 32-bit pieces of its significand into the limbs at its exponent's place,
// or a flag when it is not finite.
__device__ __forceinline__ void add_partial(double v, unsigned long long* acc) {
    const unsigned long long bits = (unsigned long long)__double_as_longlong(v);
    int e = int((bits >> 52) & 0x7ff);
    unsigned long long m = bits & ((1ull << 52) - 1);
    const bool neg = (bits >> 63) != 0;
    if (e == 0x7ff) {
        atomicOr(acc + DOT_ONEPASS_LIMBS, m ? 4ull : neg ? 2ull : 1ull);
        return;
    }
    if (e != 0) {
        m |= 1ull << 52;
    } else {
        e = 1; // subnormal: the same scale as the smallest normal exponent
    }
    const int pos = e - 1; // v = +-m * 2^(pos - 1074), pos in [0, 2045]
    const int limb = pos >> 5, sh = pos & 31;
    const unsigned long long lo = m << sh, hi = sh ? m >> (64 - sh) : 0ull;
    const unsigned long long piece[3] = {lo & 0xffffffffull, lo >> 32, hi};
#pragma unroll
    for (int k = 0; k < 3; k++) {
        if (piece[k] != 0) {
            atomicAdd(acc + limb + k, neg ? 0ull - piece[k] : piece[k]); // two's complement
        }
    }
}
__device__ __forceinline__ void add_partial(unsigned int v, unsigned long long* acc) {
    atomicAdd(acc, (unsigned long long)v); // word 0 modulo 2^32
}

template <typename T>
__device__ __forceinline__ void dot_onepass(int n, const T* __restrict__ x, const T* __restrict__ y,
                                            unsigned long long* acc, unsigned long long* next) {
    typedef Traits<T> Tr;
    typedef typename Tr::Acc U;
    typedef typename Tr::Vec V;
    __shared__ U scratch[DOT_ONEPASS_THREADS / 32];

    // The next launch's accumulator (no block of this one touches it).
    if (blockIdx.x == 0 && threadIdx.x < DOT_ONEPASS_WORDS) {
        next[threadIdx.x] = 0ull;
    }
    const size_t tid = (size_t)blockIdx.x * DOT_ONEPASS_THREADS + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * DOT_ONEPASS_THREADS;
    U sum = U(0);
    const bool aligned = ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) & 15u) == 0;
    size_t done = 0; // elements covered by the vector loop
    if (aligned) {
        const size_t nv = (size_t)n / Tr::width;
        const V* xv = reinterpret_cast<const V*>(x);
        const V* yv = reinterpret_cast<const V*>(y);
        // Whole 256-byte lines from memory pay below DOT_ONEPASS_LINE_BYTES
        // a vector and cost above it (dot_bench.cu, "variants").
        if ((size_t)n * sizeof(T) <= (size_t)DOT_ONEPASS_LINE_BYTES) {
            vector_sum<Tr, true>(nv, xv, yv, tid, stride, sum);
        } else {
            vector_sum<Tr, false>(nv, xv, yv, tid, stride, sum);
        }
        done = nv * Tr::width;
    }
    for (size_t i = done + tid; i < (size_t)n; i += stride) {
        sum += Tr::mul(__ldg(x + i), __ldg(y + i));
    }

    sum = block_sum(sum, scratch);
    if (threadIdx.x == 0) {
        add_partial(sum, acc);
    }
}

} // namespace dot_onepass_detail

#define DOT_ONEPASS(NAME, T)                                                                  \
    extern "C" __global__ void __launch_bounds__(DOT_ONEPASS_THREADS)                         \
    NAME(int n, const T* __restrict__ x, const T* __restrict__ y, unsigned long long* acc,    \
         unsigned long long* next) {                                                          \
        dot_onepass_detail::dot_onepass<T>(n, x, y, acc, next);                              \
    }

DOT_ONEPASS(dot_onepass_f32, float)
DOT_ONEPASS(dot_onepass_f64, double)
DOT_ONEPASS(dot_onepass_i32, int)
