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
