// Package kernels holds the CUDA C kernels of goamp's GPU accelerator and
// their compiled form, embedded in the Go binary so that a user needs the
// NVIDIA driver and nothing else (no CUDA toolkit, no cgo).
//
// There is one .cu file per technique, named after it, with its tile or block
// shape, the public source it follows and its last measured fraction of
// cuBLAS in a comment at the top:
//
//	matmul_naive.cu   one thread per element of C, straight from global memory
//	                  (MultiplyWithAMP of the C++ AMP "Walkthrough: Matrix
//	                  Multiplication" on Microsoft Learn, with bounds checks)
//	matmul_tiled.cu   TILE x TILE shared-memory tiles (8, 16, 32), bounds-checked
//	                  loads and guarded stores for any M, N, K (Kirk and Hwu,
//	                  "Programming Massively Parallel Processors", the tiled
//	                  matrix multiplication with boundary checks: chapter 4 of
//	                  the third edition, chapter 5 of the fourth)
//	matmul_reg128.cu  128x128 tiles of C a block of 256 threads, 8x8 a thread in
//	                  registers, panels double-buffered in shared memory with
//	                  their loads two steps ahead, every transpose, batches,
//	                  K split across blocks when C has few tiles; float32 tn
//	                  also fed by TMA for Hopper and newer (Volkov and
//	                  Demmel's register blocking; CUTLASS's "Efficient GEMM in
//	                  CUDA" for the shape)
//	matmul_dmma.cu    float64 only, on the FP64 tensor cores (mma.sync m16n8k16 on
//	                  sm_90, m8n8k4 on sm_80): 64x64 tiles of C a block of 4
//	                  warps, panels through a cp.async ring of 3 steps of 16
//	                  along K in shared memory, every transpose, batches, K
//	                  split as reg128's
//	                  (the PTX ISA's fragment layouts; CUTLASS's "Efficient
//	                  GEMM in CUDA" for the pipeline)
//	matmul_mma.cu     float32 rounded to TF32, BF16 or FP16 on the tensor cores
//	                  (mma.sync m16n8k8 and m16n8k16, sm_80 and newer), sums in
//	                  float32: 128x128 tiles of C a block of 8 warps, panels
//	                  through a 4-step cp.async ring, rounded as they are read;
//	                  every transpose, batches, K split as reg128's (the same
//	                  sources as matmul_dmma.cu)
//	transpose.cu      dst = src^T through 32x32 shared-memory tiles padded by a
//	                  column, for batches (NVIDIA's "An Efficient Matrix
//	                  Transpose in CUDA C/C++"): internal/gpu runs float32 nt
//	                  products as tt or nn on a transposed copy of A or B
//	dot_onepass.cu    grid-stride loop of 16-byte loads, warp-shuffle block
//	                  sums, the last block to finish adds the partials on the
//	                  device (the CUDA samples' threadFenceReduction)
//	dot_shared.cu     grid-stride loop, tree reduction in shared memory (the dot
//	                  product of Sanders and Kandrot, "CUDA by Example", chapter 5)
//	dot_warp.cu       grid-stride loop, warp shuffles, one shared slot per warp
//	                  (Luitjens, "Faster Parallel Reductions on Kepler", NVIDIA
//	                  Developer Blog, 2014)
//
// gemm_common.cuh holds what the GEMM kernels share: the grouped block
// order, the cp.async copies of the tensor-core kernels' panels and their
// epilogue.
//
// build.sh compiles each X.cu with nvcc into X.fatbin (SASS for sm_80 and
// sm_90, PTX for compute_90 that the driver JIT-compiles for newer GPUs) and
// records the sources' (and gemm_common.cuh's) sha256 and the nvcc version in SOURCES.sha256. It needs
// nvcc, which the development machine lacks: edit a .cu here, run
// internal/gpu/kernels/build.sh on a machine with nvcc (testdata/device_check.sh
// also checks every kernel there against a host reference), and bring the
// fatbins and SOURCES.sha256 back. The tests, which need neither a GPU nor nvcc,
// fail when a .cu no longer matches SOURCES.sha256, when a .cu and its fatbin
// do not come in pairs, or when a fatbin lacks a kernel this package lists.
//
// The Go side loads an image with cuModuleLoadData (Image) and looks each
// kernel up by its extern "C" name with cuModuleGetFunction (Symbol, Kernels).
// Names are technique, tile (matmul_tiled only) and element type:
// matmul_naive_f32, matmul_tiled16_f64, dot_warp_i32, ... with f32 = float32
// (float), f64 = float64 (double) and i32 = int32 (int; arithmetic wraps as
// Go's int32 does).
//
// Matrix multiply kernels take (int M, int N, int K, T alpha, const T* A,
// int lda, const T* B, int ldb, T beta, T* C, int ldc) and compute
// C = alpha*A*B + beta*C on row-major matrices with row strides lda, ldb and
// ldc; beta == 0 never reads C and alpha == 0 never reads A or B, as in
// reference BLAS. The naive kernel takes any 2-D block shape (up to 1024
// threads; x walks columns, y rows) over a grid that covers C; the tiled ones
// need blocks of exactly TILE x TILE threads and a grid of
// ceil(N/TILE) x ceil(M/TILE) blocks. Launch nothing when M or N is 0.
//
// The GEMM kernels, matmul_reg128_{nn,nt,tn,tt}_T, compute C =
// alpha*op(A)*op(B) + beta*C with op(A) = A^T where the first letter is t
// (A stored K x M) and op(B) = B^T where the second is (B stored N x K),
// for a batch of products at element strides, and take (int M, int N, int
// K, T alpha, const T* A, int lda, long long strideA, const T* B, int ldb,
// long long strideB, T beta, T* C, int ldc, long long strideC, int kSlice,
// T* work) over a grid of (ceil(M/128)*ceil(N/128), S, batch) blocks of
// 256 threads. With S > 1 each block row takes kSlice of K and leaves its
// part in work, which matmul_reg128_reduce_T (int M, int N, int S, const
// T* work, T beta, T* C, int ldc, long long strideC) then adds into C; see
// the file's header and internal/gpu's Gemm, which picks S.
// matmul_dmma_{nn,nt,tn,tt}_f64 take the same arguments over a grid of
// (ceil(M/64)*ceil(N/64), S, batch) blocks of DMMAThreads threads with
// DMMASharedBytes of dynamic shared memory (tn: ceil(M/DMMATNTileM) block
// rows, DMMATNSharedBytes), and leave split products' slices for
// matmul_reg128_reduce_f64. matmul_dmma_tma_{nn,nt,tn,tt}_f64
// (matmul_dmma_tma.cu, sm_90a: fed by TMA) take (int M, int N, int K,
// double alpha, TensorMap a, TensorMap b, double beta, double* C, int ldc,
// long long strideC, int kSlice, double* work), a and b describing op(A)
// and op(B) where they lie (see the file), over a grid of
// (ceil(M/DMMATMATileM)*ceil(N/64), S, batch) blocks of DMMATMAThreads
// threads with DMMATMASharedBytes, kSlice a multiple of 16;
// matmul_dmma_tma_64x64_{nn,nt,tn,tt}_f64 the same over (ceil(M/64)*
// ceil(N/64), S, batch) blocks of DMMATMA64Threads threads with
// DMMATMA64SharedBytes.
//
// transpose_T takes (int rows, int cols, const T* src, int lds, long long
// strideSrc, T* dst, int ldd, long long strideDst) over a grid of
// (ceil(cols/32), min(ceil(rows/32), 65535), batch) blocks of 32x8 threads.
//
// Dot kernels take (int n, const T* x, const T* y, T* partials): a 1-D grid
// of 1-D blocks, blockDim.x a power of two from 1 to 1024, each block writing
// its partial sum to partials[blockIdx.x]; the host adds the gridDim.x
// partials. Their dynamic shared memory, given at launch, is
// blockDim.x*sizeof(T) for dot_shared and (blockDim.x/32)*sizeof(T) for
// dot_warp (see SharedBytes).
package kernels
