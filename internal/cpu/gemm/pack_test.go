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

// TestCopyPieces checks the fixed-size copies behind packing a transposed A
// against their definition, for each piece size they handle and one they
// leave to the caller.
func TestCopyPieces(t *testing.T) {
	testCopyPieces[float32](t, []int{6, 12}, 5)
	testCopyPieces[float64](t, []int{3, 6, 12}, 5)
	testCopyPieces[int32](t, []int{6, 12}, 7)
}

func testCopyPieces[T Element](t *testing.T, widths []int, unhandled int) {
	for _, w := range append(widths, unhandled) {
		for _, count := range []int{0, 1, 2, 9} {
			ld := w + 3
			src := make([]T, max(0, count-1)*ld+w)
			for i := range src {
				src[i] = T(i + 1)
			}
			dst := make([]T, count*w+1)
			dst[len(dst)-1] = -1
			ok := copyPieces(dst, src, ld, count, w)
			if ok != (w != unhandled) {
				t.Fatalf("%T width %d: copyPieces says %v", src[0], w, ok)
			}
			if !ok {
				continue
			}
			for p := range count {
				for i := range w {
					if dst[p*w+i] != src[p*ld+i] {
						t.Fatalf("%T width %d count %d: dst[%d] = %v, want %v", src[0], w, count, p*w+i, dst[p*w+i], src[p*ld+i])
					}
				}
			}
			if dst[len(dst)-1] != -1 {
				t.Fatalf("%T width %d count %d: wrote past the pieces", src[0], w, count)
			}
		}
	}
}

// TestCopyRows checks the assembly row copies behind packing an
// untransposed B and a transposed A against their definition, where this
// build has them.
func TestCopyRows(t *testing.T) {
	testCopyRows[float32](t, 12, 16, 24, 32)
	testCopyRows[float64](t, 6, 8, 12, 16)
}

func testCopyRows[T Element](t *testing.T, widths ...int) {
	for _, w := range widths {
		for _, count := range []int{0, 1, 2, 17, 40} {
			ld := w + 5
			src := make([]T, max(0, count-1)*ld+w)
			for i := range src {
				src[i] = T(i + 1)
			}
			dst := make([]T, count*w+1)
			dst[len(dst)-1] = -1
			if !copyRows(dst, src, ld, count, w) {
				continue // left to the loops on this build
			}
			for p := range count {
				for i := range w {
					if dst[p*w+i] != src[p*ld+i] {
						t.Fatalf("%T width %d count %d: dst[%d] = %v, want %v", src[0], w, count, p*w+i, dst[p*w+i], src[p*ld+i])
					}
				}
			}
			if dst[len(dst)-1] != -1 {
				t.Fatalf("%T width %d count %d: wrote past the rows", src[0], w, count)
			}
		}
	}
}
