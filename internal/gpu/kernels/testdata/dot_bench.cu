// dot_bench.cu: checks dot_onepass.cu against a float64 host reference
// (odd lengths, misaligned vectors, repeat runs bit for bit), then times it
// against a device-to-device copy of the same length in one process,
// interleaved run by run, and prints the fraction of the copy's bandwidth
// the dot product reaches (a copy of n elements moves 2n, as a dot product
// of n reads 2n). It exists to tune the kernel on the GPU machine; the Go
// tests remain the check of record.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o dot_bench dot_bench.cu
//   ./dot_bench check
//   ./dot_bench bench [reps]
//   ./dot_bench variants [reps]   # float32 tuning variants
//   ./dot_bench tail [reps]       # float32: block timeline, load hints, finishes, dirty or clean L2
//   ./dot_bench limbs [reps]      # float32 finished by integer atomics into limbs, no last block
//   ./dot_bench dyn [reps]        # float32: blocks that take chunks of the tail from a counter
//   ./dot_bench grid [reps]       # float32 2^23-2^26: the shipped kernel on smaller grids, the hybrid on 3-6 blocks an SM
#include "../dot_onepass.cu"

#include "bench_common.cuh"
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <random>
#include <vector>


typedef dot_onepass_detail::Traits<float>::Acc AccF;

// Bytes written between timed runs to push the last run's data out of L2
// (50 MiB on the H100), so that neither the copy nor the dot product reads
// what the other left there.
static const size_t kFlushBytes = 256u << 20;

// The grid rule the Go side uses (gpu.dotOnePassBlocks): at least minPer
// elements a thread, at most cap blocks.
static int blocksFor(long long n, int minPer, int cap) {
    long long b = (n + (long long)DOT_ONEPASS_THREADS * minPer - 1) / ((long long)DOT_ONEPASS_THREADS * minPer);
    return (int)std::max(1LL, std::min<long long>(b, cap));
}

// Variants for tuning: float32 accumulated in float (FA) or double, with
// ACCS independent accumulators a thread, THREADS a block.
// FINISH: 1 as shipped (fence, then a ticket); 0 no finish at all (each
// block only writes its partial: what the finish costs); 2 the ticket taken
// with one acquire-release atomic instead of the fence and a relaxed one;
// 4 no ticket: each block adds its partial into limbs (add_limbs).
// HINT: 0 through the read-only cache (__ldg); 1 loads that ask L2 to
// fetch whole 256-byte lines and skip L1; 2 the same lines marked first to
// be evicted from L2 (a createpolicy evict_first policy), so that reading
// them does not push out lines that others left there, dirty ones included;
// 3 evict_first without the 256-byte lines.
template <int HINT>
__device__ __forceinline__ float4 load4(const float4* p, unsigned long long policy) {
    float4 v;
    if (HINT == 0) return __ldg(p);
    if (HINT == 1) {
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
            : "l"(p));
    } else if (HINT == 2) {
        asm("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
            : "l"(p), "l"(policy));
    } else {
        asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
            : "l"(p), "l"(policy));
    }
    return v;
}

// g_times, when a variant is built TIMED, receives each block's start and
// end (after its partial is written) on the global timer, in ns, and the
// finishing block's end after the result at g_times[2*gridDim.x].
__device__ unsigned long long* g_times;
__device__ __forceinline__ unsigned long long globalTimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// add_limbs adds v exactly into a fixed-point accumulator of 66 signed
// 64-bit limbs, limb i worth 2^(32i - 1074) (every finite double is a whole
// multiple of 2^-1074), by at most three fire-and-forget integer atomics:
// integer sums do not depend on their order, so no block has to wait for
// the others and no last block has to add the partials. flags gets 1 for
// +Inf, 2 for -Inf, 4 for NaN.
__device__ __forceinline__ void add_limbs(double v, unsigned long long* limbs, unsigned* flags) {
    const unsigned long long bits = __double_as_longlong(v);
    int e = int((bits >> 52) & 0x7ff);
    unsigned long long m = bits & ((1ull << 52) - 1);
    const bool neg = bits >> 63;
    if (e == 0x7ff) {
        atomicOr(flags, m ? 4u : neg ? 2u : 1u);
        return;
    }
    if (e) m |= 1ull << 52; else e = 1;
    const int pos = e - 1; // v = +-m * 2^(pos - 1074)
    const int limb = pos >> 5, sh = pos & 31;
    const unsigned long long lo = m << sh, hi = sh ? m >> (64 - sh) : 0;
    const unsigned long long c[3] = {lo & 0xffffffffull, lo >> 32, hi};
#pragma unroll
    for (int k = 0; k < 3; k++)
        if (c[k]) atomicAdd(limbs + limb + k, neg ? 0ull - c[k] : c[k]);
}
static const int kLimbs = 66;

// limbsValue is the accumulator's value, summed in long double (a check,
// not the rounding the Go side does).
static long double limbsValue(const std::vector<unsigned long long>& l) {
    long double v = 0;
    for (int i = kLimbs - 1; i >= 0; i--) v += ldexpl((long double)(long long)l[i], 32 * i - 1074);
    return v;
}

// The shipped kernel's pair of accumulators and which one the next launch
// adds into (dot_onepass.cu: each launch clears the other).
static unsigned long long* g_acc = nullptr;
static int g_parity = 0;

template <typename T>
static void launchShipped(int g, int n, const T* x, const T* y) {
    if (!g_acc) {
        CK(cudaMalloc(&g_acc, 2 * DOT_ONEPASS_WORDS * 8));
        CK(cudaMemset(g_acc, 0, 2 * DOT_ONEPASS_WORDS * 8));
    }
    unsigned long long* acc = g_acc + g_parity * DOT_ONEPASS_WORDS;
    unsigned long long* next = g_acc + (1 - g_parity) * DOT_ONEPASS_WORDS;
    if (sizeof(T) == 4) {
        dot_onepass_f32<<<g, DOT_ONEPASS_THREADS>>>(n, (const float*)x, (const float*)y, acc, next);
    } else {
        dot_onepass_f64<<<g, DOT_ONEPASS_THREADS>>>(n, (const double*)x, (const double*)y, acc, next);
    }
    g_parity ^= 1;
}

// shippedWords returns the accumulator of the shipped kernel's last launch.
static std::vector<unsigned long long> shippedWords() {
    std::vector<unsigned long long> w(DOT_ONEPASS_WORDS);
    CK(cudaMemcpy(w.data(), g_acc + (1 - g_parity) * DOT_ONEPASS_WORDS, DOT_ONEPASS_WORDS * 8, cudaMemcpyDeviceToHost));
    return w;
}

template <bool FA, int ACCS, int THREADS, int FINISH = 1, int HINT = 0, bool TIMED = false>
__global__ void __launch_bounds__(THREADS) dot_variant_f32(int n, const float* __restrict__ x, const float* __restrict__ y,
                                                           double* partials, unsigned* ticket, float* result) {
    typedef typename std::conditional<FA, float, double>::type U;
    __shared__ U scratch[THREADS / 32];
    __shared__ bool last;
    if (TIMED && threadIdx.x == 0) g_times[2 * blockIdx.x] = globalTimer();
    if (FINISH == 5 && blockIdx.x == 0 && threadIdx.x < kLimbs + 1)
        reinterpret_cast<unsigned long long*>(partials)[kLimbs + 1 + threadIdx.x] = 0;
    const size_t tid = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * THREADS;
    U acc[ACCS];
    for (int a = 0; a < ACCS; a++) acc[a] = U(0);
    const size_t nv = (size_t)n / 4;
    const float4* xv = reinterpret_cast<const float4*>(x);
    const float4* yv = reinterpret_cast<const float4*>(y);
    size_t i = tid;
    unsigned long long policy = 0;
    if (HINT >= 2) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    for (; i + (ACCS - 1) * stride < nv; i += ACCS * stride) {
        float4 a[ACCS], b[ACCS];
#pragma unroll
        for (int k = 0; k < ACCS; k++) {
            a[k] = load4<HINT>(xv + i + k * stride, policy);
            b[k] = load4<HINT>(yv + i + k * stride, policy);
        }
#pragma unroll
        for (int k = 0; k < ACCS; k++) {
            acc[k] += U(a[k].x) * U(b[k].x) + U(a[k].y) * U(b[k].y) + U(a[k].z) * U(b[k].z) + U(a[k].w) * U(b[k].w);
        }
    }
    for (; i < nv; i += stride) {
        float4 a = __ldg(xv + i), b = __ldg(yv + i);
        acc[0] += U(a.x) * U(b.x) + U(a.y) * U(b.y) + U(a.z) * U(b.z) + U(a.w) * U(b.w);
    }
    for (size_t j = nv * 4 + tid; j < (size_t)n; j += stride) acc[0] += U(x[j]) * U(y[j]);
    U sum = U(0);
    for (int a = 0; a < ACCS; a++) sum += acc[a];
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (FINISH == 3) {
        // Warp 0 alone: the ticket by one acquire-release atomic, and no
        // block barrier after it.
        if (threadIdx.x >= 32) return;
        const int lane = threadIdx.x;
        U s = lane < THREADS / 32 ? scratch[lane] : U(0);
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        unsigned old = 0;
        if (lane == 0) {
            partials[blockIdx.x] = double(s);
            if (TIMED) g_times[2 * blockIdx.x + 1] = globalTimer();
            asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(ticket) : "memory");
        }
        old = __shfl_sync(0xffffffffu, old, 0);
        if (old != gridDim.x - 1) return;
        if (TIMED && lane == 0) g_times[2 * gridDim.x + 1] = globalTimer();
        __syncwarp();
        double t = 0;
        for (unsigned b = lane; b < gridDim.x; b += 32) t += __ldcg(partials + b);
        for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
        if (lane == 0) {
            *result = float(t);
            *ticket = 0;
            if (TIMED) g_times[2 * gridDim.x] = globalTimer();
        }
        return;
    }
    if (FINISH == 4 || FINISH == 5) {
        // The limbs (at partials, two sets: this launch's, after
        // partials[kLimbs] the other, which block 0 clears for the next:
        // here with 4, at its start with 5).
        unsigned long long* limbs = reinterpret_cast<unsigned long long*>(partials);
        if (FINISH == 4 && blockIdx.x == 0 && threadIdx.x < kLimbs + 1) limbs[kLimbs + 1 + threadIdx.x] = 0;
        if (threadIdx.x < 32) {
            U s = threadIdx.x < THREADS / 32 ? scratch[threadIdx.x] : U(0);
            for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
            if (threadIdx.x == 0) add_limbs(double(s), limbs, ticket);
        }
        return;
    }
    if (threadIdx.x < 32) {
        U s = threadIdx.x < THREADS / 32 ? scratch[threadIdx.x] : U(0);
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (threadIdx.x == 0) {
            partials[blockIdx.x] = double(s);
            if (TIMED) g_times[2 * blockIdx.x + 1] = globalTimer();
            if (FINISH == 1) {
                __threadfence();
                last = atomicAdd(ticket, 1u) == gridDim.x - 1;
                if (TIMED && last) g_times[2 * gridDim.x + 1] = globalTimer();
            } else if (FINISH == 2) {
                unsigned old;
                asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(ticket) : "memory");
                last = old == gridDim.x - 1;
            }
        }
    }
    __syncthreads();
    if (FINISH == 0 || !last) return;
    __threadfence();
    double s = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += THREADS) s += __ldcg(partials + b);
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    __shared__ double fin[THREADS / 32];
    if ((threadIdx.x & 31) == 0) fin[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int w = 0; w < THREADS / 32; w++) t += fin[w];
        *result = float(t);
        *ticket = 0;
        if (TIMED) g_times[2 * gridDim.x] = globalTimer();
    }
}

// dot_bulk_f32: the vectors stream into shared memory by bulk copies
// (cp.async.bulk, sm_90: the copy engine of TMA without a tensor map), a
// ring of STAGES chunks of CHUNK floats of x and of y a block, each
// guarded by an mbarrier that counts its bytes; one thread issues the
// copies, every thread reads its part of each chunk from shared memory.
// Few, large requests instead of one 16-byte load a thread. Blocks take
// chunks blockIdx.x, + gridDim.x, ...; the elements past the last whole
// chunk are read plainly; the finish is the shipped kernel's. Needs x and y
// 16-byte aligned, and STAGES*2*CHUNK*4 bytes of dynamic shared memory.
__device__ __forceinline__ unsigned smem32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

template <int THREADS, int STAGES, int CHUNK>
__global__ void __launch_bounds__(THREADS) dot_bulk_f32(int n, const float* __restrict__ x, const float* __restrict__ y,
                                                        double* partials, unsigned* ticket, float* result) {
    extern __shared__ __align__(128) float ring[]; // [STAGES][2][CHUNK]
    __shared__ __align__(8) unsigned long long full[STAGES];
    __shared__ double scratch[THREADS / 32];
    __shared__ bool last;
    const long long chunks = (long long)n / CHUNK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem32(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](int s, long long c) {
        const unsigned bar = smem32(&full[s]);
        const unsigned bytes = CHUNK * 4;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(2 * bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                         smem32(ring + (size_t)s * 2 * CHUNK)),
                     "l"(x + c * CHUNK), "r"(bytes), "r"(bar)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                         smem32(ring + (size_t)s * 2 * CHUNK + CHUNK)),
                     "l"(y + c * CHUNK), "r"(bytes), "r"(bar)
                     : "memory");
    };
    if (threadIdx.x == 0) {
        for (int k = 0; k < STAGES; k++) {
            const long long c = blockIdx.x + (long long)k * gridDim.x;
            if (c < chunks) issue(k, c);
        }
    }
    double acc = 0, acc2 = 0;
    int k = 0;
    for (long long c = blockIdx.x; c < chunks; c += gridDim.x, k++) {
        const int s = k % STAGES;
        const unsigned parity = (k / STAGES) & 1;
        asm volatile(
            "{\n"
            ".reg .pred done;\n"
            "BULKWAIT:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
            "@!done bra BULKWAIT;\n"
            "}\n" ::"r"(smem32(&full[s])),
            "r"(parity)
            : "memory");
        const float4* sx = reinterpret_cast<const float4*>(ring + (size_t)s * 2 * CHUNK);
        const float4* sy = reinterpret_cast<const float4*>(ring + (size_t)s * 2 * CHUNK + CHUNK);
#pragma unroll
        for (int j = threadIdx.x; j < CHUNK / 4; j += 2 * THREADS) {
            const float4 a = sx[j], b = sy[j];
            acc += double(a.x) * double(b.x) + double(a.y) * double(b.y) + double(a.z) * double(b.z) + double(a.w) * double(b.w);
            if (j + THREADS < CHUNK / 4) {
                const float4 a2 = sx[j + THREADS], b2 = sy[j + THREADS];
                acc2 += double(a2.x) * double(b2.x) + double(a2.y) * double(b2.y) + double(a2.z) * double(b2.z) +
                        double(a2.w) * double(b2.w);
            }
        }
        __syncthreads(); // the stage is read: refill it
        if (threadIdx.x == 0) {
            const long long next = c + (long long)STAGES * gridDim.x;
            if (next < chunks) issue(s, next);
        }
    }
    for (long long i = chunks * CHUNK + (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long long)gridDim.x * THREADS)
        acc += double(x[i]) * double(y[i]);
    double sum = acc + acc2;
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        double t = threadIdx.x < THREADS / 32 ? scratch[threadIdx.x] : 0;
        for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
        if (threadIdx.x == 0) {
            partials[blockIdx.x] = t;
            __threadfence();
            last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        }
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    double t = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += THREADS) t += __ldcg(partials + b);
    for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
    __syncthreads(); // scratch is reused
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = t;
    __syncthreads();
    if (threadIdx.x == 0) {
        double u = 0;
        for (int w = 0; w < THREADS / 32; w++) u += scratch[w];
        *result = float(u);
        *ticket = 0;
    }
}

template <int THREADS, int STAGES, int CHUNK>
static void bulkLaunch(int blocks, long long n, const float* x, const float* y, double* p, unsigned* t, float* r) {
    const int bytes = STAGES * 2 * CHUNK * 4;
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(dot_bulk_f32<THREADS, STAGES, CHUNK>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        set = true;
    }
    dot_bulk_f32<THREADS, STAGES, CHUNK><<<blocks, THREADS, bytes>>>((int)n, x, y, p, t, r);
}

// benchVariants times the variants at float32 2^24 and 2^26 against the
// copy and the shipped kernel.
static void benchVariants(int reps) {
    for (int lg : {22, 24, 26}) {
        long long n = 1LL << lg;
        float *x, *y, *z, *r;
        double* p;
        unsigned* t;
        CK(cudaMalloc(&x, n * 4));
        CK(cudaMalloc(&y, n * 4));
        CK(cudaMalloc(&z, n * 4));
        CK(cudaMalloc(&r, 8));
        CK(cudaMalloc(&p, 8192 * 8));
        CK(cudaMalloc(&t, 4));
        CK(cudaMemset(t, 0, 4));
        CK(cudaMemset(x, 0x3c, n * 4));
        CK(cudaMemset(y, 0x3c, n * 4));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        void* flush;
        CK(cudaMalloc(&flush, kFlushBytes));
        const char* names[] = {"copy", "shipped", "double acc1 256", "double acc2 256", "double acc4 256", "float acc2 256",
                               "double acc2 512", "double acc2 256 g1056", "double acc4 256 g2048", "double acc2 128 g2048",
                               "double acc2 256 no finish", "double acc2 256 acq_rel ticket",
                               "double acc2 256 L2::256B", "double acc4 256 L2::256B",
                               "bulk 256t 4x16KB 132b", "bulk 256t 4x8KB 264b", "bulk 256t 8x8KB 132b", "bulk 512t 6x16KB 132b",
                               "bulk 128t 3x8KB 396b"};
        const int nv = 19;
        int sms = 0;
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        std::vector<std::vector<float>> ms(nv);
        std::vector<float> res(nv, 0.f); // each variant's last result
        int g = blocksFor(n, 8, 1024);
        for (int rep = 0; rep < reps + 2; rep++) {
            for (int v = 0; v < nv; v++) {
                CK(cudaMemsetAsync(flush, rep & 0xff, kFlushBytes));
                CK(cudaEventRecord(e0));
                switch (v) {
                case 0: CK(cudaMemcpyAsync(z, x, n * 4, cudaMemcpyDeviceToDevice)); break;
                case 1: launchShipped<float>(g, (int)n, x, y); break;
                case 2: dot_variant_f32<false, 1, 256><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 3: dot_variant_f32<false, 2, 256><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 4: dot_variant_f32<false, 4, 256><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 5: dot_variant_f32<true, 2, 256><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 6: dot_variant_f32<false, 2, 512><<<std::max(1, g / 2), 512>>>((int)n, x, y, p, t, r); break;
                case 7: dot_variant_f32<false, 2, 256><<<1056, 256>>>((int)n, x, y, p, t, r); break;
                case 8: dot_variant_f32<false, 4, 256><<<2048, 256>>>((int)n, x, y, p, t, r); break;
                case 9: dot_variant_f32<false, 2, 128><<<2048, 128>>>((int)n, x, y, p, t, r); break;
                case 10: dot_variant_f32<false, 2, 256, 0><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 11: dot_variant_f32<false, 2, 256, 2><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 12: dot_variant_f32<false, 2, 256, 1, 1><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 13: dot_variant_f32<false, 4, 256, 1, 1><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 14: bulkLaunch<256, 4, 4096>(sms, n, x, y, p, t, r); break;
                case 15: bulkLaunch<256, 4, 2048>(2 * sms, n, x, y, p, t, r); break;
                case 16: bulkLaunch<256, 8, 2048>(sms, n, x, y, p, t, r); break;
                case 17: bulkLaunch<512, 6, 4096>(sms, n, x, y, p, t, r); break;
                case 18: bulkLaunch<128, 3, 2048>(3 * sms, n, x, y, p, t, r); break;
                }
                CK(cudaGetLastError());
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float m;
                CK(cudaEventElapsedTime(&m, e0, e1));
                if (rep >= 2) ms[v].push_back(m);
                if (rep == reps + 1 && v > 0) CK(cudaMemcpy(&res[v], r, 4, cudaMemcpyDeviceToHost));
            }
        }
        float got;
        CK(cudaMemcpy(&got, r, 4, cudaMemcpyDeviceToHost));
        for (auto& v : ms) std::sort(v.begin(), v.end());
        double copy = ms[0][ms[0].size() / 2];
        printf("variants f32 n=2^%d (last result %g):", lg, got);
        for (int v = 0; v < nv; v++)
            printf(" | %s %.4f ms %.3f (= %.7g)", names[v], ms[v][ms[v].size() / 2], copy / ms[v][ms[v].size() / 2], res[v]);
        printf("\n");
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(z));
        CK(cudaFree(r));
        CK(cudaFree(p));
        CK(cudaFree(t));
    }
}

template <typename T> struct K;
template <> struct K<float> {
    static constexpr const char* name = "float32";
    static void launch(int g, int n, const float* x, const float* y, void* p, unsigned* t, float* r) {
        launchShipped<float>(g, n, x, y);
    }
};
template <> struct K<double> {
    static constexpr const char* name = "float64";
    static void launch(int g, int n, const double* x, const double* y, void* p, unsigned* t, double* r) {
        launchShipped<double>(g, n, x, y);
    }
};

template <typename T>
static int check() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    const long long lens[] = {1, 2, 3, 7, 31, 255, 256, 257, 1000, 4099, 65537, 1 << 20, (1 << 22) + 3};
    int bad = 0;
    const int maxn = (1 << 22) + 8;
    std::vector<T> hx(maxn), hy(maxn);
    for (auto& v : hx) v = T(u(rng));
    for (auto& v : hy) v = T(u(rng));
    T *x, *y, *r;
    void* p;
    unsigned* t;
    CK(cudaMalloc(&x, maxn * sizeof(T)));
    CK(cudaMalloc(&y, maxn * sizeof(T)));
    CK(cudaMalloc(&r, sizeof(T)));
    CK(cudaMalloc(&p, 4096 * 8));
    CK(cudaMalloc(&t, 4));
    CK(cudaMemset(t, 0, 4));
    CK(cudaMemcpy(x, hx.data(), maxn * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), maxn * sizeof(T), cudaMemcpyHostToDevice));
    for (long long n : lens) {
        for (int ox = 0; ox < 3; ox++) {
            for (int oy = 0; oy < 2; oy++) {
                double ref = 0, mag = 0;
                for (long long i = 0; i < n; i++) {
                    ref += double(hx[i + ox]) * double(hy[i + oy]);
                    mag += std::fabs(double(hx[i + ox]) * double(hy[i + oy]));
                }
                T got[2];
                std::vector<unsigned long long> words[2];
                for (int rep = 0; rep < 2; rep++) {
                    K<T>::launch(blocksFor(n, 8, DOT_ONEPASS_MAX_BLOCKS), (int)n, x + ox, y + oy, p, t, r);
                    CK(cudaGetLastError());
                    words[rep] = shippedWords();
                    got[rep] = T(limbsValue(words[rep]));
                    if (words[rep][DOT_ONEPASS_LIMBS] != 0) got[rep] = T(NAN);
                }
                if (words[0] != words[1]) got[1] = T(NAN); // not the same bits
                double eps = sizeof(T) == 4 ? 6e-8 : 1.2e-16;
                double tol = 4 * eps * mag + 1e-30;
                if (std::fabs(double(got[0]) - ref) > tol || memcmp(&got[0], &got[1], sizeof(T)) != 0) {
                    printf("BAD %s n=%lld ox=%d oy=%d got %.17g (again %.17g) want %.17g tol %.3g\n", K<T>::name, n, ox, oy,
                           double(got[0]), double(got[1]), ref, tol);
                    bad++;
                }
            }
        }
    }
    printf("check %s: %d bad\n", K<T>::name, bad);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(r));
    CK(cudaFree(p));
    CK(cudaFree(t));
    return bad;
}

template <typename T>
static void bench(int reps) {
    const int caps[] = {528, 1024, 2048, 4096};
    const int pers[] = {8, 16};
    for (int lg : {20, 22, 24, 26, 28}) {
        long long n = 1LL << lg;
        T *x, *y, *z, *r;
        void* p;
        unsigned* t;
        CK(cudaMalloc(&x, n * sizeof(T)));
        CK(cudaMalloc(&y, n * sizeof(T)));
        CK(cudaMalloc(&z, n * sizeof(T)));
        CK(cudaMalloc(&r, sizeof(T)));
        CK(cudaMalloc(&p, 4096 * 8));
        CK(cudaMalloc(&t, 4));
        CK(cudaMemset(t, 0, 4));
        CK(cudaMemset(x, 0x3c, n * sizeof(T)));
        CK(cudaMemset(y, 0x3c, n * sizeof(T)));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        void* flush;
        CK(cudaMalloc(&flush, kFlushBytes));
        const int nv = 1 + 8;
        std::vector<std::vector<float>> ms(nv);
        for (int rep = 0; rep < reps + 2; rep++) {
            for (int v = 0; v < nv; v++) {
                CK(cudaMemsetAsync(flush, rep & 0xff, kFlushBytes)); // out of L2: each run starts cold
                CK(cudaEventRecord(e0));
                if (v == 0) {
                    CK(cudaMemcpyAsync(z, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
                } else {
                    int cap = caps[(v - 1) / 2], per = pers[(v - 1) % 2];
                    K<T>::launch(blocksFor(n, per, cap), (int)n, x, y, p, t, r);
                }
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float m;
                CK(cudaEventElapsedTime(&m, e0, e1));
                if (rep >= 2) ms[v].push_back(m);
            }
        }
        for (auto& v : ms) std::sort(v.begin(), v.end());
        double copy = ms[0][ms[0].size() / 2];
        printf("%s n=2^%d copy %.4f ms (%.0f GB/s r+w)", K<T>::name, lg, copy, 2.0 * n * sizeof(T) / copy / 1e6);
        for (int v = 1; v < nv; v++) {
            double d = ms[v][ms[v].size() / 2];
            printf(" | cap %d per %d: %.4f ms %.3f", caps[(v - 1) / 2], pers[(v - 1) % 2], d, copy / d);
        }
        printf("\n");
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(z));
        CK(cudaFree(r));
        CK(cudaFree(p));
        CK(cudaFree(t));
        CK(cudaFree(flush));
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e1));
    }
}

// readAll reads n float4 and writes their sum where no one looks unless
// it is exactly 1234.5: L2 ends up holding clean lines of p.
__global__ void readAll(const float4* p, size_t n, float* sink) {
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = __ldcg(p + i);
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 1234.5f) *sink = s;
}

// benchTail looks at where the time of the float32 dot product goes: each
// block's start and end on the global timer, then the load hints timed
// against the copy, with L2 left full of dirty lines before each run (a
// 256 MiB write: the method of record) and full of clean ones (the same
// write, then 256 MiB read).
static void benchTail(int reps) {
    for (int lg : {22, 24, 26, 28}) {
        const long long n = 1LL << lg;
        float *x, *y, *z, *r;
        double* p;
        unsigned* t;
        unsigned long long* times;
        CK(cudaMalloc(&x, n * 4));
        CK(cudaMalloc(&y, n * 4));
        CK(cudaMalloc(&z, n * 4));
        CK(cudaMalloc(&r, 8));
        CK(cudaMalloc(&p, 8192 * 8));
        CK(cudaMalloc(&t, 4));
        CK(cudaMalloc(&times, (2 * 8192 + 1) * 8));
        CK(cudaMemcpyToSymbol(g_times, &times, sizeof(times)));
        CK(cudaMemset(t, 0, 4));
        CK(cudaMemset(x, 0x3c, n * 4));
        CK(cudaMemset(y, 0x3c, n * 4));
        void *flush, *clean;
        CK(cudaMalloc(&flush, kFlushBytes));
        CK(cudaMalloc(&clean, kFlushBytes));
        CK(cudaMemset(clean, 0, kFlushBytes));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const int g = blocksFor(n, 8, 1024);
        for (int hint = 1; hint <= 3 && lg == 24; hint += 2) {
            for (int rep = 0; rep < 3; rep++) {
                CK(cudaMemsetAsync(flush, rep & 0xff, kFlushBytes));
                if (hint == 1) {
                    dot_variant_f32<false, 2, 256, 1, 1, true><<<g, 256>>>((int)n, x, y, p, t, r);
                } else {
                    dot_variant_f32<false, 2, 256, 3, 1, true><<<g, 256>>>((int)n, x, y, p, t, r);
                }
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                std::vector<unsigned long long> h(2 * g + 2);
                CK(cudaMemcpy(h.data(), times, h.size() * 8, cudaMemcpyDeviceToHost));
                unsigned long long t0 = ~0ull;
                std::vector<double> ends, starts;
                for (int b = 0; b < g; b++) t0 = std::min(t0, h[2 * b]);
                for (int b = 0; b < g; b++) {
                    starts.push_back((h[2 * b] - t0) / 1e3);
                    ends.push_back((h[2 * b + 1] - t0) / 1e3);
                }
                std::sort(starts.begin(), starts.end());
                std::sort(ends.begin(), ends.end());
                auto q = [](const std::vector<double>& v, double f) { return v[(size_t)(f * (v.size() - 1))]; };
                printf("timeline f32 2^%d finish %d run %d (us from the first start): starts max %.2f | ends min %.2f "
                       "p10 %.2f p50 %.2f p90 %.2f max %.2f | ticket back %.2f | result written %.2f\n",
                       lg, hint, rep, starts.back(), ends.front(), q(ends, 0.1), q(ends, 0.5), q(ends, 0.9), ends.back(),
                       (h[2 * g + 1] - t0) / 1e3, (h[2 * g] - t0) / 1e3);
            }
        }
        const char* names[] = {"copy", "shipped", "line", "line acq_rel ticket", "line warp-0 finish", "line no finish"};
        const int nk = 6, nv = 2 * nk;
        std::vector<std::vector<float>> ms(nv);
        std::vector<float> res(nv, 0.f);
        for (int rep = 0; rep < reps + 2; rep++) {
            for (int v = 0; v < nv; v++) {
                CK(cudaMemsetAsync(flush, rep & 0xff, kFlushBytes));
                if (v >= nk) readAll<<<1056, 256>>>((const float4*)clean, kFlushBytes / 16, r + 1);
                CK(cudaEventRecord(e0));
                switch (v % nk) {
                case 0: CK(cudaMemcpyAsync(z, x, n * 4, cudaMemcpyDeviceToDevice)); break;
                case 1: launchShipped<float>(g, (int)n, x, y); break;
                case 2: dot_variant_f32<false, 2, 256, 1, 1><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 3: dot_variant_f32<false, 2, 256, 2, 1><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 4: dot_variant_f32<false, 2, 256, 3, 1><<<g, 256>>>((int)n, x, y, p, t, r); break;
                case 5: dot_variant_f32<false, 2, 256, 0, 1><<<g, 256>>>((int)n, x, y, p, t, r); break;
                }
                CK(cudaGetLastError());
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float m;
                CK(cudaEventElapsedTime(&m, e0, e1));
                if (rep >= 2) ms[v].push_back(m);
                if (rep == reps + 1 && v % nk != 0) CK(cudaMemcpy(&res[v], r, 4, cudaMemcpyDeviceToHost));
            }
        }
        for (auto& v : ms) std::sort(v.begin(), v.end());
        for (int clean2 = 0; clean2 < 2; clean2++) {
            const double copy = ms[clean2 * nk][ms[0].size() / 2];
            printf("hints f32 n=2^%d, L2 %s: copy %.4f ms", lg, clean2 ? "clean" : "dirty", copy);
            for (int v = 1; v < nk; v++) {
                const double m = ms[clean2 * nk + v][ms[0].size() / 2];
                printf(" | %s %.4f ms %.3f (= %.7g)", names[v], m, copy / m, res[clean2 * nk + v]);
            }
            printf("\n");
        }
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(z));
        CK(cudaFree(r));
        CK(cudaFree(p));
        CK(cudaFree(t));
        CK(cudaFree(times));
        CK(cudaFree(flush));
        CK(cudaFree(clean));
    }
}

// benchLimbs: the float32 dot product finished by integer atomics into
// limbs (no ticket, no last block) against the copy, the shipped kernel,
// its line-load twin and that twin with no finish, one process; then a
// check of the limbs' value against the shipped kernel's result.
static void benchLimbs(int reps) {
    for (int lg : {22, 24, 26}) {
        const long long n = 1LL << lg;
        float *x, *y, *z, *r;
        double* p;
        unsigned* t;
        CK(cudaMalloc(&x, n * 4));
        CK(cudaMalloc(&y, n * 4));
        CK(cudaMalloc(&z, n * 4));
        CK(cudaMalloc(&r, 8));
        CK(cudaMalloc(&p, 8192 * 8));
        CK(cudaMalloc(&t, 8));
        CK(cudaMemset(t, 0, 8));
        CK(cudaMemset(p, 0, 8192 * 8));
        {
            std::mt19937 rng(lg);
            std::uniform_real_distribution<float> u(-1, 1);
            std::vector<float> h(n);
            for (auto& v : h) v = u(rng);
            CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
            for (auto& v : h) v = u(rng);
            CK(cudaMemcpy(y, h.data(), n * 4, cudaMemcpyHostToDevice));
        }
        void* flush;
        CK(cudaMalloc(&flush, kFlushBytes));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const int g = blocksFor(n, 8, 1024);
        const char* names[] = {"copy", "shipped", "line no finish", "line limbs", "line limbs again",
                               "line limbs cleared first", "line limbs acc4", "line limbs 1056 blocks", "shipped again"};
        const int nv = 9;
        std::vector<std::vector<float>> ms(nv);
        for (int rep = 0; rep < reps + 2; rep++) {
            for (int v = 0; v < nv; v++) {
                CK(cudaMemsetAsync(flush, rep & 0xff, kFlushBytes));
                CK(cudaEventRecord(e0));
                switch (v) {
                case 0: CK(cudaMemcpyAsync(z, x, n * 4, cudaMemcpyDeviceToDevice)); break;
                case 1: launchShipped<float>(g, (int)n, x, y); break;
                case 2: dot_variant_f32<false, 2, 256, 0, 1><<<g, 256>>>((int)n, x, y, p + 1024, t, r); break;
                case 3:
                case 4: dot_variant_f32<false, 2, 256, 4, 1><<<g, 256>>>((int)n, x, y, p, t + 1, r); break;
                case 5: dot_variant_f32<false, 2, 256, 5, 1><<<g, 256>>>((int)n, x, y, p, t + 1, r); break;
                case 6: dot_variant_f32<false, 4, 256, 4, 1><<<g, 256>>>((int)n, x, y, p, t + 1, r); break;
                case 7:
                    dot_variant_f32<false, 2, 256, 4, 1><<<blocksFor(n, 8, 1056), 256>>>((int)n, x, y, p, t + 1, r);
                    break;
                case 8: launchShipped<float>(g, (int)n, x, y); break;
                }
                CK(cudaGetLastError());
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float m;
                CK(cudaEventElapsedTime(&m, e0, e1));
                if (rep >= 2) ms[v].push_back(m);
            }
        }
        // The check: limbs cleared, one launch, its value against the
        // shipped kernel's float32 result.
        CK(cudaMemset(p, 0, 8192 * 8));
        dot_variant_f32<false, 2, 256, 4, 1><<<g, 256>>>((int)n, x, y, p, t + 1, r);
        launchShipped<float>(g, (int)n, x, y);
        CK(cudaDeviceSynchronize());
        std::vector<unsigned long long> l(kLimbs);
        CK(cudaMemcpy(l.data(), p, kLimbs * 8, cudaMemcpyDeviceToHost));
        const float shipped = float(limbsValue(shippedWords()));
        const long double lv = limbsValue(l);
        for (auto& v : ms) std::sort(v.begin(), v.end());
        const double copy = ms[0][ms[0].size() / 2];
        printf("limbs f32 n=2^%d copy %.4f ms", lg, copy);
        for (int v = 1; v < nv; v++) printf(" | %s %.4f ms %.3f", names[v], ms[v][ms[v].size() / 2], copy / ms[v][ms[v].size() / 2]);
        printf(" | limbs %.9Lg shipped %.9g %s\n", lv, (double)shipped, std::fabs((double)lv - shipped) <= 1e-6 * std::fabs((double)shipped) + 1e-6 ? "ok" : "BAD");
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(z));
        CK(cudaFree(r));
        CK(cudaFree(p));
        CK(cudaFree(t));
        CK(cudaFree(flush));
    }
}

// Hybrid static and dynamic work (2026-11-25): every block's threads first
// take PCT percent of the vectors in a grid-stride loop, as the shipped
// kernel does, then the block takes chunks of the rest (CH float4 pairs a
// thread) from a counter until none is left, so that blocks on SMs that
// stream faster take more. The result keeps its bits: each chunk's sum
// and each block's static sum are fixed by n and the grid (never by who
// ran them), and every one goes exactly into limbs, first the block's own
// in shared memory, at the end into acc by integer atomics.
// The kernel measured here is dot_onepass.cu's own dot_tail (shipped
// since as dot_onepass_tail_*), with the chunk size and the static part as
// the harness's parameters; its counter is word DOT_ONEPASS_COUNTER of acc.
template <int CH, int PCT>
__global__ void __launch_bounds__(DOT_ONEPASS_THREADS)
    dot_hybrid_f32(int n, const float* __restrict__ x, const float* __restrict__ y, unsigned long long* acc,
                   unsigned long long* next) {
    dot_onepass_detail::dot_tail<float, CH, PCT>(n, x, y, acc, next);
}

// dyn: float32 at 2^22, 2^24 and 2^26, the copy, the shipped kernel and the
// hybrid variants taking turns, L2 flushed before each run; each variant's
// limbs checked against the shipped result and for the same words twice.
static void benchDyn(int reps) {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    typedef void (*HybridFn)(int, const float*, const float*, unsigned long long*, unsigned long long*);
    struct V { const char* name; HybridFn fn; int perSM; };
    const V vs[] = {{"dyn ch2 0%", dot_hybrid_f32<2, 0>, 8},     {"dyn ch4 0%", dot_hybrid_f32<4, 0>, 8},
                    {"dyn ch2 50%", dot_hybrid_f32<2, 50>, 8},   {"dyn ch2 80%", dot_hybrid_f32<2, 80>, 8},
                    {"dyn ch4 80%", dot_hybrid_f32<4, 80>, 8},   {"dyn ch2 90%", dot_hybrid_f32<2, 90>, 8},
                    {"dyn ch8 90%", dot_hybrid_f32<8, 90>, 8},   {"dyn ch2 80% 4/SM", dot_hybrid_f32<2, 80>, 4},
                    {"dyn ch1 80%", dot_hybrid_f32<1, 80>, 8}};
    const int nvar = sizeof(vs) / sizeof(vs[0]);
    for (int lg : {22, 24, 26}) {
        const long long n = 1LL << lg;
        float *x, *y, *z;
        unsigned long long* acc;
        unsigned long long* next; // cleared by block 0, not read
        CK(cudaMalloc(&x, n * 4));
        CK(cudaMalloc(&y, n * 4));
        CK(cudaMalloc(&z, n * 4));
        CK(cudaMalloc(&acc, DOT_ONEPASS_ACC_WORDS * 8 * nvar));
        CK(cudaMalloc(&next, DOT_ONEPASS_ACC_WORDS * 8));
        {
            std::mt19937 rng(lg);
            std::uniform_real_distribution<float> u(-1, 1);
            std::vector<float> h(n);
            for (auto& v : h) v = u(rng);
            CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
            for (auto& v : h) v = u(rng);
            CK(cudaMemcpy(y, h.data(), n * 4, cudaMemcpyHostToDevice));
        }
        void* flush;
        CK(cudaMalloc(&flush, kFlushBytes));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const int g = blocksFor(n, 8, 1024);
        std::vector<std::vector<float>> ms(nvar + 3);
        std::vector<std::vector<unsigned long long>> words(nvar);
        for (int rep = 0; rep < reps + 2; rep++) {
            for (int v = 0; v < nvar + 3; v++) {
                const int k = v - 2; // 0.. nvar-1: a hybrid variant; nvar: shipped again
                if (k >= 0 && k < nvar) {
                    CK(cudaMemsetAsync(acc + k * DOT_ONEPASS_ACC_WORDS, 0, DOT_ONEPASS_ACC_WORDS * 8));
                }
                CK(cudaMemsetAsync(flush, rep & 0xff, kFlushBytes));
                CK(cudaEventRecord(e0));
                if (v == 0) CK(cudaMemcpyAsync(z, x, n * 4, cudaMemcpyDeviceToDevice));
                else if (v == 1 || k == nvar) launchShipped<float>(g, (int)n, x, y);
                else vs[k].fn<<<sms * vs[k].perSM, 256>>>((int)n, x, y, acc + k * DOT_ONEPASS_ACC_WORDS, next);
                CK(cudaGetLastError());
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float m;
                CK(cudaEventElapsedTime(&m, e0, e1));
                if (rep >= 2) ms[v].push_back(m);
                if (k >= 0 && k < nvar) {
                    std::vector<unsigned long long> w(kLimbs + 1);
                    CK(cudaMemcpy(w.data(), acc + k * DOT_ONEPASS_ACC_WORDS, (kLimbs + 1) * 8, cudaMemcpyDeviceToHost));
                    if (words[k].empty()) words[k] = w;
                    else if (words[k] != w) { printf("dyn %s: words differ from run to run: BAD\n", vs[k].name); }
                }
            }
        }
        const float shipped = float(limbsValue(shippedWords()));
        for (auto& v : ms) std::sort(v.begin(), v.end());
        const double copy = ms[0][ms[0].size() / 2];
        printf("dyn f32 n=2^%d copy %.4f ms | shipped %.3f again %.3f", lg, copy, copy / ms[1][ms[1].size() / 2],
               copy / ms[nvar + 2][ms[nvar + 2].size() / 2]);
        for (int k = 0; k < nvar; k++) {
            const long double lv = limbsValue(words[k]);
            const bool ok = std::fabs((double)lv - shipped) <= 1e-6 * std::fabs((double)shipped) + 1e-6;
            printf(" | %s %.3f%s", vs[k].name, copy / ms[k + 2][ms[k + 2].size() / 2], ok ? "" : " BAD");
        }
        printf("\n");
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(z));
        CK(cudaFree(acc));
        CK(cudaFree(next));
        CK(cudaFree(flush));
    }
}

// grid: float32 from 2^23 to 2^26, the copy against the shipped kernel on
// grids of 256 to 1024 blocks and the hybrid (80% static, chunks of 1 or
// 2) on 3, 4 and 6 blocks an SM, taking turns, two rounds.
static void benchGrid(int reps) {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int grids[] = {256, 384, 512, 768, 1024};
    typedef void (*HybridFn)(int, const float*, const float*, unsigned long long*, unsigned long long*);
    struct V { const char* name; HybridFn fn; int perSM; };
    const V hs[] = {{"dyn ch1 80% 4/SM", dot_hybrid_f32<1, 80>, 4}, {"dyn ch2 80% 4/SM", dot_hybrid_f32<2, 80>, 4},
                    {"dyn ch2 80% 3/SM", dot_hybrid_f32<2, 80>, 3}, {"dyn ch2 80% 6/SM", dot_hybrid_f32<2, 80>, 6},
                    {"dyn ch2 90% 4/SM", dot_hybrid_f32<2, 90>, 4}};
    const int ng = sizeof(grids) / sizeof(grids[0]), nh = sizeof(hs) / sizeof(hs[0]);
    for (int round = 0; round < 2; round++)
    for (long long n : {1LL << 23, 1LL << 24, 3LL << 23, 1LL << 25, 1LL << 26}) {
        float *x, *y, *z;
        unsigned long long* acc;
        unsigned long long* next; // cleared by block 0, not read
        CK(cudaMalloc(&x, n * 4));
        CK(cudaMalloc(&y, n * 4));
        CK(cudaMalloc(&z, n * 4));
        CK(cudaMalloc(&acc, DOT_ONEPASS_ACC_WORDS * 8));
        CK(cudaMalloc(&next, DOT_ONEPASS_ACC_WORDS * 8));
        fillRandom<<<1024, 256>>>(x, n, 1);
        fillRandom<<<1024, 256>>>(y, n, 2);
        void* flush;
        CK(cudaMalloc(&flush, kFlushBytes));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const int nv = 1 + ng + nh;
        std::vector<std::vector<float>> ms(nv);
        for (int rep = 0; rep < reps + 2; rep++) {
            for (int v = 0; v < nv; v++) {
                const int h = v - 1 - ng;
                if (h >= 0) {
                    CK(cudaMemsetAsync(acc, 0, DOT_ONEPASS_ACC_WORDS * 8));
                }
                CK(cudaMemsetAsync(flush, rep & 0xff, kFlushBytes));
                CK(cudaEventRecord(e0));
                if (v == 0) CK(cudaMemcpyAsync(z, x, n * 4, cudaMemcpyDeviceToDevice));
                else if (h < 0) launchShipped<float>(grids[v - 1], (int)n, x, y);
                else hs[h].fn<<<sms * hs[h].perSM, 256>>>((int)n, x, y, acc, next);
                CK(cudaGetLastError());
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float m;
                CK(cudaEventElapsedTime(&m, e0, e1));
                if (rep >= 2) ms[v].push_back(m);
            }
        }
        for (auto& v : ms) std::sort(v.begin(), v.end());
        const double copy = ms[0][ms[0].size() / 2];
        printf("grid f32 n=%lld copy %.4f ms", n, copy);
        for (int g = 0; g < ng; g++) printf(" | %d %.3f", grids[g], copy / ms[1 + g][ms[1 + g].size() / 2]);
        for (int h = 0; h < nh; h++) printf(" | %s %.3f", hs[h].name, copy / ms[1 + ng + h][ms[1 + ng + h].size() / 2]);
        printf("\n");
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(z));
        CK(cudaFree(acc));
        CK(cudaFree(next));
        CK(cudaFree(flush));
    }
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IONBF, 0);
    std::string mode = argc > 1 ? argv[1] : "check";
    if (mode == "check") {
        int bad = check<float>() + check<double>();
        return bad ? 1 : 0;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 51;
    if (mode == "tail") {
        benchTail(reps);
        return 0;
    }
    if (mode == "limbs") {
        benchLimbs(reps);
        return 0;
    }
    if (mode == "variants") {
        benchVariants(reps);
        return 0;
    }
    if (mode == "grid") {
        benchGrid(reps);
        return 0;
    }
    if (mode == "dyn") {
        benchDyn(reps);
        return 0;
    }
    bench<float>(reps);
    bench<double>(reps);
    return 0;
}
