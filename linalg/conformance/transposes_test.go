package conformance

import (
	"math/rand/v2"
	"testing"

	"github.com/goamp/goamp/amp"
)

// correctGemm is a plain, right product with transposes and batches, to
// contrast the broken ones with.
func correctGemm[T amp.Element](transA, transB bool, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error {
	if c.Extent().Rank() == 3 {
		if a.Extent().At(0) != c.Extent().At(0) || b.Extent().At(0) != c.Extent().At(0) {
			return amp.ErrInvalidExtent
		}
		for i := range c.Extent().At(0) {
			ai, _ := a.Projection(i)
			bi, _ := b.Projection(i)
			ci, _ := c.Projection(i)
			if err := correctGemm(transA, transB, alpha, ai, bi, beta, ci); err != nil {
				return err
			}
		}
		return nil
	}
	m, n := c.Extent().At(0), c.Extent().At(1)
	k := a.Extent().At(1)
	if transA {
		k = a.Extent().At(0)
	}
	for i := range m {
		for j := range n {
			var s T
			for p := range k {
				ai, ak := i, p
				if transA {
					ai, ak = p, i
				}
				bk, bj := p, j
				if transB {
					bk, bj = j, p
				}
				s += a.At2(ai, ak) * b.At2(bk, bj)
			}
			v := alpha * s
			if beta != 0 {
				v += beta * c.At2(i, j)
			}
			c.Set2(i, j, v)
		}
	}
	return nil
}

// TestSuiteCatchesBrokenGemms: kernels that ignore a transpose or part of
// a batch must fail, and the correct one must pass.
func TestSuiteCatchesBrokenGemms(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// The small shapes: the plain products here are slow, more so under
	// the race detector, and the large ones add nothing to what they show.
	transposeShapes := smallTransposeShapes()
	broken := map[string]GemmFunc[float64]{
		// Where B is not square it indexes out of B: the panic is turned
		// into an error, as a refusal would be.
		"ignores TransB": func(transA, _ bool, alpha float64, a, b *amp.ArrayView[float64], beta float64, c *amp.ArrayView[float64]) (err error) {
			defer func() {
				if recover() != nil {
					err = amp.ErrInvalidExtent
				}
			}()
			return correctGemm(transA, false, alpha, a, b, beta, c)
		},
		"computes only the first product of a batch": func(transA, transB bool, alpha float64, a, b *amp.ArrayView[float64], beta float64, c *amp.ArrayView[float64]) error {
			if c.Extent().Rank() == 3 && c.Extent().At(0) > 0 {
				ai, _ := a.Projection(0)
				bi, _ := b.Projection(0)
				ci, _ := c.Projection(0)
				return correctGemm(transA, transB, alpha, ai, bi, beta, ci)
			}
			return correctGemm(transA, transB, alpha, a, b, beta, c)
		},
		"gets the last element of the last product wrong": func(transA, transB bool, alpha float64, a, b *amp.ArrayView[float64], beta float64, c *amp.ArrayView[float64]) error {
			if err := correctGemm(transA, transB, alpha, a, b, beta, c); err != nil {
				return err
			}
			if e := c.Extent(); e.Rank() == 3 && e.Size() > 0 {
				last, _ := c.Projection(e.At(0) - 1)
				last.Set2(e.At(1)-1, e.At(2)-1, last.At2(e.At(1)-1, e.At(2)-1)+1)
			}
			return nil
		},
	}
	for name, mm := range broken {
		caught := false
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			for _, sh := range transposeShapes {
				if checkProducts(r, mm, tr[0], tr[1], 0, sh, scalarCase{-1.5, 0.5}) != nil {
					caught = true
				}
				if checkProducts(r, mm, tr[0], tr[1], 3, sh, scalarCase{1, 0}) != nil {
					caught = true
				}
			}
		}
		if !caught {
			t.Errorf("the suite passed a kernel that %s", name)
		}
	}
	for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		for _, sh := range transposeShapes {
			for _, batch := range []int{0, 1, 3} {
				if err := checkProducts(r, correctGemm[float64], tr[0], tr[1], batch, sh, scalarCase{-1.5, 0.5}); err != nil {
					t.Errorf("the suite failed a correct kernel: %v", err)
				}
			}
		}
	}
}

// smallTransposeShapes are the shapes of transposeShapes with at most
// 100,000 multiply-adds.
func smallTransposeShapes() []Shape {
	var out []Shape
	for _, sh := range transposeShapes {
		if sh.M*sh.N*sh.K <= 100000 {
			out = append(out, sh)
		}
	}
	return out
}
