package openblas

import (
	"errors"
	"testing"
)

func TestSgemmDgemm(t *testing.T) {
	b, err := Open()
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("SKIP: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	b.SetThreads(1)
	if b.Config() == "" {
		t.Error("empty OpenBLAS config string")
	}
	// [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]; with B
	// transposed from its 2x3 transpose, and alpha 2, beta 1 on C = 1.
	a := []float32{1, 2, 3, 4, 5, 6}
	bt := []float32{7, 9, 11, 8, 10, 12}
	c := []float32{1, 1, 1, 1}
	b.Sgemm(false, true, 2, 2, 3, 2, a, 3, bt, 3, 1, c, 2)
	if want := []float32{117, 129, 279, 309}; c[0] != want[0] || c[1] != want[1] || c[2] != want[2] || c[3] != want[3] {
		t.Errorf("Sgemm: got %v, want %v", c, want)
	}
	a64 := []float64{1, 4, 2, 5, 3, 6} // A stored transposed (3x2)
	b64 := []float64{7, 8, 9, 10, 11, 12}
	c64 := make([]float64, 4)
	b.Dgemm(true, false, 2, 2, 3, 1, a64, 2, b64, 2, 0, c64, 2)
	if want := []float64{58, 64, 139, 154}; c64[0] != want[0] || c64[1] != want[1] || c64[2] != want[2] || c64[3] != want[3] {
		t.Errorf("Dgemm: got %v, want %v", c64, want)
	}
}
