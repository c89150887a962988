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

type matmulConfig struct {
	a, b          string
	m, n, k       int
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

const matmulSynopsis = `Computes C = A*B, with A and B read from NumPy .npy files (2-D, float32,
float64 or int32, C or Fortran order, both of one type) or made at random.
With no flags at all it multiplies random 1024x1024 float32 matrices on the
default accelerator, checks the product and times three runs.`

func runMatMul(args []string, stdout, _ io.Writer) error {
	cfg := matmulConfig{stdout: stdout}
	fs := newFlagSet("matmul", matmulSynopsis, stdout)
	fs.StringVar(&cfg.a, "a", "", "`A.npy`: the left operand, M x K")
	fs.StringVar(&cfg.b, "b", "", "`B.npy`: the right operand, K x N")
	fs.IntVar(&cfg.m, "m", 1024, "rows of random A and C")
	fs.IntVar(&cfg.n, "n", 1024, "columns of random B and C")
	fs.IntVar(&cfg.k, "k", 1024, "columns of random A, rows of random B")
	fs.StringVar(&cfg.dtype, "type", "float32", "element type of random operands: float32, float64 or int32")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the random operands")
	fs.StringVar(&cfg.out, "out", "", "write C to `C.npy` (atomically: a failed run leaves no file)")
	fs.StringVar(&cfg.device, "device", "", "accelerator: cpu, cuda, cuda:N or auto (default: $GOAMP_DEVICE, else auto)")
	fs.StringVar(&cfg.kernel, "kernel", "auto", "kernel: naive, simple, tiled or auto")
	fs.IntVar(&cfg.tile, "tile", 0, "tile size of the tiled kernel, 1 to 32 (0: the kernel's default)")
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
			return matmulRandom[float32](&cfg)
		case npy.Float64:
			return matmulRandom[float64](&cfg)
		default:
			return matmulRandom[int32](&cfg)
		}
	}
	a, err := readOperand("a", cfg.a, 2)
	if err != nil {
		return err
	}
	b, err := readOperand("b", cfg.b, 2)
	if err != nil {
		return err
	}
	if a.dtype != b.dtype {
		return usagef("A is %s but B is %s: both must have one type", a.dtype, b.dtype)
	}
	if a.shape[1] != b.shape[0] {
		return usagef("A is %dx%d but B is %dx%d: A's columns must equal B's rows", a.shape[0], a.shape[1], b.shape[0], b.shape[1])
	}
	if err := checkSize("C", a.shape[0], b.shape[1]); err != nil {
		return err
	}
	cfg.m, cfg.k, cfg.n = a.shape[0], a.shape[1], b.shape[1]
	switch ad := a.data.(type) {
	case []float32:
		return matmulTyped(&cfg, ad, b.data.([]float32))
	case []float64:
		return matmulTyped(&cfg, ad, b.data.([]float64))
	default:
		return matmulTyped(&cfg, a.data.([]int32), b.data.([]int32))
	}
}

// validate checks the flags against each other and picks the accelerator
// and kernel, so that mistakes show before any file is read or work done.
func (cfg *matmulConfig) validate(set map[string]bool) error {
	files := set["a"] || set["b"]
	if files && !(set["a"] && set["b"]) {
		return usagef("--a and --b go together: give both files or neither")
	}
	for _, f := range []string{"m", "n", "k", "type", "seed"} {
		if files && set[f] {
			return usagef("--%s makes random operands and cannot be used with --a/--b", f)
		}
	}
	cfg.isRandomInput = !files
	if cfg.repeat < 1 {
		return usagef("--repeat %d: want at least 1", cfg.repeat)
	}
	if cfg.isRandomInput {
		for _, d := range []struct {
			name string
			v    int
		}{{"m", cfg.m}, {"n", cfg.n}, {"k", cfg.k}} {
			if d.v < 0 {
				return usagef("--%s %d: want a size of 0 or more", d.name, d.v)
			}
		}
		for _, s := range [][3]any{{"A", cfg.m, cfg.k}, {"B", cfg.k, cfg.n}, {"C", cfg.m, cfg.n}} {
			if err := checkSize(s[0].(string), s[1].(int), s[2].(int)); err != nil {
				return err
			}
		}
	}
	if err := checkOutPath(cfg.out); err != nil {
		return err
	}
	acc, err := pickAccelerator(cfg.device)
	if err != nil {
		return err
	}
	cfg.acc = acc
	cfg.kernelChosen, cfg.tileChosen, err = linalg.Choose(linalg.OpMatMul, cfg.options())
	return kernelError(err)
}

func (cfg *matmulConfig) options() *linalg.Options {
	return &linalg.Options{Kernel: cfg.kernel, Tile: cfg.tile, View: cfg.acc.DefaultView()}
}

// matmulRandom multiplies random operands of type T, seeded by --seed.
func matmulRandom[T amp.Element](cfg *matmulConfig) error {
	r := newRand(cfg.seed)
	a := reference.RandomSlice[T](r, cfg.m*cfg.k)
	b := reference.RandomSlice[T](r, cfg.k*cfg.n)
	return matmulTyped(cfg, a, b)
}

// matmulTyped multiplies, checks, times and writes, for one element type.
func matmulTyped[T amp.Element](cfg *matmulConfig, a, b []T) error {
	w := cfg.stdout
	m, n, k := cfg.m, cfg.n, cfg.k
	source := fmt.Sprintf("random (seed %d)", cfg.seed)
	if !cfg.isRandomInput {
		source = cfg.a + " x " + cfg.b
	}
	tile := ""
	if cfg.tileChosen > 0 {
		tile = fmt.Sprintf(", tile %d", cfg.tileChosen)
	}
	fmt.Fprintf(w, "matmul: C = A*B, %s, M=%d N=%d K=%d, %s\n", typeName[T](), m, n, k, source)
	fmt.Fprintf(w, "device: %s (%s), kernel %s%s\n", cfg.acc.Path(), cfg.acc.Description(), cfg.kernelChosen.Name, tile)

	av, err := amp.NewArrayView(amp.Extent2(m, k), a)
	if err != nil {
		return err
	}
	bv, err := amp.NewArrayView(amp.Extent2(k, n), b)
	if err != nil {
		return err
	}
	c := make([]T, m*n)
	cv, err := amp.NewArrayView(amp.Extent2(m, n), c)
	if err != nil {
		return err
	}
	var times timing
	for range cfg.repeat {
		start := time.Now()
		if err := linalg.MatMul(1, av, bv, 0, cv, cfg.options()); err != nil {
			return kernelError(err)
		}
		if err := cv.Synchronize(); err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	times.report(w, 2*float64(m)*float64(n)*float64(k), reference.UnitRoundoff[T]() != 0)

	if cfg.check {
		af, bf := reference.ToFloat64(a), reference.ToFloat64(b)
		want := reference.MatMul(m, n, k, 1, af, bf, 0, nil)
		bound := reference.MatMulBound(m, n, k, 1, af, bf, 0, nil)
		if err := checkResult(w, c, want, bound, k); err != nil {
			return err
		}
	}
	if cfg.out != "" {
		if err := npy.WriteFile(cfg.out, &npy.Array{Shape: []int{m, n}, Data: c}); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s (%dx%d %s)\n", cfg.out, m, n, typeName[T]())
	}
	return nil
}
