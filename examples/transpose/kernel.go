package main

//go:generate go run github.com/goamp/goamp/cmd/goampgen

import "github.com/goamp/goamp/amp"

// tile is the side of a tile: tile x tile threads, one element each.
const tile = 16

// transpose writes the transpose of in to out, through tile_static memory
// so that both the reads of in and the writes of out go along rows: a tile
// reads a tile x tile block of in row by row, waits at the barrier, and
// writes the block's transpose to out row by row. The extra column keeps
// the threads of a warp, which read down a column of the block, on
// different banks of the GPU's shared memory.
//
// The domain is in's extent padded to whole tiles; threads outside in load
// nothing and store nothing, but still wait at the barrier.
//
//goamp:kernel tile=16,16
func transpose(t amp.TiledIndex, in, out *amp.ArrayView[float32]) {
	block := amp.TileStatic[float32](t, tile*(tile+1))
	rows, cols := in.Extent().At(0), in.Extent().At(1)
	r, c := t.Local.At(0), t.Local.At(1)
	if i, j := t.Global.At(0), t.Global.At(1); i < rows && j < cols {
		block[r*(tile+1)+c] = in.At2(i, j)
	}
	t.Barrier.Wait()
	// The block's (c, r) element goes to out at the tile's mirror image.
	i, j := t.TileOrigin.At(1)+r, t.TileOrigin.At(0)+c
	if i < cols && j < rows {
		out.Set2(i, j, block[c*(tile+1)+r])
	}
}
