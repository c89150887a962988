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
	dst, ds, src, ss, n := transposeArgs(8)
	s3 := GP64()
	LEAQ(Mem{Base: ss, Index: ss, Scale: 2}, s3)
	d3 := GP64()
	LEAQ(Mem{Base: ds, Index: ds, Scale: 2}, d3)
	TESTQ(n, n)
	JZ(LabelRef("transpose4F64_done"))
	Label("transpose4F64_loop")
	// Rows a, b, c, d of the block.
	VMOVUPD(Mem{Base: src}, Y0)
	VMOVUPD(Mem{Base: src, Index: ss, Scale: 1}, Y1)
	VMOVUPD(Mem{Base: src, Index: ss, Scale: 2}, Y2)
	VMOVUPD(Mem{Base: src, Index: s3, Scale: 1}, Y3)
	VUNPCKLPD(Y1, Y0, Y4)            // a0 b0 a2 b2
	VUNPCKHPD(Y1, Y0, Y5)            // a1 b1 a3 b3
	VUNPCKLPD(Y3, Y2, Y6)            // c0 d0 c2 d2
	VUNPCKHPD(Y3, Y2, Y7)            // c1 d1 c3 d3
	VPERM2F128(U8(0x20), Y6, Y4, Y0) // a0 b0 c0 d0
	VPERM2F128(U8(0x20), Y7, Y5, Y1) // a1 b1 c1 d1
	VPERM2F128(U8(0x31), Y6, Y4, Y2) // a2 b2 c2 d2
	VPERM2F128(U8(0x31), Y7, Y5, Y3) // a3 b3 c3 d3
	VMOVUPD(Y0, Mem{Base: dst})
	VMOVUPD(Y1, Mem{Base: dst, Index: ds, Scale: 1})
	VMOVUPD(Y2, Mem{Base: dst, Index: ds, Scale: 2})
	VMOVUPD(Y3, Mem{Base: dst, Index: d3, Scale: 1})
	ADDQ(U8(4*8), src)
	LEAQ(Mem{Base: dst, Index: ds, Scale: 4}, dst)
	DECQ(n)
	JNZ(LabelRef("transpose4F64_loop"))
	Label("transpose4F64_done")
	VZEROUPPER()
	RET()
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
	dst, ds, src, ss, n := transposeArgs(4)
	s3 := GP64()
	LEAQ(Mem{Base: ss, Index: ss, Scale: 2}, s3)
	d3 := GP64()
	LEAQ(Mem{Base: ds, Index: ds, Scale: 2}, d3)
	hi := GP64() // dst + 4 rows: where the high lanes go
	TESTQ(n, n)
	JZ(LabelRef("transpose4F32_done"))
	Label("transpose4F32_loop")
	VMOVUPS(Mem{Base: src}, Y0)
	VMOVUPS(Mem{Base: src, Index: ss, Scale: 1}, Y1)
	VMOVUPS(Mem{Base: src, Index: ss, Scale: 2}, Y2)
	VMOVUPS(Mem{Base: src, Index: s3, Scale: 1}, Y3)
	VUNPCKLPS(Y1, Y0, Y4) // a0 b0 a1 b1 | a4 b4 a5 b5
	VUNPCKHPS(Y1, Y0, Y5) // a2 b2 a3 b3 | a6 b6 a7 b7
	VUNPCKLPS(Y3, Y2, Y6) // c0 d0 c1 d1 | ...
	VUNPCKHPS(Y3, Y2, Y7) // c2 d2 c3 d3 | ...
	VUNPCKLPD(Y6, Y4, Y0) // a0 b0 c0 d0 | a4 b4 c4 d4
	VUNPCKHPD(Y6, Y4, Y1) // a1 b1 c1 d1 | a5 ...
	VUNPCKLPD(Y7, Y5, Y2) // a2 b2 c2 d2 | a6 ...
	VUNPCKHPD(Y7, Y5, Y3) // a3 b3 c3 d3 | a7 ...
	LEAQ(Mem{Base: dst, Index: ds, Scale: 4}, hi)
	for i, y := range []VecPhysical{Y0, Y1, Y2, Y3} {
		VMOVUPS(y.AsX(), rowAt(dst, ds, d3, i))
		VEXTRACTF128(U8(1), y, rowAt(hi, ds, d3, i))
	}
	ADDQ(U8(8*4), src)
	LEAQ(Mem{Base: hi, Index: ds, Scale: 4}, dst)
	DECQ(n)
	JNZ(LabelRef("transpose4F32_loop"))
	Label("transpose4F32_done")
	VZEROUPPER()
	RET()
}

// transposeArgs loads a transpose routine's arguments, strides in bytes.
func transposeArgs(size int) (dst, ds, src, ss, n Register) {
	dst = Load(Param("dst"), GP64())
	ds = Load(Param("dstStride"), GP64())
	src = Load(Param("src"), GP64())
	ss = Load(Param("srcStride"), GP64())
	n = Load(Param("n"), GP64())
	SHLQ(U8(log2(size)), ds)
	SHLQ(U8(log2(size)), ss)
	return
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
