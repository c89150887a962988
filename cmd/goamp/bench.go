package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/atomicfile"
	"github.com/goamp/goamp/internal/cpu/gemm"
	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/gpubench"
	"github.com/goamp/goamp/internal/precision"
)

const benchSynopsis = `Measures goamp's matrix multiply against other libraries on this machine:
C = op(A)*op(B) for square n x n random operands, on the CPU against gonum's
native BLAS and OpenBLAS (libopenblas.so.0, loaded at run time when installed).
Every library uses the same number of threads (--threads). After a warm-up
each, the libraries take turns (run by run, or in batches of about 100ms of
short runs), the machine left to settle between turns; the table gives the
median rate of each in GFLOP/s (2n^3 flops a multiply) and goamp's ratio to
the others. Every run is checked against float64 references: a wrong result
stops the benchmark with exit status 1. --shapes adds products of any shape
M x N x K (skinny ones such as 16x4096x4096; GFLOP/s = 2MNK), on the CPU
as on the GPU.

With --device cuda (or cuda:N) it measures goamp's CUDA kernels (naive,
tiled with 16x16 and 32x32 tiles, the register-tiled reg128, dmma on the
FP64 tensor cores for float64, and the Go kernels compiled to PTX) against cuBLAS (libcublas.so.13, loaded at run
time; plain fp32 and fp64, no TF32) on that GPU instead: float32 n = 1024, 2048,
4096 unless --sizes and --types say otherwise; with --trans, a case with
transposes measures the libraries that take them (reg128, dmma and cuBLAS). Each
library's kernel time
(CUDA events around the launch, operands already on the GPU) and end-to-end
time (upload A and B, multiply, download C) is the median of --reps runs
taken in turns after a warm-up, every run checked; the table gives both
rates and their ratios to cuBLAS, then the tiled kernels against the naive
one and the GPU end to end against goamp's CPU engine at n = 1024.
--precision tf32, bf16 or fp16 measures float32 products in that precision
on the tensor cores: mma (mma.sync) and, on Hopper, wgmma against cuBLAS's
cublasGemmEx in the matching compute type (reg128, exact, beside them),
each checked within the precision's tolerance.

On the GPU, --shapes adds products of any shape M x N x K (skinny ones such
as 64x8192x8192; a library that cannot take one is left out of it, with a
note under its rows); --batch N makes every case a strided batch of N
products, timed as one call on reg128, dmma and cuBLAS (cublas<T>gemmStridedBatched)
and every product checked; and --op dot times the dot products onepass, warp
and tiled against a device-to-device copy of the same length, with L2
flushed before each timed run: each kernel's time, GB/s and fraction of the
copy's bandwidth, every result checked against a float64 sum.`

// benchConfig holds goamp bench's flags.
type benchConfig struct {
	sizes, types, trans, libs string
	threads                   int
	budget                    time.Duration
	plot, device              string
	reps                      int
	shapes, op                string
	batch                     int
	precision                 string // --precision: exact, tf32, bf16 or fp16 (lower case once checked)

	// Parsed by validate.
	sizeList  []int
	typeList  []cpubench.Type
	transList []cpubench.Trans
	shapeList []cpubench.Shape // --shapes, and for the GPU --sizes first as squares
	// noSizes: --shapes alone was given on the GPU, so --sizes's default
	// does not apply; hasShapes: --shapes was given, if only as "".
	noSizes, hasShapes bool
}

// The values of --op.
const (
	opMatMul = "matmul"
	opDot    = "dot"
)

// benchLibraries is cpubench.Libraries, a variable so that tests can play
// a machine without OpenBLAS.
var benchLibraries = cpubench.Libraries

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg benchConfig
	fs := newFlagSet("bench", benchSynopsis, stdout)
	fs.StringVar(&cfg.sizes, "sizes", joinInts(cpubench.DefaultSizes), "`LIST` of matrix sizes n, comma-separated (--device cuda: "+joinInts(gpubench.DefaultSizes)+" unless given; with --shapes, none unless given; with --op dot, vector lengths, 2^K allowed, "+dotSizesDefault()+" unless given)")
	fs.StringVar(&cfg.types, "types", "float32,float64", "`LIST` of element types, comma-separated: float32, float64 (--device cuda: float32 unless given)")
	fs.StringVar(&cfg.trans, "trans", "NN", "`LIST` of transposes, comma-separated: NN, TT, NT, TN (TN: A transposed; --device cuda: a transposed case measures reg128, dmma and cublas only)")
	fs.StringVar(&cfg.libs, "libs", "", "`LIST` of libraries, comma-separated: goamp, gonum, openblas; with --device cuda: naive, tiled16, tiled32 (tiled: both), reg128, dmma (float64 only), mma and wgmma (float32 in a reduced --precision only; wgmma on compute capability 9.0), go-simple, go-tiled16, go-tiled32, go-tiled-exact (the Go kernels; go: all four), cublas, goamp: the CUDA C kernels (default: all but go-tiled-exact); with --op dot: onepass, warp, tiled (default: all three; the copy is always measured)")
	fs.IntVar(&cfg.threads, "threads", 0, "`N` threads for every library: sets GOMAXPROCS, and OpenBLAS's count (default: all cores; --device cuda: the CPU comparison's)")
	fs.DurationVar(&cfg.budget, "budget", cpubench.DefaultOptions.Budget, "timed runs to aim for per library per case, at least 3 (1 when a run takes over 2s; --device cuda: the CPU comparison's)")
	fs.StringVar(&cfg.plot, "plot", "", "also draw GFLOP/s against n into `FILE` (.svg, .png or .pdf; --device cuda: the kernel rates; with --shapes, bars a case; with --op dot, GB/s against the length)")
	fs.StringVar(&cfg.device, "device", "cpu", "where to run: cpu, or cuda or cuda:N for the GPU benchmark (goamp's CUDA kernels against cuBLAS)")
	fs.IntVar(&cfg.reps, "reps", 0, fmt.Sprintf("`N` timed runs of each library each way, on the GPU (--device cuda; default %d, with --op dot %d)", gpubench.DefaultReps, gpubench.DefaultDotReps))
	fs.StringVar(&cfg.shapes, "shapes", "", "`LIST` of products MxNxK, comma-separated, such as 64x8192x8192,8192x8192x64 (op(A) M x K, op(B) K x N), measured after the square --sizes, or alone when --sizes is not given; GFLOP/s = 2*M*N*K / median time")
	fs.IntVar(&cfg.batch, "batch", 0, fmt.Sprintf("make each case a strided batch of `N` independent products (A, B and C each N matrices laid one after another), 1 to %d, timed as one call: reg128's and dmma's batched launches and cuBLAS's cublas<T>gemmStridedBatched; the other libraries are left out (--device cuda only)", gpubench.MaxBatch))
	fs.StringVar(&cfg.op, "op", opMatMul, "`OP` to measure: matmul, or dot: the GPU's dot products (onepass, warp, tiled) against a device-to-device copy of the same length, L2 flushed before each run (--device cuda only)")
	fs.StringVar(&cfg.precision, "precision", precision.Exact, "how float32 products may be computed on the GPU: exact, or tf32, bf16 or fp16: mma and cuBLAS (cublasGemmEx in the matching compute type, the anchor) round the operands to that format and sum in float32, checked within its tolerance; the other kernels multiply exactly (--device cuda; default libraries then reg128, mma, wgmma, cublas)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := flagsSet(fs)
	cfg.precision = strings.ToLower(cfg.precision)
	if err := precision.Check(cfg.precision); err != nil {
		return usagef("--precision: %v", err)
	}
	op := strings.ToLower(cfg.op)
	if op != opMatMul && op != opDot {
		return usagef("--op %q: want matmul or dot", cfg.op)
	}
	// The device switch: each device has its own defaults, libraries and
	// header.
	device := strings.ToLower(cfg.device)
	if device == "cpu" {
		if set["reps"] {
			return usagef("--reps applies to --device cuda; on the CPU, --budget sets how long each library runs")
		}
		if set["batch"] {
			return usagef("--batch applies to --device cuda: the CPU benchmark multiplies one product at a time")
		}
		if op == opDot {
			return usagef("--op dot applies to --device cuda: the CPU benchmark measures matrix multiply only")
		}
		if cfg.precision != precision.Exact {
			return usagef("--precision %s applies to --device cuda: on the CPU every library multiplies in float32 or float64", cfg.precision)
		}
		// --shapes alone measures those shapes only, as on the GPU.
		cfg.noSizes = set["shapes"] && !set["sizes"]
		cfg.hasShapes = set["shapes"]
		if err := cfg.validate(); err != nil {
			return err
		}
		return benchCPU(ctx, &cfg, stdout, stderr)
	}
	ordinal, ok := parseCUDADevice(device)
	if !ok {
		return usagef("--device %q: want cpu, cuda or cuda:N", cfg.device)
	}
	if !set["types"] {
		cfg.types = string(cpubench.Float32)
	}
	if op == opDot {
		for _, f := range []string{"shapes", "batch", "trans", "precision"} {
			if set[f] {
				return usagef("--%s applies to --op matmul, not to --op dot", f)
			}
		}
		if !set["sizes"] {
			cfg.sizes = dotSizesDefault()
		}
		if err := cfg.validateDot(); err != nil {
			return err
		}
		return benchDot(ctx, &cfg, ordinal, stdout, stderr)
	}
	if !set["sizes"] {
		cfg.sizes = joinInts(gpubench.DefaultSizes)
		cfg.noSizes = set["shapes"]
	}
	cfg.hasShapes = set["shapes"]
	if set["batch"] && (cfg.batch < 1 || cfg.batch > gpubench.MaxBatch) {
		return usagef("--batch %d: want 1 to %d products a batch", cfg.batch, gpubench.MaxBatch)
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	return benchGPU(ctx, &cfg, ordinal, stdout, stderr)
}

// parseCUDADevice reads "cuda" (GPU 0) or "cuda:N".
func parseCUDADevice(device string) (int, bool) {
	if device == "cuda" {
		return 0, true
	}
	rest, ok := strings.CutPrefix(device, "cuda:")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || rest != strconv.Itoa(n) {
		return 0, false
	}
	return n, true
}

// validate checks the flags that do not depend on the device, before any
// work is done.
func (cfg *benchConfig) validate() error {
	var err error
	if !cfg.noSizes {
		if cfg.sizeList, err = cpubench.ParseSizes(cfg.sizes); err != nil {
			return usagef("--sizes %q: %v", cfg.sizes, err)
		}
	}
	for _, n := range cfg.sizeList {
		cfg.shapeList = append(cfg.shapeList, cpubench.Square(n))
	}
	if cfg.hasShapes {
		shapes, err := cpubench.ParseShapes(cfg.shapes)
		if err != nil {
			return usagef("--shapes %q: %v", cfg.shapes, err)
		}
		for _, s := range shapes {
			if !slices.Contains(cfg.shapeList, s) { // a square shape may be in --sizes already
				cfg.shapeList = append(cfg.shapeList, s)
			}
		}
	}
	if cfg.batch > 0 {
		for _, s := range cfg.shapeList {
			if e := cfg.batch * s.MaxOperand(); e > cpubench.MaxElements {
				return usagef("--batch %d: a batch of %d products of %s holds %d elements in one operand, more than %d (%d^2): use a smaller batch or smaller products",
					cfg.batch, cfg.batch, shapeName(s), e, cpubench.MaxElements, cpubench.MaxN)
			}
		}
	}
	return cfg.validateCommon()
}

// validateDot is validate for --op dot, whose --sizes are vector lengths.
func (cfg *benchConfig) validateDot() error {
	var err error
	if cfg.sizeList, err = gpubench.ParseDotSizes(cfg.sizes); err != nil {
		return usagef("--sizes %q: %v", cfg.sizes, err)
	}
	return cfg.validateCommon()
}

// validateCommon checks the flags every benchmark has.
func (cfg *benchConfig) validateCommon() error {
	var err error
	if cfg.typeList, err = cpubench.ParseTypes(cfg.types); err != nil {
		return usagef("--types %q: %v", cfg.types, err)
	}
	if cfg.transList, err = cpubench.ParseTrans(cfg.trans); err != nil {
		return usagef("--trans %q: %v", cfg.trans, err)
	}
	// More threads than logical CPUs measures the scheduler, not the
	// libraries, and each of goamp's threads packs its own copies of B:
	// 100000 of them ran for minutes with gigabytes of memory.
	if cpus := runtime.NumCPU(); cfg.threads < 0 || cfg.threads > cpus {
		return usagef("--threads %d: want 1 to %d, the logical CPUs this process may use (0: all of them)", cfg.threads, cpus)
	}
	if cfg.budget < 0 {
		return usagef("--budget %v: want a duration of 0 or more", cfg.budget)
	}
	return checkPlotPath(cfg.plot)
}

// shapeName names a shape in messages: "n=1024" for a square, "MxNxK"
// for others.
func shapeName(s cpubench.Shape) string {
	if s.Square() {
		return "n=" + strconv.Itoa(s.N)
	}
	return s.String()
}

// dotSizesDefault is --op dot's --sizes when not given.
func dotSizesDefault() string {
	s := make([]string, len(gpubench.DefaultDotSizes))
	for i, n := range gpubench.DefaultDotSizes {
		s[i] = gpubench.FormatDotSize(n)
	}
	return strings.Join(s, ",")
}

// pickLibraries returns the libraries --libs names, in the order of have;
// with --libs unset, all of have. A library asked for but missing from have
// is a usage error saying why it is missing.
func pickLibraries(list string, known []string, have []cpubench.Library, missing error) ([]cpubench.Library, error) {
	if list == "" {
		return have, nil
	}
	want := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		name := strings.ToLower(strings.TrimSpace(f))
		if name == "" {
			continue
		}
		if !slices.Contains(known, name) {
			return nil, usagef("--libs: unknown library %q (want %s)", f, strings.Join(known, ", "))
		}
		want[name] = true
	}
	if len(want) == 0 {
		return nil, usagef("--libs %q: no library named", list)
	}
	var libs []cpubench.Library
	for _, l := range have {
		if want[l.Name] {
			libs = append(libs, l)
			delete(want, l.Name)
		}
	}
	for name := range want {
		if missing == nil {
			missing = errors.New("not available")
		}
		return nil, usagef("--libs %s: %v", name, missing)
	}
	return libs, nil
}

// benchCPU runs the CPU benchmark.
func benchCPU(ctx context.Context, cfg *benchConfig, stdout, stderr io.Writer) error {
	if cfg.threads > 0 {
		runtime.GOMAXPROCS(cfg.threads)
	}
	// After GOMAXPROCS is set: Libraries gives OpenBLAS as many threads.
	have, missing := benchLibraries()
	libs, err := pickLibraries(cfg.libs, cpubench.LibraryNames, have, missing)
	if err != nil {
		return err
	}
	names := make([]string, len(libs))
	for i, l := range libs {
		names[i] = l.Name
	}
	threads := runtime.GOMAXPROCS(0)

	cases := cpubench.ShapeCases(cfg.shapeList, cfg.typeList, cfg.transList)
	square := !slices.ContainsFunc(cases, func(c cpubench.Case) bool { return !c.Square() })
	if cfg.plot != "" && !square {
		return usagef("--plot draws GFLOP/s against n: it takes square --sizes, not --shapes")
	}

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if square {
		fmt.Fprintf(w, "goamp bench: C = op(A)*op(B), n x n, on the CPU; GFLOP/s = 2n^3 / median time\n")
	} else {
		fmt.Fprintf(w, "goamp bench: C = op(A)*op(B), M x N x K, on the CPU; GFLOP/s = 2MNK / median time\n")
	}
	fmt.Fprintf(w, "machine:  %s, %d cores, %s/%s, %s\n", cpuModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	told := ""
	if slices.Contains(names, cpubench.OpenBLAS) {
		told = "; OpenBLAS told the same"
	}
	fmt.Fprintf(w, "threads:  %d for every library (GOMAXPROCS%s)\n", threads, told)
	fmt.Fprintf(w, "goamp:    kernels %s\n", cpubench.KernelNames())
	fmt.Fprintf(w, "gonum:    %s native (gonum.org/v1/gonum/blas/gonum)\n", moduleVersion("gonum.org/v1/gonum"))
	if missing != nil {
		fmt.Fprintf(w, "openblas: %s\n", oneLine(missing.Error()))
	} else {
		fmt.Fprintf(w, "openblas: %s\n", cpubench.OpenBLASConfig())
	}
	d := cpubench.DefaultOptions
	fmt.Fprintf(w, "method:   fresh random operands a case; a warm-up each, then the libraries take turns of %v (a run\n", d.Turn)
	fmt.Fprintf(w, "          if longer; at most %d runs, so that fast cases take %d turns or more), the machine let\n", d.MaxReps/d.Turns, d.Turns)
	fmt.Fprintf(w, "          settle between turns; the median of %v of runs a library, at least\n", cfg.budget)
	fmt.Fprintf(w, "          %d (1 when a run takes over %v); every run checked against float64 references\n", d.MinReps, d.SlowRep)
	fmt.Fprintf(w, "date:     %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	tab := newBenchTable(names, cases)
	tab.header(w)
	w.Flush()

	bar := newProgressBar(stderr)
	defer bar.close()
	opt := cpubench.Options{
		Budget:   cfg.budget,
		Progress: bar.update,
	}
	if cfg.budget == 0 {
		opt.Budget = time.Nanosecond // 0 means the default to cpubench; here it means MinReps runs
	}
	results, err := cpubench.Run(cases, libs, opt, func(r cpubench.Result) {
		bar.print(func() {
			tab.row(w, r)
			w.Flush()
		})
	})
	bar.close()
	if err != nil {
		return err
	}
	if cfg.plot != "" {
		title := fmt.Sprintf("C = op(A)*op(B) on %s, %d threads, %s", cpuModel(), threads, time.Now().UTC().Format("2006-01-02"))
		if err := writePlot(ctx, cfg.plot, title, names, results, len(cfg.transList) > 1); err != nil {
			return fmt.Errorf("--plot %s: %v", cfg.plot, err)
		}
		fmt.Fprintf(w, "\nwrote %s\n", cfg.plot)
	}
	return nil
}

// benchTable prints one row a case: type, n, transposes, the rate of each
// library and goamp's ratio to each of the others. Rows are printed as
// cases finish, so the columns have fixed widths.
type benchTable struct {
	libs   []string
	ratios []string // the libraries goamp is compared with, one column each
	size   int      // the width of the size column: "1024", or "64x4096x4096" (M x N x K)
	label  string   // its heading: "n", or "MxNxK" when a case is not square
}

func newBenchTable(libs []string, cases []cpubench.Case) *benchTable {
	t := &benchTable{libs: libs, size: 6, label: "n"}
	for _, c := range cases {
		t.size = max(t.size, len(c.Size()))
		if !c.Square() {
			t.label = "MxNxK"
		}
	}
	if slices.Contains(libs, cpubench.Goamp) {
		// OpenBLAS first: it is the anchor performance figures are given
		// against; gonum, the pure-Go alternative, second.
		for _, other := range []string{cpubench.OpenBLAS, cpubench.Gonum} {
			if slices.Contains(libs, other) {
				t.ratios = append(t.ratios, other)
			}
		}
	}
	return t
}

func colWidth(name string) int { return max(len(name), 8) + 2 }

func (t *benchTable) header(w io.Writer) {
	fmt.Fprintf(w, "%-8s %*s %-5s", "type", t.size, t.label, "trans")
	for _, l := range t.libs {
		fmt.Fprintf(w, "%*s", colWidth(l), l)
	}
	for _, r := range t.ratios {
		fmt.Fprintf(w, "%*s", colWidth("goamp/"+r), "goamp/"+r)
	}
	fmt.Fprintf(w, "   (GFLOP/s; ratios > 1: goamp faster)\n")
}

func (t *benchTable) row(w io.Writer, r cpubench.Result) {
	fmt.Fprintf(w, "%-8s %*s %-5s", r.Case.Type, t.size, r.Case.Size(), r.Case.Trans)
	for _, l := range t.libs {
		g, _ := r.GFLOPS(l)
		fmt.Fprintf(w, "%*s", colWidth(l), strconv.FormatFloat(g, 'f', 1, 64))
	}
	goamp, _ := r.GFLOPS(cpubench.Goamp)
	for _, o := range t.ratios {
		other, _ := r.GFLOPS(o)
		fmt.Fprintf(w, "%*s", colWidth("goamp/"+o), strconv.FormatFloat(goamp/other, 'f', 2, 64))
	}
	fmt.Fprintln(w)
}

// writePlot draws GFLOP/s against n, one line a library and type (and
// transpose, when there are several), and writes it to path in the format
// its extension names. The file appears whole or not at all.
func writePlot(ctx context.Context, path, title string, libs []string, results []cpubench.Result, byTrans bool) error {
	return writeLinePlot(ctx, path, lineAxes{title: title, x: "n (C = op(A)*op(B), n x n)", y: "GFLOP/s (2n^3 / median time)", tick: strconv.Itoa},
		libs, results, byTrans)
}

// lineAxes are a line plot's title, axis labels and the label of a tick
// at n.
type lineAxes struct {
	title, x, y string
	tick        func(n int) string
}

// writeLinePlot is writePlot with the axes' labels given: results' GFLOPS
// are then whatever the y axis says (GB/s for the dot products).
func writeLinePlot(ctx context.Context, path string, axes lineAxes, libs []string, results []cpubench.Result, byTrans bool) error {
	p := plot.New()
	p.Title.Text = axes.title
	p.X.Label.Text = axes.x
	p.Y.Label.Text = axes.y
	p.X.Scale = plot.LogScale{}
	// The legend goes beside the plot, not over it: with a dozen lines it
	// would hide some of them.
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	p.Add(plotter.NewGrid())

	type key struct {
		lib   string
		typ   cpubench.Type
		trans cpubench.Trans
	}
	var order []key
	points := map[key]plotter.XYs{}
	var sizes []int
	for _, r := range results {
		if !slices.Contains(sizes, r.Case.N) {
			sizes = append(sizes, r.Case.N)
		}
		for _, l := range libs {
			g, ok := r.GFLOPS(l)
			if !ok || math.IsInf(g, 0) || math.IsNaN(g) {
				continue
			}
			k := key{l, r.Case.Type, r.Case.Trans}
			if _, seen := points[k]; !seen {
				order = append(order, k)
			}
			points[k] = append(points[k], plotter.XY{X: float64(r.Case.N), Y: g})
		}
	}
	slices.Sort(sizes)
	var types []cpubench.Type
	for _, k := range order {
		if !slices.Contains(types, k.typ) {
			types = append(types, k.typ)
		}
	}
	for _, k := range order {
		line, dots, err := plotter.NewLinePoints(points[k])
		if err != nil {
			return err
		}
		// A color a library, a dash pattern a type (and transpose): the
		// eye follows a library across types by its color.
		c := plotutil.Color(slices.Index(libs, k.lib))
		dash := slices.Index(types, k.typ)
		if byTrans {
			dash = dash*len(cpubench.AllTrans) + slices.Index(cpubench.AllTrans, k.trans)
		}
		line.Color, line.Dashes, line.Width = c, plotutil.Dashes(dash), vg.Points(1.5)
		dots.Color, dots.Shape = c, draw.CircleGlyph{}
		label := fmt.Sprintf("%s %s", k.lib, k.typ)
		if byTrans {
			label += " " + k.trans.String()
		}
		p.Add(line, dots)
		legend.Add(label, line, dots)
	}
	var ticks plot.ConstantTicks
	for _, n := range sizes {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: axes.tick(n)})
	}
	p.X.Tick.Marker = ticks
	if len(sizes) > 0 {
		// A margin of half a doubling on each side, so that the end points
		// are not on the frame; it also keeps a single size (and n = 1)
		// inside the log scale's positive range.
		p.X.Min, p.X.Max = float64(sizes[0])/1.5, float64(sizes[len(sizes)-1])*1.5
	}
	p.Y.Min = 0
	return drawPlot(ctx, path, p, legend)
}

// drawPlot draws p with legend beside it and writes it to path in the
// format its extension names. The file appears whole or not at all.
func drawPlot(ctx context.Context, path string, p *plot.Plot, legend plot.Legend) error {
	cw, err := newPlotCanvas(path, 9*vg.Inch, 5*vg.Inch)
	if err != nil {
		return err
	}
	dc := draw.New(cw)
	lr := legend.Rectangle(dc)
	plotArea, legendArea := dc, dc
	// The legend's width is measured with the embedded font; a viewer that
	// ignores embedded fonts (librsvg, some editors) sets the text in a
	// substitute up to a quarter wider, so leave it that much room.
	plotArea.Max.X -= (lr.Max.X-lr.Min.X)*5/4 + vg.Inch/4
	legendArea.Min.X = plotArea.Max.X + vg.Inch/8
	legendArea.Max.Y -= vg.Inch / 2 // level with the top of the axes, below the title
	p.Draw(plotArea)
	legend.Draw(legendArea)
	// writePlot's callers have no context to pass on; an interrupt waits
	// for the write instead (see writeAtomic).
	return writeAtomic(ctx, path, cw)
}

// newPlotCanvas returns a canvas for the format path's extension names. An
// SVG carries the fonts it was laid out with: a viewer that lacks them
// would draw the text in a substitute of other widths, and legends came
// out clipped ("openblas float3").
func newPlotCanvas(path string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format == "svg" {
		return vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true)), nil
	}
	return draw.NewFormattedCanvas(w, h, format)
}

// plotFormats are the --plot extensions; gonum/plot writes these three
// without any program outside Go.
var plotFormats = []string{".svg", ".png", ".pdf"}

// checkPlotPath refuses a --plot that cannot be written, before any work is
// done, as checkOutPath does for --out: an unknown extension, or a
// destination that writeAtomic would refuse or fail to write (a directory,
// a device or other file that is not a regular file, a missing or
// unwritable directory, a loop of symbolic links).
func checkPlotPath(path string) error {
	if path == "" {
		return nil
	}
	if !slices.Contains(plotFormats, strings.ToLower(filepath.Ext(path))) {
		return usagef("--plot %s: the plot's format comes from its extension, which must be .svg, .png or .pdf", path)
	}
	// Check makes and removes a probe file: under writing, so that an
	// interrupt cannot end the process in between.
	if err := whileWriting(context.Background(), func() error { return atomicfile.Check(path) }); err != nil {
		msg := err.Error()
		if e, ok := errors.AsType[*atomicfile.Error](err); ok {
			msg = e.Msg // without the path, named already
		}
		return usagef("--plot %s: %s", path, msg)
	}
	return nil
}

// writeAtomic writes what wt writes to path with atomicfile.Write: the file
// appears whole or not at all, through a symbolic link it is the file the
// link names (created if the link dangles, as npy.WriteFile does), and a
// destination that is not a regular file, such as /dev/null, is never
// replaced. It holds writing meanwhile, so that an interrupt lets the
// temporary file be renamed or removed before the process ends; ctx stops
// the write. Errors leave out path, which the caller names.
func writeAtomic(ctx context.Context, path string, wt io.WriterTo) error {
	err := whileWriting(ctx, func() error {
		return atomicfile.Write(ctx, path, func(w io.Writer) error {
			_, err := wt.WriteTo(w)
			return err
		})
	})
	if e, ok := errors.AsType[*atomicfile.Error](err); ok {
		// An Error without a path reads as its message alone and
		// still wraps its cause.
		return &atomicfile.Error{Msg: e.Msg, Err: e.Err}
	}
	return err
}

// cpuModel returns the processor's name from /proc/cpuinfo, or the
// architecture where there is none (not Linux, or no "model name" line).
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			name, value, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(name) == "model name" {
				return strings.Join(strings.Fields(value), " ")
			}
		}
	}
	return runtime.GOARCH + " CPU"
}

// moduleVersion returns the version of module path this binary was built
// with, as its build information records it.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "(version unknown)"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// progressBar shows, on a terminal, how far a benchmark has got: cases done
// of the total, the case running and how long it has run. The elapsed time
// is redrawn every half second, as one case can take a minute (gonum at
// 4096). Where stderr is not a terminal (a file, a pipe, a test) it shows
// nothing, so that logs hold only the results; a nil *progressBar is such a
// bar.
type progressBar struct {
	w           io.Writer
	mu          sync.Mutex
	done, total int
	label       string
	started     time.Time // of the case running
	stop        chan struct{}
	stopped     sync.WaitGroup
	closeOnce   sync.Once
}

// newProgressBar returns a bar drawing on w, or nil when w is not a terminal.
func newProgressBar(w io.Writer) *progressBar {
	if !isTerminal(w) {
		return nil
	}
	p := &progressBar{w: w, stop: make(chan struct{})}
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// update is cpubench's Progress callback.
func (p *progressBar) update(done, total int, current cpubench.Case) {
	if p == nil {
		return
	}
	size := "n=" + current.Size()
	if !current.Square() {
		size = current.Size()
	}
	p.updateLabel(done, total, fmt.Sprintf("%s %s %s", current.Type, size, current.Trans))
}

// updateLabel is update for any benchmark: label names the case about to
// run.
func (p *progressBar) updateLabel(done, total int, label string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	p.label = label
	p.started = time.Now()
	p.draw()
}

// print runs f, which writes to stdout, with the bar out of the way: stdout
// and stderr are often the same terminal.
func (p *progressBar) print(f func()) {
	if p == nil {
		f()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	f()
	p.draw()
}

// close stops the redrawing and erases the bar.
func (p *progressBar) close() {
	if p == nil {
		return
	}
	p.closeOnce.Do(func() {
		close(p.stop)
		p.stopped.Wait()
		p.mu.Lock()
		p.erase()
		p.mu.Unlock()
	})
}

const barWidth = 30

// render returns the bar's line: "[=========>         ] 3/14 float32 n=1024 NN 12s".
func (p *progressBar) render() string {
	if p.total == 0 {
		return ""
	}
	filled := barWidth * p.done / p.total
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	s := fmt.Sprintf("[%s] %d/%d", bar, p.done, p.total)
	if p.done < p.total {
		s += fmt.Sprintf(" %s %ds", p.label, int(time.Since(p.started).Seconds()))
	}
	return s
}

// draw and erase are called with mu held.
func (p *progressBar) draw()  { fmt.Fprintf(p.w, "\r%s\x1b[K", p.render()) }
func (p *progressBar) erase() { fmt.Fprint(p.w, "\r\x1b[K") }

// benchGPU runs the GPU benchmark on GPU ordinal: goamp's CUDA kernels
// against cuBLAS. Every flag is checked before the GPU is looked for, so
// that a bad flag reads the same on every machine.
func benchGPU(ctx context.Context, cfg *benchConfig, ordinal int, stdout, stderr io.Writer) error {
	names, err := gpubench.ParseLibraries(cfg.libs)
	if err != nil {
		return usagef("--libs %q: %v", cfg.libs, err)
	}
	reduced := cfg.precision != precision.Exact
	switch {
	case reduced && strings.TrimSpace(cfg.libs) == "":
		// The comparison a reduced precision is for: the exact kernel, the
		// tensor-core one, and cuBLAS in the same precision.
		names = []string{gpubench.Reg128, gpubench.MMA, gpubench.WGMMA, gpubench.CuBLAS}
	case !reduced:
		// mma and wgmma multiply in a reduced precision only: unless
		// named, not a note under every row of an exact run.
		named := strings.Split(strings.ToLower(strings.ReplaceAll(cfg.libs, " ", "")), ",")
		names = slices.DeleteFunc(names, func(n string) bool {
			return (n == gpubench.MMA || n == gpubench.WGMMA) && !slices.Contains(named, n)
		})
	}
	if reduced && cfg.batch > 0 {
		return usagef("--precision %s with --batch: cuBLAS, the anchor, has no batched path in a reduced precision here", cfg.precision)
	}
	if strings.TrimSpace(cfg.libs) == "" && !slices.Contains(cfg.typeList, cpubench.Float64) {
		// dmma multiplies float64 only: not a note under every row.
		names = slices.DeleteFunc(names, func(n string) bool { return n == gpubench.DMMA })
	}
	takesAll := slices.Contains(names, gpubench.Reg128) || slices.Contains(names, gpubench.DMMA) || slices.Contains(names, gpubench.CuBLAS)
	if !slices.Equal(cfg.transList, []cpubench.Trans{{}}) && !takesAll {
		return usagef("--trans %q: of the GPU libraries only reg128, dmma and cublas take transposes, and --libs names none of them", cfg.trans)
	}
	if cfg.batch > 0 && !takesAll {
		return usagef("--batch %d: of the GPU libraries only reg128, dmma and cublas multiply batches, and --libs names none of them", cfg.batch)
	}
	if cfg.reps < 0 {
		return usagef("--reps %d: want at least 1 (0: the default, %d)", cfg.reps, gpubench.DefaultReps)
	}
	if cfg.threads > 0 {
		runtime.GOMAXPROCS(cfg.threads) // for the CPU comparison
	}
	dev, path, err := openGPU(cfg, ordinal)
	if err != nil {
		return err
	}
	prec := cfg.precision
	if !reduced {
		prec = ""
	}
	libs, err := gpubench.LibrariesIn(dev, names, prec)
	if err != nil {
		if gpubench.IsUnavailable(err) {
			return usagef("cuBLAS, which every ratio is taken against: %v (--libs goamp,go measures goamp's kernels alone)", err)
		}
		return err
	}
	if err := gpubench.CheckSizes(libs, cfg.sizeList); err != nil {
		return usagef("--sizes: %v", err)
	}
	if err := gpubench.CheckShapes(libs, cfg.shapeList[len(cfg.sizeList):]); err != nil {
		return usagef("--shapes: %v", err)
	}
	libNames := make([]string, len(libs))
	for i, l := range libs {
		libNames[i] = l.Name
	}
	reps := cfg.reps
	if reps == 0 {
		reps = gpubench.DefaultReps
	}
	cases := cpubench.ShapeCases(cfg.shapeList, cfg.typeList, cfg.transList)
	square := !slices.ContainsFunc(cases, func(c cpubench.Case) bool { return !c.Square() })

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	date := time.Now().UTC()
	switch {
	case square && cfg.batch == 0:
		fmt.Fprintf(w, "goamp bench: C = A*B, n x n, on the GPU %s; GFLOP/s = 2n^3 / median time\n", path)
	case cfg.batch == 0:
		fmt.Fprintf(w, "goamp bench: C = A*B, M x N x K (op(A) M x K, op(B) K x N), on the GPU %s; GFLOP/s = 2*M*N*K / median time\n", path)
	default:
		fmt.Fprintf(w, "goamp bench: C_i = A_i*B_i, i < %d, M x N x K (n x n x n for a size n), on the GPU %s; GFLOP/s = 2*M*N*K*%d / median time\n",
			cfg.batch, path, cfg.batch)
	}
	fmt.Fprintf(w, "gpu:      %s\n", dev.Properties)
	fmt.Fprintf(w, "driver:   %s\n", driverVersion())
	for i, l := range libs {
		label := "goamp:"
		if l.Name == gpubench.CuBLAS {
			label = "cublas:"
		} else if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "%-9s %-8s %s\n", label, l.Name, l.Description)
	}
	fmt.Fprintf(w, "host:     %s, %d threads for the CPU comparison (GOMAXPROCS), goamp kernels %s, %s/%s, %s\n",
		cpuModel(), runtime.GOMAXPROCS(0), gemm.KernelName(string(cpubench.Float32)), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "method:   fresh random operands a case, uniform in [-1, 1); a checked warm-up of each library, then %d\n", reps)
	fmt.Fprintf(w, "          rounds in which the libraries take turns; kernel: CUDA events on the default stream around the\n")
	fmt.Fprintf(w, "          launch (cuBLAS: around the gemm call), A and B already on the GPU, a %v spin kernel queued first\n", gpubench.DefaultSpin)
	fmt.Fprintf(w, "          so that the host's launch overhead is not counted; e2e: host clock from the upload of A and B\n")
	fmt.Fprintf(w, "          (pageable memory) to the download of C; medians; every run's C checked against float64\n")
	fmt.Fprintf(w, "          references (random projections plus whole first, last and random rows and columns)\n")
	if reduced {
		fmt.Fprintf(w, "precision: %s for float32: mma, wgmma and cuBLAS round each element of A and B to %s and sum in float32, and their\n", prec, prec)
		fmt.Fprintf(w, "          results are checked within %s's tolerance; the other kernels multiply exactly; float64 is exact\n", prec)
	}
	if cfg.batch > 0 {
		fmt.Fprintf(w, "batch:    each case a strided batch of %d independent products, A, B and C each %d matrices laid one\n", cfg.batch, cfg.batch)
		fmt.Fprintf(w, "          after another, multiplied in one call: reg128 and dmma in one launch (a product a block of the grid's z),\n")
		fmt.Fprintf(w, "          cuBLAS by cublas<T>gemmStridedBatched; the libraries without a batched path are left out; every\n")
		fmt.Fprintf(w, "          product of every run checked\n")
	}
	fmt.Fprintf(w, "date:     %s\n\n", date.Format("2006-01-02 15:04 UTC"))
	tab := newGPUTable(slices.Contains(libNames, gpubench.CuBLAS), cases, cfg.batch)
	tab.header(w)
	w.Flush()

	bar := newProgressBar(stderr)
	defer bar.close()
	opt := gpubench.Options{Reps: reps, Batch: cfg.batch, Progress: bar.update}
	results, err := gpubench.Run(dev, cases, libs, opt, func(r gpubench.Result) {
		bar.print(func() {
			tab.rows(w, r)
			w.Flush()
		})
	})
	bar.close()
	if err != nil {
		return err
	}
	if err := gpuComparisons(w, cfg, results); err != nil {
		return err
	}
	if cfg.plot != "" {
		// The kernels' rates, one line (or bar) a library: the end-to-end
		// rates are mostly the copies, the same for every library, and
		// are in the table.
		var pr []cpubench.Result
		for _, r := range results {
			c := cpubench.Result{Case: r.Case}
			for _, l := range r.Libs {
				c.Libs = append(c.Libs, cpubench.LibResult{Library: l.Library, GFLOPS: l.KernelGFLOPS})
			}
			pr = append(pr, c)
		}
		what := "C = A*B"
		if cfg.batch > 0 {
			what = fmt.Sprintf("C_i = A_i*B_i, batches of %d", cfg.batch)
		}
		title := fmt.Sprintf("%s, kernel time, on %s, %s", what, dev.Properties.Name, date.Format("2006-01-02"))
		perRun := ""
		if cfg.batch > 0 {
			perRun = fmt.Sprintf(" x %d", cfg.batch)
		}
		if square {
			axes := lineAxes{title: title, x: "n (C = op(A)*op(B), n x n)", y: "GFLOP/s (2n^3" + perRun + " / median time)", tick: strconv.Itoa}
			err = writeLinePlot(ctx, cfg.plot, axes, libNames, pr, len(cfg.transList) > 1)
		} else {
			err = writeBarPlot(ctx, cfg.plot, title, "GFLOP/s (2*M*N*K"+perRun+" / median time)", libNames, pr, len(cfg.typeList) > 1, len(cfg.transList) > 1)
		}
		if err != nil {
			return fmt.Errorf("--plot %s: %v", cfg.plot, err)
		}
		fmt.Fprintf(w, "\nwrote %s (kernel GFLOP/s)\n", cfg.plot)
	}
	return nil
}

// openGPU finds GPU ordinal; a machine without one, or without that one,
// is a usage error saying why, as a missing OpenBLAS is on the CPU.
func openGPU(cfg *benchConfig, ordinal int) (*gpu.Device, string, error) {
	path := fmt.Sprintf("cuda:%d", ordinal)
	if why := amp.CUDAUnavailable(); why != nil {
		return nil, "", usagef("--device %s: no CUDA GPU on this machine: %v", cfg.device, why)
	}
	dev, err := gpu.Open(ordinal)
	if err != nil {
		if errors.Is(err, cuda.ErrNoDevice) {
			count, _ := cuda.DeviceCount()
			have := "cuda:0"
			if count > 1 {
				have = fmt.Sprintf("cuda:0 to cuda:%d", count-1)
			}
			return nil, "", usagef("--device %s: no such GPU (this machine has %d: %s)", cfg.device, count, have)
		}
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return dev, path, nil
}

// driverVersion names the NVIDIA driver (from /proc/driver/nvidia/version,
// where Linux has it) and the CUDA version it supports.
func driverVersion() string {
	s := "NVIDIA driver"
	if data, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ...",
		// or "... NVIDIA UNIX Open Kernel Module for x86_64  580.65.06 ...":
		// the version is the first word of digits and dots.
		line, _, _ := strings.Cut(string(data), "\n")
		for _, f := range strings.Fields(line) {
			if isVersion(f) {
				s += " " + f
				break
			}
		}
	}
	if v, err := cuda.DriverVersion(); err == nil {
		s += fmt.Sprintf(", CUDA %d.%d", v/1000, v%1000/10)
	}
	return s
}

// isVersion reports whether s is a version number such as 580.65.06.
func isVersion(s string) bool {
	return strings.Contains(s, ".") && strings.Trim(s, "0123456789.") == "" && s[0] != '.'
}

// gpuTable prints one row a library a case: kernel and end-to-end medians,
// rates, and ratios to cuBLAS (when it was measured); under a case, the
// libraries left out of it. Rows are printed as cases finish, so the
// columns' widths come from the list of cases: a run of square cases, not
// batched, prints the table it always has.
type gpuTable struct {
	hasBLAS   bool
	sizeTitle string // "n", or "shape" when some case is not square
	sizeWidth int
	batch     int // 0: no batch column
}

func newGPUTable(hasBLAS bool, cases []cpubench.Case, batch int) gpuTable {
	t := gpuTable{hasBLAS: hasBLAS, sizeTitle: "n", sizeWidth: 5, batch: batch}
	for _, c := range cases {
		if !c.Square() {
			t.sizeTitle = "shape"
		}
		t.sizeWidth = max(t.sizeWidth, len(c.Size()))
	}
	return t
}

func (t gpuTable) header(w io.Writer) {
	fmt.Fprintf(w, "%-8s %*s %-5s", "type", t.sizeWidth, t.sizeTitle, "trans")
	if t.batch > 0 {
		fmt.Fprintf(w, " %5s", "batch")
	}
	fmt.Fprintf(w, " %-14s %10s %14s %13s %10s %11s %10s", "library",
		"kernel_ms", "kernel_GFLOP/s", "kernel/cublas", "e2e_ms", "e2e_GFLOP/s", "e2e/cublas")
	fmt.Fprintf(w, "   (ratios: rate over cuBLAS's; < 1: slower)\n")
}

func (t gpuTable) rows(w io.Writer, r gpubench.Result) {
	blas, hasBLAS := r.Lib(gpubench.CuBLAS)
	ratio := func(x, y float64) string {
		if !hasBLAS {
			return "-"
		}
		return strconv.FormatFloat(x/y, 'f', 3, 64)
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds()*1e3, 'f', 3, 64) }
	for _, l := range r.Libs {
		fmt.Fprintf(w, "%-8s %*s %-5s", r.Case.Type, t.sizeWidth, r.Case.Size(), r.Case.Trans)
		if t.batch > 0 {
			fmt.Fprintf(w, " %5d", r.Batch)
		}
		fmt.Fprintf(w, " %-14s %10s %14.1f %13s %10s %11.1f %10s\n", l.Library,
			ms(l.KernelMedian), l.KernelGFLOPS, ratio(l.KernelGFLOPS, blas.KernelGFLOPS),
			ms(l.EndToEndMedian), l.EndToEndGFLOPS, ratio(l.EndToEndGFLOPS, blas.EndToEndGFLOPS))
	}
	for _, note := range leftOutNotes(r.LeftOut) {
		fmt.Fprintf(w, "%*s left out: %s\n", 8+1+t.sizeWidth+1+5, "", note)
	}
}

// leftOutNotes groups the libraries left out of a case by reason: "naive,
// tiled16 (takes no transposes)", one note a reason, in the order met.
func leftOutNotes(out []gpubench.LeftOut) []string {
	var whys []string
	by := map[string][]string{}
	for _, l := range out {
		if _, seen := by[l.Why]; !seen {
			whys = append(whys, l.Why)
		}
		by[l.Why] = append(by[l.Why], l.Library)
	}
	notes := make([]string, len(whys))
	for i, why := range whys {
		notes[i] = fmt.Sprintf("%s (%s)", strings.Join(by[why], ", "), why)
	}
	return notes
}

// comparisonLabel names a case in the comparisons after the table:
// "n=1024 " for a square product, as they always have, "64x8192x8192"
// for others.
func comparisonLabel(c cpubench.Case) string {
	if c.Square() {
		return fmt.Sprintf("n=%-5d", c.N)
	}
	return c.Shape().String()
}

// gpuCPUComparisonN is the size of the GPU-against-CPU comparison.
const gpuCPUComparisonN = 1024

// gpuComparisons prints two expectations, measured: that the tiled kernel
// is about twice as fast as the naive one (kernel times, each size), and the
// GPU end to end about 40x goamp's CPU engine at n = 1024 (the C++ AMP
// tiling article on Microsoft Learn reports both for its examples), the engine measured now, on this
// machine's CPU, with cpubench's method.
func gpuComparisons(w *bufio.Writer, cfg *benchConfig, results []gpubench.Result) error {
	fmt.Fprintf(w, "\ntiled against naive: naive's kernel time over tiled's (> 1: tiled faster)\n")
	printed := false
	for _, r := range results {
		naive, ok := r.Lib(gpubench.Naive)
		if !ok {
			continue // not in --libs, or a case with transposes
		}
		var parts []string
		for _, name := range []string{gpubench.Tiled16, gpubench.Tiled32} {
			if l, ok := r.Lib(name); ok {
				parts = append(parts, fmt.Sprintf("%s %.2fx", name, naive.KernelMedian.Seconds()/l.KernelMedian.Seconds()))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  %-8s %s %s\n", r.Case.Type, comparisonLabel(r.Case), strings.Join(parts, ", "))
			printed = true
		}
	}
	if !printed {
		fmt.Fprintf(w, "  (needs naive and a tiled kernel in --libs)\n")
	}

	fmt.Fprintf(w, "\nthe Go kernels against their CUDA C twins: the Go kernel's time over its twin's (< 1.10: within 10%%)\n")
	printed = false
	for _, r := range results {
		var parts []string
		for _, pair := range gpubench.GoTwins() {
			g, okG := r.Lib(pair[0])
			c, okC := r.Lib(pair[1])
			if okG && okC {
				parts = append(parts, fmt.Sprintf("%s/%s %.3f", pair[0], pair[1], g.KernelMedian.Seconds()/c.KernelMedian.Seconds()))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  %-8s %s %s\n", r.Case.Type, comparisonLabel(r.Case), strings.Join(parts, ", "))
			printed = true
		}
	}
	if !printed {
		fmt.Fprintf(w, "  (needs a Go kernel and its twin in --libs)\n")
	}

	fmt.Fprintf(w, "\nthe GPU against the CPU at n=%d: goamp's packed CPU engine's time over each library's\n", gpuCPUComparisonN)
	fmt.Fprintf(w, "end-to-end time (> 1: the GPU, copies included, faster)\n")
	printed = false
	for _, r := range results {
		if r.Batch > 0 {
			fmt.Fprintf(w, "  (not compared: each GPU run is a batch of %d products)\n", r.Batch)
			return nil
		}
		if !r.Case.Square() || r.Case.N != gpuCPUComparisonN {
			continue
		}
		printed = true
		w.Flush()
		opt := cpubench.Options{Budget: cfg.budget}
		if cfg.budget == 0 {
			opt.Budget = time.Nanosecond // 0 means the default to cpubench; here it means MinReps runs
		}
		cpu, err := gpubench.CPU(r.Case, opt)
		if err != nil {
			return fmt.Errorf("the CPU comparison: %w", err)
		}
		fmt.Fprintf(w, "  %-8s cpu      %s ms, %.1f GFLOP/s (goamp packed engine, %d threads, median of %d, checked)\n",
			r.Case.Type, strconv.FormatFloat(cpu.Median.Seconds()*1e3, 'f', 3, 64), cpu.GFLOPS, runtime.GOMAXPROCS(0), len(cpu.Times))
		for _, l := range r.Libs {
			fmt.Fprintf(w, "  %-8s %-8s %s ms end to end: %.2fx the CPU (kernel alone: %.2fx)\n", r.Case.Type, l.Library,
				strconv.FormatFloat(l.EndToEndMedian.Seconds()*1e3, 'f', 3, 64),
				cpu.Median.Seconds()/l.EndToEndMedian.Seconds(), cpu.Median.Seconds()/l.KernelMedian.Seconds())
		}
	}
	if !printed {
		fmt.Fprintf(w, "  (n=%d was not measured: add it to --sizes)\n", gpuCPUComparisonN)
	}
	return nil
}
