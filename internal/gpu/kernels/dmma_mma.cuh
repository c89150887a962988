// dmma_mma.cuh: the FP64 tensor-core steps that matmul_dmma.cu and
// matmul_dmma_tma.cu share (mma.sync m16n8k8 and m16n8k16 on sm_90, their
// m8n8k4 quarters on sm_80). build.sh hashes it with the .cu files.
#pragma once

namespace dmma {

// mma16x8x8 adds a(16x8) * b(8x8) into c(16x8), in the PTX ISA's fragment
// layout for a warp's lane (g = lane/4, t = lane%4): a = {A[g][t],
// A[g+8][t], A[g][t+4], A[g+8][t+4]}, b = {B[t][g], B[t+4][g]}, c = {C[g][2t],
// C[g][2t+1], C[g+8][2t], C[g+8][2t+1]}. sm_80 has the m8n8k4 shape only,
// whose fragments are the quarters of these: four of them do the same.
__device__ __forceinline__ void mma16x8x8(double (&c)[4], const double (&a)[4], const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[0]), "+d"(c[1]) : "d"(a[0]), "d"(b[0]));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[2]), "+d"(c[3]) : "d"(a[1]), "d"(b[0]));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[0]), "+d"(c[1]) : "d"(a[2]), "d"(b[1]));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(c[2]), "+d"(c[3]) : "d"(a[3]), "d"(b[1]));
#endif
}

// mma16x8x16 adds a(16x16) * b(16x8) into c(16x8): the fragments of two
// 16x8x8 steps side by side (a = the first step's four then the second's,
// b likewise), which is the PTX ISA's m16n8k16 layout for .f64.
__device__ __forceinline__ void mma16x8x16(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
    mma16x8x8(c, reinterpret_cast<const double(&)[4]>(a[0]), reinterpret_cast<const double(&)[2]>(b[0]));
    mma16x8x8(c, reinterpret_cast<const double(&)[4]>(a[4]), reinterpret_cast<const double(&)[2]>(b[2]));
#endif
}

// mma_step is a step of 8 or 16 along K, chosen by the fragments' sizes.
__device__ __forceinline__ void mma_step(double (&c)[4], const double (&a)[4], const double (&b)[2]) { mma16x8x8(c, a, b); }
__device__ __forceinline__ void mma_step(double (&c)[4], const double (&a)[8], const double (&b)[4]) { mma16x8x16(c, a, b); }

} // namespace dmma
