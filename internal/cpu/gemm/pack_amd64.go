//go:build !noasm

package gemm

import "unsafe"

// transposeBlocks does the part of interleave that the assembly transposes
// do: rows 0..i0 and k steps 0..p0 of it, in blocks of 4 rows and 4
// (float64) or 8 (float32 and int32, moved as float32 bits) k steps, and
// with AVX-512 first in blocks of 8 x 8 (float64) or 16 x 16, whose
// output rows are whole cache lines; all of it (i0 = rows, p0 = kc) when
// there are 4 rows and a block's k steps at least. The caller has checked
// that src and dst hold what interleave reads and writes.
func transposeBlocks[T Element](dst []T, r int, src []T, ld, rows, kc int) (i0, p0 int) {
	if !hasAVX2FMA || rows < 4 {
		return 0, 0
	}
	var zero T
	double := unsafe.Sizeof(zero) == 8
	// narrow transposes blocks blocks of 4 rows (from row g) by step k
	// steps (from k step p); wide, blocks of w rows by w k steps.
	step, w := 8, 16
	narrow := func(g, p, blocks int) {
		transpose4F32((*float32)(unsafe.Pointer(&dst[p*r+g])), r, (*float32)(unsafe.Pointer(&src[g*ld+p])), ld, blocks)
	}
	wide := func(g, p, blocks int) {
		transpose16F32((*float32)(unsafe.Pointer(&dst[p*r+g])), r, (*float32)(unsafe.Pointer(&src[g*ld+p])), ld, blocks)
	}
	if double {
		step, w = 4, 8
		narrow = func(g, p, blocks int) {
			transpose4F64((*float64)(unsafe.Pointer(&dst[p*r+g])), r, (*float64)(unsafe.Pointer(&src[g*ld+p])), ld, blocks)
		}
		wide = func(g, p, blocks int) {
			transpose8F64((*float64)(unsafe.Pointer(&dst[p*r+g])), r, (*float64)(unsafe.Pointer(&src[g*ld+p])), ld, blocks)
		}
	}
	blocks := kc / step
	if blocks == 0 {
		return 0, 0
	}
	i0 = rows &^ 3
	g := 0
	wideRows := 0
	if hasAVX512 && rows >= w && kc >= w {
		// Whole blocks of w rows by w k steps (the panel's rows written as
		// whole 64-byte lines), and the k steps past the last of them
		// through one more that ends where they do: it overlaps the block
		// before and writes the same values there. Done in blocks of 4 rows
		// by step k steps instead, 8 calls a wide block's rows, they held
		// packing B^T at 12% of float32 76x76x76 TT on one thread, against
		// 9% now.
		bw := kc / w
		for ; g+w <= rows; g += w {
			wide(g, 0, bw)
			if bw*w < kc {
				wide(g, kc-w, 1)
			}
		}
		wideRows = g
	}
	for ; g < i0; g += 4 {
		narrow(g, 0, blocks)
	}
	p0 = blocks * step
	// The k steps past the last whole block, and the rows past the last
	// group of 4, through one more block that ends where they do: it
	// overlaps blocks done already and writes the same values there. Left
	// to interleave's loop, an element at a time, they were 8% of float32
	// 76x76x76 TT on one thread (B^T packed: 4 k steps of every row).
	if p0 < kc {
		for g := wideRows; g < i0; g += 4 {
			narrow(g, kc-step, 1)
		}
		p0 = kc
	}
	if i0 < rows {
		g := rows - 4
		narrow(g, 0, blocks)
		if blocks*step < kc {
			narrow(g, kc-step, 1)
		}
		i0 = rows
	}
	return i0, p0
}

// copyRows sets dst[p*w:(p+1)*w] = src[p*ld:p*ld+w] for p < count with the
// assembly copyRowsN, if w elements are N = 32, 48, 64, 96 or 128 bytes (the
// assembly kernels' panels: a k step of A or of B) and the CPU has AVX; it
// reports whether it did.
func copyRows[T Element](dst, src []T, ld, count, w int) bool {
	size := int(unsafe.Sizeof(T(0)))
	var copier func(dst, src *byte, ld, n int)
	switch w * size {
	case 32:
		copier = copyRows32
	case 48:
		copier = copyRows48
	case 64:
		copier = copyRows64
	case 96:
		copier = copyRows96
	case 128:
		copier = copyRows128
	}
	if !hasAVX2FMA || copier == nil {
		return false
	}
	if count == 0 {
		return true
	}
	_, _ = dst[count*w-1], src[(count-1)*ld+w-1] // what the assembly touches
	copier((*byte)(unsafe.Pointer(&dst[0])), (*byte)(unsafe.Pointer(&src[0])), ld*size, count)
	return true
}
