package amp_test

import (
	"fmt"

	"github.com/goamp/goamp/amp"
)

// Scale is a kernel as goampgen compiles it: a top-level function whose
// first parameter is the index.
func Scale(idx amp.Index, in, out *amp.ArrayView[float32], a float32) {
	out.Set(idx, a*in.At(idx))
}

// kernelSpecScale is what goampgen writes for Scale (its PTX left out
// here, so this one runs on the CPU only).
var kernelSpecScale = amp.KernelSpec{
	Name:    "amp_test.Scale",
	Pos:     "kernel_example_test.go:11",
	Entries: [amp.MaxRank + 1]string{"", "Scale_1", "Scale_2", ""},
	Args: []amp.KernelArgSpec{
		{Name: "in", View: true, Read: true, Ranks: [amp.MaxRank + 1]int{0, 1, 2, 0}},
		{Name: "out", View: true, Write: true, Ranks: [amp.MaxRank + 1]int{0, 1, 2, 0}},
		{Name: "a"},
	},
}

// LaunchScale is the launcher goampgen writes for Scale: one call for every
// accelerator.
func LaunchScale(on *amp.AcceleratorView, domain amp.Extent, in, out *amp.ArrayView[float32], a float32) error {
	return on.Launch(&kernelSpecScale, domain, func(idx amp.Index) { Scale(idx, in, out, a) },
		amp.ViewArg(in), amp.ViewArg(out), amp.ScalarArg(a))
}

// A compiled kernel runs through its generated launcher, here on the CPU.
func ExampleAcceleratorView_Launch() {
	in, _ := amp.NewArrayView(amp.Extent2(2, 3), []float32{1, 2, 3, 4, 5, 6})
	out, _ := amp.NewArrayView(amp.Extent2(2, 3), make([]float32, 6))
	if err := LaunchScale(amp.CPU().DefaultView(), in.Extent(), in, out, 10); err != nil {
		panic(err)
	}
	res := make([]float32, 6)
	out.CopyTo(res)
	fmt.Println(res)
	// Output: [10 20 30 40 50 60]
}
