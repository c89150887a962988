package kerneltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
)

// forEachAccelerator runs test on every accelerator of the machine: the
// CPU always, and each CUDA GPU, where the kernels are the PTX goampgen
// compiled from them.
func forEachAccelerator(t *testing.T, test func(t *testing.T, v *amp.AcceleratorView)) {
	for _, acc := range amp.Accelerators() {
		t.Run(acc.Path(), func(t *testing.T) { test(t, acc.DefaultView()) })
	}
}

func view[T amp.Element](t *testing.T, ext amp.Extent, data []T) *amp.ArrayView[T] {
	t.Helper()
	v, err := amp.NewArrayView(ext, data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestScale(t *testing.T) {
	forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
		for _, ext := range []amp.Extent{amp.Extent1(1), amp.Extent1(1000), amp.Extent2(7, 13), amp.Extent2(1, 1), amp.Extent3(3, 5, 7), amp.Extent3(2, 1, 300)} {
			data := make([]float32, ext.Size())
			for i := range data {
				data[i] = rand.Float32()*2 - 1
			}
			want := make([]float32, len(data))
			for i, x := range data {
				want[i] = 2.5 * x
			}
			av := view(t, ext, data)
			if err := launchScale(v, ext, av, 2.5); err != nil {
				t.Fatalf("%v: %v", ext, err)
			}
			if err := av.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for i := range data {
				if data[i] != want[i] {
					t.Fatalf("%v: element %d = %v, want %v", ext, i, data[i], want[i])
				}
			}
		}
	})
}

func TestTranspose(t *testing.T) {
	forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
		for _, s := range [][2]int{{1, 1}, {17, 33}, {100, 3}, {16, 16}, {61, 127}} {
			rows, cols := s[0], s[1]
			src := make([]float64, rows*cols)
			for i := range src {
				src[i] = rand.NormFloat64()
			}
			dst := make([]float64, rows*cols)
			in, out := view(t, amp.Extent2(rows, cols), src), view(t, amp.Extent2(cols, rows), dst)
			if err := launchTranspose(v, in.Extent().Tile(tile, tile).Pad(), in, out); err != nil {
				t.Fatalf("%dx%d: %v", rows, cols, err)
			}
			if err := out.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				for j := range cols {
					if dst[j*rows+i] != src[i*cols+j] {
						t.Fatalf("%dx%d: out[%d][%d] = %v, want %v", rows, cols, j, i, dst[j*rows+i], src[i*cols+j])
					}
				}
			}
		}
	})
}

// mathInputs gives each function arguments over its interesting range,
// special values included.
func mathInputs(fn int32, n int) (x, y []float64) {
	x, y = make([]float64, n), make([]float64, n)
	specials := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 700, -745, 1e300}
	for i := range n {
		switch fn {
		case fnLog, fnLog2, fnSqrt:
			x[i] = math.Exp(rand.Float64()*1400 - 700)
		case fnSin, fnCos:
			x[i] = (rand.Float64()*2 - 1) * math.Pow(10, rand.Float64()*6)
		case fnPow:
			x[i] = rand.Float64() * 10
			y[i] = rand.Float64()*40 - 20
		default:
			x[i] = rand.Float64()*80 - 40
		}
		if i < len(specials) {
			x[i] = specials[i]
			y[i] = specials[(i+3)%len(specials)]
		}
	}
	return x, y
}

// ulps is how many float64 steps apart a and b are (0 if both are NaN).
func ulps(a, b float64) float64 {
	if math.IsNaN(a) && math.IsNaN(b) || a == b {
		return 0
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return math.Inf(1)
	}
	ia, ib := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if ia < 0 {
		ia = math.MinInt64 - ia
	}
	if ib < 0 {
		ib = math.MinInt64 - ib
	}
	return math.Abs(float64(ia - ib))
}

func ulps32(a, b float32) float64 {
	if math.IsNaN(float64(a)) && math.IsNaN(float64(b)) || a == b {
		return 0
	}
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) {
		return math.Inf(1)
	}
	ia, ib := int64(int32(math.Float32bits(a))), int64(int32(math.Float32bits(b)))
	if ia < 0 {
		ia = math.MinInt32 - ia
	}
	if ib < 0 {
		ib = math.MinInt32 - ib
	}
	return math.Abs(float64(ia - ib))
}

var fnNames = [...]string{"exp", "exp2", "log", "log2", "sin", "cos", "pow", "tanh", "sqrt", "floor", "fma"}

// TestMathF64 compares package math's functions in kernels with package
// math itself: on the GPU they are goamp's software routines.
func TestMathF64(t *testing.T) {
	forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
		const n = 4099
		for fn := range numFns {
			x, y := mathInputs(fn, n)
			out := make([]float64, n)
			xv, yv, ov := view(t, amp.Extent1(n), x), view(t, amp.Extent1(n), y), view(t, amp.Extent1(n), out)
			if err := launchMathF64(v, amp.Extent1(n), xv, yv, ov, fn); err != nil {
				t.Fatalf("%s: %v", fnNames[fn], err)
			}
			if err := ov.Synchronize(); err != nil {
				t.Fatal(err)
			}
			worst, at := 0.0, 0
			for i := range n {
				want := mathF64Ref(fn, x[i], y[i])
				if v.Accelerator().Kind() != amp.KindCPU {
					// The CPU runs Go's math; elsewhere goamp's, held to the
					// right answer where Go's is known to be off.
					want = ipWantF64(fn, x[i], want)
				}
				if u := ulps(out[i], want); u > worst {
					worst, at = u, i
				}
			}
			// Go's own Pow is up to about 13 ulp off (interp_test.go
			// says where it was measured against math/big).
			if tol := map[int32]float64{fnPow: 16}[fn]; worst > max(4, tol) {
				t.Errorf("%s: %v ulp at x=%v y=%v: got %v, want %v", fnNames[fn], worst, x[at], y[at], out[at], mathF64Ref(fn, x[at], y[at]))
			}
		}
	})
}

func mathF64Ref(fn int32, a, b float64) float64 {
	switch fn {
	case fnExp:
		return math.Exp(a)
	case fnExp2:
		return math.Exp2(a)
	case fnLog:
		return math.Log(a)
	case fnLog2:
		return math.Log2(a)
	case fnSin:
		return math.Sin(a)
	case fnCos:
		return math.Cos(a)
	case fnPow:
		return math.Pow(a, b)
	case fnTanh:
		return math.Tanh(a)
	case fnSqrt:
		return math.Sqrt(a)
	case fnFloor:
		return math.Floor(a)
	}
	return math.FMA(a, b, a)
}

// TestMathF32 compares precisemath and fastmath in kernels with float64
// math rounded to float32: precise within 2 ulp, fast within a relative
// error of 2^-20 on moderate arguments (the hardware approximations).
func TestMathF32(t *testing.T) {
	forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
		const n = 2049
		for _, fast := range []bool{false, true} {
			for fn := range numFns {
				x64, y64 := mathInputs(fn, n)
				x, y := make([]float32, n), make([]float32, n)
				for i := range n {
					x[i], y[i] = float32(x64[i]), float32(y64[i])
					if fast {
						// Moderate arguments, where the approximations are specified.
						x[i], y[i] = float32(rand.Float64()*8-4), float32(rand.Float64()*4-2)
						if fn == fnLog || fn == fnLog2 || fn == fnSqrt || fn == fnPow {
							x[i] = float32(rand.Float64()*100 + 1e-3)
						}
					}
				}
				out := make([]float32, n)
				xv, yv, ov := view(t, amp.Extent1(n), x), view(t, amp.Extent1(n), y), view(t, amp.Extent1(n), out)
				if err := launchMathF32(v, amp.Extent1(n), xv, yv, ov, fn, fast); err != nil {
					t.Fatalf("%s fast=%v: %v", fnNames[fn], fast, err)
				}
				if err := ov.Synchronize(); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					ref := mathF64Ref(fn, float64(x[i]), float64(y[i]))
					want := float32(ref)
					if fast {
						tol := 1.0 / (1 << 20) * math.Max(1, math.Abs(ref))
						if fn == fnSin || fn == fnCos {
							tol = 1.0 / (1 << 20)
						}
						if fn == fnTanh {
							tol = 1.0 / (1 << 10) // tanh.approx.f32: relative error 2^-11 (PTX ISA)
						}
						if fn == fnPow {
							// ex2.approx(y * lg2.approx(x)): the rounding of
							// the exponent y*log2(x), up to 13 here, is an
							// error of its ulp, which ex2 turns into a
							// relative error: 2^-22 (4 + |y log2 x|) covers it
							// and the two approximations' own.
							e := math.Abs(float64(y[i]) * math.Log2(float64(x[i])))
							tol = (4 + e) / (1 << 22) * math.Abs(ref)
						}
						if !(math.Abs(float64(out[i])-ref) <= tol) && !(math.IsNaN(ref) && math.IsNaN(float64(out[i]))) {
							t.Errorf("fast %s(%v, %v) = %v, want %v within %g", fnNames[fn], x[i], y[i], out[i], ref, tol)
							break
						}
						continue
					}
					if u := ulps32(out[i], want); u > 2 {
						t.Errorf("precise %s(%v, %v) = %v, want %v (%v ulp)", fnNames[fn], x[i], y[i], out[i], want, u)
						break
					}
				}
			}
		}
	})
}

// TestIntegers compares each accelerator's run with the CPU's run of the
// same kernel.
func TestIntegers(t *testing.T) {
	const n = 3001
	a, b := make([]int32, n), make([]int32, n)
	for i := range n {
		a[i], b[i] = rand.Int32N(1<<20)-1<<19, rand.Int32()-1<<30
	}
	run := func(v *amp.AcceleratorView, shift uint32) []int32 {
		out := make([]int32, n)
		ov := view(t, amp.Extent1(n), out)
		if err := launchIntegers(v, amp.Extent1(n), view(t, amp.Extent1(n), a), view(t, amp.Extent1(n), b), ov, shift); err != nil {
			t.Fatal(err)
		}
		if err := ov.Synchronize(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, shift := range []uint32{0, 5, 31, 40, 100} {
		want := run(amp.CPU().DefaultView(), shift)
		forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
			got := run(v, shift)
			for i := range n {
				if got[i] != want[i] {
					t.Fatalf("shift %d: element %d (a=%d b=%d) = %d, the CPU's %d", shift, i, a[i], b[i], got[i], want[i])
				}
			}
		})
	}
}

// TestOutOfBounds: an element access outside a view is an error naming
// the kernel on every accelerator, never a silent write.
func TestOutOfBounds(t *testing.T) {
	forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
		data := make([]float32, 100)
		av := view(t, amp.Extent1(100), data)
		err := launchOffByOne(v, amp.Extent1(100), av)
		if err == nil {
			t.Fatal("no error")
		}
		if !errors.Is(err, amp.ErrKernelPanic) {
			t.Errorf("%v does not match amp.ErrKernelPanic", err)
		}
		if v.Accelerator().Kind() != amp.KindCPU {
			if !errors.Is(err, amp.ErrOutOfRange) || !strings.Contains(err.Error(), "offByOne") || !strings.Contains(err.Error(), "(99)") {
				t.Errorf("error %q should match ErrOutOfRange and name offByOne and thread (99)", err)
			}
		}
	})
}

// TestDivideByZero: an integer division by zero is an error, not a value.
func TestDivideByZero(t *testing.T) {
	forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
		a, b := []int32{10, 20, 30}, []int32{2, 0, 5}
		out := make([]int32, 3)
		err := launchDivide(v, amp.Extent1(3), view(t, amp.Extent1(3), a), view(t, amp.Extent1(3), b), view(t, amp.Extent1(3), out))
		if !errors.Is(err, amp.ErrKernelPanic) {
			t.Fatalf("got %v, want an error matching amp.ErrKernelPanic", err)
		}
		if !strings.Contains(err.Error(), "divide") {
			t.Errorf("error %q does not say divide", err)
		}
	})
}

func TestReduce(t *testing.T) {
	testReduce[float32](t)
	testReduce[float64](t)
	testReduce[int32](t)
}

func testReduce[T amp.Element](t *testing.T) {
	t.Run(fmt.Sprintf("%T", *new(T)), func(t *testing.T) {
		const tiles = 37
		x := make([]T, tiles*reduceTile)
		for i := range x {
			x[i] = T(rand.IntN(1000)) / 4
		}
		run := func(v *amp.AcceleratorView) []T {
			sums := make([]T, tiles)
			sv := view(t, amp.Extent1(tiles), sums)
			if err := launchReduce(v, amp.Extent1(len(x)).Tile(reduceTile), view(t, amp.Extent1(len(x)), x), sv); err != nil {
				t.Fatal(err)
			}
			if err := sv.Synchronize(); err != nil {
				t.Fatal(err)
			}
			return sums
		}
		want := run(amp.CPU().DefaultView())
		for i := range tiles {
			var s T
			for _, e := range x[i*reduceTile : (i+1)*reduceTile] {
				s += e
			}
			if math.Abs(float64(s-want[i])) > 1e-3*math.Abs(float64(s)) {
				t.Fatalf("CPU tile %d: %v, want %v", i, want[i], s)
			}
		}
		forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
			got := run(v)
			for i := range tiles {
				if got[i] != want[i] {
					t.Fatalf("tile %d: %v, the CPU's %v", i, got[i], want[i])
				}
			}
		})
	})
}

// TestAtomics: the histogram's counts, sum and extremes, and a race that
// exactly one thread wins, on every accelerator.
func TestAtomics(t *testing.T) {
	forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
		const n = 1000
		x := make([]int32, n)
		want := make([]int32, histBins)
		var sum float64
		lo, hi := int32(1<<30), int32(-1<<30)
		for i := range x {
			x[i] = rand.Int32N(1000)
			want[x[i]%histBins]++
			sum += float64(x[i])
			lo, hi = min(lo, x[i]), max(hi, x[i])
		}
		bins := make([]int32, histBins)
		total := []float32{0}
		ext := []int32{1 << 30, -1 << 30}
		bv, tv, ev := view(t, amp.Extent1(histBins), bins), view(t, amp.Extent1(1), total), view(t, amp.Extent1(2), ext)
		if err := launchHistogram(v, amp.Extent1(n).Tile(histTile).Pad(), view(t, amp.Extent1(n), x), bv, tv, ev); err != nil {
			t.Fatal(err)
		}
		for _, s := range []interface{ Synchronize() error }{bv, tv, ev} {
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
		}
		for b := range histBins {
			if bins[b] != want[b] {
				t.Errorf("bin %d: %d, want %d", b, bins[b], want[b])
			}
		}
		if math.Abs(float64(total[0])-sum) > 1e-3*sum || ext[0] != lo || ext[1] != hi {
			t.Errorf("total %v (want %v), extremes %v (want %d %d)", total[0], sum, ext, lo, hi)
		}

		const m = 777
		winner, won, seen := []int32{-1}, make([]int32, m), make([]int32, m)
		for i := range seen {
			seen[i] = -5
		}
		wv, wonv, sv := view(t, amp.Extent1(1), winner), view(t, amp.Extent1(m), won), view(t, amp.Extent1(m), seen)
		if err := launchClaim(v, amp.Extent1(m), wv, wonv, sv); err != nil {
			t.Fatal(err)
		}
		for _, s := range []interface{ Synchronize() error }{wv, wonv, sv} {
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
		}
		winners := 0
		for i := range m {
			winners += int(won[i])
			if seen[i] != -5 {
				t.Fatalf("seen[%d] = %d, want the -5 exchanged out", i, seen[i])
			}
		}
		if winners != 1 || winner[0] < 0 || winner[0] >= m || won[winner[0]] != 1 {
			t.Errorf("%d winners, winner[0] = %d", winners, winner[0])
		}
	})
}

func TestWarpShuffles(t *testing.T) {
	testWarpShuffles[float32](t)
	testWarpShuffles[float64](t)
	testWarpShuffles[int32](t)
}

func testWarpShuffles[T amp.Element](t *testing.T) {
	t.Run(fmt.Sprintf("%T", *new(T)), func(t *testing.T) {
		const n = 64 * 5
		x := make([]T, n)
		for i := range x {
			x[i] = T(rand.IntN(64)) // small integers: every sum exact in every order
		}
		forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
			down, all := make([]T, n/amp.WarpSize), make([]T, n)
			dv, av := view(t, amp.Extent1(len(down)), down), view(t, amp.Extent1(n), all)
			if err := launchWarpSums(v, amp.Extent1(n).Tile(64), view(t, amp.Extent1(n), x), dv, av); err != nil {
				t.Fatal(err)
			}
			if err := dv.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if err := av.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for w := range n / amp.WarpSize {
				var s T
				for _, e := range x[w*amp.WarpSize : (w+1)*amp.WarpSize] {
					s += e
				}
				if down[w] != s {
					t.Fatalf("warp %d: shuffle-down sum %v, want %v", w, down[w], s)
				}
				for l := range amp.WarpSize {
					if all[w*amp.WarpSize+l] != s {
						t.Fatalf("warp %d lane %d: butterfly sum %v, want %v", w, l, all[w*amp.WarpSize+l], s)
					}
				}
			}
		})
	})
}

// TestEdgeCases: each accelerator agrees with Go on the constructs of
// edgeCases, for a guarded index inside and outside the array.
func TestEdgeCases(t *testing.T) {
	for _, k := range []uint32{2, 4, 1000} {
		var want []float64
		forEachAccelerator(t, func(t *testing.T, v *amp.AcceleratorView) {
			out := make([]float64, 6)
			ov := view(t, amp.Extent1(6), out)
			if err := launchEdgeCases(v, amp.Extent1(6), ov, k, 5, math.Inf(1), math.NaN()); err != nil {
				t.Fatal(err)
			}
			if err := ov.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = out // the CPU's, which runs first
				return
			}
			for i := range out {
				if out[i] != want[i] && !(math.IsNaN(out[i]) && math.IsNaN(want[i])) {
					t.Errorf("k=%d: element %d = %v, the CPU's %v", k, i, out[i], want[i])
				}
			}
		})
	}
}
