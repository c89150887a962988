package gemm

import (
	"math/rand/v2"
	"testing"
)

// TestInterleave checks the transpose behind packing (assembly blocks and
// the loops that finish them) against its definition, for every row count up
// to the panel height, k lengths around the blocks' 4 and 8, and row strides
// longer than the rows, with the output prefilled with garbage.
func TestInterleave(t *testing.T) {
	testInterleave[float32](t)
	testInterleave[float64](t)
	testInterleave[int32](t)
}

func testInterleave[T Element](t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 5))
	for _, height := range []int{4, 6, 8, 12, 16, 32} {
		for rows := 0; rows <= height; rows++ {
			for _, kc := range []int{0, 1, 3, 4, 5, 7, 8, 9, 16, 17, 33} {
				ld := kc + r.IntN(5)
				src := make([]T, max(0, rows-1)*ld+kc)
				for i := range src {
					src[i] = T(r.IntN(1000) - 500)
				}
				dst := make([]T, kc*height+3)
				for i := range dst {
					dst[i] = 7777
				}
				interleave(dst, height, src, ld, rows, kc)
				for p := range kc {
					for i := range height {
						want := T(0)
						if i < rows {
							want = src[i*ld+p]
						}
						if got := dst[p*height+i]; got != want {
							t.Fatalf("%T height %d rows %d kc %d ld %d: dst[%d*%d+%d] = %v, want %v", want, height, rows, kc, ld, p, height, i, got, want)
						}
					}
				}
				for _, x := range dst[kc*height:] {
					if x != 7777 {
						t.Fatalf("height %d rows %d kc %d: wrote past the panel", height, rows, kc)
					}
				}
			}
		}
	}
}
