package conformance

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
)

// correct is a plain, right matrix multiply to contrast the broken ones with.
func correct[T amp.Element](alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error {
	m, n, k := c.Extent().At(0), c.Extent().At(1), a.Extent().At(1)
	if alpha == 0 {
		k = 0 // A and B are not read
	}
	for i := range m {
		for j := range n {
			var s T
			for p := range k {
				s += a.At2(i, p) * b.At2(p, j)
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

// TestSuiteCatchesBrokenKernels makes sure the suite can fail: each broken
// kernel must be caught by some case, and the correct one by none.
func TestSuiteCatchesBrokenKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	broken := map[string]MatMulFunc[float32]{
		"skips the last column": func(alpha float32, a, b *amp.ArrayView[float32], beta float32, c *amp.ArrayView[float32]) error {
			n := c.Extent().At(1)
			if n == 0 {
				return nil
			}
			sec, _ := c.Section(amp.Index2(0, 0), amp.Extent2(c.Extent().At(0), n-1))
			ap, _ := a.Section(amp.Index2(0, 0), a.Extent())
			bp, _ := b.Section(amp.Index2(0, 0), amp.Extent2(b.Extent().At(0), n-1))
			return correct(alpha, ap, bp, beta, sec)
		},
		"reads C when beta is 0": func(alpha float32, a, b *amp.ArrayView[float32], beta float32, c *amp.ArrayView[float32]) error {
			if beta == 0 {
				beta = 1e-30 // reads C, and so lets the NaN it holds through
			}
			return correct(alpha, a, b, beta, c)
		},
		"drops the last k": func(alpha float32, a, b *amp.ArrayView[float32], beta float32, c *amp.ArrayView[float32]) error {
			k := a.Extent().At(1)
			if k == 0 {
				return correct(alpha, a, b, beta, c)
			}
			as, _ := a.Section(amp.Index2(0, 0), amp.Extent2(a.Extent().At(0), k-1))
			bs, _ := b.Section(amp.Index2(0, 0), amp.Extent2(k-1, b.Extent().At(1)))
			return correct(alpha, as, bs, beta, c)
		},
		"reads A and B when alpha is 0": func(alpha float32, a, b *amp.ArrayView[float32], beta float32, c *amp.ArrayView[float32]) error {
			m, n, k := c.Extent().At(0), c.Extent().At(1), a.Extent().At(1)
			for i := range m {
				for j := range n {
					var s float32
					for p := range k {
						s += a.At2(i, p) * b.At2(p, j)
					}
					v := alpha * s // NaN*0 is NaN
					if beta != 0 {
						v += beta * c.At2(i, j)
					}
					c.Set2(i, j, v)
				}
			}
			return nil
		},
		"ignores alpha": func(alpha float32, a, b *amp.ArrayView[float32], beta float32, c *amp.ArrayView[float32]) error {
			return correct(1, a, b, beta, c)
		},
		"accumulates in float16-like precision": func(alpha float32, a, b *amp.ArrayView[float32], beta float32, c *amp.ArrayView[float32]) error {
			if err := correct(alpha, a, b, beta, c); err != nil {
				return err
			}
			m, n := c.Extent().At(0), c.Extent().At(1)
			for i := range m {
				for j := range n {
					c.Set2(i, j, c.At2(i, j)*(1+1.0/1024))
				}
			}
			return nil
		},
	}
	for name, mm := range broken {
		caught := false
		for _, sh := range MatMulShapes(false) {
			for _, sc := range scalarCases {
				if checkMatMul(r, mm, sh, sc, nil) != nil {
					caught = true
				}
			}
		}
		if checkAlphaZero(r, mm, []Shape{{1, 1, 1}, {19, 23, 17}, {33, 1, 5}}) != nil {
			caught = true
		}
		if !caught {
			t.Errorf("the suite passed a kernel that %s", name)
		}
	}
	for _, sh := range MatMulShapes(false) {
		for _, sc := range scalarCases {
			if err := checkMatMul(r, correct[float32], sh, sc, nil); err != nil {
				t.Errorf("the suite failed a correct kernel: %v", err)
			}
		}
	}
	if err := checkSpecialValues(r, correct[float64], Shape{19, 23, 17}); err != nil {
		t.Errorf("NaN/Inf case failed a correct kernel: %v", err)
	}
	if err := checkAlphaZero(r, correct[float64], []Shape{{1, 1, 1}, {19, 23, 17}, {33, 1, 5}}); err != nil {
		t.Errorf("alpha = 0 case failed a correct kernel: %v", err)
	}
}

func TestSuiteCatchesBrokenDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	good := func(x, y *amp.ArrayView[float64]) (float64, error) {
		var s float64
		for i := range x.Extent().At(0) {
			s += x.At1(i) * y.At1(i)
		}
		return s, nil
	}
	calls := 0
	flaky := func(x, y *amp.ArrayView[float64]) (float64, error) {
		calls++
		s, err := good(x, y)
		return s + float64(calls%2)*1e-15, err // differs from call to call
	}
	skipLast := func(x, y *amp.ArrayView[float64]) (float64, error) {
		n := x.Extent().At(0)
		if n == 0 {
			return 0, nil
		}
		xs, _ := x.Section(amp.Index1(0), amp.Extent1(n-1))
		return good(xs, ys(y, n-1))
	}
	if err := checkDot(r, good, 1031, nil); err != nil {
		t.Errorf("correct dot failed: %v", err)
	}
	if err := checkDot(r, flaky, 1031, nil); err == nil || !strings.Contains(err.Error(), "same inputs") {
		t.Errorf("a dot that changes from run to run passed: %v", err)
	}
	if err := checkDot(r, skipLast, 1031, nil); err == nil {
		t.Error("a dot that skips the last element passed")
	}
	// A float32 dot that forgets its grid-stride loop and sums only the
	// first 16384 terms: the tolerance must not be so wide that it passes.
	noStride := func(x, y *amp.ArrayView[float32]) (float32, error) {
		var s float32
		for i := range min(16384, x.Extent().At(0)) {
			s += x.At1(i) * y.At1(i)
		}
		return s, nil
	}
	for _, n := range []int{65537, 300007} {
		if err := checkDot(r, noStride, n, nil); err == nil {
			t.Errorf("n=%d: a float32 dot that drops all but 16384 terms passed", n)
		}
	}
}

// TestSuiteCatchesInexactInt32 checks that int32 results are held to exact
// wrapping arithmetic, even where float64 could not hold the true product.
func TestSuiteCatchesInexactInt32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	viaFloat := func(alpha int32, a, b *amp.ArrayView[int32], beta int32, c *amp.ArrayView[int32]) error {
		m, n, k := c.Extent().At(0), c.Extent().At(1), a.Extent().At(1)
		for i := range m {
			for j := range n {
				var s float64
				for p := range k {
					s += float64(a.At2(i, p)) * float64(b.At2(p, j))
				}
				c.Set2(i, j, int32(int64(float64(alpha)*s+float64(beta)*float64(c.At2(i, j)))))
			}
		}
		return nil
	}
	sh := Shape{M: 17, N: 13, K: 29}
	if err := checkMatMul(r, viaFloat, sh, scalarCase{3, -1}, fillInt32[int32](r)); err == nil {
		t.Error("an int32 multiply through float64 passed on full-range values")
	}
	if err := checkMatMul(r, correct[int32], sh, scalarCase{3, -1}, fillInt32[int32](r)); err != nil {
		t.Errorf("a correct int32 multiply failed on full-range values: %v", err)
	}
}

func ys(y *amp.ArrayView[float64], n int) *amp.ArrayView[float64] {
	s, _ := y.Section(amp.Index1(0), amp.Extent1(n))
	return s
}
