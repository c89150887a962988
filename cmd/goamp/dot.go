package main

import (
	"context"
	"fmt"
	"io"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/half"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/npy"
)

type dotConfig struct {
	runConfig
	n int
}

const dotSynopsis = `Computes the dot product of two vectors, read from NumPy .npy files (1-D,
float32, float64, int32 or float16, both of one type) or made at random (by default
2^22 float32 elements), and prints its value. --out writes the value as a
0-d array. It times three runs and prints the median, and checks the value
against a float64 reference; --repeat and --check change that.`

func runDot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := dotConfig{runConfig: runConfig{ctx: ctx, name: "dot", stdout: stdout, stderr: stderr}}
	fs := newFlagSet("dot", dotSynopsis, stdout)
	cfg.addFlags(fs, "vectors", linalg.OpDot, amp.MaxTileThreads)
	fs.IntVar(&cfg.n, "n", 1<<22, "length of random vectors")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := flagsSet(fs)
	if err := cfg.validate(set, linalg.OpDot, "n"); err != nil {
		return err
	}
	if cfg.random {
		if err := checkSize("--n", cfg.n); err != nil {
			return err
		}
		dt, _ := parseDType(cfg.dtype)
		if err := checkMemory(elemSize(dt), cfg.n, cfg.n); err != nil {
			return err
		}
		switch dt {
		case npy.Float16:
			cfg.half = true
			r := newRand(cfg.seed)
			x := randomFloat16(r, cfg.n)
			return dotTyped(&cfg, x, randomFloat16(r, cfg.n))
		case npy.Float32:
			return dotRandom[float32](&cfg)
		case npy.Float64:
			return dotRandom[float64](&cfg)
		default:
			return dotRandom[int32](&cfg)
		}
	}
	a, b, err := cfg.readOperands(1, func(a, b npy.Header) (int, error) {
		if a.Shape[0] != b.Shape[0] {
			return 0, usagef("vectors of length %d and %d: they must have one length", a.Shape[0], b.Shape[0])
		}
		return 1, nil
	})
	if err != nil {
		return err
	}
	cfg.n = a.shape[0]
	switch ad := a.data.(type) {
	case []half.Float16:
		cfg.half = true
		return dotTyped(&cfg, half.Float32s(ad), half.Float32s(b.data.([]half.Float16)))
	case []float32:
		return dotTyped(&cfg, ad, b.data.([]float32))
	case []float64:
		return dotTyped(&cfg, ad, b.data.([]float64))
	default:
		return dotTyped(&cfg, a.data.([]int32), b.data.([]int32))
	}
}

// dotRandom takes the dot product of random vectors of type T.
func dotRandom[T amp.Element](cfg *dotConfig) error {
	r := newRand(cfg.seed)
	x := reference.RandomSlice[T](r, cfg.n)
	y := reference.RandomSlice[T](r, cfg.n)
	return dotTyped(cfg, x, y)
}

// dotTyped computes, times, checks and writes the dot product for one type.
func dotTyped[T amp.Element](cfg *dotConfig, x, y []T) error {
	cfg.describe(fmt.Sprintf("%s, n=%d", cfg.elemName(typeName[T]()), cfg.n))
	xv, err := amp.NewArrayView(amp.Extent1(cfg.n), x)
	if err != nil {
		return err
	}
	yv, err := amp.NewArrayView(amp.Extent1(cfg.n), y)
	if err != nil {
		return err
	}
	var value T
	times, err := cfg.time(func() (err error) {
		xv.Refresh() // on a device, every run pays for its copies
		yv.Refresh()
		value, err = linalg.Dot(xv, yv, cfg.options())
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.stdout, "value: %v\n", value)
	cfg.report(times, 2*float64(cfg.n), reference.UnitRoundoff[T]() != 0)
	if cfg.check {
		if err := checkResult[T](cfg.stdout, []float64{reference.DotError(x, y, value)}, cfg.n); err != nil {
			return err
		}
	}
	return cfg.write([]int{}, []T{value})
}
