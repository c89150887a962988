// Command gemm generates the AVX2/FMA micro-kernels of package
// internal/cpu/gemm with avo. Run it through go generate in that package:
// it rewrites kernel_amd64.s and kernel_amd64_stubs.go, and CI checks that
// the committed files are what this program writes.
//
// A micro-kernel multiplies a packed MR x k panel of A by a packed k x NR
// panel of B, holding the MR x NR product in twelve YMM registers, then
// writes C = alpha*AB + beta*C for one MR x NR block of C. With six rows and
// two YMM vectors a row (16 float32 or 8 float64 columns) that is twelve
// independent FMA chains: enough to keep two FMA pipes of latency four busy,
// and it leaves four registers for two B vectors and the A broadcasts.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// element describes one floating-point type: its Go name, size and the
// instructions that differ between single and double precision.
type element struct {
	goName    string
	size      int // bytes
	lanes     int // elements in a YMM register
	broadcast func(...Op)
	fma       func(...Op)
	mul       func(...Op)
	load      func(...Op)
	store     func(...Op)
	zero      func(...Op)
	ucomis    func(Op, Op)
}

var (
	f32 = element{"float32", 4, 8, VBROADCASTSS, VFMADD231PS, VMULPS, VMOVUPS, VMOVUPS, VXORPS, UCOMISS}
	f64 = element{"float64", 8, 4, VBROADCASTSD, VFMADD231PD, VMULPD, VMOVUPD, VMOVUPD, VXORPD, UCOMISD}
)

// mr is the micro-kernel's row count; each row holds two YMM accumulators.
const mr = 6

// unroll is how many k steps one trip of the main loop does.
const unroll = 4

func main() {
	ConstraintExpr("!noasm")
	microKernel("kernelF32x6x16", f32, false)
	microKernel("kernelF32x6x16RowA", f32, true)
	microKernel("kernelF64x6x8", f64, false)
	microKernel("kernelF64x6x8RowA", f64, true)
	peakLoop("fmaPeakF32", f32)
	peakLoop("fmaPeakF64", f64)
	Generate()
}

// microKernel generates one micro-kernel. With rowA, the A panel is stored
// row after row (k elements apart) rather than column after column: packing a
// row-major A is then a straight copy of each row instead of a gather.
func microKernel(name string, e element, rowA bool) {
	nr := 2 * e.lanes
	layout := "column after column"
	if rowA {
		layout = "row after row"
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, ldc int, alpha, beta %s)", e.goName, e.goName))
	Doc(fmt.Sprintf("%s sets the %dx%d block of C at c (row stride ldc elements) to", name, mr, nr),
		fmt.Sprintf("alpha*A*B + beta*C, where A is a packed %dxk panel (%s)", mr, layout),
		fmt.Sprintf("and B a packed kx%d panel (row after row). C is not read when beta is 0.", nr))

	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(log2(e.size)), ldc) // elements to bytes

	// aRow returns the address of row r of the A panel at k step u. Column
	// after column, rows are adjacent. Row after row they are s bytes apart,
	// reached as a+s*{0,1,2,4} and a3+s*{0,2} with a3 = a+3s, since x86
	// addressing scales an index by 1, 2, 4 or 8 only.
	var s, a3 Register
	if rowA {
		s, a3 = GP64(), GP64()
		MOVQ(k, s)
		SHLQ(U8(log2(e.size)), s)
		LEAQ(Mem{Base: a, Index: s, Scale: 2}, a3)
		ADDQ(s, a3)
	}
	aRow := func(r, u int) Mem {
		if !rowA {
			return Mem{Base: a, Disp: (u*mr + r) * e.size}
		}
		d := u * e.size
		switch r {
		case 0:
			return Mem{Base: a, Disp: d}
		case 1:
			return Mem{Base: a, Index: s, Scale: 1, Disp: d}
		case 2:
			return Mem{Base: a, Index: s, Scale: 2, Disp: d}
		case 3:
			return Mem{Base: a3, Disp: d}
		case 4:
			return Mem{Base: a, Index: s, Scale: 4, Disp: d}
		default:
			return Mem{Base: a3, Index: s, Scale: 2, Disp: d}
		}
	}
	aStep := mr * e.size // bytes A's pointers move a k step
	if rowA {
		aStep = e.size
	}
	advanceA := func(steps int) {
		ADDQ(U32(steps*aStep), a)
		if rowA {
			ADDQ(U32(steps*aStep), a3)
		}
	}

	acc := []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11}
	bv := []VecPhysical{Y12, Y13}
	av := []VecPhysical{Y14, Y15}

	Comment("Start fetching C's rows now: the loads at the end then hit cache.")
	row := GP64()
	MOVQ(c, row)
	for r := 0; r < mr; r++ {
		PREFETCHT0(Mem{Base: row})
		PREFETCHT0(Mem{Base: row, Disp: nr*e.size - 1})
		if r < mr-1 {
			ADDQ(ldc, row)
		}
	}
	for _, y := range acc {
		e.zero(y, y, y)
	}

	step := func(u int) {
		bOff := u * nr * e.size
		e.load(Mem{Base: b, Disp: bOff}, bv[0])
		e.load(Mem{Base: b, Disp: bOff + 32}, bv[1])
		for r := 0; r < mr; r++ {
			x := av[r%2]
			e.broadcast(aRow(r, u), x)
			e.fma(bv[0], x, acc[2*r])
			e.fma(bv[1], x, acc[2*r+1])
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
	advanceA(unroll)
	ADDQ(U32(unroll*nr*e.size), b)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	ANDQ(U8(unroll-1), k)
	JZ(LabelRef(name + "_update"))
	Label(name + "_tailloop")
	step(0)
	advanceA(1)
	ADDQ(U32(nr*e.size), b)
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_update")
	Comment("Scale the product by alpha.")
	Load(Param("alpha"), X12)
	e.broadcast(X12, Y12)
	for _, y := range acc {
		e.mul(Y12, y, y)
	}
	Comment("beta == 0 (either sign) stores without reading C; NaN beta reads it.")
	Load(Param("beta"), X13)
	e.zero(X14, X14, X14)
	e.ucomis(X13, X14)
	JNE(LabelRef(name + "_withbeta"))
	JP(LabelRef(name + "_withbeta"))
	for r := 0; r < mr; r++ {
		e.store(acc[2*r], Mem{Base: c})
		e.store(acc[2*r+1], Mem{Base: c, Disp: 32})
		if r < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()

	Label(name + "_withbeta")
	e.broadcast(X13, Y13)
	for r := 0; r < mr; r++ {
		e.fma(Mem{Base: c}, Y13, acc[2*r])
		e.fma(Mem{Base: c, Disp: 32}, Y13, acc[2*r+1])
		e.store(acc[2*r], Mem{Base: c})
		e.store(acc[2*r+1], Mem{Base: c, Disp: 32})
		if r < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}

// peakLoop generates a loop of register-only FMAs: twelve independent chains,
// as many as the micro-kernel keeps, with no memory traffic at all. Its speed
// is the machine's FMA peak that the micro-kernel is measured against.
func peakLoop(name string, e element) {
	TEXT(name, NOSPLIT, "func(n int)")
	Doc(fmt.Sprintf("%s runs n trips of 12 independent %d-lane FMAs (2*12*%d flops a trip) on registers only.", name, e.lanes, e.lanes))
	n := Load(Param("n"), GP64())
	acc := []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11}
	for _, y := range acc {
		e.zero(y, y, y)
	}
	e.zero(Y12, Y12, Y12)
	e.zero(Y13, Y13, Y13)
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	for _, y := range acc {
		e.fma(Y12, Y13, y)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func log2(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}
