// Package amp brings the data-parallel model of C++ AMP to Go: compute
// domains (Extent, Index), views of data that move between the host and
// accelerators (ArrayView), kernels run once per point of a domain
// (ParallelForEach), and tiles whose threads share memory and meet at
// barriers (Tile, TiledIndex, TileStatic, Barrier).
//
// The names follow C++ AMP so that a reader of its documentation finds their
// way:
//
//	C++ AMP                              goamp
//	extent<N>, index<N>                  Extent, Index (ranks 1 to 3)
//	array_view<T,N>                      ArrayView[T]
//	  synchronize, refresh,                Synchronize, Refresh,
//	  discard_data, section                DiscardData, Section
//	parallel_for_each(ext, kernel)       ParallelForEach(ext, func(Index))
//	ext.tile<T0,T1>(), pad, truncate     ext.Tile(t0, t1), Pad, Truncate
//	parallel_for_each(tiled, kernel)     ParallelForEachTiled(tiled, func(TiledIndex))
//	tiled_index: global, local, tile,    TiledIndex: Global, Local, Tile,
//	  tile_origin, barrier                 TileOrigin, Barrier
//	tile_static T x[n]                   x := TileStatic[T](t, n)
//	tile_barrier::wait                   t.Barrier.Wait()
//	accelerator, accelerator_view        Accelerator, AcceleratorView
//	CPPAMP_DEFAULT_ACCELERATOR           GOAMP_DEVICE
//	invalid_compute_domain, ...          ErrInvalidComputeDomain, ... (errors.Is)
//
// # Kernels on the CPU
//
// A kernel is a Go function, and Go functions run on the CPU accelerator.
// ParallelForEach hands the points of its domain to GOMAXPROCS goroutines
// in chunks. ParallelForEachTiled runs each tile's threads as coroutines
// that are all alive until the tile ends: a thread runs until it waits at
// the tile's barrier or returns, then the next one runs, and the barrier
// opens when every thread waits at it. Tiles run in parallel, up to
// GOMAXPROCS at once. Because scheduling inside a tile is cooperative, a
// kernel that forgets a barrier reads stale tile-static memory every time,
// not now and then, and a tile whose threads do not all wait at the same
// barriers is reported as a *DivergenceError rather than hanging.
//
// Today the CPU accelerator is the only one. Accelerators with memory of
// their own (a CUDA accelerator is next) will run kernels written for them,
// which package linalg picks; ArrayView already keeps track of such copies,
// to upload a view when a kernel there first uses it and bring it back on
// Synchronize.
//
// # Errors
//
// Functions return errors rather than panicking; every error wraps one of
// the sentinel errors (ErrInvalidExtent, ErrInvalidComputeDomain, ...). A
// kernel that panics makes ParallelForEach return a *KernelPanicError naming
// the thread. Element access out of a view's bounds panics, like slice
// indexing, and inside a kernel that panic becomes such an error.
package amp
