package linalg

//go:generate go run github.com/goamp/goamp/cmd/goampgen

import "github.com/goamp/goamp/amp"

// The kernels below are Go functions that goampgen compiles to PTX
// (goamp_kernels.go): C++ AMP's restrict(amp). The same function runs on the
// CPU, as Go, and on a CUDA GPU, as the PTX, through its generated launcher.
// They are the textbook kernels of the seeds written once in Go, registered
// for CUDA GPUs as the "go-" kernels beside their CUDA C twins, which use
// the same techniques and tiles.

// scaleKernel sets C = beta*C: the whole product when alpha is 0, which
// reads neither A nor B (see scaleOnly).
//
//goamp:kernel
func scaleKernel[T amp.Element](idx amp.Index, c *amp.ArrayView[T], beta T) {
	update(c, idx.At(0), idx.At(1), 0, 0, beta)
}

// simpleMatMulKernel is MultiplyWithAMP of the C++ AMP walkthrough: one
// thread per element of C, each reading a row of A and a column of B from
// global memory. A thread's Go ints are 64 bits, which take more registers
// than its twin matmul_naive.cu's 32-bit ints, and the register cap that
// suits it differs by type (measured on an H100, 2026-11-23,
// docs/PERFORMANCE.md): float64 runs best at the 32 nvcc gives the twin,
// as many threads at once as the twin (1.03 to 1.05 times the twin's time;
// 1.2 to 1.6 at 48), float32 at 48, where the compiler issues all of an
// iteration's loads before its multiply-adds (0.92 to 0.93; 1.16 at 32).
//
//goamp:kernel regs=32 regs[float32]=48
func simpleMatMulKernel[T amp.Element](idx amp.Index, a, b, c *amp.ArrayView[T], alpha, beta T) {
	row, col := idx.At(0), idx.At(1)
	k := a.Extent().At(1)
	var sum T
	for inner := 0; inner < k; inner++ {
		sum += a.At2(row, inner) * b.At2(inner, col)
	}
	update(c, row, col, alpha, sum, beta)
}

// tiledMatMulKernel16 and tiledMatMulKernel32 are the tiled multiply for
// any shape (seed 002: Kirk & Hwu's boundary checks) with 16x16 and 32x32
// tiles: tile_static sizes are fixed when a kernel is compiled, as TILE is
// in matmul_tiled.cu. Kernel time against matmul_tiled.cu of the same tile
// (H100, 2026-11-23, docs/PERFORMANCE.md): 0.99 to 1.03 times as long,
// both tiles and types.
//
//goamp:kernel tile=16,16
func tiledMatMulKernel16[T amp.Element](t amp.TiledIndex, a, b, c *amp.ArrayView[T], alpha, beta T) {
	tiledMatMulBody(t, a, b, c, alpha, beta, 16)
}

// tiledMatMulKernel32 is tiledMatMulKernel16 with 32x32 tiles. A tile
// is 1024 threads, half of what an H100 multiprocessor holds: blocks=2
// asks for two at once (32 registers a thread, as nvcc gives its twin);
// without it float32 took 1.4 to 1.75 times as long as the twin (H100,
// 2026-11-23).
//
//goamp:kernel tile=32,32 blocks=2
func tiledMatMulKernel32[T amp.Element](t amp.TiledIndex, a, b, c *amp.ArrayView[T], alpha, beta T) {
	tiledMatMulBody(t, a, b, c, alpha, beta, 32)
}

// exactTile is seed 000's tile size, TS.
const exactTile = 16

// exactTiledMatMulKernel is seed 000's tiled multiply (Moth, "C++ AMP:
// Introduction to Tiling", figure 5), TS = 16: each tile copies a TSxTS
// block of A and of B into tile_static memory, waits, adds its part of the
// product and waits again. As in the article every dimension must be a
// multiple of TS (linalg refuses other shapes), so no thread tests a
// bound: the views' own checks are the only ones, and the compiler proves
// them or keeps them.
//
//goamp:kernel tile=16,16
func exactTiledMatMulKernel[T amp.Element](t amp.TiledIndex, a, b, c *amp.ArrayView[T], alpha, beta T) {
	locA := amp.TileStatic[T](t, exactTile*exactTile)
	locB := amp.TileStatic[T](t, exactTile*exactTile)
	row, col := t.Local.At(0), t.Local.At(1)
	gRow, gCol := t.Global.At(0), t.Global.At(1)
	var sum T
	for i := 0; i < a.Extent().At(1); i += exactTile {
		locA[row*exactTile+col] = a.At2(gRow, col+i)
		locB[row*exactTile+col] = b.At2(row+i, gCol)
		t.Barrier.Wait()
		for k := 0; k < exactTile; k++ {
			sum += locA[row*exactTile+k] * locB[k*exactTile+col]
		}
		t.Barrier.Wait()
	}
	update(c, gRow, gCol, alpha, sum, beta)
}

// tiledMatMulBody is tiledMatMul's kernel with a tile size known when it is
// compiled: each step loads one element of A's tile and one of B's into
// tile_static memory (0 where none exists), waits, adds a row times a
// column of the tiles, and waits again.
func tiledMatMulBody[T amp.Element](t amp.TiledIndex, a, b, c *amp.ArrayView[T], alpha, beta T, ts int) {
	locA := amp.TileStatic[T](t, ts*ts)
	locB := amp.TileStatic[T](t, ts*ts)
	m, n, k := c.Extent().At(0), c.Extent().At(1), a.Extent().At(1)
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
		for i := 0; i < ts; i++ {
			sum += locA[row*ts+i] * locB[i*ts+col]
		}
		t.Barrier.Wait()
	}
	if gRow < m && gCol < n {
		update(c, gRow, gCol, alpha, sum, beta)
	}
}

// dotTile is the tile of the Go dot kernel: its tile_static array's size.
const dotTile = 256

// tiledDotKernel is seed 003's dot product (CUDA by Example, ch. 5): each
// thread sums x[i]*y[i] over a grid-stride loop into its slot of tile_static
// memory, the tile halves the slots it adds until one is left, and thread
// 0 writes the tile's partial sum. Kernel time against dot_shared.cu with
// 256 threads a block, the GPU kept busy so that the host's launch work is
// not counted (H100, 2026-11-23): 1.00 to 1.06 times as long at 2^24
// elements, 1.04 to 1.09 at 2^20 (kernels of 6 to 7 us). The float32 and
// int32 instances are held to 32 registers: at 34, as ptxas left the
// float32 one, 6 tiles of 256 threads fit an SM instead of 8, the 1024
// tiles no longer run in one wave, and the float32 kernel took 1.13 times
// as long at 2^20. The float64 one spills at 32 and needs no cap.
//
//goamp:kernel tile=256 regs[float32]=32 regs[int32]=32
func tiledDotKernel[T amp.Element](t amp.TiledIndex, x, y, partial *amp.ArrayView[T], n, stride int) {
	cache := amp.TileStatic[T](t, dotTile)
	me := t.Local.At(0)
	var sum T
	for i := t.Global.At(0); i < n; i += stride {
		sum += x.At1(i) * y.At1(i)
	}
	cache[me] = sum
	t.Barrier.Wait()
	for half := dotTile / 2; half > 0; half /= 2 {
		if me < half {
			cache[me] += cache[me+half]
		}
		t.Barrier.Wait()
	}
	if me == 0 {
		partial.Set1(t.Tile.At(0), cache[0])
	}
}
