package amp

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of them, so
// callers can test with errors.Is; they play the part of C++ AMP's exception
// classes.
var (
	// ErrInvalidExtent: an extent of the wrong rank or with a negative dimension.
	ErrInvalidExtent = errors.New("amp: invalid extent")
	// ErrInvalidComputeDomain: tiles that do not divide the extent, tile sizes
	// out of range, or more than MaxTileThreads threads in a tile (C++ AMP's
	// invalid_compute_domain).
	ErrInvalidComputeDomain = errors.New("amp: invalid compute domain")
	// ErrOutOfRange: an index or section outside a view.
	ErrOutOfRange = errors.New("amp: out of range")
	// ErrShortData: a slice too short for the extent of the view over it.
	ErrShortData = errors.New("amp: data shorter than extent")
	// ErrKernelPanic: a kernel panicked; the error is a *KernelPanicError.
	// A compiled kernel that fails on an accelerator where its Go function
	// would have panicked (see AcceleratorView.Launch) returns a
	// *KernelFaultError, which matches it too.
	ErrKernelPanic = errors.New("amp: kernel panicked")
	// ErrBarrierDivergence: the threads of a tile did not all reach the same
	// barrier; the error is a *DivergenceError.
	ErrBarrierDivergence = errors.New("amp: barrier divergence")
	// ErrTileStaticLimit: a tile's TileStatic calls ask for more than
	// MaxTileStaticBytes in all, or for a negative length.
	ErrTileStaticLimit = errors.New("amp: tile_static memory limit")
	// ErrNoAccelerator: no accelerator matches the name asked for, or a view
	// that belongs to none (the zero AcceleratorView).
	ErrNoAccelerator = errors.New("amp: no such accelerator")
	// ErrUnsupported: the accelerator cannot do what was asked (for example,
	// run a Go function as a kernel on a GPU).
	ErrUnsupported = errors.New("amp: not supported on this accelerator")
	// ErrOutOfMemory: an accelerator's memory cannot hold a view's copy (C++
	// AMP's out_of_memory). The error says how much was needed and how much
	// was free; the accelerator stays usable.
	ErrOutOfMemory = errors.New("amp: out of accelerator memory")
	// ErrInvalidKernel: a compiled kernel launched with arguments that do
	// not match its KernelSpec (their number, a view where it takes a
	// scalar or the reverse, a nil view, a view of another rank than the
	// kernel indexes it at), a tiled kernel launched over an Extent or an
	// untiled one over a TiledExtent, or a nil KernelSpec.
	ErrInvalidKernel = errors.New("amp: invalid kernel launch")
	// ErrKernelCompile: the accelerator's compiler (for CUDA, the driver's
	// PTX JIT) rejected a kernel; the error holds the compiler's log.
	ErrKernelCompile = errors.New("amp: kernel does not compile for this accelerator")
	// ErrAcceleratorFailure: the accelerator's driver failed while running
	// a kernel: it refused the launch, or the kernel faulted in a way that
	// leaves the accelerator unusable for the rest of the process (C++
	// AMP's accelerator_view_removed). The error wraps the driver's.
	ErrAcceleratorFailure = errors.New("amp: accelerator failure")
)

// KernelPanicError reports a kernel that panicked, naming the thread.
type KernelPanicError struct {
	// Global is the index of the thread in the compute domain.
	Global Index
	// Tiled reports whether the kernel was tiled; Tile and Local are set then.
	Tiled       bool
	Tile, Local Index
	// Value is what the kernel passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, for debugging.
	Stack []byte
}

func (e *KernelPanicError) Error() string {
	if e.Tiled {
		return fmt.Sprintf("amp: kernel panicked in thread %v (tile %v, local %v): %v", e.Global, e.Tile, e.Local, e.Value)
	}
	return fmt.Sprintf("amp: kernel panicked in thread %v: %v", e.Global, e.Value)
}

// Unwrap returns ErrKernelPanic, and the panic value when it is an error.
func (e *KernelPanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrKernelPanic, err}
	}
	return []error{ErrKernelPanic}
}

// DivergenceError reports a tile whose threads did not all reach the same
// barrier: one thread returned from the kernel after Returned barrier waits
// while another waits at barrier Returned+1.
type DivergenceError struct {
	// Tile is the tile's index.
	Tile Index
	// Exited is the local index of a thread that returned from the kernel.
	Exited Index
	// Waiting is the local index of a thread waiting at a barrier.
	Waiting Index
	// Returned is how many barriers the exited thread waited at.
	Returned int
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("amp: barrier divergence in tile %v: thread %v returned after %d barrier waits while thread %v waits at barrier %d",
		e.Tile, e.Exited, e.Returned, e.Waiting, e.Returned+1)
}

// Unwrap returns ErrBarrierDivergence.
func (e *DivergenceError) Unwrap() error { return ErrBarrierDivergence }
