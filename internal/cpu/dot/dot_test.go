package dot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"

	"github.com/goamp/goamp/internal/reference"
)

// testLengths covers every way a length splits into main-loop trips, whole
// vectors and a scalar tail (0 to 70 spans more than two trips of the
// float32 loop), plus long vectors where rounding error has room to grow.
func testLengths() []int {
	var ns []int
	for n := range 71 {
		ns = append(ns, n)
	}
	return append(ns, 1000, 100003)
}

// kernelsOf returns every kernel of this build for T, and the exported
// function as one more, so that its dispatch is tested too.
func kernelsOf[T float32 | float64]() []kernel[T] {
	var ks []kernel[T]
	switch p := any(&ks).(type) {
	case *[]kernel[float32]:
		*p = append(append(*p, kernelsF32...), kernel[float32]{Name: "Float32", Func: Float32})
	case *[]kernel[float64]:
		*p = append(append(*p, kernelsF64...), kernel[float64]{Name: "Float64", Func: Float64})
	}
	return ks
}

func TestKernels(t *testing.T) {
	t.Run("float32", testKernels[float32])
	t.Run("float64", testKernels[float64])
}

// testKernels runs every kernel on the same random vectors and holds each
// to the float64 reference within reference.Tolerance, and to each other
// within twice that.
func testKernels[T float32 | float64](t *testing.T) {
	ks := kernelsOf[T]()
	if len(ks) < 2 {
		t.Fatal("no kernels")
	}
	t.Logf("kernels: %v", names(ks))
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range testLengths() {
		// Offsets of one element make the slices start off any alignment
		// the allocator gives; y runs past x with NaN, which must not be read.
		xs := reference.RandomSlice[T](r, n+1)
		ys := reference.RandomSlice[T](r, n+2)
		x, y := xs[1:], ys[1:]
		y[n] = T(math.NaN())
		want, bound := reference.Dot(reference.ToFloat64(x), reference.ToFloat64(y[:n]))
		tol := reference.Tolerance[T](n)
		got := make([]T, len(ks))
		for i, k := range ks {
			got[i] = k.Func(x, y[:n])
			if k.Name == "Float32" || k.Name == "Float64" {
				got[i] = k.Func(x, y) // the longer y: the rest is not read
			}
			if e := reference.MaxErr(got[i:i+1], []float64{want}, []float64{bound}); e > tol {
				t.Errorf("%s n=%d: got %v, want %v: error %.3g > tolerance %.3g", k.Name, n, got[i], want, e, tol)
			}
		}
		for i := 1; i < len(ks); i++ {
			if d := math.Abs(float64(got[i]) - float64(got[0])); d > 2*tol*bound {
				t.Errorf("n=%d: %s gives %v and %s %v: they differ by %.3g, more than twice the tolerance", n, ks[0].Name, got[0], ks[i].Name, got[i], d)
			}
		}
	}
}

func names[T float32 | float64](ks []kernel[T]) []string {
	var s []string
	for _, k := range ks {
		s = append(s, k.Name)
	}
	return s
}

// TestExact uses small integers, whose products and sums are exact in
// either type whatever the order, so every kernel must agree to the bit.
func TestExact(t *testing.T) {
	t.Run("float32", testExact[float32])
	t.Run("float64", testExact[float64])
}

func testExact[T float32 | float64](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range testLengths() {
		x, y := make([]T, n), make([]T, n)
		want := 0
		for i := range x {
			a, b := r.IntN(17)-8, r.IntN(17)-8
			x[i], y[i] = T(a), T(b)
			want += a * b
		}
		for _, k := range kernelsOf[T]() {
			if got := k.Func(x, y); got != T(want) {
				t.Errorf("%s n=%d: got %v, want %d", k.Name, n, got, want)
			}
		}
	}
}

// TestSpecial puts NaN or infinities at every position of short vectors, so
// that each lands once in the main loop, the whole-vector loop and the
// scalar tail, and checks that it reaches the result.
func TestSpecial(t *testing.T) {
	t.Run("float32", testSpecial[float32])
	t.Run("float64", testSpecial[float64])
}

func testSpecial[T float32 | float64](t *testing.T) {
	nan, inf := T(math.NaN()), T(math.Inf(1))
	cases := []struct {
		name   string
		xp, yp T    // x[p] and y[p]
		other  bool // also set x[q] = -Inf, y[q] = 1 for another q
		want   float64
	}{
		{"NaN in x", nan, 1, false, math.NaN()},
		{"NaN in x times 0", nan, 0, false, math.NaN()},
		{"NaN in y", 1, nan, false, math.NaN()},
		{"+Inf", inf, 1, false, math.Inf(1)},
		{"-Inf", inf, -1, false, math.Inf(-1)},
		{"Inf times 0", inf, 0, false, math.NaN()},
		{"+Inf and -Inf", inf, 1, true, math.NaN()},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range cases {
		for n := 1; n <= 70; n++ {
			for p := range n {
				x := reference.RandomSlice[T](r, n)
				y := reference.RandomSlice[T](r, n)
				x[p], y[p] = c.xp, c.yp
				if c.other {
					if n == 1 {
						continue
					}
					q := (p + 1 + r.IntN(n-1)) % n
					x[q], y[q] = -inf, 1
				}
				for _, k := range kernelsOf[T]() {
					got := float64(k.Func(x, y))
					if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && got != c.want {
						t.Errorf("%s, %s at %d of %d: got %v, want %v", k.Name, c.name, p, n, got, c.want)
					}
				}
			}
		}
	}
}

func TestShortY(t *testing.T) {
	check := func(name string, f func()) {
		t.Helper()
		defer func() {
			if v := recover(); v != errShortY {
				t.Errorf("%s with len(y) < len(x) panicked with %v, want %q", name, v, errShortY)
			}
		}()
		f()
	}
	check("Float32", func() { Float32(make([]float32, 3), make([]float32, 2)) })
	check("Float64", func() { Float64(make([]float64, 3), nil) })
	// y longer than x is fine, and so are empty and nil vectors.
	if got := Float64(nil, nil); got != 0 {
		t.Errorf("Float64(nil, nil) = %v", got)
	}
	if got := Float32([]float32{2}, []float32{3, 4}); got != 6 {
		t.Errorf("Float32([2], [3 4]) = %v, want 6", got)
	}
}

// BenchmarkDot compares the dot products of this package (the kernel the
// exported functions pick, and the portable twin) with gonum's native Sdot
// and Ddot (assembly on amd64) on the same vectors. The vectors are random,
// never zeros, and every result is checked against the float64 reference
// once before the timing starts.
//
//	go test -run '^$' -bench BenchmarkDot ./internal/cpu/dot
func BenchmarkDot(b *testing.B) {
	impl := gonum.Implementation{}
	for _, n := range []int{1e3, 1e5, 1e6} {
		r := rand.New(rand.NewPCG(7, uint64(n)))
		x32, y32 := reference.RandomSlice[float32](r, n), reference.RandomSlice[float32](r, n)
		x64, y64 := reference.RandomSlice[float64](r, n), reference.RandomSlice[float64](r, n)
		runs32 := []struct {
			lib string
			f   func() float32
		}{
			{"goamp", func() float32 { return Float32(x32, y32) }},
			{"goamp-go", func() float32 { return portable(x32, y32) }},
			{"gonum", func() float32 { return impl.Sdot(n, x32, 1, y32, 1) }},
		}
		runs64 := []struct {
			lib string
			f   func() float64
		}{
			{"goamp", func() float64 { return Float64(x64, y64) }},
			{"goamp-go", func() float64 { return portable(x64, y64) }},
			{"gonum", func() float64 { return impl.Ddot(n, x64, 1, y64, 1) }},
		}
		for _, run := range runs32 {
			b.Run(fmt.Sprintf("float32/n=%d/%s", n, run.lib), func(b *testing.B) {
				checkBench(b, run.f(), x32, y32)
				benchLoop(b, n, 4, run.f)
			})
		}
		for _, run := range runs64 {
			b.Run(fmt.Sprintf("float64/n=%d/%s", n, run.lib), func(b *testing.B) {
				checkBench(b, run.f(), x64, y64)
				benchLoop(b, n, 8, run.f)
			})
		}
	}
}

func checkBench[T float32 | float64](b *testing.B, got T, x, y []T) {
	b.Helper()
	want, bound := reference.Dot(reference.ToFloat64(x), reference.ToFloat64(y))
	if e := reference.MaxErr([]T{got}, []float64{want}, []float64{bound}); e > reference.Tolerance[T](len(x)) {
		b.Fatalf("got %v, want %v (error %.3g)", got, want, e)
	}
}

// sink keeps the compiler from dropping the benchmarked calls.
var sink float64

func benchLoop[T float32 | float64](b *testing.B, n, size int, f func() T) {
	b.SetBytes(int64(2 * n * size))
	var s T
	for b.Loop() {
		s += f()
	}
	sink = float64(s)
	b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
