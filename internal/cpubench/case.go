// Package cpubench is the one definition of goamp's CPU matrix-multiply
// benchmark: the cases (element type, size, transposes; the GPU
// benchmark's products of other shapes too), the libraries they run on
// (goamp's packed GEMM, gonum's native BLAS and, when the system has it,
// OpenBLAS loaded at run time), and how a case is measured and checked.
// Both `go test -bench GEMM ./internal/cpubench` and `goamp bench` use it, so
// that a figure means the same thing whichever produced it.
//
// A measurement follows the method of docs/PERFORMANCE.md: fresh random
// operands for each case (never zeros), one warm-up per library, then timed
// repetitions that go round the libraries in turn (goamp, gonum, openblas,
// goamp, ...) so that whatever else the machine does slows them alike, and the
// median time of each, turned into GFLOP/s at 2n^3 flops (2*M*N*K for a
// product that is not square). The result of every repetition is checked
// against float64 references computed once per case
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

// Case is one benchmark problem: C = op(A)*op(B) for operands of one
// element type, op(A) M x K, op(B) K x N and C M x N. M and K are 0 for a
// square product, n x n x n with n = N: the CPU benchmark has only those,
// and a zero means every literal and every table of square cases reads as
// it did before products of other shapes were measured.
type Case struct {
	Type  Type
	N     int
	Trans Trans
	// M and K, when not 0, give op(A) M rows and the sums K terms.
	M, K int
}

// Dims returns the product's M, N and K.
func (c Case) Dims() (m, n, k int) {
	m, n, k = c.M, c.N, c.K
	if m == 0 {
		m = n
	}
	if k == 0 {
		k = n
	}
	return m, n, k
}

// Shape returns the product's shape.
func (c Case) Shape() Shape {
	m, n, k := c.Dims()
	return Shape{M: m, N: n, K: k}
}

// Square reports whether the product is n x n x n.
func (c Case) Square() bool { return c.Shape().Square() }

// Size names the product's shape as tables show it: "1024" for a square
// product, "64x8192x8192" (M x N x K) for any other.
func (c Case) Size() string {
	if c.Square() {
		return strconv.Itoa(c.N)
	}
	return c.Shape().String()
}

// String names the case as the sub-benchmarks do: "float32/n=1024/NN", or
// "float32/64x8192x8192/NN" for a product that is not square. NewProblem
// seeds a case's operands from this name, so a square case keeps the
// operands it always had.
func (c Case) String() string {
	if c.Square() {
		return fmt.Sprintf("%s/n=%d/%s", c.Type, c.N, c.Trans)
	}
	return fmt.Sprintf("%s/%s/%s", c.Type, c.Shape(), c.Trans)
}

// Flops is the work of one multiply, 2*M*N*K (2n^3 when square): M*N*K
// multiplies and as many adds, the convention every GFLOP/s figure of
// BLAS uses.
func (c Case) Flops() float64 {
	m, n, k := c.Dims()
	return 2 * float64(m) * float64(n) * float64(k)
}

// Shape is the size of a product C = op(A)*op(B): op(A) is M x K, op(B)
// K x N and C M x N.
type Shape struct{ M, N, K int }

// Square returns the shape n x n x n.
func Square(n int) Shape { return Shape{M: n, N: n, K: n} }

// Square reports whether M, N and K are one size.
func (s Shape) Square() bool { return s.M == s.N && s.K == s.N }

// String writes the shape as ParseShapes reads it: "64x8192x8192" (M x N x K).
func (s Shape) String() string { return fmt.Sprintf("%dx%dx%d", s.M, s.N, s.K) }

// Case returns the case of this shape, type and transposes; a square shape
// gives the case Cases gives for its size, M and K left 0.
func (s Shape) Case(t Type, tr Trans) Case {
	if s.Square() {
		return Case{Type: t, N: s.N, Trans: tr}
	}
	return Case{Type: t, M: s.M, N: s.N, K: s.K, Trans: tr}
}

// Cases returns every combination of the sizes, types and transposes, by type,
// then transposes, then size, which keeps a type's curve together in tables.
func Cases(sizes []int, types []Type, trans []Trans) []Case {
	shapes := make([]Shape, len(sizes))
	for i, n := range sizes {
		shapes[i] = Square(n)
	}
	return ShapeCases(shapes, types, trans)
}

// ShapeCases is Cases for products of any shape: every combination of the
// shapes, types and transposes, by type, then transposes, then shape in
// the order given.
func ShapeCases(shapes []Shape, types []Type, trans []Trans) []Case {
	var cases []Case
	for _, t := range types {
		for _, tr := range trans {
			for _, s := range shapes {
				cases = append(cases, s.Case(t, tr))
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

// MaxShapeDim is the largest M, N or K ParseShapes accepts; MaxElements
// the most elements it lets one operand (A, B or C) hold: a skinny product
// may be long in one dimension, but no operand larger than the largest
// square one (MaxN^2, 2 GiB of float64).
const (
	MaxShapeDim = 1 << 20
	MaxElements = MaxN * MaxN
)

// ParseShapes reads a comma-separated list of products MxNxK
// ("64x8192x8192,8192x8192x64"; X for x will do). The result keeps the
// order given, without repeats: shapes are a list of particular products,
// not the points of a curve.
func ParseShapes(s string) ([]Shape, error) {
	var shapes []Shape
	for _, f := range splitList(s) {
		parts := strings.Split(strings.ToLower(f), "x")
		if len(parts) != 3 {
			return nil, fmt.Errorf("shape %q: want MxNxK, three whole numbers such as 64x8192x8192", f)
		}
		var d [3]int
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 || n > MaxShapeDim {
				return nil, fmt.Errorf("shape %q: %s = %q: want a whole number from 1 to %d", f, [3]string{"M", "N", "K"}[i], p, MaxShapeDim)
			}
			d[i] = n
		}
		sh := Shape{M: d[0], N: d[1], K: d[2]}
		if e := sh.MaxOperand(); e > MaxElements {
			return nil, fmt.Errorf("shape %q: an operand of %d elements, more than %d (%d^2)", f, e, MaxElements, MaxN)
		}
		if !slices.Contains(shapes, sh) {
			shapes = append(shapes, sh)
		}
	}
	if len(shapes) == 0 {
		return nil, fmt.Errorf("no shapes given")
	}
	return shapes, nil
}

// MaxOperand returns the elements of the largest of A (M*K), B (K*N) and
// C (M*N).
func (s Shape) MaxOperand() int { return max(s.M*s.K, s.K*s.N, s.M*s.N) }

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
