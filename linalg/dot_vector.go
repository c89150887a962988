package linalg

import (
	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpu/dot"
)

func init() {
	registerDot(KernelInfo{Name: "vector", Accelerator: amp.KindCPU,
		Description: "one goroutine over host memory: AVX2/FMA with several accumulators for float32 and float64, a plain loop for int32"},
		vectorDot(dot.Float32), vectorDot(dot.Float64), vectorDot(intDot))
}

// vectorDot runs a dot routine on the views' host memory, without the
// model's per-element access.
func vectorDot[T amp.Element](f func(x, y []T) T) dotFunc[T] {
	return func(_ *amp.AcceleratorView, x, y *amp.ArrayView[T], _ int) (T, error) {
		xs, err := x.HostVector(false)
		if err != nil {
			return 0, err
		}
		ys, err := y.HostVector(false)
		if err != nil {
			return 0, err
		}
		return f(xs, ys), nil
	}
}

// intDot is the int32 dot product; its sum wraps around on overflow.
func intDot(x, y []int32) int32 {
	var sum int32
	for i, v := range x {
		sum += v * y[i]
	}
	return sum
}
