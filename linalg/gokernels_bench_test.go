package linalg_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
)

// BenchmarkGoKernelsVsCUDA measures each seed kernel written in Go and
// compiled to PTX against its CUDA C twin of the same technique and tile,
// on the first GPU: kernel time between CUDA events (Options.KernelTime)
// with the GPU kept busy before each run (spinFirst),
// the two interleaved run by run on the same operands, median of 9 (101
// for the dot products, kernels of microseconds). It
// logs one line per case with the ratio Go/CUDA C (1.00 = as fast; 1.10 is
// 10% slower). The whole table runs once per invocation, in two
// sub-benchmarks, matmul and dot, that -bench can pick:
//
//	go test -run '^$' -bench GoKernelsVsCUDA -benchtime 1x ./linalg/
//	go test -run '^$' -bench GoKernelsVsCUDA/dot -benchtime 1x ./linalg/
//
// With GOAMP_PTX_VARIANTS set to a folder, it compares compiler variants
// instead: each subfolder holds PTX files named after the kernel
// instances they replace (SimpleMatMulKernel_float32.ptx, ...; see
// SwapGoKernelPTX), and the table runs once per subfolder, in name order,
// with its PTX in place of the generated PTX.
func BenchmarkGoKernelsVsCUDA(b *testing.B) {
	acc, err := amp.Find("cuda")
	if err != nil || acc.Kind() != amp.KindCUDA {
		b.Skip("no CUDA GPU")
	}
	v := acc.DefaultView()
	parts := []struct {
		name  string
		table func(*testing.B, *amp.AcceleratorView)
	}{{"matmul", goMatMulTable}, {"dot", goDotTable}}
	for _, part := range parts {
		b.Run(part.name, func(b *testing.B) {
			if dir := os.Getenv("GOAMP_PTX_VARIANTS"); dir != "" {
				ptxVariants(b, v, dir, part.table)
				return
			}
			for range b.N {
				part.table(b, v)
			}
		})
	}
}

// goMatMulTable logs the matrix multiplies of BenchmarkGoKernelsVsCUDA.
func goMatMulTable(b *testing.B, v *amp.AcceleratorView) {
	for _, n := range []int{1024, 2048, 4096} {
		// go-tiled-exact is seed 000's kernel, which has no bounds to test
		// (every dimension a multiple of 16); its nearest CUDA C kernel,
		// tiled, tests them.
		for _, p := range [][3]any{{"naive", "go-simple", 0}, {"tiled", "go-tiled", 16}, {"tiled", "go-tiled", 32}, {"tiled", "go-tiled-exact", 16}} {
			cName, goName, tile := p[0].(string), p[1].(string), p[2].(int)
			if n == 4096 && tile == 0 {
				continue // the naive kernels take seconds there
			}
			matmulPair[float32](b, v, n, cName, goName, tile)
			matmulPair[float64](b, v, n, cName, goName, tile)
		}
	}
}

// goDotTable logs the dot products of BenchmarkGoKernelsVsCUDA.
func goDotTable(b *testing.B, v *amp.AcceleratorView) {
	for _, n := range []int{1 << 20, 1 << 24} {
		dotPair[float32](b, v, n)
		dotPair[float64](b, v, n)
	}
}

// ptxVariants runs the table once per subfolder of dir with its PTX files
// swapped in.
func ptxVariants(b *testing.B, v *amp.AcceleratorView, dir string, table func(*testing.B, *amp.AcceleratorView)) {
	variants, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range variants {
		if !d.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, d.Name(), "*.ptx"))
		if err != nil {
			b.Fatal(err)
		}
		var restore []func()
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			r, err := linalg.SwapGoKernelPTX(strings.TrimSuffix(filepath.Base(f), ".ptx"), string(src))
			if err != nil {
				b.Fatal(err)
			}
			restore = append(restore, r)
		}
		b.Logf("variant %s: %d kernels swapped", d.Name(), len(files))
		table(b, v)
		for _, r := range restore {
			r()
		}
	}
}

// pairRuns is how many timed runs each kernel of a pair gets; dotRuns is
// that for the dot products, whose kernels take microseconds, where a
// median of 9 moved by a fifth from run to run.
const (
	pairRuns = 9
	dotRuns  = 101
)

// spinFirst keeps v's GPU busy for a millisecond (gpu.Device.Spin), so
// that the kernel time of the call that follows holds the kernel and not
// the host's work to launch it: several microseconds, more for a Go
// kernel's arguments than for a CUDA C kernel's, which would be half of a
// dot product at 2^20 elements.
func spinFirst(b *testing.B, v *amp.AcceleratorView) {
	d, err := gpu.Open(v.Accelerator().Ordinal())
	if err == nil {
		err = d.Spin(time.Millisecond)
	}
	if err != nil {
		b.Fatal(err)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func matmulPair[T amp.Element](b *testing.B, v *amp.AcceleratorView, n int, cName, goName string, tile int) {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	a, bm := reference.RandomSlice[T](r, n*n), reference.RandomSlice[T](r, n*n)
	av, _ := amp.NewArrayView(amp.Extent2(n, n), a)
	bv, _ := amp.NewArrayView(amp.Extent2(n, n), bm)
	cv, _ := amp.NewArrayView(amp.Extent2(n, n), make([]T, n*n))
	defer av.Release()
	defer bv.Release()
	defer cv.Release()
	var times [2][]time.Duration
	for i := range pairRuns + 1 {
		for j, name := range []string{cName, goName} {
			var kt time.Duration
			spinFirst(b, v)
			if err := linalg.MatMul(1, av, bv, 0, cv, &linalg.Options{Kernel: name, Tile: tile, View: v, KernelTime: &kt}); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			if i > 0 { // the first run of each loads and uploads
				times[j] = append(times[j], kt)
			}
		}
	}
	if err := cv.Synchronize(); err != nil {
		b.Fatal(err)
	}
	c, _, _ := cv.HostMatrix(false)
	if chk := reference.CheckMatMul(n, n, n, 1, a, bm, 0, nil, c[:n*n], r); chk.Err() != nil {
		b.Fatalf("%s n=%d: %v", goName, n, chk.Err())
	}
	mc, mg := median(times[0]), median(times[1])
	flops := 2 * float64(n) * float64(n) * float64(n)
	b.Logf("matmul %-7T n=%-5d tile %-2d  %-9s %8.3f ms %7.0f GFLOP/s   %-14s %8.3f ms %7.0f GFLOP/s   Go/C %.3f",
		*new(T), n, tile, cName, ms(mc), flops/mc.Seconds()/1e9, goName, ms(mg), flops/mg.Seconds()/1e9, mg.Seconds()/mc.Seconds())
}

func dotPair[T amp.Element](b *testing.B, v *amp.AcceleratorView, n int) {
	r := rand.New(rand.NewPCG(uint64(n), 13))
	x, y := reference.RandomSlice[T](r, n), reference.RandomSlice[T](r, n)
	xv, _ := amp.NewArrayView(amp.Extent1(n), x)
	yv, _ := amp.NewArrayView(amp.Extent1(n), y)
	defer xv.Release()
	defer yv.Release()
	var times [2][]time.Duration
	var sums [2]T
	for i := range dotRuns + 1 {
		for j, name := range []string{"tiled", "go-tiled"} {
			var kt time.Duration
			spinFirst(b, v)
			s, err := linalg.Dot(xv, yv, &linalg.Options{Kernel: name, Tile: 256, View: v, KernelTime: &kt})
			if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			sums[j] = s
			if i > 0 {
				times[j] = append(times[j], kt)
			}
		}
	}
	mc, mg := median(times[0]), median(times[1])
	bytes := 2 * float64(n) * float64(sizeOf[T]())
	b.Logf("dot    %-7T n=%-9d tile 256  tiled %8.3f ms %6.0f GB/s   go-tiled %8.3f ms %6.0f GB/s   Go/C %.3f   sums %v %v",
		*new(T), n, ms(mc), bytes/mc.Seconds()/1e9, ms(mg), bytes/mg.Seconds()/1e9, mg.Seconds()/mc.Seconds(), sums[0], sums[1])
}

func sizeOf[T amp.Element]() int {
	switch any(*new(T)).(type) {
	case float64:
		return 8
	}
	return 4
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }
