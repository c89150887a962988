package gonumblas_test

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/goamp/goamp/gonumblas"
)

// A gonum program opts in once, before its first matrix operation; from
// then on mat, lapack64 and anything else built on blas64 (or blas32) run
// their matrix multiplies and dot products on goamp.
func Example() {
	blas64.Use(gonumblas.Implementation{})
	blas32.Use(gonumblas.Implementation{})

	a := mat.NewDense(2, 3, []float64{
		1, 2, 3,
		4, 5, 6,
	})
	b := mat.NewDense(3, 2, []float64{
		7, 8,
		9, 10,
		11, 12,
	})
	var c mat.Dense
	c.Mul(a, b) // blas64.Gemm: goamp's Dgemm
	fmt.Printf("%v\n", mat.Formatted(&c))

	x := mat.NewVecDense(3, []float64{1, 2, 3})
	fmt.Println(mat.Dot(x, x)) // blas64.Dot: goamp's Ddot
	// Output:
	// ⎡ 58   64⎤
	// ⎣139  154⎦
	// 14
}
