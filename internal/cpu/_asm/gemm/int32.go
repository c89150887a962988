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

	acc := x.regs[:mr*vecs]
	bv := x.regs[mr*vecs : mr*vecs+vecs]
	rest := x.regs[mr*vecs+vecs:]
	half := len(rest) / 2
	av, prod := rest[:half], rest[half:] // broadcasts, products

	f := kernelLoop(name, size, mr, rowBytes, layout{}, x, acc, func(f kernelFrame, u int) {
		for j, v := range bv {
			move(Mem{Base: f.b, Disp: u*rowBytes + j*x.bytes}, v)
		}
		n := 0
		for r := 0; r < mr; r++ {
			t := av[r%len(av)]
			VPBROADCASTD(Mem{Base: f.a, Disp: (u*mr + r) * size}, t)
			for j, v := range bv {
				p := prod[n%len(prod)]
				n++
				VPMULLD(v, t, p)
				VPADDD(p, acc[vecs*r+j], acc[vecs*r+j])
			}
		}
	})
	c, ldc := f.c, f.ldc

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
