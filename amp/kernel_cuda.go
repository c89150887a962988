package amp

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// A CUDA GPU runs compiled kernels: cudaMemory, the accelerator's memory,
// is also where its compiled kernels live.
var _ kernelRunner = (*cudaMemory)(nil)

// cudaKernel is one KernelSpec on one device.
type cudaKernel struct {
	mu  sync.Mutex // held while loading: concurrent first launches load once
	mod atomic.Pointer[cudaModule]
}

// cudaModule is a KernelSpec's PTX as the driver compiled it for one
// device, with the entry and its block-size limit for each rank.
type cudaModule struct {
	mod        *cuda.Module
	funcs      [MaxRank + 1]*cuda.Function
	small      [MaxRank + 1]*cuda.Function // SmallEntries, where there are
	maxThreads [MaxRank + 1]int            // the least of the rank's entries'
}

type cudaKernelKey struct {
	spec *KernelSpec
	dev  *gpu.Device
}

// cudaKernels holds the modules of every KernelSpec launched on every
// device, for the life of the process: generated code keeps its
// KernelSpecs in package variables, so there are few, and a module is
// worth keeping (the JIT takes milliseconds to seconds).
var cudaKernels sync.Map // cudaKernelKey -> *cudaKernel

// module returns k's module on the device, loading it on first use. A
// failed load is not remembered: the next launch tries again, so that a
// transient failure (memory short for a moment) does not stick.
func (m *cudaMemory) module(k *KernelSpec) (*cudaModule, error) {
	key := cudaKernelKey{k, m.dev}
	e, ok := cudaKernels.Load(key)
	if !ok {
		e, _ = cudaKernels.LoadOrStore(key, new(cudaKernel))
	}
	ck := e.(*cudaKernel)
	if mod := ck.mod.Load(); mod != nil {
		return mod, nil
	}
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if mod := ck.mod.Load(); mod != nil {
		return mod, nil
	}
	mod, err := loadCUDAKernel(m.dev, k)
	if err != nil {
		return nil, err
	}
	ck.mod.Store(mod)
	return mod, nil
}

// loadCUDAKernel has the driver compile k's PTX for device d and looks up
// its entries.
func loadCUDAKernel(d *gpu.Device, k *KernelSpec) (*cudaModule, error) {
	driver, err := cuda.DriverVersion()
	if err != nil {
		return nil, deviceError(d, err)
	}
	p := d.Properties
	src, err := retargetForDevice(k.PTX, driver, p.ComputeMajor, p.ComputeMinor)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKernelCompile, err)
	}
	mod, err := d.Context.LoadModule([]byte(src))
	if err != nil {
		if errors.Is(err, cuda.ErrOutOfMemory) || errors.Is(err, cuda.ErrContextLost) {
			return nil, deviceError(d, err)
		}
		// The driver's *cuda.Error carries the JIT's error log, which
		// names the offending PTX line.
		return nil, fmt.Errorf("%w: the CUDA driver's JIT (sm_%d%d, CUDA %d.%d): %w",
			ErrKernelCompile, p.ComputeMajor, p.ComputeMinor, driver/1000, driver%1000/10, err)
	}
	cm := &cudaModule{mod: mod}
	for r := 1; r <= MaxRank; r++ {
		for _, small := range []bool{false, true} {
			name := k.Entries[r]
			if small {
				name = k.SmallEntries[r]
			}
			if name == "" {
				continue
			}
			f, err := mod.Function(name)
			if err != nil {
				_ = mod.Unload()
				return nil, fmt.Errorf("%w: the PTX has no entry %q (for rank %d): %w", ErrKernelCompile, name, r, err)
			}
			n, err := f.Attribute(cuda.FuncMaxThreadsPerBlock)
			if err != nil {
				_ = mod.Unload()
				return nil, deviceError(d, err)
			}
			if small {
				cm.small[r] = f
				cm.maxThreads[r] = min(cm.maxThreads[r], n)
			} else {
				cm.funcs[r], cm.maxThreads[r] = f, n
			}
		}
	}
	return cm, nil
}

func (m *cudaMemory) prepareKernel(k *KernelSpec) ([MaxRank + 1]int, error) {
	mod, err := m.module(k)
	if err != nil {
		return [MaxRank + 1]int{}, err
	}
	return mod.maxThreads, nil
}

func (m *cudaMemory) runKernel(k *KernelSpec, rank int, small bool, grid, block [3]uint32, params func(status uint64) []any) (statusRecord, error) {
	mod, err := m.module(k)
	if err != nil {
		return statusRecord{}, err
	}
	f := mod.funcs[rank]
	if small && mod.small[rank] != nil {
		f = mod.small[rank]
	}
	if f == nil {
		return statusRecord{}, fmt.Errorf("%w: no entry for rank %d", ErrUnsupported, rank)
	}
	d := m.dev
	ctx := d.Context
	pool := statusPoolOf(d)
	rec, err := pool.get(ctx)
	if err != nil {
		return statusRecord{}, deviceError(d, fmt.Errorf("status record: %w", err))
	}
	defer pool.put(rec)
	// The memset, the launch and the wait are all on the default stream,
	// where the views' synchronous uploads went too: each sees the one
	// before it done.
	if err := ctx.Memset(rec, 0, ir.StatusRecordBytes); err != nil {
		return statusRecord{}, deviceError(d, err)
	}
	// Packed before the timed window, which should hold the kernel and
	// no Go work.
	args, err := cuda.PackArgs(params(uint64(rec))...)
	if err != nil {
		return statusRecord{}, fmt.Errorf("amp: %w", err)
	}
	var launchErr error
	elapsed, err := d.Timed(func(s *cuda.Stream) error {
		launchErr = f.LaunchArgs(grid, block, 0, s, args)
		return launchErr
	})
	if launchErr != nil {
		return statusRecord{}, deviceError(d, fmt.Errorf("launching %v blocks of %v threads: %w", grid, block, launchErr))
	}
	if err != nil {
		return statusRecord{}, deviceError(d, err)
	}
	buf := make([]byte, ir.StatusRecordBytes)
	if err := ctx.CopyDtoH(unsafe.Pointer(&buf[0]), rec, len(buf)); err != nil {
		return statusRecord{}, deviceError(d, err)
	}
	status := decodeStatus(buf)
	status.elapsed = elapsed
	return status, nil
}

// deviceError classifies a driver failure for callers of this package.
func deviceError(d *gpu.Device, err error) error {
	switch {
	case errors.Is(err, cuda.ErrOutOfMemory):
		return fmt.Errorf("%w: %w", ErrOutOfMemory, err)
	case errors.Is(err, cuda.ErrContextLost):
		return fmt.Errorf("%w: cuda:%d is unusable for the rest of this process: %w", ErrAcceleratorFailure, d.Ordinal, err)
	}
	return fmt.Errorf("%w: %w", ErrAcceleratorFailure, err)
}

// statusChunk is how many status records a device's pool allocates at
// once.
const statusChunk = 64

// statusPool hands out a device's status records. A launch holds one
// from before it zeroes it until it has read it back, so concurrent
// launches never share one. Records come in chunks of statusChunk (2 KiB)
// allocated as launches need them and kept for the life of the process:
// allocating per launch would cost a cuMemAlloc and a cuMemFree (which
// waits for the whole device) each time, and the pool grows only while
// more launches run at once than it has records.
type statusPool struct {
	mu   sync.Mutex
	free []cuda.DevicePtr
}

var statusPools sync.Map // *gpu.Device -> *statusPool

func statusPoolOf(d *gpu.Device) *statusPool {
	p, ok := statusPools.Load(d)
	if !ok {
		p, _ = statusPools.LoadOrStore(d, new(statusPool))
	}
	return p.(*statusPool)
}

func (p *statusPool) get(ctx *cuda.Context) (cuda.DevicePtr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		base, err := ctx.Alloc(statusChunk * ir.StatusRecordBytes)
		if err != nil {
			return 0, err
		}
		for i := statusChunk - 1; i >= 0; i-- {
			p.free = append(p.free, base.Offset(i*ir.StatusRecordBytes))
		}
	}
	r := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return r, nil
}

func (p *statusPool) put(r cuda.DevicePtr) {
	p.mu.Lock()
	p.free = append(p.free, r)
	p.mu.Unlock()
}
