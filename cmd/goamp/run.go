package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/half"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/npy"
)

// runConfig holds what matmul and dot share: where the operands come from,
// where the work runs, and what is done with the result.
type runConfig struct {
	ctx            context.Context // cancelled by an interrupt
	name           string          // the command
	a, b           string          // operand files, or "" for random operands
	dtype          string
	seed           uint64
	out            string
	device, kernel string
	tile           int
	check          bool
	repeat         int
	precision      string // matmul's --precision: exact, tf32, bf16 or fp16 ("" for dot)
	// half: the operands are float16 (files or --type float16), computed
	// as float32 (exactly: every float16 is a float32, and every product
	// of two is exact in float32), and the result is written as float16.
	half           bool
	stdout, stderr io.Writer

	// Set by validate.
	random bool
	acc    *amp.Accelerator
	chosen linalg.KernelInfo
	tileAt int // the tile size the kernel will use, 0 if it has none

	kernelTime  time.Duration // set by the last call made with options()
	kernelTimes timing        // one a timed run, on accelerators with memory of their own
}

// addFlags registers the shared flags; what names the operands ("matrices",
// "vectors"), op is the operation (for the list of kernels) and maxTile is
// the CPU's tiled kernel's largest tile.
func (c *runConfig) addFlags(fs *flagSet, what string, op linalg.Operation, maxTile int) {
	fs.StringVar(&c.a, "a", "", "`A.npy`: the first operand")
	fs.StringVar(&c.b, "b", "", "`B.npy`: the second operand")
	fs.StringVar(&c.dtype, "type", "float32", "element type of random "+what+": float32, float64, int32 or float16 (computed as float32, written as float16)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random "+what)
	fs.StringVar(&c.out, "out", "", "write the result to `OUT.npy` (atomically: a failed or interrupted run leaves no file)")
	fs.StringVar(&c.device, "device", "", "accelerator: cpu, cuda, cuda:N (goamp devices lists them), or auto: a GPU if there is one (default: $"+amp.DeviceEnv+", else auto)")
	fs.StringVar(&c.kernel, "kernel", "auto", "kernel: auto (the fastest on the device), or "+kernelList(op))
	fs.IntVar(&c.tile, "tile", 0, fmt.Sprintf("tile size of a tiled kernel: on the CPU 1 to %d; on a GPU %s (0: the kernel's default)", maxTile, gpuTiles(op)))
	fs.BoolVar(&c.check, "check", true, "check the result against a float64 reference; exit 1 if out of tolerance (--check=false to skip)")
	fs.IntVar(&c.repeat, "repeat", 3, "run `N` times and report the median time (1: a single cold run)")
}

// kernelList names op's kernels on each kind of accelerator, from the
// registry.
func kernelList(op linalg.Operation) string {
	byKind := map[amp.Kind][]string{}
	var kinds []amp.Kind
	for _, k := range linalg.Kernels(op) {
		if _, ok := byKind[k.Accelerator]; !ok {
			kinds = append(kinds, k.Accelerator)
		}
		name := k.Name
		if len(k.Elements) > 0 {
			name += " (" + strings.Join(k.Elements, ", ") + " only)"
		}
		byKind[k.Accelerator] = append(byKind[k.Accelerator], name)
	}
	// The CPU, which every machine has, first.
	slices.SortStableFunc(kinds, func(a, b amp.Kind) int {
		return cmp.Compare(b2i(a != amp.KindCPU), b2i(b != amp.KindCPU))
	})
	var parts []string
	for _, kind := range kinds {
		where := "on the CPU"
		if kind != amp.KindCPU {
			where = "on a " + strings.ToUpper(kind.String()) + " GPU"
		}
		parts = append(parts, where+": "+strings.Join(byKind[kind], ", "))
	}
	return strings.Join(parts, "; ")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gpuTiles says which tile sizes op's tiled GPU kernel takes.
func gpuTiles(op linalg.Operation) string {
	for _, k := range linalg.Kernels(op) {
		if k.Accelerator == amp.KindCUDA && k.Name == "tiled" && len(k.Tiles) > 0 {
			t := k.Tiles
			if len(t) > 4 {
				return fmt.Sprintf("a power of two, %d to %d", t[0], t[len(t)-1])
			}
			return strings.Trim(strings.ReplaceAll(fmt.Sprint(t), " ", ", "), "[]")
		}
	}
	return "as the kernel allows"
}

// validate checks the flags against each other and picks the accelerator
// and kernel, so that mistakes show before any file is read or work done.
// sizeFlags are the flags that only make sense for random operands.
func (c *runConfig) validate(set map[string]bool, op linalg.Operation, sizeFlags ...string) error {
	files := set["a"] || set["b"]
	if files && !(set["a"] && set["b"]) {
		return usagef("--a and --b go together: give both files or neither")
	}
	for _, f := range append(sizeFlags, "type", "seed") {
		if files && set[f] {
			return usagef("--%s makes random operands and cannot be used with --a/--b", f)
		}
	}
	c.random = !files
	if c.repeat < 1 {
		return usagef("--repeat %d: want at least 1", c.repeat)
	}
	if c.random {
		if _, err := parseDType(c.dtype); err != nil {
			return err
		}
	}
	if err := checkOutPath(c.out); err != nil {
		return err
	}
	acc, err := pickAccelerator(c.device)
	if err != nil {
		return err
	}
	c.acc = acc
	// The kernel first, without the tile: a tile size for a kernel that has
	// none gets the CLI's own words.
	opt := c.options()
	opt.Tile = 0
	if c.chosen, _, err = linalg.Choose(op, opt); err != nil {
		return kernelError(err)
	}
	if c.tile != 0 && c.chosen.MaxTile == 0 {
		return usagef("--tile %d: the %s kernel has no tiles (use --kernel tiled, or leave --tile 0)", c.tile, c.chosen.Name)
	}
	if c.chosen, c.tileAt, err = linalg.Choose(op, c.options()); err != nil {
		return kernelError(err)
	}
	return nil
}

func (c *runConfig) options() *linalg.Options {
	return &linalg.Options{Kernel: c.kernel, Tile: c.tile, View: c.acc.DefaultView(), KernelTime: &c.kernelTime, Precision: linalg.Precision(c.precision)}
}

// readOperands reads --a and --b, which must have the given rank and one
// type. Both headers are read and checked first, agree among them (shapes
// that fit together, and what the result will hold), so that a mismatch is
// found before any data is read; agree returns the element counts of the
// result.
func (c *runConfig) readOperands(rank int, agree func(a, b npy.Header) (result int, err error)) (a, b *operand, err error) {
	fa, err := openOperand("a", c.a, rank)
	if err != nil {
		return nil, nil, err
	}
	defer fa.Close()
	fb, err := openOperand("b", c.b, rank)
	if err != nil {
		return nil, nil, err
	}
	defer fb.Close()
	ha, hb := fa.Header(), fb.Header()
	if ha.DType != hb.DType {
		return nil, nil, usagef("A is %s but B is %s: both must have one type", ha.DType, hb.DType)
	}
	result, err := agree(ha, hb)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMemory(elemSize(ha.DType), count(ha.Shape), count(hb.Shape), result); err != nil {
		return nil, nil, err
	}
	if a, err = readOperand("a", c.a, fa); err != nil {
		return nil, nil, err
	}
	if b, err = readOperand("b", c.b, fb); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// count is the number of elements of an array of the given shape, which
// npy has checked does not overflow.
func count(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// elemSize is the size in bytes of an element of type dt.
func elemSize(dt npy.DType) int {
	if dt == npy.Float64 {
		return 8
	}
	return 4 // float16 is held as float32 to compute
}

// elemName names the operands' type in reports: T's, or "float16 (as
// float32)" for float16 operands.
func (c *runConfig) elemName(t string) string {
	if c.half {
		return "float16 (multiplied as float32: every product exact)"
	}
	return t
}

// describe prints what is about to run.
func (c *runConfig) describe(what string) {
	source := fmt.Sprintf("random (seed %d)", c.seed)
	if !c.random {
		source = c.a + ", " + c.b
	}
	tile := ""
	if c.tileAt > 0 {
		tile = fmt.Sprintf(", tile %d", c.tileAt)
	}
	fmt.Fprintf(c.stdout, "%s: %s, %s\n", c.name, what, source)
	fmt.Fprintf(c.stdout, "device: %s (%s), kernel %s%s\n", c.acc.Path(), c.acc.Description(), c.chosen.Name, tile)
}

// time runs f --repeat times, telling stderr about slow runs.
func (c *runConfig) time(f func() error) (timing, error) {
	var times timing
	for i := range c.repeat {
		start := time.Now()
		if err := f(); err != nil {
			return nil, kernelError(err)
		}
		took := time.Since(start)
		times = append(times, took)
		if c.onDevice() {
			c.kernelTimes = append(c.kernelTimes, c.kernelTime)
		}
		if took >= time.Second {
			fmt.Fprintf(c.stderr, "goamp %s: run %d of %d took %v\n", c.name, i+1, c.repeat, took.Round(time.Millisecond))
		}
	}
	return times, nil
}

// onDevice reports whether the run is on an accelerator with memory of its
// own, where the kernel's time and the end-to-end time (copies included)
// differ and are reported apart.
func (c *runConfig) onDevice() bool { return c.acc.Kind() != amp.KindCPU }

// report prints the end-to-end times and, on a device, the kernel's own.
func (c *runConfig) report(times timing, ops float64, isFloat bool) {
	if !c.onDevice() {
		times.report(c.stdout, ops, isFloat)
		return
	}
	fmt.Fprint(c.stdout, "end to end (copies to and from the device included): ")
	times.report(c.stdout, ops, isFloat)
	fmt.Fprint(c.stdout, "kernel (CUDA events): ")
	c.kernelTimes.report(c.stdout, ops, isFloat)
}

// write saves the result to --out, if given. An interrupt stops it and
// leaves no file behind (see catchInterrupts).
func (c *runConfig) write(shape []int, data any) error {
	if c.out == "" {
		return nil
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if f, ok := data.([]float32); ok && c.half {
		data = half.Float16s(f) // rounded to nearest even; past 65504, infinities
	}
	err := whileWriting(ctx, func() error {
		return npy.WriteFileContext(ctx, c.out, &npy.Array{Shape: shape, Data: data})
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "wrote %s\n", c.out)
	return nil
}
