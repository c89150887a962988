package reference

import (
	"math"
	"testing"
)

func TestMatMulByHand(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5, 6}    // 2x3
	b := []float64{7, 8, 9, 10, 11, 12} // 3x2
	c := []float64{1, 1, 1, math.NaN()}
	if got := MatMul(2, 2, 3, 1, a, b, 0, c); got[0] != 58 || got[1] != 64 || got[2] != 139 || got[3] != 154 {
		t.Errorf("A*B = %v", got)
	}
	if got := MatMul(2, 2, 3, 2, a, b, -1, c); got[0] != 115 || !math.IsNaN(got[3]) {
		t.Errorf("2*A*B - C = %v", got)
	}
	neg := []float64{-1, 2, -3, 4, -5, 6}
	if got := MatMulBound(2, 2, 3, -1, neg, b, 0, nil); got[0] != 58 {
		t.Errorf("bound = %v, want sums of magnitudes", got)
	}
}

func TestMaxErr(t *testing.T) {
	want, bound := []float64{1, math.NaN(), math.Inf(1)}, []float64{1, 1, 1}
	if e := MaxErr([]float32{1.5, float32(math.NaN()), float32(math.Inf(1))}, want, bound); e != 0.5 {
		t.Errorf("MaxErr = %v, want 0.5", e)
	}
	if e := MaxErr([]float64{1, 0, math.Inf(1)}, want, bound); !math.IsInf(e, 1) {
		t.Errorf("NaN lost: MaxErr = %v, want +Inf", e)
	}
	if e := MaxErr([]float64{1, math.NaN(), math.Inf(-1)}, want, bound); !math.IsInf(e, 1) {
		t.Errorf("wrong infinity: MaxErr = %v, want +Inf", e)
	}
	// int32 wraps around: 2^31 is -2^31 in int32.
	if e := MaxErr([]int32{math.MinInt32}, []float64{1 << 31}, []float64{1 << 31}); e != 0 {
		t.Errorf("int32 wrap-around: MaxErr = %v, want 0", e)
	}
	if e := MaxErr([]int32{3}, []float64{4}, []float64{4}); !math.IsInf(e, 1) {
		t.Errorf("int32 mismatch: MaxErr = %v, want +Inf", e)
	}
	if Tolerance[int32](100) != 0 || Tolerance[float32](0) <= Tolerance[float64](0) {
		t.Error("tolerances out of order")
	}
}

func TestMatMulErrors(t *testing.T) {
	// (2^31-1)^2 wraps to 1 in int32; float64 could not say so exactly.
	big := []int32{math.MaxInt32}
	if e := MatMulErrors(1, 1, 1, 1, big, big, 0, nil, []int32{1}); e[0] != 0 {
		t.Errorf("wrapped int32 product judged wrong: %v", e)
	}
	if e := MatMulErrors(1, 1, 1, 1, big, big, 0, nil, []int32{2}); !math.IsInf(e[0], 1) {
		t.Errorf("wrong int32 product judged right: %v", e)
	}
	a := []float32{1, 2, 3, 4} // 2x2
	got := []float32{7, 10, 15, 22.5}
	e := MatMulErrors(2, 2, 2, 1, a, a, 0, nil, got)
	if e[0] != 0 || e[3] != 0.5/22 {
		t.Errorf("float errors %v, want 0 ... 0.5/22", e)
	}
	if d := DotError([]float64{1, 2}, []float64{3, 4}, 11); d != 0 {
		t.Errorf("DotError of the right answer = %v", d)
	}
}

func TestToleranceGrowsAsSquareRoot(t *testing.T) {
	u := UnitRoundoff[float32]()
	if got := Tolerance[float32](0); got != 8*u {
		t.Errorf("k=0: %v, want the worst case 8u", got)
	}
	if got, want := Tolerance[float32](1<<20), 16*math.Sqrt(1<<20+2)*u; got != want {
		t.Errorf("k=2^20: %v, want 16*sqrt(k+2)*u = %v", got, want)
	}
}
