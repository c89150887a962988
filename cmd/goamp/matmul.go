package main

import (
	"fmt"
	"io"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/npy"
)

type matmulConfig struct {
	runConfig
	m, n, k int
}

const matmulSynopsis = `Computes C = A*B, with A and B read from NumPy .npy files (2-D, float32,
float64 or int32, C or Fortran order, both of one type) or made at random.
With no flags at all it multiplies random 1024x1024 float32 matrices on the
default accelerator, checks the product and times three runs.`

func runMatMul(args []string, stdout, stderr io.Writer) error {
	cfg := matmulConfig{runConfig: runConfig{name: "matmul", stdout: stdout, stderr: stderr}}
	fs := newFlagSet("matmul", matmulSynopsis, stdout)
	cfg.addFlags(fs, "matrices", 32)
	fs.IntVar(&cfg.m, "m", 1024, "rows of random A and C")
	fs.IntVar(&cfg.n, "n", 1024, "columns of random B and C")
	fs.IntVar(&cfg.k, "k", 1024, "columns of random A, rows of random B")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := flagsSet(fs)
	if len(set) == 0 {
		cfg.check, cfg.repeat = true, 3
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
		switch dt, _ := parseDType(cfg.dtype); dt {
		case npy.Float32:
			return matmulRandom[float32](&cfg)
		case npy.Float64:
			return matmulRandom[float64](&cfg)
		default:
			return matmulRandom[int32](&cfg)
		}
	}
	a, b, err := cfg.readOperands(2)
	if err != nil {
		return err
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
	cfg.describe(fmt.Sprintf("C = A*B, %s, M=%d N=%d K=%d", typeName[T](), m, n, k))
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
	times, err := cfg.time(func() error {
		// On a device, every run pays for its copies, as the first does:
		// marking the device copies stale makes the kernel upload again.
		av.Refresh()
		bv.Refresh()
		if err := linalg.MatMul(1, av, bv, 0, cv, cfg.options()); err != nil {
			return err
		}
		return cv.Synchronize()
	})
	if err != nil {
		return err
	}
	cfg.report(times, 2*float64(m)*float64(n)*float64(k), reference.UnitRoundoff[T]() != 0)
	if cfg.check {
		if float64(m)*float64(n)*float64(k) >= 1<<27 {
			fmt.Fprintln(cfg.stderr, "goamp matmul: checking against the float64 reference")
		}
		errs := reference.MatMulErrors(m, n, k, 1, a, b, 0, nil, c)
		if err := checkResult[T](cfg.stdout, errs, k); err != nil {
			return err
		}
	}
	return cfg.write([]int{m, n}, c)
}
