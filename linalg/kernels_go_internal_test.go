package linalg

import (
	"testing"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/linalg/conformance"
)

// TestGoKernelsOnTheCPU runs the Go kernels that linalg registers for
// CUDA GPUs (kernels_go.go) through the conformance suite on the CPU,
// where their generated launchers run the Go functions themselves: the
// source the GPU runs as PTX, checked where there is no GPU. The GPU runs
// the same suite over them (TestMatMulConformance, on a machine with one).
func TestGoKernelsOnTheCPU(t *testing.T) {
	v := amp.CPU().DefaultView()
	t.Run("go-simple", func(t *testing.T) {
		conformance.TestMatMulShapes(t, cpuMatMul(v, goSimpleMatMul[float32], 0), conformance.MatMulShapes(false))
		conformance.TestMatMulShapes(t, cpuMatMul(v, goSimpleMatMul[int32], 0), conformance.MatMulShapes(false))
	})
	for _, tile := range []int{16, 32} {
		t.Run("go-tiled", func(t *testing.T) {
			// Tiles of 16x16 and 32x32 threads on the CPU: the smaller
			// shapes, which still leave ragged tiles at every edge.
			shapes := []conformance.Shape{{M: 1, N: 1, K: 1}, {M: 5, N: 7, K: 1}, {M: 17, N: 15, K: 33}, {M: 4, N: 3, K: 0}, {M: 0, N: 4, K: 3}}
			conformance.TestMatMulShapes(t, cpuMatMul(v, goTiledMatMul[float64], tile), shapes)
			conformance.TestMatMulShapes(t, cpuMatMul(v, goTiledMatMul[int32], tile), shapes)
		})
	}
	t.Run("go-tiled-exact", func(t *testing.T) {
		conformance.TestMatMulMultiples(t, cpuMatMul(v, goExactTiledMatMul[float32], exactTile), exactTile)
	})
	t.Run("go-tiled dot", func(t *testing.T) {
		lengths := []int{0, 1, 7, 255, 256, 257, 1031, 70001}
		conformance.TestDotLengths(t, func(x, y *amp.ArrayView[float64]) (float64, error) {
			s, _, err := goTiledDot(v, x, y, dotTile)
			return s, err
		}, lengths)
	})
}

func cpuMatMul[T amp.Element](v *amp.AcceleratorView, f timedMatMulFunc[T], tile int) conformance.MatMulFunc[T] {
	return func(alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error {
		_, err := f(v, alpha, a, b, beta, c, tile)
		return err
	}
}
