package gpubench

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/gpu/kernels"
	"github.com/goamp/goamp/internal/reference"
)

// The dot benchmark (`goamp bench --device cuda --op dot`) times linalg's
// CUDA dot products against a device-to-device copy of the same length,
// the anchor: a copy of n elements reads n and writes n, as a dot product
// of n reads 2n, so the copy's time over a kernel's is the fraction of the
// copy's bandwidth the kernel reaches. The method is
// internal/gpu's BenchmarkDotVsCopy: before each kernel-only run a 256 MiB
// scratch buffer is written (the H100's L2 is 50 MiB), so that no run reads
// what the one before it left in L2, then a spin kernel keeps the GPU busy
// while the host queues the events and the launch (see Options.Spin). The
// end-to-end runs add the upload of x and y from pageable memory and the
// wait for the result on the host (for the copy, for the copy to finish).
//
// Every kernel's every result is checked against a float64 sum; the copy
// is checked once a case, after its warm-up, against x.

// Names of the dot benchmark's rows: the anchor, then linalg's CUDA dot
// products.
const (
	DotCopy    = "copy"    // cuMemcpyDtoDAsync of x into a third buffer: the anchor
	DotOnePass = "onepass" // dot_onepass.cu through gpu.DotOnePass: partials added on the device, rounded on the host
	DotWarp    = "warp"    // dot_warp.cu through gpu.Dot: warp shuffles, partials added on the host
	DotTiled   = "tiled"   // dot_shared.cu through gpu.Dot: CUDA by Example's tree in shared memory
)

// DotKernelNames lists the dot products the benchmark knows, in the order
// tables show them.
var DotKernelNames = []string{DotOnePass, DotWarp, DotTiled}

// DefaultDotSizes are the lengths `goamp bench --device cuda --op dot`
// runs when not told: 2^20 (4 MiB of float32, in L2 but for the flush)
// to 2^28 (1 GiB), where the copy runs at the memory's speed.
var DefaultDotSizes = []int{1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28}

// MaxDotN is the longest vector ParseDotSizes accepts: the kernels take
// up to 2^31-1, but three float64 vectors of 2^30 are 24 GiB already.
const MaxDotN = 1 << 30

// DefaultDotReps is the number of timed repetitions of each kernel, each
// way, when DotOptions does not say: more than DefaultReps, as a run of a
// few microseconds moves more from one run to the next than a GEMM's.
const DefaultDotReps = 21

// DotBlock is the threads a block of warp and tiled: linalg's default
// tile for both.
const DotBlock = 256

// DefaultFlushBytes is how much scratch memory is written before each
// kernel-only run: five times the H100's L2.
const DefaultFlushBytes = 256 << 20

// ParseDotKernels reads --libs for the dot benchmark: a comma-separated
// list of DotKernelNames in any case and order. The result is in the order
// of DotKernelNames, without repeats; "" means all of them. The copy is
// always measured, as every ratio is taken against it.
func ParseDotKernels(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return slices.Clone(DotKernelNames), nil
	}
	want := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		name := strings.ToLower(strings.TrimSpace(f))
		if name == "" {
			continue
		}
		if !slices.Contains(DotKernelNames, name) {
			return nil, fmt.Errorf("unknown dot product %q (want %s; the copy is always measured)", strings.TrimSpace(f), strings.Join(DotKernelNames, ", "))
		}
		want[name] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no dot product named")
	}
	var names []string
	for _, n := range DotKernelNames {
		if want[n] {
			names = append(names, n)
		}
	}
	return names, nil
}

// ParseDotSizes reads a comma-separated list of vector lengths, each a
// whole number or a power of two written 2^K ("2^20,1000000"), from 1 to
// MaxDotN. The result is sorted and without repeats.
func ParseDotSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if exp, ok := strings.CutPrefix(f, "2^"); ok {
			var e int
			if e, err = strconv.Atoi(exp); err == nil && (e < 0 || e > 62) {
				err = fmt.Errorf("out of range")
			}
			n = 1 << max(0, min(e, 62))
		}
		if err != nil || n < 1 || n > MaxDotN {
			return nil, fmt.Errorf("length %q: want a whole number or a power 2^K from 1 to %d (2^30)", f, MaxDotN)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("no lengths given")
	}
	slices.Sort(sizes)
	return slices.Compact(sizes), nil
}

// FormatDotSize writes n as 2^K when it is a power of two, as a number
// otherwise: the lengths of the default list read as they were asked for.
func FormatDotSize(n int) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bitLen(n)-1)
	}
	return strconv.Itoa(n)
}

func bitLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// DotCase is one dot benchmark problem: x.y for two random vectors of n
// elements of one type.
type DotCase struct {
	Type cpubench.Type
	N    int
}

// DotCases returns every combination of the lengths and types, by type,
// then length.
func DotCases(sizes []int, types []cpubench.Type) []DotCase {
	var cases []DotCase
	for _, t := range types {
		for _, n := range sizes {
			cases = append(cases, DotCase{Type: t, N: n})
		}
	}
	return cases
}

// String names the case: "float32/n=2^20".
func (c DotCase) String() string { return fmt.Sprintf("%s/n=%s", c.Type, FormatDotSize(c.N)) }

// Bytes is the memory one run moves: 2n elements, read by a dot product
// (x and y), read and written by the copy.
func (c DotCase) Bytes() float64 {
	size := 4
	if c.Type == cpubench.Float64 {
		size = 8
	}
	return 2 * float64(c.N) * float64(size)
}

// DotFunc returns x.y for the n-element vectors of type t at device
// addresses x and y, converted to float64 (exactly), and the kernel's time
// on the device.
type DotFunc func(t cpubench.Type, n int, x, y cuda.DevicePtr) (float64, time.Duration, error)

// DotKernel is a GPU dot product the benchmark measures.
type DotKernel struct {
	Name        string // one of DotKernelNames; tables use it
	Description string // one line for the header of a table
	Dot         DotFunc
	// Wide says that float32 products are summed in float64, the result
	// rounded to float32 once, and so are held to a tighter tolerance.
	Wide bool
}

// DotKernels returns the dot products of names (as from ParseDotKernels)
// on dev.
func DotKernels(dev *gpu.Device, names []string) ([]DotKernel, error) {
	var ks []DotKernel
	for _, name := range names {
		switch name {
		case DotOnePass:
			ks = append(ks, DotKernel{Name: name, Wide: true,
				Description: "dot_onepass.cu: 16-byte loads, warp-shuffle block sums, the partials added exactly into a fixed-point accumulator on the device by integer atomics; aligned float vectors of 32-128 MiB: the last fifth taken in chunks by the blocks that finish first; float32 summed in float64",
				Dot: func(t cpubench.Type, n int, x, y cuda.DevicePtr) (float64, time.Duration, error) {
					if t == cpubench.Float64 {
						return widen(gpu.DotOnePass[float64](dev, n, uint64(x), uint64(y)))
					}
					return widen(gpu.DotOnePass[float32](dev, n, uint64(x), uint64(y)))
				}})
		case DotWarp, DotTiled:
			technique, desc := kernels.DotWarp, "dot_warp.cu: grid-stride sums, warp-shuffle reductions"
			if name == DotTiled {
				technique, desc = kernels.DotShared, "dot_shared.cu: grid-stride sums, a tree reduction in shared memory (CUDA by Example, ch. 5)"
			}
			ks = append(ks, DotKernel{Name: name,
				Description: fmt.Sprintf("%s, %d threads a block, per-block partials added on the host in the element type (not timed)", desc, DotBlock),
				Dot: func(t cpubench.Type, n int, x, y cuda.DevicePtr) (float64, time.Duration, error) {
					if t == cpubench.Float64 {
						return widen(gpu.Dot[float64](dev, technique, DotBlock, n, uint64(x), uint64(y)))
					}
					return widen(gpu.Dot[float32](dev, technique, DotBlock, n, uint64(x), uint64(y)))
				}})
		default:
			return nil, fmt.Errorf("gpubench: unknown dot product %q", name)
		}
	}
	return ks, nil
}

func widen[T float32 | float64](sum T, took time.Duration, err error) (float64, time.Duration, error) {
	return float64(sum), took, err
}

// DotOptions says how to measure dot products. The zero value means the
// defaults.
type DotOptions struct {
	// Reps is the number of timed repetitions of each kernel and of the
	// copy, kernel only and end to end each (default DefaultDotReps).
	Reps int
	// Spin is Options.Spin: how long the GPU is kept busy before each
	// kernel-only run (default DefaultSpin; negative: none).
	Spin time.Duration
	// Flush is the scratch memory written before each kernel-only run, in
	// bytes (default DefaultFlushBytes; negative: none).
	Flush int
	// Seed makes the vectors (default 1).
	Seed uint64
	// Progress, when set, is called by RunDot before each case with the
	// number of cases done, the total and the case about to run, and once
	// more when all are done.
	Progress func(done, total int, current DotCase)
}

func (o DotOptions) withDefaults() DotOptions {
	if o.Reps <= 0 {
		o.Reps = DefaultDotReps
	}
	if o.Spin == 0 {
		o.Spin = DefaultSpin
	}
	if o.Flush == 0 {
		o.Flush = DefaultFlushBytes
	}
	if o.Seed == 0 {
		o.Seed = cpubench.DefaultOptions.Seed
	}
	return o
}

// DotLibResult is the copy's or one kernel's measurement of one case.
type DotLibResult struct {
	Name string
	// Kernel and EndToEnd are every timed repetition, in the order run.
	Kernel, EndToEnd []time.Duration
	// The medians, and the rates at DotCase.Bytes.
	KernelMedian, EndToEndMedian time.Duration
	KernelGBPS, EndToEndGBPS     float64
}

// DotResult is the measurement of one case: the copy first, then each
// kernel in the order given.
type DotResult struct {
	Case DotCase
	Libs []DotLibResult
}

// Lib returns the result named name (DotCopy for the copy), and whether
// it was measured.
func (r DotResult) Lib(name string) (DotLibResult, bool) {
	for _, l := range r.Libs {
		if l.Name == name {
			return l, true
		}
	}
	return DotLibResult{}, false
}

// RunDot measures every case on the copy and every kernel, calling each
// (when not nil) with each case's result as soon as it is known. It stops
// at the first error, a wrong result included.
func RunDot(dev *gpu.Device, cases []DotCase, ks []DotKernel, opt DotOptions, each func(DotResult)) ([]DotResult, error) {
	var results []DotResult
	for i, c := range cases {
		if opt.Progress != nil {
			opt.Progress(i, len(cases), c)
		}
		r, err := MeasureDot(dev, c, ks, opt)
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

// MeasureDot times case c on the copy and on each kernel, as the comment
// at the top of this file describes: a checked warm-up of each, then
// rounds in which they take turns, kernel only and then end to end.
func MeasureDot(dev *gpu.Device, c DotCase, ks []DotKernel, opt DotOptions) (DotResult, error) {
	if c.N < 1 || c.N > MaxDotN {
		return DotResult{}, fmt.Errorf("gpubench: %s: want a length from 1 to %d", c, MaxDotN)
	}
	opt = opt.withDefaults()
	if c.Type == cpubench.Float64 {
		return measureDot[float64](dev, c, ks, opt)
	}
	return measureDot[float32](dev, c, ks, opt)
}

// dotProblem is a case's vectors and their float64 reference.
type dotProblem[T float32 | float64] struct {
	x, y      []T
	want, mag float64 // sum x[i]*y[i] and sum |x[i]*y[i]|, in float64
}

// newDotProblem draws x and y uniform in [-1, 1), as cpubench draws
// matrices, from seed and the case's name.
func newDotProblem[T float32 | float64](c DotCase, seed uint64) *dotProblem[T] {
	h := fnv.New64a()
	h.Write([]byte("dot/" + c.String()))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	p := &dotProblem[T]{x: reference.RandomSlice[T](r, c.N), y: reference.RandomSlice[T](r, c.N)}
	for i, xi := range p.x {
		t := float64(xi) * float64(p.y[i]) // exact for float32
		p.want += t
		p.mag += math.Abs(t)
	}
	return p
}

// check returns an error when got is farther from the reference than
// kernel k may be: reference.Tolerance of the sum's type over n terms,
// relative to the sum of the magnitudes; for a Wide kernel on float32,
// float64's tolerance plus the one rounding to float32 (twice it, for the
// reference's own rounding).
func (p *dotProblem[T]) check(k DotKernel, got float64) error {
	n := len(p.x)
	var tol float64
	if _, single := any(T(0)).(float32); single && k.Wide {
		tol = 2*reference.UnitRoundoff[float32]()*math.Abs(p.want) + reference.Tolerance[float64](n)*p.mag
	} else {
		tol = reference.Tolerance[T](n) * p.mag
	}
	if diff := math.Abs(got - p.want); !(diff <= tol) { // NaN fails
		return fmt.Errorf("%w: got %v, want %v (error %.3g, tolerance %.3g)", cpubench.ErrWrongResult, got, p.want, diff, tol)
	}
	return nil
}

func measureDot[T float32 | float64](dev *gpu.Device, c DotCase, ks []DotKernel, opt DotOptions) (DotResult, error) {
	ctx := dev.Context
	p := newDotProblem[T](c, opt.Seed)
	runtime.GC() // the last case's vectors: collect them now, not during a timed copy
	size := int(unsafe.Sizeof(T(0)))
	bytes := c.N * size
	var bufs [3]cuda.DevicePtr // x, y, the copy's destination
	for i := range bufs {
		var err error
		if bufs[i], err = ctx.Alloc(bytes); err != nil {
			for _, q := range bufs[:i] {
				ctx.Free(q)
			}
			return DotResult{}, fmt.Errorf("gpubench: %s: %w", c, err)
		}
	}
	var flush cuda.DevicePtr
	if opt.Flush > 0 {
		var err error
		if flush, err = ctx.Alloc(opt.Flush); err != nil {
			for _, q := range bufs {
				ctx.Free(q)
			}
			return DotResult{}, fmt.Errorf("gpubench: %s: the L2 flush's %d bytes: %w", c, opt.Flush, err)
		}
	}
	defer func() {
		ctx.Synchronize() // nothing may still use them
		for _, q := range bufs {
			ctx.Free(q)
		}
		if flush != 0 {
			ctx.Free(flush)
		}
	}()
	dx, dy, dst := bufs[0], bufs[1], bufs[2]
	upload := func() error {
		if err := cuda.CopySliceHtoD(ctx, dx, p.x); err != nil {
			return err
		}
		return cuda.CopySliceHtoD(ctx, dy, p.y)
	}
	if err := upload(); err != nil {
		return DotResult{}, fmt.Errorf("gpubench: %s: upload: %w", c, err)
	}

	// The copy is the first "kernel": its runs return no sum to check.
	type runner struct {
		name string
		run  func() (time.Duration, error)
	}
	runners := []runner{{DotCopy, func() (time.Duration, error) {
		return dev.Timed(func(s *cuda.Stream) error { return s.CopyDtoD(dst, dx, bytes) })
	}}}
	for _, k := range ks {
		runners = append(runners, runner{k.Name, func() (time.Duration, error) {
			got, took, err := k.Dot(c.Type, c.N, dx, dy)
			if err != nil {
				return 0, fmt.Errorf("%s %s: %w", k.Name, c, err)
			}
			if err := p.check(k, got); err != nil {
				return 0, fmt.Errorf("%s %s: %w", k.Name, c, err)
			}
			return took, nil
		}})
	}
	round := 0
	kernelRep := func(r runner) (time.Duration, error) {
		// Written before every timed run, kernel or copy, so that none
		// reads what the one before it left in L2; a new byte each time,
		// so that no part of the driver can skip it. Queued on the default
		// stream, like the spin: both finish before the start event.
		if flush != 0 {
			round++
			if err := ctx.Memset(flush, byte(round), opt.Flush); err != nil {
				return 0, err
			}
		}
		if opt.Spin > 0 {
			if err := dev.Spin(opt.Spin); err != nil {
				return 0, err
			}
		}
		return r.run()
	}
	e2eRep := func(r runner) (time.Duration, error) {
		if err := ctx.Synchronize(); err != nil {
			return 0, err
		}
		start := time.Now()
		if err := upload(); err != nil {
			return 0, fmt.Errorf("%s %s: upload: %w", r.name, c, err)
		}
		if _, err := r.run(); err != nil { // a kernel's result is on the host when it returns; the copy's Timed waited for it
			return 0, err
		}
		return time.Since(start), nil
	}

	// Warm-up, both ways, checked, untimed; then the copy's result once.
	for _, r := range runners {
		if _, err := kernelRep(r); err != nil {
			return DotResult{}, err
		}
		if _, err := e2eRep(r); err != nil {
			return DotResult{}, err
		}
	}
	got := make([]T, c.N)
	if err := cuda.CopySliceDtoH(ctx, got, dst); err != nil {
		return DotResult{}, fmt.Errorf("%s %s: download: %w", DotCopy, c, err)
	}
	if !slices.Equal(got, p.x) {
		return DotResult{}, fmt.Errorf("%s %s: %w: the copy differs from x", DotCopy, c, cpubench.ErrWrongResult)
	}
	got = nil

	kernel := make([][]time.Duration, len(runners))
	e2e := make([][]time.Duration, len(runners))
	for range opt.Reps {
		for i, r := range runners {
			took, err := kernelRep(r)
			if err != nil {
				return DotResult{}, err
			}
			kernel[i] = append(kernel[i], took)
		}
		for i, r := range runners {
			took, err := e2eRep(r)
			if err != nil {
				return DotResult{}, err
			}
			e2e[i] = append(e2e[i], took)
		}
	}
	res := DotResult{Case: c}
	for i, r := range runners {
		km, em := median(kernel[i]), median(e2e[i])
		res.Libs = append(res.Libs, DotLibResult{Name: r.name, Kernel: kernel[i], EndToEnd: e2e[i],
			KernelMedian: km, EndToEndMedian: em, KernelGBPS: rate(c.Bytes(), km), EndToEndGBPS: rate(c.Bytes(), em)})
	}
	return res, nil
}
