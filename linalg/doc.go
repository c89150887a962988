// Package linalg multiplies matrices and takes dot products of vectors held
// in amp.ArrayViews, on any accelerator, with kernels chosen by name.
//
// MatMul computes C = alpha*A*B + beta*C (BLAS GEMM, row-major, no
// transposes) and Dot computes the dot product of two vectors, for float32,
// float64 and int32. Each runs one of the registered kernels:
//
//	naive   the sequential triple loop (C++ AMP's MultiplyWithOutAMP); the reference
//	simple  one model thread per element of C (MultiplyWithAMP)
//	tiled   tile-static tiles and two barriers per step, with bounds-checked
//	        loads and guarded stores, so any M, N, K and tile size 1 to 32 work
//	        (32 by default on the CPU, where each barrier costs a coroutine switch)
//	auto    the best kernel present for the accelerator
//
// For Dot, "tiled" is the shared-memory tree reduction of CUDA's classic dot
// product: a grid-stride loop, a partial sum per tile, then a final sum in
// tile order, so the same inputs and tile size always give the same result.
//
// Kernels lists what is registered. Shapes that do not agree, an output
// that overlaps an input, unknown kernel names and bad tile sizes are errors
// (ErrShape, ErrOverlap, ErrUnknownKernel, ErrTileSize), never panics.
package linalg
