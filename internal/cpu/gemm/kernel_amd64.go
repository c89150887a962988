//go:build !noasm

package gemm

import "golang.org/x/sys/cpu"

// hasAVX2FMA and hasAVX512 report whether this CPU (and its operating system)
// runs the AVX2/FMA and the AVX-512 micro-kernels of kernel_amd64.s. The
// int32 kernels (multiplies and adds, no FMA) take the same blocks as
// float32's, whose elements are as big.
var (
	hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512  = cpu.X86.HasAVX512F
	// hasFewColumns reports whether the column and dot kernels run: they
	// build their masks with BZHI (BMI2), which every AVX-512 CPU has but
	// a virtual machine might hide.
	hasFewColumns = hasAVX512 && cpu.X86.HasBMI2
)

// The block sizes (engine.go says what each holds) are the best of
// interleaved sweeps on the development machine, docs/PERFORMANCE.md gives
// the command. Deep k blocks (kc) and short row bands (mc) won by 5-15%
// over the textbook choice of a B micro-panel that fits half of L1: each
// pass over k reads and writes all of C, and fewer passes cost less than the
// L2 traffic that the larger panels add. float64's B block is held to 4 MiB
// (nc = 1024): at 8 MiB it ran 12-18% slower at n = 2048 and 4096, and the
// AVX2 engine 33% slower at 2048.
func init() {
	if hasAVX2FMA {
		enginesF32 = append(enginesF32, &engine[float32]{
			kernel: MicroKernel[float32]{Name: "avx2-6x16", MR: 6, NR: 16, Func: kernelF32x6x16},
			mc:     24, kc: 1024, nc: 2048})
		enginesF64 = append(enginesF64, &engine[float64]{
			kernel: MicroKernel[float64]{Name: "avx2-6x8", MR: 6, NR: 8, Func: kernelF64x6x8},
			mc:     24, kc: 512, nc: 1024})
		enginesI32 = append(enginesI32, &engine[int32]{
			kernel: MicroKernel[int32]{Name: "avx2-6x16", MR: 6, NR: 16, Func: kernelI32x6x16},
			mc:     24, kc: 1024, nc: 2048})
	}
	if hasAVX512 {
		enginesF32 = append(enginesF32, &engine[float32]{
			kernel: MicroKernel[float32]{Name: "avx512-12x32", MR: 12, NR: 32, Func: kernelF32x12x32, Strided: kernelF32x12x32ldb,
				InPlace: kernelF32x12x32lda, InPlaceT: kernelF32x12x32ldat,
				Edges: edges(16, kernelF32x12x16ldb, kernelF32x12x16lda, kernelF32x12x16ldat, 8, kernelF32x12x8ldb, kernelF32x12x8lda, kernelF32x12x8ldat)},
			mc: 24, kc: 1024, nc: 2048,
			narrow: &engine[float32]{kernel: MicroKernel[float32]{Name: "avx512-8x32", MR: 8, NR: 32, Func: kernelF32x8x32, Strided: kernelF32x8x32ldb,
				InPlace: kernelF32x8x32lda, InPlaceT: kernelF32x8x32ldat,
				Edges: edges(16, kernelF32x8x16ldb, kernelF32x8x16lda, kernelF32x8x16ldat, 8, kernelF32x8x8ldb, kernelF32x8x8lda, kernelF32x8x8ldat)},
				mc: 24, kc: 1024, nc: 2048}})
		enginesF64 = append(enginesF64, &engine[float64]{
			kernel: MicroKernel[float64]{Name: "avx512-12x16", MR: 12, NR: 16, Func: kernelF64x12x16, Strided: kernelF64x12x16ldb,
				InPlace: kernelF64x12x16lda, InPlaceT: kernelF64x12x16ldat,
				Edges: edges(8, kernelF64x12x8ldb, kernelF64x12x8lda, kernelF64x12x8ldat, 4, kernelF64x12x4ldb, kernelF64x12x4lda, kernelF64x12x4ldat)},
			mc: 24, kc: 512, nc: 1024,
			narrow: &engine[float64]{kernel: MicroKernel[float64]{Name: "avx512-8x16", MR: 8, NR: 16, Func: kernelF64x8x16, Strided: kernelF64x8x16ldb,
				InPlace: kernelF64x8x16lda, InPlaceT: kernelF64x8x16ldat,
				Edges: edges(8, kernelF64x8x8ldb, kernelF64x8x8lda, kernelF64x8x8ldat, 4, kernelF64x8x4ldb, kernelF64x8x4lda, kernelF64x8x4ldat)},
				mc: 24, kc: 512, nc: 1024}})
		enginesI32 = append(enginesI32, &engine[int32]{
			kernel: MicroKernel[int32]{Name: "avx512-12x32", MR: 12, NR: 32, Func: kernelI32x12x32},
			mc:     24, kc: 1024, nc: 2048})
	}
	if hasFewColumns {
		for _, e := range enginesF32 {
			if e.kernel.MR <= 16 && e.kernel.InPlace != nil {
				withFewColumns(e, columnKernelF32, dotKernelF32, rowKernelF32, gatherColumnsF32)
				for n := e; n != nil; n = n.narrow {
					n.kernel.Columns8 = [2]Columns8Func[float32]{columns8KernelF32x16, columns8KernelF32x32}
				}
				e.kernel.Masked = &MaskedEdge[float32]{Cols: 16, Strided: kernelF32x12x16mldb, InPlace: kernelF32x12x16mlda, InPlaceT: kernelF32x12x16mldat}
				e.narrow.kernel.Masked = &MaskedEdge[float32]{Cols: 16, Strided: kernelF32x8x16mldb, InPlace: kernelF32x8x16mlda, InPlaceT: kernelF32x8x16mldat}
			}
		}
		for _, e := range enginesF64 {
			if e.kernel.MR <= 16 && e.kernel.InPlace != nil {
				withFewColumns(e, columnKernelF64, dotKernelF64, rowKernelF64, gatherColumnsF64)
				for n := e; n != nil; n = n.narrow {
					n.kernel.Columns8 = [2]Columns8Func[float64]{columns8KernelF64x8, columns8KernelF64x16}
				}
				e.kernel.Masked = &MaskedEdge[float64]{Cols: 8, Strided: kernelF64x12x8mldb, InPlace: kernelF64x12x8mlda, InPlaceT: kernelF64x12x8mldat}
				e.narrow.kernel.Masked = &MaskedEdge[float64]{Cols: 8, Strided: kernelF64x8x8mldb, InPlace: kernelF64x8x8mlda, InPlaceT: kernelF64x8x8mldat}
			}
		}
	}
	engineF32, engineF64, engineI32 = last(enginesF32), last(enginesF64), last(enginesI32)
}

// withFewColumns gives e's kernel, and its narrow twin's, the column,
// dot and row kernels and the copy that feeds the dot kernel.
func withFewColumns[T Element](e *engine[T], column ColumnFunc[T], dot DotFunc[T], row RowFunc[T], gather func(*T, int, *T, int, int, int)) {
	for ; e != nil; e = e.narrow {
		k := &e.kernel
		k.Column, k.Dot, k.Row, k.GatherColumns = column, dot, row, gather
	}
}

// edges returns a half (cols wide) and a quarter (qcols) edge kernel,
// each B strided with A packed, in place and transposed in place; the
// quarter one only where AVX2 and FMA run, its instruction sets (every
// AVX-512 CPU has them, but a virtual machine may hide them).
func edges[T Element](cols int, strided StridedFunc[T], inPlace, inPlaceT InPlaceFunc[T],
	qcols int, qStrided StridedFunc[T], qInPlace, qInPlaceT InPlaceFunc[T]) []EdgeKernel[T] {
	e := []EdgeKernel[T]{{Cols: cols, Strided: strided, InPlace: inPlace, InPlaceT: inPlaceT}}
	if hasAVX2FMA {
		e = append(e, EdgeKernel[T]{Cols: qcols, Strided: qStrided, InPlace: qInPlace, InPlaceT: qInPlaceT})
	}
	return e
}

// peakFMA runs n trips of the register-only FMA loop of instruction set isa
// ("avx2" or "avx512"), of single (or, if double, double) precision, and
// returns the flops a trip does.
func peakFMA(isa string, n int, double bool) (flopsPerTrip int) {
	switch {
	case isa == "avx512" && double:
		fmaPeak512F64(n)
		return 2 * 24 * 8
	case isa == "avx512":
		fmaPeak512F32(n)
		return 2 * 24 * 16
	case double:
		fmaPeakF64(n)
		return 2 * 12 * 4
	}
	fmaPeakF32(n)
	return 2 * 12 * 8
}
