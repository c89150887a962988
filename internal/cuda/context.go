package cuda

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Context is a retained primary context of one device. All its methods,
// and those of the streams, events, modules and buffers made from it, make
// the context current on their own locked OS thread for the duration of the
// call, so they may be called from any goroutine, concurrently.
type Context struct {
	dev      Device
	h        uintptr // CUcontext
	released atomic.Bool
	lost     atomic.Pointer[Error] // first sticky error seen, if any
}

// Device is the device whose primary context this is.
func (c *Context) Device() Device { return c.dev }

// Handle is the raw CUcontext, for other libraries bound with purego that
// take one. It stays valid until Release.
func (c *Context) Handle() uintptr { return c.h }

// Release drops this reference to the primary context; the driver destroys
// the context, and everything allocated in it, when the last reference
// goes. Later calls on c return ErrReleased. Release must not race with
// other calls on c or on anything made from it; calling it twice is
// harmless.
func (c *Context) Release() error {
	if c.released.Swap(true) {
		return nil
	}
	if r := drv.cuDevicePrimaryCtxRelease(c.dev.h); r != 0 {
		return newError("cuDevicePrimaryCtxRelease", r)
	}
	return nil
}

// Err returns the sticky error (matching ErrContextLost) that made the
// context unusable, or nil while it is healthy. After a kernel fault every
// call fails; the layer above checks Err to tell "this device is gone for
// this process" from an ordinary failed call.
func (c *Context) Err() error {
	if e := c.lost.Load(); e != nil {
		return e
	}
	return nil
}

// Do runs f on a locked OS thread with the context current, for calls
// into other driver-API libraries (cuBLAS, for instance) that use
// whatever context is current. The methods of this package need no Do:
// they do the same themselves (and nest inside Do harmlessly).
func (c *Context) Do(f func() error) error { return c.do(f) }

// do is the rule for every call that needs the context: lock the thread,
// push the context, call, pop, unlock. Push/pop (not cuCtxSetCurrent)
// leaves whatever another library made current on this thread as it was.
func (c *Context) do(f func() error) error {
	if c.released.Load() {
		return ErrReleased
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := drv.cuCtxPushCurrent(c.h); r != 0 {
		return c.fail("cuCtxPushCurrent", r)
	}
	defer func() {
		var old uintptr
		drv.cuCtxPopCurrent(&old)
	}()
	return f()
}

// call runs one driver call with the context current and turns a failure
// into an *Error naming op.
func (c *Context) call(op string, f func() cuResult) error {
	return c.do(func() error {
		if r := f(); r != 0 {
			return c.fail(op, r)
		}
		return nil
	})
}

// fail builds the *Error for op and, when it is sticky, records it as the
// reason the context is lost.
func (c *Context) fail(op string, r cuResult) *Error {
	e := newError(op, r)
	c.noteSticky(e)
	return e
}

// noteSticky records e as the reason the context is lost when its code is
// sticky (first one wins). e must not be modified afterwards: Err hands it
// to other goroutines.
func (c *Context) noteSticky(e *Error) {
	if sticky(e.Code) {
		c.lost.CompareAndSwap(nil, e)
	}
}

// Synchronize waits for all work in the context, on every stream, and
// returns the first error any of it raised.
func (c *Context) Synchronize() error {
	return c.call("cuCtxSynchronize", func() cuResult { return drv.cuCtxSynchronize() })
}

// DevicePtr is an address in device memory (CUdeviceptr). Zero is never a
// valid allocation. Arithmetic on it is byte arithmetic, as in C.
type DevicePtr uint64

// Offset returns p advanced by bytes, for addressing inside an allocation.
func (p DevicePtr) Offset(bytes int) DevicePtr { return p + DevicePtr(bytes) }

// checkSize rejects negative sizes before they reach the driver as huge
// unsigned ones.
func checkSize(op string, n int) error {
	if n < 0 {
		return fmt.Errorf("cuda: %s: negative size %d", op, n)
	}
	return nil
}

// Alloc allocates bytes of device memory, aligned to at least 256 bytes.
// The memory is not cleared. Failure for lack of memory matches
// ErrOutOfMemory and leaves the context usable.
func (c *Context) Alloc(bytes int) (DevicePtr, error) {
	if err := checkSize("cuMemAlloc", bytes); err != nil {
		return 0, err
	}
	var p uint64
	err := c.call("cuMemAlloc", func() cuResult { return drv.cuMemAlloc(&p, uintptr(bytes)) })
	return DevicePtr(p), err
}

// Free releases memory from Alloc. No queued or running work may still
// use p: synchronize the streams that used it first.
func (c *Context) Free(p DevicePtr) error {
	return c.call("cuMemFree", func() cuResult { return drv.cuMemFree(uint64(p)) })
}

// Memset sets n bytes at p to v. Like the driver call it is queued on the
// default stream and may return before it is done; every later copy,
// launch or memset on the default stream or a Stream from NewStream sees
// its result.
func (c *Context) Memset(p DevicePtr, v byte, n int) error {
	if err := checkSize("cuMemsetD8", n); err != nil {
		return err
	}
	return c.call("cuMemsetD8", func() cuResult { return drv.cuMemsetD8(uint64(p), v, uintptr(n)) })
}

// MemInfo returns the free and total device memory in bytes, as the driver
// sees them now (other processes' allocations included).
func (c *Context) MemInfo() (free, total int, err error) {
	var f, t uintptr
	err = c.call("cuMemGetInfo", func() cuResult { return drv.cuMemGetInfo(&f, &t) })
	return int(f), int(t), err
}

// CopyHtoD copies n bytes from host memory at src to device memory at dst
// and returns when src may be reused. src may be Go memory.
func (c *Context) CopyHtoD(dst DevicePtr, src unsafe.Pointer, n int) error {
	if err := checkSize("cuMemcpyHtoD", n); err != nil {
		return err
	}
	return c.call("cuMemcpyHtoD", func() cuResult { return drv.cuMemcpyHtoD(uint64(dst), src, uintptr(n)) })
}

// CopyDtoH copies n bytes from device memory at src to host memory at dst
// and returns when they have arrived. It waits for earlier work on the
// default stream (and on blocking streams), so it also reports a fault of
// a kernel that ran before it.
func (c *Context) CopyDtoH(dst unsafe.Pointer, src DevicePtr, n int) error {
	if err := checkSize("cuMemcpyDtoH", n); err != nil {
		return err
	}
	return c.call("cuMemcpyDtoH", func() cuResult { return drv.cuMemcpyDtoH(dst, uint64(src), uintptr(n)) })
}

// CopyDtoD copies n bytes between device allocations. Like the driver's
// cuMemcpyDtoD it may return before the copy is done; later work on the
// default stream or a Stream from NewStream sees its result.
func (c *Context) CopyDtoD(dst, src DevicePtr, n int) error {
	if err := checkSize("cuMemcpyDtoD", n); err != nil {
		return err
	}
	return c.call("cuMemcpyDtoD", func() cuResult { return drv.cuMemcpyDtoD(uint64(dst), uint64(src), uintptr(n)) })
}

// CopySliceHtoD copies all of src to device memory at dst: the typed
// form of CopyHtoD for slices of plain numbers.
func CopySliceHtoD[T any](c *Context, dst DevicePtr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	return c.CopyHtoD(dst, unsafe.Pointer(&src[0]), len(src)*int(unsafe.Sizeof(src[0])))
}

// CopySliceDtoH fills all of dst from device memory at src: the typed form
// of CopyDtoH for slices of plain numbers.
func CopySliceDtoH[T any](c *Context, dst []T, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return c.CopyDtoH(unsafe.Pointer(&dst[0]), src, len(dst)*int(unsafe.Sizeof(dst[0])))
}

// HostBuffer is page-locked ("pinned") host memory from cuMemHostAlloc.
// The GPU reads and writes it by DMA, so copies between it and the device
// run at full bus speed and, on a Stream, overlap with host work and
// kernels. It lives outside the Go heap: free it with Free, and do not use
// its views after that.
type HostBuffer struct {
	ctx *Context
	p   atomic.Pointer[byte]
	n   int
}

// cuMemHostAlloc flags.
const hostAllocPortable = 1 // CU_MEMHOSTALLOC_PORTABLE: pinned for every context, not only this one

// AllocHost allocates n bytes of page-locked host memory. Pinned memory is
// taken from the OS's physical memory and cannot be paged out: allocate it
// once and reuse it rather than per copy.
func (c *Context) AllocHost(n int) (*HostBuffer, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: cuMemHostAlloc: size %d must be positive", n)
	}
	var p unsafe.Pointer
	if err := c.call("cuMemHostAlloc", func() cuResult { return drv.cuMemHostAlloc(&p, uintptr(n), hostAllocPortable) }); err != nil {
		return nil, err
	}
	h := &HostBuffer{ctx: c, n: n}
	h.p.Store((*byte)(p))
	return h, nil
}

// Ptr is the buffer's address, for CopyHtoD and the Stream copies; nil
// after Free.
func (h *HostBuffer) Ptr() unsafe.Pointer { return unsafe.Pointer(h.p.Load()) }

// Len is the buffer's size in bytes.
func (h *HostBuffer) Len() int { return h.n }

// Bytes is the buffer seen as a byte slice (nil after Free).
func (h *HostBuffer) Bytes() []byte {
	p := h.p.Load()
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, h.n)
}

// HostSlice is the buffer seen as a slice of T holding as many whole
// elements as fit (nil after Free). T must be a plain number type.
func HostSlice[T any](h *HostBuffer) []T {
	p := h.p.Load()
	var zero T
	if p == nil || unsafe.Sizeof(zero) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(p)), h.n/int(unsafe.Sizeof(zero)))
}

// Free returns the memory to the driver. Copies queued on streams that
// use the buffer must be finished first (synchronize their stream). A
// second Free returns ErrReleased.
func (h *HostBuffer) Free() error {
	p := h.p.Swap(nil)
	if p == nil {
		return ErrReleased
	}
	return h.ctx.call("cuMemFreeHost", func() cuResult { return drv.cuMemFreeHost(unsafe.Pointer(p)) })
}

// HostRegistration is host memory that the driver has page-locked in place
// (cuMemHostRegister): copies between it and the device run by DMA at the
// bus's speed, as from a HostBuffer, without staging through one. The
// memory must stay allocated, and must not be moved, until Unregister.
type HostRegistration struct {
	ctx *Context
	p   atomic.Pointer[byte]
	n   int
}

// cuMemHostRegister flags.
const hostRegisterPortable = 1 // CU_MEMHOSTREGISTER_PORTABLE: page-locked for every context

// RegisterHost page-locks the n bytes of host memory at p for fast copies.
// Locking takes time in proportion to n (the OS pins every page), so it
// pays only for memory copied more than once or copied in large pieces.
// Go heap memory qualifies: the collector does not move heap objects, but
// the caller must keep the object reachable until Unregister.
func (c *Context) RegisterHost(p unsafe.Pointer, n int) (*HostRegistration, error) {
	if p == nil || n <= 0 {
		return nil, fmt.Errorf("cuda: cuMemHostRegister: empty range (%p, %d bytes)", p, n)
	}
	if err := c.call("cuMemHostRegister", func() cuResult { return drv.cuMemHostRegister(p, uintptr(n), hostRegisterPortable) }); err != nil {
		return nil, err
	}
	r := &HostRegistration{ctx: c, n: n}
	r.p.Store((*byte)(p))
	return r, nil
}

// Len is the registered range's size in bytes.
func (r *HostRegistration) Len() int { return r.n }

// Unregister unlocks the memory. Copies that use it must be finished
// first. A second Unregister returns ErrReleased.
func (r *HostRegistration) Unregister() error {
	p := r.p.Swap(nil)
	if p == nil {
		return ErrReleased
	}
	return r.ctx.call("cuMemHostUnregister", func() cuResult { return drv.cuMemHostUnregister(unsafe.Pointer(p)) })
}
