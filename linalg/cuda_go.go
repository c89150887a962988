package linalg

import (
	"fmt"
	"time"

	"github.com/goamp/goamp/amp"
)

// The seeds' kernels written in Go (kernels_go.go) and compiled to PTX by
// goampgen, registered for CUDA GPUs beside their CUDA C twins of the same
// technique and tile: "go-simple" beside "naive", "go-tiled" beside
// "tiled"; and "go-tiled-exact", C++ AMP's own tiled multiply, which takes
// only shapes that are multiples of its tile. The conformance suite and the benchmarks walk them like every
// other kernel.
func init() {
	registerTimedMatMul(KernelInfo{Name: "go-simple", Accelerator: amp.KindCUDA,
		Description: "MultiplyWithAMP written in Go, compiled to PTX: one thread per element of C (kernels_go.go; twin of naive)"},
		goSimpleMatMul[float32], goSimpleMatMul[float64], goSimpleMatMul[int32])
	registerTimedMatMul(KernelInfo{Name: "go-tiled", Accelerator: amp.KindCUDA, DefaultTile: 16, MaxTile: 32, Tiles: []int{16, 32},
		Description: "the tiled multiply for any shape (PMPP's boundary checks) written in Go, compiled to PTX; tile 16 or 32 (kernels_go.go; twin of tiled)"},
		goTiledMatMul[float32], goTiledMatMul[float64], goTiledMatMul[int32])
	registerTimedMatMul(KernelInfo{Name: "go-tiled-exact", Accelerator: amp.KindCUDA, DefaultTile: exactTile, MaxTile: exactTile, Tiles: []int{exactTile}, ExactTiles: true,
		Description: "C++ AMP's tiled multiply (seed 000) written in Go, compiled to PTX: 16x16 tiles, M, N and K multiples of 16 (kernels_go.go)"},
		goExactTiledMatMul[float32], goExactTiledMatMul[float64], goExactTiledMatMul[int32])
	registerTimedDot(KernelInfo{Name: "go-tiled", Accelerator: amp.KindCUDA, DefaultTile: dotTile, MaxTile: dotTile, Tiles: []int{dotTile},
		Description: "CUDA by Example's dot product written in Go, compiled to PTX: grid-stride sums, a tree reduction in tile_static memory (kernels_go.go; twin of tiled)"},
		goTiledDot[float32], goTiledDot[float64], goTiledDot[int32])
}

// timed returns the kernel time of the launch err came from (the
// device's clock, amp.AcceleratorView.LastKernelTime).
func timed(v *amp.AcceleratorView, err error) (time.Duration, error) {
	if err != nil {
		return 0, err
	}
	return v.LastKernelTime(), nil
}

func goSimpleMatMul[T amp.Element](v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], _ int) (time.Duration, error) {
	if alpha == 0 {
		return timed(v, launchScaleKernel(v, c.Extent(), c, beta))
	}
	return timed(v, launchSimpleMatMulKernel(v, c.Extent(), a, b, c, alpha, beta))
}

func goExactTiledMatMul[T amp.Element](v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], tile int) (time.Duration, error) {
	m, n, k := c.Extent().At(0), c.Extent().At(1), a.Extent().At(1)
	if tile != exactTile {
		return 0, fmt.Errorf("%w: %d for go-tiled-exact, want %d", ErrTileSize, tile, exactTile)
	}
	if m%exactTile != 0 || n%exactTile != 0 || k%exactTile != 0 {
		return 0, fmt.Errorf("%w: go-tiled-exact needs M, N and K multiples of %d, not %dx%dx%d", ErrShape, exactTile, m, n, k)
	}
	if alpha == 0 {
		return timed(v, launchScaleKernel(v, c.Extent(), c, beta))
	}
	if m == 0 || n == 0 {
		return 0, nil
	}
	return timed(v, launchExactTiledMatMulKernel(v, c.Extent().Tile(exactTile, exactTile), a, b, c, alpha, beta))
}

func goTiledMatMul[T amp.Element](v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], tile int) (time.Duration, error) {
	if alpha == 0 {
		return timed(v, launchScaleKernel(v, c.Extent(), c, beta))
	}
	te := c.Extent().Tile(tile, tile).Pad()
	switch tile {
	case 16:
		return timed(v, launchTiledMatMulKernel16(v, te, a, b, c, alpha, beta))
	case 32:
		return timed(v, launchTiledMatMulKernel32(v, te, a, b, c, alpha, beta))
	}
	return 0, fmt.Errorf("%w: %d for go-tiled, want 16 or 32", ErrTileSize, tile)
}

// goDotTiles caps the tiles of the Go dot product as gpu.Dot caps the
// blocks of its CUDA C twin, so that both add the same partials.
const goDotTiles = 1024

func goTiledDot[T amp.Element](v *amp.AcceleratorView, x, y *amp.ArrayView[T], _ int) (T, time.Duration, error) {
	n := x.Extent().At(0)
	if n == 0 {
		return 0, 0, nil
	}
	tiles := min(goDotTiles, (n+dotTile-1)/dotTile)
	partial := make([]T, tiles)
	pv, err := amp.NewArrayView(amp.Extent1(tiles), partial)
	if err != nil {
		return 0, 0, err
	}
	defer pv.Release()
	// Every tile writes its partial: nothing to upload first.
	pv.DiscardData()
	stride := tiles * dotTile
	if err := launchTiledDotKernel(v, amp.Extent1(stride).Tile(dotTile), x, y, pv, n, stride); err != nil {
		return 0, 0, err
	}
	elapsed := v.LastKernelTime()
	if err := pv.Synchronize(); err != nil {
		return 0, 0, err
	}
	var sum T
	for _, p := range partial {
		sum += p
	}
	return sum, elapsed, nil
}
