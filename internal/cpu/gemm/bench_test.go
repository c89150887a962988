package gemm

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkMicroKernelVsPeak measures, in one run, the machine's FMA peak
// for the kernel's precision (a register-only loop of independent FMAs) and
// each micro-kernel working
// on panels that sit in L1, alternating between them so that noise hits
// both alike. It reports both in GFLOP/s on one thread and the kernel's
// fraction of the peak.
func BenchmarkMicroKernelVsPeak(b *testing.B) {
	const trips = 1 << 16
	peak := func(isa string, double bool) func() float64 {
		return func() float64 {
			start := time.Now()
			per := peakFMA(isa, trips, double)
			return float64(per*trips) / time.Since(start).Seconds()
		}
	}
	for _, e := range enginesF32 {
		if isa := kernelISA(e.kernel.Name); isa != "" {
			b.Run(e.kernel.Name, func(b *testing.B) { benchKernel(b, e.kernel, peak(isa, false)) })
		}
	}
	for _, e := range enginesF64 {
		if isa := kernelISA(e.kernel.Name); isa != "" {
			b.Run(e.kernel.Name, func(b *testing.B) { benchKernel(b, e.kernel, peak(isa, true)) })
		}
	}
}

func benchKernel[T float](b *testing.B, k MicroKernel[T], peak func() float64) {
	const depth, calls = 256, 256
	a := make([]T, depth*k.MR)
	bp := make([]T, depth*k.NR)
	for i := range a {
		a[i] = T(i%7) - 3
	}
	for i := range bp {
		bp[i] = T(i%5) - 2
	}
	c := make([]T, k.MR*k.NR)
	var kernelTime, peakRate float64
	var rounds int
	for b.Loop() {
		start := time.Now()
		for range calls {
			k.Func(depth, &a[0], &bp[0], &c[0], k.NR, 1, 1)
		}
		kernelTime += time.Since(start).Seconds()
		peakRate += peak()
		rounds++
	}
	flops := 2 * float64(depth*k.MR*k.NR*calls*rounds)
	kernelRate := flops / kernelTime
	peakRate /= float64(rounds)
	b.ReportMetric(kernelRate/1e9, "GFLOP/s")
	b.ReportMetric(peakRate/1e9, "peak-GFLOP/s")
	b.ReportMetric(kernelRate/peakRate, "of-peak")
	b.ReportMetric(0, "ns/op")
}

// kernelISA returns the instruction set of an assembly micro-kernel, by its
// name, or "" for a portable one.
func kernelISA(name string) string {
	isa, _, _ := strings.Cut(name, "-")
	if isa == "go" {
		return ""
	}
	return isa
}

// BenchmarkGEMM times the whole engine on square row-major operands.
// Comparisons with OpenBLAS and gonum live in internal/cpubench and
// `goamp bench`.
func BenchmarkGEMM(b *testing.B) {
	for _, n := range []int{64, 256, 1024} {
		b.Run(fmt.Sprintf("float32/n=%d", n), func(b *testing.B) {
			a, bm, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
			for i := range a {
				a[i], bm[i] = float32(i%7)-3, float32(i%5)-2
			}
			for b.Loop() {
				Float32(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("float64/n=%d", n), func(b *testing.B) {
			a, bm, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
			for i := range a {
				a[i], bm[i] = float64(i%7)-3, float64(i%5)-2
			}
			for b.Loop() {
				Float64(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkAfterGap times a 256x256x256 float32 product that follows a gap
// of busy work on the calling goroutine: none, one shorter than the workers'
// idle spin, and one longer, after which the workers have gone to sleep and
// must be woken. It is the measurement behind idleSpin.
func BenchmarkAfterGap(b *testing.B) {
	const n = 256
	a, bm, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for _, gap := range []time.Duration{0, idleSpin / 10, 2 * idleSpin} {
		b.Run(fmt.Sprintf("gap=%v", gap), func(b *testing.B) {
			var inside time.Duration
			for b.Loop() {
				for start := time.Now(); time.Since(start) < gap; {
				}
				start := time.Now()
				Float32(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
				inside += time.Since(start)
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/inside.Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
