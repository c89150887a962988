package precision

import (
	"math"
	"testing"
)

func TestRoundKnownValues(t *testing.T) {
	for _, c := range []struct {
		name string
		x    float32
		want float32
	}{
		{TF32, 1 + 0x1p-11, 1},                           // a tie: to even (1)
		{TF32, 1 + 3*0x1p-11, 1 + 0x1p-9},                // a tie: to even (1 + 2^-9)
		{TF32, -(1 + 0x1p-11 + 0x1p-20), -(1 + 0x1p-10)}, // past the tie
		{TF32, -(1 + 0x1p-11), -1},                       // to even, negative too
		{TF32, 1 + 0x1p-12, 1},                           // under half a step
		{BF16, 1 + 0x1p-8, 1},                            // a tie: to even (1)
		{BF16, 1 + 3*0x1p-8, 1 + 0x1p-6},                 // a tie: to even (1 + 2^-6)
		{BF16, 1 + 0x1p-8 + 0x1p-20, 1 + 0x1p-7},         // past the tie
		{FP16, 1 + 0x1p-11, 1},                           // a tie: to even
		{FP16, 65504, 65504},                             // the largest finite
		{FP16, 65519, 65504},                             // under the overflow threshold
		{FP16, 65520, float32(math.Inf(1))},              // at it: rounds up, overflows
		{FP16, 0x1p-24, 0x1p-24},                         // the least subnormal
		{FP16, 0x1p-25, 0},                               // a tie between 0 and it: to even (0)
		{FP16, 0x1p-25 + 0x1p-30, 0x1p-24},               // past the tie
		{FP16, 3 * 0x1p-25, 2 * 0x1p-24},                 // a subnormal tie: to even
		{BF16, math.MaxFloat32, float32(math.Inf(1))},    // past BF16's largest finite
		{TF32, 0.1, 0.0999755859375},
		{BF16, 0.1, 0.10009765625},
		{FP16, 0.1, 0.0999755859375},
		{Exact, 0.1, 0.1},
	} {
		if got := Round(c.name, c.x); got != c.want {
			t.Errorf("Round(%s, %g) = %g, want %g", c.name, c.x, got, c.want)
		}
	}
	for _, name := range Names {
		if got := Round(name, float32(math.NaN())); !math.IsNaN(float64(got)) {
			t.Errorf("Round(%s, NaN) = %g", name, got)
		}
		if got := Round(name, float32(math.Inf(-1))); !math.IsInf(float64(got), -1) {
			t.Errorf("Round(%s, -Inf) = %g", name, got)
		}
	}
}

// TestRoundMatchesBitRounding compares Round with the bit tricks that
// round float32 to TF32 and BF16 to nearest even (add half a step less
// one and the kept part's last bit, clear the bits dropped) over a sweep
// of float32 values.
func TestRoundMatchesBitRounding(t *testing.T) {
	tf32 := func(x float32) float32 {
		u := math.Float32bits(x)
		return math.Float32frombits((u + 0xfff + (u>>13)&1) &^ 0x1fff)
	}
	bf16 := func(x float32) float32 {
		u := math.Float32bits(x)
		return math.Float32frombits((u + 0x7fff + (u>>16)&1) &^ 0xffff)
	}
	for u := uint32(0); u < 0x7f7f0000; u += 0x1235 {
		for _, s := range []uint32{0, 1 << 31} {
			x := math.Float32frombits(u | s)
			if got, want := Round(TF32, x), tf32(x); got != want {
				t.Fatalf("Round(tf32, %g [%#x]) = %g, want %g", x, u|s, got, want)
			}
			if got, want := Round(BF16, x), bf16(x); got != want {
				t.Fatalf("Round(bf16, %g [%#x]) = %g, want %g", x, u|s, got, want)
			}
		}
	}
}

// Every FP16 value rounds to itself, and every midpoint between two
// neighbours to the one with an even last bit.
func TestRoundFP16Exhaustive(t *testing.T) {
	values := fp16Values()
	for i, v := range values {
		if got := Round(FP16, v); got != v {
			t.Fatalf("Round(fp16, %g) = %g, want it unchanged", v, got)
		}
		if i == 0 {
			continue
		}
		lo := values[i-1]
		mid := float32((float64(lo) + float64(v)) / 2) // exact in float32
		want := v
		if (i-1)%2 == 0 { // lo's last bit is 0: the even one
			want = lo
		}
		if got := Round(FP16, mid); got != want {
			t.Fatalf("Round(fp16, %g) between %g and %g = %g, want %g", mid, lo, v, got, want)
		}
	}
}

// fp16Values lists the non-negative finite FP16 values in order, decoded
// from their bits.
func fp16Values() []float32 {
	var out []float32
	for h := 0; h < 0x7c00; h++ {
		exp, frac := h>>10, h&0x3ff
		var v float64
		if exp == 0 {
			v = math.Ldexp(float64(frac), -24)
		} else {
			v = math.Ldexp(float64(1024+frac), exp-25)
		}
		out = append(out, float32(v))
	}
	return out
}

func TestCheckAndUnit(t *testing.T) {
	for _, n := range Names {
		if err := Check(n); err != nil {
			t.Errorf("Check(%s): %v", n, err)
		}
	}
	if err := Check("fp8"); err == nil {
		t.Error("Check(fp8): no error")
	}
	if Unit(TF32) != 0x1p-11 || Unit(BF16) != 0x1p-8 || Unit(FP16) != 0x1p-11 || Unit(Exact) != 0x1p-24 {
		t.Errorf("Unit: %g %g %g %g", Unit(TF32), Unit(BF16), Unit(FP16), Unit(Exact))
	}
}
