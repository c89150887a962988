package gemm

import (
	"fmt"
	"unsafe"
)

// Float is the set of element types the engine multiplies.
type Float interface{ float32 | float64 }

// Float32 sets C = alpha*op(A)*op(B) + beta*C for row-major float32
// matrices, where op(X) is X or, when its trans flag is set, X's transpose.
// op(A) is m x k, op(B) is k x n and C is m x n; lda, ldb and ldc are the
// row strides (at least the row length, and at least 1). When alpha is 0, A
// and B are not read; when beta is 0, C is not read, so NaN there does not
// survive. Slices shorter than their matrices make it panic: callers check
// their arguments first.
func Float32(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(&engineF32, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Float64 is Float32 for float64 matrices.
func Float64(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemm(&engineF64, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// engine is one way to run the blocked algorithm for one element type: a
// micro-kernel and the block sizes chosen for it.
type engine[T Float] struct {
	kernel     MicroKernel[T]
	mc, kc, nc int
}

// problem is one call's arguments, as the pieces running on the pool see
// them.
type problem[T Float] struct {
	eng            *engine[T]
	transA, transB bool
	m, n, k        int
	alpha, beta    T
	a, b, c        []T
	lda, ldb, ldc  int
}

func gemm[T Float](eng *engine[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkMatrix("A", transA, m, k, a, lda)
	checkMatrix("B", transB, k, n, b, ldb)
	checkMatrix("C", false, m, n, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	p := problem[T]{eng: eng, transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, beta: beta, a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc}
	run(&p)
}

// checkMatrix panics unless x holds an r x c matrix (c x r if trans) with
// row stride ld.
func checkMatrix[T Float](name string, trans bool, r, c int, x []T, ld int) {
	if trans {
		r, c = c, r
	}
	if r < 0 || c < 0 || ld < max(1, c) {
		panic(fmt.Sprintf("gemm: %s is %dx%d with row stride %d", name, r, c, ld))
	}
	if r > 0 && c > 0 && len(x) < (r-1)*ld+c {
		panic(fmt.Sprintf("gemm: %s is %dx%d with row stride %d but has only %d elements", name, r, c, ld, len(x)))
	}
}

// scale sets C = beta*C, without reading C when beta is 0.
func scale[T Float](m, n int, beta T, c []T, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// runPiece computes rows m0..m1 and columns n0..n1 of C with the blocked
// algorithm, packing into ws.
func (p *problem[T]) runPiece(ws *packBuffers[T], m0, m1, n0, n1 int) {
	e := p.eng
	mr, nr := e.kernel.MR, e.kernel.NR
	for jc := n0; jc < n1; jc += e.nc {
		nc := min(e.nc, n1-jc)
		for pc := 0; pc < p.k; pc += e.kc {
			kc := min(e.kc, p.k-pc)
			bp := ws.b.get(kc * roundUp(nc, nr))
			packB(bp, p.b, p.ldb, p.transB, pc, jc, kc, nc, nr)
			beta := p.beta
			if pc > 0 {
				beta = 1 // later slices of k add to what the first wrote
			}
			for ic := m0; ic < m1; ic += e.mc {
				mc := min(e.mc, m1-ic)
				ap := ws.a.get(kc * roundUp(mc, mr))
				packA(ap, p.a, p.lda, p.transA, ic, pc, mc, kc, mr)
				p.macroKernel(ws, ap, bp, ic, jc, mc, nc, kc, beta)
			}
		}
	}
}

// macroKernel runs the micro-kernel over every MR x NR block of the mc x nc
// block of C at (ic, jc), from the packed panels ap and bp.
func (p *problem[T]) macroKernel(ws *packBuffers[T], ap, bp []T, ic, jc, mc, nc, kc int, beta T) {
	k := &p.eng.kernel
	mr, nr := k.MR, k.NR
	ldc := p.ldc
	for jr := 0; jr < nc; jr += nr {
		b := &bp[jr*kc]
		cols := min(nr, nc-jr)
		for ir := 0; ir < mc; ir += mr {
			a := &ap[ir*kc]
			rows := min(mr, mc-ir)
			c := p.c[(ic+ir)*ldc+jc+jr:]
			if rows == mr && cols == nr {
				k.Func(kc, a, b, &c[0], ldc, p.alpha, beta)
				continue
			}
			// An edge block: the kernel writes a whole MR x NR block into a
			// scratch buffer and only the part inside C is kept.
			t := ws.edge.get(mr * nr)
			k.Func(kc, a, b, &t[0], nr, p.alpha, 0)
			for i := range rows {
				dst, src := c[i*ldc:i*ldc+cols], t[i*nr:i*nr+cols]
				switch beta {
				case 0:
					copy(dst, src)
				case 1:
					for j := range dst {
						dst[j] += src[j]
					}
				default:
					for j := range dst {
						dst[j] = beta*dst[j] + src[j]
					}
				}
			}
		}
	}
}

// packA copies the mc x kc block of op(A) at (ic, pc) into dst as panels of
// mr rows: panel after panel, each column after column, the last padded with
// zero rows.
func packA[T Float](dst, a []T, lda int, trans bool, ic, pc, mc, kc, mr int) {
	for i0 := 0; i0 < mc; i0 += mr {
		panel := dst[i0*kc : (i0+mr)*kc]
		rows := min(mr, mc-i0)
		if trans {
			// op(A)(i, p) = a[p*lda+i]: each column of the panel is contiguous.
			for p := range kc {
				src := a[(pc+p)*lda+ic+i0:][:rows]
				d := panel[p*mr : p*mr+mr]
				copy(d, src)
				clear(d[rows:])
			}
			continue
		}
		// op(A)(i, p) = a[i*lda+p]: each row of the panel is contiguous.
		if rows == mr && mr == 6 {
			r0 := a[(ic+i0)*lda+pc:][:kc]
			r1 := a[(ic+i0+1)*lda+pc:][:kc]
			r2 := a[(ic+i0+2)*lda+pc:][:kc]
			r3 := a[(ic+i0+3)*lda+pc:][:kc]
			r4 := a[(ic+i0+4)*lda+pc:][:kc]
			r5 := a[(ic+i0+5)*lda+pc:][:kc]
			for p := range kc {
				d := panel[p*6 : p*6+6]
				d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
			}
			continue
		}
		for i := range rows {
			src := a[(ic+i0+i)*lda+pc:][:kc]
			for p, x := range src {
				panel[p*mr+i] = x
			}
		}
		for i := rows; i < mr; i++ {
			for p := range kc {
				panel[p*mr+i] = 0
			}
		}
	}
}

// packB copies the kc x nc block of op(B) at (pc, jc) into dst as panels of
// nr columns: panel after panel, each row after row, the last padded with
// zero columns.
func packB[T Float](dst, b []T, ldb int, trans bool, pc, jc, kc, nc, nr int) {
	for j0 := 0; j0 < nc; j0 += nr {
		panel := dst[j0*kc : (j0+nr)*kc]
		cols := min(nr, nc-j0)
		if !trans {
			// op(B)(p, j) = b[p*ldb+j]: each row of the panel is contiguous.
			for p := range kc {
				d := panel[p*nr : p*nr+nr]
				copy(d, b[(pc+p)*ldb+jc+j0:][:cols])
				clear(d[cols:])
			}
			continue
		}
		// op(B)(p, j) = b[j*ldb+p]: each column of the panel is contiguous.
		for j := range cols {
			src := b[(jc+j0+j)*ldb+pc:][:kc]
			for p, x := range src {
				panel[p*nr+j] = x
			}
		}
		for j := cols; j < nr; j++ {
			for p := range kc {
				panel[p*nr+j] = 0
			}
		}
	}
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// alignedBuffer is a reusable slice whose first element sits on a 64-byte
// boundary (a cache line, and what aligned vector loads want).
type alignedBuffer[T Float] struct{ s []T }

// get returns the buffer's first n elements, growing it if needed. The
// contents are whatever was there before.
func (b *alignedBuffer[T]) get(n int) []T {
	if cap(b.s) < n {
		const align = 64
		size := int(unsafe.Sizeof(T(0)))
		raw := make([]T, n+align/size)
		off := 0
		for uintptr(unsafe.Pointer(&raw[off]))%align != 0 {
			off++
		}
		b.s = raw[off : off+n : off+n]
	}
	return b.s[:n]
}

// packBuffers is what one thread packs into.
type packBuffers[T Float] struct {
	a, b, edge alignedBuffer[T]
}
