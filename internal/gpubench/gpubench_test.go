package gpubench

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/precision"
)

func TestParseLibraries(t *testing.T) {
	for in, want := range map[string][]string{
		"":                     DefaultLibraries,
		" ":                    DefaultLibraries,
		"cublas, NAIVE,":       {Naive, CuBLAS},
		"tiled":                {Tiled16, Tiled32},
		"tiled32,tiled":        {Tiled16, Tiled32},
		"goamp":                {Naive, Tiled16, Tiled32, Reg128, DMMA, MMA, WGMMA},
		"dmma,reg128":          {Reg128, DMMA},
		"reg128,cublas":        {Reg128, CuBLAS},
		"goamp,cublas,tiled16": {Naive, Tiled16, Tiled32, Reg128, DMMA, MMA, WGMMA, CuBLAS},
		"wgmma,mma":            {MMA, WGMMA},
		"mma,cublas":           {MMA, CuBLAS},
		"go":                   {GoSimple, GoTiled16, GoTiled32, GoTiledExact},
		"go,goamp,cublas":      LibraryNames,
		"go-tiled32, naive":    {Naive, GoTiled32},
	} {
		got, err := ParseLibraries(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseLibraries(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"mkl", ",", "naive,tiled8"} {
		if got, err := ParseLibraries(bad); err == nil {
			t.Errorf("ParseLibraries(%q) = %v, want an error", bad, got)
		}
	}
	if _, err := ParseLibraries("openblas"); err == nil || !strings.Contains(err.Error(), "openblas") {
		t.Errorf("the error does not name the library: %v", err)
	}
}

// dmma multiplies float64 only: cases of float32 leave it out, saying why.
func TestDMMAFloat64Only(t *testing.T) {
	l := Library{Name: DMMA, only: cpubench.Float64}
	f32 := cpubench.Case{Type: cpubench.Float32, M: 64, N: 64, K: 64}
	f64 := f32
	f64.Type = cpubench.Float64
	if why := l.leftOut(f32, 0); !strings.Contains(why, "float64 only") {
		t.Errorf("dmma on a float32 case: left out for %q, want \"multiplies float64 only\"", why)
	}
	if why := l.leftOut(f64, 0); why != "" {
		t.Errorf("dmma on a float64 case: left out for %q", why)
	}
}

// A library this GPU cannot run (wgmma off Hopper) measures no case and
// says why under every row; in a reduced precision on Hopper it measures
// its float32 cases.
func TestWGMMANotHere(t *testing.T) {
	f32 := cpubench.Case{Type: cpubench.Float32, M: 64, N: 64, K: 64}
	l := Library{Name: WGMMA, only: cpubench.Float32, precision: "bf16", reducedOnly: true, notHere: "runs on compute capability 9.0 only, not 8.0"}
	if why := l.leftOut(f32, 0); !strings.Contains(why, "9.0 only") {
		t.Errorf("wgmma on 8.0: left out for %q, want the compute capability", why)
	}
	l.notHere = ""
	if why := l.leftOut(f32, 0); why != "" {
		t.Errorf("wgmma on 9.0 in bf16: left out for %q", why)
	}
	l.precision = ""
	if why := l.leftOut(f32, 0); !strings.Contains(why, "reduced precision only") {
		t.Errorf("wgmma in exact arithmetic: left out for %q", why)
	}
}

func TestMedian(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var d []time.Duration
		for _, x := range xs {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	if got := median(ms(5, 1, 3)); got != 3*time.Millisecond {
		t.Errorf("median of 5,1,3 = %v", got)
	}
	if got := median(ms(4, 1, 3, 2)); got != 2500*time.Microsecond {
		t.Errorf("median of 4,1,3,2 = %v", got)
	}
	if got := median(nil); got != 0 {
		t.Errorf("median of nothing = %v", got)
	}
	c := cpubench.Case{Type: cpubench.Float32, N: 1000}
	if got := gflops(c, time.Second); got != 2 {
		t.Errorf("gflops = %g, want 2", got)
	}
}

// TestOperands: the captured operands are the problem's, and writing the
// captured C is what its check sees.
func TestOperands(t *testing.T) {
	c := cpubench.Case{Type: cpubench.Float64, N: 9}
	p := cpubench.NewProblem(c, 1)
	a, b, host := operands[float64](p)
	if len(a) != 81 || len(b) != 81 || len(host) != 81 {
		t.Fatalf("sizes %d %d %d", len(a), len(b), len(host))
	}
	for i := range 9 {
		for j := range 9 {
			var s float64
			for k := range 9 {
				s += a[i*9+k] * b[k*9+j]
			}
			host[i*9+j] = s
		}
	}
	if err := p.Check(); err != nil {
		t.Errorf("the right product written through the captured C fails: %v", err)
	}
	host[40] += 0.5
	if p.Check() == nil {
		t.Error("a wrong element written through the captured C passes")
	}
}

func TestCPU(t *testing.T) {
	r, err := CPU(cpubench.Case{Type: cpubench.Float32, N: 64}, cpubench.Options{Budget: time.Millisecond})
	if err != nil || r.Library != cpubench.Goamp || !(r.GFLOPS > 0) {
		t.Errorf("CPU = %+v, %v", r, err)
	}
}

// device opens GPU 0, or skips (visibly) where there is none.
func device(t *testing.T) *gpu.Device {
	t.Helper()
	dev, err := gpu.Open(0)
	if err != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	return dev
}

// gpuLibraries returns the default libraries the GPU has: all of them, or
// goamp's kernels alone where cuBLAS is missing.
func gpuLibraries(t *testing.T, dev *gpu.Device) []Library {
	t.Helper()
	libs, err := Libraries(dev, DefaultLibraries)
	if err != nil {
		if !IsUnavailable(err) {
			t.Fatal(err)
		}
		t.Logf("SKIP cublas: %v", err)
		names := slices.DeleteFunc(slices.Clone(DefaultLibraries), func(s string) bool { return s == CuBLAS })
		if libs, err = Libraries(dev, names); err != nil {
			t.Fatal(err)
		}
	}
	return libs
}

// TestPrecisionOnGPU: in a reduced precision mma and cuBLAS (cublasGemmEx)
// measure float32 cases, every run checked within the precision's
// tolerance, reg128 beside them exactly; float64 cases leave mma out; a
// run in exact arithmetic leaves mma out too.
func TestPrecisionOnGPU(t *testing.T) {
	dev := device(t)
	for _, prec := range []string{precision.TF32, precision.BF16, precision.FP16} {
		libs, err := LibrariesIn(dev, []string{Reg128, MMA, CuBLAS}, prec)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []cpubench.Case{
			{Type: cpubench.Float32, N: 300},
			{Type: cpubench.Float32, M: 70, N: 130, K: 600, Trans: cpubench.Trans{A: true}},
		} {
			r, err := Measure(dev, c, libs, Options{Reps: 2})
			if err != nil {
				t.Fatalf("%s %s: %v", prec, c, err)
			}
			if len(r.Libs) != 3 || len(r.LeftOut) != 0 {
				t.Errorf("%s %s: %+v", prec, c, r)
			}
		}
		r, err := Measure(dev, cpubench.Case{Type: cpubench.Float64, N: 100}, libs, Options{Reps: 1})
		if err != nil || len(r.LeftOut) != 1 || r.LeftOut[0].Library != MMA {
			t.Errorf("%s float64: %+v, %v; want mma left out", prec, r, err)
		}
	}
	libs, err := LibrariesIn(dev, []string{Reg128, MMA}, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Measure(dev, cpubench.Case{Type: cpubench.Float32, N: 100}, libs, Options{Reps: 1})
	if err != nil || len(r.LeftOut) != 1 || !strings.Contains(r.LeftOut[0].Why, "reduced precision only") {
		t.Errorf("exact: %+v, %v; want mma left out", r, err)
	}
	if _, err := LibrariesIn(dev, []string{MMA}, "fp8"); err == nil {
		t.Error("fp8 accepted")
	}
}

// TestExactTiles: go-tiled-exact measures sizes that are multiples of 16,
// checked, and refuses others before measuring anything.
func TestExactTiles(t *testing.T) {
	dev := device(t)
	libs, err := Libraries(dev, []string{Naive, GoTiledExact})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Measure(dev, cpubench.Case{Type: cpubench.Float64, N: 48}, libs, Options{Reps: 2}); err != nil {
		t.Error(err)
	}
	if _, err := Measure(dev, cpubench.Case{Type: cpubench.Float32, N: 33}, libs, Options{Reps: 1}); err == nil || !strings.Contains(err.Error(), GoTiledExact) {
		t.Errorf("n=33: %v, want an error naming %s", err, GoTiledExact)
	}
}

func TestCheckSizes(t *testing.T) {
	libs := []Library{{Name: "any"}, {Name: "sixteens", Multiple: 16}}
	if err := CheckSizes(libs, []int{16, 1024}); err != nil {
		t.Error(err)
	}
	if err := CheckSizes(libs, []int{16, 1000}); err == nil || !strings.Contains(err.Error(), "sixteens") || !strings.Contains(err.Error(), "1000") {
		t.Errorf("1000: %v", err)
	}
}

// TestMeasureOnGPU runs every library on sizes that do and do not divide
// the tiles, in both types, checked.
func TestMeasureOnGPU(t *testing.T) {
	dev := device(t)
	libs := gpuLibraries(t, dev)
	if info, err := BLAS(dev); err == nil {
		t.Logf("cublas: %v", info)
	}
	cases := cpubench.Cases([]int{1, 33, 100, 256}, cpubench.Types, []cpubench.Trans{{}})
	var progress []int
	opt := Options{Reps: 3, Progress: func(done, total int, _ cpubench.Case) { progress = append(progress, done) }}
	results, err := Run(dev, cases, libs, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(progress, want) {
		t.Errorf("progress %v, want %v", progress, want)
	}
	for _, r := range results {
		// In the libraries' order, dmma (float64 only) left out of float32.
		var names []string
		for _, l := range libs {
			if l.Name != DMMA || r.Case.Type == cpubench.Float64 {
				names = append(names, l.Name)
			}
		}
		if len(r.Libs) != len(names) {
			t.Errorf("%s: %d libraries measured, want %d (%v)", r.Case, len(r.Libs), len(names), names)
		}
		for i, l := range r.Libs {
			if i >= len(names) || l.Library != names[i] || len(l.Kernel) != 3 || len(l.EndToEnd) != 3 ||
				!(l.KernelGFLOPS > 0) || !(l.EndToEndGFLOPS > 0) || l.EndToEndMedian < l.KernelMedian {
				t.Errorf("%s: %+v", r.Case, l)
			}
		}
		if _, ok := r.Lib(Naive); !ok {
			t.Errorf("%s: no naive result", r.Case)
		}
		var line []string
		for _, l := range r.Libs {
			line = append(line, fmt.Sprintf("%s %v/%v", l.Library, l.KernelMedian, l.EndToEndMedian))
		}
		t.Logf("%s kernel/e2e: %s", r.Case, strings.Join(line, ", "))
	}
	// A case with transposes measures the libraries that take them, each
	// run checked against the transposed product, and only those.
	for _, tr := range []cpubench.Trans{{A: true}, {B: true}, {A: true, B: true}} {
		c := cpubench.Case{Type: cpubench.Float32, N: 33, Trans: tr}
		r, err := Measure(dev, c, libs, Options{Reps: 1})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, l := range r.Libs {
			if l.Library != Reg128 && l.Library != CuBLAS { // dmma takes them, but float64 only
				t.Errorf("%s: %s, which takes no transposes, was measured", c, l.Library)
			}
		}
		if _, ok := r.Lib(Reg128); !ok {
			t.Errorf("%s: no reg128 result", c)
		}
	}
	naive := []Library{libs[0]}
	if _, err := Measure(dev, cpubench.Case{Type: cpubench.Float32, N: 8, Trans: cpubench.Trans{A: true}}, naive, Options{}); err == nil {
		t.Error("a transposed case was measured with naive alone")
	}
}

// TestMeasureCatchesWrongResults: a library that drops the last term of
// every sum, and one that writes nothing, are wrong results, not figures.
func TestMeasureCatchesWrongResults(t *testing.T) {
	dev := device(t)
	naive := gpuLibraries(t, dev)[0]
	dropper := Library{Name: "dropper", Multiply: func(ty cpubench.Type, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
		return naive.Multiply(ty, m, n, k-1, a, lda, b, ldb, c, ldc)
	}}
	idle := Library{Name: "idle", Multiply: func(cpubench.Type, int, int, int, cuda.DevicePtr, int, cuda.DevicePtr, int, cuda.DevicePtr, int) (time.Duration, error) {
		return time.Millisecond, nil
	}}
	for _, l := range []Library{dropper, idle} {
		_, err := Measure(dev, cpubench.Case{Type: cpubench.Float32, N: 64}, []Library{naive, l}, Options{Reps: 1})
		if !errors.Is(err, cpubench.ErrWrongResult) || !strings.Contains(err.Error(), l.Name) {
			t.Errorf("%s: %v, want a wrong result naming it", l.Name, err)
		}
	}
}

// TestSpinHidesLaunchOverhead logs each library's kernel time with and
// without the spin: without it the span holds the host's launch overhead
// too, so it can only be longer (up to noise).
func TestSpinHidesLaunchOverhead(t *testing.T) {
	dev := device(t)
	libs := gpuLibraries(t, dev)
	c := cpubench.Case{Type: cpubench.Float32, N: 1024}
	with, err := Measure(dev, c, libs, Options{Reps: 5})
	if err != nil {
		t.Fatal(err)
	}
	without, err := Measure(dev, c, libs, Options{Reps: 5, Spin: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range with.Libs {
		w, wo := l.KernelMedian, without.Libs[i].KernelMedian
		t.Logf("%s %s: kernel %v with the spin, %v without", c, l.Library, w, wo)
		if w > wo+wo/5 {
			t.Errorf("%s: %v with the spin, more than %v without", l.Library, w, wo)
		}
	}
}
