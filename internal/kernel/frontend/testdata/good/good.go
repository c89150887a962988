// Package good holds kernels inside the subset, for the front end's tests.
package good

import "github.com/goamp/goamp/amp"

// Scale multiplies every element by s.
//
//goamp:kernel
func Scale(idx amp.Index, v *amp.ArrayView[float32], s float32) {
	v.Set(idx, s*v.At(idx))
}

const tile = 16

// Transpose writes in's transpose to out through a tile_static tile.
//
//goamp:kernel
func Transpose(t amp.TiledIndex, in, out *amp.ArrayView[float32]) {
	buf := amp.TileStatic[float32](t, tile*(tile+1))
	r, c := t.Local.At(0), t.Local.At(1)
	i, j := t.Global.At(0), t.Global.At(1)
	rows, cols := in.Extent().At(0), in.Extent().At(1)
	if i < rows && j < cols {
		buf[r*(tile+1)+c] = in.At2(i, j)
	}
	t.Barrier.Wait()
	oi, oj := t.TileOrigin.At(1)+r, t.TileOrigin.At(0)+c
	if oi < cols && oj < rows {
		out.Set2(oi, oj, buf[c*(tile+1)+r])
	}
}

// dot is the tiled dot product of seed 003.
//
//goamp:kernel regs[float64]=40
func dot[T amp.Element](t amp.TiledIndex, x, y, partial *amp.ArrayView[T], n int) {
	cache := amp.TileStatic[T](t, 256)
	me := t.Local.At(0)
	stride := t.TileExtent.At(0) * 256
	var sum T
	for i := t.Global.At(0); i < n; i += stride {
		sum += x.At1(i) * y.At1(i)
	}
	cache[me] = sum
	t.Barrier.Wait()
	for half := 128; half > 0; half /= 2 {
		if me < half {
			cache[me] += cache[me+half]
		}
		t.Barrier.Wait()
	}
	if me == 0 {
		partial.Set1(t.Tile.At(0), cache[0])
	}
}
