package amp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/gpu"
)

// firstGPU returns the first CUDA accelerator, or skips with the reason.
func firstGPU(t *testing.T) *Accelerator {
	t.Helper()
	if err := CUDAUnavailable(); err != nil {
		t.Skipf("SKIP: no CUDA accelerator: %v", err)
	}
	a, err := Find("cuda")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCUDAAcceleratorListed(t *testing.T) {
	a := firstGPU(t)
	if a.Kind() != KindCUDA || a.Path() != "cuda:0" || a.Description() == "" {
		t.Errorf("first GPU: %s %v %q", a.Path(), a.Kind(), a.Description())
	}
	props := map[string]string{}
	for _, p := range a.Properties() {
		props[p.Name] = p.Value
	}
	for _, want := range []string{"compute capability", "multiprocessors", "memory", "shared memory"} {
		if props[want] == "" {
			t.Errorf("no %q property (have %v)", want, props)
		}
	}
	if auto, _ := Find("auto"); auto != a {
		t.Errorf("auto picked %s, want the GPU", auto.Path())
	}
}

// TestCUDARoundTrip: a view goes to the device for a kernel that reads and
// writes it; from then on the device copy is the current one, so
// Synchronize brings it home over whatever the host slice holds.
func TestCUDARoundTrip(t *testing.T) {
	a := firstGPU(t)
	data := []float32{1, 2, 3, 4, 5, 6}
	v, _ := NewArrayView(Extent2(2, 3), data)
	if _, _, err := v.DeviceMatrix(a.DefaultView(), AccessReadWrite); err != nil {
		t.Fatal(err)
	}
	data[0] = 99 // behind the view's back: the device copy is what counts now
	if err := v.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if data[0] != 1 {
		t.Errorf("after Synchronize the host has %v, want the device's 1", data[0])
	}
	if err := v.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestCUDAOutOfMemory: a view larger than the GPU's memory fails with
// ErrOutOfMemory, naming what was needed and what is free, and the device
// keeps working.
func TestCUDAOutOfMemory(t *testing.T) {
	a := firstGPU(t)
	huge := make([]float32, (80<<30)/4+(8<<30)/4) // 88 GiB, never touched on the host
	v, _ := NewArrayView(Extent1(len(huge)), huge)
	_, err := v.DeviceVector(a.DefaultView(), AccessWrite)
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "needed") || !strings.Contains(err.Error(), "free") {
		t.Fatalf("88 GiB view: got %v, want ErrOutOfMemory naming needed and free", err)
	}
	t.Log(err)
	small, _ := NewArrayView(Extent1(4), []float32{1, 2, 3, 4})
	if _, err := small.DeviceVector(a.DefaultView(), AccessRead); err != nil {
		t.Fatalf("a small view after the failure: %v", err)
	}
}

// TestCUDAPinnedRoundTrip: a view of pinMinBytes or more is page-locked on
// its first copy and copies the same bytes as a pageable one; a second
// view of the same slice cannot lock it again and copies through pageable
// memory; Release unlocks.
func TestCUDAPinnedRoundTrip(t *testing.T) {
	a := firstGPU(t)
	n := pinMinBytes/4 + 1001 // float32s: just over the threshold, not a whole page
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(i)
	}
	before := pinnedBytes.Load()
	v, _ := NewArrayView(Extent1(n), data)
	if _, err := v.DeviceVector(a.DefaultView(), AccessReadWrite); err != nil {
		t.Fatal(err)
	}
	if v.buf.pin == nil || pinnedBytes.Load() != before+int64(4*n) {
		t.Fatalf("after the upload: pin %v, %d bytes locked (was %d); want the view's %d locked", v.buf.pin, pinnedBytes.Load(), before, 4*n)
	}
	other, _ := NewArrayView(Extent1(n), data)
	if _, err := other.DeviceVector(a.DefaultView(), AccessRead); err != nil {
		t.Fatalf("a second view of the locked slice: %v", err)
	}
	if other.buf.pin != nil {
		t.Error("the second view locked the slice again")
	}
	for i := range data {
		data[i] = -1 // behind both views' backs: the device copy of v is what counts
	}
	if err := v.Synchronize(); err != nil {
		t.Fatal(err)
	}
	for i, x := range data {
		if x != float32(i) {
			t.Fatalf("after Synchronize data[%d] = %v, want %d", i, x, i)
		}
	}
	if err := v.Release(); err != nil {
		t.Fatal(err)
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	if v.buf.pin != nil || pinnedBytes.Load() != before {
		t.Errorf("after Release: pin %v, %d bytes locked; want none, %d", v.buf.pin, pinnedBytes.Load(), before)
	}
}

// TestCUDAViewsRunConcurrently: two views of one GPU are two queues: work
// queued on both runs at once, the calls that queue it return at once,
// and Wait waits for each view's own work.
func TestCUDAViewsRunConcurrently(t *testing.T) {
	a := firstGPU(t)
	dev, err := gpu.Open(a.Ordinal())
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 := a.NewView(), a.NewView()
	if err := v1.Wait(); err != nil { // nothing queued yet
		t.Fatalf("Wait on a fresh view: %v", err)
	}
	s1, err := v1.cudaStream()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := v2.cudaStream()
	if err != nil {
		t.Fatal(err)
	}
	if s1 == s2 || s1.Handle() == s2.Handle() {
		t.Fatal("two views share a stream")
	}
	// Load the spin kernel (a JIT of its PTX) before the clock starts.
	if err := dev.SpinOn(s1, 0); err != nil {
		t.Fatal(err)
	}
	if err := v1.Wait(); err != nil {
		t.Fatal(err)
	}
	const spin = 200 * time.Millisecond
	start := time.Now()
	if err := dev.SpinOn(s1, spin); err != nil {
		t.Fatal(err)
	}
	if err := dev.SpinOn(s2, spin); err != nil {
		t.Fatal(err)
	}
	if queued := time.Since(start); queued > spin/4 {
		t.Errorf("queueing took %v: the views waited for their work", queued)
	}
	if err := v1.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := v2.Wait(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < spin*9/10 {
		t.Errorf("Wait returned after %v, before the %v of work was done", took, spin)
	}
	if took > spin*3/2 {
		t.Errorf("two %v spins on two views took %v: they ran one after the other", spin, took)
	}
}
