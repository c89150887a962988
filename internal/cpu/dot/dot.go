package dot

// Float32 returns the sum of x[i]*y[i] for i < len(x), accumulated in
// float32. It panics if y is shorter than x; elements of y past len(x) are
// not read. The order of the additions is not specified (it depends on the
// kernel this CPU runs), so results may differ from a plain loop in the last
// bits; NaN and Inf propagate as in any sum of products.
func Float32(x, y []float32) float32 {
	if len(y) < len(x) {
		panic(errShortY)
	}
	return float32Kernel(x, y[:len(x)])
}

// Float64 returns the sum of x[i]*y[i] for i < len(x), as Float32 does for
// float32.
func Float64(x, y []float64) float64 {
	if len(y) < len(x) {
		panic(errShortY)
	}
	return float64Kernel(x, y[:len(x)])
}

// errShortY is what Float32 and Float64 panic with when y is shorter than x.
// It is a constant, not a message with the lengths, because formatting one
// would make the two functions too costly for the compiler to inline into
// their callers, and for short vectors a call is a good part of the time.
const errShortY = "dot: y is shorter than x"

// kernel is one implementation of the dot product for element type T. The
// tests and benchmarks walk every kernel this build and CPU have.
type kernel[T float32 | float64] struct {
	Name string
	// Func returns the dot product of x and y, where len(y) == len(x).
	Func func(x, y []T) T
}

// kernelsF32 and kernelsF64 list every kernel this build can run on this
// CPU, the portable one first; the files per architecture append to them.
var (
	kernelsF32 = []kernel[float32]{{Name: "go", Func: portable[float32]}}
	kernelsF64 = []kernel[float64]{{Name: "go", Func: portable[float64]}}
)

// portable is the pure-Go dot product. Four accumulators break the chain of
// dependent additions, so that four products are in flight at once instead
// of one; with the bounds check done once up front (y = y[:len(x)]), the
// loop body is four loads, four multiplies and four adds.
func portable[T float32 | float64](x, y []T) T {
	y = y[:len(x)]
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
		s0 += xs[0] * ys[0]
		s1 += xs[1] * ys[1]
		s2 += xs[2] * ys[2]
		s3 += xs[3] * ys[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}
