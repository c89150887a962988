package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// columns8Kernel generates columnKernel's wide twin: a rows x 8 block of C
// (rows up to nv vectors: 16*nv for float32, 8*nv for float64), A's k step p the rows
// adjacent elements at a + p*lda, B's element (p, j) at b + p*ldbk +
// j*ldbj. Each k step loads A's rows as nv vectors and broadcasts each of
// B's 8 elements once into nv multiply-adds: with nv = 2, 16 multiply-adds
// a step for 2 loads and 8 broadcasts, as many as the 8 x 32 micro-kernel
// does for as many loads, where the 4-column kernel does 4 for 5. It
// serves products whose operands both lie transposed (A^T's k steps are
// its vectors, B^T's elements its broadcasts), which it multiplies with
// nothing packed. The block is written transposed in registers, 4 x 4 at
// a time within 128-bit lanes (float64: 2 x 2), as 128-bit pieces of a row.
func columns8Kernel(name string, e element, nv int) {
	const cols = 8
	lanes := 64 / e.size
	TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, lda, ldbk, ldbj, ldc, rows int, alpha, beta %s)", e.goName, e.goName))
	Doc(fmt.Sprintf("%s (AVX-512) sets the rows x 8 block of C at c (row stride ldc", name),
		fmt.Sprintf("elements; rows <= %d) to alpha*A*B + beta*C, where A's k step p is the", lanes*nv),
		"rows adjacent elements at a + p*lda and B's element (p, j) lies at",
		"b + p*ldbk + j*ldbj. It reads nothing past the block's rows, and C not",
		"at all when beta is 0. It needs AVX-512F and BMI2.")

	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b0 := Load(Param("b"), GP64())
	lda := Load(Param("lda"), GP64())
	SHLQ(U8(log2(e.size)), lda)
	ldbk := Load(Param("ldbk"), GP64())
	SHLQ(U8(log2(e.size)), ldbk)
	ldbj := Load(Param("ldbj"), GP64())
	SHLQ(U8(log2(e.size)), ldbj)
	rows := Load(Param("rows"), GP64())

	Comment("Masks of the vectors' lanes: K1 the first vector's, K2 the second's.")
	rowMasks(rows, lanes, nv)

	Comment("Columns 0-3 at b0 + {0, 1, 2, 3}*ldbj, 4-7 at b4 likewise.")
	ldbj3 := GP64()
	LEAQ(Mem{Base: ldbj, Index: ldbj, Scale: 2}, ldbj3)
	b4 := GP64()
	LEAQ(Mem{Base: b0, Index: ldbj, Scale: 4}, b4)
	col := func(j int) Mem {
		m := Mem{Base: b0}
		if j >= 4 {
			m.Base = b4
		}
		switch j % 4 {
		case 1:
			m.Index, m.Scale = ldbj, 1
		case 2:
			m.Index, m.Scale = ldbj, 2
		case 3:
			m.Index, m.Scale = ldbj3, 1
		}
		return m
	}

	acc := zmms(0, cols*nv) // column j, vector v: acc[j*nv+v]
	av := zmms(16, 2*nv)    // A's vectors of the two k steps of a trip
	bb := zmms(20, cols)    // B's broadcasts of a k step (nv = 2)
	for _, z := range acc {
		VPXORQ(z, z, z)
	}
	step := func(u int) {
		for v := range nv {
			e.moveZ(Mem{Base: a, Disp: 64 * v}, maskReg(v), av[u*nv+v])
		}
		for j := range cols {
			if nv == 1 {
				e.fmaBcst(col(j), av[u], acc[j])
				continue
			}
			e.broadcast(col(j), bb[j])
			for v := range nv {
				e.fma(bb[j], av[u*nv+v], acc[j*nv+v])
			}
		}
		ADDQ(lda, a)
		ADDQ(ldbk, b0)
		ADDQ(ldbk, b4)
	}
	n := GP64()
	MOVQ(k, n)
	SHRQ(U8(1), n)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	step(0)
	step(1)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_tail")
	ANDQ(U8(1), k)
	JZ(LabelRef(name + "_sum"))
	step(0)

	Label(name + "_sum")
	alpha := Z31
	e.broadcast(paramAddr("alpha"), alpha)
	for _, z := range acc {
		e.mul(alpha, z, z)
	}

	if e.size == 8 {
		Comment("Every column is written: K3 to K6 hold a piece's two.")
		two := GP64()
		MOVL(U32(3), two.As32())
		for _, k := range []Register{K3, K4, K5, K6} {
			KMOVW(two.As32(), k)
		}
		// Pair the columns 2q, 2q+1 within 128-bit lanes: then
		// acc[(2q+i)*nv+v], lane L, holds piece q (columns 2q, 2q+1) of
		// row 8v + 2L + i.
		t := Z16
		for v := range nv {
			for q := range 4 {
				lo, hi := acc[(2*q)*nv+v], acc[(2*q+1)*nv+v]
				VUNPCKHPD(hi, lo, t)  // row 2L+1
				VUNPCKLPD(hi, lo, lo) // row 2L
				VMOVAPD(t, hi)
			}
		}
		storeRows(name, e, 8*nv, 4, func(r, h int) (VecPhysical, int) {
			v, rr := r/8, r%8
			return acc[(2*h+rr%2)*nv+v], rr / 2
		})
		return
	}

	Comment("Every column is written: K3 and K4 hold a piece's four.")
	four := GP64()
	MOVL(U32(15), four.As32())
	KMOVW(four.As32(), K3)
	KMOVW(four.As32(), K4)

	// Transpose each vector's columns 4h..4h+3 within 128-bit lanes (as
	// columnKernel does), through av[0..3] into the four accumulators
	// they came from: then acc[(4h+i)*nv+v], lane L, holds piece h (columns
	// 4h..4h+3) of row 16v + 4L + i.
	t := zmms(16, 4)
	for v := range nv {
		for h := range 2 {
			s := func(i int) VecPhysical { return acc[(4*h+i)*nv+v] }
			VUNPCKLPS(s(1), s(0), t[0]) // c0 c1 of rows 0, 1 (each lane)
			VUNPCKHPS(s(1), s(0), t[1]) // c0 c1 of rows 2, 3
			VUNPCKLPS(s(3), s(2), t[2])
			VUNPCKHPS(s(3), s(2), t[3])
			VUNPCKLPD(t[2], t[0], s(0)) // row 4L
			VUNPCKHPD(t[2], t[0], s(1)) // row 4L+1
			VUNPCKLPD(t[3], t[1], s(2)) // row 4L+2
			VUNPCKHPD(t[3], t[1], s(3)) // row 4L+3
		}
	}
	rowPiece := func(r, h int) (VecPhysical, int) {
		v, rr := r/16, r%16
		return acc[(4*h+rr%4)*nv+v], rr / 4
	}
	storeRows(name, e, 16*nv, 2, rowPiece)
}
