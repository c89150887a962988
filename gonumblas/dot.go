package gonumblas

import "github.com/goamp/goamp/internal/cpu/dot"

// Ddot computes the dot product of the two vectors
//
//	\sum_i x[i]*y[i]
//
// Unit-stride vectors (incX == incY == 1) go to goamp's kernel; other
// strides to gonum's. It panics on invalid arguments exactly as gonum's
// Ddot does.
func (impl Implementation) Ddot(n int, x []float64, incX int, y []float64, incY int) float64 {
	if incX != 1 || incY != 1 {
		return impl.Implementation.Ddot(n, x, incX, y, incY)
	}
	// gonum's checks, less those of the increments, which are 1 here.
	if n <= 0 {
		if n == 0 {
			return 0
		}
		panic(nLT0)
	}
	if len(x) < n {
		panic(shortX)
	}
	if len(y) < n {
		panic(shortY)
	}
	return dot.Float64(x[:n], y[:n])
}

// Sdot is Ddot for float32 vectors; it accumulates in float32, as gonum's
// Sdot and every BLAS sdot do.
func (impl Implementation) Sdot(n int, x []float32, incX int, y []float32, incY int) float32 {
	if incX != 1 || incY != 1 {
		return impl.Implementation.Sdot(n, x, incX, y, incY)
	}
	if n <= 0 {
		if n == 0 {
			return 0
		}
		panic(nLT0)
	}
	if len(x) < n {
		panic(shortX)
	}
	if len(y) < n {
		panic(shortY)
	}
	return dot.Float32(x[:n], y[:n])
}
