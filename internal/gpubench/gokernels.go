package gpubench

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/linalg"
)

// goKernelLibrary is one of linalg's Go kernels, run as a user runs it:
// linalg.MatMul over amp array views on the device's accelerator. The
// kernel works on the views' copies in GPU memory, which the benchmark's
// buffers are copied into (device to device) before it and C out of
// after, outside its timed span: the kernel time is the kernel's own, from
// the CUDA events amp records around the launch
// (linalg.Options.KernelTime). The copies, a few microseconds at the
// device's bandwidth, are in the end-to-end time.
func goKernelLibrary(dev *gpu.Device, name, kernel string, tile int, desc string) Library {
	g := &goKernels{dev: dev, kernel: kernel, tile: tile}
	return Library{Name: name, Description: desc, Multiply: g.multiply}
}

type goKernels struct {
	dev    *gpu.Device
	kernel string
	tile   int

	mu   sync.Mutex
	view *amp.AcceleratorView
	// ops holds the views of the last case, kept from one repetition to
	// the next as a caller keeps its data on the GPU: *goOperands[T].
	ops      any
	released func() error
}

// goOperands are one case's array views.
type goOperands[T float32 | float64] struct {
	m, n, k int
	a, b, c *amp.ArrayView[T]
}

func (g *goKernels) multiply(t cpubench.Type, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.view == nil {
		acc, err := amp.Find(fmt.Sprintf("cuda:%d", g.dev.Ordinal))
		if err != nil {
			return 0, err
		}
		g.view = acc.NewView()
	}
	if t == cpubench.Float64 {
		return goMultiply[float64](g, m, n, k, a, lda, b, ldb, c, ldc)
	}
	return goMultiply[float32](g, m, n, k, a, lda, b, ldb, c, ldc)
}

// operandsFor returns views of m x k, k x n and m x n, the last case's if
// it had the same shape and type. Their Go slices are never read: the data
// is written into their GPU copies.
func operandsFor[T float32 | float64](g *goKernels, m, n, k int) (*goOperands[T], error) {
	if o, ok := g.ops.(*goOperands[T]); ok && o.m == m && o.n == n && o.k == k {
		return o, nil
	}
	if g.released != nil {
		// The last case's views: they are not needed on the host.
		_ = g.released()
		g.ops, g.released = nil, nil
	}
	o := &goOperands[T]{m: m, n: n, k: k}
	var err error
	if o.a, err = amp.NewArrayView(amp.Extent2(m, k), make([]T, m*k)); err != nil {
		return nil, err
	}
	if o.b, err = amp.NewArrayView(amp.Extent2(k, n), make([]T, k*n)); err != nil {
		return nil, err
	}
	if o.c, err = amp.NewArrayView(amp.Extent2(m, n), make([]T, m*n)); err != nil {
		return nil, err
	}
	g.ops = o
	g.released = func() error {
		var first error
		for _, x := range []*amp.ArrayView[T]{o.a, o.b, o.c} {
			x.DiscardData() // nothing to bring home
			if err := x.Release(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	return o, nil
}

func goMultiply[T float32 | float64](g *goKernels, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
	v, ctx := g.view, g.dev.Context
	size := int(unsafe.Sizeof(T(0)))
	o, err := operandsFor[T](g, m, n, k)
	if err != nil {
		return 0, err
	}
	copyIn := func(x *amp.ArrayView[T], src cuda.DevicePtr, ld, rows, cols int) error {
		dst, xld, err := x.DeviceMatrix(v, amp.AccessWrite)
		if err != nil {
			return err
		}
		if rows*cols == 0 {
			return nil
		}
		if ld != cols || xld != cols {
			return fmt.Errorf("gpubench: %s: leading dimensions %d and %d of a %dx%d matrix (want %d)", g.kernel, ld, xld, rows, cols, cols)
		}
		return ctx.CopyDtoD(cuda.DevicePtr(dst), src, rows*cols*size)
	}
	if err := copyIn(o.a, a, lda, m, k); err != nil {
		return 0, err
	}
	if err := copyIn(o.b, b, ldb, k, n); err != nil {
		return 0, err
	}
	// C is not read (beta = 0): only its copy needs to be on the device.
	o.c.DiscardData()
	var took time.Duration
	if err := linalg.MatMul(1, o.a, o.b, 0, o.c, &linalg.Options{Kernel: g.kernel, Tile: g.tile, View: v, KernelTime: &took}); err != nil {
		return 0, err
	}
	src, cld, err := o.c.DeviceMatrix(v, amp.AccessRead)
	if err != nil {
		return 0, err
	}
	if m*n > 0 {
		if ldc != n || cld != n {
			return 0, fmt.Errorf("gpubench: %s: leading dimensions %d and %d of C (want %d)", g.kernel, ldc, cld, n)
		}
		if err := ctx.CopyDtoD(c, cuda.DevicePtr(src), m*n*size); err != nil {
			return 0, err
		}
	}
	// The copy is queued on the default stream: done before the caller
	// reads C, which it does after waiting for the device.
	if err := ctx.Synchronize(); err != nil {
		return 0, err
	}
	runtime.KeepAlive(o)
	return took, nil
}
