package gemm

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
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
		b.Run(fmt.Sprintf("float32/n=%d", n), func(b *testing.B) { benchGEMM(b, Float32, n, "GFLOP/s") })
		b.Run(fmt.Sprintf("int32/n=%d", n), func(b *testing.B) { benchGEMM(b, Int32, n, "GOP/s") })
		b.Run(fmt.Sprintf("float64/n=%d", n), func(b *testing.B) { benchGEMM(b, Float64, n, "GFLOP/s") })
	}
}

func benchGEMM[T Element](b *testing.B, f func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int), n int, unit string) {
	a, bm, c := make([]T, n*n), make([]T, n*n), make([]T, n*n)
	for i := range a {
		a[i], bm[i] = T(i%7)-3, T(i%5)-2
	}
	for b.Loop() {
		f(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
}

// BenchmarkAfterGap times a 256x256x256 float32 product that follows a gap
// of busy work on the calling goroutine: none, one shorter than the workers'
// least idle spin, one that the spin stretches to cover (idleSpinFor), and
// one longer than the longest spin, after which the workers have gone to
// sleep and must be woken. It is the measurement behind idleSpin.
func BenchmarkAfterGap(b *testing.B) {
	const n = 256
	a, bm, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for _, gap := range []time.Duration{0, idleSpin / 10, 4 * idleSpin, 2 * maxIdleSpin} {
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

// BenchmarkCallerWork times float64 256x256x256 products, TT and NN,
// each after the calling goroutine has done something between calls:
// nothing; written a 512 KiB buffer (as goamp bench's poisoning of C
// does); spun for as long as that write took; slept as long. On the GPU
// machine's 16-core host TT (whose every thread packs all of B^T) ran at
// about half its rate after the write and NN (B read where it lies) lost
// little; on 2 cores neither lost anything (docs/PERFORMANCE.md, "16 cores
// again"). The spin and the sleep tell the caller's cache from the gap;
// the median, 90th percentile and worst call tell a uniform slowdown from a
// few calls held up (a thread descheduled, a worker woken).
//
//	go test -c -o gemm.test ./internal/cpu/gemm
//	./gemm.test -test.run '^$' -test.bench CallerWork -test.count 3
func BenchmarkCallerWork(b *testing.B) {
	const n = 256
	a, bm, c, other := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	for i := range a {
		a[i], bm[i] = float64(i%7)-3, float64(i%5)-2
	}
	write := func() {
		for i := range other {
			other[i] = float64(i)
		}
	}
	start := time.Now()
	write()
	gap := time.Since(start)
	between := map[string]func(){
		"none":  func() {},
		"write": write,
		"spin": func() {
			for s := time.Now(); time.Since(s) < gap; {
			}
		},
		"sleep": func() { time.Sleep(gap) },
	}
	for _, t := range []string{"TT", "NN"} {
		for _, w := range []string{"none", "write", "spin", "sleep"} {
			b.Run(fmt.Sprintf("%s/%s", t, w), func(b *testing.B) {
				var inside time.Duration
				var calls []time.Duration
				for b.Loop() {
					between[w]()
					start := time.Now()
					Float64(t == "TT", t == "TT", n, n, n, 1, a, n, bm, n, 0, c, n)
					took := time.Since(start)
					inside += took
					calls = append(calls, took)
				}
				slices.Sort(calls)
				b.ReportMetric(2*n*n*n*float64(b.N)/inside.Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(float64(calls[len(calls)/2].Microseconds()), "p50-us")
				b.ReportMetric(float64(calls[len(calls)*9/10].Microseconds()), "p90-us")
				b.ReportMetric(float64(calls[len(calls)-1].Microseconds()), "max-us")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

var (
	blocksFlag = flag.String("gemm.blocks", "", "engines for BenchmarkBlockSizes: KERNEL:MC/KC/NC,... (KERNEL a micro-kernel's name; default: each type's engines and the textbook blocks)")
	sizeFlag   = flag.Int("gemm.n", 1024, "n for BenchmarkBlockSizes")
	transFlag  = flag.String("gemm.trans", "NN", "transposes for BenchmarkBlockSizes: NN, NT, TN or TT (TN: A transposed)")
)

// BenchmarkBlockSizes compares micro-kernels and block sizes on n x n
// row-major products (-gemm.n, -gemm.trans), interleaved: each trip of the benchmark loop
// runs every variant for about 0.2 s in turn, so that the machine's drifts
// hit all of them alike, and the median rate of each is reported. It is how
// the engines' block sizes were chosen (docs/PERFORMANCE.md):
//
//	go test -run '^$' -bench BlockSizes -benchtime 15x ./internal/cpu/gemm \
//	    -gemm.n 1024 -gemm.blocks avx512-12x16:24/512/2048,avx512-12x16:96/128/2048
func BenchmarkBlockSizes(b *testing.B) {
	n := *sizeFlag
	trans := *transFlag
	if len(trans) != 2 || strings.Trim(trans, "NT") != "" {
		b.Fatalf("-gemm.trans: %q is not NN, NT, TN or TT", trans)
	}
	var variants []*blockVariant
	if *blocksFlag == "" {
		variants = append(defaultVariants(enginesF32, trans), defaultVariants(enginesF64, trans)...)
	} else {
		for _, v := range strings.Split(*blocksFlag, ",") {
			bv, err := parseVariant(v, trans)
			if err != nil {
				b.Fatal(err)
			}
			variants = append(variants, bv)
		}
	}
	runVariants(b, n, variants)
	for _, v := range variants {
		b.ReportMetric(v.median(), v.name+"_GFLOP/s")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkTransposes measures the four transpose cases of n x n products
// (-gemm.n) with the engines in use, interleaved as BenchmarkBlockSizes
// does, and reports each case's median rate as a fraction of the
// untransposed one's:
//
//	go test -run '^$' -bench Transposes -benchtime 15x ./internal/cpu/gemm -gemm.n 1024
func BenchmarkTransposes(b *testing.B) {
	n := *sizeFlag
	var variants []*blockVariant
	for _, t := range []string{"NN", "NT", "TN", "TT"} {
		variants = append(variants, newVariant(engineF32, t), newVariant(engineF64, t))
	}
	runVariants(b, n, variants)
	for i, v := range variants {
		nn := variants[i%2] // the same type's NN
		b.ReportMetric(v.median()/nn.median(), v.name+"_of_NN")
	}
	b.ReportMetric(0, "ns/op")
}

// runVariants gives each variant about 0.2 s in turn, once a trip of the
// benchmark's loop.
func runVariants(b *testing.B, n int, variants []*blockVariant) {
	for _, v := range variants {
		v.setup(n)
	}
	for b.Loop() {
		for _, v := range variants {
			v.rates = append(v.rates, v.measure(n, 200*time.Millisecond))
		}
	}
}

// blockVariant is one engine that BenchmarkBlockSizes measures.
type blockVariant struct {
	name    string
	setup   func(n int)
	measure func(n int, d time.Duration) float64 // GFLOP/s over about d
	rates   []float64
}

func (v *blockVariant) median() float64 {
	slices.Sort(v.rates)
	return v.rates[len(v.rates)/2]
}

// defaultVariants returns each assembly engine as it is and with the
// textbook blocks: a B micro-panel in half of L1 (kc = 256), an A block of
// about 150 KiB of L2.
func defaultVariants[T float](engines []*engine[T], trans string) []*blockVariant {
	var out []*blockVariant
	for _, e := range engines[1:] {
		textbook := *e
		textbook.kc = 256
		textbook.mc = roundUp(150<<10/(256*int(unsafe.Sizeof(T(0)))), e.kernel.MR)
		out = append(out, newVariant(e, trans), newVariant(&textbook, trans))
	}
	return out
}

// parseVariant reads KERNEL:MC/KC/NC.
func parseVariant(s, trans string) (*blockVariant, error) {
	name, blocks, _ := strings.Cut(s, ":")
	var mc, kc, nc int
	if _, err := fmt.Sscanf(blocks, "%d/%d/%d", &mc, &kc, &nc); err != nil || mc < 1 || kc < 1 || nc < 1 {
		return nil, fmt.Errorf("-gemm.blocks: %q is not KERNEL:MC/KC/NC", s)
	}
	for _, e := range enginesF32 {
		if e.kernel.Name == name {
			return newVariant(&engine[float32]{kernel: e.kernel, mc: mc, kc: kc, nc: nc}, trans), nil
		}
	}
	for _, e := range enginesF64 {
		if e.kernel.Name == name {
			return newVariant(&engine[float64]{kernel: e.kernel, mc: mc, kc: kc, nc: nc}, trans), nil
		}
	}
	return nil, fmt.Errorf("-gemm.blocks: no micro-kernel %q on this machine", name)
}

// newVariant measures engine e on products with the transposes trans ("NN",
// "NT", "TN" or "TT").
func newVariant[T Element](e *engine[T], trans string) *blockVariant {
	var a, bm, c []T
	var zero T
	return &blockVariant{
		name: fmt.Sprintf("%T:%s:%d/%d/%d:%s", zero, e.kernel.Name, e.mc, e.kc, e.nc, trans),
		setup: func(n int) {
			a, bm, c = make([]T, n*n), make([]T, n*n), make([]T, n*n)
			for i := range a {
				a[i], bm[i] = T(i%7)-3, T(i%5)-2
			}
		},
		measure: func(n int, d time.Duration) float64 {
			calls := 0
			start := time.Now()
			for calls == 0 || time.Since(start) < d {
				gemm(e, trans[0] == 'T', trans[1] == 'T', n, n, n, 1, a, n, bm, n, 0, c, n)
				calls++
			}
			return 2 * float64(n*n*n) * float64(calls) / time.Since(start).Seconds() / 1e9
		},
	}
}

// BenchmarkPack times packing a 1024 x 1024 operand into the engine's
// panels, in ns an element: A (mc-row bands, as the threads take them) and B,
// untransposed (N) and transposed (T).
func BenchmarkPack(b *testing.B) {
	benchPack(b, engineF32)
	benchPack(b, engineF64)
}

func benchPack[T float](b *testing.B, e *engine[T]) {
	const n = 1024
	src, dst := make([]T, n*n), make([]T, n*n+n*e.kernel.NR)
	kc := min(n, e.kc)
	for _, trans := range []bool{false, true} {
		name := fmt.Sprintf("%T/%s/trans=%v", T(0), e.kernel.Name, trans)
		b.Run("A/"+name, func(b *testing.B) {
			for b.Loop() {
				for ic := 0; ic < n; ic += e.mc {
					packA(dst, src, n, trans, ic, 0, min(e.mc, n-ic), kc, e.kernel.MR)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*kc), "ns/element")
		})
		b.Run("B/"+name, func(b *testing.B) {
			for b.Loop() {
				packB(dst, src, n, trans, 0, 0, kc, n, e.kernel.NR)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*kc), "ns/element")
		})
	}
}

// BenchmarkPrivateB compares, interleaved, products whose B block each thread
// packs for itself (the engine's choice below privateBTotal) with the same
// products packing one shared copy, at n = 128, 256 and 512 (or -gemm.n if
// set otherwise than its default), and reports each one's median rate:
//
//	go test -run '^$' -bench PrivateB -benchtime 10x ./internal/cpu/gemm
func BenchmarkPrivateB(b *testing.B) {
	sizes := []int{128, 256, 512}
	if *sizeFlag != 1024 {
		sizes = []int{*sizeFlag}
	}
	def := privateBTotal
	defer func() { privateBTotal = def }()
	var variants []*blockVariant
	for _, n := range sizes {
		for _, shared := range []bool{false, true} {
			for _, v := range []*blockVariant{newVariant(engineF32, "NN"), newVariant(engineF64, "NN")} {
				v.name = fmt.Sprintf("n=%d:%s:shared=%v", n, v.name, shared)
				setup, measure := v.setup, v.measure
				v.setup = func(int) { setup(n) }
				v.measure = func(_ int, d time.Duration) float64 {
					privateBTotal = def
					if shared {
						privateBTotal = 0
					}
					return measure(n, d)
				}
				variants = append(variants, v)
			}
		}
	}
	runVariants(b, 0, variants)
	for _, v := range variants {
		b.ReportMetric(v.median(), v.name+"_GFLOP/s")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkInt32Engines measures every int32 engine this machine runs (the
// portable Go one and the assembly ones) on n x n products (-gemm.n),
// interleaved, and reports each one's median rate in GOP/s (2n^3 integer
// operations a product):
//
//	go test -run '^$' -bench Int32Engines -benchtime 5x ./internal/cpu/gemm
func BenchmarkInt32Engines(b *testing.B) {
	var variants []*blockVariant
	for _, e := range enginesI32 {
		variants = append(variants, newVariant(e, "NN"))
	}
	runVariants(b, *sizeFlag, variants)
	for _, v := range variants {
		b.ReportMetric(v.median(), v.name+"_GOP/s")
	}
	b.ReportMetric(0, "ns/op")
}
