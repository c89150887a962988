package amp

import (
	"errors"
	"fmt"
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
		// Destroyed once nothing refers to it: not the view, nor a device
		// copy whose last users it has queued (cudaCopy.writer, readers).
		// Work still queued runs to the end after the destroy.
		s.DestroyWhenUnreachable()
		v.stream = s
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

// cudaCopy is one view buffer's copy in a GPU's memory, with what the
// views' streams and the row copies of package queue have queued on it.
type cudaCopy struct {
	ctx *cuda.Context
	ptr cuda.DevicePtr

	mu      sync.Mutex
	writer  *cuda.Stream   // the stream of the last work that wrote the copy
	readers []*cuda.Stream // the streams of the work that read it since
	// home is a download of the copy queued by rows: the host holds the
	// copy's contents once the device reaches it. hostBusy is an upload
	// queued by rows: the host's memory is being read until then.
	home, hostBusy *cuda.Event
}

// useOn hands the copy to work about to be queued on stream s, which
// writes the copy or only reads it. A reader waits, on the device, for the
// last writer; a writer also waits for the readers since. Readers on
// different streams do not wait for one another.
func (c *cudaCopy) useOn(s *cuda.Stream, write bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.Follow(c.writer); err != nil {
		return err
	}
	if !write {
		for _, r := range c.readers {
			if cuda.SameStream(r, s) {
				return nil
			}
		}
		c.readers = append(c.readers, s)
		return nil
	}
	for _, r := range c.readers {
		if err := s.Follow(r); err != nil {
			return err
		}
	}
	c.writer, c.readers = s, nil
	return nil
}

// queued reports whether work on a stream has used the copy.
func (c *cudaCopy) queued() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writer != nil || len(c.readers) > 0
}

// eventAt records an event at the current end of stream s.
func (c *cudaCopy) eventAt(s *cuda.Stream) (*cuda.Event, error) {
	e, err := c.ctx.NewSyncEvent()
	if err != nil {
		return nil, err
	}
	if err := e.Record(s); err != nil {
		_ = e.Destroy()
		return nil, err
	}
	return e, nil
}

// homewardAt records that the rows of the copy queued for the host are
// all there once the device reaches this point of stream s.
func (c *cudaCopy) homewardAt(s *cuda.Stream) error {
	e, err := c.eventAt(s)
	if err != nil {
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

// hostBusyUntil records that rows of the host's memory are being uploaded
// into the copy until the device reaches this point of stream s: the host
// must not write them before.
func (c *cudaCopy) hostBusyUntil(s *cuda.Stream) error {
	e, err := c.eventAt(s)
	if err != nil {
		return err
	}
	c.mu.Lock()
	old := c.hostBusy
	c.hostBusy = e
	c.mu.Unlock()
	if old != nil {
		_ = old.Destroy()
	}
	return nil
}

// waitHostDMA waits for the row copies between the host's memory and the
// copy that are still queued, and reports whether a download was among
// them: the host then holds the copy's contents.
func (c *cudaCopy) waitHostDMA() (downloaded bool, err error) {
	c.mu.Lock()
	home, busy := c.home, c.hostBusy
	c.home, c.hostBusy = nil, nil
	c.mu.Unlock()
	for _, e := range []*cuda.Event{busy, home} {
		if e == nil {
			continue
		}
		if werr := e.Synchronize(); werr != nil && err == nil {
			err = werr
		}
		_ = e.Destroy()
	}
	return home != nil, err
}

// dropHomeward forgets a download queued by rows: the copy is about to be
// written again on this device, and the host will need the new contents.
// The download still lands first: the copy's next writer follows the
// stream the download was queued behind, and the next download, a copy on
// the default stream, waits for every stream.
func (c *cudaCopy) dropHomeward() {
	c.mu.Lock()
	e := c.home
	c.home = nil
	c.mu.Unlock()
	if e != nil {
		_ = e.Destroy()
	}
}

func (c *cudaCopy) upload(src unsafe.Pointer, n int) error   { return c.ctx.CopyHtoD(c.ptr, src, n) }
func (c *cudaCopy) download(dst unsafe.Pointer, n int) error { return c.ctx.CopyDtoH(dst, c.ptr, n) }
func (c *cudaCopy) address() uint64                          { return uint64(c.ptr) }

// release frees the copy. Work queued on a view's stream may still use
// it, and cuMemFree is not promised to wait for that, so it waits first.
// A failure (a context lost to a kernel fault) leaves nothing more to
// free.
func (c *cudaCopy) release() {
	if c.queued() {
		_ = c.ctx.Synchronize()
	}
	_, _ = c.waitHostDMA() // done by now: this frees the events
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

	mu    sync.Mutex
	users []*cuda.Context // the GPUs that queued row copies through the lock
}

// queuedBy records that ctx's streams copy through the locked memory
// asynchronously (the lock is portable: any GPU may use it).
func (p *cudaPin) queuedBy(ctx *cuda.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, u := range p.users {
		if u == ctx {
			return
		}
	}
	p.users = append(p.users, ctx)
}

func (p *cudaPin) unpin() {
	p.once.Do(func() {
		// A row copy may still be reading or writing the memory (a view
		// dropped with its product in flight): wait for every GPU that
		// queued one. A failure (the context lost to a kernel fault)
		// leaves nothing that could use the lock.
		p.mu.Lock()
		users := p.users
		p.mu.Unlock()
		for _, ctx := range users {
			_ = ctx.Synchronize()
		}
		_ = p.reg.Unregister()
		pinnedBytes.Add(-int64(p.n))
	})
}
