package linalg_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
)

// BenchmarkMatMul times every registered matmul kernel on square float32
// matrices of side 256 and 1024 on every accelerator present, and checks
// each result against the float64 reference once, outside the timer.
//
//	go test -run '^$' -bench MatMul -benchtime 3x ./linalg/
func BenchmarkMatMul(b *testing.B) {
	for _, v := range views() {
		for _, k := range linalg.Kernels(linalg.OpMatMul) {
			if k.Accelerator != v.Accelerator().Kind() || (len(k.Elements) > 0 && !slices.Contains(k.Elements, "float32")) {
				continue // benchMatMul multiplies float32
			}
			for _, n := range []int{256, 1024} {
				b.Run(fmt.Sprintf("%s/%s/n=%d", v.Accelerator().Path(), k.Name, n), func(b *testing.B) {
					benchMatMul(b, &linalg.Options{Kernel: k.Name, View: v}, n)
				})
			}
		}
	}
}

func benchMatMul(b *testing.B, opt *linalg.Options, n int) {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	a, bm := reference.RandomSlice[float32](r, n*n), reference.RandomSlice[float32](r, n*n)
	c := make([]float32, n*n)
	av, _ := amp.NewArrayView(amp.Extent2(n, n), a)
	bv, _ := amp.NewArrayView(amp.Extent2(n, n), bm)
	cv, _ := amp.NewArrayView(amp.Extent2(n, n), c)
	b.SetBytes(0)
	b.ResetTimer()
	for b.Loop() {
		if err := linalg.MatMul(1, av, bv, 0, cv, opt); err != nil {
			b.Fatal(err)
		}
		if err := cv.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	// Checked in O(n^2) (projections plus whole rows and columns), so that
	// a check never takes longer than the products it follows.
	if err := reference.CheckMatMul(n, n, n, 1, a, bm, 0, nil, c, r).Err(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMatMulTileSize times the CPU tiled kernel at n=256 with tiles of
// side 8, 16 and 32, to show what barriers cost on the CPU.
func BenchmarkMatMulTileSize(b *testing.B) {
	for _, ts := range []int{8, 16, 32} {
		b.Run(fmt.Sprintf("cpu/tiled/tile=%d/n=256", ts), func(b *testing.B) {
			benchMatMul(b, &linalg.Options{Kernel: "tiled", Tile: ts, View: amp.CPU().DefaultView()}, 256)
		})
	}
}

// BenchmarkDot times every registered dot kernel on float32 vectors of 2^20
// elements.
func BenchmarkDot(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(1, 2))
	x, y := reference.RandomSlice[float32](r, n), reference.RandomSlice[float32](r, n)
	xv, _ := amp.NewArrayView(amp.Extent1(n), x)
	yv, _ := amp.NewArrayView(amp.Extent1(n), y)
	for _, v := range views() {
		for _, k := range linalg.Kernels(linalg.OpDot) {
			if k.Accelerator != v.Accelerator().Kind() {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s/n=%d", v.Accelerator().Path(), k.Name, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := linalg.Dot(xv, yv, &linalg.Options{Kernel: k.Name, View: v}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
