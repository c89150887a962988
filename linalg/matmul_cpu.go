package linalg

import "github.com/goamp/goamp/amp"

func init() {
	registerMatMul(KernelInfo{Name: "naive", Accelerator: amp.KindCPU,
		Description: "sequential triple loop on one goroutine (MultiplyWithOutAMP)"},
		naiveMatMul[float32], naiveMatMul[float64], naiveMatMul[int32])
	registerMatMul(KernelInfo{Name: "simple", Accelerator: amp.KindCPU,
		Description: "parallel_for_each, one thread per element of C (MultiplyWithAMP)"},
		simpleMatMul[float32], simpleMatMul[float64], simpleMatMul[int32])
	// On the CPU a barrier costs a coroutine switch per thread, so fewer,
	// longer steps win: 32x32 tiles ran 1.4x as fast as 16x16 at n = 256
	// (docs/PERFORMANCE.md).
	registerMatMul(KernelInfo{Name: "tiled", Accelerator: amp.KindCPU, DefaultTile: 32, MaxTile: 32,
		Description: "tile_static tiles of A and B, two barriers a step, bounds-checked loads (MultiplyWithTiling)"},
		tiledMatMul[float32], tiledMatMul[float64], tiledMatMul[int32])
}

// scaleOnly sets C = beta*C (0 when beta is 0, whatever C held): the whole
// product when alpha is 0, which, as in BLAS, reads neither A nor B, so that
// NaN or Inf there does not reach C. Every kernel follows that rule.
func scaleOnly[T amp.Element](v *amp.AcceleratorView, beta T, c *amp.ArrayView[T]) error {
	return v.ParallelForEach(c.Extent(), func(idx amp.Index) {
		i, j := idx.At(0), idx.At(1)
		update(c, i, j, 0, 0, beta)
	})
}

// update stores alpha*sum + beta*C[i][j] into C[i][j], reading C only when
// beta is not zero.
func update[T amp.Element](c *amp.ArrayView[T], i, j int, alpha, sum, beta T) {
	v := alpha * sum
	if beta != 0 {
		v += beta * c.At2(i, j)
	}
	c.Set2(i, j, v)
}

// naiveMatMul is MultiplyWithOutAMP of the C++ AMP "Walkthrough: Matrix
// Multiplication" (Microsoft Learn): three nested loops, in order,
// on the calling goroutine.
func naiveMatMul[T amp.Element](_ *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], _ int) error {
	m, n, k := c.Extent().At(0), c.Extent().At(1), a.Extent().At(1)
	if alpha == 0 {
		k = 0 // A and B are not read (see scaleOnly)
	}
	for row := range m {
		for col := range n {
			var sum T
			for inner := range k {
				sum += a.At2(row, inner) * b.At2(inner, col)
			}
			update(c, row, col, alpha, sum, beta)
		}
	}
	return nil
}

// simpleMatMul is MultiplyWithAMP of the same walkthrough: parallel_for_each over C's
// extent, each thread computing one element from a row of A and a column of B.
func simpleMatMul[T amp.Element](v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], _ int) error {
	if alpha == 0 {
		return scaleOnly(v, beta, c)
	}
	k := a.Extent().At(1)
	return v.ParallelForEach(c.Extent(), func(idx amp.Index) {
		row, col := idx.At(0), idx.At(1)
		var sum T
		for inner := range k {
			sum += a.At2(row, inner) * b.At2(inner, col)
		}
		update(c, row, col, alpha, sum, beta)
	})
}

// tiledMatMul is the walkthrough's MultiplyWithTiling made to work for any
// shape, with the boundary checks of Kirk & Hwu, Programming Massively
// Parallel Processors (ch. 4, 3rd ed.; ch. 5, 4th ed.): C's extent is padded to whole tiles; in each step every
// thread loads one element of A's and one of B's tile into tile-static
// memory (0 where the element does not exist), the tile waits, each thread
// adds its row-times-column of the two tiles, and the tile waits again before
// the memory is overwritten. Only threads inside C store.
func tiledMatMul[T amp.Element](v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], ts int) error {
	if alpha == 0 {
		return scaleOnly(v, beta, c)
	}
	m, n, k := c.Extent().At(0), c.Extent().At(1), a.Extent().At(1)
	return v.ParallelForEachTiled(c.Extent().Tile(ts, ts).Pad(), func(t amp.TiledIndex) {
		locA := amp.TileStatic[T](t, ts*ts)
		locB := amp.TileStatic[T](t, ts*ts)
		row, col := t.Local.At(0), t.Local.At(1)
		gRow, gCol := t.Global.At(0), t.Global.At(1)
		var sum T
		for base := 0; base < k; base += ts {
			var x, y T
			if gRow < m && base+col < k {
				x = a.At2(gRow, base+col)
			}
			if base+row < k && gCol < n {
				y = b.At2(base+row, gCol)
			}
			locA[row*ts+col], locB[row*ts+col] = x, y
			t.Barrier.Wait()
			for i := range ts {
				sum += locA[row*ts+i] * locB[i*ts+col]
			}
			t.Barrier.Wait()
		}
		if gRow < m && gCol < n {
			update(c, gRow, gCol, alpha, sum, beta)
		}
	})
}
