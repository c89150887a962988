// Package cuda is the CUDA driver API, opened at run time from the system's
// libcuda.so.1 with purego: no cgo, no CUDA toolkit at build time, and a
// binary that still runs (and says why the GPU is unavailable) on machines
// without an NVIDIA driver. It is the lowest GPU layer of goamp: the GPU
// accelerator and the kernel packages above it allocate memory, load
// compiled kernels and launch them through this package, and nothing above
// it calls the driver directly.
//
// # Threads and contexts
//
// A CUDA context is "current" per OS thread, and the Go scheduler moves
// goroutines between threads at will. So no method of this package assumes a
// current context: every method of Context, Stream, Event, Module, Function
// and HostBuffer locks its goroutine to its thread, pushes the device's
// primary context, makes the call and pops the context again. That makes
// every method safe to call from many goroutines at once. Context.Do runs a
// function the same way, for calls into other libraries that need the
// context current on the calling thread (cuBLAS, for instance).
//
// # Errors
//
// Every CUresult other than CUDA_SUCCESS becomes an *Error carrying the
// driver's own name and description of the code. Sentinels classify them for
// errors.Is: ErrNoDriver and ErrNoDevice (the GPU is unavailable; fall back
// to the CPU), ErrOutOfMemory (free something or use less), and
// ErrContextLost.
//
// Kernels run asynchronously, so a fault inside one (an illegal address, a
// failed device-side assert) is not reported by Function.Launch but by a
// later call: the next synchronize, copy or allocation. Those faults are
// sticky: CUDA's rule is that the context, and every allocation in it, is
// unusable from then on, and every later call returns the same error; only
// a new process recovers. Such errors match ErrContextLost, and Context.Err
// reports the first one seen, so the layer above can stop using the device
// and say why.
//
// # Memory
//
// DevicePtr is a device address; the package does not track sizes, so
// copies trust the byte counts they are given, as cudaMemcpy does. The
// synchronous copies accept any host memory, Go memory included. The
// asynchronous ones (methods of Stream) overlap with host work only when the
// host side is page-locked memory from Context.AllocHost; given ordinary
// (pageable) memory the driver stages the copy and returns once the host
// buffer may be reused, so Go memory is safe there too, only slower.
package cuda
