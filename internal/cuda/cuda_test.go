package cuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// kernelsPTX is hand-written PTX (ISA 7.0 for sm_52, which every driver
// since CUDA 11 JIT-compiles for newer GPUs), so the tests need no nvcc.
//
//	add_one(float *p, int n):            p[i] += 1 for i < n
//	twice_via_shared(float *p, int n):   p[i] *= 2 through dynamic shared
//	                                     memory at byte offset 60 KiB
//	poke(unsigned *addr):                *addr = 1 (for the fault test)
const kernelsPTX = `
.version 7.0
.target sm_52
.address_size 64

.extern .shared .align 16 .b8 smem[];

.visible .entry add_one(
	.param .u64 add_one_p,
	.param .u32 add_one_n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<3>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [add_one_p];
	ld.param.u32 %r1, [add_one_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra ADD_DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.s32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	add.f32 %f2, %f1, 0f3F800000;
	st.global.f32 [%rd4], %f2;
ADD_DONE:
	ret;
}

.visible .entry twice_via_shared(
	.param .u64 tw_p,
	.param .u32 tw_n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<9>;
	.reg .f32 %f<3>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [tw_p];
	ld.param.u32 %r1, [tw_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra TW_DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.s32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	mov.u32 %r6, smem;
	shl.b32 %r7, %r4, 2;
	add.s32 %r8, %r6, %r7;
	add.s32 %r8, %r8, 61440;
	st.shared.f32 [%r8], %f1;
	ld.volatile.shared.f32 %f2, [%r8];
	add.f32 %f2, %f2, %f2;
	st.global.f32 [%rd4], %f2;
TW_DONE:
	ret;
}

.visible .entry poke(
	.param .u64 poke_addr
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;

	ld.param.u64 %rd1, [poke_addr];
	mov.u32 %r1, 1;
	st.global.u32 [%rd1], %r1;
	ret;
}
`

// brokenPTX uses a register it never declares: ptxas rejects it, and
// the JIT log names the line.
const brokenPTX = `
.version 7.0
.target sm_52
.address_size 64

.visible .entry broken(
	.param .u64 broken_p
)
{
	.reg .b64 %rd<2>;

	ld.param.u64 %rd1, [broken_p];
	st.global.f32 [%rd1], %f_never_declared;
	ret;
}
`

// Tests that need no GPU.

func TestErrorText(t *testing.T) {
	e := &Error{Op: "cuMemAlloc", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Message: "out of memory"}
	if got, want := e.Error(), "cuda: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("growing buffer: %w", e)
	if !errors.Is(wrapped, ErrOutOfMemory) {
		t.Error("wrapped out-of-memory error does not match ErrOutOfMemory")
	}
	if errors.Is(wrapped, ErrContextLost) || errors.Is(wrapped, ErrNoDriver) {
		t.Error("out-of-memory error matches an unrelated sentinel")
	}
	for _, code := range []int{700, 702, 710, 714, 715, 716, 717, 718, 719, 721, 999} {
		if !errors.Is(&Error{Code: code}, ErrContextLost) {
			t.Errorf("code %d does not match ErrContextLost", code)
		}
	}
	for _, code := range []int{1, 2, 200, 218, 500, 701} {
		if errors.Is(&Error{Code: code}, ErrContextLost) {
			t.Errorf("code %d matches ErrContextLost", code)
		}
	}
	if !errors.Is(&Error{Code: 100}, ErrNoDevice) || !errors.Is(&Error{Code: 35}, ErrNoDriver) {
		t.Error("no-device / insufficient-driver codes are not classified")
	}
	e = newErrorWith(nil, "cuFoo", 12345)
	if got, want := e.Error(), "cuda: cuFoo: CUresult(12345) (unrecognized error code)"; got != want {
		t.Errorf("fallback Error() = %q, want %q", got, want)
	}
	e = &Error{Op: "cuModuleLoadDataEx", Code: 218, Name: "CUDA_ERROR_INVALID_PTX", Message: "a PTX JIT compilation failed", Log: "ptxas fatal: x"}
	if !strings.HasSuffix(e.Error(), "\nptxas fatal: x") {
		t.Errorf("JIT log missing from %q", e.Error())
	}
}

func TestPackArgs(t *testing.T) {
	a, err := PackArgs(int32(-2), uint32(3), int64(-4), uint64(5), float32(1.5), float64(-2.25), DevicePtr(0xdeadbeef00))
	if err != nil {
		t.Fatal(err)
	}
	slots, params := a.slots, a.params
	if len(params) != 7 || params[3] != unsafe.Pointer(&slots[3]) {
		t.Fatal("params do not point at their slots")
	}
	if *(*int32)(params[0]) != -2 || *(*uint32)(params[1]) != 3 || *(*int64)(params[2]) != -4 ||
		*(*uint64)(params[3]) != 5 || *(*float32)(params[4]) != 1.5 || *(*float64)(params[5]) != -2.25 ||
		*(*uint64)(params[6]) != 0xdeadbeef00 {
		t.Errorf("slots hold the wrong values: %x", slots)
	}
	if _, err := PackArgs(DevicePtr(1), 7); err == nil || !strings.Contains(err.Error(), "argument 1 has type int") {
		t.Errorf("int argument: err = %v, want a refusal naming argument 1", err)
	}
	if a, err := PackArgs(); err != nil || a.slots != nil || a.params != nil {
		t.Error("no arguments should give nil arrays")
	}
}

func TestModuleImage(t *testing.T) {
	ptx := []byte(".version 7.0")
	img := moduleImage(ptx)
	if len(img) != len(ptx)+1 || img[len(ptx)] != 0 || len(ptx) != 12 {
		t.Errorf("PTX not NUL-terminated in a copy: %q", img)
	}
	if img := moduleImage([]byte("x\x00")); len(img) != 2 {
		t.Errorf("terminated PTX changed: %q", img)
	}
	elf := []byte("\x7fELF\x02\x01")
	if img := moduleImage(elf); len(img) != len(elf) {
		t.Error("cubin changed")
	}
	fatbin := []byte{0x50, 0xed, 0x55, 0xba, 1, 0}
	if img := moduleImage(fatbin); len(img) != len(fatbin) {
		t.Error("fatbin changed")
	}
}

// Tests that need a GPU. They share one retained primary context, as a
// program would: retaining and releasing it per test would destroy and
// rebuild it (and its JIT work) each time.

var (
	sharedOnce sync.Once
	sharedCtx  *Context
	sharedErr  error
	sharedMod  *Module
)

// gpu returns the shared context and kernel module, or skips the test
// with the reason there is no GPU.
func gpu(t *testing.T) (*Context, *Module) {
	t.Helper()
	sharedOnce.Do(func() {
		if sharedErr = Init(); sharedErr != nil {
			return
		}
		var d Device
		if d, sharedErr = GetDevice(0); sharedErr != nil {
			return
		}
		if sharedCtx, sharedErr = d.PrimaryContext(); sharedErr != nil {
			return
		}
		sharedMod, sharedErr = sharedCtx.LoadModule([]byte(kernelsPTX))
	})
	if errors.Is(sharedErr, ErrNoDriver) || errors.Is(sharedErr, ErrNoDevice) {
		t.Skipf("no CUDA GPU here: %v", sharedErr)
	}
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedCtx, sharedMod
}

func fn(t *testing.T, m *Module, name string) *Function {
	t.Helper()
	f, err := m.Function(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// blocks is the grid size covering n elements with blocks of bs threads.
func blocks(n, bs int) [3]uint32 { return [3]uint32{uint32((n + bs - 1) / bs), 1, 1} }

func TestInitWithoutGPU(t *testing.T) {
	err := Init()
	if err == nil {
		t.Skip("a CUDA driver is present; nothing to check here")
	}
	if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) {
		t.Errorf("Init() = %v, want an error matching ErrNoDriver or ErrNoDevice", err)
	}
	if _, err2 := DeviceCount(); err2 == nil {
		t.Error("DeviceCount succeeded after Init failed")
	}
	t.Logf("Init: %v", err)
}

func TestDevices(t *testing.T) {
	gpu(t)
	v, err := DriverVersion()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("driver supports CUDA %d.%d; %d device(s)", v/1000, v%1000/10, len(ds))
	for _, d := range ds {
		p, err := d.Properties()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("device %d: %s", d.Ordinal, p)
		type fields Properties // without the String method
		t.Logf("  %+v", fields(p))
		if p.ComputeMajor < 5 || p.WarpSize != 32 || p.MultiProcessors <= 0 || p.MaxThreadsPerBlock < 512 ||
			p.TotalMemory <= 0 || p.SharedMemoryPerBlock <= 0 || p.MaxSharedMemoryPerBlockOptin < p.SharedMemoryPerBlock {
			t.Errorf("implausible properties: %+v", p)
		}
	}
	if _, err := GetDevice(len(ds) + 7); !errors.Is(err, ErrNoDevice) {
		t.Errorf("GetDevice(out of range) = %v, want ErrNoDevice", err)
	}
}

func TestRetainRelease(t *testing.T) {
	ctx, _ := gpu(t)
	c2, err := ctx.Device().PrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	if c2.Handle() != ctx.Handle() {
		t.Error("the primary context has two handles")
	}
	if err := c2.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c2.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if _, err := c2.Alloc(16); !errors.Is(err, ErrReleased) {
		t.Errorf("Alloc after Release = %v, want ErrReleased", err)
	}
	if _, err := ctx.Alloc(16); err != nil { // the other reference still works
		t.Fatal(err)
	}
}

func TestMemoryRoundTrip(t *testing.T) {
	ctx, _ := gpu(t)
	const n = 1 << 20
	a, err := ctx.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(a)
	b, err := ctx.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(b)

	if err := ctx.Memset(a, 0xAB, n); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := ctx.CopyDtoH(unsafe.Pointer(&got[0]), a, n); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 0xAB {
			t.Fatalf("after Memset byte %d = %#x", i, v)
		}
	}

	src := make([]float32, n/4)
	for i := range src {
		src[i] = float32(i)*0.5 - 7
	}
	if err := CopySliceHtoD(ctx, a, src); err != nil {
		t.Fatal(err)
	}
	if err := ctx.CopyDtoD(b.Offset(8), a, n-8); err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, n/4)
	if err := CopySliceDtoH(ctx, dst, b); err != nil {
		t.Fatal(err)
	}
	for i := 2; i < len(dst); i++ {
		if dst[i] != src[i-2] {
			t.Fatalf("dst[%d] = %v, want %v", i, dst[i], src[i-2])
		}
	}
	free, total, err := ctx.MemInfo()
	if err != nil || free <= 0 || free > total {
		t.Fatalf("MemInfo = %d, %d, %v", free, total, err)
	}
	t.Logf("MemInfo: %.2f GiB free of %.2f GiB", float64(free)/(1<<30), float64(total)/(1<<30))
	if _, err := ctx.Alloc(-1); err == nil {
		t.Error("Alloc(-1) succeeded")
	}
}

func TestAsyncPinned(t *testing.T) {
	ctx, _ := gpu(t)
	const n = 4 << 20
	in, err := ctx.AllocHost(n)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ctx.AllocHost(n)
	if err != nil {
		t.Fatal(err)
	}
	xs := HostSlice[uint32](in)
	if len(xs) != n/4 || len(in.Bytes()) != n || in.Len() != n {
		t.Fatalf("views: %d elements, %d bytes", len(xs), len(in.Bytes()))
	}
	for i := range xs {
		xs[i] = uint32(i) * 2654435761
	}
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	d, err := ctx.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Memset(d, 0, n); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyHtoD(d, in.Ptr(), n); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyDtoH(out.Ptr(), d, n); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if done, err := s.Done(); !done || err != nil {
		t.Errorf("Done after Synchronize = %v, %v", done, err)
	}
	ys := HostSlice[uint32](out)
	for i := range ys {
		if ys[i] != xs[i] {
			t.Fatalf("element %d: %d, want %d", i, ys[i], xs[i])
		}
	}
	if err := ctx.Free(d); err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); !errors.Is(err, ErrReleased) {
		t.Errorf("Synchronize after Destroy = %v", err)
	}
	if err := in.Free(); err != nil {
		t.Fatal(err)
	}
	if err := in.Free(); !errors.Is(err, ErrReleased) || in.Bytes() != nil {
		t.Errorf("second Free = %v", err)
	}
	out.Free()
}

func TestLaunchAndEventTiming(t *testing.T) {
	ctx, mod := gpu(t)
	f := fn(t, mod, "add_one")
	if regs, err := f.Attribute(FuncNumRegs); err != nil || regs <= 0 {
		t.Errorf("NumRegs = %d, %v", regs, err)
	}
	bin, _ := f.Attribute(FuncBinaryVersion)
	maxT, _ := f.Attribute(FuncMaxThreadsPerBlock)
	t.Logf("add_one: SASS sm_%d, max %d threads/block; JIT info log %q", bin, maxT, mod.JITLog())

	const n = 1000 // not a multiple of the block size
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	d, err := ctx.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(d)
	if err := CopySliceHtoD(ctx, d, x); err != nil {
		t.Fatal(err)
	}
	if err := f.Launch(blocks(n, 128), [3]uint32{128, 1, 1}, 0, nil, d, int32(n)); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, n+1)
	y[n] = -1 // the kernel must not write past n
	if err := CopySliceDtoH(ctx, y[:n], d); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if y[i] != x[i]+1 {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], x[i]+1)
		}
	}

	// Timing: 10 launches over 16M floats between two events on a stream.
	const big = 16 << 20
	db, err := ctx.Alloc(4 * big)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(db)
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	start, err := ctx.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer start.Destroy()
	end, err := ctx.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer end.Destroy()
	if err := s.Memset(db, 0, 4*big); err != nil {
		t.Fatal(err)
	}
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	const reps = 10
	for i := 0; i < reps; i++ {
		if err := f.Launch(blocks(big, 256), [3]uint32{256, 1, 1}, 0, s, db, int32(big)); err != nil {
			t.Fatal(err)
		}
	}
	if err := end.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if done, err := end.Done(); !done || err != nil {
		t.Errorf("event Done = %v, %v", done, err)
	}
	ms, err := ElapsedMillis(start, end)
	if err != nil {
		t.Fatal(err)
	}
	if ms <= 0 {
		t.Errorf("elapsed %v ms", ms)
	}
	t.Logf("%d x add_one over %d floats: %.3f ms (%.0f GB/s read+write)", reps, big, ms, float64(reps*8*big)/(float64(ms)*1e6))
	tail := make([]float32, 4)
	if err := ctx.CopyDtoH(unsafe.Pointer(&tail[0]), db.Offset(4*(big-4)), 16); err != nil {
		t.Fatal(err)
	}
	for _, v := range tail {
		if v != reps {
			t.Fatalf("after %d launches tail = %v", reps, tail)
		}
	}

	if _, err := mod.Function("no_such_kernel"); err == nil || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Errorf("missing function: %v", err)
	}
	if err := f.Launch(blocks(n, 128), [3]uint32{128, 1, 1}, 0, nil, d, n); err == nil {
		t.Error("launch with an int argument succeeded")
	}
}

func TestDynamicSharedMemory(t *testing.T) {
	ctx, _ := gpu(t)
	// A module of its own: the opt-in below sticks to the function, and the
	// test must start without it (also under -count=N).
	mod, err := ctx.LoadModule([]byte(kernelsPTX))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Unload()
	f := fn(t, mod, "twice_via_shared")
	const n, bs, smem = 4096, 256, 64 << 10
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i) + 0.25
	}
	d, err := ctx.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Free(d)
	if err := CopySliceHtoD(ctx, d, x); err != nil {
		t.Fatal(err)
	}
	// Over 48 KiB without opting in: refused at launch, context unharmed.
	err = f.Launch(blocks(n, bs), [3]uint32{bs, 1, 1}, smem, nil, d, int32(n))
	if err == nil {
		t.Fatal("64 KiB of dynamic shared memory accepted without SetMaxDynamicSharedMemory")
	}
	t.Logf("without opt-in: %v", err)
	if ctx.Err() != nil {
		t.Fatalf("a refused launch lost the context: %v", ctx.Err())
	}
	if err := f.SetMaxDynamicSharedMemory(smem); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Attribute(FuncMaxDynamicSharedSizeBytes); err != nil || got != smem {
		t.Errorf("MaxDynamicSharedSizeBytes = %d, %v", got, err)
	}
	if err := f.Launch(blocks(n, bs), [3]uint32{bs, 1, 1}, smem, nil, d, int32(n)); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, n)
	if err := CopySliceDtoH(ctx, y, d); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if y[i] != 2*x[i] {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], 2*x[i])
		}
	}
}

func TestOutOfMemory(t *testing.T) {
	ctx, _ := gpu(t)
	_, total, err := ctx.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ctx.Alloc(4 * total)
	if err == nil {
		ctx.Free(p)
		t.Fatalf("allocating %d bytes (4x the device) succeeded", 4*total)
	}
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("err = %v, want ErrOutOfMemory", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != 2 || e.Op != "cuMemAlloc" {
		t.Errorf("err = %#v", err)
	}
	t.Logf("Alloc(%d): %v", 4*total, err)
	if ctx.Err() != nil {
		t.Fatalf("out of memory lost the context: %v", ctx.Err())
	}
	q, err := ctx.Alloc(1 << 20)
	if err != nil {
		t.Fatalf("small Alloc after out of memory: %v", err)
	}
	if err := ctx.Free(q); err != nil {
		t.Fatal(err)
	}
}

func TestBrokenPTX(t *testing.T) {
	ctx, _ := gpu(t)
	m, err := ctx.LoadModule([]byte(brokenPTX))
	if err == nil {
		m.Unload()
		t.Fatal("broken PTX loaded")
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	if e.Log == "" || !strings.Contains(err.Error(), e.Log) {
		t.Errorf("error carries no JIT log: %q", err)
	}
	if !strings.Contains(e.Log, "f_never_declared") && !strings.Contains(strings.ToLower(e.Log), "error") {
		t.Errorf("JIT log does not explain the failure: %q", e.Log)
	}
	t.Logf("load error:\n%v", err)
	if ctx.Err() != nil {
		t.Fatalf("a failed load lost the context: %v", ctx.Err())
	}
	// A module can be loaded and unloaded; its functions then refuse.
	m, err = ctx.LoadModule([]byte(kernelsPTX))
	if err != nil {
		t.Fatal(err)
	}
	f := fn(t, m, "add_one")
	if err := m.Unload(); err != nil {
		t.Fatal(err)
	}
	if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil, DevicePtr(0), int32(0)); !errors.Is(err, ErrReleased) {
		t.Errorf("launch after Unload = %v, want ErrReleased", err)
	}
}

func TestDo(t *testing.T) {
	ctx, _ := gpu(t)
	err := ctx.Do(func() error {
		p, err := ctx.Alloc(256) // methods nest inside Do
		if err != nil {
			return err
		}
		return ctx.Free(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := errors.New("from f")
	if err := ctx.Do(func() error { return want }); err != want {
		t.Errorf("Do returned %v, want f's error", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx, mod := gpu(t)
	f := fn(t, mod, "add_one")
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- func() error {
				s := ctx.DefaultStream() // odd workers use the default stream
				if w%2 == 0 {
					var err error
					if s, err = ctx.NewStream(); err != nil {
						return err
					}
					defer s.Destroy()
				}
				for r := 0; r < rounds; r++ {
					n := 1000 + 4099*w + 37*r
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(w*100000 + i)
					}
					d, err := ctx.Alloc(4 * n)
					if err != nil {
						return err
					}
					if err := CopySliceHtoD(ctx, d, x); err != nil {
						return err
					}
					k := 1 + r%3
					for j := 0; j < k; j++ {
						if err := f.Launch(blocks(n, 256), [3]uint32{256, 1, 1}, 0, s, d, int32(n)); err != nil {
							return err
						}
					}
					y := make([]float32, n)
					if err := s.CopyDtoH(unsafe.Pointer(&y[0]), d, 4*n); err != nil { // pageable: returns when done
						return err
					}
					if err := s.Synchronize(); err != nil {
						return err
					}
					for i := range y {
						if y[i] != x[i]+float32(k) {
							return fmt.Errorf("worker %d round %d: y[%d] = %v, want %v", w, r, i, y[i], x[i]+float32(k))
						}
					}
					if err := ctx.Free(d); err != nil {
						return err
					}
				}
				return nil
			}()
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestContextLost faults a kernel on purpose. That ruins the context for
// the rest of the process, so it runs in a child process: this test binary
// again, with CUDA_TEST_FAULT_CHILD=1.
func TestContextLost(t *testing.T) {
	ctx, mod := gpu(t)
	if os.Getenv("CUDA_TEST_FAULT_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestContextLost$", "-test.v")
		cmd.Env = append(os.Environ(), "CUDA_TEST_FAULT_CHILD=1")
		out, err := cmd.CombinedOutput()
		t.Logf("child:\n%s", out)
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		if !strings.Contains(string(out), "--- PASS: TestContextLost") {
			t.Fatal("child did not pass")
		}
		return
	}
	f := fn(t, mod, "poke")
	if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil, DevicePtr(16)); err != nil {
		t.Fatalf("launch: %v", err) // the fault comes later
	}
	err := ctx.Synchronize()
	if !errors.Is(err, ErrContextLost) {
		t.Fatalf("Synchronize after a faulting kernel = %v, want ErrContextLost", err)
	}
	t.Logf("Synchronize: %v", err)
	if ctx.Err() == nil || !errors.Is(ctx.Err(), ErrContextLost) {
		t.Fatalf("Err() = %v", ctx.Err())
	}
	_, err = ctx.Alloc(16)
	if err == nil {
		t.Fatal("Alloc succeeded on a lost context")
	}
	t.Logf("Alloc afterwards: %v; Err(): %v", err, ctx.Err())
}

// memcpy2D must match CUDA_MEMCPY2D byte for byte (cuda.h, 64-bit): 128
// bytes, the host and pitch fields where the driver reads them.
func TestMemcpy2DLayout(t *testing.T) {
	var p memcpy2D
	if s := unsafe.Sizeof(p); s != 128 {
		t.Errorf("memcpy2D is %d bytes, want 128", s)
	}
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"srcMemoryType", unsafe.Offsetof(p.srcMemoryType), 16},
		{"srcHost", unsafe.Offsetof(p.srcHost), 24},
		{"srcDevice", unsafe.Offsetof(p.srcDevice), 32},
		{"srcPitch", unsafe.Offsetof(p.srcPitch), 48},
		{"dstMemoryType", unsafe.Offsetof(p.dstMemoryType), 72},
		{"dstHost", unsafe.Offsetof(p.dstHost), 80},
		{"dstDevice", unsafe.Offsetof(p.dstDevice), 88},
		{"dstPitch", unsafe.Offsetof(p.dstPitch), 104},
		{"widthInBytes", unsafe.Offsetof(p.widthInBytes), 112},
		{"height", unsafe.Offsetof(p.height), 120},
	} {
		if f.got != f.want {
			t.Errorf("%s at offset %d, want %d", f.name, f.got, f.want)
		}
	}
}
