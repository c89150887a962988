package gpu

import (
	"math"
	"math/rand/v2"
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
	dotCase[float32](t, d, r, lengths)
	dotCase[float64](t, d, r, lengths)
	dotCase[int32](t, d, r, lengths)
}

func dotCase[T Element](t *testing.T, d *Device, r *rand.Rand, lengths []int) {
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
