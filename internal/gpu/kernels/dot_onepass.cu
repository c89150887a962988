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
// exponent's place, cut into 32-bit pieces); fewer than 2^31 pieces of
// less than 2^32 cannot overflow a limb (a launch adds at most one a
// block, and the tail kernels one a chunk: a few thousand). The word after the limbs
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
//            the same rule as dot_onepass_blocks below. The tail kernels:
//            DOT_ONEPASS_TAIL_BLOCKS blocks of DOT_ONEPASS_THREADS.
// Follows:   CUDA by Example's dot product (ch. 5: grid-stride loop,
//            per-block partial sums); the accumulator is a small case of
//            Kulisch's long accumulator (exact sums in fixed point).
// Vectors of up to 128 MiB are read with loads that ask L2 for whole
// 256-byte lines (ld.global.nc.L2::256B): 0.84 -> 0.91 of the copy at 2^24
// float32 and 0.74 -> 0.84 at 2^22, but 0.97 -> 0.94 at 2^26, so larger
// vectors are read plainly.
// The tail kernels (dot_onepass_tail_*, aligned float vectors of 32 to 128
// MiB in gpu.DotOnePass): in the grid-stride kernel, blocks on some SMs
// end 10 us before the last at 2^24 float32, so these kernels' blocks sum
// the first 80% of the vectors that way, then take the rest in chunks of
// 4 KiB of x and y from a counter, each chunk's sum added exactly into the
// block's limbs in shared memory (the bits stay the same from run to run:
// a chunk's sum does not depend on the block that ran it). 792 blocks
// (six an H100 SM) measured best of 512 to 1056.
// Fraction of the device-to-device copy bandwidth (H100, kernel time, L2
// flushed before each run, same run, 2026-11-25, internal/gpu's
// BenchmarkDotVsCopy, two runs): float32 0.79 at 2^20, 0.90-0.91 at 2^22,
// 0.945-0.959 at 2^24 (tail), 0.974 at 2^26, 1.012-1.013 at 2^28; float64
// 0.874-0.875, 0.932, 0.944 (tail), 1.011, 1.018. The grid-stride kernel
// alone made 0.92-0.94 at 2^24 (docs/PERFORMANCE.md, "The dot product on
// the device").
//
// Contract: n >= 0; acc and next each DOT_ONEPASS_ACC_WORDS 8-byte words,
// acc all zero before the launch (next is all zero after it); the result
// is acc's first DOT_ONEPASS_WORDS. Launches that share acc or next must
// not run at the same time.
//
// Symbols: dot_onepass_f32, dot_onepass_f64, dot_onepass_i32, and
// dot_onepass_tail_f32 and dot_onepass_tail_f64 (x and y 16-byte aligned),
// each
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
// An accumulator is DOT_ONEPASS_ACC_WORDS words: the limbs, the flags,
// and at word DOT_ONEPASS_COUNTER (a 128-byte line away from the words
// that blocks add into) the tail kernels' 32-bit chunk counter; every
// kernel clears all of next.
#define DOT_ONEPASS_ACC_WORDS 96
#define DOT_ONEPASS_COUNTER 80
// The tail kernels' grid (any grid works; this one is fixed, so that the
// result does not depend on the GPU) and the part of the vectors their
// blocks sum in a grid-stride loop before they take chunks, in percent.
#define DOT_ONEPASS_TAIL_BLOCKS 792
#define DOT_ONEPASS_TAIL_STATIC_PCT 80
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

// partial_pieces cuts a block's partial v into what the accumulator
// adds: for a finite v at most three 32-bit pieces of its significand
// (two's complement when v < 0) for limbs limb, limb+1, limb+2, and 0;
// otherwise the flag (1 +Inf, 2 -Inf, 4 NaN) and no pieces.
__device__ __forceinline__ unsigned long long partial_pieces(double v, int& limb, unsigned long long (&piece)[3]) {
    const unsigned long long bits = (unsigned long long)__double_as_longlong(v);
    int e = int((bits >> 52) & 0x7ff);
    unsigned long long m = bits & ((1ull << 52) - 1);
    const bool neg = (bits >> 63) != 0;
    limb = 0;
    piece[0] = piece[1] = piece[2] = 0ull;
    if (e == 0x7ff) {
        return m ? 4ull : neg ? 2ull : 1ull;
    }
    if (e != 0) {
        m |= 1ull << 52;
    } else {
        e = 1; // subnormal: the same scale as the smallest normal exponent
    }
    const int pos = e - 1; // v = +-m * 2^(pos - 1074), pos in [0, 2045]
    limb = pos >> 5;
    const int sh = pos & 31;
    const unsigned long long lo = m << sh, hi = sh ? m >> (64 - sh) : 0ull;
    piece[0] = lo & 0xffffffffull;
    piece[1] = lo >> 32;
    piece[2] = hi;
#pragma unroll
    for (int k = 0; k < 3; k++) {
        if (neg) piece[k] = 0ull - piece[k];
    }
    return 0ull;
}

// add_partial adds a block's partial v exactly into acc (global memory,
// by atomics that no one waits for).
__device__ __forceinline__ void add_partial(double v, unsigned long long* acc) {
    int limb;
    unsigned long long piece[3];
    if (const unsigned long long flag = partial_pieces(v, limb, piece)) {
        atomicOr(acc + DOT_ONEPASS_LIMBS, flag);
        return;
    }
#pragma unroll
    for (int k = 0; k < 3; k++) {
        if (piece[k] != 0) {
            atomicAdd(acc + limb + k, piece[k]);
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
    static_assert(DOT_ONEPASS_ACC_WORDS <= DOT_ONEPASS_THREADS, "block 0's threads clear next");
    if (blockIdx.x == 0 && threadIdx.x < DOT_ONEPASS_ACC_WORDS) {
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

// add_partial_shared adds a partial v exactly into a block's limbs and
// flags in shared memory (one thread at a time).
__device__ __forceinline__ void add_partial_shared(double v, unsigned long long* limbs, unsigned long long* flags) {
    int limb;
    unsigned long long piece[3];
    if (const unsigned long long flag = partial_pieces(v, limb, piece)) {
        *flags |= flag;
        return;
    }
#pragma unroll
    for (int k = 0; k < 3; k++) limbs[limb + k] += piece[k];
}

// dot_tail is dot_onepass for aligned vectors on a fixed grid whose blocks
// share out the last part of the work as they ask for it: each block first
// sums PCT percent of the vectors in a grid-stride loop (two strides a
// step), then takes chunks of CH vectors a thread of the rest from a
// counter in acc until none is left, so that blocks on SMs whose loads
// return sooner take more of it. Every chunk's sum, and every block's sum
// of its static part, is fixed by n and the grid, never by the block that
// ran it, and each goes exactly into the block's limbs in shared memory,
// which go into acc at the end: the result keeps its bits from run to run.
// The elements past the last whole vector go to block 0's static sum.
template <typename T, int CH, int PCT>
__device__ __forceinline__ void dot_tail(int n, const T* __restrict__ x, const T* __restrict__ y,
                                         unsigned long long* acc, unsigned long long* next) {
    typedef Traits<T> Tr;
    typedef typename Tr::Vec V;
    constexpr int THREADS = DOT_ONEPASS_THREADS;
    __shared__ unsigned long long limbs[DOT_ONEPASS_LIMBS];
    __shared__ unsigned long long flags;
    __shared__ double warpSums[THREADS / 32];
    __shared__ long long chunkAt;
    const int t = threadIdx.x;
    if (blockIdx.x == 0) {
        for (int i = t; i < DOT_ONEPASS_ACC_WORDS; i += THREADS) next[i] = 0ull;
    }
    for (int i = t; i < DOT_ONEPASS_LIMBS; i += THREADS) limbs[i] = 0ull;
    if (t == 0) flags = 0ull;
    unsigned* counter = reinterpret_cast<unsigned*>(acc + DOT_ONEPASS_COUNTER);
    const V* xv = reinterpret_cast<const V*>(x);
    const V* yv = reinterpret_cast<const V*>(y);
    const long long nv = n / Tr::width, G = (long long)gridDim.x * THREADS;
    const long long nstat = nv * PCT / 100 / (2 * G) * (2 * G);
    double s0 = 0.0, s1 = 0.0;
    for (long long i = blockIdx.x * (long long)THREADS + t; i < nstat; i += 2 * G) {
        const V x0 = Tr::load_line(xv + i), y0 = Tr::load_line(yv + i);
        const V x1 = Tr::load_line(xv + i + G), y1 = Tr::load_line(yv + i + G);
        s0 += Tr::dot(x0, y0);
        s1 += Tr::dot(x1, y1);
    }
    if (blockIdx.x == 0 && t < n - nv * Tr::width) {
        s0 += Tr::mul(x[nv * Tr::width + t], y[nv * Tr::width + t]);
    }
    __syncthreads(); // limbs and flags cleared
    // Thread 0 adds the block's sum of v into the limbs; all threads call it.
    auto block_add = [&](double v) {
        v = block_sum(v, warpSums);
        if (t == 0) add_partial_shared(v, limbs, &flags);
    };
    block_add(s0 + s1);
    const long long per = (long long)THREADS * CH;
    const long long chunks = (nv - nstat + per - 1) / per;
    unsigned taken = 0;
    if (t == 0) taken = atomicAdd(counter, 1u);
    for (;;) {
        if (t == 0) chunkAt = taken;
        __syncthreads(); // also: warp 0 is done with warpSums
        const long long c = chunkAt;
        if (c >= chunks) break;
        if (t == 0) taken = atomicAdd(counter, 1u); // the next chunk's, under this one's loads
        V xa[CH], ya[CH];
#pragma unroll
        for (int j = 0; j < CH; j++) {
            const long long i = nstat + c * per + j * THREADS + t;
            xa[j] = i < nv ? Tr::load_line(xv + i) : V{};
            ya[j] = i < nv ? Tr::load_line(yv + i) : V{};
        }
        double s = 0.0;
#pragma unroll
        for (int j = 0; j < CH; j++) s += Tr::dot(xa[j], ya[j]);
        block_add(s);
    }
    __syncthreads(); // thread 0's last add
    for (int i = t; i < DOT_ONEPASS_LIMBS; i += THREADS) {
        if (limbs[i] != 0ull) atomicAdd(acc + i, limbs[i]);
    }
    if (t == 0 && flags != 0ull) atomicOr(acc + DOT_ONEPASS_LIMBS, flags);
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

#define DOT_TAIL(NAME, T, CH)                                                                            \
    extern "C" __global__ void __launch_bounds__(DOT_ONEPASS_THREADS)                                    \
    NAME(int n, const T* __restrict__ x, const T* __restrict__ y, unsigned long long* acc,               \
         unsigned long long* next) {                                                                     \
        dot_onepass_detail::dot_tail<T, CH, DOT_ONEPASS_TAIL_STATIC_PCT>(n, x, y, acc, next);                   \
    }

DOT_TAIL(dot_onepass_tail_f32, float, 1)
DOT_TAIL(dot_onepass_tail_f64, double, 1)
