package amp

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/queue"
)

// cudaMissing is why there is no CUDA accelerator, found by Accelerators.
var cudaMissing error

// CUDAUnavailable returns why this machine has no CUDA accelerator (no
// driver, no GPU, or the error the driver gave), or nil if it has one.
func CUDAUnavailable() error {
	Accelerators()
	return cudaMissing
}

// discoverCUDA returns an accelerator for each CUDA device, or the reason
// there is none. A GPU needs only the NVIDIA driver (libcuda.so.1), opened
// at run time: goamp's kernels ship inside the binary.
func discoverCUDA() ([]*Accelerator, error) {
	if err := cuda.Init(); err != nil {
		return nil, err
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver found no devices", cuda.ErrNoDevice)
	}
	version, _ := cuda.DriverVersion()
	var accs []*Accelerator
	for i := range n {
		d, err := gpu.Open(i)
		if err != nil {
			return accs, fmt.Errorf("cuda:%d: %w", i, err)
		}
		p := d.Properties
		a := &Accelerator{
			path:        "cuda:" + strconv.Itoa(i),
			kind:        KindCUDA,
			description: p.Name,
			ordinal:     i,
			memory:      &cudaMemory{dev: d},
		}
		a.props = []Property{
			{"compute capability", fmt.Sprintf("%d.%d", p.ComputeMajor, p.ComputeMinor)},
			{"multiprocessors", strconv.Itoa(p.MultiProcessors)},
			{"memory", formatBytes(int64(p.TotalMemory))},
			{"shared memory", fmt.Sprintf("%d KiB a block (%d KiB opt-in)", p.SharedMemoryPerBlock>>10, p.MaxSharedMemoryPerBlockOptin>>10)},
			{"driver", fmt.Sprintf("CUDA %d.%d", version/1000, version%1000/10)},
		}
		a.defaultView = a.NewView()
		accs = append(accs, a)
	}
	return accs, nil
}

func init() {
	queue.Register(func(view any) (*cuda.Stream, error) {
		v, ok := view.(*AcceleratorView)
		if !ok {
			return nil, fmt.Errorf("%w: %T is not an *amp.AcceleratorView", ErrNoAccelerator, view)
		}
		return v.cudaStream()
	})
}

// cudaStream returns the view's CUDA stream, creating it on first use.
// The stream is a blocking one (cuda.Context.NewStream): the array views'
// copies, which go through the default stream, stay in order with the
// work of every view. It is destroyed when the view is collected.
func (v *AcceleratorView) cudaStream() (*cuda.Stream, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	m, ok := v.acc.memory.(*cudaMemory)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a CUDA accelerator", ErrUnsupported, v.acc.path)
	}
	v.streamMu.Lock()
	defer v.streamMu.Unlock()
	if v.stream == nil {
		s, err := m.dev.Context.NewStream()
		if err != nil {
			return nil, deviceError(m.dev, fmt.Errorf("creating the view's stream: %w", err))
		}
		v.stream = s
		// Work still queued runs to the end after the destroy.
		runtime.AddCleanup(v, func(s *cuda.Stream) { _ = s.Destroy() }, s)
	}
	return v.stream, nil
}

// cudaFailure classifies an error of a GPU accelerator's device.
func cudaFailure(a *Accelerator, err error) error {
	if m, ok := a.memory.(*cudaMemory); ok {
		return deviceError(m.dev, err)
	}
	return err
}

// cudaMemory makes the copies of array views in a GPU's memory.
type cudaMemory struct{ dev *gpu.Device }

func (m *cudaMemory) allocate(n int) (deviceMemory, error) {
	ctx := m.dev.Context
	p, err := ctx.Alloc(n)
	if err == nil {
		return &cudaCopy{ctx: ctx, ptr: p}, nil
	}
	if errors.Is(err, cuda.ErrOutOfMemory) {
		free, total, _ := ctx.MemInfo()
		return nil, fmt.Errorf("%w: cuda:%d: %s needed, %s free of %s: %w", ErrOutOfMemory, m.dev.Ordinal,
			formatBytes(int64(n)), formatBytes(int64(free)), formatBytes(int64(total)), err)
	}
	return nil, fmt.Errorf("cuda:%d: %w", m.dev.Ordinal, err)
}

// cudaCopy is one view buffer's copy in a GPU's memory.
type cudaCopy struct {
	ctx *cuda.Context
	ptr cuda.DevicePtr

	mu   sync.Mutex
	last *cuda.Stream // the stream of the view that used the copy last
	home *cuda.Event  // a download of the copy queued by rows: done when reached
}

// homewardAt records that the rows of the copy queued for the host are
// all there once the device reaches this point of stream s.
func (c *cudaCopy) homewardAt(s *cuda.Stream) error {
	e, err := c.ctx.NewSyncEvent()
	if err != nil {
		return err
	}
	if err := e.Record(s); err != nil {
		_ = e.Destroy()
		return err
	}
	c.mu.Lock()
	old := c.home
	c.home = e
	c.mu.Unlock()
	if old != nil {
		_ = old.Destroy()
	}
	return nil
}

// waitHomeward waits for a download queued by rows, if there is one.
func (c *cudaCopy) waitHomeward() (bool, error) {
	c.mu.Lock()
	e := c.home
	c.home = nil
	c.mu.Unlock()
	if e == nil {
		return false, nil
	}
	defer e.Destroy()
	if err := e.Synchronize(); err != nil {
		return true, err
	}
	return true, nil
}

// dropHomeward forgets a download queued by rows: the copy is about to
// change, and the host will need the new contents. The download itself
// still lands before any later work (the copy's next user follows the
// stream it was queued behind).
func (c *cudaCopy) dropHomeward() {
	c.mu.Lock()
	e := c.home
	c.home = nil
	c.mu.Unlock()
	if e != nil {
		_ = e.Destroy()
	}
}

// useOn hands the copy to work about to be queued on stream s: that work
// waits, on the device, for the work queued before on the stream of the
// last view that used the copy (a kernel writing it, or reading it while
// s's work will write it).
func (c *cudaCopy) useOn(s *cuda.Stream) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.Follow(c.last); err != nil {
		return err
	}
	c.last = s
	return nil
}

func (c *cudaCopy) upload(src unsafe.Pointer, n int) error   { return c.ctx.CopyHtoD(c.ptr, src, n) }
func (c *cudaCopy) download(dst unsafe.Pointer, n int) error { return c.ctx.CopyDtoH(dst, c.ptr, n) }
func (c *cudaCopy) address() uint64                          { return uint64(c.ptr) }

// release frees the copy. Work queued on a view's stream may still use
// it, and cuMemFree is not promised to wait for that, so it waits first.
// A failure (a context lost to a kernel fault) leaves nothing more to
// free.
func (c *cudaCopy) release() {
	c.mu.Lock()
	queued := c.last != nil
	c.mu.Unlock()
	if queued {
		_ = c.ctx.Synchronize()
	}
	c.dropHomeward()
	_ = c.ctx.Free(c.ptr)
}

// pinnedBytes is the host memory the process has page-locked for array
// views; pinBudget caps it, so that views of large slices cannot lock most
// of the machine's memory (locked pages cannot be paged out): a quarter of
// physical memory, or 4 GiB where that is unknown.
var (
	pinnedBytes atomic.Int64
	pinBudget   = sync.OnceValue(func() int64 {
		if m := totalMemory(); m > 0 {
			return m / 4
		}
		return 4 << 30
	})
)

// errPinBudget is why a buffer is not page-locked when the budget is spent.
var errPinBudget = errors.New("amp: the budget of page-locked memory is spent")

// pinHost page-locks a view buffer's host memory in place
// (cuMemHostRegister), so that its copies run by DMA at the bus's speed
// instead of through the driver's pageable staging. The collector does not
// move heap objects; the registration's pointer keeps the slice alive
// until unpin.
func (m *cudaMemory) pinHost(p unsafe.Pointer, n int) (hostPin, error) {
	if pinnedBytes.Add(int64(n)) > pinBudget() {
		pinnedBytes.Add(-int64(n))
		return nil, errPinBudget
	}
	r, err := m.dev.Context.RegisterHost(p, n)
	if err != nil {
		pinnedBytes.Add(-int64(n))
		return nil, err
	}
	return &cudaPin{ctx: m.dev.Context, reg: r, n: n}, nil
}

// cudaPin is a view buffer's registration with the CUDA driver.
type cudaPin struct {
	once sync.Once
	ctx  *cuda.Context
	reg  *cuda.HostRegistration
	n    int
}

func (p *cudaPin) unpin() {
	p.once.Do(func() {
		// A download queued by rows may still be writing the memory (a
		// view dropped with its product in flight): wait for the device.
		// A failure (the context lost to a kernel fault) leaves nothing
		// that could use the lock.
		_ = p.ctx.Synchronize()
		_ = p.reg.Unregister()
		pinnedBytes.Add(-int64(p.n))
	})
}
