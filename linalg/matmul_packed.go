package linalg

import (
	"fmt"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpu/gemm"
)

func init() {
	registerProduct(KernelInfo{Name: "packed", Accelerator: amp.KindCPU, Transposes: true, Batches: true,
		Description: fmt.Sprintf("packed, cache-blocked GEMM on all cores (BLIS/GotoBLAS shape); micro-kernels %s, %s, %s",
			gemm.KernelName("float32"), gemm.KernelName("float64"), gemm.KernelName("int32"))},
		false, packedMatMul(gemm.Float32), packedMatMul(gemm.Float64), packedMatMul(gemm.Int32))
}

// gemmFunc is the engine's entry point for one element type.
type gemmFunc[T amp.Element] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// packedMatMul runs the CPU's packed engine (internal/cpu/gemm) on the views'
// host memory, a product of a batch at a time. It does not go through the
// model's ParallelForEach: the engine has its own threads, and what makes it
// fast (packing, register blocking) does not fit one-thread-per-element.
func packedMatMul[T amp.Element](f gemmFunc[T]) productFunc[T] {
	return func(_ *amp.AcceleratorView, p product[T]) (time.Duration, error) {
		if !p.batched {
			return 0, packedOne(f, p, p.a, p.b, p.c)
		}
		for i := range p.batch {
			a, err := p.a.Projection(i)
			if err != nil {
				return 0, err
			}
			b, err := p.b.Projection(i)
			if err != nil {
				return 0, err
			}
			c, err := p.c.Projection(i)
			if err != nil {
				return 0, err
			}
			if err := packedOne(f, p, a, b, c); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
}

// packedOne runs one product of p, on the rank-2 views a, b and c.
func packedOne[T amp.Element](f gemmFunc[T], p product[T], a, b, c *amp.ArrayView[T]) error {
	ad, lda, err := a.HostMatrix(false)
	if err != nil {
		return err
	}
	bd, ldb, err := b.HostMatrix(false)
	if err != nil {
		return err
	}
	cd, ldc, err := c.HostMatrix(true)
	if err != nil {
		return err
	}
	// An empty dimension gives a row stride of 0, which the engine
	// rejects; such a matrix is never read, so any stride will do.
	f(p.transA, p.transB, p.m, p.n, p.k, p.alpha, ad, max(1, lda), bd, max(1, ldb), p.beta, cd, max(1, ldc))
	return nil
}
