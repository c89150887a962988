// Command gemm generates the micro-kernels of package internal/cpu/gemm with
// avo: AVX2/FMA kernels on YMM registers and AVX-512 kernels on ZMM
// registers. Run it through go generate in that package: it rewrites
// kernel_amd64.s and kernel_stubs_amd64.go, and CI checks that the committed
// files are what this program writes.
//
// A micro-kernel multiplies a packed MR x k panel of A (column after column:
// the MR elements of one k step are adjacent) by a packed k x NR panel of B
// (row after row), holding the MR x NR product in registers, then writes
// C = alpha*AB + beta*C for one MR x NR block of C. Each k step loads NR
// elements of B into vectors, broadcasts each of the MR elements of A and
// does one FMA per accumulator. An FMA's result is ready about four cycles
// later and two issue a cycle, so at least eight independent accumulators
// keep the FMA pipes busy:
//
//   - AVX2 (16 YMM registers): 6 rows of 2 vectors, 12 accumulators, leaving
//     two registers for B and two for A's broadcasts.
//   - AVX-512 (32 ZMM registers): 12 rows of 2 vectors, 24 accumulators,
//     two registers for B and six for A's broadcasts. Twice the rows means
//     each B vector loaded serves twice the FMAs, and with twice the lanes a
//     kernel call does four times the work of the AVX2 one for the same
//     loop and C-update overhead.
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
	broadcast func(...Op)
	fma       func(...Op)
	mul       func(...Op)
	move      func(...Op)
	add       func(...Op)
	moveZ     func(mxyz, k, mxyz1 Op) // a masked load, zeroing the other lanes
	fmaBcst   func(...Op)             // an FMA with one operand broadcast from memory
}

var (
	f32 = element{"float32", 4, VBROADCASTSS, VFMADD231PS, VMULPS, VMOVUPS, VADDPS, VMOVUPS_Z, VFMADD231PS_BCST}
	f64 = element{"float64", 8, VBROADCASTSD, VFMADD231PD, VMULPD, VMOVUPD, VADDPD, VMOVUPD_Z, VFMADD231PD_BCST}
)

// isa is a vector instruction set: its register file and how to zero one.
type isa struct {
	name  string
	bytes int // a vector register's size
	regs  []VecPhysical
	zero  func(VecPhysical)
}

var (
	avx2 = isa{"AVX2", 32,
		[]VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15},
		func(y VecPhysical) { VXORPS(y, y, y) }}
	// VPXORQ rather than VXORPS: the ZMM form of VXORPS needs AVX512DQ,
	// VPXORQ only AVX512F.
	avx512 = isa{"AVX-512", 64,
		[]VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
			Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31},
		func(z VecPhysical) { VPXORQ(z, z, z) }}
)

// vecs is how many vectors each row of a micro-kernel's block holds; the
// half and quarter kernels hold one.
const vecs = 2

// unroll is how many k steps one trip of a kernel's main loop does.
const unroll = 4

func main() {
	ConstraintExpr("!noasm")
	microKernel("kernelF32x6x16", f32, avx2, 6)
	microKernel("kernelF64x6x8", f64, avx2, 6)
	microKernel("kernelF32x12x32", f32, avx512, 12)
	microKernel("kernelF64x12x16", f64, avx512, 12)
	// Eight rows: for small products whose M is a multiple of 8 and not of
	// 12 (64, 128), where the 12-row kernels would compute rows past M.
	microKernel("kernelF32x8x32", f32, avx512, 8)
	microKernel("kernelF64x8x16", f64, avx512, 8)
	// B read where it lies (rows ldb apart) instead of packed: for products
	// of a few rows, where a packed B block would serve one or two panels of
	// A and packing it would cost more than it saves.
	microKernelStrided("kernelF32x12x32ldb", f32, avx512, 12)
	microKernelStrided("kernelF64x12x16ldb", f64, avx512, 12)
	microKernelStrided("kernelF32x8x32ldb", f32, avx512, 8)
	microKernelStrided("kernelF64x8x16ldb", f64, avx512, 8)
	// A read where it lies too (rows lda apart): small products on one
	// thread, whose A would be packed for a few column panels of B only.
	microKernelInPlace("kernelF32x12x32lda", f32, avx512, 12)
	microKernelInPlace("kernelF64x12x16lda", f64, avx512, 12)
	microKernelInPlace("kernelF32x8x32lda", f32, avx512, 8)
	microKernelInPlace("kernelF64x8x16lda", f64, avx512, 8)
	// And A transposed where it lies (A's k steps lda apart, each step's
	// rows adjacent): the same products with op(A) = A^T.
	microKernelInPlaceT("kernelF32x12x32ldat", f32, avx512, 12)
	microKernelInPlaceT("kernelF64x12x16ldat", f64, avx512, 12)
	microKernelInPlaceT("kernelF32x8x32ldat", f32, avx512, 8)
	microKernelInPlaceT("kernelF64x8x16ldat", f64, avx512, 8)
	// Edge kernels for a block's last panel of B when it has fewer than NR
	// columns, where the kernels above would compute NR: half the columns
	// (one ZMM vector a row) and a quarter (one YMM vector a row, AVX2 and
	// FMA instructions, for the AVX-512 engines all the same), B read with a
	// row stride: packed and padded (ldb = NR) or where it lies when they
	// cover its columns exactly. float32 n = 72 (8 columns past 64) or 80
	// (16) computed 96 columns without them.
	for _, x := range []isa{avx512, avx2} {
		for _, mr := range []int{12, 8} {
			for _, e := range []element{f32, f64} {
				lanes := x.bytes / e.size
				name := fmt.Sprintf("kernelF%dx%dx%d", 8*e.size, mr, lanes)
				microKernelOf(name+"ldb", e, x, mr, 1, layout{stridedB: true})
				microKernelOf(name+"lda", e, x, mr, 1, layout{stridedA: true, stridedB: true})
				microKernelOf(name+"ldat", e, x, mr, 1, layout{columnsA: true, stridedB: true})
			}
		}
	}
	// The half kernels again with their columns masked: for a last panel
	// of fewer columns than they hold, read where it lies and written
	// into C directly, with no padded copy of B and no scratch block.
	for _, mr := range []int{12, 8} {
		for _, e := range []element{f32, f64} {
			name := fmt.Sprintf("kernelF%dx%dx%dm", 8*e.size, mr, 64/e.size)
			microKernelOf(name+"ldb", e, avx512, mr, 1, layout{stridedB: true, masked: true})
			microKernelOf(name+"lda", e, avx512, mr, 1, layout{stridedA: true, stridedB: true, masked: true})
			microKernelOf(name+"ldat", e, avx512, mr, 1, layout{columnsA: true, stridedB: true, masked: true})
		}
	}
	// Edge kernels of at most four columns that compute no column past
	// the block (edge.go).
	columnKernel("columnKernelF32", f32)
	columnKernel("columnKernelF64", f64)
	dotKernel("dotKernelF32", f32)
	dotKernel("dotKernelF64", f64)
	rowKernel("rowKernelF32", f32)
	rowKernel("rowKernelF64", f64)
	gatherColumns("gatherColumnsF32", f32)
	gatherColumns("gatherColumnsF64", f64)
	// Eight columns a call on one or two vectors of A's rows, for
	// products with both operands transposed (columns8.go).
	columns8Kernel("columns8KernelF32x16", f32, 1)
	columns8Kernel("columns8KernelF32x32", f32, 2)
	columns8Kernel("columns8KernelF64x8", f64, 1)
	columns8Kernel("columns8KernelF64x16", f64, 2)
	microKernelInt32("kernelI32x6x16", avx2, 6)
	microKernelInt32("kernelI32x12x32", avx512, 12)
	transpose4F32()
	transpose4F64()
	transpose16F32()
	transpose8F64()
	copyRows("copyRows32", 32) // the 8-row float32 kernels' A panels
	copyRows("copyRows48", 48)
	copyRows("copyRows64", 64)
	copyRows("copyRows96", 96)
	copyRows("copyRows128", 128)
	peakLoop("fmaPeakF32", f32, avx2, 12)
	peakLoop("fmaPeakF64", f64, avx2, 12)
	peakLoop("fmaPeak512F32", f32, avx512, 24)
	peakLoop("fmaPeak512F64", f64, avx512, 24)
	Generate()
}

// microKernel generates one micro-kernel of mr rows of two vectors.
func microKernel(name string, e element, x isa, mr int) {
	microKernelOf(name, e, x, mr, vecs, layout{})
}

// microKernelStrided generates microKernel's twin whose B is not packed:
// row p of the k x NR panel is at b + p*ldb elements.
func microKernelStrided(name string, e element, x isa, mr int) {
	microKernelOf(name, e, x, mr, vecs, layout{stridedB: true})
}

// microKernelInPlace generates microKernelStrided's twin whose A is not
// packed either: row r of the mr x k block of A is at a + r*lda elements,
// its k steps adjacent.
func microKernelInPlace(name string, e element, x isa, mr int) {
	microKernelOf(name, e, x, mr, vecs, layout{stridedA: true, stridedB: true})
}

// microKernelInPlaceT generates microKernelInPlace's twin for a transposed
// A: k step p of the mr x k block of op(A) is the mr adjacent elements at
// a + p*lda.
func microKernelInPlaceT(name string, e element, x isa, mr int) {
	microKernelOf(name, e, x, mr, vecs, layout{columnsA: true, stridedB: true})
}

// layout says which operands a micro-kernel reads where they lie rather
// than packed: A's rows lda apart (stridedA), A's k steps lda apart
// (columnsA), B's rows ldb apart (stridedB); and (masked, one vector a
// row only) whether it takes a column count, reading and writing only
// that many columns of B and C.
type layout struct{ stridedA, columnsA, stridedB, masked bool }

// microKernelOf generates a micro-kernel of mr rows of nv vectors whose
// operands lie as l says.
func microKernelOf(name string, e element, x isa, mr, nv int, l layout) {
	lanes := x.bytes / e.size
	nr := nv * lanes
	rowBytes := nr * e.size // of a B panel row and of a C block row
	strided := l.stridedB
	colsParam, colsDoc := "", ""
	if l.masked {
		if nv != 1 || x.bytes != 64 {
			panic("masked kernels are AVX-512 kernels of one vector a row")
		}
		colsParam = ", cols"
		colsDoc = fmt.Sprintf(" Only the first cols (<= %d) columns of B and C are read or written.", nr)
	}
	if l.columnsA {
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, lda, ldb, ldc%s int, alpha, beta %s)", e.goName, colsParam, e.goName))
		Doc(fmt.Sprintf("%s (%s) sets the %dx%d block of C at c (row stride ldc elements)", name, x.name, mr, nr),
			fmt.Sprintf("to alpha*A*B + beta*C, where A is the transpose of a kx%d block of a", mr),
			fmt.Sprintf("row-major matrix, rows lda elements apart, and B a kx%d panel of one,", nr),
			"rows ldb elements apart. C is not read when beta is 0."+colsDoc)
	} else if l.stridedA {
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, lda, ldb, ldc%s int, alpha, beta %s)", e.goName, colsParam, e.goName))
		Doc(fmt.Sprintf("%s (%s) sets the %dx%d block of C at c (row stride ldc elements)", name, x.name, mr, nr),
			fmt.Sprintf("to alpha*A*B + beta*C, where A is a %dxk block of a row-major matrix,", mr),
			fmt.Sprintf("rows lda elements apart, and B a kx%d panel of one, rows ldb elements", nr),
			"apart. C is not read when beta is 0."+colsDoc)
	} else if strided {
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, ldb, ldc%s int, alpha, beta %s)", e.goName, colsParam, e.goName))
		Doc(fmt.Sprintf("%s (%s) sets the %dx%d block of C at c (row stride ldc elements)", name, x.name, mr, nr),
			fmt.Sprintf("to alpha*A*B + beta*C, where A is a packed %dxk panel (column after", mr),
			fmt.Sprintf("column) and B a kx%d panel of a row-major matrix, rows ldb elements", nr),
			"apart. C is not read when beta is 0."+colsDoc)
	} else {
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, ldc int, alpha, beta %s)", e.goName, e.goName))
		Doc(fmt.Sprintf("%s (%s) sets the %dx%d block of C at c (row stride ldc elements)", name, x.name, mr, nr),
			fmt.Sprintf("to alpha*A*B + beta*C, where A is a packed %dxk panel (column after", mr),
			fmt.Sprintf("column) and B a packed kx%d panel (row after row). C is not read when", nr),
			"beta is 0.")
	}

	acc := x.regs[:mr*nv]
	bv := x.regs[mr*nv : mr*nv+nv]
	av := x.regs[mr*nv+nv:] // A's broadcasts, used in turn
	if len(av) < 2 {
		panic("too few registers for the broadcasts")
	}
	if l.masked {
		Comment("K1: the columns to read and write.")
		cols, ones := GP64(), GP64()
		Load(Param("cols"), cols)
		MOVQ(I32(-1), ones)
		BZHIQ(cols, ones, ones)
		KMOVW(ones.As32(), K1)
	}
	f := kernelLoop(name, e.size, mr, rowBytes, l, x, acc, func(f kernelFrame, u int) {
		for j, v := range bv {
			switch {
			case l.masked:
				e.moveZ(Mem{Base: f.b}, K1, v)
			case strided:
				e.move(Mem{Base: f.b, Disp: j * x.bytes}, v)
			default:
				e.move(Mem{Base: f.b, Disp: u*rowBytes + j*x.bytes}, v)
			}
		}
		if strided {
			ADDQ(f.ldb, f.b) // the next row of B
		}
		for r := 0; r < mr; r++ {
			t := av[r%len(av)]
			if l.stridedA {
				e.broadcast(f.aRow(r, u*e.size), t)
			} else if l.columnsA {
				e.broadcast(Mem{Base: f.a, Disp: r * e.size}, t)
			} else {
				e.broadcast(Mem{Base: f.a, Disp: (u*mr + r) * e.size}, t)
			}
			for j, v := range bv {
				e.fma(v, t, acc[nv*r+j])
			}
		}
		if l.columnsA {
			ADDQ(f.lda, f.a) // A's next k step
		}
	})
	c, ldc := f.c, f.ldc

	Comment("Scale the product by alpha.")
	alpha, betaV := av[0], av[1] // free once the loop is done
	e.broadcast(paramAddr("alpha"), alpha)
	for _, v := range acc {
		e.mul(alpha, v, v)
	}
	jumpUnlessBetaZero(name, e)
	for r := 0; r < mr; r++ {
		for j := range nv {
			if l.masked {
				e.move(acc[nv*r+j], K1, Mem{Base: c})
				continue
			}
			e.move(acc[nv*r+j], Mem{Base: c, Disp: j * x.bytes})
		}
		if r < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()

	Label(name + "_withbeta")
	e.broadcast(paramAddr("beta"), betaV)
	for r := 0; r < mr; r++ {
		for j := range nv {
			if l.masked {
				old := av[2]
				e.moveZ(Mem{Base: c}, K1, old)
				e.fma(old, betaV, acc[nv*r+j])
				e.move(acc[nv*r+j], K1, Mem{Base: c})
				continue
			}
			e.fma(Mem{Base: c, Disp: j * x.bytes}, betaV, acc[nv*r+j])
			e.move(acc[nv*r+j], Mem{Base: c, Disp: j * x.bytes})
		}
		if r < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}

// kernelFrame is a micro-kernel's arguments in registers, ldb (strided
// kernels only) and ldc in bytes. A kernel that reads A in place keeps a
// pointer to every fourth row of it in as (a itself first) and lda and
// 3*lda in bytes, which reach the three rows between with one address.
type kernelFrame struct {
	k, a, b, c, ldb, ldc Register
	as                   []Register
	lda, lda3            Register
	stepsA               bool // the step moves a on (A's k steps lda apart)
}

// aRow returns the address of the element disp bytes into row r of an
// in-place A.
func (f kernelFrame) aRow(r, disp int) Mem {
	m := Mem{Base: f.as[r/4], Disp: disp}
	switch r % 4 {
	case 1:
		m.Index, m.Scale = f.lda, 1
	case 2:
		m.Index, m.Scale = f.lda, 2
	case 3:
		m.Index, m.Scale = f.lda3, 1
	}
	return m
}

// kernelLoop writes what every micro-kernel does before it updates C: it
// loads the arguments, starts fetching C's mr rows (rowBytes each), zeroes
// the accumulators acc, and runs step (the work of k step u of a trip, A's
// mr elements of a k step of size bytes each) over all k steps: unroll
// steps a trip, then one at a time. It ends at the label name_update.
// A strided kernel's step moves b to B's next row itself.
func kernelLoop(name string, size, mr, rowBytes int, l layout, x isa, acc []VecPhysical, step func(f kernelFrame, u int)) kernelFrame {
	strided := l.stridedB
	var f kernelFrame
	f.k = Load(Param("k"), GP64())
	f.a = Load(Param("a"), GP64())
	f.b = Load(Param("b"), GP64())
	f.c = Load(Param("c"), GP64())
	if l.columnsA {
		f.lda = Load(Param("lda"), GP64())
		SHLQ(U8(log2(size)), f.lda) // elements to bytes
		f.stepsA = true
	}
	if l.stridedA {
		f.lda = Load(Param("lda"), GP64())
		SHLQ(U8(log2(size)), f.lda) // elements to bytes
		f.lda3 = GP64()
		LEAQ(Mem{Base: f.lda, Index: f.lda, Scale: 2}, f.lda3)
		f.as = []Register{f.a}
		for r := 4; r < mr; r += 4 {
			next := GP64()
			LEAQ(Mem{Base: f.as[len(f.as)-1], Index: f.lda, Scale: 4}, next)
			f.as = append(f.as, next)
		}
	}
	if strided {
		f.ldb = Load(Param("ldb"), GP64())
		SHLQ(U8(log2(size)), f.ldb) // elements to bytes
	}
	f.ldc = Load(Param("ldc"), GP64())
	SHLQ(U8(log2(size)), f.ldc) // elements to bytes

	Comment("Start fetching C's rows now: the loads at the end then hit cache.")
	row := GP64()
	MOVQ(f.c, row)
	for r := 0; r < mr; r++ {
		PREFETCHT0(Mem{Base: row})
		PREFETCHT0(Mem{Base: row, Disp: rowBytes - 1})
		if r < mr-1 {
			ADDQ(f.ldc, row)
		}
	}
	for _, v := range acc {
		x.zero(v)
	}

	Comment(fmt.Sprintf("Main loop: %d k steps a trip.", unroll))
	n := GP64()
	MOVQ(f.k, n)
	SHRQ(U8(log2(unroll)), n)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	for u := 0; u < unroll; u++ {
		step(f, u)
	}
	f.nextA(unroll, mr, size)
	if !strided {
		ADDQ(U32(unroll*rowBytes), f.b)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	ANDQ(U8(unroll-1), f.k)
	JZ(LabelRef(name + "_update"))
	Label(name + "_tailloop")
	step(f, 0)
	f.nextA(1, mr, size)
	if !strided {
		ADDQ(U32(rowBytes), f.b)
	}
	DECQ(f.k)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_update")
	return f
}

// nextA moves A's pointers on by steps k steps.
func (f kernelFrame) nextA(steps, mr, size int) {
	if f.stepsA {
		return
	}
	if f.as == nil {
		ADDQ(U32(steps*mr*size), f.a)
		return
	}
	for _, a := range f.as {
		ADDQ(U32(steps*size), a)
	}
}

// peakLoop generates a loop of register-only FMAs: as many independent
// chains as the micro-kernels of its instruction set keep, with no memory
// traffic at all. Its speed is the machine's FMA peak that those kernels are
// measured against.
func peakLoop(name string, e element, x isa, chains int) {
	lanes := x.bytes / e.size
	TEXT(name, NOSPLIT, "func(n int)")
	Doc(fmt.Sprintf("%s runs n trips of %d independent %d-lane %s FMAs (2*%d*%d flops a trip) on registers only.",
		name, chains, lanes, x.name, chains, lanes))
	n := Load(Param("n"), GP64())
	acc := x.regs[:chains]
	src := x.regs[chains : chains+2]
	for _, v := range x.regs[:chains+2] {
		x.zero(v)
	}
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	for _, v := range acc {
		e.fma(src[0], src[1], v)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// jumpUnlessBetaZero jumps to name_withbeta unless the parameter beta is
// zero: beta == 0 (either sign: all bits but the sign clear) stores
// without reading C; any other beta, NaN included, reads it.
func jumpUnlessBetaZero(name string, e element) {
	Comment("beta == 0 (either sign: all bits but the sign clear) stores without")
	Comment("reading C; any other beta, NaN included, reads it.")
	betaBits := GP64()
	if e.size == 4 {
		MOVL(paramAddr("beta"), betaBits.As32())
		SHLL(U8(1), betaBits.As32())
	} else {
		MOVQ(paramAddr("beta"), betaBits)
		SHLQ(U8(1), betaBits)
	}
	JNZ(LabelRef(name + "_withbeta"))
}

// paramAddr returns the stack address of the named argument.
func paramAddr(name string) Mem {
	p, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return p.Addr
}

func log2(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}
