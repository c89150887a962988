package amp

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// scalePTX is "out = a*in" for float32 views of rank 1 (scale1) and 2
// (scale2), written by hand to goamp's kernel ABI as goampgen would write
// it: status record, domain extent, then 7 parameters a view and the
// scalar. The thread's index along the last dimension is ctaid.x*ntid.x +
// tid.x (and along dimension 0 of rank 2, the same in y), which is the
// global index for tiled and untiled launches alike. Threads beyond the
// domain return; an index outside in (argument 1) or out (argument 2)
// records StatusOutOfBounds with the thread's index, first failure wins.
const scalePTX = `//
// goamp kernel ABI test kernels, written by hand.
//
.version 7.0
.target sm_70
.address_size 64

.visible .entry scale1(
	.param .u64 s1_status,
	.param .s64 s1_d0,
	.param .u64 s1_in_base,
	.param .u32 s1_in_rank,
	.param .s64 s1_in_n0,
	.param .s64 s1_in_n1,
	.param .s64 s1_in_n2,
	.param .s64 s1_in_s0,
	.param .s64 s1_in_s1,
	.param .u64 s1_out_base,
	.param .u32 s1_out_rank,
	.param .s64 s1_out_n0,
	.param .s64 s1_out_n1,
	.param .s64 s1_out_n2,
	.param .s64 s1_out_s0,
	.param .s64 s1_out_s1,
	.param .f32 s1_a
)
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<24>;
	.reg .f32 %f<8>;

	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	cvt.u64.u32 %rd1, %r3;
	mad.wide.u32 %rd2, %r1, %r2, %rd1;
	ld.param.s64 %rd3, [s1_d0];
	setp.ge.s64 %p1, %rd2, %rd3;
	@%p1 bra S1_DONE;
	ld.param.s64 %rd4, [s1_in_n0];
	setp.ge.s64 %p1, %rd2, %rd4;
	@%p1 bra S1_OOB_IN;
	ld.param.s64 %rd5, [s1_out_n0];
	setp.ge.s64 %p1, %rd2, %rd5;
	@%p1 bra S1_OOB_OUT;
	shl.b64 %rd6, %rd2, 2;
	ld.param.u64 %rd7, [s1_in_base];
	cvta.to.global.u64 %rd7, %rd7;
	add.s64 %rd7, %rd7, %rd6;
	ld.global.f32 %f1, [%rd7];
	ld.param.f32 %f2, [s1_a];
	mul.rn.f32 %f3, %f1, %f2;
	ld.param.u64 %rd8, [s1_out_base];
	cvta.to.global.u64 %rd8, %rd8;
	add.s64 %rd8, %rd8, %rd6;
	st.global.f32 [%rd8], %f3;
	bra S1_DONE;
S1_OOB_IN:
	mov.u32 %r4, 1;
	bra S1_FAULT;
S1_OOB_OUT:
	mov.u32 %r4, 2;
S1_FAULT:
	ld.param.u64 %rd9, [s1_status];
	cvta.to.global.u64 %rd9, %rd9;
	mov.u32 %r5, 0;
	mov.u32 %r6, 1;
	atom.global.cas.b32 %r7, [%rd9], %r5, %r6;
	setp.ne.u32 %p2, %r7, 0;
	@%p2 bra S1_DONE;
	st.global.u32 [%rd9+4], %r4;
	st.global.u64 [%rd9+8], %rd2;
	mov.u64 %rd10, 0;
	st.global.u64 [%rd9+16], %rd10;
	st.global.u64 [%rd9+24], %rd10;
S1_DONE:
	ret;
}

.visible .entry scale2(
	.param .u64 s2_status,
	.param .s64 s2_d0,
	.param .s64 s2_d1,
	.param .u64 s2_in_base,
	.param .u32 s2_in_rank,
	.param .s64 s2_in_n0,
	.param .s64 s2_in_n1,
	.param .s64 s2_in_n2,
	.param .s64 s2_in_s0,
	.param .s64 s2_in_s1,
	.param .u64 s2_out_base,
	.param .u32 s2_out_rank,
	.param .s64 s2_out_n0,
	.param .s64 s2_out_n1,
	.param .s64 s2_out_n2,
	.param .s64 s2_out_s0,
	.param .s64 s2_out_s1,
	.param .f32 s2_a
)
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<24>;
	.reg .f32 %f<8>;

	// i1, along x, and i0, along y.
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	cvt.u64.u32 %rd1, %r3;
	mad.wide.u32 %rd2, %r1, %r2, %rd1;
	mov.u32 %r4, %ctaid.y;
	mov.u32 %r5, %ntid.y;
	mov.u32 %r6, %tid.y;
	cvt.u64.u32 %rd3, %r6;
	mad.wide.u32 %rd4, %r4, %r5, %rd3;
	ld.param.s64 %rd5, [s2_d0];
	setp.ge.s64 %p1, %rd4, %rd5;
	@%p1 bra S2_DONE;
	ld.param.s64 %rd6, [s2_d1];
	setp.ge.s64 %p1, %rd2, %rd6;
	@%p1 bra S2_DONE;
	ld.param.s64 %rd7, [s2_in_n0];
	setp.ge.s64 %p1, %rd4, %rd7;
	@%p1 bra S2_OOB_IN;
	ld.param.s64 %rd8, [s2_in_n1];
	setp.ge.s64 %p1, %rd2, %rd8;
	@%p1 bra S2_OOB_IN;
	ld.param.s64 %rd9, [s2_out_n0];
	setp.ge.s64 %p1, %rd4, %rd9;
	@%p1 bra S2_OOB_OUT;
	ld.param.s64 %rd10, [s2_out_n1];
	setp.ge.s64 %p1, %rd2, %rd10;
	@%p1 bra S2_OOB_OUT;
	// in(i0, i1) is at in_base + (i0*in_s0 + i1)*4.
	ld.param.s64 %rd11, [s2_in_s0];
	mad.lo.s64 %rd12, %rd4, %rd11, %rd2;
	shl.b64 %rd12, %rd12, 2;
	ld.param.u64 %rd13, [s2_in_base];
	cvta.to.global.u64 %rd13, %rd13;
	add.s64 %rd13, %rd13, %rd12;
	ld.global.f32 %f1, [%rd13];
	ld.param.f32 %f2, [s2_a];
	mul.rn.f32 %f3, %f1, %f2;
	ld.param.s64 %rd14, [s2_out_s0];
	mad.lo.s64 %rd15, %rd4, %rd14, %rd2;
	shl.b64 %rd15, %rd15, 2;
	ld.param.u64 %rd16, [s2_out_base];
	cvta.to.global.u64 %rd16, %rd16;
	add.s64 %rd16, %rd16, %rd15;
	st.global.f32 [%rd16], %f3;
	bra S2_DONE;
S2_OOB_IN:
	mov.u32 %r7, 1;
	bra S2_FAULT;
S2_OOB_OUT:
	mov.u32 %r7, 2;
S2_FAULT:
	ld.param.u64 %rd17, [s2_status];
	cvta.to.global.u64 %rd17, %rd17;
	mov.u32 %r8, 0;
	mov.u32 %r9, 1;
	atom.global.cas.b32 %r10, [%rd17], %r8, %r9;
	setp.ne.u32 %p2, %r10, 0;
	@%p2 bra S2_DONE;
	st.global.u32 [%rd17+4], %r7;
	st.global.u64 [%rd17+8], %rd4;
	st.global.u64 [%rd17+16], %rd2;
	mov.u64 %rd18, 0;
	st.global.u64 [%rd17+24], %rd18;
S2_DONE:
	ret;
}
`

// scaleGPUSpec is scaleSpec with the real PTX. Each call makes a new
// KernelSpec, which the driver compiles anew.
func scaleGPUSpec(tiled bool) *KernelSpec {
	k := scaleSpec(tiled)
	k.PTX = scalePTX
	return k
}

// scaleOn runs the scale kernel over in's extent on v, into a new view.
func scaleOn(t *testing.T, v *AcceleratorView, k *KernelSpec, in *ArrayView[float32], a float32, tile ...int) *ArrayView[float32] {
	t.Helper()
	out, err := NewArrayView(in.Extent(), make([]float32, in.Extent().Size()))
	if err != nil {
		t.Fatal(err)
	}
	if k.Tiled {
		err = v.LaunchTiled(k, in.Extent().Tile(tile...), func(ti TiledIndex) { out.Set(ti.Global, a*in.At(ti.Global)) },
			ViewArg(in), ViewArg(out), ScalarArg(a))
	} else {
		err = v.Launch(k, in.Extent(), func(i Index) { out.Set(i, a*in.At(i)) }, ViewArg(in), ViewArg(out), ScalarArg(a))
	}
	if err != nil {
		t.Fatalf("%s on %s: %v", k.Name, v.Accelerator(), err)
	}
	return out
}

// sameElements fails t unless got and want hold the same elements.
func sameElements(t *testing.T, what string, got, want *ArrayView[float32]) {
	t.Helper()
	g, w := make([]float32, got.Extent().Size()), make([]float32, want.Extent().Size())
	got.CopyTo(g)
	want.CopyTo(w)
	for i := range w {
		if g[i] != w[i] {
			t.Fatalf("%s: element %v is %v on the GPU, %v on the CPU", what, got.Extent().indexAt(i), g[i], w[i])
		}
	}
}

// testInput is a section (1, 2) of a larger matrix, so that the kernel
// sees an offset and a row stride that is not its width.
func testInput(t *testing.T, rows, cols int) *ArrayView[float32] {
	t.Helper()
	data := make([]float32, (rows+3)*(cols+10))
	for i := range data {
		data[i] = float32(i%97) - 40.5
	}
	m, _ := NewArrayView(Extent2(rows+3, cols+10), data)
	s, err := m.Section(Index2(1, 2), Extent2(rows, cols))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLaunchOnCUDAMatchesCPU: hand-written PTX, launched untiled at ranks 1
// and 2 and tiled at rank 2, gives what the Go function gives on the CPU;
// the second launch reuses the compiled module; the output is left on the
// device until the host reads it.
func TestLaunchOnCUDAMatchesCPU(t *testing.T) {
	acc := firstGPU(t)
	gv, cpu := acc.DefaultView(), CPU().DefaultView()
	k := scaleGPUSpec(false)

	in := testInput(t, 37, 70) // not a multiple of any block
	out := scaleOn(t, gv, k, in, 2.5)
	if !out.buf.is(hostStale) {
		t.Error("the kernel's output was brought home before anyone asked")
	}
	sameElements(t, "rank 2", out, scaleOn(t, cpu, k, in, 2.5))

	key := cudaKernelKey{k, acc.memory.(*cudaMemory).dev}
	first, ok := cudaKernels.Load(key)
	if !ok || first.(*cudaKernel).mod.Load() == nil {
		t.Fatal("no module cached after the first launch")
	}
	mod := first.(*cudaKernel).mod.Load()
	out = scaleOn(t, gv, k, in, -3)
	sameElements(t, "rank 2, second launch", out, scaleOn(t, cpu, k, in, -3))
	if again, _ := cudaKernels.Load(key); again.(*cudaKernel).mod.Load() != mod {
		t.Error("the second launch loaded the module again")
	}

	v1, _ := NewArrayView(Extent1(1000), make([]float32, 1000))
	for i := range 1000 {
		v1.Set1(i, float32(i)/7)
	}
	sameElements(t, "rank 1", scaleOn(t, gv, k, v1, 3), scaleOn(t, cpu, k, v1, 3))

	kt := scaleGPUSpec(true)
	big := testInput(t, 64, 96)
	sameElements(t, "rank 2 tiled 16x32", scaleOn(t, gv, kt, big, 0.5, 16, 32), scaleOn(t, cpu, kt, big, 0.5, 16, 32))
	sameElements(t, "rank 1 tiled 128", scaleOn(t, gv, kt, section1(t, v1, 0, 896), 4, 128), scaleOn(t, cpu, kt, section1(t, v1, 0, 896), 4, 128))
}

// section1 is the section of the rank-1 view a of n elements from from.
func section1(t *testing.T, a *ArrayView[float32], from, n int) *ArrayView[float32] {
	t.Helper()
	s, err := a.Section(Index1(from), Extent1(n))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLaunchOnCUDAOutOfBounds: a domain larger than the output view makes
// the kernel record an out-of-bounds fault, which comes back naming the
// kernel, the argument and the thread; the device keeps working.
func TestLaunchOnCUDAOutOfBounds(t *testing.T) {
	acc := firstGPU(t)
	gv := acc.DefaultView()
	in, _ := NewArrayView(Extent2(4, 4), make([]float32, 16))
	short, _ := NewArrayView(Extent2(3, 4), make([]float32, 12))
	for _, k := range []*KernelSpec{scaleGPUSpec(false), scaleGPUSpec(true)} {
		var err error
		if k.Tiled {
			err = gv.LaunchTiled(k, Extent2(4, 4).Tile(2, 2), nil, ViewArg(in), ViewArg(short), ScalarArg(float32(1)))
		} else {
			err = gv.Launch(k, Extent2(4, 4), nil, ViewArg(in), ViewArg(short), ScalarArg(float32(1)))
		}
		t.Log(err)
		var kf *KernelFaultError
		if !errors.As(err, &kf) || !errors.Is(err, ErrOutOfRange) || !errors.Is(err, ErrKernelPanic) {
			t.Fatalf("tiled %v: got %v, want a *KernelFaultError matching ErrOutOfRange", k.Tiled, err)
		}
		if kf.Global.Rank() != 2 || kf.Global.At(0) != 3 || kf.Arg != 2 || kf.Accelerator != acc.Path() ||
			!strings.Contains(err.Error(), "argument 2 (out)") || !strings.Contains(err.Error(), "kernels.Scale (scale.go:12)") {
			t.Errorf("tiled %v: fault %+v", k.Tiled, kf)
		}
		if k.Tiled && (kf.Tile.At(0) != 1 || kf.Local.At(0) != 1 || kf.Tile.At(1) != kf.Global.At(1)/2) {
			t.Errorf("tiled: tile %v local %v for thread %v", kf.Tile, kf.Local, kf.Global)
		}
	}
	in2 := testInput(t, 5, 6)
	sameElements(t, "after a fault", scaleOn(t, gv, scaleGPUSpec(false), in2, 2), scaleOn(t, CPU().DefaultView(), scaleGPUSpec(false), in2, 2))
}

// TestLaunchOnCUDACompileErrors: PTX the JIT rejects, and an entry the
// module lacks, are errors wrapping ErrKernelCompile with the JIT's
// message; a failed load is tried again next time; the device keeps
// working.
func TestLaunchOnCUDACompileErrors(t *testing.T) {
	acc := firstGPU(t)
	gv := acc.DefaultView()
	x, _ := NewArrayView(Extent1(8), make([]float32, 8))
	broken := &KernelSpec{Name: "kernels.Broken", Pos: "broken.go:3",
		PTX:     ".version 7.0\n.target sm_70\n.address_size 64\n\n.visible .entry broken(.param .u64 status, .param .s64 d0)\n{\n\tbogus.instruction %r1;\n\tret;\n}\n",
		Entries: [MaxRank + 1]string{1: "broken"}}
	for range 2 {
		err := gv.Launch(broken, Extent1(8), nil)
		t.Log(err)
		if !errors.Is(err, ErrKernelCompile) || !strings.Contains(err.Error(), "kernels.Broken (broken.go:3)") || !strings.Contains(err.Error(), "PTX") {
			t.Fatalf("broken PTX: got %v, want ErrKernelCompile naming the kernel, with the JIT's message", err)
		}
	}
	missing := scaleGPUSpec(false)
	missing.Entries[1] = "nosuch"
	err := gv.Launch(missing, Extent1(8), nil, ViewArg(x), ViewArg(x), ScalarArg(float32(1)))
	if !errors.Is(err, ErrKernelCompile) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("a missing entry: got %v, want ErrKernelCompile naming it", err)
	}
	sameElements(t, "after compile errors", scaleOn(t, gv, scaleGPUSpec(false), x, 2), scaleOn(t, CPU().DefaultView(), scaleGPUSpec(false), x, 2))
}

// TestLaunchOnCUDAConcurrently: goroutines that launch a kernel nobody
// has launched yet all succeed, with one module and a status record each.
func TestLaunchOnCUDAConcurrently(t *testing.T) {
	acc := firstGPU(t)
	gv := acc.DefaultView()
	k := scaleGPUSpec(false)
	in := testInput(t, 33, 65)
	want := scaleOn(t, CPU().DefaultView(), k, in, 1.5)
	var wg sync.WaitGroup
	outs := make([]*ArrayView[float32], 8)
	errs := make([]error, len(outs))
	for g := range outs {
		outs[g], _ = NewArrayView(in.Extent(), make([]float32, in.Extent().Size()))
		wg.Go(func() {
			errs[g] = gv.Launch(k, in.Extent(), nil, ViewArg(in), ViewArg(outs[g]), ScalarArg(float32(1.5)))
		})
	}
	wg.Wait()
	for g, err := range errs {
		if err != nil {
			t.Fatalf("goroutine %d: %v", g, err)
		}
		sameElements(t, "concurrent launch", outs[g], want)
	}
}
