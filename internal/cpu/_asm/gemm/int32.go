package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// intMove is the integer vector load and store of each instruction set.
var intMove = map[string]func(Op, Op){
	avx2.name:   func(a, b Op) { VMOVDQU(a, b) },
	avx512.name: func(a, b Op) { VMOVDQU32(a, b) },
}

// microKernelInt32 generates an int32 micro-kernel of mr rows of two
// vectors: the float kernels' loop with each FMA replaced by a multiply
// keeping the low 32 bits of each product (VPMULLD) and an add, both
// wrapping around as Go's int32 arithmetic does, so the result is exact
// modulo 2^32 whatever the order of the sums. The products need registers
// of their own: AVX2 has one broadcast and one product register left, AVX-512
// three of each, used in turn.
func microKernelInt32(name string, x isa, mr int) {
	const size = 4
	lanes := x.bytes / size
	nr := vecs * lanes
	rowBytes := nr * size
	move := intMove[x.name]
	TEXT(name, NOSPLIT, "func(k int, a, b, c *int32, ldc int, alpha, beta int32)")
	Doc(fmt.Sprintf("%s (%s) sets the %dx%d block of C at c (row stride ldc elements)", name, x.name, mr, nr),
		fmt.Sprintf("to alpha*A*B + beta*C in int32 arithmetic (wrapping), where A is a packed %dxk", mr),
		fmt.Sprintf("panel (column after column) and B a packed kx%d panel (row after row).", nr),
		"C is not read when beta is 0.")

	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(log2(size)), ldc)

	acc := x.regs[:mr*vecs]
	bv := x.regs[mr*vecs : mr*vecs+vecs]
	rest := x.regs[mr*vecs+vecs:]
	half := len(rest) / 2
	av, prod := rest[:half], rest[half:] // broadcasts, products

	row := GP64()
	MOVQ(c, row)
	for r := 0; r < mr; r++ {
		PREFETCHT0(Mem{Base: row})
		PREFETCHT0(Mem{Base: row, Disp: rowBytes - 1})
		if r < mr-1 {
			ADDQ(ldc, row)
		}
	}
	for _, v := range acc {
		x.zero(v)
	}

	step := func(u int) {
		for j, v := range bv {
			move(Mem{Base: b, Disp: u*rowBytes + j*x.bytes}, v)
		}
		n := 0
		for r := 0; r < mr; r++ {
			t := av[r%len(av)]
			VPBROADCASTD(Mem{Base: a, Disp: (u*mr + r) * size}, t)
			for j, v := range bv {
				p := prod[n%len(prod)]
				n++
				VPMULLD(v, t, p)
				VPADDD(p, acc[vecs*r+j], acc[vecs*r+j])
			}
		}
	}

	Comment(fmt.Sprintf("Main loop: %d k steps a trip.", unroll))
	n := GP64()
	MOVQ(k, n)
	SHRQ(U8(log2(unroll)), n)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	for u := 0; u < unroll; u++ {
		step(u)
	}
	ADDQ(U32(unroll*mr*size), a)
	ADDQ(U32(unroll*rowBytes), b)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	ANDQ(U8(unroll-1), k)
	JZ(LabelRef(name + "_update"))
	Label(name + "_tailloop")
	step(0)
	ADDQ(U32(mr*size), a)
	ADDQ(U32(rowBytes), b)
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_update")
	Comment("Scale the product by alpha (through a general register: go vet's")
	Comment("asmdecl takes VPBROADCASTD from memory for an 8-byte read).")
	alpha := GP32()
	MOVL(paramAddr("alpha"), alpha)
	VMOVD(alpha, bv[0].AsX())
	VPBROADCASTD(bv[0].AsX(), bv[0])
	for _, v := range acc {
		VPMULLD(bv[0], v, v)
	}
	Comment("beta == 0 stores without reading C.")
	beta := GP32()
	MOVL(paramAddr("beta"), beta)
	TESTL(beta, beta)
	JNZ(LabelRef(name + "_withbeta"))
	for r := 0; r < mr; r++ {
		for j := range vecs {
			move(acc[vecs*r+j], Mem{Base: c, Disp: j * x.bytes})
		}
		if r < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()

	Label(name + "_withbeta")
	VMOVD(beta, bv[1].AsX())
	VPBROADCASTD(bv[1].AsX(), bv[1])
	for r := 0; r < mr; r++ {
		for j := range vecs {
			p := prod[j%len(prod)]
			VPMULLD(Mem{Base: c, Disp: j * x.bytes}, bv[1], p)
			VPADDD(p, acc[vecs*r+j], acc[vecs*r+j])
			move(acc[vecs*r+j], Mem{Base: c, Disp: j * x.bytes})
		}
		if r < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}
