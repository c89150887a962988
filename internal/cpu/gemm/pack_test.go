package gemm

import (
	"math/rand/v2"
	"slices"
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
			// 16 and up: AVX-512's 16 x 16 float32 blocks (17 to 76 past
			// a multiple of 16: the last block overlapping the one before
			// it); 8 and up its 8 x 8 float64 ones (likewise 9 to 76).
			for _, kc := range []int{0, 1, 3, 4, 5, 7, 8, 9, 12, 16, 17, 20, 24, 33, 40, 48, 76} {
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
	testStridedCopy(t, copyPieces[float32], []int{6, 12}, 5, true)
	testStridedCopy(t, copyPieces[float64], []int{3, 6, 12}, 5, true)
	testStridedCopy(t, copyPieces[int32], []int{6, 12}, 7, true)
}

// TestCopyRows checks the assembly row copies behind packing an
// untransposed B and a transposed A against their definition, where this
// build has them (elsewhere it declines every width).
func TestCopyRows(t *testing.T) {
	asm := copyRows(make([]float32, 12), make([]float32, 12), 12, 1, 12)
	testStridedCopy(t, copyRows[float32], []int{12, 16, 24, 32}, 5, asm)
	testStridedCopy(t, copyRows[float64], []int{6, 8, 12, 16}, 5, asm)
}

// testStridedCopy checks a copy of count pieces of w elements, ld apart, into
// consecutive pieces: that it declines width unhandled, takes the widths
// (if takes), and writes exactly the pieces.
func testStridedCopy[T Element](t *testing.T, copier func(dst, src []T, ld, count, w int) bool, widths []int, unhandled int, takes bool) {
	for _, w := range append(widths, unhandled) {
		for _, count := range []int{0, 1, 2, 9, 40} {
			ld := w + 3
			src := make([]T, max(0, count-1)*ld+w)
			for i := range src {
				src[i] = T(i + 1)
			}
			dst := make([]T, count*w+1)
			dst[len(dst)-1] = -1
			ok := copier(dst, src, ld, count, w)
			if w == unhandled && ok {
				t.Fatalf("%T width %d: took a width it should leave", src[0], w)
			}
			if w != unhandled && takes && !ok {
				t.Fatalf("%T width %d: declined a width it should take", src[0], w)
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

// TestPadPieces checks the copies behind packing B's last, narrower panel
// against their definition: each width they take (a multiple of 16 bytes,
// with a multiple of 16 bytes of zeros after it in a row of r) copied and
// padded over old contents, nothing written past the rows, and the widths
// they leave declined.
func TestPadPieces(t *testing.T) {
	testPadPieces[float32](t, 32, []int{4, 8, 12, 16, 20, 24, 28}, []int{0, 1, 2, 6, 30, 31, 32})
	testPadPieces[float64](t, 16, []int{2, 4, 6, 8, 10, 12, 14}, []int{0, 1, 3, 15, 16})
	testPadPieces[int32](t, 32, []int{4, 16, 28}, []int{5, 32})
}

func testPadPieces[T Element](t *testing.T, r int, takes, leaves []int) {
	for _, w := range append(append([]int{}, takes...), leaves...) {
		want := slices.Contains(takes, w)
		for _, count := range []int{0, 1, 3, 48} {
			ld := w + 5
			src := make([]T, max(0, count-1)*ld+w)
			for i := range src {
				src[i] = T(i + 1)
			}
			dst := make([]T, count*r+1)
			for i := range dst {
				dst[i] = 99 // old contents, to be overwritten with the pieces and zeros
			}
			if got := padPieces(dst, r, src, ld, count, w); got != want {
				t.Fatalf("%T width %d of %d: padPieces took it = %v, want %v", src[0], w, r, got, want)
			}
			if !want {
				continue
			}
			for p := range count {
				for i := range r {
					x := T(0)
					if i < w {
						x = src[p*ld+i]
					}
					if dst[p*r+i] != x {
						t.Fatalf("%T width %d of %d, count %d: dst[%d*%d+%d] = %v, want %v", src[0], w, r, count, p, r, i, dst[p*r+i], x)
					}
				}
			}
			if dst[count*r] != 99 {
				t.Fatalf("%T width %d of %d, count %d: wrote past the rows", src[0], w, r, count)
			}
		}
	}
}
