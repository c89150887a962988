package amp

import (
	"fmt"
	"reflect"
	"unsafe"
)

// MaxTileThreads is the most threads a tile may have, as on CUDA and in C++ AMP.
const MaxTileThreads = 1024

// TiledExtent is an extent cut into equal tiles: the C++ AMP tiled_extent,
// with tile sizes chosen at run time. Make one with Extent.Tile. A kernel run
// over it sees each point once, as a thread of the tile that holds it; the
// threads of one tile are alive together, share TileStatic memory and meet at
// barriers.
type TiledExtent struct {
	ext   Extent
	tile  [MaxRank]int
	ntile int // how many tile sizes were given; must equal ext.Rank()
}

// Tile cuts e into tiles of the given sizes, one per dimension of e. The
// result is checked when a kernel runs over it: the tile sizes must be
// positive, at most MaxTileThreads threads a tile, and divide e exactly
// unless Pad or Truncate is asked for.
func (e Extent) Tile(sizes ...int) TiledExtent {
	t := TiledExtent{ext: e, ntile: len(sizes)}
	copy(t.tile[:], sizes)
	return t
}

// Extent is the compute domain: the original extent, or the padded or
// truncated one.
func (t TiledExtent) Extent() Extent { return t.ext }

// TileExtent is the shape of one tile.
func (t TiledExtent) TileExtent() Extent { return Extent{rank: t.ext.rank, n: t.tile} }

// Tiles is the extent of the grid of tiles: how many tiles lie along each
// dimension. It is meaningful only for a valid TiledExtent.
func (t TiledExtent) Tiles() Extent {
	g := Extent{rank: t.ext.rank}
	for d := 0; d < t.ext.rank; d++ {
		if t.tile[d] > 0 {
			g.n[d] = t.ext.n[d] / t.tile[d]
		}
	}
	return g
}

// Pad returns t with each dimension of its extent rounded up to a multiple of
// the tile size (C++ AMP's tiled_extent::pad). The kernel then runs for points
// outside the original extent and must test for them.
func (t TiledExtent) Pad() TiledExtent {
	// A valid extent has fewer than 2^62 points, so rounding up by at most
	// MaxTileThreads cannot overflow.
	if t.tileSizesErr() != nil || t.ext.Validate() != nil {
		return t // Validate reports the problem
	}
	for d := 0; d < t.ext.rank; d++ {
		t.ext.n[d] = (t.ext.n[d] + t.tile[d] - 1) / t.tile[d] * t.tile[d]
	}
	return t
}

// Truncate returns t with each dimension of its extent rounded down to a
// multiple of the tile size (C++ AMP's tiled_extent::truncate). The points
// cut off are not visited; the caller handles them some other way.
func (t TiledExtent) Truncate() TiledExtent {
	if t.tileSizesErr() != nil {
		return t
	}
	for d := 0; d < t.ext.rank; d++ {
		t.ext.n[d] = t.ext.n[d] / t.tile[d] * t.tile[d]
	}
	return t
}

// Validate returns an error wrapping ErrInvalidExtent or
// ErrInvalidComputeDomain unless kernels can run over t.
func (t TiledExtent) Validate() error {
	if err := t.ext.Validate(); err != nil {
		return err
	}
	if err := t.tileSizesErr(); err != nil {
		return err
	}
	for d := 0; d < t.ext.rank; d++ {
		if t.ext.n[d]%t.tile[d] != 0 {
			return fmt.Errorf("%w: tile %v does not divide extent %v (use Pad or Truncate)",
				ErrInvalidComputeDomain, t.TileExtent(), t.ext)
		}
	}
	return nil
}

func (t TiledExtent) tileSizesErr() error {
	if t.ntile != t.ext.rank {
		return fmt.Errorf("%w: %d tile sizes for a rank-%d extent", ErrInvalidComputeDomain, t.ntile, t.ext.rank)
	}
	threads := 1
	for d := 0; d < t.ntile; d++ {
		if t.tile[d] < 1 || t.tile[d] > MaxTileThreads {
			return fmt.Errorf("%w: tile size %d, want 1 to %d", ErrInvalidComputeDomain, t.tile[d], MaxTileThreads)
		}
		threads *= t.tile[d]
	}
	if threads > MaxTileThreads {
		return fmt.Errorf("%w: tile %v has %d threads, more than %d",
			ErrInvalidComputeDomain, t.TileExtent(), threads, MaxTileThreads)
	}
	return nil
}

// TiledIndex is what a tiled kernel receives: the C++ AMP tiled_index. Its
// Barrier and TileStatic work only inside the kernel call that received it,
// on the kernel's own goroutine; keep the plain indices, not the TiledIndex,
// beyond it.
type TiledIndex struct {
	// Global is the thread's point in the compute domain.
	Global Index
	// Local is the thread's position inside its tile.
	Local Index
	// Tile is the tile's position in the grid of tiles.
	Tile Index
	// TileOrigin is the global index of the tile's first point.
	TileOrigin Index
	// TileExtent is the shape of every tile.
	TileExtent Extent
	// Barrier is where the tile's threads wait for one another.
	Barrier *Barrier

	th *thread
}

// Barrier makes the threads of a tile wait for one another: the C++ AMP
// tile_barrier.
type Barrier struct{ th *thread }

// Wait blocks the calling thread until every thread of its tile has called
// Wait the same number of times, like tile_barrier::wait. Everything a thread
// wrote to TileStatic memory (or anywhere else) before Wait is visible to the
// tile's other threads after it. Every thread of the tile must wait at every
// barrier: a thread that returns while another waits makes the whole
// ParallelForEachTiled fail with a *DivergenceError instead of hanging. The
// k-th Wait of every thread is the same barrier, whichever line of the
// kernel it is on, as with a GPU's bar.sync, which counts arrivals.
//
// Wait must be called from the kernel's own goroutine, not from one the
// kernel starts.
func (b *Barrier) Wait() {
	th := b.th
	th.waits++
	if !th.yield(eventBarrier) {
		// The tile was abandoned (another thread failed): unwind this one.
		panic(abortSignal{})
	}
}

// MaxTileStaticBytes is the most TileStatic memory, in bytes, that the calls
// of one tile may ask for in all: 48 KiB, what one CUDA thread block may
// declare statically (C++ AMP allowed 32 KiB). Kernels written within it
// can run where tile-static memory is a real, small, on-chip store.
const MaxTileStaticBytes = 48 << 10

// TileStatic returns n elements of memory shared by all threads of the tile
// that t belongs to: C++ AMP's tile_static. The k-th call of every thread of
// a tile returns the same slice, so every thread must make its TileStatic
// calls in the same order with the same type and length; call it before
// loops, not inside them. On the CPU the memory is zeroed at the start of
// each tile; in a kernel that goampgen compiled for a GPU it holds whatever
// it held before, as C++ AMP's tile_static memory does: write an element
// before any thread reads it.
//
// It panics, and so fails the kernel with a *KernelPanicError, outside a
// tiled kernel, when threads disagree on the type or length, for a negative
// length, and when the tile's calls together ask for more than
// MaxTileStaticBytes; that error wraps ErrTileStaticLimit.
func TileStatic[T any](t TiledIndex, n int) []T {
	th := t.th
	if th == nil {
		panic("amp: TileStatic outside a tiled kernel")
	}
	w := th.w
	k := th.statics
	th.statics++
	if k < w.staticsUsed {
		s, ok := w.statics[k].([]T)
		if !ok || len(s) != n {
			panic(fmt.Sprintf("amp: TileStatic call %d asks for %d elements of %T, another thread of the tile asked for %T of length %d",
				k+1, n, *new(T), w.statics[k], reflect.ValueOf(w.statics[k]).Len()))
		}
		return s
	}
	if n < 0 {
		panic(fmt.Errorf("%w: TileStatic of negative length %d", ErrTileStaticLimit, n))
	}
	size := int(unsafe.Sizeof(*new(T)))
	if left := MaxTileStaticBytes - w.staticBytes; size > 0 && n > left/size {
		panic(fmt.Errorf("%w: TileStatic call %d asks for %d elements of %T; the tile has %d of its %d bytes left",
			ErrTileStaticLimit, k+1, n, *new(T), left, MaxTileStaticBytes))
	}
	w.staticBytes += n * size
	w.staticsUsed++
	if k < len(w.statics) {
		if s, ok := w.statics[k].([]T); ok && len(s) == n {
			clear(s)
			return s
		}
		s := make([]T, n)
		w.statics[k] = s
		return s
	}
	s := make([]T, n)
	w.statics = append(w.statics, s)
	return s
}
