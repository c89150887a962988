package half_test

import (
	"fmt"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/half"
	"github.com/goamp/goamp/linalg"
)

// Matrices kept as bfloat16 are multiplied as float32 views with
// Precision BF16: on a GPU the tensor cores' BF16 path (rounding a
// bfloat16 to BF16 changes nothing), elsewhere float32 arithmetic; both
// give the exact products, summed in float32.
func Example_bfloat16() {
	a := half.BFloat16s([]float32{1, 2, 3, 4, 5, 6}) // 2 x 3
	b := half.BFloat16s([]float32{0.5, -1, 0.25, 2, 1, 0})
	av, _ := amp.NewArrayView(amp.Extent2(2, 3), half.Float32s(a))
	bv, _ := amp.NewArrayView(amp.Extent2(3, 2), half.Float32s(b))
	c := make([]float32, 4)
	cv, _ := amp.NewArrayView(amp.Extent2(2, 2), c)
	cpu := amp.CPU().DefaultView()
	if err := linalg.MatMul(1, av, bv, 0, cv, &linalg.Options{View: cpu, Precision: linalg.BF16}); err != nil {
		fmt.Println(err)
		return
	}
	if err := cv.Synchronize(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c, half.BFloat16s(c)) // C, and C kept as bfloat16 (its bits)
	// Output: [4 3 9.25 6] [16512 16448 16660 16576]
}
