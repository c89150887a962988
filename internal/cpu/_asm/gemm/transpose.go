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
