package gemm

import "unsafe"

// KernelFunc sets the MR x NR block of C at c (row stride ldc elements) to
// alpha*A*B + beta*C, where a points at a packed MR x k panel of A (column
// after column) and b at a packed k x NR panel of B (row after row). It does
// not read C when beta is 0.
type KernelFunc[T Element] func(k int, a, b, c *T, ldc int, alpha, beta T)

// StridedFunc is KernelFunc with B read where it lies: row p of the k x NR
// panel at b + p*ldb elements, not packed.
type StridedFunc[T Element] func(k int, a, b, c *T, ldb, ldc int, alpha, beta T)

// InPlaceFunc is StridedFunc with A read where it lies too: row r of the
// MR x k block at a + r*lda elements, not packed.
type InPlaceFunc[T Element] func(k int, a, b, c *T, lda, ldb, ldc int, alpha, beta T)

// MicroKernel is a register-blocked micro-kernel and its block shape.
type MicroKernel[T Element] struct {
	Name   string
	MR, NR int
	Func   KernelFunc[T]
	// Strided, if not nil, is Func's twin on an unpacked B, for products
	// of a few rows (see problem.directB).
	Strided StridedFunc[T]
	// InPlace, if not nil, is Strided's twin on an unpacked A as well, for
	// small products (see problem.inPlaceA).
	InPlace InPlaceFunc[T]
	// InPlaceT, if not nil, is InPlace for a transposed A: k step p of the
	// MR x k block of op(A) is the MR adjacent elements at a + p*lda.
	InPlaceT InPlaceFunc[T]
	// HalfStrided, HalfInPlace and HalfInPlaceT, if not nil, are Strided,
	// InPlace and InPlaceT on blocks of NR/2 columns: a block's last panel
	// of NR/2 columns or fewer, padded with zeros to NR and read with
	// ldb = NR, runs through them at half the work (see edgeHalf).
	HalfStrided               StridedFunc[T]
	HalfInPlace, HalfInPlaceT InPlaceFunc[T]
}

// edgeHalf reports whether a panel of cols columns runs through the half
// kernels.
func (k *MicroKernel[T]) edgeHalf(cols int) bool {
	return cols <= k.NR/2 && k.HalfStrided != nil
}

// portable returns the pure-Go micro-kernel of an mr x nr block: the engine
// on machines without the assembly ones, and (in tests) the twin that each
// assembly kernel is checked against on the same packed panels.
func portable[T Element](name string, mr, nr int) MicroKernel[T] {
	return MicroKernel[T]{Name: name, MR: mr, NR: nr, Func: portableKernel[T](mr, nr)}
}

// portableKernel returns a pure-Go KernelFunc for an mr x nr block (mr even,
// nr a multiple of 4). Go does not vectorise, so the block is done as 2x4
// sub-blocks whose eight accumulators, two A values and four B values all fit
// in registers; each sub-block makes its own pass over the panels, which sit
// in L1.
func portableKernel[T Element](mr, nr int) KernelFunc[T] {
	if mr%2 != 0 || nr%4 != 0 {
		panic("gemm: portable micro-kernel shape must be even x multiple of 4")
	}
	return func(k int, a, b, c *T, ldc int, alpha, beta T) {
		ap := unsafe.Slice(a, k*mr)
		bp := unsafe.Slice(b, k*nr)
		cs := unsafe.Slice(c, (mr-1)*ldc+nr)
		for i := 0; i < mr; i += 2 {
			for j := 0; j < nr; j += 4 {
				var c00, c01, c02, c03, c10, c11, c12, c13 T
				for p := range k {
					y := bp[p*nr+j : p*nr+j+4]
					a0, a1 := ap[p*mr+i], ap[p*mr+i+1]
					b0, b1, b2, b3 := y[0], y[1], y[2], y[3]
					c00 += a0 * b0
					c01 += a0 * b1
					c02 += a0 * b2
					c03 += a0 * b3
					c10 += a1 * b0
					c11 += a1 * b1
					c12 += a1 * b2
					c13 += a1 * b3
				}
				update(cs[i*ldc+j:i*ldc+j+4], alpha, beta, c00, c01, c02, c03)
				update(cs[(i+1)*ldc+j:(i+1)*ldc+j+4], alpha, beta, c10, c11, c12, c13)
			}
		}
	}
}

// update sets the four elements of d to alpha*x + beta*d, without reading d
// when beta is 0.
func update[T Element](d []T, alpha, beta, x0, x1, x2, x3 T) {
	d = d[:4]
	if beta == 0 {
		d[0], d[1], d[2], d[3] = alpha*x0, alpha*x1, alpha*x2, alpha*x3
		return
	}
	d[0] = alpha*x0 + beta*d[0]
	d[1] = alpha*x1 + beta*d[1]
	d[2] = alpha*x2 + beta*d[2]
	d[3] = alpha*x3 + beta*d[3]
}
