package cuda

import (
	"errors"
	"testing"
)

// A TensorMap is passed whole (128 bytes, where other arguments take an
// 8-byte slot), from memory aligned as the kernel's parameter is.
func TestPackArgsTensorMap(t *testing.T) {
	var m TensorMap
	for i := range m.raw {
		m.raw[i] = uint64(i + 1)
	}
	a, err := PackArgs(int32(7), m, float32(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.params) != 3 {
		t.Fatalf("%d params, want 3", len(a.params))
	}
	p := a.params[1]
	if uintptr(p)%64 != 0 {
		t.Errorf("tensor map argument at %p, want 64-byte alignment", p)
	}
	if got := *(*[16]uint64)(p); got != m.raw {
		t.Errorf("tensor map argument holds %v, want %v", got, m.raw)
	}
	if got := *(*int32)(a.params[0]); got != 7 {
		t.Errorf("first argument %d, want 7", got)
	}
}

// EncodeTensorMap refuses a box wider than the swizzle before asking the
// driver, works on a GPU with CUDA 12.0 or newer, and passes the driver's
// refusals on as errors.
func TestEncodeTensorMap(t *testing.T) {
	ctx, _ := gpu(t)
	if _, err := ctx.EncodeTensorMap(TensorMapFloat32, 0, [3]uint64{64, 64, 1}, [2]uint64{256, 256 * 64}, [3]uint32{64, 64, 1}); err == nil {
		t.Error("a box of 64 float32 (256 bytes) was taken; the 128-byte swizzle holds 32")
	}
	p, err := ctx.Alloc(64 * 64 * 2)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(p)
	_, err = ctx.EncodeTensorMap(TensorMapBFloat16, p, [3]uint64{64, 64, 1}, [2]uint64{128, 128 * 64}, [3]uint32{64, 64, 1})
	if errors.Is(err, ErrNoTMA) {
		t.Skipf("SKIP: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// A row stride that is not a multiple of 16 bytes is the driver's to refuse.
	if _, err := ctx.EncodeTensorMap(TensorMapBFloat16, p, [3]uint64{60, 64, 1}, [2]uint64{120, 120 * 64}, [3]uint32{64, 64, 1}); err == nil {
		t.Error("a row stride of 120 bytes was taken")
	}
}
