package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Packing an untransposed A, or a transposed B, turns rows of the matrix
// (contiguous along k) into a panel whose k steps are contiguous: a
// transpose. Done an element at a time in Go it cost about 1.5 ns an element
// on the development machine, a fifth of a 256x256 product; these routines
// transpose 4 rows at a time with vector shuffles.

// transpose4F64 generates a routine that transposes n blocks of 4 rows x 4
// float64s: block q is read from src + 4q elements (rows srcStride elements
// apart) and written to dst + 4q*dstStride as 4 rows of 4 (dstStride apart).
func transpose4F64() {
	TEXT("transpose4F64", NOSPLIT, "func(dst *float64, dstStride int, src *float64, srcStride int, n int)")
	Doc("transpose4F64 transposes n 4x4 blocks of float64: rows srcStride elements apart",
		"at src, 4 elements further each block, into rows dstStride elements apart at dst,",
		"4 rows further each block.")
	transposeLoop("transpose4F64", 8, func(r transposeRegs) {
		// Rows a, b, c, d of the block.
		for i, y := range []VecPhysical{Y0, Y1, Y2, Y3} {
			VMOVUPD(rowAt(r.src, r.ss, r.s3, i), y)
		}
		VUNPCKLPD(Y1, Y0, Y4)            // a0 b0 a2 b2
		VUNPCKHPD(Y1, Y0, Y5)            // a1 b1 a3 b3
		VUNPCKLPD(Y3, Y2, Y6)            // c0 d0 c2 d2
		VUNPCKHPD(Y3, Y2, Y7)            // c1 d1 c3 d3
		VPERM2F128(U8(0x20), Y6, Y4, Y0) // a0 b0 c0 d0
		VPERM2F128(U8(0x20), Y7, Y5, Y1) // a1 b1 c1 d1
		VPERM2F128(U8(0x31), Y6, Y4, Y2) // a2 b2 c2 d2
		VPERM2F128(U8(0x31), Y7, Y5, Y3) // a3 b3 c3 d3
		for i, y := range []VecPhysical{Y0, Y1, Y2, Y3} {
			VMOVUPD(y, rowAt(r.dst, r.ds, r.d3, i))
		}
		ADDQ(U8(4*8), r.src)
		LEAQ(Mem{Base: r.dst, Index: r.ds, Scale: 4}, r.dst)
	})
}

// transpose4F32 generates a routine that transposes n blocks of 4 rows x 8
// float32s into 8 rows of 4. The in-lane shuffles transpose the two 4x4
// halves of the block at once; each half's rows are then stored from one
// 128-bit lane.
func transpose4F32() {
	TEXT("transpose4F32", NOSPLIT, "func(dst *float32, dstStride int, src *float32, srcStride int, n int)")
	Doc("transpose4F32 transposes n 4x8 blocks of float32: rows srcStride elements apart",
		"at src, 8 elements further each block, into 8 rows of 4, dstStride elements apart",
		"at dst, 8 rows further each block.")
	transposeLoop("transpose4F32", 4, func(r transposeRegs) {
		for i, y := range []VecPhysical{Y0, Y1, Y2, Y3} {
			VMOVUPS(rowAt(r.src, r.ss, r.s3, i), y)
		}
		VUNPCKLPS(Y1, Y0, Y4) // a0 b0 a1 b1 | a4 b4 a5 b5
		VUNPCKHPS(Y1, Y0, Y5) // a2 b2 a3 b3 | a6 b6 a7 b7
		VUNPCKLPS(Y3, Y2, Y6) // c0 d0 c1 d1 | ...
		VUNPCKHPS(Y3, Y2, Y7) // c2 d2 c3 d3 | ...
		VUNPCKLPD(Y6, Y4, Y0) // a0 b0 c0 d0 | a4 b4 c4 d4
		VUNPCKHPD(Y6, Y4, Y1) // a1 b1 c1 d1 | a5 ...
		VUNPCKLPD(Y7, Y5, Y2) // a2 b2 c2 d2 | a6 ...
		VUNPCKHPD(Y7, Y5, Y3) // a3 b3 c3 d3 | a7 ...
		hi := GP64()          // dst + 4 rows: where the high lanes go
		LEAQ(Mem{Base: r.dst, Index: r.ds, Scale: 4}, hi)
		for i, y := range []VecPhysical{Y0, Y1, Y2, Y3} {
			VMOVUPS(y.AsX(), rowAt(r.dst, r.ds, r.d3, i))
			VEXTRACTF128(U8(1), y, rowAt(hi, r.ds, r.d3, i))
		}
		ADDQ(U8(8*4), r.src)
		LEAQ(Mem{Base: hi, Index: r.ds, Scale: 4}, r.dst)
	})
}

// transpose16F32 generates a routine that transposes n blocks of 16 rows x
// 16 float32s into 16 rows of 16 with AVX-512: whole 64-byte rows out,
// where transpose4F32 writes 16-byte pieces, and 4 shuffles an output row
// rather than 4 a 4-element piece. Rows a_i (i < 16) go through four
// stages: 32-bit and then 64-bit interleaves within each 128-bit lane leave
// in register 4m+c, lane L, column 4L+c of rows 4m..4m+3; two rounds of
// 128-bit lane shuffles then gather, for each c, lane L of the registers
// c, 4+c, 8+c and 12+c into output row 4L+c.
func transpose16F32() {
	TEXT("transpose16F32", NOSPLIT, "func(dst *float32, dstStride int, src *float32, srcStride int, n int)")
	Doc("transpose16F32 transposes n 16x16 blocks of float32: rows srcStride elements apart",
		"at src, 16 elements further each block, into 16 rows of 16, dstStride elements apart",
		"at dst, 16 rows further each block. It needs AVX-512F.")
	transposeLoop("transpose16F32", 4, func(r transposeRegs) {
		wideTranspose(r, 16, 4, func() {
			z := zmm
			// Stage 1, into Z16..Z31: a_2k, a_2k+1 interleaved by 32 bits.
			for k := range 8 {
				VUNPCKLPS(z(2*k+1), z(2*k), z(16+2*k))
				VUNPCKHPS(z(2*k+1), z(2*k), z(16+2*k+1))
			}
			// Stage 2, into Z0..Z15: register 4m+c holds, lane L, column
			// 4L+c of rows 4m..4m+3.
			for m := range 4 {
				s := 16 + 4*m
				VUNPCKLPD(z(s+2), z(s), z(4*m))
				VUNPCKHPD(z(s+2), z(s), z(4*m+1))
				VUNPCKLPD(z(s+3), z(s+1), z(4*m+2))
				VUNPCKHPD(z(s+3), z(s+1), z(4*m+3))
			}
			lanes4x4(VSHUFF32X4, 4, func(c, m int) VecPhysical { return z(4*m + c) })
		})
	})
}

// transpose8F64 generates transpose16F32's float64 twin: n blocks of 8
// rows x 8 float64s into 8 rows of 8 (64 bytes each). A 64-bit interleave
// within each 128-bit lane leaves in register 2k+c, lane L, column 2L+c of
// rows 2k and 2k+1; the same two rounds of lane shuffles then gather, for
// each c, lane L of the registers c, 2+c, 4+c and 6+c into output row
// 2L+c.
func transpose8F64() {
	TEXT("transpose8F64", NOSPLIT, "func(dst *float64, dstStride int, src *float64, srcStride int, n int)")
	Doc("transpose8F64 transposes n 8x8 blocks of float64: rows srcStride elements apart",
		"at src, 8 elements further each block, into 8 rows of 8, dstStride elements apart",
		"at dst, 8 rows further each block. It needs AVX-512F.")
	transposeLoop("transpose8F64", 8, func(r transposeRegs) {
		wideTranspose(r, 8, 8, func() {
			// Into Z8..Z15: register 8+2k+c holds, lane L, column 2L+c of
			// rows 2k and 2k+1.
			for k := range 4 {
				VUNPCKLPD(zmm(2*k+1), zmm(2*k), zmm(8+2*k))
				VUNPCKHPD(zmm(2*k+1), zmm(2*k), zmm(8+2*k+1))
			}
			lanes4x4(VSHUFF64X2, 2, func(c, k int) VecPhysical { return zmm(8 + 2*k + c) })
		})
	})
}

// lanes4x4 is the last two stages of the wide transposes: for each c <
// groups, with X_m = x(c, m) (m < 4), it gathers lane L of X_0..X_3 into
// output row groups*L + c (register Z(groups*L+c)), through P registers in
// Z16 up. shuf is the 128-bit lane shuffle (VSHUFF32X4 or VSHUFF64X2, the
// same lanes). Every X is read before any output row is written.
func lanes4x4(shuf func(...Op), groups int, x func(c, m int) VecPhysical) {
	q := func(c, i int) VecPhysical { return zmm(16 + 4*c + i) }
	for c := range groups {
		shuf(U8(0x44), x(c, 1), x(c, 0), q(c, 0)) // X0.L0 X0.L1 X1.L0 X1.L1
		shuf(U8(0xEE), x(c, 1), x(c, 0), q(c, 1)) // X0.L2 X0.L3 X1.L2 X1.L3
		shuf(U8(0x44), x(c, 3), x(c, 2), q(c, 2)) // X2.L0 X2.L1 X3.L0 X3.L1
		shuf(U8(0xEE), x(c, 3), x(c, 2), q(c, 3)) // X2.L2 X2.L3 X3.L2 X3.L3
	}
	for c := range groups {
		shuf(U8(0x88), q(c, 2), q(c, 0), zmm(c))          // lane 0 of X0..X3
		shuf(U8(0xDD), q(c, 2), q(c, 0), zmm(groups+c))   // lane 1
		shuf(U8(0x88), q(c, 3), q(c, 1), zmm(2*groups+c)) // lane 2
		shuf(U8(0xDD), q(c, 3), q(c, 1), zmm(3*groups+c)) // lane 3
	}
}

// wideTranspose is the body of a transpose of rows x rows blocks of
// elements of size bytes in ZMM registers, one block a call: it loads the
// block's rows into Z0..Z(rows-1), lets stages shuffle them there into the
// output rows, stores those rows dstStride apart (leaving r.dst at the
// next block's) and moves r.src to the next block.
func wideTranspose(r transposeRegs, rows, size int, stages func()) {
	p := GP64()
	MOVQ(r.src, p)
	for i := range rows {
		VMOVUPS(Mem{Base: p}, zmm(i))
		if i < rows-1 {
			ADDQ(r.ss, p)
		}
	}
	stages()
	for j := range rows {
		VMOVUPS(zmm(j), Mem{Base: r.dst})
		ADDQ(r.ds, r.dst)
	}
	ADDQ(U8(rows*size), r.src)
}

// zmm returns Z0..Z31 by number.
func zmm(i int) VecPhysical {
	return []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
		Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}[i]
}

// transposeRegs holds a transpose routine's arguments, strides in bytes,
// and three times each stride (x86 addressing scales an index by 1, 2, 4 or
// 8, so the fourth row of a block is reached through these).
type transposeRegs struct{ dst, ds, d3, src, ss, s3, n Register }

// transposeLoop writes the rest of transpose routine name, for elements of
// size bytes: loading the arguments, then body once a block, n times.
func transposeLoop(name string, size int, body func(transposeRegs)) {
	var r transposeRegs
	r.dst = Load(Param("dst"), GP64())
	r.ds = Load(Param("dstStride"), GP64())
	r.src = Load(Param("src"), GP64())
	r.ss = Load(Param("srcStride"), GP64())
	r.n = Load(Param("n"), GP64())
	SHLQ(U8(log2(size)), r.ds)
	SHLQ(U8(log2(size)), r.ss)
	r.s3, r.d3 = GP64(), GP64()
	LEAQ(Mem{Base: r.ss, Index: r.ss, Scale: 2}, r.s3)
	LEAQ(Mem{Base: r.ds, Index: r.ds, Scale: 2}, r.d3)
	TESTQ(r.n, r.n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	body(r)
	DECQ(r.n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// rowAt returns the address of row i (0..3) of a block at base, rows s
// bytes apart, with s3 = 3s.
func rowAt(base, s, s3 Register, i int) Mem {
	switch i {
	case 0:
		return Mem{Base: base}
	case 1:
		return Mem{Base: base, Index: s, Scale: 1}
	case 2:
		return Mem{Base: base, Index: s, Scale: 2}
	case 3:
		return Mem{Base: base, Index: s3, Scale: 1}
	}
	panic(fmt.Sprint("row ", i))
}

// copyRows generates a routine that copies n rows of width bytes (a
// multiple of 16, at most 128), ld bytes apart at src, to consecutive rows
// at dst, with a software prefetch of the row prefetchRows ahead. Packing an
// untransposed B panel by panel, or a transposed A, is such a copy: the
// hardware prefetchers do not follow reads a row of the matrix apart (a page
// apart at n = 1024 float32), and the matrix is usually in memory, not
// cache.
func copyRows(name string, width int) {
	TEXT(name, NOSPLIT, "func(dst, src *byte, ld int, n int)")
	Doc(fmt.Sprintf("%s copies n rows of %d bytes, ld bytes apart at src, to consecutive", name, width),
		"rows at dst.")
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	ld := Load(Param("ld"), GP64())
	n := Load(Param("n"), GP64())
	ahead := GP64()
	MOVQ(ld, ahead)
	SHLQ(U8(log2(prefetchRows)), ahead)
	ADDQ(src, ahead)
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	// 32-byte pieces in YMM registers, a last 16-byte one in an XMM.
	type piece struct {
		off int
		reg Register
	}
	var pieces []piece
	for off, i := 0, 0; off < width; i++ {
		var r Register = []VecPhysical{Y0, Y1, Y2, Y3}[i]
		if width-off < 32 {
			r = r.(VecPhysical).AsX()
		}
		pieces = append(pieces, piece{off, r})
		off += int(r.Size())
	}
	for _, p := range pieces {
		VMOVUPS(Mem{Base: src, Disp: p.off}, p.reg)
	}
	for off := 0; off < width; off += 64 {
		PREFETCHT0(Mem{Base: ahead, Disp: off})
	}
	for _, p := range pieces {
		VMOVUPS(p.reg, Mem{Base: dst, Disp: p.off})
	}
	ADDQ(ld, src)
	ADDQ(ld, ahead)
	ADDQ(U32(width), dst)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// prefetchRows is how many rows ahead copyRows prefetches.
const prefetchRows = 16
