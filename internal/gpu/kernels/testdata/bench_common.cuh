// bench_common.cuh: what the CUDA harnesses in this folder share: error
// checks that stop the program with the failing call's text, random
// operands made on the device, and a kernel that keeps the GPU busy for a
// while so that a timed span starts with the host's launches already
// queued (the method of goamp's benchmarks).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)
#define CB(x)                                                                           \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

// fillRandom fills p with n values uniform in [-1, 1), a hash of each
// index and seed: the same operands on every run.
template <typename T>
__global__ void fillRandom(T* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed * 40503u;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[i] = (T)(x & 0xffffff) / (T)0x800000 - T(1);
    }
}

// spinKernel waits ns nanoseconds of the GPU's clock.
__global__ void spinKernel(long long ns) {
    long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
