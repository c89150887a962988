package linalg

import (
	"errors"
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
// in it (mma, float32 only); with exact arithmetic it never does; mma named
// for exact arithmetic is refused.
func TestFindKernelByPrecision(t *testing.T) {
	for _, c := range []struct {
		elem string
		prec Precision
		want string
	}{
		{"float32", TF32, "mma"}, {"float32", BF16, "mma"}, {"float32", FP16, "mma"},
		{"float32", Exact, "reg128"}, {"float64", Exact, "dmma"},
	} {
		if k, err := findKernelIn(OpMatMul, "auto", amp.KindCUDA, c.elem, c.prec); err != nil || k.Name != c.want {
			t.Errorf("findKernelIn(auto, %s, %s) = %q, %v; want %q", c.elem, c.prec, k.Name, err, c.want)
		}
	}
	if k, err := findKernelIn(OpMatMul, "mma", amp.KindCUDA, "float32", Exact); !errors.Is(err, ErrPrecision) {
		t.Errorf("mma in exact arithmetic: %q, %v; want ErrPrecision", k.Name, err)
	}
	if k, err := findKernelIn(OpMatMul, "mma", amp.KindCUDA, "float64", TF32); !errors.Is(err, amp.ErrUnsupported) {
		t.Errorf("mma for float64: %q, %v; want amp.ErrUnsupported", k.Name, err)
	}
	if k, err := findKernelIn(OpMatMul, "auto", amp.KindCPU, "float32", TF32); err != nil || k.Name != "packed" {
		t.Errorf("auto with tf32 on the CPU: %q, %v; want packed", k.Name, err)
	}
}
