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
//	accelerator_view::wait               AcceleratorView.Wait
//	CPPAMP_DEFAULT_ACCELERATOR           GOAMP_DEVICE
//	invalid_compute_domain, ...          ErrInvalidComputeDomain, ... (errors.Is)
//
// The model and the names are those of Microsoft's C++ AMP documentation:
// "C++ AMP Overview" and "Using Tiles" on Microsoft Learn
// (https://learn.microsoft.com/cpp/parallel/amp/cpp-amp-overview and
// https://learn.microsoft.com/cpp/parallel/amp/using-tiles).
//
// # Accelerators
//
// Accelerators lists the accelerators of this machine: the CPU, always, and
// each NVIDIA GPU that the CUDA driver (libcuda.so.1, opened at run time, no
// cgo) reports; CUDAUnavailable says why there is none. DefaultAccelerator
// is the one the environment variable GOAMP_DEVICE names ("cpu", "cuda",
// "cuda:N" or "auto"); when it is unset or "auto", a GPU when there is one,
// else the CPU.
//
// What runs where:
//
//   - Kernels written as Go closures (ParallelForEach, ParallelForEachTiled)
//     run on the CPU accelerator only. The package-level functions always
//     use the CPU; the AcceleratorView methods of a GPU return an error
//     wrapping ErrUnsupported.
//   - Kernels written as top-level Go functions and compiled by goamp's
//     generator (goampgen) run on every accelerator. The generator writes
//     PTX for each kernel and a Go function that calls
//     AcceleratorView.Launch (or LaunchTiled) with a KernelSpec, the Go
//     function and the arguments: on the CPU that runs the Go function as
//     ParallelForEach does; on a CUDA GPU the driver compiles the PTX for
//     the device on the first launch there (kept for the process), the
//     views the kernel uses are copied to the GPU as needed, and the
//     kernel runs one GPU thread a point of the compute domain, a tile a
//     thread block.
//   - Package linalg's built-in kernels (matrix multiply, dot product) run on
//     the CPU and on CUDA GPUs, where they are CUDA C compiled into the
//     binary.
//
// An ArrayView's Go slice stays the home of its data. On a GPU a view gets a
// copy in the GPU's memory when a kernel there first uses it; the result
// stays there until Synchronize (or the next element access from Go) brings
// it back, and Release frees the copy. A slice of 8 MiB or more is
// page-locked in place on its first copy (up to a quarter of the machine's
// memory in all), so that its copies run at the bus's speed rather than
// through the driver's pageable staging; Release, or the collector when
// the view is dropped, unlocks it.
//
// # Queues
//
// An AcceleratorView is a queue (C++ AMP's accelerator_view); on a GPU it
// is a CUDA stream of its own. Work that hands nothing back to the caller,
// linalg.MatMul with its GPU kernel of choice, is queued and the call
// returns before it is done; AcceleratorView.Wait waits for the view's
// work and returns the error it raised on the device, and an ArrayView's
// Synchronize (or element access) waits for the work that wrote the view.
// Two views of one GPU run their work at the same time; an ArrayView used
// through both is handed from one to the other in order, on the device.
// Work that hands back a result or a status (the dot product, the kernels
// of Launch) waits for itself before returning.
//
// # Kernels on the CPU
//
// ParallelForEach hands the points of its domain to GOMAXPROCS goroutines
// in chunks. ParallelForEachTiled runs each tile's threads as coroutines
// that are all alive until the tile ends: a thread runs until it waits at
// the tile's barrier or returns, then the next one runs, and the barrier
// opens when every thread waits at it. Tiles run in parallel, up to
// GOMAXPROCS at once (two under the race detector, whose state for each
// thread is large; there the threads are goroutines rather than
// coroutines, since a coroutine that ends leaks the detector's state). No
// thread outlives its call. A tile's TileStatic memory is limited to
// MaxTileStaticBytes (48 KiB), as on a GPU; asking for more fails the kernel
// with an error wrapping ErrTileStaticLimit. Because scheduling inside a
// tile is cooperative, a
// kernel that forgets a barrier reads stale tile-static memory every time,
// not now and then, and a tile whose threads do not all wait at the same
// barriers is reported as a *DivergenceError rather than hanging.
//
// # Errors
//
// Functions return errors rather than panicking; every error wraps one of
// the sentinel errors (ErrInvalidExtent, ErrInvalidComputeDomain, ...). A
// kernel that panics makes ParallelForEach or ParallelForEachTiled return a
// *KernelPanicError naming the thread. Element access out of a view's
// bounds panics, like slice indexing, and so does misuse of TileStatic (see
// its documentation); inside a kernel such a panic becomes that error. A
// compiled kernel on a GPU cannot panic: a thread that would have panicked
// records what went wrong instead, and Launch returns a *KernelFaultError
// naming the kernel, its source line and the thread, which matches
// ErrKernelPanic too (and ErrOutOfRange for an index out of range).
package amp
