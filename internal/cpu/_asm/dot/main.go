// Command dot generates the AVX2/FMA dot-product kernels of package
// internal/cpu/dot with avo. Run it through go generate in that package: it
// rewrites dot_amd64.s and dot_stubs_amd64.go, and CI checks that the
// committed files are what this program writes.
//
// A dot product is bound by loads, not arithmetic: each FMA needs two
// vectors from memory, and a core loads at most two 256-bit vectors a cycle,
// so at best one FMA issues a cycle. An FMA's result is ready about four
// cycles later, so a single accumulator would stall three cycles in four on
// its own dependency chain. Four independent accumulators (Y0..Y3) cover
// that latency; the main loop does one FMA into each, 4*lanes elements a
// trip, and they are added together only at the end.
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
	goName  string
	size    int // bytes
	lanes   int // elements in a YMM register
	load    func(...Op)
	fma     func(...Op)
	add     func(...Op)
	zero    func(...Op)
	loadS   func(...Op) // one element into the low lane
	fmaS    func(...Op) // scalar FMA on the low lane
	hsum128 func()      // folds the lanes of X0 down to its low element
}

var (
	f32 = element{
		goName: "float32", size: 4, lanes: 8,
		load: VMOVUPS, fma: VFMADD231PS, add: VADDPS, zero: VXORPS,
		loadS: VMOVSS, fmaS: VFMADD231SS,
		hsum128: func() {
			// X0 = [a b c d]: add the high pair onto the low pair, then
			// the second element onto the first.
			VMOVHLPS(X0, X0, X1) // X1 = [c d . .]
			VADDPS(X1, X0, X0)   // X0 = [a+c b+d . .]
			VMOVSHDUP(X0, X1)    // X1 = [b+d . . .]
			VADDSS(X1, X0, X0)   // X0 = [a+c+b+d . . .]
		},
	}
	f64 = element{
		goName: "float64", size: 8, lanes: 4,
		load: VMOVUPD, fma: VFMADD231PD, add: VADDPD, zero: VXORPD,
		loadS: VMOVSD, fmaS: VFMADD231SD,
		hsum128: func() {
			// X0 = [a b]: add the high element onto the low one.
			VUNPCKHPD(X0, X0, X1) // X1 = [b b]
			VADDSD(X1, X0, X0)    // X0 = [a+b .]
		},
	}
)

// accs is the number of independent YMM accumulators: enough to cover the
// FMA latency at the one FMA a cycle that the loads allow (see above).
const accs = 4

func main() {
	ConstraintExpr("!noasm")
	dotKernel("dotF32AVX2", f32)
	dotKernel("dotF64AVX2", f64)
	Generate()
}

func dotKernel(name string, e element) {
	TEXT(name, NOSPLIT, fmt.Sprintf("func(x, y []%s) %s", e.goName, e.goName))
	Doc(fmt.Sprintf("%s returns the sum of x[i]*y[i] over i < len(x), accumulated in %s.", name, e.goName),
		"The caller makes sure that len(y) >= len(x); y's length is not read.")

	x := Load(Param("x").Base(), GP64())
	y := Load(Param("y").Base(), GP64())
	n := Load(Param("x").Len(), GP64())

	acc := []VecPhysical{Y0, Y1, Y2, Y3}
	xv := []VecPhysical{Y4, Y5, Y6, Y7}
	for _, a := range acc {
		e.zero(a, a, a)
	}

	perTrip := accs * e.lanes // elements a trip of the main loop
	Comment(fmt.Sprintf("Main loop: %d elements a trip, one vector into each accumulator.", perTrip))
	cnt := GP64()
	MOVQ(n, cnt)
	SHRQ(U8(log2(perTrip)), cnt)
	JZ(LabelRef(name + "_vectors"))
	Label(name + "_loop")
	for i := range accs {
		e.load(Mem{Base: x, Disp: 32 * i}, xv[i])
	}
	for i := range accs {
		e.fma(Mem{Base: y, Disp: 32 * i}, xv[i], acc[i])
	}
	ADDQ(U32(32*accs), x)
	ADDQ(U32(32*accs), y)
	DECQ(cnt)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_vectors")
	Comment(fmt.Sprintf("Fewer than %d left: whole vectors of %d into the first accumulator.", perTrip, e.lanes))
	MOVQ(n, cnt)
	ANDQ(U8(perTrip-1), cnt)
	SHRQ(U8(log2(e.lanes)), cnt)
	JZ(LabelRef(name + "_reduce"))
	Label(name + "_vectorloop")
	e.load(Mem{Base: x}, xv[0])
	e.fma(Mem{Base: y}, xv[0], acc[0])
	ADDQ(U8(32), x)
	ADDQ(U8(32), y)
	DECQ(cnt)
	JNZ(LabelRef(name + "_vectorloop"))

	Label(name + "_reduce")
	Comment("Add the accumulators together, then the lanes of the sum.",
		"This comes before the scalar tail because VEX scalar instructions",
		"clear the upper half of their YMM destination.")
	e.add(Y1, Y0, Y0)
	e.add(Y3, Y2, Y2)
	e.add(Y2, Y0, Y0)
	VEXTRACTF128(U8(1), Y0, X1)
	e.add(X1, X0, X0)
	e.hsum128()

	Comment(fmt.Sprintf("Fewer than %d left: one element at a time.", e.lanes))
	ANDQ(U8(e.lanes-1), n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_tailloop")
	e.loadS(Mem{Base: x}, X1)
	e.fmaS(Mem{Base: y}, X1, X0)
	ADDQ(U8(e.size), x)
	ADDQ(U8(e.size), y)
	DECQ(n)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_done")
	VZEROUPPER()
	Store(X0, ReturnIndex(0))
	RET()
}

func log2(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}
