package cpubench

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/cpu/gemm"
	"github.com/goamp/goamp/internal/openblas"
	"github.com/goamp/goamp/internal/reference"
)

func TestCases(t *testing.T) {
	cases := Cases([]int{64, 128}, Types, []Trans{{}, {A: true}})
	var names []string
	for _, c := range cases {
		names = append(names, c.String())
	}
	want := []string{
		"float32/n=64/NN", "float32/n=128/NN", "float32/n=64/TN", "float32/n=128/TN",
		"float64/n=64/NN", "float64/n=128/NN", "float64/n=64/TN", "float64/n=128/TN",
	}
	if !slices.Equal(names, want) {
		t.Errorf("Cases = %v, want %v", names, want)
	}
	if f := (Case{N: 1024}).Flops(); f != 2*1024*1024*1024 {
		t.Errorf("Flops(1024) = %g", f)
	}
	if got := len(Cases(DefaultSizes, Types, AllTrans)); got != 7*2*4 {
		t.Errorf("%d default cases with every transpose, want 56", got)
	}
}

func TestParse(t *testing.T) {
	if s, err := ParseSizes(" 256,64, 64,1024,"); err != nil || !slices.Equal(s, []int{64, 256, 1024}) {
		t.Errorf("ParseSizes = %v, %v", s, err)
	}
	if ty, err := ParseTypes("FLOAT64,float32"); err != nil || !slices.Equal(ty, Types) {
		t.Errorf("ParseTypes = %v, %v", ty, err)
	}
	if tr, err := ParseTrans("tn,NN,nt,TT"); err != nil || fmt.Sprint(tr) != "[NN TT NT TN]" {
		t.Errorf("ParseTrans = %v, %v", tr, err)
	}
	for _, bad := range []struct {
		parse func(string) error
		in    string
	}{
		{func(s string) error { _, err := ParseSizes(s); return err }, "64,x"},
		{func(s string) error { _, err := ParseSizes(s); return err }, "0"},
		{func(s string) error { _, err := ParseSizes(s); return err }, "-64"},
		{func(s string) error { _, err := ParseSizes(s); return err }, "100000"},
		{func(s string) error { _, err := ParseSizes(s); return err }, ","},
		{func(s string) error { _, err := ParseTypes(s); return err }, "int32"},
		{func(s string) error { _, err := ParseTypes(s); return err }, ""},
		{func(s string) error { _, err := ParseTrans(s); return err }, "NX"},
		{func(s string) error { _, err := ParseTrans(s); return err }, "N"},
	} {
		if err := bad.parse(bad.in); err == nil {
			t.Errorf("%q was accepted", bad.in)
		}
	}
}

// product returns op(A)*op(B) rounded to T from the float64 reference.
func product[T Float](tr Trans, n int, a, b []T) []T {
	op := func(x []T, trans bool) []float64 {
		out := make([]float64, n*n)
		for i := range n {
			for j := range n {
				if trans {
					out[i*n+j] = float64(x[j*n+i])
				} else {
					out[i*n+j] = float64(x[i*n+j])
				}
			}
		}
		return out
	}
	want := reference.MatMul(n, n, n, 1, op(a, tr.A), op(b, tr.B), 0, nil)
	c := make([]T, n*n)
	for i, v := range want {
		c[i] = T(v)
	}
	return c
}

// TestCheckerAcceptsRightResults: a product rounded to T, and goamp's own,
// pass for every transpose and sizes from 1 up.
func TestCheckerAcceptsRightResults(t *testing.T) {
	testCheckerAccepts[float32](t, gemm.Float32)
	testCheckerAccepts[float64](t, gemm.Float64)
}

func testCheckerAccepts[T Float](t *testing.T, f GemmFunc[T]) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 17, 67} {
		for _, tr := range AllTrans {
			a, b := reference.RandomSlice[T](r, n*n), reference.RandomSlice[T](r, n*n)
			chk := reference.NewMatMulChecker(tr.A, tr.B, n, n, n, 1, a, b, 0, nil, r)
			if err := chk.Check(product(tr, n, a, b)).Err(); err != nil {
				t.Errorf("%T n=%d %s: the rounded reference fails: %v", T(0), n, tr, err)
			}
			c := make([]T, n*n)
			f(tr.A, tr.B, n, n, n, 1, a, n, b, n, 0, c, n)
			if err := chk.Check(c).Err(); err != nil {
				t.Errorf("%T n=%d %s: goamp's product fails: %v", T(0), n, tr, err)
			}
		}
	}
}

// TestCheckerCatchesWrongResults spoils a right product in the ways kernels
// go wrong and expects every one to fail.
func TestCheckerCatchesWrongResults(t *testing.T) {
	testCheckerCatches[float32](t)
	testCheckerCatches[float64](t)
}

func testCheckerCatches[T Float](t *testing.T) {
	const n = 67
	r := rand.New(rand.NewPCG(3, 4))
	for _, tr := range AllTrans {
		a, b := reference.RandomSlice[T](r, n*n), reference.RandomSlice[T](r, n*n)
		chk := reference.NewMatMulChecker(tr.A, tr.B, n, n, n, 1, a, b, 0, nil, r)
		right := product(tr, n, a, b)
		spoil := map[string]func(c []T){
			"last element off by 1%":  func(c []T) { c[n*n-1] *= 1.01 },
			"first element off by 1%": func(c []T) { c[0] *= 1.01 },
			"interior element zero":   func(c []T) { c[30*n+40] = 0 },
			"interior element NaN":    func(c []T) { c[31*n+41] = T(math.NaN()) },
			"interior element +Inf":   func(c []T) { c[29*n+39] = T(math.Inf(1)) },
			"a 6x16 block zero": func(c []T) {
				for i := 12; i < 18; i++ {
					clear(c[i*n+32 : i*n+48])
				}
			},
			"scaled by 1+1e-3": func(c []T) {
				for i := range c {
					c[i] *= 1 + 1e-3
				}
			},
			"transposed": func(c []T) {
				for i := range n {
					for j := range i {
						c[i*n+j], c[j*n+i] = c[j*n+i], c[i*n+j]
					}
				}
			},
			"other transpose of A": func(c []T) { copy(c, product(Trans{!tr.A, tr.B}, n, a, b)) },
			"other transpose of B": func(c []T) { copy(c, product(Trans{tr.A, !tr.B}, n, a, b)) },
			"last k term dropped": func(c []T) {
				a2 := slices.Clone(a)
				for i := range n { // column k-1 of op(A) is zero
					if tr.A {
						a2[(n-1)*n+i] = 0
					} else {
						a2[i*n+n-1] = 0
					}
				}
				copy(c, product(tr, n, a2, b))
			},
		}
		for name, f := range spoil {
			c := slices.Clone(right)
			f(c)
			if err := chk.Check(c).Err(); err == nil {
				t.Errorf("%T %s: %s passed the check", T(0), tr, name)
			}
		}
	}
}

// recorder is a fake library that multiplies right (with goamp) and records
// its name each time it runs, so that tests can see the order of calls.
func recorder(name string, calls *[]string, delay time.Duration) Library {
	return Library{
		Name: name,
		Sgemm: func(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
			*calls = append(*calls, name)
			time.Sleep(delay)
			gemm.Float32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		},
		Dgemm: func(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
			*calls = append(*calls, name)
			time.Sleep(delay)
			gemm.Float64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		},
	}
}

// TestMeasureInterleaves: one warm-up each, then the libraries take turns,
// rep by rep where a turn is shorter than a rep, in batches where longer.
func TestMeasureInterleaves(t *testing.T) {
	var calls []string
	libs := []Library{recorder("x", &calls, 0), recorder("y", &calls, 0), recorder("z", &calls, 0)}
	c := Case{Type: Float64, N: 40, Trans: Trans{true, false}}
	if _, err := Measure(c, libs, Options{Budget: time.Nanosecond, MinReps: 3, MaxReps: 3, Turn: time.Hour, LeadIn: time.Nanosecond, Turns: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(calls, ""), "xyzxxxyyyzzz"; got != want {
		t.Errorf("turns of an hour: calls %s, want %s", got, want)
	}
	// Reps that would all fit in one turn are spread over Turns turns.
	calls = nil
	if _, err := Measure(c, libs[:2], Options{Budget: time.Hour, MinReps: 3, MaxReps: 6, Turn: time.Hour, LeadIn: time.Nanosecond, Turns: 3}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(calls, ""), "xy"+strings.Repeat("xxyy", 3); got != want {
		t.Errorf("six reps in three turns: calls %s, want %s", got, want)
	}
	calls = nil
	res, err := Measure(c, libs, Options{Budget: time.Nanosecond, MinReps: 3, MaxReps: 3, Turn: time.Nanosecond, LeadIn: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("xyz", 4) // a warm-up round and three timed rounds
	if got := strings.Join(calls, ""); got != want {
		t.Errorf("turns of a nanosecond: calls %s, want %s", got, want)
	}
	calls = nil
	if _, err := Measure(c, libs, Options{Budget: time.Nanosecond, MinReps: 2, MaxReps: 2, Turn: time.Nanosecond, LeadIn: time.Hour}); err != nil {
		t.Fatal(err)
	}
	// With lead-ins: a warm-up round, then each turn a lead-in and a timed rep.
	if got, want := strings.Join(calls, ""), "xyzxxyyzzxxyyzz"; got != want {
		t.Errorf("turns with lead-ins: calls %s, want %s", got, want)
	}
	for i, l := range res.Libs {
		if l.Library != libs[i].Name || len(l.Times) != 3 || l.Median <= 0 || !(l.GFLOPS > 0) {
			t.Errorf("result %d: %+v", i, l)
		}
		if g, ok := res.GFLOPS(l.Library); !ok || g != l.GFLOPS {
			t.Errorf("GFLOPS(%s) = %g, %v", l.Library, g, ok)
		}
	}
}

// TestMeasureBudget: a fast library runs until it has its budget, up to
// MaxReps, while a slow one (past SlowRep) runs once, its warm-up counting.
func TestMeasureBudget(t *testing.T) {
	var calls []string
	libs := []Library{recorder("fast", &calls, 0), recorder("slow", &calls, 20*time.Millisecond)}
	res, err := Measure(Case{Type: Float32, N: 16}, libs, Options{Budget: 5 * time.Millisecond, MaxReps: 50, SlowRep: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if fast := res.Libs[0]; len(fast.Times) < 3 || len(fast.Times) > 50 {
		t.Errorf("fast library ran %d times", len(fast.Times))
	}
	if n := strings.Count(strings.Join(calls, " "), "slow"); n != 1 || len(res.Libs[1].Times) != 1 {
		t.Errorf("slow library ran %d times with %d timed", n, len(res.Libs[1].Times))
	}
}

// TestMeasureRefusesWrongResults: a library that writes nothing, or writes
// the wrong thing, is an error naming it, not a figure.
func TestMeasureRefusesWrongResults(t *testing.T) {
	var calls []string
	good := recorder("good", &calls, 0)
	lazy := Library{Name: "lazy",
		Sgemm: func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) {},
		Dgemm: func(bool, bool, int, int, int, float64, []float64, int, []float64, int, float64, []float64, int) {},
	}
	// sloppy multiplies right, then gets the last element wrong from the
	// second call on: only the check of every repetition catches it.
	runs := 0
	sloppy := Library{Name: "sloppy", Sgemm: good.Sgemm,
		Dgemm: func(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
			good.Dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			if runs++; runs > 1 {
				c[len(c)-1] += 1
			}
		},
	}
	for _, bad := range []Library{lazy, sloppy} {
		_, err := Measure(Case{Type: Float64, N: 33}, []Library{good, bad}, Options{Budget: time.Millisecond})
		if !errors.Is(err, ErrWrongResult) || !strings.Contains(err.Error(), bad.Name) {
			t.Errorf("%s: err = %v", bad.Name, err)
		}
	}
}

func TestRunProgress(t *testing.T) {
	var calls, progress []string
	cases := Cases([]int{8, 9}, []Type{Float32}, []Trans{{}})
	var each []Case
	results, err := Run(cases, []Library{recorder("x", &calls, 0)}, Options{Budget: time.Microsecond, MaxReps: 3,
		Progress: func(done, total int, c Case) { progress = append(progress, fmt.Sprintf("%d/%d %s", done, total, c)) },
	}, func(r Result) { each = append(each, r.Case) })
	if err != nil || len(results) != 2 || !slices.Equal(each, cases) {
		t.Fatalf("Run: %v, %d results, each %v", err, len(results), each)
	}
	want := []string{"0/2 float32/n=8/NN", "1/2 float32/n=9/NN", "2/2 float32/n=9/NN"}
	if !slices.Equal(progress, want) {
		t.Errorf("progress %q, want %q", progress, want)
	}
}

// TestLibraries runs every library this machine has through a checked
// multiply of each type and transpose. Without OpenBLAS it says so and
// tests the others.
func TestLibraries(t *testing.T) {
	libs, missing := Libraries()
	var names []string
	for _, l := range libs {
		names = append(names, l.Name)
	}
	switch {
	case missing == nil && slices.Equal(names, LibraryNames):
		t.Logf("OpenBLAS: %s", OpenBLASConfig())
	case missing != nil && errors.Is(missing, openblas.ErrUnavailable) && slices.Equal(names, LibraryNames[:2]):
		t.Logf("SKIP openblas: %v", missing)
	default:
		t.Fatalf("Libraries() = %v, %v", names, missing)
	}
	for _, c := range Cases([]int{1, 31, 70}, Types, AllTrans) {
		p := NewProblem(c, 7)
		for _, lib := range libs {
			p.Poison()
			p.Run(lib)
			if err := p.Check(); err != nil {
				t.Errorf("%s %s: %v", lib.Name, c, err)
			}
		}
	}
	if k := KernelNames(); !strings.Contains(k, "float32") || !strings.Contains(k, "float64") {
		t.Errorf("KernelNames() = %q", k)
	}
}

// TestSettle: Settle waits while the process keeps a core busy, and not
// when it is idle.
func TestSettle(t *testing.T) {
	start := time.Now()
	Settle()
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Settle took %v on an idle process", d)
	}
	// Settle must wait while a goroutine spins. On a loaded machine (CI runs
	// test binaries side by side on 2 cores) the OS can pause the spinner
	// for longer than Settle's quiet spell, and Settle rightly sees a quiet
	// process; so the spinner gets ten tries (three all missed once, with a
	// build running beside CI's tests), and one wait is enough.
	var waits []time.Duration
	for range 10 {
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
		time.AfterFunc(100*time.Millisecond, func() { close(stop) })
		start = time.Now()
		Settle()
		d := time.Since(start)
		<-stop
		if d >= 50*time.Millisecond {
			return
		}
		waits = append(waits, d)
	}
	t.Errorf("Settle returned after %v while a goroutine spun for 100ms", waits)
}

// TestShapes: products of any shape parse, name themselves and count their
// flops; a square shape is the case Cases gives for its size.
func TestShapes(t *testing.T) {
	shapes, err := ParseShapes(" 64x8192x8192, 8192X8192x64,64x8192x8192,5x5x5,")
	want := []Shape{{64, 8192, 8192}, {8192, 8192, 64}, {5, 5, 5}}
	if err != nil || !slices.Equal(shapes, want) {
		t.Fatalf("ParseShapes = %v, %v; want %v", shapes, err, want)
	}
	cases := ShapeCases(shapes, Types, []Trans{{}, {B: true}})
	var names []string
	for _, c := range cases[:6] {
		names = append(names, c.String())
	}
	if wantNames := []string{"float32/64x8192x8192/NN", "float32/8192x8192x64/NN", "float32/n=5/NN",
		"float32/64x8192x8192/NT", "float32/8192x8192x64/NT", "float32/n=5/NT"}; !slices.Equal(names, wantNames) {
		t.Errorf("ShapeCases = %q, want %q", names, wantNames)
	}
	if len(cases) != 12 {
		t.Errorf("%d cases, want 12", len(cases))
	}
	if sq := cases[2]; sq != (Case{Type: Float32, N: 5}) || !sq.Square() || sq.Size() != "5" {
		t.Errorf("the square shape's case is %+v (size %q)", sq, sq.Size())
	}
	c := cases[0]
	if m, n, k := c.Dims(); m != 64 || n != 8192 || k != 8192 || c.Square() || c.Size() != "64x8192x8192" || c.Shape() != shapes[0] {
		t.Errorf("%+v: dims %d %d %d, size %q", c, m, n, k, c.Size())
	}
	if f := c.Flops(); f != 2*64*8192*8192 {
		t.Errorf("Flops(64x8192x8192) = %g", f)
	}
	if !slices.Equal(Cases([]int{7, 9}, Types, AllTrans), ShapeCases([]Shape{Square(7), Square(9)}, Types, AllTrans)) {
		t.Error("Cases differs from ShapeCases of square shapes")
	}
	// A square case with M and K set reads as one without.
	if c := (Case{Type: Float64, M: 8, N: 8, K: 8}); c.String() != "float64/n=8/NN" || c.Size() != "8" {
		t.Errorf("%+v reads %q, %q", c, c.String(), c.Size())
	}
	for _, bad := range []string{"", ",", "64x64", "64x64x64x64", "64x0x64", "64x-1x64", "axbxc", "64x64x", "2000000x1x1", "1048576x1048576x1"} {
		if s, err := ParseShapes(bad); err == nil {
			t.Errorf("ParseShapes(%q) = %v, want an error", bad, s)
		} else if bad != "" && bad != "," && !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseShapes(%q): %v does not name the shape", bad, err)
		}
	}
}

// TestSquareOperands pins the operands of square cases: products of other
// shapes must not change what the CPU benchmark has always measured.
func TestSquareOperands(t *testing.T) {
	hash := func(c Case) uint64 {
		h := fnv.New64a()
		switch q := NewProblem(c, 1).impl.(type) {
		case *problem[float32]:
			for _, v := range slices.Concat(q.a, q.b) {
				fmt.Fprint(h, math.Float32bits(v), ",")
			}
		case *problem[float64]:
			for _, v := range slices.Concat(q.a, q.b) {
				fmt.Fprint(h, math.Float64bits(v), ",")
			}
		}
		return h.Sum64()
	}
	// Taken before Case had M and K.
	for c, want := range map[Case]uint64{
		{Type: Float32, N: 17}:                       0x3127486862e17b9d,
		{Type: Float64, N: 9, Trans: Trans{A: true}}: 0xeacb5571c90f53b0,
	} {
		if got := hash(c); got != want {
			t.Errorf("%s: operands hash to %#x, want %#x", c, got, want)
		}
	}
}

// TestNonSquareProblems: products of other shapes run and check on every
// CPU library in every transpose, and a wrong one fails.
func TestNonSquareProblems(t *testing.T) {
	libs, _ := Libraries()
	for _, s := range []Shape{{1, 33, 7}, {33, 1, 7}, {40, 24, 1}, {17, 29, 65}} {
		for _, c := range ShapeCases([]Shape{s}, Types, AllTrans) {
			p := NewProblem(c, 3)
			for _, lib := range libs {
				p.Poison()
				p.Run(lib)
				if err := p.Check(); err != nil {
					t.Errorf("%s %s: %v", lib.Name, c, err)
				}
			}
		}
	}
	c := Case{Type: Float64, M: 17, N: 29, K: 65, Trans: Trans{A: true}}
	res, err := Measure(c, libs[:1], Options{Budget: time.Microsecond, MaxReps: 3})
	if err != nil || len(res.Libs) != 1 || res.Libs[0].GFLOPS != c.Flops()/res.Libs[0].Median.Seconds()/1e9 {
		t.Errorf("Measure(%s) = %+v, %v", c, res, err)
	}
	// A library that drops the last term of every sum is caught.
	dropper := Library{Name: "dropper", Sgemm: gemm.Float32,
		Dgemm: func(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
			gemm.Float64(ta, tb, m, n, k-1, alpha, a, lda, b, ldb, beta, c, ldc)
		}}
	if _, err := Measure(c, []Library{dropper}, Options{Budget: time.Microsecond}); !errors.Is(err, ErrWrongResult) {
		t.Errorf("a product without its last term: %v, want a wrong result", err)
	}
}
