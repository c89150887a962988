package linalg

import (
	"fmt"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpu/gemm"
)

func init() {
	registerMatMul(KernelInfo{Name: "packed", Accelerator: amp.KindCPU,
		Description: fmt.Sprintf("packed, cache-blocked GEMM on all cores (BLIS/GotoBLAS shape); micro-kernels %s, %s, %s",
			gemm.KernelName("float32"), gemm.KernelName("float64"), gemm.KernelName("int32"))},
		packedMatMul(gemm.Float32), packedMatMul(gemm.Float64), packedMatMul(gemm.Int32))
}

// gemmFunc is the engine's entry point for one element type.
type gemmFunc[T amp.Element] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// packedMatMul runs the CPU's packed engine (internal/cpu/gemm) on the views'
// host memory. It does not go through the model's ParallelForEach: the engine
// has its own threads, and what makes it fast (packing, register blocking)
// does not fit one-thread-per-element.
func packedMatMul[T amp.Element](f gemmFunc[T]) matmulFunc[T] {
	return func(_ *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], _ int) error {
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
		m, k, n := a.Extent().At(0), a.Extent().At(1), b.Extent().At(1)
		// An empty dimension gives a row stride of 0, which the engine
		// rejects; such a matrix is never read, so any stride will do.
		f(false, false, m, n, k, alpha, ad, max(1, lda), bd, max(1, ldb), beta, cd, max(1, ldc))
		return nil
	}
}
