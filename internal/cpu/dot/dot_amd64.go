//go:build !noasm

package dot

import "golang.org/x/sys/cpu"

// hasAVX2FMA reports whether this CPU runs the assembly kernels.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAVX2FMA {
		kernelsF32 = append(kernelsF32, kernel[float32]{Name: "avx2", Func: dotF32AVX2})
		kernelsF64 = append(kernelsF64, kernel[float64]{Name: "avx2", Func: dotF64AVX2})
	}
}

// float32Kernel tests the CPU flag on each call rather than calling through
// a function variable: the branch always goes the same way and is predicted,
// and a direct call is cheaper than an indirect one for short vectors.
func float32Kernel(x, y []float32) float32 {
	if hasAVX2FMA {
		return dotF32AVX2(x, y)
	}
	return portable(x, y)
}

// float64Kernel is float32Kernel for float64.
func float64Kernel(x, y []float64) float64 {
	if hasAVX2FMA {
		return dotF64AVX2(x, y)
	}
	return portable(x, y)
}
