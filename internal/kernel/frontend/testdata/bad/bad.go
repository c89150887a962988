// Package bad holds kernels outside the subset, one refusal each, for the
// front end's tests: each offending line carries a want comment with a
// piece of the message.
package bad

import (
	"fmt"
	"strconv"

	"github.com/goamp/goamp/amp"
)

var counter int

//goamp:kernel
func usesMap(idx amp.Index, v *amp.ArrayView[float32]) {
	m := map[int]float32{} // want "maps"
	v.Set(idx, m[0])
}

//goamp:kernel
func usesInterface(idx amp.Index, v *amp.ArrayView[float32]) {
	var x any = v.At(idx) // want "interfaces"
	_ = x
}

//goamp:kernel
func usesString(idx amp.Index, v *amp.ArrayView[float32], s string) { // want "kernel parameter s has type string"
	v.Set(idx, float32(len(s)))
}

//goamp:kernel
func usesAppend(idx amp.Index, v *amp.ArrayView[float32]) {
	s := make([]float32, 4) // want "make slices"
	v.Set(idx, s[1])
}

//goamp:kernel
func usesGoroutine(idx amp.Index, v *amp.ArrayView[float32]) {
	go helper(v) // want "goroutines"
}

func helper(v *amp.ArrayView[float32]) { v.Set1(0, 1) }

//goamp:kernel
func usesChannel(idx amp.Index, v *amp.ArrayView[float32]) {
	ch := make(chan int) // want "channels"
	_ = ch
}

//goamp:kernel
func usesDefer(idx amp.Index, v *amp.ArrayView[float32]) {
	defer v.Set(idx, 0) // want "defer"
}

func fact(n int) int {
	if n <= 1 {
		return 1
	}
	return n * fact(n-1) // want "recursive"
}

//goamp:kernel
func usesRecursion(idx amp.Index, v *amp.ArrayView[float32]) {
	v.Set(idx, float32(fact(idx.At(0))))
}

//goamp:kernel
func usesFuncValue(idx amp.Index, v *amp.ArrayView[float32]) {
	fs := [2]func(float32) float32{square, square} // want "function values"
	v.Set(idx, fs[idx.At(0)%2](v.At(idx)))
}

func square(x float32) float32 { return x * x }

//goamp:kernel
func usesClosure(idx amp.Index, v *amp.ArrayView[float32]) {
	k := float32(2)
	f := func(x float32) float32 { return k * x } // want "closures"
	v.Set(idx, f(v.At(idx)))
}

//goamp:kernel
func writesPackageVar(idx amp.Index, v *amp.ArrayView[float32]) {
	counter++ // want "package-level variable counter"
}

//goamp:kernel
func usesPanic(idx amp.Index, v *amp.ArrayView[float32]) {
	if v.At(idx) < 0 {
		panic("negative") // want "panic"
	}
}

//goamp:kernel
func usesOtherPackage(idx amp.Index, v *amp.ArrayView[float32]) {
	n, _ := strconv.Atoi("3") // want "own package"
	v.Set(idx, float32(n))
}

//goamp:kernel
func usesFmt(idx amp.Index, v *amp.ArrayView[float32]) {
	fmt.Println(v.At(idx)) // want "variadic functions such as Println"
}

//goamp:kernel
func staticLength(t amp.TiledIndex, v *amp.ArrayView[float32], n int) {
	s := amp.TileStatic[float32](t, n) // want "must be a constant"
	s[0] = 1
}

//goamp:kernel
func staticInLoop(t amp.TiledIndex, v *amp.ArrayView[float32]) {
	for i := 0; i < 4; i++ {
		s := amp.TileStatic[float32](t, 16) // want "inside a loop"
		s[i] = 1
	}
}

//goamp:kernel
func staticTooBig(t amp.TiledIndex, v *amp.ArrayView[float64]) {
	s := amp.TileStatic[float64](t, 8192) // want "ask for 65536 bytes"
	s[0] = 1
}

//goamp:kernel
func divergentBarrier(t amp.TiledIndex, v *amp.ArrayView[float32]) {
	if t.Local.At(0) == 0 {
		t.Barrier.Wait() // want "reached only by some threads"
	}
}

//goamp:kernel
func barrierAfterReturn(t amp.TiledIndex, v *amp.ArrayView[float32]) {
	if t.Global.At(0) >= v.Extent().At(0) {
		return
	}
	t.Barrier.Wait() // want "reached only by some threads"
}

//goamp:kernel
func barrierInDivergentLoop(t amp.TiledIndex, v *amp.ArrayView[float32]) {
	for i := t.Local.At(0); i < 8; i++ {
		t.Barrier.Wait() // want "reached only by some threads"
	}
}

//goamp:kernel
func badIndexParam(i int, v *amp.ArrayView[float32]) { // want "must be amp.Index or amp.TiledIndex"
	v.Set1(i, 0)
}

//goamp:kernel
func returnsValue(idx amp.Index, v *amp.ArrayView[float32]) float32 { // want "returns a value"
	return v.At(idx)
}

//goamp:kernel
func sliceParam(idx amp.Index, s []float32) { // want "kernel parameter s has type []float32"
	s[0] = 1
}

//goamp:kernel
func divByZeroFine(idx amp.Index, v *amp.ArrayView[int32], d int32) {
	v.Set(idx, v.At(idx)/d) // fine: a zero divisor is reported at run time
}

//goamp:kernel
func slicing(t amp.TiledIndex, v *amp.ArrayView[float32]) {
	s := amp.TileStatic[float32](t, 16)
	u := s[2:4] // want "cannot slice"
	u[0] = 1
}

//goamp:kernel
func viewRanks(idx amp.Index, v *amp.ArrayView[float32]) {
	v.Set1(0, v.At2(0, 0)) // want "rank-2 and rank-1"
}

//goamp:kernel
func hostMethod(idx amp.Index, v *amp.ArrayView[float32]) {
	_ = v.Synchronize() // want "method Synchronize"
}

type point struct{ x, y float32 }

//goamp:kernel
func methodKernelHelper(idx amp.Index, v *amp.ArrayView[float32]) {
	var p point
	p.x = v.At(idx)
	v.Set(idx, p.norm()) // fine: methods of the package's own types are inlined
}

func (p point) norm() float32 { return p.x*p.x + p.y*p.y }

//goamp:kernel
func floatAtomicMin(idx amp.Index, v *amp.ArrayView[float32]) {
	v.AtomicMin(idx, 1) // want "no float atomic min or max"
}

//goamp:kernel
func divergentShuffle(t amp.TiledIndex, v *amp.ArrayView[float32]) {
	x := v.At(t.Global)
	if t.Local.At(0) < 16 {
		x = amp.ShuffleDown(t, x, 1) // want "this shuffle is reached only by some threads of a warp"
	}
	v.Set(t.Global, x)
}

//goamp:kernel
func barrierThroughLocal(t amp.TiledIndex, v *amp.ArrayView[float32]) {
	var a [2]int
	a[0] = t.Local.At(0) % 2
	if a[0] == 1 {
		t.Barrier.Wait() // want "reached only by some threads"
	}
}
