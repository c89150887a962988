package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/half"
	"github.com/goamp/goamp/internal/precision"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/npy"
)

type matmulConfig struct {
	runConfig
	m, n, k        int
	transA, transB bool
}

const matmulSynopsis = `Computes C = A*B, with A and B read from NumPy .npy files (2-D, float32,
float64, int32 or float16, C or Fortran order, both of one type) or made at random
(by default 1024x1024 float32), on the default accelerator; with --transa
or --transb, A^T or B^T in its place (A then K x M, B N x K), read where it
lies. It times three
runs and prints the median, and checks the product against float64
references without redoing the product (blocked random projections and
whole rows and columns; every element up to 1024^3); --repeat and --check
change that. --precision tf32, bf16 or fp16 lets float32 products round
their operands to that format and run on a GPU's tensor cores (the check
then builds its references from the rounded operands); the CPU computes
exactly whatever it says. float16 operands are multiplied as float32
(every product of two float16 values is exact in float32; on a GPU the FP16
tensor cores, which round nothing more) and C is written as float16.`

func runMatMul(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := matmulConfig{runConfig: runConfig{ctx: ctx, name: "matmul", stdout: stdout, stderr: stderr}}
	fs := newFlagSet("matmul", matmulSynopsis, stdout)
	cfg.addFlags(fs, "matrices", linalg.OpMatMul, 32)
	fs.IntVar(&cfg.m, "m", 1024, "rows of random A and C")
	fs.IntVar(&cfg.n, "n", 1024, "columns of random B and C")
	fs.IntVar(&cfg.k, "k", 1024, "columns of random A, rows of random B")
	fs.BoolVar(&cfg.transA, "transa", false, "multiply by A's transpose: A is K x M (a random A is made so)")
	fs.BoolVar(&cfg.transB, "transb", false, "multiply by B's transpose: B is N x K (a random B is made so)")
	fs.StringVar(&cfg.precision, "precision", precision.Exact, "how float32 operands may be multiplied: exact, or tf32, bf16 or fp16 (each element rounded to that format, the products summed in float32, on a GPU's tensor cores)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := flagsSet(fs)
	cfg.precision = strings.ToLower(cfg.precision)
	if err := precision.Check(cfg.precision); err != nil {
		return usagef("--precision: %v", err)
	}
	if float16Operands(&cfg.runConfig, set) {
		// Before the kernel is chosen: --kernel mma takes float16 files
		// without --precision.
		cfg.setHalf(set)
	}
	if err := cfg.validate(set, linalg.OpMatMul, "m", "n", "k"); err != nil {
		return err
	}
	if cfg.random {
		for _, s := range []struct {
			name string
			r, c int
		}{{"A", cfg.m, cfg.k}, {"B", cfg.k, cfg.n}, {"C", cfg.m, cfg.n}} {
			if err := checkSize("random "+s.name, s.r, s.c); err != nil {
				return err
			}
		}
		dt, _ := parseDType(cfg.dtype)
		if err := checkMemory(elemSize(dt), cfg.m*cfg.k, cfg.k*cfg.n, cfg.m*cfg.n); err != nil {
			return err
		}
		switch dt {
		case npy.Float16:
			cfg.setHalf(set)
			r := newRand(cfg.seed)
			a := randomFloat16(r, cfg.m*cfg.k)
			return matmulTyped(&cfg, a, randomFloat16(r, cfg.k*cfg.n))
		case npy.Float32:
			return matmulRandom[float32](&cfg)
		case npy.Float64:
			return matmulRandom[float64](&cfg)
		default:
			return matmulRandom[int32](&cfg)
		}
	}
	// op(A) is am x ak, op(B) bk x bn, as the transposes say.
	opShape := func(s []int, trans bool) (int, int) {
		if trans {
			return s[1], s[0]
		}
		return s[0], s[1]
	}
	a, b, err := cfg.readOperands(2, func(a, b npy.Header) (int, error) {
		am, ak := opShape(a.Shape, cfg.transA)
		bk, bn := opShape(b.Shape, cfg.transB)
		if ak != bk {
			return 0, usagef("%s is %dx%d but %s is %dx%d: %s's columns must equal %s's rows",
				opName("A", cfg.transA), am, ak, opName("B", cfg.transB), bk, bn, opName("A", cfg.transA), opName("B", cfg.transB))
		}
		if err := checkSize("C", am, bn); err != nil {
			return 0, err
		}
		return am * bn, nil
	})
	if err != nil {
		return err
	}
	cfg.m, cfg.k = opShape(a.shape, cfg.transA)
	_, cfg.n = opShape(b.shape, cfg.transB)
	switch ad := a.data.(type) {
	case []half.Float16:
		cfg.setHalf(set)
		return matmulTyped(&cfg, half.Float32s(ad), half.Float32s(b.data.([]half.Float16)))
	case []float32:
		return matmulTyped(&cfg, ad, b.data.([]float32))
	case []float64:
		return matmulTyped(&cfg, ad, b.data.([]float64))
	default:
		return matmulTyped(&cfg, a.data.([]int32), b.data.([]int32))
	}
}

// matmulRandom multiplies random operands of type T, seeded by --seed.
func matmulRandom[T amp.Element](cfg *matmulConfig) error {
	r := newRand(cfg.seed)
	a := reference.RandomSlice[T](r, cfg.m*cfg.k)
	b := reference.RandomSlice[T](r, cfg.k*cfg.n)
	return matmulTyped(cfg, a, b)
}

// matmulTyped multiplies, times, checks and writes, for one element type.
func matmulTyped[T amp.Element](cfg *matmulConfig, a, b []T) error {
	m, n, k := cfg.m, cfg.n, cfg.k
	if cfg.precision != precision.Exact && typeName[T]() != "float32" {
		return usagef("--precision %s rounds float32 operands; these are %s, which multiply exactly", cfg.precision, typeName[T]())
	}
	// The kernel for this element type and shape: auto's choice depends
	// on them (dmma for float64 on a GPU; wgmma or mma for a reduced
	// precision), and a kernel named by --kernel may not take the type.
	chooseOpt := cfg.options()
	chooseOpt.TransA, chooseOpt.TransB = cfg.transA, cfg.transB // auto's choice depends on them
	chosen, _, err := linalg.ChooseForShape[T](chooseOpt, m, n, k)
	if err != nil {
		return kernelError(err)
	}
	cfg.chosen = chosen
	// The precision the product is computed in: a kernel without reduced
	// precisions computes exactly, whatever --precision allows.
	inPrecision := precision.Exact
	if len(chosen.Precisions) > 0 {
		inPrecision = cfg.precision
	}
	what := fmt.Sprintf("C = %s*%s, %s, M=%d N=%d K=%d", opName("A", cfg.transA), opName("B", cfg.transB), cfg.elemName(typeName[T]()), m, n, k)
	switch {
	case cfg.half && inPrecision == precision.FP16:
		what += ", FP16 tensor cores (nothing more rounded), sums in float32"
	case inPrecision != precision.Exact:
		what += fmt.Sprintf(", operands rounded to %s, sums in float32", inPrecision)
	case cfg.half && cfg.precision == precision.FP16:
		// float16 operands on a kernel without reduced precisions: exact,
		// as allowed, and no note needed.
	case cfg.precision != precision.Exact:
		what += fmt.Sprintf(", exact (%s allowed; the %s kernel has no reduced precision)", cfg.precision, chosen.Name)
	}
	cfg.describe(what)
	ae, be := amp.Extent2(m, k), amp.Extent2(k, n)
	if cfg.transA {
		ae = amp.Extent2(k, m)
	}
	if cfg.transB {
		be = amp.Extent2(n, k)
	}
	av, err := amp.NewArrayView(ae, a)
	if err != nil {
		return err
	}
	bv, err := amp.NewArrayView(be, b)
	if err != nil {
		return err
	}
	c := make([]T, m*n)
	cv, err := amp.NewArrayView(amp.Extent2(m, n), c)
	if err != nil {
		return err
	}
	times, err := cfg.time(func() error {
		// On a device, every run pays for its copies, as the first does:
		// marking the device copies stale makes the kernel upload again.
		av.Refresh()
		bv.Refresh()
		opt := cfg.options()
		opt.TransA, opt.TransB = cfg.transA, cfg.transB
		if err := linalg.MatMul(1, av, bv, 0, cv, opt); err != nil {
			return err
		}
		return cv.Synchronize()
	})
	if err != nil {
		return err
	}
	cfg.report(times, 2*float64(m)*float64(n)*float64(k), reference.UnitRoundoff[T]() != 0)
	if cfg.check {
		// Blocked random projections and whole rows and columns against
		// float64 references, within a fixed budget of work (every element
		// up to 1024^3): about a second and a half at n = 8192, where a full
		// reference product took longer than the product by 300x.
		// In a reduced precision the product to check against is that of
		// the rounded operands.
		ra, rb := a, b
		if inPrecision != precision.Exact {
			ra = any(precision.RoundSlice(inPrecision, any(a).([]float32))).([]T)
			rb = any(precision.RoundSlice(inPrecision, any(b).([]float32))).([]T)
		}
		chk := reference.NewMatMulChecker(cfg.transA, cfg.transB, m, n, k, 1, ra, rb, 0, nil, newRand(cfg.seed^0x636865636b))
		if inPrecision != precision.Exact {
			// The tensor cores' adders may truncate where float32 rounds:
			// the worst case for k terms, not the random walk.
			chk = reference.NewMatMulCheckerTol(cfg.transA, cfg.transB, m, n, k, 1, ra, rb, 0, nil, newRand(cfg.seed^0x636865636b), reference.ToleranceWorst[float32](k))
		}
		res := chk.Check(c)
		verdict := "ok"
		switch {
		case !res.OK():
			verdict = "FAILED: " + res.Where
		case res.Partial:
			verdict = "ok, but partial: " + res.Where
		}
		against := "float64"
		if inPrecision != precision.Exact {
			against = "float64 products of the operands rounded to " + inPrecision
		}
		fmt.Fprintf(cfg.stdout, "check: max error %.3g relative to the magnitude of the terms (tolerance %.3g for %s, %d terms; blocked random projections and whole rows and columns against %s): %s\n",
			res.Worst, res.Tolerance, typeName[T](), k, against, verdict)
		if !res.OK() {
			return errCheckFailed
		}
	}
	return cfg.write([]int{m, n}, c)
}

// float16Operands reports whether the operands will be float16: --type
// float16 for random ones, or --a's header (a file that cannot be read is
// reported later, where it is read).
func float16Operands(c *runConfig, set map[string]bool) bool {
	if !set["a"] {
		return strings.EqualFold(c.dtype, npy.Float16.String())
	}
	f, err := npy.Open(c.a, nil)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Header().DType == npy.Float16
}

// setHalf marks the operands float16. Unless --precision was given, the
// product is then allowed FP16 (the tensor cores on a GPU): rounding a
// float16 to FP16 changes nothing, so that is float32's own product.
func (cfg *matmulConfig) setHalf(set map[string]bool) {
	cfg.half = true
	if !set["precision"] {
		cfg.precision = precision.FP16
	}
}

// opName is "A" or "A^T".
func opName(name string, trans bool) string {
	if trans {
		return name + "^T"
	}
	return name
}
