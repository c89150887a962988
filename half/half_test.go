package half

import (
	"math"
	"testing"

	"github.com/goamp/goamp/internal/precision"
)

// Every Float16 converts to float32 and back to itself (NaNs to a NaN),
// and its value is the one its bits spell.
func TestFloat16RoundTrip(t *testing.T) {
	for u := range 1 << 16 {
		h := Float16(u)
		f := h.Float32()
		exp, mant := u>>10&0x1f, u&0x3ff
		var want float64
		switch {
		case exp == 0x1f && mant != 0:
			if !math.IsNaN(float64(f)) || !math.IsNaN(float64(Float16From(f).Float32())) {
				t.Fatalf("%#04x: NaN decodes to %g", u, f)
			}
			continue
		case exp == 0x1f:
			want = math.Inf(1)
		case exp == 0:
			want = math.Ldexp(float64(mant), -24)
		default:
			want = math.Ldexp(float64(1024+mant), exp-25)
		}
		if u&0x8000 != 0 {
			want = -want
		}
		if float64(f) != want || math.Signbit(float64(f)) != (u&0x8000 != 0) {
			t.Fatalf("%#04x decodes to %g, want %g", u, f, want)
		}
		if back := Float16From(f); back != h {
			t.Fatalf("%#04x -> %g -> %#04x", u, f, uint16(back))
		}
	}
}

// Float16From rounds as precision.Round (checked there against every
// binary16 value and midpoint) over a sweep of float32s of both signs,
// the subnormals and the overflow threshold included.
func TestFloat16FromMatchesRound(t *testing.T) {
	for u := uint32(0); u < 0x7f800000; u += 0x3219 {
		for _, s := range []uint32{0, 1 << 31} {
			x := math.Float32frombits(u | s)
			got := Float16From(x).Float32()
			want := precision.Round(precision.FP16, x)
			if got != want || math.Signbit(float64(got)) != math.Signbit(float64(x)) {
				t.Fatalf("Float16From(%g [%#x]) = %g, want %g", x, u|s, got, want)
			}
		}
	}
	for _, c := range []struct{ x, want float32 }{
		{65519.99, 65504}, {65520, float32(math.Inf(1))}, {-70000, float32(math.Inf(-1))},
		{0x1p-25, 0}, {0x1p-25 * 1.0001, 0x1p-24}, {0x1p-14 - 0x1p-26, 0x1p-14}, {1.0009765625 / 2 * 2, 1.0009765625},
	} {
		if got := Float16From(c.x).Float32(); got != c.want {
			t.Errorf("Float16From(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if !math.IsNaN(float64(Float16From(float32(math.NaN())).Float32())) {
		t.Error("NaN did not stay NaN")
	}
}

func TestBFloat16(t *testing.T) {
	for u := uint32(0); u < 0x7f800000; u += 0x2a1b {
		for _, s := range []uint32{0, 1 << 31} {
			x := math.Float32frombits(u | s)
			if got, want := BFloat16From(x).Float32(), precision.Round(precision.BF16, x); got != want {
				t.Fatalf("BFloat16From(%g) = %g, want %g", x, got, want)
			}
		}
	}
	for u := range 1 << 16 {
		b := BFloat16(u)
		if f := b.Float32(); !math.IsNaN(float64(f)) && BFloat16From(f) != b {
			t.Fatalf("%#04x -> %g -> %#04x", u, f, uint16(BFloat16From(f)))
		}
	}
	nan := math.Float32frombits(0x7f800001) // a NaN whose payload is all in the low bits
	if !math.IsNaN(float64(BFloat16From(nan).Float32())) {
		t.Error("a NaN became an infinity")
	}
}

func TestSlices(t *testing.T) {
	x := []float32{1, -2.5, 0.1, 1e6}
	h := Float16s(x)
	got := Float32s(h)
	want := []float32{1, -2.5, 0.0999755859375, float32(math.Inf(1))}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("element %d: %g, want %g", i, got[i], want[i])
		}
	}
}
