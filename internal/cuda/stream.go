package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Stream is a queue of device work (copies, memsets, launches) that runs
// in order, asynchronously to the host and concurrently with other
// streams. Where a *Stream is a parameter (Function.Launch, Event.Record),
// nil means the context's default stream; to call Stream methods on the
// default stream, use Context.DefaultStream.
type Stream struct {
	ctx  *Context
	h    atomic.Uintptr // CUstream; 0 once destroyed (or for the default stream)
	dflt bool           // the default stream, which is never destroyed
}

// errNilStream is returned by methods called on a nil *Stream, which has
// no context to run them in.
var errNilStream = errors.New("cuda: method called on a nil *Stream (use Context.DefaultStream)")

// DefaultStream is the context's default ("NULL", legacy) stream as a
// *Stream, for its methods. It synchronizes with every stream from
// NewStream. Destroy on it does nothing.
func (c *Context) DefaultStream() *Stream { return &Stream{ctx: c, dflt: true} }

// NewStream creates a stream. It is a blocking stream (CU_STREAM_DEFAULT):
// it waits for earlier work on the default stream and the default stream
// waits for it, so mixing the synchronous Context methods with streams
// keeps program order without extra events.
func (c *Context) NewStream() (*Stream, error) {
	var h uintptr
	if err := c.call("cuStreamCreate", func() cuResult { return drv.cuStreamCreate(&h, 0) }); err != nil {
		return nil, err
	}
	s := &Stream{ctx: c}
	s.h.Store(h)
	return s, nil
}

// StreamOf wraps h, a CUstream of this context that someone else owns (an
// accelerator view's queue, from amp.AcceleratorView.NativeQueue), as a
// *Stream for this package's methods. Destroy on it does nothing: the
// owner destroys the stream. h = 0 is the default stream.
func (c *Context) StreamOf(h uintptr) *Stream {
	s := &Stream{ctx: c, dflt: true}
	s.h.Store(h)
	return s
}

// SameStream reports whether a and b are the same CUstream (nil and
// DefaultStream both mean the default stream).
func SameStream(a, b *Stream) bool { return a.handle() == b.handle() }

// DestroyWhenUnreachable has the stream destroyed once the collector finds
// no reference to s, instead of by Destroy: for a stream that many holders
// share, none of which knows when the others are done with it.
func (s *Stream) DestroyWhenUnreachable() {
	if s == nil || s.dflt {
		return
	}
	type ref struct {
		ctx *Context
		h   uintptr
	}
	runtime.AddCleanup(s, func(r ref) {
		if !r.ctx.released.Load() {
			_ = r.ctx.call("cuStreamDestroy", func() cuResult { return drv.cuStreamDestroy(r.h) })
		}
	}, ref{s.ctx, s.h.Load()})
}

// handle is s's CUstream, 0 for the default stream (nil s).
func (s *Stream) handle() uintptr {
	if s == nil {
		return 0
	}
	return s.h.Load()
}

// Handle is the raw CUstream (0 for nil, the default stream), for other
// libraries that queue work on it (cublasSetStream).
func (s *Stream) Handle() uintptr { return s.handle() }

// live returns ErrReleased for a destroyed stream; nil (the default
// stream as a parameter) is live.
func (s *Stream) live() error {
	if s != nil && !s.dflt && s.h.Load() == 0 {
		return ErrReleased
	}
	return nil
}

// recv checks a method's receiver: live, and not nil.
func (s *Stream) recv() error {
	if s == nil {
		return errNilStream
	}
	return s.live()
}

// Synchronize waits until all work queued on s is done and returns the
// first error it raised, such as a fault in one of its kernels.
func (s *Stream) Synchronize() error {
	if err := s.recv(); err != nil {
		return err
	}
	return s.ctx.call("cuStreamSynchronize", func() cuResult { return drv.cuStreamSynchronize(s.handle()) })
}

// Done reports whether all work queued on s has finished, without waiting.
func (s *Stream) Done() (bool, error) {
	if err := s.recv(); err != nil {
		return false, err
	}
	var r cuResult
	err := s.ctx.do(func() error {
		r = drv.cuStreamQuery(s.handle())
		if r != 0 && r != codeNotReady {
			return s.ctx.fail("cuStreamQuery", r)
		}
		return nil
	})
	return err == nil && r == 0, err
}

// WaitEvent makes work queued on s after this call wait until e has
// completed, without blocking the host: the way to order work across
// streams.
func (s *Stream) WaitEvent(e *Event) error {
	if err := s.recv(); err != nil {
		return err
	}
	if err := e.live(); err != nil {
		return err
	}
	return s.ctx.call("cuStreamWaitEvent", func() cuResult { return drv.cuStreamWaitEvent(s.handle(), e.h.Load(), 0) })
}

// Destroy releases the stream. Work already queued on it still runs to
// completion. Later calls on s return ErrReleased.
func (s *Stream) Destroy() error {
	if s == nil {
		return errNilStream
	}
	if s.dflt {
		return nil
	}
	h := s.h.Swap(0)
	if h == 0 {
		return ErrReleased
	}
	return s.ctx.call("cuStreamDestroy", func() cuResult { return drv.cuStreamDestroy(h) })
}

// CopyHtoD queues a copy of n bytes from host memory at src to device
// memory at dst. From a HostBuffer it returns at once and src must stay
// untouched until the stream reaches that point; from pageable memory the
// driver stages the copy and returns when src may be reused.
func (s *Stream) CopyHtoD(dst DevicePtr, src unsafe.Pointer, n int) error {
	if err := checkSize("cuMemcpyHtoDAsync", n); err != nil {
		return err
	}
	if err := s.recv(); err != nil {
		return err
	}
	return s.ctx.call("cuMemcpyHtoDAsync", func() cuResult {
		return drv.cuMemcpyHtoDAsync(uint64(dst), src, uintptr(n), s.handle())
	})
}

// CopyDtoH queues a copy of n bytes from device memory at src to host
// memory at dst. Into a HostBuffer it returns at once and the data is
// there once the stream has been synchronized (or an event recorded after
// it has completed); into pageable memory the driver returns only when
// the copy is done.
func (s *Stream) CopyDtoH(dst unsafe.Pointer, src DevicePtr, n int) error {
	if err := checkSize("cuMemcpyDtoHAsync", n); err != nil {
		return err
	}
	if err := s.recv(); err != nil {
		return err
	}
	return s.ctx.call("cuMemcpyDtoHAsync", func() cuResult {
		return drv.cuMemcpyDtoHAsync(dst, uint64(src), uintptr(n), s.handle())
	})
}

// CopyDtoD queues a copy of n bytes between device allocations.
func (s *Stream) CopyDtoD(dst, src DevicePtr, n int) error {
	if err := checkSize("cuMemcpyDtoDAsync", n); err != nil {
		return err
	}
	if err := s.recv(); err != nil {
		return err
	}
	return s.ctx.call("cuMemcpyDtoDAsync", func() cuResult {
		return drv.cuMemcpyDtoDAsync(uint64(dst), uint64(src), uintptr(n), s.handle())
	})
}

// memcpy2D is the driver's CUDA_MEMCPY2D, field for field (64-bit
// layout: the memory-type enums are 4 bytes, padded to 8). Host addresses
// are kept as uintptr: the driver reads the struct during the call only,
// and the memory they point at is kept alive by the caller.
type memcpy2D struct {
	srcXInBytes, srcY uintptr
	srcMemoryType     uint32
	_                 uint32
	srcHost           uintptr
	srcDevice         uint64
	srcArray          uintptr
	srcPitch          uintptr
	dstXInBytes, dstY uintptr
	dstMemoryType     uint32
	_                 uint32
	dstHost           uintptr
	dstDevice         uint64
	dstArray          uintptr
	dstPitch          uintptr
	widthInBytes      uintptr
	height            uintptr
}

// CUmemorytype values.
const (
	memoryTypeHost   = 1
	memoryTypeDevice = 2
)

// Copy2DHtoD queues a copy of a block of height rows of width bytes from
// host memory at src, whose rows are srcPitch bytes apart, to device
// memory at dst, whose rows are dstPitch bytes apart: a column block of a
// row-major matrix in one DMA. Like CopyHtoD, from page-locked memory it
// returns at once and src must stay untouched until the stream is there.
func (s *Stream) Copy2DHtoD(dst DevicePtr, dstPitch int, src unsafe.Pointer, srcPitch, width, height int) error {
	p := memcpy2D{srcMemoryType: memoryTypeHost, srcHost: uintptr(src), srcPitch: uintptr(srcPitch),
		dstMemoryType: memoryTypeDevice, dstDevice: uint64(dst), dstPitch: uintptr(dstPitch)}
	return s.copy2D("cuMemcpy2DAsync (host to device)", &p, srcPitch, dstPitch, width, height)
}

// Copy2DDtoH is Copy2DHtoD the other way: a block of device memory at src
// to host memory at dst.
func (s *Stream) Copy2DDtoH(dst unsafe.Pointer, dstPitch int, src DevicePtr, srcPitch, width, height int) error {
	p := memcpy2D{srcMemoryType: memoryTypeDevice, srcDevice: uint64(src), srcPitch: uintptr(srcPitch),
		dstMemoryType: memoryTypeHost, dstHost: uintptr(dst), dstPitch: uintptr(dstPitch)}
	return s.copy2D("cuMemcpy2DAsync (device to host)", &p, srcPitch, dstPitch, width, height)
}

func (s *Stream) copy2D(op string, p *memcpy2D, srcPitch, dstPitch, width, height int) error {
	if width < 0 || height < 0 || srcPitch < width || dstPitch < width {
		return fmt.Errorf("cuda: %s: block of %d x %d bytes with pitches %d and %d", op, height, width, srcPitch, dstPitch)
	}
	if width == 0 || height == 0 {
		return nil
	}
	if err := s.recv(); err != nil {
		return err
	}
	p.widthInBytes, p.height = uintptr(width), uintptr(height)
	return s.ctx.call(op, func() cuResult { return drv.cuMemcpy2DAsync(p, s.handle()) })
}

// Memset queues setting n bytes at p to v.
func (s *Stream) Memset(p DevicePtr, v byte, n int) error {
	if err := checkSize("cuMemsetD8Async", n); err != nil {
		return err
	}
	if err := s.recv(); err != nil {
		return err
	}
	return s.ctx.call("cuMemsetD8Async", func() cuResult { return drv.cuMemsetD8Async(uint64(p), v, uintptr(n), s.handle()) })
}

// Event marks a point in a stream's work: for timing kernels on the GPU's
// own clock, and for making one stream or the host wait for another.
type Event struct {
	ctx *Context
	h   atomic.Uintptr // CUevent; 0 once destroyed
}

// cuEventCreate flags.
const eventDisableTiming = 2 // CU_EVENT_DISABLE_TIMING: for ordering only, cheaper to record and wait on

// NewSyncEvent creates an event for ordering work across streams
// (Stream.WaitEvent) that records no timestamp, which makes it cheaper.
func (c *Context) NewSyncEvent() (*Event, error) {
	var h uintptr
	if err := c.call("cuEventCreate", func() cuResult { return drv.cuEventCreate(&h, eventDisableTiming) }); err != nil {
		return nil, err
	}
	e := &Event{ctx: c}
	e.h.Store(h)
	return e, nil
}

// NewEvent creates an event that records timestamps (CU_EVENT_DEFAULT).
func (c *Context) NewEvent() (*Event, error) {
	var h uintptr
	if err := c.call("cuEventCreate", func() cuResult { return drv.cuEventCreate(&h, 0) }); err != nil {
		return nil, err
	}
	e := &Event{ctx: c}
	e.h.Store(h)
	return e, nil
}

// live returns ErrReleased for a destroyed event.
func (e *Event) live() error {
	if e.h.Load() == 0 {
		return ErrReleased
	}
	return nil
}

// Record marks the current end of s's queue (nil: the default stream): the
// event completes when the work queued before it has.
func (e *Event) Record(s *Stream) error {
	if err := e.live(); err != nil {
		return err
	}
	if err := s.live(); err != nil {
		return err
	}
	return e.ctx.call("cuEventRecord", func() cuResult { return drv.cuEventRecord(e.h.Load(), s.handle()) })
}

// Synchronize waits until the event has completed.
func (e *Event) Synchronize() error {
	if err := e.live(); err != nil {
		return err
	}
	return e.ctx.call("cuEventSynchronize", func() cuResult { return drv.cuEventSynchronize(e.h.Load()) })
}

// Done reports whether the event has completed, without waiting.
func (e *Event) Done() (bool, error) {
	if err := e.live(); err != nil {
		return false, err
	}
	var r cuResult
	err := e.ctx.do(func() error {
		r = drv.cuEventQuery(e.h.Load())
		if r != 0 && r != codeNotReady {
			return e.ctx.fail("cuEventQuery", r)
		}
		return nil
	})
	return err == nil && r == 0, err
}

// ElapsedMillis is the GPU time between two completed events, in
// milliseconds, with a resolution of about half a microsecond. Both must
// have been recorded and completed (synchronize end first).
func ElapsedMillis(start, end *Event) (float32, error) {
	if err := start.live(); err != nil {
		return 0, err
	}
	if err := end.live(); err != nil {
		return 0, err
	}
	var ms float32
	err := end.ctx.call("cuEventElapsedTime", func() cuResult {
		return drv.cuEventElapsedTime(&ms, start.h.Load(), end.h.Load())
	})
	return ms, err
}

// Destroy releases the event. Later calls on e return ErrReleased.
func (e *Event) Destroy() error {
	h := e.h.Swap(0)
	if h == 0 {
		return ErrReleased
	}
	return e.ctx.call("cuEventDestroy", func() cuResult { return drv.cuEventDestroy(h) })
}

// Follow makes the work queued on s from now on wait, on the device, for
// the work queued on prev so far: the way to hand data from one stream to
// another without blocking the host. The default stream and the streams
// of NewStream (blocking streams) order themselves, so Follow does
// nothing when either is the default stream. prev may have been destroyed
// with work still queued: Follow then waits, on the host, for the whole
// context.
func (s *Stream) Follow(prev *Stream) error {
	if err := s.live(); err != nil {
		return err
	}
	if prev == nil || prev.dflt && prev.handle() == 0 || SameStream(s, prev) || s.handle() == 0 {
		return nil
	}
	if prev.live() != nil {
		return prev.ctx.Synchronize()
	}
	e, err := s.ctx.NewSyncEvent()
	if err != nil {
		return err
	}
	defer e.Destroy()
	if err := e.Record(prev); err != nil {
		if errors.Is(err, ErrReleased) { // destroyed since the check
			return prev.ctx.Synchronize()
		}
		return err
	}
	return s.WaitEvent(e)
}
