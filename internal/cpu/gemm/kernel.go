package gemm

import "unsafe"

// KernelFunc sets the MR x NR block of C at c (row stride ldc elements) to
// alpha*A*B + beta*C, where a points at a packed MR x k panel of A (column
// after column) and b at a packed k x NR panel of B (row after row). It does
// not read C when beta is 0.
type KernelFunc[T Element] func(k int, a, b, c *T, ldc int, alpha, beta T)

// MicroKernel is a register-blocked micro-kernel and its block shape.
type MicroKernel[T Element] struct {
	Name   string
	MR, NR int
	Func   KernelFunc[T]
}

// The pure-Go micro-kernels: the portable twins of the assembly ones, with
// the same shapes, so that both work on the same packed panels.
var (
	portableF32 = MicroKernel[float32]{Name: "go-6x16", MR: 6, NR: 16, Func: portableKernel[float32](6, 16)}
	portableF64 = MicroKernel[float64]{Name: "go-6x8", MR: 6, NR: 8, Func: portableKernel[float64](6, 8)}
	portableI32 = MicroKernel[int32]{Name: "go-6x16", MR: 6, NR: 16, Func: portableKernel[int32](6, 16)}
)

// maxKernelSize bounds MR*NR of the portable kernels, so that their
// accumulators can live in a fixed-size array on the stack.
const maxKernelSize = 6 * 16

// portableKernel returns a pure-Go KernelFunc for an mr x nr block.
func portableKernel[T Element](mr, nr int) KernelFunc[T] {
	if mr*nr > maxKernelSize {
		panic("gemm: portable micro-kernel too large")
	}
	return func(k int, a, b, c *T, ldc int, alpha, beta T) {
		var acc [maxKernelSize]T
		ap := unsafe.Slice(a, k*mr)
		bp := unsafe.Slice(b, k*nr)
		for p := range k {
			bRow := bp[p*nr : p*nr+nr]
			aCol := ap[p*mr : p*mr+mr]
			for i, x := range aCol {
				row := acc[i*nr : i*nr+nr]
				for j, y := range bRow {
					row[j] += x * y
				}
			}
		}
		cs := unsafe.Slice(c, (mr-1)*ldc+nr)
		for i := range mr {
			dst, row := cs[i*ldc:i*ldc+nr], acc[i*nr:i*nr+nr]
			if beta == 0 {
				for j := range dst {
					dst[j] = alpha * row[j]
				}
				continue
			}
			for j := range dst {
				dst[j] = alpha*row[j] + beta*dst[j]
			}
		}
	}
}
