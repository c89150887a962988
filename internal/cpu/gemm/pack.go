package gemm

import "unsafe"

// packA copies the mc x kc block of op(A) at (ic, pc) into dst as panels of
// mr rows, column after column (the mr elements of one k step adjacent, as
// the micro-kernels read them: one sequential stream), the last panel padded
// with zero rows.
func packA[T Element](dst, a []T, lda int, trans bool, ic, pc, mc, kc, mr int) {
	for i0 := 0; i0 < mc; i0 += mr {
		panel := dst[i0*kc : (i0+mr)*kc]
		rows := min(mr, mc-i0)
		if trans {
			// op(A)(i, p) = a[p*lda+i]: each column of the panel is a
			// contiguous piece of a row of a.
			if rows == mr {
				src := a[pc*lda+ic+i0:]
				if copyRows(panel, src, lda, kc, mr) || copyPieces(panel, src, lda, kc, mr) {
					continue
				}
			}
			for p := range kc {
				d := panel[p*mr : p*mr+mr]
				copy(d, a[(pc+p)*lda+ic+i0:][:rows])
				clear(d[rows:])
			}
			continue
		}
		// op(A)(i, p) = a[i*lda+p]: the panel's rows are rows of a. The
		// transpose costs less than the kernels gain from reading one
		// sequential stream rather than mr row streams (10% on float32 at
		// n = 1024 on the development machine).
		interleave(panel, mr, a[(ic+i0)*lda+pc:], lda, rows, kc)
	}
}

// copyPieces sets dst[p*w:(p+1)*w] = src[p*ld:p*ld+w] for p < count, if it
// can: when a piece is 24, 32, 48, 64 or 96 bytes (a k step of the
// assembly kernels' A panels), for what copyRows leaves (the 24-byte pieces, and
// builds without assembly). It moves the pieces as byte arrays, which the
// compiler copies inline; copy's call to memmove for so few bytes made
// packing a transposed A twice as slow (BenchmarkPack).
func copyPieces[T Element](dst, src []T, ld, count, w int) bool {
	size := int(unsafe.Sizeof(T(0))) * w
	switch size {
	case 24, 32, 48, 64, 96:
	default:
		return false
	}
	if count == 0 {
		return true
	}
	dst, src = dst[:count*w], src[:(count-1)*ld+w]
	for p := range count {
		moveBytes(unsafe.Pointer(&dst[p*w]), unsafe.Pointer(&src[p*ld]), size)
	}
	return true
}

// padPieces sets dst[p*r:p*r+w] = src[p*ld:p*ld+w] and the rest of
// dst[p*r:(p+1)*r] to zero for p < count, if it can: when w and r-w
// elements are each a multiple of 16 bytes up to 112 (the last, narrower
// panel of B for the assembly kernels, whose panels are 128 bytes wide:
// n = 40, 44 or 48 in float32, for instance). A copy and a clear a row
// (two runtime calls for a few elements) made that panel's packing a third
// of a 48 x 48 x 48 product's time.
func padPieces[T Element](dst []T, r int, src []T, ld, count, w int) bool {
	size := int(unsafe.Sizeof(T(0)))
	head, tail := w*size, (r-w)*size
	if head%16 != 0 || tail%16 != 0 || head == 0 || tail == 0 || head > 112 || tail > 112 {
		return false
	}
	if count == 0 {
		return true
	}
	dst, src = dst[:count*r], src[:(count-1)*ld+w]
	for p := range count {
		d, s := unsafe.Pointer(&dst[p*r]), unsafe.Pointer(&src[p*ld])
		moveBytes(d, s, head)
		zeroBytes(unsafe.Add(d, head), tail)
	}
	return true
}

// moveBytes copies n bytes, 24 or a multiple of 16 up to 112, from s to d
// as one array, which the compiler moves inline.
func moveBytes(d, s unsafe.Pointer, n int) {
	switch n {
	case 16:
		*(*[16]byte)(d) = *(*[16]byte)(s)
	case 24:
		*(*[24]byte)(d) = *(*[24]byte)(s)
	case 32:
		*(*[32]byte)(d) = *(*[32]byte)(s)
	case 48:
		*(*[48]byte)(d) = *(*[48]byte)(s)
	case 64:
		*(*[64]byte)(d) = *(*[64]byte)(s)
	case 80:
		*(*[80]byte)(d) = *(*[80]byte)(s)
	case 96:
		*(*[96]byte)(d) = *(*[96]byte)(s)
	case 112:
		*(*[112]byte)(d) = *(*[112]byte)(s)
	}
}

// zeroBytes clears n bytes at d, a multiple of 16 up to 112, as moveBytes
// copies them. It is moveBytes's twin rather than moveBytes from an array
// of zeros: storing zeros, with no load, made n = 56 float32 12% faster.
func zeroBytes(d unsafe.Pointer, n int) {
	switch n {
	case 16:
		*(*[16]byte)(d) = [16]byte{}
	case 32:
		*(*[32]byte)(d) = [32]byte{}
	case 48:
		*(*[48]byte)(d) = [48]byte{}
	case 64:
		*(*[64]byte)(d) = [64]byte{}
	case 80:
		*(*[80]byte)(d) = [80]byte{}
	case 96:
		*(*[96]byte)(d) = [96]byte{}
	case 112:
		*(*[112]byte)(d) = [112]byte{}
	}
}

// packB copies the kc x nc block of op(B) at (pc, jc) into dst as panels of
// nr columns: panel after panel, each row after row, the last padded with
// zero columns.
func packB[T Element](dst, b []T, ldb int, trans bool, pc, jc, kc, nc, nr int) {
	if !trans {
		// op(B)(p, j) = b[p*ldb+j]: each k step of a panel is a piece of a
		// row of b. Whole panels go to the assembly (copyRows), which
		// prefetches the rows ahead; the hardware does not follow reads a
		// row apart, and B is usually in memory rather than cache.
		j0 := 0
		for ; j0+nr <= nc; j0 += nr {
			if !copyRows(dst[j0*kc:(j0+nr)*kc], b[pc*ldb+jc+j0:], ldb, kc, nr) {
				break
			}
		}
		// A last panel of fewer than nr columns, alone, row by row as
		// whole arrays (see padPieces).
		if rest := nc - j0; rest > 0 && rest < nr &&
			padPieces(dst[j0*kc:(j0+nr)*kc], nr, b[pc*ldb+jc+j0:], ldb, kc, rest) {
			return
		}
		// The rest a row at a time, across the panels left, so that the
		// reads are sequential.
		for p := range kc {
			src := b[(pc+p)*ldb+jc:][:nc]
			for j := j0; j < nc; j += nr {
				d := dst[j*kc+p*nr : j*kc+p*nr+nr]
				n := copy(d, src[j:])
				clear(d[n:])
			}
		}
		return
	}
	// op(B)(p, j) = b[j*ldb+p]: the panel's columns are rows of b.
	for j0 := 0; j0 < nc; j0 += nr {
		interleave(dst[j0*kc:(j0+nr)*kc], nr, b[(jc+j0)*ldb+pc:], ldb, min(nr, nc-j0), kc)
	}
}

// interleave sets dst[p*r+i] = src[i*ld+p] for i < rows and p < kc, and
// dst[p*r+i] = 0 for rows <= i < r: it transposes rows rows of kc elements,
// ld apart, into kc rows of r (rows <= r). The assembly (transposeBlocks)
// does what it can, whole blocks of 4 rows; the loops here the rest.
func interleave[T Element](dst []T, r int, src []T, ld, rows, kc int) {
	if kc == 0 {
		return
	}
	dst = dst[:kc*r]
	if rows > 0 {
		_ = src[(rows-1)*ld+kc-1] // what transposeBlocks may read
	}
	if rows < r {
		// The padding first, in one clear of the whole panel: a clear a
		// k step, of r-rows elements each, cost more than the transposes.
		clear(dst)
	}
	i0, p0 := transposeBlocks(dst, r, src, ld, rows, kc)
	for i := range rows {
		p := 0
		if i < i0 {
			p = p0
		}
		d := dst[i:]
		for ; p < kc; p++ {
			d[p*r] = src[i*ld+p]
		}
	}
}
