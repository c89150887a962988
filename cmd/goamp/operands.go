package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/half"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/npy"
)

// maxElements caps each operand and result, so that a typo in --m does not
// ask for terabytes. 2^31 float64s are 16 GiB.
const maxElements = 1 << 31

// operand is an array read from a .npy file.
type operand struct {
	path  string
	shape []int
	dtype npy.DType
	data  any // []float32, []float64, []int32 or []half.Float16, row-major
}

// openOperand opens path and checks, from its header alone, that it holds
// an array of the given rank. Every failure is a usage error naming the
// file.
func openOperand(flagName, path string, rank int) (*npy.File, error) {
	f, err := npy.Open(path, nil)
	if err != nil {
		return nil, usagef("--%s: %v", flagName, err)
	}
	if h := f.Header(); len(h.Shape) != rank {
		f.Close()
		want := map[int]string{1: "1-D (a vector)", 2: "2-D (a matrix)"}[rank]
		return nil, usagef("--%s: %s: array is %d-D with shape %v, want %s", flagName, path, len(h.Shape), h.Shape, want)
	}
	return f, nil
}

// readOperand reads the data of an opened operand.
func readOperand(flagName, path string, f *npy.File) (*operand, error) {
	arr, err := f.ReadArray()
	if err != nil {
		return nil, usagef("--%s: %v", flagName, err)
	}
	return &operand{path: path, shape: arr.Shape, dtype: f.Header().DType, data: arr.Data}, nil
}

// checkMemory refuses work whose arrays (counts of elements of size bytes)
// would not fit in this machine's memory, before any is allocated.
func checkMemory(size int, counts ...int) error {
	total := 0.0
	for _, c := range counts {
		total += float64(c) * float64(size)
	}
	if limit := npy.DefaultMaxBytes(); total > float64(limit) {
		return usagef("the operands and result need %s, more than this machine's memory (%s)", formatBytes(total), formatBytes(float64(limit)))
	}
	return nil
}

// formatBytes writes n bytes in GiB or MiB.
func formatBytes(n float64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", n/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", n/(1<<20))
}

// parseDType reads --type.
func parseDType(s string) (npy.DType, error) {
	for _, d := range []npy.DType{npy.Float32, npy.Float64, npy.Int32, npy.Float16} {
		if strings.EqualFold(s, d.String()) {
			return d, nil
		}
	}
	return 0, usagef("--type %q: want float32, float64, int32 or float16", s)
}

// randomFloat16 returns n random float32 values rounded to float16: what
// a random float16 operand holds, in the type it is computed in.
func randomFloat16(r *rand.Rand, n int) []float32 {
	return half.Float32s(half.Float16s(reference.RandomSlice[float32](r, n)))
}

// checkSize refuses dimensions that are negative or multiply past maxElements.
func checkSize(what string, dims ...int) error {
	n := 1
	for _, d := range dims {
		if d < 0 {
			return usagef("%s: negative dimension %d", what, d)
		}
		if d != 0 && n > maxElements/d {
			return usagef("%s: more than %d elements", what, maxElements)
		}
		n *= d
	}
	return nil
}

// timing collects the durations of repeated runs.
type timing []time.Duration

func (t timing) median() time.Duration {
	s := slices.Clone(t)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// report prints the median time and the rate for ops operations a run.
func (t timing) report(w io.Writer, ops float64, isFloat bool) {
	med := t.median()
	unit := "GFLOP/s"
	if !isFloat {
		unit = "GOP/s"
	}
	rate := 0.0
	if med > 0 {
		rate = ops / med.Seconds() / 1e9
	}
	if len(t) == 1 {
		// A first run pays for what later ones find ready (page faults,
		// the engine's threads, a GPU's module load): say so.
		fmt.Fprintf(w, "time: %v, %.3g %s (one cold run, start-up costs included: --repeat 3 or more for a steady figure)\n",
			med.Round(time.Microsecond), rate, unit)
		return
	}
	fmt.Fprintf(w, "time: median %v of %d runs, %.3g %s\n", med.Round(time.Microsecond), len(t), rate, unit)
}

// kernelError sorts a linalg failure: a bad kernel or tile choice is the
// caller's (exit 2); anything else is a failure of the run (exit 1).
func kernelError(err error) error {
	if errors.Is(err, linalg.ErrUnknownKernel) || errors.Is(err, linalg.ErrTileSize) || errors.Is(err, linalg.ErrShape) || errors.Is(err, amp.ErrNoAccelerator) || errors.Is(err, amp.ErrUnsupported) || errors.Is(err, linalg.ErrPrecision) {
		return usageError{err}
	}
	return err
}

// checkResult prints the largest of errs (each relative to the magnitude of
// the terms, from reference.MatMulErrors or DotError) and returns
// errCheckFailed when it is past the tolerance for T and k terms.
func checkResult[T amp.Element](w io.Writer, errs []float64, k int) error {
	worst := 0.0
	for _, e := range errs {
		if math.IsNaN(e) {
			e = math.Inf(1)
		}
		worst = max(worst, e)
	}
	tol := reference.Tolerance[T](k)
	verdict := "ok"
	if worst > tol {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "check: max error %.3g relative to the magnitude of the terms (tolerance %.3g for %s, %d terms): %s\n",
		worst, tol, typeName[T](), k, verdict)
	if worst > tol {
		return errCheckFailed
	}
	return nil
}

func typeName[T amp.Element]() string { return fmt.Sprintf("%T", *new(T)) }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }
