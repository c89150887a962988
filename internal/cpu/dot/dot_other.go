//go:build noasm || !amd64

package dot

// Without the assembly kernels, the portable loop does the work.

func float32Kernel(x, y []float32) float32 { return portable(x, y) }

func float64Kernel(x, y []float64) float64 { return portable(x, y) }
