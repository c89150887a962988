package linalg

import (
	"errors"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
)

// auto on a GPU picks by element type: dmma, which has float64 only, for
// float64, reg128 for the others; a kernel named for a type it lacks is
// refused with amp.ErrUnsupported. No GPU is needed: this reads the
// registry.
func TestFindKernelByElement(t *testing.T) {
	for _, c := range []struct {
		name, elem, want string
	}{
		{"auto", "float64", "dmma"},
		{"auto", "float32", "reg128"},
		{"auto", "int32", "reg128"},
		{"auto", "", "dmma"},
		{"dmma", "float64", "dmma"},
		{"dmma", "", "dmma"},
		{"reg128", "float64", "reg128"},
	} {
		k, err := findKernel(OpMatMul, c.name, amp.KindCUDA, c.elem)
		if err != nil || k.Name != c.want {
			t.Errorf("findKernel(matmul, %q, cuda, %q) = %q, %v; want %q", c.name, c.elem, k.Name, err, c.want)
		}
	}
	for _, elem := range []string{"float32", "int32"} {
		if k, err := findKernel(OpMatMul, "dmma", amp.KindCUDA, elem); !errors.Is(err, amp.ErrUnsupported) {
			t.Errorf("findKernel(matmul, dmma, cuda, %s) = %q, %v; want amp.ErrUnsupported", elem, k.Name, err)
		}
	}
	k, _ := findKernel(OpMatMul, "dmma", amp.KindCUDA, "")
	if len(k.Elements) != 1 || k.Elements[0] != "float64" || !k.takes("float64") || k.takes("float32") {
		t.Errorf("dmma's Elements = %v, want [float64]", k.Elements)
	}
	if k, _ := findKernel(OpMatMul, "reg128", amp.KindCUDA, ""); len(k.Elements) != 0 {
		t.Errorf("reg128's Elements = %v, want none (all three types)", k.Elements)
	}
}

// auto with a reduced precision on a GPU takes the kernel that multiplies
// in it (float32 only): wgmma on Hopper (9.0), mma on the others from
// Ampere on; with exact arithmetic it never does; mma named for exact
// arithmetic is refused.
func TestFindKernelByPrecision(t *testing.T) {
	withTMA(t, true)
	for _, c := range []struct {
		elem string
		prec Precision
		cc   int
		want string
	}{
		{"float32", TF32, 90, "wgmma"}, {"float32", BF16, 90, "wgmma"}, {"float32", FP16, 90, "wgmma"},
		{"float32", TF32, 80, "mma"}, {"float32", BF16, 86, "mma"}, {"float32", FP16, 100, "mma"}, {"float32", BF16, 120, "mma"},
		{"float32", Exact, 90, "reg128"}, {"float64", Exact, 90, "dmma"},
	} {
		if k, err := findKernelIn(OpMatMul, "auto", amp.KindCUDA, c.elem, c.prec, c.cc); err != nil || k.Name != c.want {
			t.Errorf("findKernelIn(auto, %s, %s, %d) = %q, %v; want %q", c.elem, c.prec, c.cc, k.Name, err, c.want)
		}
	}
	// wgmma is sm_90a code: other GPUs, older or newer, cannot run it.
	for _, cc := range []int{80, 89, 100} {
		if k, err := findKernelIn(OpMatMul, "wgmma", amp.KindCUDA, "float32", BF16, cc); !errors.Is(err, amp.ErrUnsupported) {
			t.Errorf("wgmma on %d: %q, %v; want amp.ErrUnsupported", cc, k.Name, err)
		}
	}
	if k, err := findKernelIn(OpMatMul, "wgmma", amp.KindCUDA, "float32", BF16, 90); err != nil || k.Name != "wgmma" {
		t.Errorf("wgmma on 9.0: %q, %v", k.Name, err)
	}
	if k, err := findKernelIn(OpMatMul, "mma", amp.KindCUDA, "float32", Exact, 90); !errors.Is(err, ErrPrecision) {
		t.Errorf("mma in exact arithmetic: %q, %v; want ErrPrecision", k.Name, err)
	}
	if k, err := findKernelIn(OpMatMul, "mma", amp.KindCUDA, "float64", TF32, 90); !errors.Is(err, amp.ErrUnsupported) {
		t.Errorf("mma for float64: %q, %v; want amp.ErrUnsupported", k.Name, err)
	}
	if k, err := findKernelIn(OpMatMul, "auto", amp.KindCPU, "float32", TF32, 0); err != nil || k.Name != "packed" {
		t.Errorf("auto with tf32 on the CPU: %q, %v; want packed", k.Name, err)
	}
}

// On a GPU older than Ampere (compute capability 7.5, a T4) auto passes
// the tensor-core kernels over, for float64 and for a reduced precision
// alike, and naming one is refused.
func TestFindKernelByComputeCapability(t *testing.T) {
	withTMA(t, true)
	for _, c := range []struct {
		elem string
		prec Precision
	}{{"float64", Exact}, {"float32", TF32}, {"float32", BF16}} {
		if k, err := findKernelIn(OpMatMul, "auto", amp.KindCUDA, c.elem, c.prec, 75); err != nil || k.Name != "reg128" {
			t.Errorf("auto for %s in %s on 7.5: %q, %v; want reg128", c.elem, c.prec, k.Name, err)
		}
	}
	for _, name := range []string{"dmma", "mma", "wgmma"} {
		if k, err := findKernelIn(OpMatMul, name, amp.KindCUDA, "", TF32, 75); !errors.Is(err, amp.ErrUnsupported) {
			t.Errorf("%s on 7.5: %q, %v; want amp.ErrUnsupported", name, k.Name, err)
		}
	}
	if k, err := findKernelIn(OpMatMul, "dmma", amp.KindCUDA, "float64", Exact, 80); err != nil || k.Name != "dmma" {
		t.Errorf("dmma on 8.0: %q, %v", k.Name, err)
	}
}

// auto's wgmma gives thin products it would pack to mma (packing would
// cost more than the multiply) and keeps the others, and every product it
// multiplies in place.
func TestAutoForShape(t *testing.T) {
	withTMA(t, true)
	w, err := findKernelIn(OpMatMul, "auto", amp.KindCUDA, "float32", BF16, 90)
	if err != nil || w.Name != "wgmma" {
		t.Fatalf("auto on 9.0 in bf16: %q, %v", w.Name, err)
	}
	for _, c := range []struct {
		m, n int
		want string
	}{
		{64, 8192, "mma"}, {8192, 64, "mma"}, {300, 300, "mma"}, {1, 1, "mma"},
		{1024, 1024, "wgmma"}, {8192, 8192, "wgmma"}, {512, 4096, "wgmma"}, {0, 10, "wgmma"},
	} {
		if got := autoForShape(w, c.m, c.n, false); got.Name != c.want {
			t.Errorf("autoForShape(wgmma, %d x %d) = %q, want %q", c.m, c.n, got.Name, c.want)
		}
		// With nothing to pack, wgmma keeps every shape.
		if got := autoForShape(w, c.m, c.n, true); got.Name != "wgmma" {
			t.Errorf("autoForShape(wgmma, %d x %d, in place) = %q, want wgmma", c.m, c.n, got.Name)
		}
	}
	r, _ := findKernelIn(OpMatMul, "auto", amp.KindCUDA, "float32", Exact, 90)
	if got := autoForShape(r, 64, 64, false); got.Name != r.Name {
		t.Errorf("autoForShape(%s, 64 x 64) = %q; only wgmma is revised", r.Name, got.Name)
	}
}

// tf32InPlace: which products wgmma multiplies with nothing packed, as
// gpu's wgmmaDirect decides, from the operands' layouts in MatMul's views.
func TestTF32InPlace(t *testing.T) {
	whole := func(ld int) operandLayout { return operandLayout{ld: ld} }
	for _, c := range []struct {
		name           string
		prec           Precision
		transA, transB bool
		a, b           operandLayout
		want           bool
	}{
		{"nn", TF32, false, false, whole(8192), whole(64), true},
		{"nt", TF32, false, true, whole(8192), whole(8192), true},
		{"tt", TF32, true, true, whole(64), whole(8192), true},
		{"tn", TF32, true, false, whole(64), whole(64), false},
		{"bf16", BF16, false, false, whole(8192), whole(64), false},
		{"exact", Exact, false, false, whole(8192), whole(64), false},
		{"rows of A off 16 bytes", TF32, false, false, whole(8191), whole(64), false},
		{"rows of B off 16 bytes", TF32, false, false, whole(8192), whole(66), false},
		{"a section's start off 16 bytes", TF32, false, false, operandLayout{offset: 2, ld: 64}, whole(64), false},
		{"a section on 16 bytes", TF32, false, false, operandLayout{offset: 8, ld: 64}, whole(64), true},
		{"batch", TF32, false, false, operandLayout{ld: 64, stride: 4096, many: true}, operandLayout{ld: 8, stride: 512, many: true}, true},
		{"batch, odd stride", TF32, false, false, operandLayout{ld: 64, stride: 4098, many: true}, whole(8), false},
		{"batch, one B for all", TF32, false, false, whole(64), operandLayout{ld: 8, many: true}, false},
	} {
		if got := tf32InPlace(c.prec, c.transA, c.transB, c.a, c.b); got != c.want {
			t.Errorf("%s: tf32InPlace = %v, want %v", c.name, got, c.want)
		}
	}
	// The layouts MatMul reads off its views: a whole batch, and a section.
	data := make([]float32, 3*64*72)
	v, err := amp.NewArrayView(amp.Extent3(3, 64, 72), data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := layoutOf(v, true), (operandLayout{ld: 72, stride: 64 * 72, many: true}); got != want {
		t.Errorf("layoutOf(3 x 64 x 72) = %+v, want %+v", got, want)
	}
	m, err := amp.NewArrayView(amp.Extent2(64, 72), data)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := m.Section(amp.Index2(1, 2), amp.Extent2(8, 8))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := layoutOf(sec, false), (operandLayout{offset: 74, ld: 72}); got != want {
		t.Errorf("layoutOf(a section from (1, 2)) = %+v, want %+v", got, want)
	}
}

// withTMA makes the driver's TMA support have for the test (the choice
// asks the driver, which a machine without a GPU lacks).
func withTMA(t *testing.T, have bool) {
	old := haveTMA
	haveTMA = func() bool { return have }
	t.Cleanup(func() { haveTMA = old })
}

// Under a driver without TMA descriptors auto passes wgmma over for mma,
// and naming it is refused; a 9.0-only kernel names its one capability.
func TestFindKernelWithoutTMA(t *testing.T) {
	withTMA(t, false)
	if k, err := findKernelIn(OpMatMul, "auto", amp.KindCUDA, "float32", BF16, 90); err != nil || k.Name != "mma" {
		t.Errorf("auto on 9.0 without TMA: %q, %v; want mma", k.Name, err)
	}
	if k, err := findKernelIn(OpMatMul, "wgmma", amp.KindCUDA, "float32", BF16, 90); !errors.Is(err, amp.ErrUnsupported) {
		t.Errorf("wgmma without TMA: %q, %v; want amp.ErrUnsupported", k.Name, err)
	}
	withTMA(t, true)
	_, err := findKernelIn(OpMatMul, "wgmma", amp.KindCUDA, "float32", BF16, 80)
	if err == nil || !strings.Contains(err.Error(), "compute capability 9.0 only") {
		t.Errorf("wgmma on 8.0: %v; want it to name 9.0 alone", err)
	}
}
