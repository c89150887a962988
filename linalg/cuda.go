package linalg

import (
	"runtime"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// The textbook kernels on CUDA GPUs (sources in the package doc): CUDA C in internal/gpu/kernels, one file
// a technique, compiled into the binary. Adding one is its .cu file, its
// fatbin and one registration here; the conformance tests and benchmarks
// walk the registry.
func init() {
	registerTimedMatMul(KernelInfo{Name: "reg128", Accelerator: amp.KindCUDA,
		Description: "128x128 tiles of C a block, 8x8 a thread in registers, panels of A and B double-buffered in shared memory, loads two steps ahead (matmul_reg128.cu)"},
		cudaGemm[float32](kernels.MatmulReg128), cudaGemm[float64](kernels.MatmulReg128), cudaGemm[int32](kernels.MatmulReg128))
	registerTimedMatMul(KernelInfo{Name: "naive", Accelerator: amp.KindCUDA,
		Description: "one GPU thread per element of C, operands read from global memory (matmul_naive.cu)"},
		cudaMatMul[float32](kernels.MatmulNaive), cudaMatMul[float64](kernels.MatmulNaive), cudaMatMul[int32](kernels.MatmulNaive))
	registerTimedMatMul(KernelInfo{Name: "tiled", Accelerator: amp.KindCUDA, DefaultTile: 16, MaxTile: 32, Tiles: kernels.Tiles(),
		Description: "TILE x TILE tiles of A and B in shared memory, bounds-checked loads and guarded stores (Kirk & Hwu, PMPP); tile 8, 16 or 32 (matmul_tiled.cu)"},
		cudaMatMul[float32](kernels.MatmulTiled), cudaMatMul[float64](kernels.MatmulTiled), cudaMatMul[int32](kernels.MatmulTiled))
	registerTimedDot(KernelInfo{Name: "tiled", Accelerator: amp.KindCUDA, DefaultTile: 256, MaxTile: 1024, Tiles: powersOfTwo(1024),
		Description: "grid-stride partial sums, a tree reduction in shared memory (CUDA by Example, ch. 5), per-block partials added on the host (dot_shared.cu)"},
		cudaDot[float32](kernels.DotShared), cudaDot[float64](kernels.DotShared), cudaDot[int32](kernels.DotShared))
	registerTimedDot(KernelInfo{Name: "warp", Accelerator: amp.KindCUDA, DefaultTile: 256, MaxTile: 1024, Tiles: powersOfTwo(1024),
		Description: "grid-stride partial sums, warp-shuffle reductions, per-block partials added on the host (dot_warp.cu)"},
		cudaDot[float32](kernels.DotWarp), cudaDot[float64](kernels.DotWarp), cudaDot[int32](kernels.DotWarp))
}

// cudaMatMul runs a matmul technique on the view's GPU: the views' copies
// there are made current (C is only written when beta is 0, so it is not
// uploaded), and the result stays on the device until the host reads it.
func cudaMatMul[T amp.Element](technique string) timedMatMulFunc[T] {
	return func(v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], tile int) (time.Duration, error) {
		d, err := gpu.Open(v.Accelerator().Ordinal())
		if err != nil {
			return 0, err
		}
		ad, lda, err := a.DeviceMatrix(v, amp.AccessRead)
		if err != nil {
			return 0, err
		}
		bd, ldb, err := b.DeviceMatrix(v, amp.AccessRead)
		if err != nil {
			return 0, err
		}
		access := amp.AccessReadWrite
		if beta == 0 {
			access = amp.AccessWrite
		}
		cd, ldc, err := c.DeviceMatrix(v, access)
		if err != nil {
			return 0, err
		}
		m, k, n := a.Extent().At(0), a.Extent().At(1), b.Extent().At(1)
		elapsed, err := gpu.MatMul(d, technique, tile, m, n, k, alpha, ad, max(1, lda), bd, max(1, ldb), beta, cd, max(1, ldc))
		// The kernel used the views' device copies by address: the views
		// must outlive it, or a garbage collection in between frees the
		// copies under it (ArrayView's cleanup).
		runtime.KeepAlive(a)
		runtime.KeepAlive(b)
		runtime.KeepAlive(c)
		if err != nil {
			return 0, tileError(err)
		}
		return elapsed, nil
	}
}

// cudaGemm runs a GEMM technique (one product, no transposes) on the view's
// GPU, with the views' device copies made current as cudaMatMul does.
func cudaGemm[T amp.Element](technique string) timedMatMulFunc[T] {
	return func(v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], _ int) (time.Duration, error) {
		d, err := gpu.Open(v.Accelerator().Ordinal())
		if err != nil {
			return 0, err
		}
		ad, lda, err := a.DeviceMatrix(v, amp.AccessRead)
		if err != nil {
			return 0, err
		}
		bd, ldb, err := b.DeviceMatrix(v, amp.AccessRead)
		if err != nil {
			return 0, err
		}
		access := amp.AccessReadWrite
		if beta == 0 {
			access = amp.AccessWrite
		}
		cd, ldc, err := c.DeviceMatrix(v, access)
		if err != nil {
			return 0, err
		}
		m, k, n := a.Extent().At(0), a.Extent().At(1), b.Extent().At(1)
		s := gpu.GemmShape{M: m, N: n, K: k, LDA: max(1, lda, k), LDB: max(1, ldb, n), LDC: max(1, ldc, n), Batch: 1}
		elapsed, err := gpu.Gemm(d, technique, s, alpha, ad, bd, beta, cd)
		runtime.KeepAlive(a) // as in cudaMatMul
		runtime.KeepAlive(b)
		runtime.KeepAlive(c)
		return elapsed, err
	}
}

// cudaDot runs a dot technique on the view's GPU, tile threads a block.
func cudaDot[T amp.Element](technique string) timedDotFunc[T] {
	return func(v *amp.AcceleratorView, x, y *amp.ArrayView[T], tile int) (T, time.Duration, error) {
		d, err := gpu.Open(v.Accelerator().Ordinal())
		if err != nil {
			return 0, 0, err
		}
		xd, err := x.DeviceVector(v, amp.AccessRead)
		if err != nil {
			return 0, 0, err
		}
		yd, err := y.DeviceVector(v, amp.AccessRead)
		if err != nil {
			return 0, 0, err
		}
		sum, elapsed, err := gpu.Dot[T](d, technique, tile, x.Extent().At(0), xd, yd)
		runtime.KeepAlive(x) // as in cudaMatMul
		runtime.KeepAlive(y)
		if err != nil {
			return 0, 0, tileError(err)
		}
		return sum, elapsed, nil
	}
}

// powersOfTwo lists 1, 2, 4, ... up to max: the block sizes the dot
// kernels' tree reductions can halve down to one.
func powersOfTwo(max int) []int {
	var out []int
	for t := 1; t <= max; t *= 2 {
		out = append(out, t)
	}
	return out
}
