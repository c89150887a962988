package gpubench

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cuda"
)

// fakeMultiply is a MultiplyFunc for tests that never reach a GPU.
func fakeMultiply(cpubench.Type, int, int, int, cuda.DevicePtr, int, cuda.DevicePtr, int, cuda.DevicePtr, int) (time.Duration, error) {
	return time.Millisecond, nil
}

// TestLeftOut: a case leaves out the libraries that cannot take it, each
// with its reason, and is an error, before any GPU work, when none can.
func TestLeftOut(t *testing.T) {
	plain := Library{Name: "plain", Multiply: fakeMultiply, maxM: 100}
	gemm := Library{Name: "gemm", Multiply: fakeMultiply, Gemm: func(cpubench.Type, cpubench.Trans, int, int, int, cuda.DevicePtr, int, cuda.DevicePtr, int, cuda.DevicePtr, int) (time.Duration, error) {
		return time.Millisecond, nil
	}}
	batched := gemm
	batched.Name = "batched"
	batched.Batch = func(cpubench.Type, cpubench.Trans, int, int, int, int, cuda.DevicePtr, int, int, cuda.DevicePtr, int, int, cuda.DevicePtr, int, int) (time.Duration, error) {
		return time.Millisecond, nil
	}
	for _, c := range []struct {
		c     cpubench.Case
		batch int
		want  []string // the reasons of plain, gemm and batched; "" taken
	}{
		{cpubench.Case{Type: cpubench.Float32, N: 64}, 0, []string{"", "", ""}},
		{cpubench.Case{Type: cpubench.Float32, N: 64, Trans: cpubench.Trans{B: true}}, 0, []string{"takes no transposes", "", ""}},
		{cpubench.Case{Type: cpubench.Float32, N: 64}, 1, []string{"no batched path", "no batched path", ""}},
		{cpubench.Case{Type: cpubench.Float32, M: 101, N: 8, K: 8}, 0, []string{"takes at most 100 rows of C", "", ""}},
		{cpubench.Case{Type: cpubench.Float32, M: 100, N: 8, K: 8}, 0, []string{"", "", ""}},
	} {
		var got []string
		for _, l := range []Library{plain, gemm, batched} {
			got = append(got, l.leftOut(c.c, c.batch))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s batch %d: left out %q, want %q", c.c, c.batch, got, c.want)
		}
	}
	// Measure refuses a case no library takes, and a batch out of range,
	// before it looks at the device (nil here).
	_, err := Measure(nil, cpubench.Case{Type: cpubench.Float64, N: 8, Trans: cpubench.Trans{A: true}}, []Library{plain}, Options{})
	if err == nil || !strings.Contains(err.Error(), "plain takes no transposes") {
		t.Errorf("a transposed case on plain alone: %v", err)
	}
	_, err = Measure(nil, cpubench.Case{Type: cpubench.Float32, N: 8}, []Library{plain, gemm}, Options{Batch: 4})
	if err == nil || !strings.Contains(err.Error(), "batch=4") || !strings.Contains(err.Error(), "gemm no batched path") {
		t.Errorf("a batch without a batched library: %v", err)
	}
	for _, b := range []int{-1, MaxBatch + 1} {
		if _, err := Measure(nil, cpubench.Case{Type: cpubench.Float32, N: 8}, []Library{batched}, Options{Batch: b}); err == nil || !strings.Contains(err.Error(), "batch") {
			t.Errorf("batch %d: %v", b, err)
		}
	}
	// A library named with a multiple refuses a shape before the device
	// is touched, as it refuses sizes.
	exact := Library{Name: "sixteens", Multiply: fakeMultiply, Multiple: 16}
	if _, err := Measure(nil, cpubench.Case{Type: cpubench.Float32, M: 32, N: 16, K: 24}, []Library{exact}, Options{}); err == nil || !strings.Contains(err.Error(), "32x16x24") {
		t.Errorf("32x16x24 on a library of multiples of 16: %v", err)
	}
}

func TestCheckShapes(t *testing.T) {
	libs := []Library{{Name: "any"}, {Name: "sixteens", Multiple: 16}}
	if err := CheckShapes(libs, []cpubench.Shape{{M: 16, N: 32, K: 48}, cpubench.Square(64)}); err != nil {
		t.Error(err)
	}
	for s, want := range map[cpubench.Shape]string{
		{M: 16, N: 32, K: 40}: "M, N and K are multiples of 16, not 16x32x40",
		cpubench.Square(40):   "sizes that are multiples of 16, not 40",
	} {
		if err := CheckShapes(libs, []cpubench.Shape{s}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "sixteens") {
			t.Errorf("%v: %v, want an error naming sixteens and saying %q", s, err, want)
		}
	}
}

func TestResultFlops(t *testing.T) {
	c := cpubench.Case{Type: cpubench.Float32, M: 64, N: 128, K: 256}
	if f := (Result{Case: c}).Flops(); f != 2*64*128*256 {
		t.Errorf("one product: %g", f)
	}
	if f := (Result{Case: c, Batch: 3}).Flops(); f != 3*2*64*128*256 {
		t.Errorf("a batch of 3: %g", f)
	}
	if got := caseName(c, 3); got != "float32/64x128x256/NN/batch=3" {
		t.Errorf("caseName = %q", got)
	}
}

func TestParseDotKernels(t *testing.T) {
	for in, want := range map[string][]string{
		"":                DotKernelNames,
		"TILED, onepass,": {DotOnePass, DotTiled},
		"warp":            {DotWarp},
	} {
		if got, err := ParseDotKernels(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseDotKernels(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{",", "copy", "reg128", "warp,shuffle"} {
		if got, err := ParseDotKernels(bad); err == nil {
			t.Errorf("ParseDotKernels(%q) = %v, want an error", bad, got)
		}
	}
}

func TestParseDotSizes(t *testing.T) {
	got, err := ParseDotSizes(" 2^20, 1000,2^0,1048576, 2^30")
	if want := []int{1, 1000, 1 << 20, 1 << 30}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseDotSizes = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", ",", "0", "-4", "2^31", "2^-1", "2^", "2^x", "1073741825", "3^4", "2^99"} {
		if got, err := ParseDotSizes(bad); err == nil {
			t.Errorf("ParseDotSizes(%q) = %v, want an error", bad, got)
		}
	}
	for n, want := range map[int]string{1 << 28: "2^28", 1: "2^0", 1000: "1000", 3 << 20: "3145728"} {
		if got := FormatDotSize(n); got != want {
			t.Errorf("FormatDotSize(%d) = %q, want %q", n, got, want)
		}
	}
	cases := DotCases([]int{1 << 20, 1 << 22}, cpubench.Types)
	var names []string
	for _, c := range cases {
		names = append(names, c.String())
	}
	if want := []string{"float32/n=2^20", "float32/n=2^22", "float64/n=2^20", "float64/n=2^22"}; !slices.Equal(names, want) {
		t.Errorf("DotCases = %q, want %q", names, want)
	}
	if b := (DotCase{Type: cpubench.Float64, N: 1000}).Bytes(); b != 16000 {
		t.Errorf("Bytes = %g, want 16000", b)
	}
}

// TestDotCheck: the sums a right kernel gives pass, for float32 in either
// accumulation, and a wrong or NaN one fails; a kernel that says it sums
// float32 in float64 is held to that.
func TestDotCheck(t *testing.T) {
	wide, narrow := DotKernel{Name: "wide", Wide: true}, DotKernel{Name: "narrow"}
	for _, n := range []int{1, 7, 1000, 1 << 16} {
		p := newDotProblem[float32](DotCase{Type: cpubench.Float32, N: n}, 1)
		var s32 float32
		var s64 float64
		for i := range p.x {
			s32 += p.x[i] * p.y[i]
			s64 += float64(p.x[i]) * float64(p.y[i])
		}
		if err := p.check(wide, float64(float32(s64))); err != nil {
			t.Errorf("n=%d: float64 sum rounded to float32, wide: %v", n, err)
		}
		for _, got := range []float64{float64(float32(s64)), float64(s32)} {
			if err := p.check(narrow, got); err != nil {
				t.Errorf("n=%d: %v, narrow: %v", n, got, err)
			}
		}
		off := p.want + 0.01*p.mag
		for _, got := range []float64{off, math.NaN(), math.Inf(1)} {
			for _, k := range []DotKernel{wide, narrow} {
				if err := p.check(k, got); !errors.Is(err, cpubench.ErrWrongResult) {
					t.Errorf("n=%d %s: %v passed (%v)", n, k.Name, got, err)
				}
			}
		}
		// The largest term dropped: within float32's tolerance of a long
		// float32 sum, far outside one rounding of a float64 one.
		if n == 1<<16 {
			big := 0.0
			for i := range p.x {
				if t := float64(p.x[i]) * float64(p.y[i]); math.Abs(t) > math.Abs(big) {
					big = t
				}
			}
			if err := p.check(wide, float64(float32(s64-big))); err == nil {
				t.Errorf("a sum without its largest term (%g) passed the wide check", big)
			}
		}
	}
	p := newDotProblem[float64](DotCase{Type: cpubench.Float64, N: 100}, 1)
	if err := p.check(wide, p.want*(1+1e-15)); err != nil {
		t.Error(err)
	}
	if err := p.check(narrow, p.want+1e-9*p.mag); err == nil {
		t.Error("float64 off by 1e-9 of the magnitudes passed")
	}
	// The same case draws the same vectors; another seed, others.
	q := newDotProblem[float64](DotCase{Type: cpubench.Float64, N: 100}, 1)
	r := newDotProblem[float64](DotCase{Type: cpubench.Float64, N: 100}, 2)
	if !slices.Equal(p.x, q.x) || slices.Equal(p.x, r.x) {
		t.Error("the vectors do not follow the seed")
	}
}

// TestShapesOnGPU runs products of other shapes, skinny ones among them,
// on every library that takes them, with and without transposes, checked:
// each case measures the libraries that take it and names the others.
func TestShapesOnGPU(t *testing.T) {
	dev := device(t)
	libs := gpuLibraries(t, dev)
	shapes := []cpubench.Shape{{M: 1, N: 33, K: 7}, {M: 33, N: 1, K: 70}, {M: 64, N: 300, K: 4096}, {M: 300, N: 64, K: 33}, {M: 200, N: 150, K: 1}}
	cases := cpubench.ShapeCases(shapes, cpubench.Types, []cpubench.Trans{{}, {A: true}, {A: true, B: true}})
	results, err := Run(dev, cases, libs, Options{Reps: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if len(r.Libs)+len(r.LeftOut) != len(libs) {
			t.Errorf("%s: %d measured and %d left out of %d libraries", r.Case, len(r.Libs), len(r.LeftOut), len(libs))
		}
		for _, l := range r.Libs {
			if !(l.KernelGFLOPS > 0) || !(l.EndToEndGFLOPS > 0) {
				t.Errorf("%s %s: %+v", r.Case, l.Library, l)
			}
			if r.Case.Trans != (cpubench.Trans{}) && l.Library != Reg128 && l.Library != DMMA && l.Library != CuBLAS {
				t.Errorf("%s: %s, which takes no transposes, was measured", r.Case, l.Library)
			}
		}
		for _, o := range r.LeftOut {
			if o.Library == DMMA && r.Case.Type != cpubench.Float64 && o.Why == "multiplies float64 only" {
				continue
			}
			if r.Case.Trans == (cpubench.Trans{}) || o.Why != "takes no transposes" {
				t.Errorf("%s: %s left out: %s", r.Case, o.Library, o.Why)
			}
		}
	}
}

// TestBatchesOnGPU runs strided batches on reg128 and cuBLAS, checked
// product by product, the other libraries left out; a library that
// multiplies only the first product, or reads the first A for every
// product, is a wrong result naming a product.
func TestBatchesOnGPU(t *testing.T) {
	dev := device(t)
	libs := gpuLibraries(t, dev)
	var reg Library
	for _, l := range libs {
		if l.Name == Reg128 {
			reg = l
		}
	}
	for _, batch := range []int{1, 3} {
		// 64x128x2048: too few tiles of C to fill the GPU, so reg128 splits
		// K; 33x70x5 in both types and a transpose.
		for _, c := range []cpubench.Case{
			{Type: cpubench.Float32, M: 64, N: 128, K: 2048},
			{Type: cpubench.Float64, M: 33, N: 70, K: 5, Trans: cpubench.Trans{A: true}},
			{Type: cpubench.Float32, N: 100, Trans: cpubench.Trans{B: true}},
		} {
			r, err := Measure(dev, c, libs, Options{Reps: 2, Batch: batch})
			if err != nil {
				t.Fatalf("%s batch %d: %v", c, batch, err)
			}
			if _, ok := r.Lib(Reg128); !ok || r.Batch != batch || len(r.Libs)+len(r.LeftOut) != len(libs) {
				t.Errorf("%s batch %d: %+v", c, batch, r)
			}
			for _, o := range r.LeftOut {
				if o.Library == DMMA && c.Type != cpubench.Float64 && o.Why == "multiplies float64 only" {
					continue
				}
				if o.Library == Reg128 || o.Library == CuBLAS || o.Why != "no batched path" {
					t.Errorf("%s batch %d: %s left out: %s", c, batch, o.Library, o.Why)
				}
			}
			for _, l := range r.Libs {
				if want := float64(batch) * c.Flops() / l.KernelMedian.Seconds() / 1e9; math.Abs(l.KernelGFLOPS-want) > 1e-9*want {
					t.Errorf("%s batch %d %s: %g GFLOP/s, want %g", c, batch, l.Library, l.KernelGFLOPS, want)
				}
			}
		}
	}
	firstOnly := Library{Name: "first-only", Multiply: reg.Multiply, Gemm: reg.Gemm,
		Batch: func(ty cpubench.Type, tr cpubench.Trans, m, n, k, batch int, a cuda.DevicePtr, lda, sa int, b cuda.DevicePtr, ldb, sb int, c cuda.DevicePtr, ldc, sc int) (time.Duration, error) {
			return reg.Batch(ty, tr, m, n, k, 1, a, lda, sa, b, ldb, sb, c, ldc, sc)
		}}
	sameA := Library{Name: "same-a", Multiply: reg.Multiply, Gemm: reg.Gemm,
		Batch: func(ty cpubench.Type, tr cpubench.Trans, m, n, k, batch int, a cuda.DevicePtr, lda, sa int, b cuda.DevicePtr, ldb, sb int, c cuda.DevicePtr, ldc, sc int) (time.Duration, error) {
			return reg.Batch(ty, tr, m, n, k, batch, a, lda, 0, b, ldb, sb, c, ldc, sc)
		}}
	for _, l := range []Library{firstOnly, sameA} {
		_, err := Measure(dev, cpubench.Case{Type: cpubench.Float32, M: 40, N: 24, K: 16}, []Library{l}, Options{Reps: 1, Batch: 3})
		if !errors.Is(err, cpubench.ErrWrongResult) || !strings.Contains(err.Error(), "product 1") {
			t.Errorf("%s: %v, want a wrong result in product 1", l.Name, err)
		}
	}
}

// TestDotOnGPU runs the dot products against the copy on lengths that do
// and do not fill a vector load, both types, every result checked; a
// kernel a thousandth off is a wrong result.
func TestDotOnGPU(t *testing.T) {
	dev := device(t)
	ks, err := DotKernels(dev, DotKernelNames)
	if err != nil {
		t.Fatal(err)
	}
	cases := DotCases([]int{1, 1001, 1<<20 + 3}, cpubench.Types)
	results, err := RunDot(dev, cases, ks, DotOptions{Reps: 3, Flush: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if len(r.Libs) != 1+len(ks) || r.Libs[0].Name != DotCopy {
			t.Errorf("%s: %+v", r.Case, r.Libs)
		}
		for _, l := range r.Libs {
			if len(l.Kernel) != 3 || len(l.EndToEnd) != 3 || !(l.KernelGBPS > 0) || !(l.EndToEndGBPS > 0) {
				t.Errorf("%s %s: %+v", r.Case, l.Name, l)
			}
		}
		cp, _ := r.Lib(DotCopy)
		for _, l := range r.Libs[1:] {
			t.Logf("%s %s: %v, %.3f of the copy's bandwidth", r.Case, l.Name, l.KernelMedian, cp.KernelMedian.Seconds()/l.KernelMedian.Seconds())
		}
	}
	off := DotKernel{Name: "off", Dot: func(ty cpubench.Type, n int, x, y cuda.DevicePtr) (float64, time.Duration, error) {
		s, d, err := ks[0].Dot(ty, n, x, y)
		return s + 1e-3*float64(n), d, err
	}}
	if _, err := MeasureDot(dev, DotCase{Type: cpubench.Float32, N: 4096}, []DotKernel{off}, DotOptions{Reps: 1}); !errors.Is(err, cpubench.ErrWrongResult) || !strings.Contains(err.Error(), "off") {
		t.Errorf("a dot product a thousandth off: %v, want a wrong result naming it", err)
	}
}
