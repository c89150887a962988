// Command transpose is a Go kernel, written once, run on the CPU and on a
// GPU: a tiled matrix transpose through tile_static memory. It is an
// example to copy: kernel.go holds the kernel, marked //goamp:kernel, and
// a go:generate line; `go generate` writes goamp_kernels.go, whose
// launchTranspose runs the kernel on whichever accelerator view it is
// given.
//
//	go run ./examples/transpose                  # the default accelerator
//	go run ./examples/transpose -device cpu
//	go run ./examples/transpose -device cuda -rows 4096 -cols 3000
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/goamp/goamp/amp"
)

func main() {
	device := flag.String("device", "auto", "accelerator: cpu, cuda, cuda:N or auto")
	rows := flag.Int("rows", 1000, "rows of the matrix")
	cols := flag.Int("cols", 777, "columns of the matrix")
	flag.Parse()
	if err := run(*device, *rows, *cols); err != nil {
		fmt.Fprintln(os.Stderr, "transpose:", err)
		os.Exit(1)
	}
}

func run(device string, rows, cols int) error {
	if rows < 1 || cols < 1 {
		return fmt.Errorf("-rows and -cols must be at least 1, got %d and %d", rows, cols)
	}
	acc, err := amp.Find(device)
	if err != nil {
		return err
	}
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = rand.Float32()
	}
	dst := make([]float32, rows*cols)
	in, err := amp.NewArrayView(amp.Extent2(rows, cols), src)
	if err != nil {
		return err
	}
	out, err := amp.NewArrayView(amp.Extent2(cols, rows), dst)
	if err != nil {
		return err
	}
	start := time.Now()
	// One call for every accelerator: the Go function on the CPU, the PTX
	// compiled from it on a GPU.
	err = launchTranspose(acc.DefaultView(), in.Extent().Tile(tile, tile).Pad(), in, out)
	if err != nil {
		return err
	}
	if err := out.Synchronize(); err != nil {
		return err
	}
	elapsed := time.Since(start)
	for i := range rows {
		for j := range cols {
			if dst[j*rows+i] != src[i*cols+j] {
				return fmt.Errorf("out[%d][%d] = %v, want in[%d][%d] = %v", j, i, dst[j*rows+i], i, j, src[i*cols+j])
			}
		}
	}
	fmt.Printf("transposed a %dx%d matrix on %s (%s) in %v; every element checked\n", rows, cols, acc.Path(), acc.Description(), elapsed.Round(time.Microsecond))
	return nil
}
