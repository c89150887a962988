// Package walkthrough is a tour of C++ AMP, step by step, in goamp: the
// matrix products of "Walkthrough: Matrix Multiplication" in Microsoft's C++
// AMP documentation
// (https://learn.microsoft.com/cpp/parallel/amp/walkthrough-matrix-multiplication):
// MultiplyWithOutAMP, MultiplyWithAMP and MultiplyWithTiling, then a dot
// product by a tree reduction in tile_static memory, the technique of the
// CUDA dot product in Sanders and Kandrot, "CUDA by Example", chapter 5.
// Each matrix step is written the way the walkthrough writes it, so the two
// read side by side; `goamp walkthrough` prints them. The kernels of steps 2
// and 3 are Go functions that goampgen compiles to PTX, so the same steps
// run on a GPU (`goamp walkthrough --device cuda`).
package walkthrough

//go:generate go run github.com/goamp/goamp/cmd/goampgen

import (
	"fmt"
	"io"
	"strings"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/linalg"
)

// The 3x2 and 2x3 matrices of the walkthrough's first two steps.
var (
	aMatrix = []int32{1, 4, 2, 5, 3, 6}
	bMatrix = []int32{7, 8, 9, 10, 11, 12}
)

// MultiplyWithOutAMP is the walkthrough's first step: the product of a 3x2
// and a 2x3 matrix by three nested loops, with no parallelism at all.
func MultiplyWithOutAMP() [3][3]int32 {
	var product [3][3]int32
	for row := range 3 {
		for col := range 3 {
			// Multiply the row of A by the column of B to get the row, column of product.
			for inner := range 2 {
				product[row][col] += aMatrix[row*2+inner] * bMatrix[inner*3+col]
			}
		}
	}
	return product
}

// MultiplyWithAMP is the second step: the same product with one thread per
// element of the product, through parallel_for_each over its extent, on
// view v's accelerator (the kernel, multiplyWithAMP, is compiled for GPUs
// by goampgen).
func MultiplyWithAMP(v *amp.AcceleratorView) ([]int32, error) {
	productMatrix := make([]int32, 9)
	a, err := amp.NewArrayView(amp.Extent2(3, 2), aMatrix)
	if err != nil {
		return nil, err
	}
	b, err := amp.NewArrayView(amp.Extent2(2, 3), bMatrix)
	if err != nil {
		return nil, err
	}
	product, err := amp.NewArrayView(amp.Extent2(3, 3), productMatrix)
	if err != nil {
		return nil, err
	}
	if err := launchMultiplyWithAMP(v, product.Extent(), a, b, product); err != nil {
		return nil, err
	}
	return productMatrix, product.Synchronize()
}

// multiplyWithAMP is MultiplyWithAMP's kernel: the lambda of the
// walkthrough's parallel_for_each.
//
//goamp:kernel
func multiplyWithAMP(idx amp.Index, a, b, product *amp.ArrayView[int32]) {
	row, col := idx.At(0), idx.At(1)
	for inner := range 2 {
		product.Set(idx, product.At(idx)+a.At2(row, inner)*b.At2(inner, col))
	}
}

// TilingMatrix is the 4x4 matrix the third step multiplies by itself.
var TilingMatrix = []int32{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}

// MultiplyWithTiling is the third step: the 4x4 product with 2x2 tiles, on
// view v's accelerator.
func MultiplyWithTiling(v *amp.AcceleratorView) ([]int32, error) {
	productMatrix := make([]int32, 16)
	a, err := amp.NewArrayView(amp.Extent2(4, 4), TilingMatrix)
	if err != nil {
		return nil, err
	}
	b, err := amp.NewArrayView(amp.Extent2(4, 4), TilingMatrix)
	if err != nil {
		return nil, err
	}
	product, err := amp.NewArrayView(amp.Extent2(4, 4), productMatrix)
	if err != nil {
		return nil, err
	}
	if err := launchMultiplyWithTiling(v, product.Extent().Tile(ts, ts), a, b, product); err != nil {
		return nil, err
	}
	return productMatrix, product.Synchronize()
}

// ts is MultiplyWithTiling's tile size.
const ts = 2

// multiplyWithTiling is MultiplyWithTiling's kernel. Each tile copies a
// 2x2 block of A and of B into tile_static memory, waits until the whole
// tile has, adds its part of the product, and waits again before the next
// blocks overwrite the memory.
//
//goamp:kernel tile=2,2
func multiplyWithTiling(t amp.TiledIndex, a, b, product *amp.ArrayView[int32]) {
	// The thread's place in its tile (row, col) and in the product.
	row, col := t.Local.At(0), t.Local.At(1)
	rowGlobal, colGlobal := t.Global.At(0), t.Global.At(1)
	locA := amp.TileStatic[int32](t, ts*ts)
	locB := amp.TileStatic[int32](t, ts*ts)
	var sum int32
	for i := 0; i < 4; i += ts {
		locA[row*ts+col] = a.At2(rowGlobal, col+i)
		locB[row*ts+col] = b.At2(row+i, colGlobal)
		// The threads of the tile all wait here until locA and locB are filled.
		t.Barrier.Wait()
		for k := range ts {
			sum += locA[row*ts+k] * locB[k*ts+col]
		}
		// All threads must wait until the sums are done: a thread that
		// moved ahead would overwrite locA and locB.
		t.Barrier.Wait()
	}
	product.Set(t.Global, sum)
}

// DotN is the length of the dot product's vectors. It and DotThreadsPerTile
// are the sizes of the CUDA dot product in chapter 3 of Vaidya, "Hands-On
// GPU-Accelerated Computer Vision with OpenCV and CUDA" (Packt, 2018), the
// same technique as "CUDA by Example"'s.
const DotN = 1024

// DotThreadsPerTile is the number of threads in a tile (threadsPerBlock there).
const DotThreadsPerTile = 512

// DotProduct is that dot product: a[i] = i, b[i] = 2, by the tiled
// tree reduction (a grid-stride loop, shared-memory partial sums per tile,
// then a final sum). It returns the value and the closed form
// sum 2i = N(N-1) it must equal.
func DotProduct(v *amp.AcceleratorView) (got, want float32, err error) {
	a, b := make([]float32, DotN), make([]float32, DotN)
	for i := range DotN {
		a[i], b[i] = float32(i), 2
	}
	av, err := amp.NewArrayView(amp.Extent1(DotN), a)
	if err != nil {
		return 0, 0, err
	}
	bv, err := amp.NewArrayView(amp.Extent1(DotN), b)
	if err != nil {
		return 0, 0, err
	}
	got, err = linalg.Dot(av, bv, &linalg.Options{Kernel: "tiled", Tile: DotThreadsPerTile, View: v})
	return got, DotN * (DotN - 1), err
}

// Run prints every step to w, running the kernels on view v.
func Run(w io.Writer, v *amp.AcceleratorView) error {
	fmt.Fprintf(w, "Running on %s (%s)\n\n", v.Accelerator().Path(), v.Accelerator().Description())
	fmt.Fprintln(w, "Step 1: MultiplyWithOutAMP — a 3x2 matrix times a 2x3 matrix, three nested loops")
	printMatrix(w, "A", aMatrix, 3, 2)
	printMatrix(w, "B", bMatrix, 2, 3)
	p := MultiplyWithOutAMP()
	printMatrix(w, "product", append(append(p[0][:], p[1][:]...), p[2][:]...), 3, 3)

	fmt.Fprintln(w, "Step 2: MultiplyWithAMP — the same product, parallel_for_each over the product's extent")
	prod, err := MultiplyWithAMP(v)
	if err != nil {
		return fmt.Errorf("MultiplyWithAMP: %w", err)
	}
	printMatrix(w, "product", prod, 3, 3)

	fmt.Fprintln(w, "Step 3: MultiplyWithTiling — a 4x4 matrix times itself with 2x2 tiles, tile_static memory and barriers")
	printMatrix(w, "A = B", TilingMatrix, 4, 4)
	prod, err = MultiplyWithTiling(v)
	if err != nil {
		return fmt.Errorf("MultiplyWithTiling: %w", err)
	}
	printMatrix(w, "product", prod, 4, 4)
	fmt.Fprintf(w, "  product[0][0] = %d\n\n", prod[0])

	fmt.Fprintf(w, "Step 4: dot product — N=%d, a[i]=i, b[i]=2, %d threads a tile, tree reduction in tile_static memory\n", DotN, DotThreadsPerTile)
	got, want, err := DotProduct(v)
	if err != nil {
		return fmt.Errorf("dot product: %w", err)
	}
	verdict := "correct"
	if got != want {
		verdict = "WRONG"
	}
	fmt.Fprintf(w, "  dot = %.0f; closed form N(N-1) = %.0f: %s\n", got, want, verdict)
	if got != want {
		return fmt.Errorf("dot product is %v, want %v", got, want)
	}
	return nil
}

func printMatrix(w io.Writer, name string, m []int32, rows, cols int) {
	fmt.Fprintf(w, "  %s (%dx%d):\n", name, rows, cols)
	for r := range rows {
		cells := make([]string, cols)
		for c := range cols {
			cells[c] = fmt.Sprintf("%4d", m[r*cols+c])
		}
		fmt.Fprintf(w, "   %s\n", strings.Join(cells, ""))
	}
	fmt.Fprintln(w)
}
