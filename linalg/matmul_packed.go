package linalg

import (
	"fmt"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpu/gemm"
)

func init() {
	registerProduct(KernelInfo{Name: "packed", Accelerator: amp.KindCPU, Transposes: true, Batches: true,
		Description: fmt.Sprintf("packed, cache-blocked GEMM on all cores (BLIS/GotoBLAS shape), small products of a batch side by side on the cores; micro-kernels %s, %s, %s",
			gemm.KernelName("float32"), gemm.KernelName("float64"), gemm.KernelName("int32"))},
		false, packedMatMul(gemm.Float32, gemm.Float32Batch), packedMatMul(gemm.Float64, gemm.Float64Batch), packedMatMul(gemm.Int32, gemm.Int32Batch))
}

// gemmFunc is the engine's entry point for one element type.
type gemmFunc[T amp.Element] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// gemmBatchFunc is the engine's entry point for a batch of one shape.
type gemmBatchFunc[T amp.Element] func(transA, transB bool, m, n, k int, alpha T, a [][]T, lda int, b [][]T, ldb int, beta T, c [][]T, ldc int)

// packedMatMul runs the CPU's packed engine (internal/cpu/gemm) on the views'
// host memory; a batch in one call of the engine, which runs small
// products side by side on the cores. It does not go through the model's
// ParallelForEach: the engine has its own threads, and what makes it fast
// (packing, register blocking) does not fit one-thread-per-element.
func packedMatMul[T amp.Element](f gemmFunc[T], fb gemmBatchFunc[T]) productFunc[T] {
	return func(_ *amp.AcceleratorView, p product[T]) (time.Duration, error) {
		if !p.batched {
			return 0, packedOne(f, p, p.a, p.b, p.c)
		}
		as, bs, cs := make([][]T, p.batch), make([][]T, p.batch), make([][]T, p.batch)
		var lda, ldb, ldc int
		for i := range p.batch {
			var err error
			if as[i], lda, err = hostProjection(p.a, i, false); err != nil {
				return 0, err
			}
			if bs[i], ldb, err = hostProjection(p.b, i, false); err != nil {
				return 0, err
			}
			if cs[i], ldc, err = hostProjection(p.c, i, true); err != nil {
				return 0, err
			}
		}
		// Empty matrices give row strides of 0, which the engine rejects;
		// they are never read, so any stride will do.
		fb(p.transA, p.transB, p.m, p.n, p.k, p.alpha, as, max(1, lda), bs, max(1, ldb), p.beta, cs, max(1, ldc))
		return 0, nil
	}
}

// hostProjection returns the host elements and row stride of matrix i of
// the rank-3 view x (see amp's HostMatrix).
func hostProjection[T amp.Element](x *amp.ArrayView[T], i int, forWrite bool) ([]T, int, error) {
	m, err := x.Projection(i)
	if err != nil {
		return nil, 0, err
	}
	return m.HostMatrix(forWrite)
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
