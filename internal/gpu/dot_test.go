package gpu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

func TestDotOnePassBlocks(t *testing.T) {
	per := kernels.DotOnePassThreads * dotMinPerThread
	for _, c := range []struct{ n, want int }{
		{1, 1}, {per, 1}, {per + 1, 2}, {per * 1024, 1024}, {1 << 30, kernels.DotOnePassMaxBlocks},
	} {
		if got := DotOnePassBlocks(c.n); got != c.want {
			t.Errorf("DotOnePassBlocks(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	if s, d, err := DotOnePass[float32](nil, 0, 0, 0); s != 0 || d != 0 || err != nil {
		t.Errorf("an empty dot product: %v, %v, %v; want 0 without a launch", s, d, err)
	}
	if _, _, err := DotOnePass[float32](nil, -1, 0, 0); err == nil {
		t.Error("a negative length: no error")
	}
}

// TestDotOnePassOnDevice checks the one-pass dot product against a float64
// sum on lengths around its grid's steps, with vectors that start off the
// 16-byte alignment its vector loads need, and that a repeat gives the same
// bits.
func TestDotOnePassOnDevice(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 11))
	per := kernels.DotOnePassThreads * dotMinPerThread
	lengths := []int{1, 2, 3, 5, 31, 257, per - 1, per + 3, 100003, per*kernels.DotOnePassMaxBlocks + 7, 3 << 20}
	// Aligned float vectors of these take the tail kernels (float32 32 MiB
	// and 48 MiB, float64 twice that), with elements past the last whole
	// 16 bytes.
	lengths = append(lengths, 1<<23+5, 3<<22+2)
	if tails := dotCase[float32](t, d, r, lengths); tails == 0 {
		t.Error("no float32 product ran on the tail kernel")
	}
	if tails := dotCase[float64](t, d, r, lengths); tails == 0 {
		t.Error("no float64 product ran on the tail kernel")
	}
	dotCase[int32](t, d, r, lengths)
	dotExtremes(t, d, 3*per)
	// The tail kernel's blocks: the first value in block 0's static part,
	// the second in another block's, the third in the chunks.
	dotExtremes(t, d, 1<<22+1)
}

func TestDotOnePassKernel(t *testing.T) {
	const a = 1 << 20 // an aligned address
	for _, c := range []struct {
		sym  string
		n    int
		x, y uint64
		want string
	}{
		{"f32", 1<<23 - 1, a, a, "dot_onepass_f32"},
		{"f32", 1 << 23, a, a, "dot_onepass_tail_f32"},
		{"f32", 1 << 25, a, a, "dot_onepass_tail_f32"},
		{"f32", 1<<25 + 1, a, a, "dot_onepass_f32"},
		{"f32", 1 << 24, a + 4, a, "dot_onepass_f32"},
		{"f32", 1 << 24, a, a + 8, "dot_onepass_f32"},
		{"f64", 1 << 22, a, a, "dot_onepass_tail_f64"},
		{"f64", 1<<24 + 1, a, a, "dot_onepass_f64"},
		{"i32", 1 << 24, a, a, "dot_onepass_i32"},
	} {
		var got string
		var blocks int
		switch c.sym {
		case "f32":
			got, blocks = dotOnePassKernel[float32](c.n, c.x, c.y)
		case "f64":
			got, blocks = dotOnePassKernel[float64](c.n, c.x, c.y)
		default:
			got, blocks = dotOnePassKernel[int32](c.n, c.x, c.y)
		}
		wantBlocks := DotOnePassBlocks(c.n)
		if strings.Contains(c.want, "tail") {
			wantBlocks = kernels.DotOnePassTailBlocks
		}
		if got != c.want || blocks != wantBlocks {
			t.Errorf("%s n=%d x=%#x y=%#x: %s on %d blocks, want %s on %d", c.sym, c.n, c.x, c.y, got, blocks, c.want, wantBlocks)
		}
	}
	t.Setenv("GOAMP_DOT_NO_TAIL", "1")
	if got, _ := dotOnePassKernel[float32](1<<24, a, a); got != "dot_onepass_f32" {
		t.Errorf("GOAMP_DOT_NO_TAIL=1: %s", got)
	}
}

// dotExtremes runs float64 dot products of n elements whose block
// partials are known exactly, at the ends of the accumulator: one element
// times 1 (its partial is the element), from the largest double to the
// smallest subnormal, and infinities and NaN in blocks of their own. With
// n = 3*per the values lie in blocks 0, 1 and 2 of the grid-stride kernel;
// with a tail kernel's n, at 0, n/2 and n-2: block 0's static part,
// another block's, and a chunk.
func dotExtremes(t *testing.T, d *Device, n int) {
	per := kernels.DotOnePassThreads * dotMinPerThread // elements a block, at most
	at := [3]int{0, per, 2 * per}
	if n != 3*per {
		at = [3]int{0, n / 2, n - 2}
	}
	x, y := make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = 1
	}
	ctx := d.Context
	dx, err := ctx.Alloc(n * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(dx)
	dy, err := ctx.Alloc(n * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(dy)
	if err := cuda.CopySliceHtoD(ctx, dy, y); err != nil {
		t.Fatal(err)
	}
	inf, nan := math.Inf(1), math.NaN()
	sub := math.SmallestNonzeroFloat64
	maxSub := math.Float64frombits(1<<52 - 1)
	for _, c := range []struct {
		name string
		v    [3]float64
		want float64
	}{
		{"largest", [3]float64{math.MaxFloat64, 0, 0}, math.MaxFloat64},
		{"largest, cancelled", [3]float64{math.MaxFloat64, -math.MaxFloat64, 2}, 2},
		{"overflow", [3]float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64}, math.MaxFloat64},
		{"smallest subnormal", [3]float64{sub, 0, 0}, sub},
		{"subnormals across blocks", [3]float64{maxSub, sub, -2 * sub}, maxSub - sub},
		{"1 and subnormals", [3]float64{1, sub, -1}, sub},
		{"+Inf", [3]float64{1, inf, 2}, inf},
		{"-Inf", [3]float64{-inf, 1, 2}, -inf},
		{"+Inf and -Inf", [3]float64{inf, 0, -inf}, nan},
		{"NaN", [3]float64{1, nan, 2}, nan},
	} {
		for i := range x {
			x[i] = 0
		}
		x[at[0]], x[at[1]], x[at[2]] = c.v[0], c.v[1], c.v[2]
		if err := cuda.CopySliceHtoD(ctx, dx, x); err != nil {
			t.Fatal(err)
		}
		got, _, err := DotOnePass[float64](d, n, uint64(dx), uint64(dy))
		if err != nil {
			t.Fatalf("%s (n=%d): %v", c.name, n, err)
		}
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s (n=%d): %v, want %v", c.name, n, got, c.want)
		}
	}
}

// dotCase checks DotOnePass on each length with aligned and misaligned
// vectors, and returns how many of its products took a tail kernel.
func dotCase[T Element](t *testing.T, d *Device, r *rand.Rand, lengths []int) (tails int) {
	t.Helper()
	maxN := 0
	for _, n := range lengths {
		maxN = max(maxN, n)
	}
	const off = 3 // elements the misaligned cases skip
	x, y := make([]T, maxN+off), make([]T, maxN+off)
	for i := range x {
		x[i], y[i] = randElem[T](r), randElem[T](r)
	}
	size := int(unsafe.Sizeof(T(0)))
	ctx := d.Context
	dx, err := ctx.Alloc(len(x) * size)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(dx)
	dy, err := ctx.Alloc(len(y) * size)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(dy)
	if err := cuda.CopySliceHtoD(ctx, dx, x); err != nil {
		t.Fatal(err)
	}
	if err := cuda.CopySliceHtoD(ctx, dy, y); err != nil {
		t.Fatal(err)
	}
	for _, n := range lengths {
		for _, o := range [][2]int{{0, 0}, {1, 0}, {0, 2}, {off, 1}} {
			xs, ys := x[o[0]:o[0]+n], y[o[1]:o[1]+n]
			if sym, _ := dotOnePassKernel[T](n, uint64(dx)+uint64(o[0]*size), uint64(dy)+uint64(o[1]*size)); strings.Contains(sym, "tail") {
				tails++
			}
			got, _, err := DotOnePass[T](d, n, uint64(dx)+uint64(o[0]*size), uint64(dy)+uint64(o[1]*size))
			if err != nil {
				t.Fatalf("%T n=%d offsets %v: %v", got, n, o, err)
			}
			again, _, err := DotOnePass[T](d, n, uint64(dx)+uint64(o[0]*size), uint64(dy)+uint64(o[1]*size))
			if err != nil {
				t.Fatal(err)
			}
			if got != again {
				t.Errorf("%T n=%d offsets %v: %v, then %v: not the same bits on a repeat", got, n, o, got, again)
			}
			var want, mag float64
			var wrap int32
			for i := range xs {
				p := float64(xs[i]) * float64(ys[i])
				want += p
				mag += math.Abs(p)
				wrap += int32(xs[i]) * int32(ys[i])
			}
			switch any(got).(type) {
			case int32:
				if int32(got) != wrap {
					t.Errorf("int32 n=%d offsets %v: got %v, want %d", n, o, got, wrap)
				}
			default:
				// float32 accumulates in float64: one rounding to T at
				// the end, plus the two float64 sums' errors (each at
				// most n units of float64's roundoff times the sum of
				// the magnitudes).
				eps := 1.2e-16
				if size == 4 {
					eps = 6e-8
				}
				if diff := math.Abs(float64(got) - want); diff > eps*math.Abs(want)+2*float64(n)*1.2e-16*mag {
					t.Errorf("%T n=%d offsets %v: got %v, want %v (diff %g)", got, n, o, got, want, diff)
				}
			}
		}
	}
	return tails
}

// randElem draws a value in [-1, 1) (floats) or [-8, 8) (int32, whose
// products then sum past 2^31 and wrap for the longest vectors only
// rarely: wrapping is checked all the same).
func randElem[T Element](r *rand.Rand) T {
	switch any(T(0)).(type) {
	case int32:
		return T(r.IntN(16) - 8)
	}
	return T(r.Float64()*2 - 1)
}

// addPartialForTest adds v into accumulator words as dot_onepass.cu's
// add_partial does on the device (its pieces added modulo 2^64).
func addPartialForTest(words []uint64, v float64) {
	bits := math.Float64bits(v)
	e := int(bits >> 52 & 0x7ff)
	m := bits & (1<<52 - 1)
	neg := bits>>63 != 0
	if e == 0x7ff {
		switch {
		case m != 0:
			words[kernels.DotOnePassLimbs] |= 4
		case neg:
			words[kernels.DotOnePassLimbs] |= 2
		default:
			words[kernels.DotOnePassLimbs] |= 1
		}
		return
	}
	if e != 0 {
		m |= 1 << 52
	} else {
		e = 1
	}
	pos := e - 1
	limb, sh := pos>>5, uint(pos&31)
	lo, hi := m<<sh, uint64(0)
	if sh != 0 {
		hi = m >> (64 - sh)
	}
	for k, piece := range []uint64{lo & 0xffffffff, lo >> 32, hi} {
		if neg {
			piece = -piece
		}
		words[limb+k] += piece
	}
}

// exactSum is the sum of vs rounded once to float64 (and to float32).
func exactSum(vs []float64) (float64, float32) {
	s := new(big.Float).SetPrec(4200)
	for _, v := range vs {
		s.Add(s, new(big.Float).SetPrec(4200).SetFloat64(v))
	}
	f64, _ := s.Float64()
	f32, _ := s.Float32()
	return f64, f32
}

// TestDotAccValue: the host's rounding of DotOnePass's accumulator, the
// partials laid into it as the kernel lays them: exact sums rounded once
// (two partials round as one IEEE addition does), subnormals, overflow,
// cancellation, the flags, and int32's word.
func TestDotAccValue(t *testing.T) {
	acc := func(vs ...float64) []uint64 {
		w := make([]uint64, kernels.DotOnePassWords)
		for _, v := range vs {
			addPartialForTest(w, v)
		}
		return w
	}
	tiny := math.SmallestNonzeroFloat64
	a, b := 0.1, 0.2 // variables: Go adds constants exactly
	for _, c := range []struct {
		name string
		vs   []float64
		want float64
	}{
		{"nothing", nil, 0},
		{"one", []float64{1.5}, 1.5},
		{"0.1 + 0.2", []float64{a, b}, a + b}, // one IEEE addition, correctly rounded
		{"cancelled to a subnormal", []float64{1, tiny, -1}, tiny},
		{"subnormals", []float64{tiny, 3 * tiny, -2 * tiny}, 2 * tiny},
		{"largest and smallest", []float64{math.MaxFloat64, tiny, -math.MaxFloat64}, tiny},
		{"overflow", []float64{math.MaxFloat64, math.MaxFloat64}, math.Inf(1)},
		{"negative overflow", []float64{-math.MaxFloat64, -math.MaxFloat64 / 2}, math.Inf(-1)},
		{"1 + 2^-53 + 2^-53", []float64{1, 0x1p-53, 0x1p-53}, 1 + 0x1p-52}, // float64 adds in turn would give 1
		{"+Inf", []float64{1, math.Inf(1)}, math.Inf(1)},
		{"-Inf", []float64{math.Inf(-1), 1}, math.Inf(-1)},
		{"+Inf and -Inf", []float64{math.Inf(1), math.Inf(-1)}, math.NaN()},
		{"NaN", []float64{math.NaN(), 2}, math.NaN()},
	} {
		got := dotAccValue[float64](acc(c.vs...))
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) || math.Signbit(got) != math.Signbit(c.want) && got == 0 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Random partials over a wide range of magnitudes and both signs, as
	// many as a launch has blocks: the exact sum, rounded once.
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 5))
	for trial := 0; trial < 200; trial++ {
		vs := make([]float64, 1+r.IntN(kernels.DotOnePassMaxBlocks))
		// Exponents from the subnormals' to the largest doubles' (every
		// limb), within a spread of up to 2100 binary orders.
		spread := 1 + r.IntN(2100)
		low := -1075 + r.IntN(2100-spread+1)
		for i := range vs {
			vs[i] = math.Ldexp(r.Float64()-0.5, low+r.IntN(spread))
		}
		w := acc(vs...)
		want64, want32 := exactSum(vs)
		if got := dotAccValue[float64](w); got != want64 {
			t.Fatalf("trial %d, %d partials: float64 %v, want %v", trial, len(vs), got, want64)
		}
		if got := dotAccValue[float32](w); got != want32 {
			t.Fatalf("trial %d, %d partials: float32 %v, want %v", trial, len(vs), got, want32)
		}
	}
	// int32: word 0 modulo 2^32.
	if got := dotAccValue[int32]([]uint64{1<<32 + 1<<31 + 5, 99}); got != math.MinInt32+5 {
		t.Errorf("int32: %d, want %d", got, math.MinInt32+5)
	}
}
