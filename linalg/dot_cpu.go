package linalg

import (
	"math/bits"

	"github.com/goamp/goamp/amp"
)

// maxDotTiles caps the tiles of the tiled dot product, as the dot product of
// CUDA by Example (Sanders & Kandrot, ch. 5) caps its grid at 32 blocks: each thread then strides over the vector. A fixed number
// (rather than one that follows the core count) keeps the order of the
// additions, and so the result, the same on every machine.
const maxDotTiles = 64

func init() {
	registerDot(KernelInfo{Name: "naive", Accelerator: amp.KindCPU,
		Description: "sequential loop on one goroutine"},
		naiveDot[float32], naiveDot[float64], naiveDot[int32])
	registerDot(KernelInfo{Name: "tiled", Accelerator: amp.KindCPU, DefaultTile: 256, MaxTile: amp.MaxTileThreads,
		Description: "grid-stride partial sums, tree reduction in tile_static memory, one partial a tile"},
		tiledDot[float32], tiledDot[float64], tiledDot[int32])
}

func naiveDot[T amp.Element](_ *amp.AcceleratorView, x, y *amp.ArrayView[T], _ int) (T, error) {
	var sum T
	for i := range x.Extent().At(0) {
		sum += x.At1(i) * y.At1(i)
	}
	return sum, nil
}

// tiledDot is the shared-memory tree reduction of CUDA by Example's dot
// product (ch. 5): tiles of ts threads; each thread sums
// x[i]*y[i] over a grid-stride loop into its slot of tile-static memory; the
// tile halves the slots it adds until one is left, waiting after each
// halving; thread 0 writes the tile's partial; the partials are added in
// tile order.
func tiledDot[T amp.Element](v *amp.AcceleratorView, x, y *amp.ArrayView[T], ts int) (T, error) {
	n := x.Extent().At(0)
	if n == 0 {
		return 0, nil
	}
	tiles := min(maxDotTiles, (n+ts-1)/ts)
	stride := tiles * ts
	partial := make([]T, tiles)
	// The first halving step is the largest power of two below ts, so that
	// tiles of any size reduce: a slot adds its partner only if it exists.
	top := 0
	if ts > 1 {
		top = 1 << (bits.Len(uint(ts-1)) - 1)
	}
	err := v.ParallelForEachTiled(amp.Extent1(stride).Tile(ts), func(t amp.TiledIndex) {
		cache := amp.TileStatic[T](t, ts)
		me := t.Local.At(0)
		var sum T
		for i := t.Global.At(0); i < n; i += stride {
			sum += x.At1(i) * y.At1(i)
		}
		cache[me] = sum
		t.Barrier.Wait()
		for half := top; half > 0; half /= 2 {
			if me < half && me+half < ts {
				cache[me] += cache[me+half]
			}
			t.Barrier.Wait()
		}
		if me == 0 {
			partial[t.Tile.At(0)] = cache[0]
		}
	})
	if err != nil {
		return 0, err
	}
	var sum T
	for _, p := range partial {
		sum += p
	}
	return sum, nil
}
