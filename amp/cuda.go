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
}

func (c *cudaCopy) upload(src unsafe.Pointer, n int) error   { return c.ctx.CopyHtoD(c.ptr, src, n) }
func (c *cudaCopy) download(dst unsafe.Pointer, n int) error { return c.ctx.CopyDtoH(dst, c.ptr, n) }
func (c *cudaCopy) address() uint64                          { return uint64(c.ptr) }

// release frees the copy. A failure (a context lost to a kernel fault)
// leaves nothing more to free.
func (c *cudaCopy) release() { _ = c.ctx.Free(c.ptr) }

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
	return &cudaPin{reg: r, n: n}, nil
}

// cudaPin is a view buffer's registration with the CUDA driver.
type cudaPin struct {
	once sync.Once
	reg  *cuda.HostRegistration
	n    int
}

func (p *cudaPin) unpin() {
	p.once.Do(func() {
		// A failure (the context lost to a kernel fault) leaves nothing
		// that could use the lock.
		_ = p.reg.Unregister()
		pinnedBytes.Add(-int64(p.n))
	})
}
