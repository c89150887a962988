package linalg_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/precision"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/linalg"
	"github.com/goamp/goamp/linalg/conformance"
)

// views returns the queues of every accelerator present: kernels registered
// for each kind run through the suite on every device of that kind.
func views() []*amp.AcceleratorView {
	var vs []*amp.AcceleratorView
	for _, a := range amp.Accelerators() {
		vs = append(vs, a.DefaultView())
	}
	return vs
}

// extraTiles are tile sizes the tiled kernels are also run with, on fewer
// shapes: 1, odd sizes, and the largest.
var extraTiles = []int{1, 3, 8, 32}

var extraTileShapes = []conformance.Shape{{M: 1, N: 1, K: 1}, {M: 5, N: 7, K: 1}, {M: 17, N: 15, K: 33}, {M: 37, N: 53, K: 41}, {M: 4, N: 3, K: 0}}

// tilesOf returns the sizes of want that kernel k accepts: all of them,
// unless it is compiled for fixed tiles, when it is those (a GPU kernel's 8,
// 16 and 32, say) that are in want, plus its largest.
func tilesOf(k linalg.KernelInfo, want []int) []int {
	if len(k.Tiles) == 0 {
		return want
	}
	var out []int
	for _, t := range want {
		if slices.Contains(k.Tiles, t) {
			out = append(out, t)
		}
	}
	if last := k.Tiles[len(k.Tiles)-1]; !slices.Contains(out, last) {
		out = append(out, last)
	}
	return out
}

func matmulWith[T amp.Element](opt *linalg.Options) conformance.MatMulFunc[T] {
	return func(alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error {
		return linalg.MatMul(alpha, a, b, beta, c, opt)
	}
}

func dotWith[T amp.Element](opt *linalg.Options) conformance.DotFunc[T] {
	return func(x, y *amp.ArrayView[T]) (T, error) { return linalg.Dot(x, y, opt) }
}

func gemmWith[T amp.Element](opt linalg.Options) conformance.GemmFunc[T] {
	return func(transA, transB bool, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error {
		o := opt
		o.TransA, o.TransB = transA, transB
		if o.Precision != "" {
			roundView(a, o.Precision)
			roundView(b, o.Precision)
		}
		return linalg.MatMul(alpha, a, b, beta, c, &o)
	}
}

// roundView rounds every element of a float32 view of rank 2 or 3 to
// precision p in place (other element types are left as they are).
func roundView[T amp.Element](a *amp.ArrayView[T], p linalg.Precision) {
	ext := a.Extent()
	if ext.Rank() == 3 {
		for i := range ext.At(0) {
			m, err := a.Projection(i)
			if err != nil {
				panic(err)
			}
			roundView(m, p)
		}
		return
	}
	for i := range ext.At(0) {
		for j := range ext.At(1) {
			if x, ok := any(a.At2(i, j)).(float32); ok {
				a.Set2(i, j, any(precision.Round(string(p), x)).(T))
			}
		}
	}
}

func runMatMul[T amp.Element](t *testing.T, v *amp.AcceleratorView, k linalg.KernelInfo) {
	if elem := fmt.Sprintf("%T", *new(T)); len(k.Elements) > 0 && !slices.Contains(k.Elements, elem) {
		// A kernel without this type refuses it, before any work.
		a, b, c := mustView[T](t, amp.Extent2(2, 3)), mustView[T](t, amp.Extent2(3, 4)), mustView[T](t, amp.Extent2(2, 4))
		if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{Kernel: k.Name, View: v}); !errors.Is(err, amp.ErrUnsupported) {
			t.Errorf("%s with %s: %v, want amp.ErrUnsupported", k.Name, elem, err)
		}
		if _, _, err := linalg.ChooseFor[T](linalg.OpMatMul, &linalg.Options{Kernel: k.Name, View: v}); !errors.Is(err, amp.ErrUnsupported) {
			t.Errorf("ChooseFor(%s, %s): %v, want amp.ErrUnsupported", k.Name, elem, err)
		}
		t.Skipf("SKIP: the %s kernel takes %v only (and refuses %s)", k.Name, k.Elements, elem)
	}
	if k.MinCompute > 0 || k.MaxCompute > 0 {
		// A tensor-core kernel this GPU cannot run is refused by name.
		opt := &linalg.Options{Kernel: k.Name, View: v}
		if len(k.Precisions) > 0 {
			opt.Precision = k.Precisions[0]
		}
		if _, _, err := linalg.ChooseFor[T](linalg.OpMatMul, opt); errors.Is(err, amp.ErrUnsupported) {
			t.Skipf("SKIP: %v", err)
		}
	}
	if k.ExactTiles {
		conformance.TestMatMulMultiples(t, matmulWith[T](&linalg.Options{Kernel: k.Name, View: v}), k.DefaultTile)
		return
	}
	if len(k.Precisions) > 0 {
		runMatMulInPrecisions(t, v, k)
		return
	}
	runMatMulWith[T](t, k, linalg.Options{Kernel: k.Name, View: v})
}

// runMatMulInPrecisions runs the suite on a float32 kernel that multiplies
// in reduced precisions (mma), once for each, with A and B rounded to the
// precision before the call: the suite's float64 reference is then the
// product the kernel must return, to float32's tolerance, and an element
// the kernel pairs with the wrong one, or sums in less than float32, still
// fails. (That the kernel rounds as the precision says is checked on
// unrounded operands by internal/gpu's TestGemmOnDevice.) Exact is refused.
func runMatMulInPrecisions(t *testing.T, v *amp.AcceleratorView, k linalg.KernelInfo) {
	a, b, c := mustView[float32](t, amp.Extent2(2, 3)), mustView[float32](t, amp.Extent2(3, 4)), mustView[float32](t, amp.Extent2(2, 4))
	if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{Kernel: k.Name, View: v}); !errors.Is(err, linalg.ErrPrecision) {
		t.Errorf("%s in exact arithmetic: %v, want ErrPrecision", k.Name, err)
	}
	for _, p := range k.Precisions {
		t.Run(string(p), func(t *testing.T) {
			runMatMulWith[float32](t, k, linalg.Options{Kernel: k.Name, View: v, Precision: p})
		})
	}
}

// runMatMulWith runs the conformance suite, transposes and batches on a
// kernel with opt. A reduced opt.Precision rounds A and B to it first (see
// runMatMulInPrecisions).
func runMatMulWith[T amp.Element](t *testing.T, k linalg.KernelInfo, opt linalg.Options) {
	v := opt.View
	mm := matmulWith[T](&opt)
	if opt.Precision != "" {
		exact := mm
		mm = func(alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error {
			roundView(a, opt.Precision)
			roundView(b, opt.Precision)
			return exact(alpha, a, b, beta, c)
		}
	}
	conformance.TestMatMul(t, mm)
	// auto's choices take transposes and batches on every accelerator.
	transposes := k.Transposes || k.Name == "auto"
	if transposes {
		t.Run("transposes", func(t *testing.T) { conformance.TestMatMulTransposes(t, gemmWith[T](opt)) })
	} else {
		t.Run("transposes are refused", func(t *testing.T) {
			a, b, c := mustView[T](t, amp.Extent2(3, 2)), mustView[T](t, amp.Extent2(3, 4)), mustView[T](t, amp.Extent2(2, 4))
			if err := gemmWith[T](opt)(true, false, 1, a, b, 0, c); !errors.Is(err, amp.ErrUnsupported) {
				t.Errorf("A^T with %s: %v, want amp.ErrUnsupported", k.Name, err)
			}
		})
	}
	// Kernels without batches run them a product at a time.
	t.Run("batches", func(t *testing.T) { conformance.TestMatMulBatched(t, gemmWith[T](opt), transposes) })
	if k.MaxTile > 0 {
		for _, ts := range tilesOf(k, extraTiles) {
			t.Run(fmt.Sprintf("tile=%d", ts), func(t *testing.T) {
				conformance.TestMatMulShapes(t, matmulWith[T](&linalg.Options{Kernel: k.Name, Tile: ts, View: v}), extraTileShapes)
			})
		}
	}
}

func TestMatMulConformance(t *testing.T) {
	for _, v := range views() {
		kinds := linalg.Kernels(linalg.OpMatMul)
		kinds = append(kinds, linalg.KernelInfo{Name: "auto", Accelerator: v.Accelerator().Kind()})
		for _, k := range kinds {
			if k.Accelerator != v.Accelerator().Kind() {
				continue
			}
			t.Run(v.Accelerator().Path()+"/"+k.Name, func(t *testing.T) {
				t.Run("float32", func(t *testing.T) { runMatMul[float32](t, v, k) })
				t.Run("float64", func(t *testing.T) { runMatMul[float64](t, v, k) })
				t.Run("int32", func(t *testing.T) { runMatMul[int32](t, v, k) })
			})
		}
	}
}

func TestDotConformance(t *testing.T) {
	for _, v := range views() {
		kinds := linalg.Kernels(linalg.OpDot)
		kinds = append(kinds, linalg.KernelInfo{Name: "auto", Accelerator: v.Accelerator().Kind()})
		for _, k := range kinds {
			if k.Accelerator != v.Accelerator().Kind() {
				continue
			}
			tiles := []int{0}
			if k.MaxTile > 0 {
				tiles = append(tiles, tilesOf(k, []int{1, 2, 3, 7, 32, 1024})...)
			}
			for _, ts := range tiles {
				opt := &linalg.Options{Kernel: k.Name, Tile: ts, View: v}
				// The long vectors with the default tile only: other
				// tiles change how the work is cut, which short vectors
				// (one tile, several, ragged ends) already exercise.
				lengths := conformance.DotLengths(!testing.Short() && ts == 0)
				t.Run(fmt.Sprintf("%s/%s/tile=%d", v.Accelerator().Path(), k.Name, ts), func(t *testing.T) {
					t.Run("float32", func(t *testing.T) { conformance.TestDotLengths(t, dotWith[float32](opt), lengths) })
					t.Run("float64", func(t *testing.T) { conformance.TestDotLengths(t, dotWith[float64](opt), lengths) })
					t.Run("int32", func(t *testing.T) { conformance.TestDotLengths(t, dotWith[int32](opt), lengths) })
				})
			}
		}
	}
}

func mustView[T amp.Element](t *testing.T, ext amp.Extent) *amp.ArrayView[T] {
	t.Helper()
	v, err := amp.NewArrayView(ext, make([]T, ext.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestShapeErrors(t *testing.T) {
	m := func(r, c int) *amp.ArrayView[float32] { return mustView[float32](t, amp.Extent2(r, c)) }
	for _, c := range []struct {
		name    string
		a, b, c *amp.ArrayView[float32]
	}{
		{"inner dimensions", m(3, 4), m(5, 6), m(3, 6)},
		{"C rows", m(3, 4), m(4, 6), m(2, 6)},
		{"C columns", m(3, 4), m(4, 6), m(3, 5)},
		{"vector A", mustView[float32](t, amp.Extent1(4)), m(4, 6), m(3, 6)},
		{"rank-3 C", m(3, 4), m(4, 6), mustView[float32](t, amp.Extent3(3, 6, 1))},
	} {
		if err := linalg.MatMul(1, c.a, c.b, 0, c.c, nil); !errors.Is(err, linalg.ErrShape) {
			t.Errorf("%s: got %v, want ErrShape", c.name, err)
		}
	}
	b3 := func(n, r, c int) *amp.ArrayView[float32] { return mustView[float32](t, amp.Extent3(n, r, c)) }
	for _, c := range []struct {
		name           string
		transA, transB bool
		a, b, c        *amp.ArrayView[float32]
		want           string
	}{
		{"A^T's columns", true, false, m(3, 4), m(4, 6), m(4, 6), "A^T is 4x3 but B is 4x6"},
		{"B^T's rows", false, true, m(3, 4), m(4, 6), m(3, 4), "A is 3x4 but B^T is 6x4"},
		{"C for A^T*B^T", true, true, m(4, 3), m(5, 4), m(5, 3), "A^T*B^T is 3x5 but C is 5x3"},
		{"batch lengths", false, false, b3(2, 3, 4), b3(3, 4, 5), b3(2, 3, 5), "batches of 2, 3 and 2"},
		{"a matrix among batches", false, false, b3(2, 3, 4), m(4, 5), b3(2, 3, 5), "A is rank 3 but B is rank 2"},
		{"batched inner dimensions", false, false, b3(2, 3, 4), b3(2, 5, 5), b3(2, 3, 5), "A is 3x4 but B is 5x5"},
	} {
		err := linalg.MatMul(1, c.a, c.b, 0, c.c, &linalg.Options{TransA: c.transA, TransB: c.transB})
		if !errors.Is(err, linalg.ErrShape) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrShape saying %q", c.name, err, c.want)
		}
	}
	x, y := mustView[float64](t, amp.Extent1(3)), mustView[float64](t, amp.Extent1(4))
	if _, err := linalg.Dot(x, y, nil); !errors.Is(err, linalg.ErrShape) {
		t.Errorf("dot of lengths 3 and 4: got %v, want ErrShape", err)
	}
	if _, err := linalg.Dot(mustView[float64](t, amp.Extent2(1, 3)), x, nil); !errors.Is(err, linalg.ErrShape) {
		t.Errorf("dot of a matrix: got %v, want ErrShape", err)
	}
}

func TestOverlapAndNilErrors(t *testing.T) {
	data := make([]float32, 8)
	whole, _ := amp.NewArrayView(amp.Extent2(2, 4), data)
	left, _ := whole.Section(amp.Index2(0, 0), amp.Extent2(2, 2))
	right, _ := whole.Section(amp.Index2(0, 2), amp.Extent2(2, 2))
	other := mustView[float32](t, amp.Extent2(2, 2))
	overlapping, _ := whole.Section(amp.Index2(0, 1), amp.Extent2(2, 2))
	if err := linalg.MatMul(1, left, other, 0, overlapping, nil); !errors.Is(err, linalg.ErrOverlap) {
		t.Errorf("C sharing a column with A: got %v, want ErrOverlap", err)
	}
	// Side by side in one slice, sharing no element: allowed, and right,
	// with every kernel on every accelerator (on a GPU the two views share
	// one copy of the slice there).
	identity, _ := amp.NewArrayView(amp.Extent2(2, 2), []float32{1, 0, 0, 1})
	for _, v := range views() {
		for _, k := range linalg.Kernels(linalg.OpMatMul) {
			if k.Accelerator != v.Accelerator().Kind() || (len(k.Elements) > 0 && !slices.Contains(k.Elements, "float32")) {
				continue
			}
			copy(data, []float32{1, 2, 0, 0, 3, 4, 0, 0})
			whole.Refresh()
			name := v.Accelerator().Path() + "/" + k.Name
			if k.ExactTiles {
				// 2x2x2 is no multiple of its tile: refused, nothing written.
				if err := linalg.MatMul(2, left, identity, 0, right, &linalg.Options{Kernel: k.Name, View: v}); !errors.Is(err, linalg.ErrShape) {
					t.Errorf("%s: 2x2x2: %v, want ErrShape", name, err)
				}
				continue
			}
			opt := &linalg.Options{Kernel: k.Name, View: v}
			if len(k.Precisions) > 0 {
				opt.Precision = k.Precisions[0] // these small integers are exact in every one
			}
			if err := linalg.MatMul(2, left, identity, 0, right, opt); err != nil {
				t.Errorf("%s: C beside A in one slice: %v", name, err)
				continue
			}
			if err := right.Synchronize(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if want := []float32{1, 2, 2, 4, 3, 4, 6, 8}; !slices.Equal(data, want) {
				t.Errorf("%s: C beside A in one slice: data %v, want %v", name, data, want)
			}
		}
	}
	if err := linalg.MatMul(1, other, other, 0, left, nil); err != nil {
		t.Errorf("A and B the same view, C apart: %v", err)
	}
	if err := linalg.MatMul(1, nil, other, 0, left, nil); !errors.Is(err, linalg.ErrShape) {
		t.Errorf("nil A: got %v, want ErrShape", err)
	}
	if _, err := linalg.Dot(nil, mustView[float32](t, amp.Extent1(2)), nil); !errors.Is(err, linalg.ErrShape) {
		t.Errorf("nil x: got %v, want ErrShape", err)
	}
}

func TestOptionErrors(t *testing.T) {
	a, b, c := mustView[float32](t, amp.Extent2(2, 2)), mustView[float32](t, amp.Extent2(2, 2)), mustView[float32](t, amp.Extent2(2, 2))
	if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{Kernel: "quantum"}); !errors.Is(err, linalg.ErrUnknownKernel) {
		t.Errorf("unknown kernel: got %v", err)
	}
	for _, ts := range []int{-1, 33, 1000} {
		if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{Kernel: "tiled", Tile: ts}); !errors.Is(err, linalg.ErrTileSize) {
			t.Errorf("tile %d: got %v, want ErrTileSize", ts, err)
		}
	}
	x := mustView[float32](t, amp.Extent1(5))
	if _, err := linalg.Dot(x, x, &linalg.Options{Kernel: "tiled", Tile: 1025}); !errors.Is(err, linalg.ErrTileSize) {
		t.Errorf("dot tile 1025: got %v, want ErrTileSize", err)
	}
	// One rule for the library and the CLI: a tile size for a kernel that
	// has none is refused, not ignored; 0 is every kernel's default.
	cpu := amp.CPU().DefaultView()
	for _, k := range linalg.Kernels("") {
		if k.Accelerator != amp.KindCPU {
			continue
		}
		for _, ts := range []int{0, 8} {
			opt := &linalg.Options{Kernel: k.Name, Tile: ts, View: cpu}
			var err error
			if k.Op == linalg.OpMatMul {
				err = linalg.MatMul(1, a, b, 0, c, opt)
			} else {
				_, err = linalg.Dot(x, x, opt)
			}
			wantErr := ts != 0 && k.MaxTile == 0
			if wantErr != errors.Is(err, linalg.ErrTileSize) || (!wantErr && err != nil) {
				t.Errorf("%s %s with tile %d: got %v", k.Name, k.Op, ts, err)
			}
		}
	}
	if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{Tile: 8, View: cpu}); !errors.Is(err, linalg.ErrTileSize) {
		t.Errorf("auto (packed) with tile 8: got %v, want ErrTileSize", err)
	}
	// A view that belongs to no accelerator is an error, not a nil dereference.
	if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{View: &amp.AcceleratorView{}}); !errors.Is(err, amp.ErrNoAccelerator) {
		t.Errorf("zero AcceleratorView: got %v, want ErrNoAccelerator", err)
	}
	if _, err := linalg.Dot(x, x, &linalg.Options{View: &amp.AcceleratorView{}}); !errors.Is(err, amp.ErrNoAccelerator) {
		t.Errorf("zero AcceleratorView in Dot: got %v, want ErrNoAccelerator", err)
	}
	t.Setenv(amp.DeviceEnv, "nowhere:7")
	if err := linalg.MatMul(1, a, b, 0, c, nil); !errors.Is(err, amp.ErrNoAccelerator) {
		t.Errorf("GOAMP_DEVICE naming no device: got %v, want ErrNoAccelerator", err)
	}
}

// A reduced precision is a permission: the CPU's kernels, which have
// none, multiply exactly; it is refused for float64 and int32, and a
// precision that is none of the four is refused everywhere.
func TestPrecisionOptions(t *testing.T) {
	cpu := amp.CPU().DefaultView()
	a := mustView[float32](t, amp.Extent2(2, 3))
	b := mustView[float32](t, amp.Extent2(3, 2))
	for i := range 2 {
		for j := range 3 {
			a.Set2(i, j, 1+0x1p-20) // TF32 would round it to 1
			b.Set2(j, i, 1)
		}
	}
	c := mustView[float32](t, amp.Extent2(2, 2))
	if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{View: cpu, Precision: linalg.TF32}); err != nil {
		t.Fatal(err)
	}
	if got, want := c.At2(1, 1), float32(3*(1+0x1p-20)); got != want {
		t.Errorf("tf32 on the CPU: C[1][1] = %v, want the exact %v", got, want)
	}
	if k, _, err := linalg.Choose(linalg.OpMatMul, &linalg.Options{View: cpu, Precision: linalg.BF16}); err != nil || k.Name != "packed" {
		t.Errorf("auto with bf16 on the CPU: %q, %v; want packed", k.Name, err)
	}
	d := mustView[float64](t, amp.Extent2(2, 2))
	if err := linalg.MatMul(1, d, d, 0, mustView[float64](t, amp.Extent2(2, 2)), &linalg.Options{View: cpu, Precision: linalg.FP16}); !errors.Is(err, linalg.ErrPrecision) {
		t.Errorf("fp16 for float64: %v, want ErrPrecision", err)
	}
	if _, _, err := linalg.ChooseFor[int32](linalg.OpMatMul, &linalg.Options{View: cpu, Precision: linalg.TF32}); !errors.Is(err, linalg.ErrPrecision) {
		t.Errorf("ChooseFor(int32, tf32): %v, want ErrPrecision", err)
	}
	if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{View: cpu, Precision: "fp8"}); !errors.Is(err, linalg.ErrPrecision) {
		t.Errorf("fp8: %v, want ErrPrecision", err)
	}
	if err := linalg.MatMul(1, d, d, 0, mustView[float64](t, amp.Extent2(2, 2)), &linalg.Options{View: cpu, Precision: "EXACT"}); err != nil {
		t.Errorf("EXACT for float64: %v", err)
	}
	if _, err := linalg.Dot(mustView[float64](t, amp.Extent1(3)), mustView[float64](t, amp.Extent1(3)), &linalg.Options{View: cpu, Precision: linalg.TF32}); err != nil {
		t.Errorf("Dot ignores Precision: %v", err)
	}
}

func TestKernelsAreRegistered(t *testing.T) {
	names := map[string]bool{}
	for _, k := range linalg.Kernels(linalg.OpMatMul) {
		if k.Accelerator == amp.KindCPU {
			names[k.Name] = true
		}
	}
	for _, want := range []string{"naive", "simple", "tiled", "packed"} {
		if !names[want] {
			t.Errorf("no CPU matmul kernel %q", want)
		}
	}
}

// TestWalkthroughProducts checks the products of the C++ AMP
// "Walkthrough: Matrix Multiplication" on Microsoft Learn: the 3x2 by 2x3
// product of MultiplyWithOutAMP and MultiplyWithAMP, and element [0][0]
// (34) of MultiplyWithTiling's 4x4 product.
func TestWalkthroughProducts(t *testing.T) {
	a, _ := amp.NewArrayView(amp.Extent2(3, 2), []int32{1, 4, 2, 5, 3, 6})
	b, _ := amp.NewArrayView(amp.Extent2(2, 3), []int32{7, 8, 9, 10, 11, 12})
	prod := make([]int32, 9)
	c, _ := amp.NewArrayView(amp.Extent2(3, 3), prod)
	if err := linalg.MatMul(1, a, b, 0, c, &linalg.Options{Kernel: "simple", View: amp.CPU().DefaultView()}); err != nil {
		t.Fatal(err)
	}
	if want := []int32{47, 52, 57, 64, 71, 78, 81, 90, 99}; fmt.Sprint(prod) != fmt.Sprint(want) {
		t.Fatalf("3x2 times 2x3 = %v, want %v", prod, want)
	}
	m := []int32{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}
	a4, _ := amp.NewArrayView(amp.Extent2(4, 4), m)
	p4 := make([]int32, 16)
	c4, _ := amp.NewArrayView(amp.Extent2(4, 4), p4)
	if err := linalg.MatMul(1, a4, a4, 0, c4, &linalg.Options{Kernel: "tiled", Tile: 2, View: amp.CPU().DefaultView()}); err != nil {
		t.Fatal(err)
	}
	if p4[0] != 34 {
		t.Fatalf("MultiplyWithTiling's product[0][0] = %d, want 34", p4[0])
	}
}

// TestDotIsDeterministic checks that the tiled dot product's result depends
// only on the inputs and the tile size, not on how many cores run it.
func TestDotIsDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	x, y := reference.RandomSlice[float32](r, 100003), reference.RandomSlice[float32](r, 100003)
	xv, _ := amp.NewArrayView(amp.Extent1(len(x)), x)
	yv, _ := amp.NewArrayView(amp.Extent1(len(y)), y)
	opt := &linalg.Options{Kernel: "tiled", Tile: 96, View: amp.CPU().DefaultView()}
	var results []float32
	for _, procs := range []int{1, 2, 3, 8} {
		old := runtime.GOMAXPROCS(procs)
		d, err := linalg.Dot(xv, yv, opt)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, d)
	}
	for _, d := range results[1:] {
		if d != results[0] {
			t.Fatalf("dot products with GOMAXPROCS 1, 2, 3, 8: %v", results)
		}
	}
}

// TestGPUTileSizes: a GPU kernel compiled for fixed tiles refuses others up
// front, with ErrTileSize, before any work.
func TestGPUTileSizes(t *testing.T) {
	for _, k := range linalg.Kernels("") {
		if k.Accelerator != amp.KindCUDA || len(k.Tiles) == 0 {
			continue
		}
		if slices.Contains(k.Tiles, 3) {
			t.Errorf("%s %s accepts tile 3", k.Op, k.Name)
		}
	}
	gpu, err := amp.Find("cuda")
	if err != nil {
		t.Skipf("SKIP: no GPU here (%v); the registry checks above ran", err)
	}
	_, _, err = linalg.Choose(linalg.OpMatMul, &linalg.Options{Kernel: "tiled", Tile: 12, View: gpu.DefaultView()})
	if !errors.Is(err, linalg.ErrTileSize) {
		t.Errorf("tiled matmul with tile 12 on the GPU: got %v, want ErrTileSize", err)
	}
}

// TestGPUPresent says, visibly, when the conformance suite had no GPU to
// run the CUDA kernels on.
func TestGPUPresent(t *testing.T) {
	if err := amp.CUDAUnavailable(); err != nil {
		t.Skipf("SKIP: the CUDA kernels were not run (no CUDA accelerator: %v)", err)
	}
}
