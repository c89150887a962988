package gpu

import (
	"errors"
	"testing"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// The checks that come before any device work hold without a GPU.
func TestArgumentChecks(t *testing.T) {
	if _, err := MatMul[float32](nil, kernels.MatmulTiled, 12, 4, 4, 4, 1, 0, 4, 0, 4, 0, 0, 4); !errors.Is(err, ErrTile) {
		t.Errorf("tile 12: got %v, want ErrTile", err)
	}
	if _, err := MatMul[float32](nil, "matmul_magic", 0, 4, 4, 4, 1, 0, 4, 0, 4, 0, 0, 4); !errors.Is(err, kernels.ErrNotFound) {
		t.Errorf("unknown technique: got %v, want kernels.ErrNotFound", err)
	}
	if d, err := MatMul[float64](nil, kernels.MatmulNaive, 0, 0, 5, 3, 1, 0, 3, 0, 5, 0, 0, 5); err != nil || d != 0 {
		t.Errorf("an empty C launches nothing: got %v, %v", d, err)
	}
	for _, block := range []int{0, 3, 2048} {
		if _, _, err := Dot[float32](nil, kernels.DotWarp, block, 10, 0, 0); !errors.Is(err, ErrTile) {
			t.Errorf("dot block %d: got %v, want ErrTile", block, err)
		}
	}
	if s, _, err := Dot[int32](nil, kernels.DotShared, 256, 0, 0, 0); err != nil || s != 0 {
		t.Errorf("an empty dot product: got %v, %v; want 0", s, err)
	}
}

func TestOpenWithoutGPU(t *testing.T) {
	if err := cuda.Init(); err == nil {
		t.Skip("a CUDA driver is present; the GPU tests run in linalg and amp")
	}
	if _, err := Open(0); !errors.Is(err, cuda.ErrNoDriver) && !errors.Is(err, cuda.ErrNoDevice) {
		t.Errorf("Open without a driver: got %v, want ErrNoDriver or ErrNoDevice", err)
	}
}
