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

// empty0 is s with no rows of C.
func empty0(s GemmShape) GemmShape {
	s.M = 0
	return s
}

// Gemm refuses bad shapes before touching the device (d is nil here).
func TestGemmChecks(t *testing.T) {
	ok := GemmShape{M: 4, N: 5, K: 6, LDA: 6, LDB: 5, LDC: 5, Batch: 1}
	for name, c := range map[string]func(s *GemmShape){
		"negative M":       func(s *GemmShape) { s.M = -1 },
		"batch 0":          func(s *GemmShape) { s.Batch = 0 },
		"batch too large":  func(s *GemmShape) { s.Batch = maxGemmBatch + 1 },
		"short lda":        func(s *GemmShape) { s.LDA = 5 },
		"short ldb for Bt": func(s *GemmShape) { s.TransB = true },
		"short lda for At": func(s *GemmShape) { s.TransA = true; s.LDA = 3 },
		"short ldc":        func(s *GemmShape) { s.LDC = 4 },
		"negative stride":  func(s *GemmShape) { s.StrideC = -1 },
		"Cs overlap":       func(s *GemmShape) { s.Batch = 2; s.StrideC = 19 },
		"too large":        func(s *GemmShape) { s.K = 1 << 31; s.LDA = 1 << 31 },
	} {
		s := ok
		c(&s)
		if _, err := Gemm[float32](nil, kernels.MatmulReg128, s, 1, 0, 0, 0, 0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Gemm[float32](nil, kernels.MatmulTiled, ok, 1, 0, 0, 0, 0); !errors.Is(err, kernels.ErrNotFound) {
		t.Errorf("a technique without GEMM kernels: %v, want ErrNotFound", err)
	}
	if _, err := Gemm[float32](nil, kernels.MatmulDMMA, ok, 1, 0, 0, 0, 0); !errors.Is(err, kernels.ErrNotFound) {
		t.Errorf("dmma in float32: %v, want ErrNotFound (float64 only)", err)
	}
	if d, err := Gemm[float64](nil, kernels.MatmulDMMA, empty0(ok), 1, 0, 0, 0, 0); d != 0 || err != nil {
		t.Errorf("dmma, an empty C launches nothing: %v, %v", d, err)
	}
	empty := ok
	empty.M = 0
	if d, err := Gemm[float64](nil, kernels.MatmulReg128, empty, 1, 0, 0, 0, 0); d != 0 || err != nil {
		t.Errorf("an empty C launches nothing: %v, %v", d, err)
	}
}
