package amp_test

import (
	"fmt"

	"github.com/goamp/goamp/amp"
)

// Doubling every element of a matrix: one kernel call per element.
func ExampleParallelForEach() {
	data := []float32{1, 2, 3, 4, 5, 6}
	m, err := amp.NewArrayView(amp.Extent2(2, 3), data)
	if err != nil {
		panic(err)
	}
	err = amp.ParallelForEach(m.Extent(), func(idx amp.Index) {
		m.Set(idx, 2*m.At(idx))
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(data)
	// Output: [2 4 6 8 10 12]
}

// Summing each 2x2 tile into its top-left corner, after the tile_static
// example of "Using Tiles" in Microsoft's C++ AMP documentation: every
// thread copies its element into tile_static memory, the tile waits at the
// barrier, and thread (0, 0) adds the four.
func ExampleParallelForEachTiled() {
	data := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	av, err := amp.NewArrayView(amp.Extent2(2, 6), data)
	if err != nil {
		panic(err)
	}
	err = amp.ParallelForEachTiled(av.Extent().Tile(2, 2), func(t amp.TiledIndex) {
		tile := amp.TileStatic[int32](t, 4)
		tile[t.Local.At(0)*2+t.Local.At(1)] = av.At(t.Global)
		t.Barrier.Wait()
		if t.Local == amp.Index2(0, 0) {
			av.Set(t.TileOrigin, tile[0]+tile[1]+tile[2]+tile[3])
		}
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(data[0], data[2], data[4])
	// Output: 18 26 34
}

// An extent that the tiles do not divide is an error unless the caller pads
// (and then guards) or truncates.
func ExampleTiledExtent_Pad() {
	ext := amp.Extent1(10)
	fmt.Println(amp.ParallelForEachTiled(ext.Tile(4), func(amp.TiledIndex) {}))
	padded := ext.Tile(4).Pad()
	fmt.Println(padded.Extent(), padded.Tiles())
	// Output:
	// amp: invalid compute domain: tile [4] does not divide extent [10] (use Pad or Truncate)
	// [12] [3]
}
