package main

import (
	"fmt"
	"io"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/npy"
)

// runConfig holds what matmul and dot share: where the operands come from,
// where the work runs, and what is done with the result.
type runConfig struct {
	name           string // the command
	a, b           string // operand files, or "" for random operands
	dtype          string
	seed           uint64
	out            string
	device, kernel string
	tile           int
	check          bool
	repeat         int
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
// "vectors") and maxTile is the tiled kernel's largest tile.
func (c *runConfig) addFlags(fs *flagSet, what string, maxTile int) {
	fs.StringVar(&c.a, "a", "", "`A.npy`: the first operand")
	fs.StringVar(&c.b, "b", "", "`B.npy`: the second operand")
	fs.StringVar(&c.dtype, "type", "float32", "element type of random "+what+": float32, float64 or int32")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random "+what)
	fs.StringVar(&c.out, "out", "", "write the result to `OUT.npy` (atomically: a failed run leaves no file)")
	fs.StringVar(&c.device, "device", "", "accelerator: a path that goamp devices lists (cpu), or auto (default: $GOAMP_DEVICE, else auto)")
	fs.StringVar(&c.kernel, "kernel", "auto", "kernel: naive, simple (matmul only), tiled or auto; goamp devices lists them")
	fs.IntVar(&c.tile, "tile", 0, fmt.Sprintf("tile size of the tiled kernel, 1 to %d (0: the kernel's default)", maxTile))
	fs.BoolVar(&c.check, "check", false, "compare with a float64 reference; exit 1 if out of tolerance")
	fs.IntVar(&c.repeat, "repeat", 1, "run `N` times and report the median time")
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
	c.chosen, c.tileAt, err = linalg.Choose(op, c.options())
	if err != nil {
		return kernelError(err)
	}
	if set["tile"] && c.chosen.MaxTile == 0 {
		return usagef("--tile %d: the %s kernel has no tiles (use --kernel tiled)", c.tile, c.chosen.Name)
	}
	return nil
}

func (c *runConfig) options() *linalg.Options {
	return &linalg.Options{Kernel: c.kernel, Tile: c.tile, View: c.acc.DefaultView(), KernelTime: &c.kernelTime}
}

// readOperands reads --a and --b, which must have the given rank and one type.
func (c *runConfig) readOperands(rank int) (a, b *operand, err error) {
	if a, err = readOperand("a", c.a, rank); err != nil {
		return nil, nil, err
	}
	if b, err = readOperand("b", c.b, rank); err != nil {
		return nil, nil, err
	}
	if a.dtype != b.dtype {
		return nil, nil, usagef("A is %s but B is %s: both must have one type", a.dtype, b.dtype)
	}
	return a, b, nil
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

// write saves the result to --out, if given.
func (c *runConfig) write(shape []int, data any) error {
	if c.out == "" {
		return nil
	}
	if err := npy.WriteFile(c.out, &npy.Array{Shape: shape, Data: data}); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "wrote %s\n", c.out)
	return nil
}
