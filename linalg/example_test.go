package linalg_test

import (
	"fmt"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/linalg"
)

// Multiplying two matrices with the tiled kernel, on the default
// accelerator (a GPU where there is one). The result may live on the device
// until Synchronize brings it into the slice.
func ExampleMatMul() {
	a, _ := amp.NewArrayView(amp.Extent2(2, 3), []float64{1, 2, 3, 4, 5, 6})
	b, _ := amp.NewArrayView(amp.Extent2(3, 2), []float64{7, 8, 9, 10, 11, 12})
	c := make([]float64, 4)
	cv, _ := amp.NewArrayView(amp.Extent2(2, 2), c)
	if err := linalg.MatMul(1, a, b, 0, cv, &linalg.Options{Kernel: "tiled", Tile: 8}); err != nil {
		panic(err)
	}
	if err := cv.Synchronize(); err != nil {
		panic(err)
	}
	fmt.Println(c)
	// Output: [58 64 139 154]
}

// Shapes that do not agree are an error, not a panic.
func ExampleMatMul_shapeError() {
	a, _ := amp.NewArrayView(amp.Extent2(2, 3), make([]float32, 6))
	c, _ := amp.NewArrayView(amp.Extent2(2, 2), make([]float32, 4))
	fmt.Println(linalg.MatMul(1, a, a, 0, c, nil))
	// Output: linalg: shapes do not agree: A is 2x3 but B is 2x3: A's columns must equal B's rows
}

// A^T*B without making A^T: A is stored 3x2, and Options.TransA says to
// multiply by its transpose, as BLAS's transa does.
func ExampleMatMul_transposed() {
	a, _ := amp.NewArrayView(amp.Extent2(3, 2), []float64{1, 4, 2, 5, 3, 6}) // A^T is [[1 2 3] [4 5 6]]
	b, _ := amp.NewArrayView(amp.Extent2(3, 2), []float64{7, 8, 9, 10, 11, 12})
	c := make([]float64, 4)
	cv, _ := amp.NewArrayView(amp.Extent2(2, 2), c)
	if err := linalg.MatMul(1, a, b, 0, cv, &linalg.Options{TransA: true}); err != nil {
		panic(err)
	}
	if err := cv.Synchronize(); err != nil {
		panic(err)
	}
	fmt.Println(c)
	// Output: [58 64 139 154]
}

// Many small products in one call: rank-3 views hold a batch of matrices,
// batch x rows x columns, and product i multiplies A's i-th matrix by B's.
func ExampleMatMul_batch() {
	a, _ := amp.NewArrayView(amp.Extent3(2, 2, 2), []int32{1, 2, 3, 4, 1, 0, 0, 1})
	b, _ := amp.NewArrayView(amp.Extent3(2, 2, 1), []int32{5, 6, 7, 8})
	c := make([]int32, 4)
	cv, _ := amp.NewArrayView(amp.Extent3(2, 2, 1), c)
	if err := linalg.MatMul(1, a, b, 0, cv, nil); err != nil {
		panic(err)
	}
	if err := cv.Synchronize(); err != nil {
		panic(err)
	}
	fmt.Println(c)
	// Output: [17 39 7 8]
}

func ExampleDot() {
	x, _ := amp.NewArrayView(amp.Extent1(4), []int32{1, 2, 3, 4})
	y, _ := amp.NewArrayView(amp.Extent1(4), []int32{5, 6, 7, 8})
	d, err := linalg.Dot(x, y, nil)
	fmt.Println(d, err)
	// Output: 70 <nil>
}
