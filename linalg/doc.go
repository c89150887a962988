// Package linalg multiplies matrices and takes dot products of vectors held
// in amp.ArrayViews, on the CPU or a CUDA GPU, with kernels chosen by name.
//
// MatMul computes C = alpha*A*B + beta*C (BLAS GEMM, row-major, no
// transposes) and Dot computes the dot product of two vectors, for float32,
// float64 and int32. Each runs on the accelerator of Options.View (by
// default amp.DefaultAccelerator: the one GOAMP_DEVICE names, else a GPU
// when there is one, else the CPU), with the kernel that Options.Kernel
// names; "auto" (or "") picks the fastest kernel for that accelerator, as
// measured in docs/PERFORMANCE.md.
//
// Matrix multiply on the CPU:
//
//	packed  auto's choice: the packed, cache-blocked engine of internal/cpu/gemm
//	        (the GotoBLAS/BLIS design), on GOMAXPROCS threads, with AVX-512 or
//	        AVX2/FMA micro-kernels where the CPU has them
//	naive   the sequential triple loop (MultiplyWithOutAMP)
//	simple  parallel_for_each, one model thread per element of C (MultiplyWithAMP)
//	tiled   tile_static tiles of A and B and two barriers a step (MultiplyWithTiling),
//	        for any M, N and K through bounds-checked loads and guarded stores;
//	        tile 1 to 32, 32 by default (each barrier costs a coroutine switch
//	        on the CPU, so fewer, longer steps win)
//
// Dot product on the CPU:
//
//	vector  auto's choice: one goroutine over the views' memory, with several
//	        accumulators (AVX2/FMA where the CPU has them) for float32 and
//	        float64, a plain loop for int32
//	naive   the sequential loop
//	tiled   the shared-memory tree reduction: a grid-stride loop into a partial
//	        sum per thread, a tree of halvings in tile_static memory between
//	        barriers, one partial a tile, added in tile order; 1 to 1024
//	        threads a tile, 256 by default, at most 64 tiles
//
// On a CUDA GPU the kernels are CUDA C, compiled into the binary
// (internal/gpu/kernels):
//
//	matmul dmma   auto's choice for float64 (float64 only): the FP64 tensor
//	              cores (mma.sync), 64x64 tiles of C a block of 4 warps,
//	              panels of A and B through a 3-step cp.async ring in shared
//	              memory; any M, N and K, every transpose, batches
//	matmul wgmma  auto's choice for float32 with a reduced Options.Precision
//	              on Hopper (compute capability 9.0 only; float32 only; tf32,
//	              bf16 or fp16, never exact): op(A) and op(B)^T packed along
//	              K and rounded (in tf32 TMA reads and rounds operands
//	              where they lie: nn, nt and tt whose operands start and
//	              step on 16 bytes pack nothing, others pack one or both),
//	              then wgmma fed by TMA, 128x256 tiles of C a
//	              block of a producer and two consumer warpgroups over a
//	              4-step mbarrier ring (in tf32, past one wave of tiles, a
//	              block an SM walking several), sums in float32; any M, N
//	              and K, every transpose, batches. auto gives thin products (1/M +
//	              1/N over 1/220) that it would pack (bf16, fp16, tf32 tn,
//	              operands off 16 bytes) to mma, whose operands need no
//	              packing
//	matmul mma    auto's choice for float32 with a reduced Options.Precision
//	              on other GPUs from Ampere on (float32 only; tf32, bf16 or
//	              fp16, never exact): the tensor cores (mma.sync), each
//	              operand rounded to the precision as it is read, sums in
//	              float32; 128x128 tiles of C a block of 8 warps, panels
//	              through a 4-step cp.async ring; any M, N and K, every
//	              transpose, batches
//	matmul reg128 auto's choice for float32 and int32: 128x128 tiles of C a
//	              block of 256 threads, 8x8 elements a thread accumulated in
//	              registers, panels of A and B double-buffered in shared
//	              memory with their loads two steps ahead; any M, N and K;
//	              on Hopper and newer float32 tn fed by TMA, and float32 nn,
//	              nt and tt of enough work on transposed copies into it
//	matmul tiled  TILE x TILE tiles of A and B in shared memory, with
//	              bounds-checked loads; tile 8, 16 or 32, 16 by default
//	matmul naive  one GPU thread per element of C, reading global memory
//	dot onepass   auto's choice: one kernel whose blocks add their partials
//	              exactly into a fixed-point accumulator on the device,
//	              rounded once on the host; float32 accumulated in float64;
//	              aligned float vectors of 32 to 128 MiB on a twin whose
//	              blocks take the last fifth in chunks as they finish
//	dot warp      grid-stride partial sums reduced with warp shuffles; a
//	              power of two from 1 to 1024 threads a block, 256 by default
//	dot tiled     grid-stride partial sums and the tree reduction in shared
//	              memory; block sizes as for warp
//
// The warp and tiled dot kernels leave one partial sum a block, at most 1024
// blocks, which the host adds in block order; onepass adds its partials on
// the device, exactly, so their order does not matter. Every dot kernel's
// partials are fixed by the vector's length, its alignment and the tile
// size, so the same inputs give the same result on every run on one
// machine; float32 sums are accumulated
// in float32, except by onepass (float64). The kernels' Description fields (see Kernels) say what each
// does in a line.
//
// The techniques and their public sources:
//
//   - naive, simple and tiled on the CPU: MultiplyWithOutAMP, MultiplyWithAMP
//     and MultiplyWithTiling of "Walkthrough: Matrix Multiplication" in
//     Microsoft's C++ AMP documentation
//     (https://learn.microsoft.com/cpp/parallel/amp/walkthrough-matrix-multiplication).
//   - The tiled multiply for any M, N and K (loads that put 0 where no
//     element exists, stores only inside C): Kirk and Hwu, "Programming
//     Massively Parallel Processors", tiled matrix multiplication and its
//     boundary checks (chapter 4 of the third edition, chapter 5 of the
//     fourth).
//   - The tiled dot products: the shared-memory tree reduction of the dot
//     product in Sanders and Kandrot, "CUDA by Example", chapter 5.
//   - The warp dot product: the warp-shuffle reduction of Luitjens, "Faster
//     Parallel Reductions on Kepler" (NVIDIA Developer Blog, 2014).
//   - packed: Goto and van de Geijn, "Anatomy of High-Performance Matrix
//     Multiplication" (ACM TOMS, 2008), and Van Zee and van de Geijn, "BLIS:
//     A Framework for Rapidly Instantiating BLAS Functionality" (ACM TOMS,
//     2015).
//
// Kernels lists what is registered; Choose tells which kernel and tile an
// Options resolves to. Shapes that do not agree, an output that overlaps an
// input, unknown kernel names and bad tile sizes are errors (ErrShape,
// ErrOverlap, ErrUnknownKernel, ErrTileSize), never panics; asking for an
// accelerator that is not there is an error wrapping amp.ErrNoAccelerator.
package linalg
