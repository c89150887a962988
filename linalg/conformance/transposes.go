package conformance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/reference"
)

// GemmFunc computes C = alpha*op(A)*op(B) + beta*C, op(X) being X or, when
// its flag is set, X's transpose (A stored K x M, B stored N x K), for
// rank-2 views or rank-3 batches of them, as linalg.MatMul does with
// Options.TransA and TransB.
type GemmFunc[T amp.Element] func(transA, transB bool, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error

// transposeShapes are the shapes TestMatMulTransposes runs each transpose
// on: the edge cases of MatMulShapes, sizes no tile divides, sizes that
// are multiples of 4 (so that every operand's rows can be read 16 bytes at
// a time), a K long enough for a GPU kernel to split it across blocks of
// few tiles, and more than 8 rows of 128 (a GPU kernel's grouped block
// order then has a second group).
var transposeShapes = []Shape{{1, 1, 1}, {1, 7, 5}, {6, 1, 9}, {5, 3, 1}, {4, 3, 0}, {17, 19, 23}, {64, 33, 47}, {130, 129, 131},
	{64, 128, 96}, {132, 68, 520}, {1100, 40, 20}}

// TestMatMulTransposes runs mm with each of the four transposes (nn, nt,
// tn, tt) over odd shapes, reading each transposed operand where it lies,
// with C poisoned where beta is 0.
func TestMatMulTransposes[T amp.Element](t *testing.T, mm GemmFunc[T]) {
	seed := runSeed(t)
	for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		for _, sh := range transposeShapes {
			for _, sc := range []scalarCase{{1, 0}, {-1.5, 0.5}} {
				name := fmt.Sprintf("%s/%dx%dx%d/alpha=%g,beta=%g", transName(tr[0], tr[1]), sh.M, sh.N, sh.K, sc.alpha, sc.beta)
				t.Run(name, func(t *testing.T) {
					runCase(t, seed, func(r *rand.Rand) error { return checkProducts(r, mm, tr[0], tr[1], 0, sh, sc) })
				})
			}
		}
	}
}

// TestMatMulBatched runs mm on rank-3 views: batches of products in one
// call, the views sections of larger arrays (so that the matrices and
// their rows lie apart in memory), each product checked on its own, and
// batches whose lengths differ refused. With transposes, the batches run
// with both operands transposed too.
func TestMatMulBatched[T amp.Element](t *testing.T, mm GemmFunc[T], transposes bool) {
	seed := runSeed(t)
	trs := [][2]bool{{false, false}}
	if transposes {
		trs = append(trs, [2]bool{false, true}, [2]bool{true, false}, [2]bool{true, true})
	}
	for i, tr := range trs {
		for j, sh := range []Shape{{1, 1, 1}, {5, 7, 3}, {33, 17, 29}, {3, 4, 0}, {8, 12, 16}} {
			for _, batch := range []int{1, 3} {
				// C poisoned (beta = 0), C read, and A and B not read
				// (alpha = 0), in turn.
				sc := []scalarCase{{-1.5, 0.5}, {1, 0}, {0, 2}}[(i+j+batch)%3]
				name := fmt.Sprintf("%s/%dx%dx%d/batch=%d/alpha=%g,beta=%g", transName(tr[0], tr[1]), sh.M, sh.N, sh.K, batch, sc.alpha, sc.beta)
				t.Run(name, func(t *testing.T) {
					runCase(t, seed, func(r *rand.Rand) error {
						return checkProducts(r, mm, tr[0], tr[1], batch, sh, sc)
					})
				})
			}
		}
	}
	t.Run("an empty batch", func(t *testing.T) {
		a, _ := amp.NewArrayView(amp.Extent3(0, 4, 5), []T{})
		b, _ := amp.NewArrayView(amp.Extent3(0, 5, 6), []T{})
		c, _ := amp.NewArrayView(amp.Extent3(0, 4, 6), []T{})
		if err := mm(false, false, 1, a, b, 0, c); err != nil {
			t.Errorf("a batch of no products: %v, want nothing done", err)
		}
	})
	t.Run("batches of different lengths are refused", func(t *testing.T) {
		a, _ := amp.NewArrayView(amp.Extent3(2, 3, 4), make([]T, 24))
		b, _ := amp.NewArrayView(amp.Extent3(3, 4, 5), make([]T, 60))
		c, _ := amp.NewArrayView(amp.Extent3(2, 3, 5), make([]T, 30))
		if err := mm(false, false, 1, a, b, 0, c); err == nil {
			t.Error("no error")
		}
	})
}

func transName(transA, transB bool) string {
	n := []byte("nn")
	if transA {
		n[0] = 't'
	}
	if transB {
		n[1] = 't'
	}
	return string(n)
}

// checkProducts runs one call of batch products (batch 0: rank-2 views) of
// shape sh on fresh random operands stored as the transposes say, and
// compares each product with the reference of op(A)*op(B). For a batch,
// the operands are sections of arrays one larger in every dimension, and
// the part of C's array outside the section must be left as it was.
func checkProducts[T amp.Element](r *rand.Rand, mm GemmFunc[T], transA, transB bool, batch int, sh Shape, sc scalarCase) error {
	rowsA, colsA := sh.M, sh.K
	if transA {
		rowsA, colsA = sh.K, sh.M
	}
	rowsB, colsB := sh.K, sh.N
	if transB {
		rowsB, colsB = sh.N, sh.K
	}
	nb, pad := max(batch, 1), 0
	if batch > 0 {
		pad = 1
	}
	// The whole arrays, (nb+pad) x (rows+pad) x (cols+pad); the operands
	// are their sections at (pad, pad, pad).
	type operand struct {
		data       []T
		rows, cols int
	}
	alloc := func(rows, cols int) operand {
		return operand{reference.RandomSlice[T](r, (nb+pad)*(rows+pad)*(cols+pad)), rows, cols}
	}
	oa, ob, oc := alloc(rowsA, colsA), alloc(rowsB, colsB), alloc(sh.M, sh.N)
	at := func(o operand, b, i, j int) int {
		return ((b+pad)*(o.rows+pad)+i+pad)*(o.cols+pad) + j + pad
	}
	if sc.beta == 0 {
		for b := range nb {
			for i := range sh.M {
				for j := range sh.N {
					oc.data[at(oc, b, i, j)] = poison[T]()
				}
			}
		}
	}
	c0 := slices.Clone(oc.data)
	view := func(o operand) (*amp.ArrayView[T], error) {
		if batch == 0 {
			return amp.NewArrayView(amp.Extent2(o.rows, o.cols), o.data)
		}
		whole, err := amp.NewArrayView(amp.Extent3(nb+pad, o.rows+pad, o.cols+pad), o.data)
		if err != nil {
			return nil, err
		}
		return whole.Section(amp.Index3(pad, pad, pad), amp.Extent3(nb, o.rows, o.cols))
	}
	av, err := view(oa)
	if err != nil {
		return err
	}
	bv, err := view(ob)
	if err != nil {
		return err
	}
	cv, err := view(oc)
	if err != nil {
		return err
	}
	alpha, beta := T(sc.alpha), T(sc.beta)
	if err := mm(transA, transB, alpha, av, bv, beta, cv); err != nil {
		return err
	}
	if err := cv.Synchronize(); err != nil {
		return fmt.Errorf("synchronize C: %w", err)
	}
	tol := reference.Tolerance[T](sh.K)
	inside := make([]bool, len(oc.data))
	for b := range nb {
		// op(A), op(B) and C of product b, row-major, for the reference.
		opA, opB := make([]T, sh.M*sh.K), make([]T, sh.K*sh.N)
		for i := range sh.M {
			for k := range sh.K {
				if transA {
					opA[i*sh.K+k] = oa.data[at(oa, b, k, i)]
				} else {
					opA[i*sh.K+k] = oa.data[at(oa, b, i, k)]
				}
			}
		}
		for k := range sh.K {
			for j := range sh.N {
				if transB {
					opB[k*sh.N+j] = ob.data[at(ob, b, j, k)]
				} else {
					opB[k*sh.N+j] = ob.data[at(ob, b, k, j)]
				}
			}
		}
		was, got := make([]T, sh.M*sh.N), make([]T, sh.M*sh.N)
		for i := range sh.M {
			for j := range sh.N {
				p := at(oc, b, i, j)
				was[i*sh.N+j], got[i*sh.N+j], inside[p] = c0[p], oc.data[p], true
			}
		}
		for i, e := range reference.MatMulErrors(sh.M, sh.N, sh.K, alpha, opA, opB, beta, was, got) {
			if e > tol || math.IsNaN(e) {
				return fmt.Errorf("%s %dx%dx%d alpha=%g beta=%g, product %d of %d: C[%d][%d] = %v, off by %.3g relative to the magnitude of its terms (tolerance %.3g)",
					transName(transA, transB), sh.M, sh.N, sh.K, sc.alpha, sc.beta, b, nb, i/sh.N, i%sh.N, got[i], e, tol)
			}
		}
	}
	for p, in := range inside {
		if !in && !sameBits(oc.data[p], c0[p]) {
			return fmt.Errorf("%s %dx%dx%d: element %d of C's array, outside the view, changed from %v to %v",
				transName(transA, transB), sh.M, sh.N, sh.K, p, c0[p], oc.data[p])
		}
	}
	return nil
}

// sameBits reports whether x and y are the same value, NaN equal to NaN.
func sameBits[T amp.Element](x, y T) bool { return x == y || (x != x && y != y) }
