package linalg

import (
	"runtime"
	"time"
	"unsafe"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/gpu/kernels"
	"github.com/goamp/goamp/internal/queue"
)

// The textbook kernels on CUDA GPUs (sources in the package doc): CUDA C in internal/gpu/kernels, one file
// a technique, compiled into the binary. Adding one is its .cu file, its
// fatbin and one registration here; the conformance tests and benchmarks
// walk the registry.
func init() {
	registerProduct(KernelInfo{Name: "reg128", Accelerator: amp.KindCUDA, Transposes: true, Batches: true,
		Description: "128x128 tiles of C a block, 8x8 a thread in registers, panels of A and B double-buffered in shared memory, loads two steps ahead; float32 tn on Hopper and newer fed by TMA (steps of 16 along K, a 4-step ring), and float32 nn, nt and tt of enough work on transposed copies into it; K split across blocks for small products (matmul_reg128.cu)"},
		true, cudaGemm[float32](kernels.MatmulReg128), cudaGemm[float64](kernels.MatmulReg128), cudaGemm[int32](kernels.MatmulReg128))
	registerProduct(KernelInfo{Name: "dmma", Accelerator: amp.KindCUDA, Transposes: true, Batches: true, MinCompute: 80,
		Description: "float64 on the FP64 tensor cores (mma.sync, sm_80 and newer): 64x64 tiles of C a block of 4 warps, panels of A and B through a 3-step cp.async ring in shared memory (matmul_dmma.cu); on Hopper, for operands TMA can read, 128x64 tiles of 4 warps fed by TMA from a producer warpgroup, or 64x64 tiles fed by a producer warp for short or small products (matmul_dmma_tma.cu); K split across blocks for small products"},
		true, nil, cudaGemm[float64](kernels.MatmulDMMA), nil)
	// wgmma before mma: auto takes the first kernel of the precision that
	// the GPU runs.
	registerProduct(KernelInfo{Name: "wgmma", Accelerator: amp.KindCUDA, Transposes: true, Batches: true, MinCompute: 90, MaxCompute: 90, NeedsTMA: true, Precisions: []Precision{TF32, BF16, FP16},
		Description: "float32 in a reduced precision (Options.Precision: tf32, bf16 or fp16) on Hopper's tensor cores (wgmma fed by TMA, compute capability 9.0 only), sums in float32: the operands packed along K and rounded (in tf32 those TMA can read are read where they lie and rounded by TMA as it copies them: nn, nt and tt aligned pack nothing), then 128x256 tiles of C a block of a producer and two consumer warpgroups over a 4-step mbarrier ring (in tf32, past one wave of tiles, a block an SM walking several); K split across blocks for small products (matmul_wgmma.cu)"},
		true, cudaGemm[float32](kernels.MatmulWGMMA), nil, nil)
	registerProduct(KernelInfo{Name: "mma", Accelerator: amp.KindCUDA, Transposes: true, Batches: true, MinCompute: 80, Precisions: []Precision{TF32, BF16, FP16},
		Description: "float32 in a reduced precision (Options.Precision: tf32, bf16 or fp16) on the tensor cores (mma.sync, sm_80 and newer), sums in float32: 128x128 tiles of C a block of 8 warps, panels of A and B through a 4-step cp.async ring in shared memory, rounded as they are read; K split across blocks for small products (matmul_mma.cu)"},
		true, cudaGemm[float32](kernels.MatmulMMA), nil, nil)
	registerTimedMatMul(KernelInfo{Name: "naive", Accelerator: amp.KindCUDA,
		Description: "one GPU thread per element of C, operands read from global memory (matmul_naive.cu)"},
		cudaMatMul[float32](kernels.MatmulNaive), cudaMatMul[float64](kernels.MatmulNaive), cudaMatMul[int32](kernels.MatmulNaive))
	registerTimedMatMul(KernelInfo{Name: "tiled", Accelerator: amp.KindCUDA, DefaultTile: 16, MaxTile: 32, Tiles: kernels.Tiles(),
		Description: "TILE x TILE tiles of A and B in shared memory, bounds-checked loads and guarded stores (Kirk & Hwu, PMPP); tile 8, 16 or 32 (matmul_tiled.cu)"},
		cudaMatMul[float32](kernels.MatmulTiled), cudaMatMul[float64](kernels.MatmulTiled), cudaMatMul[int32](kernels.MatmulTiled))
	registerTimedDot(KernelInfo{Name: "onepass", Accelerator: amp.KindCUDA,
		Description: "one kernel: 16-byte loads in a grid-stride loop, warp-shuffle block sums, each block's partial added exactly into a fixed-point accumulator on the device by integer atomics (no last block to wait for), rounded once; aligned float vectors of 32-128 MiB: the blocks that finish first take the last fifth in chunks, each chunk added as exactly; float32 accumulated in float64; the same bits every run (dot_onepass.cu)"},
		cudaDotOnePass[float32], cudaDotOnePass[float64], cudaDotOnePass[int32])
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

// cudaGemm queues a GEMM technique on the view's stream: transposes, and
// a batch in one launch (or one per 65535 products, the most a grid
// takes), with the views' device copies made current as cudaMatMul does.
// It returns once the kernels are queued, unless p.timed asks for their
// time.
func cudaGemm[T amp.Element](technique string) productFunc[T] {
	return func(v *amp.AcceleratorView, p product[T]) (time.Duration, error) {
		d, err := gpu.Open(v.Accelerator().Ordinal())
		if err != nil {
			return 0, err
		}
		if elapsed, ok, err := overlappedGemm(d, v, technique, p); ok || err != nil {
			return elapsed, err
		}
		ad, err := p.a.DeviceAddress(v, amp.AccessRead)
		if err != nil {
			return 0, err
		}
		bd, err := p.b.DeviceAddress(v, amp.AccessRead)
		if err != nil {
			return 0, err
		}
		access := amp.AccessReadWrite
		if p.beta == 0 {
			access = amp.AccessWrite
		}
		cd, err := p.c.DeviceAddress(v, access)
		if err != nil {
			return 0, err
		}
		sa, sb, sc := p.a.Strides(), p.b.Strides(), p.c.Strides()
		s := gpu.GemmShape{TransA: p.transA, TransB: p.transB, M: p.m, N: p.n, K: p.k, Batch: 1, Precision: string(p.precision)}
		// The matrices' row strides, and for a batch the strides between them.
		s.LDA, s.LDB, s.LDC = sa[len(sa)-2], sb[len(sb)-2], sc[len(sc)-2]
		if p.batched {
			s.StrideA, s.StrideB, s.StrideC = sa[0], sb[0], sc[0]
		}
		colsA, colsB := p.k, p.n
		if p.transA {
			colsA = p.m
		}
		if p.transB {
			colsB = p.k
		}
		s.LDA, s.LDB, s.LDC = max(1, s.LDA, colsA), max(1, s.LDB, colsB), max(1, s.LDC, p.n)
		st, err := queue.Of(v)
		if err != nil {
			return 0, err
		}
		size := uint64(unsafe.Sizeof(*new(T)))
		var total time.Duration
		products := 1
		if p.batched {
			products = p.batch // MatMul runs no empty batch
		}
		for first := 0; first < products; first += maxGemmBatch {
			s.Batch = min(products-first, maxGemmBatch)
			at := func(base uint64, stride int) uint64 {
				if base == 0 {
					return 0
				}
				return base + uint64(first*stride)*size
			}
			t, err := gpu.GemmOn(d, st, technique, s, p.alpha, at(ad, s.StrideA), at(bd, s.StrideB), p.beta, at(cd, s.StrideC))
			if err == nil && t != nil {
				if p.timed {
					var elapsed time.Duration
					elapsed, err = t.Wait()
					total += elapsed
				} else {
					t.Drop()
				}
			}
			if err != nil {
				return total, err
			}
		}
		// The views' device copies stay while the work is queued: the
		// copy's release waits for the device (amp's cudaCopy.release),
		// so a view collected meanwhile does not free memory under a
		// running kernel.
		return total, nil
	}
}

// maxGemmBatch is the most products one gpu.Gemm call takes (a grid's z).
const maxGemmBatch = 65535

// cudaDot runs a dot technique on the view's GPU, tile threads a block.
func cudaDot[T amp.Element](technique string) timedDotFunc[T] {
	return func(v *amp.AcceleratorView, x, y *amp.ArrayView[T], tile int) (T, time.Duration, error) {
		sum, elapsed, err := onDeviceVectors(v, x, y, func(d *gpu.Device, n int, xd, yd uint64) (T, time.Duration, error) {
			return gpu.Dot[T](d, technique, tile, n, xd, yd)
		})
		return sum, elapsed, tileError(err)
	}
}

// cudaDotOnePass runs the one-pass dot product on the view's GPU.
func cudaDotOnePass[T amp.Element](v *amp.AcceleratorView, x, y *amp.ArrayView[T], _ int) (T, time.Duration, error) {
	return onDeviceVectors(v, x, y, gpu.DotOnePass[T])
}

// onDeviceVectors makes x and y current on the view's GPU and runs dot on
// their device addresses.
func onDeviceVectors[T amp.Element](v *amp.AcceleratorView, x, y *amp.ArrayView[T], dot func(d *gpu.Device, n int, xd, yd uint64) (T, time.Duration, error)) (T, time.Duration, error) {
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
	sum, elapsed, err := dot(d, x.Extent().At(0), xd, yd)
	runtime.KeepAlive(x) // as in cudaMatMul
	runtime.KeepAlive(y)
	if err != nil {
		return 0, 0, err
	}
	return sum, elapsed, nil
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
