// Package gpu launches goamp's CUDA kernels (package internal/gpu/kernels)
// on a device through the driver binding (internal/cuda): it loads each
// technique's fatbin once per device, picks the kernel for the element type
// and tile, sizes the grid, and times the launch with CUDA events.
//
// It works on device addresses; the model's array views (package amp) make
// and track the copies that those addresses point at.
package gpu

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// Element is the set of element types the kernels are compiled for.
type Element interface{ float32 | float64 | int32 }

// ErrTile is returned (wrapped) for a tile or block size a kernel does not
// support.
var ErrTile = errors.New("gpu: unsupported tile size")

// Device is one GPU with its primary context, kept for the life of the
// process (retaining and releasing the primary context per call would tear
// it down and rebuild it each time).
type Device struct {
	Ordinal    int
	Context    *cuda.Context
	Properties cuda.Properties

	mu      sync.Mutex
	modules map[string]*cuda.Module   // by technique file
	funcs   map[string]*cuda.Function // by symbol
	spin    *cuda.Function            // Spin's kernel, once loaded
	work    workspace                 // Gemm's scratch memory: split products' slices, wgmma's packed operands

	dotScratch []*dotScratch // DotOnePass's free scratch areas, under mu
	copyIn     *cuda.Stream  // AuxStreams', made on first use, under mu
	copyOut    *cuda.Stream
	compute    []*cuda.Stream
}

var (
	devicesMu sync.Mutex
	devices   = map[int]*Device{}
)

// Open returns device ordinal, opening its primary context on first use.
// The error wraps cuda.ErrNoDriver or cuda.ErrNoDevice when there is no GPU.
func Open(ordinal int) (*Device, error) {
	devicesMu.Lock()
	defer devicesMu.Unlock()
	if d := devices[ordinal]; d != nil {
		return d, nil
	}
	if err := cuda.Init(); err != nil {
		return nil, err
	}
	dev, err := cuda.GetDevice(ordinal)
	if err != nil {
		return nil, err
	}
	props, err := dev.Properties()
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		return nil, err
	}
	d := &Device{Ordinal: ordinal, Context: ctx, Properties: props,
		modules: map[string]*cuda.Module{}, funcs: map[string]*cuda.Function{}}
	devices[ordinal] = d
	return d, nil
}

// function returns the kernel of technique file for tile and T, loading the
// technique's module on first use.
func function[T Element](d *Device, file string, tile int) (*cuda.Function, error) {
	sym, err := kernels.Symbol(file, tile, elemName[T]())
	if err != nil {
		return nil, err
	}
	return functionBySymbol(d, file, sym)
}

// functionBySymbol returns the kernel named sym in technique file, loading
// the technique's module on first use.
func functionBySymbol(d *Device, file, sym string) (*cuda.Function, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.funcs[sym]; f != nil {
		return f, nil
	}
	m := d.modules[file]
	if m == nil {
		image, err := kernels.Image(file)
		if err != nil {
			return nil, err
		}
		if m, err = d.Context.LoadModule(image); err != nil {
			return nil, fmt.Errorf("gpu: load %s: %w", file, err)
		}
		d.modules[file] = m
	}
	f, err := m.Function(sym)
	if err != nil {
		return nil, err
	}
	d.funcs[sym] = f
	return f, nil
}

func elemName[T Element]() string {
	switch any(T(0)).(type) {
	case float32:
		return kernels.Float32
	case float64:
		return kernels.Float64
	}
	return kernels.Int32
}

// MatMul sets C = alpha*A*B + beta*C on the device, for row-major matrices at
// device addresses a (m x k, row stride lda), b (k x n, ldb) and c (m x n,
// ldc), with technique kernels.MatmulNaive or kernels.MatmulTiled (tile 8,
// 16 or 32). C is not read when beta is 0. It returns the kernel's time on
// the device, measured with CUDA events, once the kernel has finished.
func MatMul[T Element](d *Device, technique string, tile, m, n, k int, alpha T, a uint64, lda int, b uint64, ldb int, beta T, c uint64, ldc int) (time.Duration, error) {
	if m == 0 || n == 0 {
		return 0, nil // no threads to launch; C is empty
	}
	var block [3]uint32
	switch technique {
	case kernels.MatmulNaive:
		tile = 0
		block = [3]uint32{16, 16, 1}
	case kernels.MatmulTiled:
		switch tile {
		case 8, 16, 32:
		default:
			return 0, fmt.Errorf("%w: %d (the tiled kernel is compiled for 8, 16 and 32)", ErrTile, tile)
		}
		block = [3]uint32{uint32(tile), uint32(tile), 1}
	default:
		return 0, fmt.Errorf("%w: matmul technique %q", kernels.ErrNotFound, technique)
	}
	if err := fitsInt32(m, n, k, lda, ldb, ldc); err != nil {
		return 0, err
	}
	f, err := function[T](d, technique, tile)
	if err != nil {
		return 0, err
	}
	grid := [3]uint32{uint32(ceilDiv(n, int(block[0]))), uint32(ceilDiv(m, int(block[1]))), 1}
	if grid[1] > 65535 {
		return 0, fmt.Errorf("gpu: %d rows need a grid of %d blocks in y; the limit is 65535", m, grid[1])
	}
	// Packed before the timed window, which should hold the kernel and
	// no Go work.
	args, err := cuda.PackArgs(int32(m), int32(n), int32(k), alpha, cuda.DevicePtr(a), int32(lda),
		cuda.DevicePtr(b), int32(ldb), beta, cuda.DevicePtr(c), int32(ldc))
	if err != nil {
		return 0, err
	}
	return d.Timed(func(s *cuda.Stream) error {
		return f.LaunchArgs(grid, block, 0, s, args)
	})
}

// maxDotBlocks caps the blocks of a dot product: each thread then strides
// over the vectors (as the dot product of "CUDA by Example", chapter 5,
// caps its grid at 32 blocks), and the partials the host adds stay few. A
// fixed cap keeps the order of the additions, and so the result, the same
// on every GPU.
const maxDotBlocks = 1024

// Dot returns the dot product of the n-element vectors at device addresses
// x and y, with technique kernels.DotShared or kernels.DotWarp and block
// threads a block (a power of two, 1 to 1024). Each block leaves a partial
// sum on the device; the partials are added on the host in block order, in
// type T. It also returns the kernel's time on the device.
func Dot[T Element](d *Device, technique string, block, n int, x, y uint64) (T, time.Duration, error) {
	if technique != kernels.DotShared && technique != kernels.DotWarp {
		return 0, 0, fmt.Errorf("%w: dot technique %q", kernels.ErrNotFound, technique)
	}
	if block < 1 || block > 1024 || block&(block-1) != 0 {
		return 0, 0, fmt.Errorf("%w: %d threads a block (want a power of two up to 1024)", ErrTile, block)
	}
	if n == 0 {
		return 0, 0, nil
	}
	if err := fitsInt32(n); err != nil {
		return 0, 0, err
	}
	f, err := function[T](d, technique, 0)
	if err != nil {
		return 0, 0, err
	}
	blocks := min(ceilDiv(n, block), maxDotBlocks)
	size := int(unsafe.Sizeof(T(0)))
	partials, err := d.Context.Alloc(blocks * size)
	if err != nil {
		return 0, 0, fmt.Errorf("gpu: dot partials: %w", err)
	}
	defer d.Context.Free(partials)
	shared := kernels.SharedBytes(technique, block, size)
	args, err := cuda.PackArgs(int32(n), cuda.DevicePtr(x), cuda.DevicePtr(y), partials)
	if err != nil {
		return 0, 0, err
	}
	elapsed, err := d.Timed(func(s *cuda.Stream) error {
		return f.LaunchArgs([3]uint32{uint32(blocks), 1, 1}, [3]uint32{uint32(block), 1, 1}, shared, s, args)
	})
	if err != nil {
		return 0, 0, err
	}
	host := make([]T, blocks)
	if err := cuda.CopySliceDtoH(d.Context, host, partials); err != nil {
		return 0, 0, err
	}
	var sum T
	for _, p := range host {
		sum += p
	}
	return sum, elapsed, nil
}

// Timed runs launch on the default stream between two events and waits for
// it, returning the time between the events: the kernel's time on the
// device's clock.
func (d *Device) Timed(launch func(s *cuda.Stream) error) (time.Duration, error) {
	t, err := d.Queue(d.Context.DefaultStream(), launch)
	if err != nil {
		return 0, err
	}
	return t.Wait()
}

// Timing is work queued on a stream between two events, which may still
// be running: Wait waits for it and gives its time on the device's clock.
// A Timing that nobody waits for must be Dropped, which frees its events
// once the work is done without waiting for it.
type Timing struct {
	start, end *cuda.Event
}

// Queue queues launch's work on stream s between two events and returns
// without waiting for it.
func (d *Device) Queue(s *cuda.Stream, launch func(s *cuda.Stream) error) (*Timing, error) {
	ctx := d.Context
	start, err := ctx.NewEvent()
	if err != nil {
		return nil, err
	}
	end, err := ctx.NewEvent()
	if err != nil {
		start.Destroy()
		return nil, err
	}
	t := &Timing{start: start, end: end}
	if err := start.Record(s); err != nil {
		t.Drop()
		return nil, err
	}
	if err := launch(s); err != nil {
		t.Drop()
		return nil, err
	}
	if err := end.Record(s); err != nil {
		t.Drop()
		return nil, err
	}
	return t, nil
}

// Wait waits for the work and returns the time between its events. The
// error is the first the stream's work raised, such as a kernel's fault.
// It frees the events: call it (or Drop) once.
func (t *Timing) Wait() (time.Duration, error) {
	defer t.Drop()
	if err := t.end.Synchronize(); err != nil {
		return 0, fmt.Errorf("gpu: kernel: %w", err)
	}
	ms, err := cuda.ElapsedMillis(t.start, t.end)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Drop frees the events without waiting: the driver releases them once
// the work before them is done.
func (t *Timing) Drop() {
	_ = t.start.Destroy() // ErrReleased after Wait: nothing left to free
	_ = t.end.Destroy()
}

// fitsInt32 checks sizes against the kernels' int parameters.
func fitsInt32(sizes ...int) error {
	for _, s := range sizes {
		if s > 1<<31-1 {
			return fmt.Errorf("gpu: size %d does not fit the kernels' 32-bit parameters", s)
		}
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// auxCompute is how many streams for kernels AuxStreams keeps beside the
// views' own.
const auxCompute = 3

// AuxStreams returns the device's streams for products that overlap their
// copies with their kernels: one for uploads and one for downloads (a PCIe
// link carries both directions at once), and auxCompute streams for
// kernels, beside the view's, so that several small pieces of a product
// can share the GPU. They are made on first use and kept for the process;
// work of several products on them queues up in order.
func (d *Device) AuxStreams() (in, out *cuda.Stream, compute []*cuda.Stream, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range []**cuda.Stream{&d.copyIn, &d.copyOut} {
		if *s == nil {
			if *s, err = d.Context.NewStream(); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	for len(d.compute) < auxCompute {
		s, err := d.Context.NewStream()
		if err != nil {
			return nil, nil, nil, err
		}
		d.compute = append(d.compute, s)
	}
	return d.copyIn, d.copyOut, d.compute, nil
}
