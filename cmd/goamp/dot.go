package main

import (
	"fmt"
	"io"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/npy"
)

type dotConfig struct {
	a, b          string
	n             int
	dtype         string
	seed          uint64
	out           string
	device        string
	kernel        string
	tile          int
	check         bool
	repeat        int
	acc           *amp.Accelerator
	kernelChosen  linalg.KernelInfo
	tileChosen    int
	stdout        io.Writer
	isRandomInput bool
}

const dotSynopsis = `Computes the dot product of two vectors, read from NumPy .npy files (1-D,
float32, float64 or int32, both of one type) or made at random, and prints
its value. With no flags at all it takes the dot product of two random
float32 vectors of 2^22 elements, checks it and times three runs.`

func runDot(args []string, stdout, _ io.Writer) error {
	cfg := dotConfig{stdout: stdout}
	fs := newFlagSet("dot", dotSynopsis, stdout)
	fs.StringVar(&cfg.a, "a", "", "`A.npy`: the first vector")
	fs.StringVar(&cfg.b, "b", "", "`B.npy`: the second vector, of the same length")
	fs.IntVar(&cfg.n, "n", 1<<22, "length of random vectors")
	fs.StringVar(&cfg.dtype, "type", "float32", "element type of random vectors: float32, float64 or int32")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the random vectors")
	fs.StringVar(&cfg.out, "out", "", "write the value to `D.npy` as a 0-d array (atomically)")
	fs.StringVar(&cfg.device, "device", "", "accelerator: cpu, cuda, cuda:N or auto (default: $GOAMP_DEVICE, else auto)")
	fs.StringVar(&cfg.kernel, "kernel", "auto", "kernel: naive, tiled or auto")
	fs.IntVar(&cfg.tile, "tile", 0, "threads a tile of the tiled kernel, 1 to 1024 (0: the kernel's default)")
	fs.BoolVar(&cfg.check, "check", false, "compare with a float64 reference; exit 1 if out of tolerance")
	fs.IntVar(&cfg.repeat, "repeat", 1, "run `N` times and report the median time")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := flagsSet(fs)
	if len(set) == 0 {
		cfg.check, cfg.repeat = true, 3
	}
	if err := cfg.validate(set); err != nil {
		return err
	}
	if cfg.isRandomInput {
		dt, err := parseDType(cfg.dtype)
		if err != nil {
			return err
		}
		switch dt {
		case npy.Float32:
			return dotRandom[float32](&cfg)
		case npy.Float64:
			return dotRandom[float64](&cfg)
		default:
			return dotRandom[int32](&cfg)
		}
	}
	a, err := readOperand("a", cfg.a, 1)
	if err != nil {
		return err
	}
	b, err := readOperand("b", cfg.b, 1)
	if err != nil {
		return err
	}
	if a.dtype != b.dtype {
		return usagef("A is %s but B is %s: both must have one type", a.dtype, b.dtype)
	}
	if a.shape[0] != b.shape[0] {
		return usagef("vectors of length %d and %d: they must have one length", a.shape[0], b.shape[0])
	}
	cfg.n = a.shape[0]
	switch ad := a.data.(type) {
	case []float32:
		return dotTyped(&cfg, ad, b.data.([]float32))
	case []float64:
		return dotTyped(&cfg, ad, b.data.([]float64))
	default:
		return dotTyped(&cfg, a.data.([]int32), b.data.([]int32))
	}
}

func (cfg *dotConfig) validate(set map[string]bool) error {
	files := set["a"] || set["b"]
	if files && !(set["a"] && set["b"]) {
		return usagef("--a and --b go together: give both files or neither")
	}
	for _, f := range []string{"n", "type", "seed"} {
		if files && set[f] {
			return usagef("--%s makes random vectors and cannot be used with --a/--b", f)
		}
	}
	cfg.isRandomInput = !files
	if cfg.repeat < 1 {
		return usagef("--repeat %d: want at least 1", cfg.repeat)
	}
	if err := checkSize("--n", cfg.n); cfg.isRandomInput && err != nil {
		return err
	}
	if err := checkOutPath(cfg.out); err != nil {
		return err
	}
	acc, err := pickAccelerator(cfg.device)
	if err != nil {
		return err
	}
	cfg.acc = acc
	cfg.kernelChosen, cfg.tileChosen, err = linalg.Choose(linalg.OpDot, cfg.options())
	return kernelError(err)
}

func (cfg *dotConfig) options() *linalg.Options {
	return &linalg.Options{Kernel: cfg.kernel, Tile: cfg.tile, View: cfg.acc.DefaultView()}
}

// dotRandom takes the dot product of random vectors of type T.
func dotRandom[T amp.Element](cfg *dotConfig) error {
	r := newRand(cfg.seed)
	x := reference.RandomSlice[T](r, cfg.n)
	y := reference.RandomSlice[T](r, cfg.n)
	return dotTyped(cfg, x, y)
}

// dotTyped computes, checks, times and writes the dot product for one type.
func dotTyped[T amp.Element](cfg *dotConfig, x, y []T) error {
	w := cfg.stdout
	source := fmt.Sprintf("random (seed %d)", cfg.seed)
	if !cfg.isRandomInput {
		source = cfg.a + " . " + cfg.b
	}
	tile := ""
	if cfg.tileChosen > 0 {
		tile = fmt.Sprintf(", tile %d", cfg.tileChosen)
	}
	fmt.Fprintf(w, "dot: %s, n=%d, %s\n", typeName[T](), cfg.n, source)
	fmt.Fprintf(w, "device: %s (%s), kernel %s%s\n", cfg.acc.Path(), cfg.acc.Description(), cfg.kernelChosen.Name, tile)
	xv, err := amp.NewArrayView(amp.Extent1(cfg.n), x)
	if err != nil {
		return err
	}
	yv, err := amp.NewArrayView(amp.Extent1(cfg.n), y)
	if err != nil {
		return err
	}
	var (
		value T
		times timing
	)
	for range cfg.repeat {
		start := time.Now()
		if value, err = linalg.Dot(xv, yv, cfg.options()); err != nil {
			return kernelError(err)
		}
		times = append(times, time.Since(start))
	}
	fmt.Fprintf(w, "value: %v\n", value)
	times.report(w, 2*float64(cfg.n), reference.UnitRoundoff[T]() != 0)
	if cfg.check {
		want, bound := reference.Dot(reference.ToFloat64(x), reference.ToFloat64(y))
		if err := checkResult(w, []T{value}, []float64{want}, []float64{bound}, cfg.n); err != nil {
			return err
		}
	}
	if cfg.out != "" {
		if err := npy.WriteFile(cfg.out, &npy.Array{Shape: []int{}, Data: []T{value}}); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s (a 0-d %s array)\n", cfg.out, typeName[T]())
	}
	return nil
}
