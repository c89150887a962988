//go:build !noasm

package gemm

import "unsafe"

// transposeBlocks does the part of interleave that the assembly transposes
// do: rows 0..i0 and k steps 0..p0 of it, in blocks of 4 rows and 4
// (float64) or 8 (float32 and int32, moved as float32 bits) k steps, and
// with AVX-512 first in blocks of 8 x 8 (float64) or 16 x 16, whose
// output rows are whole cache lines. The caller has checked that src and
// dst hold what interleave reads and writes.
func transposeBlocks[T Element](dst []T, r int, src []T, ld, rows, kc int) (i0, p0 int) {
	if !hasAVX2FMA || rows < 4 {
		return 0, 0
	}
	var zero T
	double := unsafe.Sizeof(zero) == 8
	step := 8
	if double {
		step = 4
	}
	blocks := kc / step
	if blocks == 0 {
		return 0, 0
	}
	i0 = rows &^ 3
	g := 0
	if !double && hasAVX512 && rows >= 16 && kc >= 16 {
		// Whole blocks of 16 rows by 16 k steps with AVX-512 (whole 64-byte
		// rows of the panel), then those rows' k steps up to blocks*8 in
		// blocks of 4 rows by 8.
		b16 := kc / 16
		for ; g+16 <= rows; g += 16 {
			transpose16F32((*float32)(unsafe.Pointer(&dst[g])), r, (*float32)(unsafe.Pointer(&src[g*ld])), ld, b16)
			if rest := blocks - 2*b16; rest > 0 {
				for h := g; h < g+16; h += 4 {
					d, s := unsafe.Pointer(&dst[16*b16*r+h]), unsafe.Pointer(&src[h*ld+16*b16])
					transpose4F32((*float32)(d), r, (*float32)(s), ld, rest)
				}
			}
		}
	}
	if double && hasAVX512 && rows >= 8 && kc >= 8 {
		// The same for float64: blocks of 8 rows by 8 k steps, then those
		// rows' k steps up to blocks*4 in blocks of 4 by 4.
		b8 := kc / 8
		for ; g+8 <= rows; g += 8 {
			transpose8F64((*float64)(unsafe.Pointer(&dst[g])), r, (*float64)(unsafe.Pointer(&src[g*ld])), ld, b8)
			if rest := blocks - 2*b8; rest > 0 {
				for h := g; h < g+8; h += 4 {
					d, s := unsafe.Pointer(&dst[8*b8*r+h]), unsafe.Pointer(&src[h*ld+8*b8])
					transpose4F64((*float64)(d), r, (*float64)(s), ld, rest)
				}
			}
		}
	}
	for ; g < i0; g += 4 {
		d, s := unsafe.Pointer(&dst[g]), unsafe.Pointer(&src[g*ld])
		if double {
			transpose4F64((*float64)(d), r, (*float64)(s), ld, blocks)
		} else {
			transpose4F32((*float32)(d), r, (*float32)(s), ld, blocks)
		}
	}
	return i0, blocks * step
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
