//go:build !noasm

package gemm

import "golang.org/x/sys/cpu"

// The assembly micro-kernels (kernel_amd64.s), which need AVX2 and FMA.
var (
	avx2F32 = MicroKernel[float32]{Name: "avx2-6x16", MR: 6, NR: 16, Func: kernelF32x6x16, FuncRowA: kernelF32x6x16RowA}
	avx2F64 = MicroKernel[float64]{Name: "avx2-6x8", MR: 6, NR: 8, Func: kernelF64x6x8, FuncRowA: kernelF64x6x8RowA}
)

// hasAVX2FMA reports whether this CPU runs the assembly micro-kernels.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAVX2FMA {
		engineF32.kernel = avx2F32
		engineF64.kernel = avx2F64
		kernelsF32 = append(kernelsF32, avx2F32)
		kernelsF64 = append(kernelsF64, avx2F64)
	}
}

// peakFMA runs n trips of the register-only FMA loop of single (or, if
// double, double) precision and returns the flops a trip does, if this CPU
// has the loop.
func peakFMA(n int, double bool) (flopsPerTrip int, ok bool) {
	if !hasAVX2FMA {
		return 0, false
	}
	if double {
		fmaPeakF64(n)
		return 2 * 12 * 4, true
	}
	fmaPeakF32(n)
	return 2 * 12 * 8, true
}
