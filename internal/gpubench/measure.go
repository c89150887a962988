package gpubench

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/cpu/gemm"
	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/precision"
)

// DefaultReps is the number of timed repetitions of each library, each way,
// when Options does not say: an odd number, so the median is one of them,
// and enough that one slow repetition (a clock ramp, a neighbour) does not
// move it.
const DefaultReps = 7

// DefaultSpin is how long the GPU is kept busy before each kernel-only
// run (see Options.Spin).
const DefaultSpin = time.Millisecond

// Options says how to measure. The zero value means the defaults.
type Options struct {
	// Reps is the number of timed repetitions of each library, kernel only
	// and end to end each (default DefaultReps).
	Reps int
	// Spin is how long the GPU is kept busy (by a kernel that waits on its
	// clock) before each kernel-only run, so that the host has queued the
	// start event, the launch and the end event before the GPU reaches the
	// first: the timed span is then the GPU's work alone, without the
	// host's launch overhead (see gpu.Device.Spin). Default DefaultSpin; negative:
	// none, and the span includes whatever the host takes to launch.
	Spin time.Duration
	// Seed makes the operands, as cpubench.Options.Seed does (default 1):
	// the same seed gives the same operands for a case on the CPU and here.
	// In a batch, product i's are those of seed Seed+i.
	Seed uint64
	// Batch, if not 0, makes each case a strided batch of Batch
	// independent products, 1 to MaxBatch (A, B and C each Batch matrices
	// laid one after another), multiplied in one call by the libraries
	// with a batched path (Library.Batch); the others are left out. Every
	// product of every run is checked.
	Batch int
	// Progress, when set, is called by Run before each case with the
	// number of cases done, the total and the case about to run, and once
	// more when all are done.
	Progress func(done, total int, current cpubench.Case)
}

func (o Options) withDefaults() Options {
	if o.Reps <= 0 {
		o.Reps = DefaultReps
	}
	if o.Seed == 0 {
		o.Seed = cpubench.DefaultOptions.Seed
	}
	if o.Spin == 0 {
		o.Spin = DefaultSpin
	}
	return o
}

// MaxBatch is the most products Options.Batch takes: reg128 runs a batch
// in one launch, a product a block of the grid's z.
const MaxBatch = 65535

// LibResult is one library's measurement of one case.
type LibResult struct {
	Library string
	// Kernel and EndToEnd are every timed repetition, in the order run.
	Kernel, EndToEnd []time.Duration
	// The medians, and the rates at Result.Flops.
	KernelMedian, EndToEndMedian time.Duration
	KernelGFLOPS, EndToEndGFLOPS float64
}

// LeftOut is a library a case did not measure, and why.
type LeftOut struct{ Library, Why string }

// Result is the measurement of one case on every library that could take
// it, in the order the libraries were given.
type Result struct {
	Case cpubench.Case
	// Batch is Options.Batch: the products of a run, or 0 for one product
	// not batched.
	Batch   int
	Libs    []LibResult
	LeftOut []LeftOut
}

// Flops is the work of one run: the case's, times the products of a batch.
func (r Result) Flops() float64 { return r.Case.Flops() * float64(max(r.Batch, 1)) }

// Lib returns the result of the library named name, and whether it was
// measured.
func (r Result) Lib(name string) (LibResult, bool) {
	for _, l := range r.Libs {
		if l.Library == name {
			return l, true
		}
	}
	return LibResult{}, false
}

// Run measures every case on every library, calling each (when not nil)
// with each case's result as soon as it is known. It stops at the first
// error, a wrong result included.
func Run(dev *gpu.Device, cases []cpubench.Case, libs []Library, opt Options, each func(Result)) ([]Result, error) {
	var results []Result
	for i, c := range cases {
		if opt.Progress != nil {
			opt.Progress(i, len(cases), c)
		}
		r, err := Measure(dev, c, libs, opt)
		if err != nil {
			return results, err
		}
		results = append(results, r)
		if each != nil {
			each(r)
		}
	}
	if opt.Progress != nil && len(cases) > 0 {
		opt.Progress(len(cases), len(cases), cases[len(cases)-1])
	}
	return results, nil
}

// Measure times case c on each library, as the package doc describes.
// Libraries that cannot take the case (transposes, a batch, too many rows
// for their grid) are left out of it, named in Result.LeftOut; it is an
// error if none can.
func Measure(dev *gpu.Device, c cpubench.Case, libs []Library, opt Options) (Result, error) {
	if opt.Batch < 0 || opt.Batch > MaxBatch {
		return Result{}, fmt.Errorf("gpubench: a batch of %d products, want 1 to %d (0: not batched)", opt.Batch, MaxBatch)
	}
	res := Result{Case: c, Batch: opt.Batch}
	var with []Library
	var why []string
	for _, l := range libs {
		if w := l.leftOut(c, opt.Batch); w != "" {
			res.LeftOut = append(res.LeftOut, LeftOut{Library: l.Name, Why: w})
			why = append(why, l.Name+" "+w)
			continue
		}
		with = append(with, l)
	}
	if len(with) == 0 {
		return Result{}, fmt.Errorf("gpubench: %s: none of the libraries can measure it (%s; reg128 and cublas take transposes and batches)",
			caseName(c, opt.Batch), strings.Join(why, ", "))
	}
	if err := CheckShapes(with, []cpubench.Shape{c.Shape()}); err != nil {
		return Result{}, fmt.Errorf("gpubench: %w", err)
	}
	opt = opt.withDefaults()
	if c.Type == cpubench.Float64 {
		return measure[float64](dev, res, with, opt)
	}
	return measure[float32](dev, res, with, opt)
}

// caseName names a case in errors, with its batch.
func caseName(c cpubench.Case, batch int) string {
	if batch == 0 {
		return c.String()
	}
	return fmt.Sprintf("%s/batch=%d", c, batch)
}

func measure[T float32 | float64](dev *gpu.Device, res Result, libs []Library, opt Options) (Result, error) {
	c, name := res.Case, caseName(res.Case, res.Batch)
	m, n, _ := c.Dims()
	ctx := dev.Context
	count := max(res.Batch, 1)
	problems := make([]*cpubench.Problem, count)
	cs := make([][]T, count) // each product's C, which its check reads
	var a, b, host []T       // the operands as the device holds them, one after another
	for i := range problems {
		problems[i] = cpubench.NewProblem(c, opt.Seed+uint64(i))
		var pa, pb []T
		pa, pb, cs[i] = operands[T](problems[i])
		if count == 1 {
			a, b, host = pa, pb, cs[i]
			break
		}
		if i == 0 {
			a, b, host = make([]T, 0, count*len(pa)), make([]T, 0, count*len(pb)), make([]T, count*len(cs[i]))
		}
		a, b = append(a, pa...), append(b, pb...)
	}
	runtime.GC() // the last case's operands: collect them now, not during a timed copy

	size := int(unsafe.Sizeof(T(0)))
	var bufs [3]cuda.DevicePtr // A, B, C
	for i, elems := range [3]int{len(a), len(b), len(host)} {
		var err error
		if bufs[i], err = ctx.Alloc(elems * size); err != nil {
			for _, p := range bufs[:i] {
				ctx.Free(p)
			}
			return Result{}, fmt.Errorf("gpubench: %s: %w", name, err)
		}
	}
	defer func() {
		ctx.Synchronize() // nothing may still use them
		for _, p := range bufs {
			ctx.Free(p)
		}
	}()
	dA, dB, dC := bufs[0], bufs[1], bufs[2]
	upload := func() error {
		if err := cuda.CopySliceHtoD(ctx, dA, a); err != nil {
			return err
		}
		return cuda.CopySliceHtoD(ctx, dB, b)
	}
	if err := upload(); err != nil {
		return Result{}, fmt.Errorf("gpubench: %s: upload: %w", name, err)
	}

	// poison fills C with NaN on both sides (all-ones bytes are a NaN in
	// either type), so that an element the library does not write fails
	// the check instead of passing with an earlier run's value.
	poison := func() error {
		for _, p := range problems {
			p.Poison()
		}
		return ctx.Memset(dC, 0xff, len(host)*size)
	}
	// check checks every product of the batch: a kernel that mixes up the
	// strides gets one product right and the others wrong.
	check := func(l Library) error {
		for i, p := range problems {
			if count > 1 {
				copy(cs[i], host[i*m*n:(i+1)*m*n])
			}
			verify := p.Check
			if l.precision != "" && c.Type == cpubench.Float32 {
				verify = func() error { return p.CheckIn(precision.Unit(l.precision)) }
			}
			if err := verify(); err != nil {
				if count > 1 {
					return fmt.Errorf("%s %s: product %d: %w: %v", l.Name, name, i, cpubench.ErrWrongResult, err)
				}
				return fmt.Errorf("%s %s: %w: %v", l.Name, name, cpubench.ErrWrongResult, err)
			}
		}
		return nil
	}
	kernelRep := func(l Library) (time.Duration, error) {
		if err := poison(); err != nil {
			return 0, err
		}
		// The memset, and the spin, are queued on the default stream before
		// the library's start event, so they are finished before the timed
		// span begins.
		if opt.Spin > 0 {
			if err := dev.Spin(opt.Spin); err != nil {
				return 0, err
			}
		}
		took, err := multiply(l, c, res.Batch, dA, dB, dC)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", l.Name, name, err)
		}
		if err := cuda.CopySliceDtoH(ctx, host, dC); err != nil {
			return 0, fmt.Errorf("%s %s: download: %w", l.Name, name, err)
		}
		return took, check(l)
	}
	e2eRep := func(l Library) (time.Duration, error) {
		if err := poison(); err != nil {
			return 0, err
		}
		if err := ctx.Synchronize(); err != nil { // the memset, before the clock starts
			return 0, err
		}
		start := time.Now()
		if err := upload(); err != nil {
			return 0, fmt.Errorf("%s %s: upload: %w", l.Name, name, err)
		}
		if _, err := multiply(l, c, res.Batch, dA, dB, dC); err != nil {
			return 0, fmt.Errorf("%s %s: %w", l.Name, name, err)
		}
		// The download is the end-to-end run's own; it returns when C is
		// in host memory, which is when a caller could use it.
		if err := cuda.CopySliceDtoH(ctx, host, dC); err != nil {
			return 0, fmt.Errorf("%s %s: download: %w", l.Name, name, err)
		}
		took := time.Since(start)
		return took, check(l)
	}
	// Warm-up, both ways, checked, untimed.
	for _, l := range libs {
		if _, err := kernelRep(l); err != nil {
			return Result{}, err
		}
		if _, err := e2eRep(l); err != nil {
			return Result{}, err
		}
	}
	kernel := make([][]time.Duration, len(libs))
	e2e := make([][]time.Duration, len(libs))
	for range opt.Reps {
		for i, l := range libs {
			took, err := kernelRep(l)
			if err != nil {
				return Result{}, err
			}
			kernel[i] = append(kernel[i], took)
		}
		for i, l := range libs {
			took, err := e2eRep(l)
			if err != nil {
				return Result{}, err
			}
			e2e[i] = append(e2e[i], took)
		}
	}
	for i, l := range libs {
		km, em := median(kernel[i]), median(e2e[i])
		res.Libs = append(res.Libs, LibResult{Library: l.Name, Kernel: kernel[i], EndToEnd: e2e[i],
			KernelMedian: km, EndToEndMedian: em, KernelGFLOPS: rate(res.Flops(), km), EndToEndGFLOPS: rate(res.Flops(), em)})
	}
	return res, nil
}

// multiply runs library l on case c's operands at dA, dB and dC, stored as
// c's transposes say, every row stride the stored width of its matrix; a
// batch (batch > 0) lies one product after another.
func multiply(l Library, c cpubench.Case, batch int, dA, dB, dC cuda.DevicePtr) (time.Duration, error) {
	m, n, k := c.Dims()
	lda, ldb := k, n
	if c.Trans.A {
		lda = m
	}
	if c.Trans.B {
		ldb = k
	}
	switch {
	case batch > 0:
		return l.Batch(c.Type, c.Trans, m, n, k, batch, dA, lda, m*k, dB, ldb, k*n, dC, n, m*n)
	case c.Trans == (cpubench.Trans{}):
		return l.Multiply(c.Type, m, n, k, dA, lda, dB, ldb, dC, n)
	}
	return l.Gemm(c.Type, c.Trans, m, n, k, dA, lda, dB, ldb, dC, n)
}

// operands returns the problem's A and B and the result buffer its check
// reads. cpubench.Problem hands them to the library it runs; a "library"
// that keeps them, and multiplies nothing, gets them without a second copy
// of the operands or a second implementation of the check.
func operands[T float32 | float64](p *cpubench.Problem) (a, b, c []T) {
	var got [3]any
	p.Run(cpubench.Library{
		Name: "capture",
		Sgemm: func(_, _ bool, _, _, _ int, _ float32, a []float32, _ int, b []float32, _ int, _ float32, c []float32, _ int) {
			got = [3]any{a, b, c}
		},
		Dgemm: func(_, _ bool, _, _, _ int, _ float64, a []float64, _ int, b []float64, _ int, _ float64, c []float64, _ int) {
			got = [3]any{a, b, c}
		},
	})
	return got[0].([]T), got[1].([]T), got[2].([]T)
}

// CPU measures goamp's packed CPU engine (internal/cpu/gemm, all of
// GOMAXPROCS's threads) on case c with cpubench's method and options: the
// baseline the GPU's end-to-end time is compared with.
func CPU(c cpubench.Case, opt cpubench.Options) (cpubench.LibResult, error) {
	lib := cpubench.Library{Name: cpubench.Goamp, Sgemm: gemm.Float32, Dgemm: gemm.Float64}
	r, err := cpubench.Measure(c, []cpubench.Library{lib}, opt)
	if err != nil {
		return cpubench.LibResult{}, err
	}
	return r.Libs[0], nil
}

// gflops is the rate of one multiply of c taking d.
func gflops(c cpubench.Case, d time.Duration) float64 { return rate(c.Flops(), d) }

// rate is flops done in d, in 10^9 a second.
func rate(flops float64, d time.Duration) float64 {
	if d <= 0 {
		return math.Inf(1)
	}
	return flops / d.Seconds() / 1e9
}

// median returns the middle of ts (the mean of the middle two for an even
// count), 0 for none.
func median(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
