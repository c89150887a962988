// Package cpubench is the one definition of goamp's CPU matrix-multiply
// benchmark: the cases (element type, size, transposes), the libraries they
// run on (goamp's packed GEMM, gonum's native BLAS and, when the system has
// it, OpenBLAS loaded at run time), and how a case is measured and checked.
// Both `go test -bench GEMM ./internal/cpubench` and `goamp bench` use it, so
// that a figure means the same thing whichever produced it.
//
// A measurement follows the method of docs/PERFORMANCE.md: fresh random
// operands for each case (never zeros), one warm-up per library, then timed
// repetitions that go round the libraries in turn (goamp, gonum, openblas,
// goamp, ...) so that whatever else the machine does slows them alike, and the
// median time of each, turned into GFLOP/s at 2n^3 flops. The result of every
// repetition is checked against float64 references computed once per case
// (reference.MatMulChecker: blocked random projections and whole rows and
// columns, references within a fixed budget, O(n^2) a check); a wrong result
// is an error, never a figure.
package cpubench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Type is an element type the benchmark multiplies.
type Type string

// The element types, named as goamp's --type flags name them.
const (
	Float32 Type = "float32"
	Float64 Type = "float64"
)

// Types lists every element type, in the order tables show them.
var Types = []Type{Float32, Float64}

// Trans says which operands are transposed: C = op(A)*op(B), op(X) = X^T when
// the flag is set. It is written as BLAS writes it, "NN", "TN" (A transposed)
// and so on.
type Trans struct{ A, B bool }

// String returns the two-letter BLAS name, A's letter first.
func (t Trans) String() string {
	letter := func(b bool) byte {
		if b {
			return 'T'
		}
		return 'N'
	}
	return string([]byte{letter(t.A), letter(t.B)})
}

// AllTrans lists the four transpose combinations, in the order tables show
// them.
var AllTrans = []Trans{{false, false}, {true, true}, {false, true}, {true, false}}

// DefaultSizes are the matrix sizes `goamp bench` runs when not told: from
// sizes that live in L1 to one (4096) where every operand is far past the
// last-level cache.
var DefaultSizes = []int{64, 128, 256, 512, 1024, 2048, 4096}

// TestSizes are the sizes `go test -bench` runs unless GOAMP_BENCH_SIZES says
// otherwise: gonum alone takes many seconds a multiply past 1024.
var TestSizes = []int{64, 128, 256, 512, 1024}

// Case is one benchmark problem: C (n x n) = op(A)*op(B) for square n x n
// operands of one element type.
type Case struct {
	Type  Type
	N     int
	Trans Trans
}

// String names the case as the sub-benchmarks do: "float32/n=1024/NN".
func (c Case) String() string { return fmt.Sprintf("%s/n=%d/%s", c.Type, c.N, c.Trans) }

// Flops is the work of one multiply, 2n^3: n^3 multiplies and as many adds,
// the convention every GFLOP/s figure of BLAS uses.
func (c Case) Flops() float64 { n := float64(c.N); return 2 * n * n * n }

// Cases returns every combination of the sizes, types and transposes, by type,
// then transposes, then size, which keeps a type's curve together in tables.
func Cases(sizes []int, types []Type, trans []Trans) []Case {
	var cases []Case
	for _, t := range types {
		for _, tr := range trans {
			for _, n := range sizes {
				cases = append(cases, Case{Type: t, N: n, Trans: tr})
			}
		}
	}
	return cases
}

// MaxN is the largest size accepted: three float64 matrices of 16384^2 are
// 6 GiB, past what a benchmark should ask of a machine by accident.
const MaxN = 16384

// ParseSizes reads a comma-separated list of sizes ("64,128,1024"). The
// result is sorted and without repeats, as curves need.
func ParseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > MaxN {
			return nil, fmt.Errorf("size %q: want a whole number from 1 to %d", f, MaxN)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("no sizes given")
	}
	slices.Sort(sizes)
	return slices.Compact(sizes), nil
}

// ParseTypes reads a comma-separated list of element types ("float32,float64"),
// in any case and order; the result is in the order of Types, without repeats.
func ParseTypes(s string) ([]Type, error) {
	want := map[Type]bool{}
	for _, f := range splitList(s) {
		t := Type(strings.ToLower(f))
		if !slices.Contains(Types, t) {
			return nil, fmt.Errorf("type %q: want float32 or float64", f)
		}
		want[t] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no types given")
	}
	var types []Type
	for _, t := range Types {
		if want[t] {
			types = append(types, t)
		}
	}
	return types, nil
}

// ParseTrans reads a comma-separated list of transposes ("NN,TN"), in any
// case and order; the result is in the order of AllTrans, without repeats.
func ParseTrans(s string) ([]Trans, error) {
	want := map[Trans]bool{}
	for _, f := range splitList(s) {
		i := slices.IndexFunc(AllTrans, func(t Trans) bool { return t.String() == strings.ToUpper(f) })
		if i < 0 {
			return nil, fmt.Errorf("transpose %q: want NN, TT, NT or TN", f)
		}
		want[AllTrans[i]] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no transposes given")
	}
	var trans []Trans
	for _, t := range AllTrans {
		if want[t] {
			trans = append(trans, t)
		}
	}
	return trans, nil
}

// splitList splits a comma-separated list, dropping blanks around items and
// empty items, so that "64, 128," reads as two sizes.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
