package amp

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// scaleSpec describes "func Scale(i amp.Index, in, out *amp.ArrayView[float32],
// a float32) { out.Set(i, a*in.At(i)) }" as goampgen would, for the CPU and
// the fake device (the PTX is never compiled there).
func scaleSpec(tiled bool) *KernelSpec {
	return &KernelSpec{
		Name: "kernels.Scale", Pos: "scale.go:12", Tiled: tiled,
		PTX:     ".version 7.0\n.target sm_70\n",
		Entries: [MaxRank + 1]string{1: "scale1", 2: "scale2"},
		Args: []KernelArgSpec{
			{Name: "in", View: true, Read: true, Ranks: [MaxRank + 1]int{1: 1, 2: 2}},
			{Name: "out", View: true, Write: true, Ranks: [MaxRank + 1]int{1: 1, 2: 2}},
			{Name: "a"},
		},
	}
}

func TestLaunchOnCPURunsTheGoFunction(t *testing.T) {
	checkNoLeak(t)
	in, _ := NewArrayView(Extent2(7, 9), make([]float32, 63))
	for i := range 63 {
		in.Set(Index2(i/9, i%9), float32(i))
	}
	out, _ := NewArrayView(Extent2(7, 9), make([]float32, 63))
	a := float32(3)
	cpu := CPU().DefaultView()
	err := cpu.Launch(scaleSpec(false), in.Extent(), func(i Index) { out.Set(i, a*in.At(i)) },
		ViewArg(in), ViewArg(out), ScalarArg(a))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 63 {
		if got := out.At(Index2(i/9, i%9)); got != 3*float32(i) {
			t.Fatalf("out%v = %v, want %v", Index2(i/9, i%9), got, 3*float32(i))
		}
	}

	// Tiled: each tile's sum, through tile_static memory, into its first element.
	vals, _ := NewArrayView(Extent2(8, 12), make([]float32, 96))
	sums, _ := NewArrayView(Extent2(8, 12), make([]float32, 96))
	for i := range 96 {
		vals.Set(Index2(i/12, i%12), float32(i%5))
	}
	te := Extent2(8, 12).Tile(4, 3)
	tileSum := &KernelSpec{Name: "kernels.TileSum", Tiled: true, Args: []KernelArgSpec{
		{Name: "in", View: true, Read: true}, {Name: "out", View: true, Write: true}}}
	err = cpu.LaunchTiled(tileSum, te, func(ti TiledIndex) {
		s := TileStatic[float32](ti, 12)
		s[ti.Local.At(0)*3+ti.Local.At(1)] = vals.At(ti.Global)
		ti.Barrier.Wait()
		if ti.Local == Index2(0, 0) {
			var sum float32
			for _, x := range s {
				sum += x
			}
			sums.Set(ti.Global, sum)
		}
	}, ViewArg(vals), ViewArg(sums))
	if err != nil {
		t.Fatal(err)
	}
	var want float32
	for r := 4; r < 8; r++ {
		for c := 6; c < 9; c++ {
			want += vals.At(Index2(r, c))
		}
	}
	if got := sums.At(Index2(4, 6)); got != want {
		t.Errorf("tile (1, 2) summed to %v, want %v", got, want)
	}

	// Failures come back as ParallelForEach's.
	err = cpu.Launch(scaleSpec(false), Extent2(3, 3), func(i Index) {
		if i == Index2(2, 1) {
			panic("boom")
		}
	}, ViewArg(in), ViewArg(out), ScalarArg(a))
	var kp *KernelPanicError
	if !errors.As(err, &kp) || kp.Global != Index2(2, 1) {
		t.Errorf("a panicking kernel: got %v, want a *KernelPanicError at (2, 1)", err)
	}
	if err := cpu.Launch(scaleSpec(false), Extent2(-1, 3), func(Index) {}, ViewArg(in), ViewArg(out), ScalarArg(a)); !errors.Is(err, ErrInvalidExtent) {
		t.Errorf("a negative extent: got %v, want ErrInvalidExtent", err)
	}
	if err := cpu.LaunchTiled(tileSum, Extent2(8, 12).Tile(3, 3), func(TiledIndex) {}, ViewArg(vals), ViewArg(sums)); !errors.Is(err, ErrInvalidComputeDomain) {
		t.Errorf("tiles that do not divide: got %v, want ErrInvalidComputeDomain", err)
	}
}

func TestLaunchChecksArguments(t *testing.T) {
	in, _ := NewArrayView(Extent1(4), make([]float32, 4))
	ints, _ := NewArrayView(Extent1(4), make([]int32, 4))
	k := scaleSpec(false)
	cpu := CPU().DefaultView()
	noop := func(Index) {}
	for _, c := range []struct {
		name string
		err  error
		want error
		text []string
	}{
		{"ok", cpu.Launch(k, Extent1(4), noop, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), nil, nil},
		{"zero view", (&AcceleratorView{}).Launch(k, Extent1(4), noop, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), ErrNoAccelerator, nil},
		{"nil spec", cpu.Launch(nil, Extent1(4), noop), ErrInvalidKernel, []string{"nil *KernelSpec"}},
		{"too few", cpu.Launch(k, Extent1(4), noop, ViewArg(in)), ErrInvalidKernel, []string{"kernels.Scale (scale.go:12)", "takes 3 arguments", "got 1"}},
		{"scalar for view", cpu.Launch(k, Extent1(4), noop, ScalarArg(int32(1)), ViewArg(in), ScalarArg(float32(1))), ErrInvalidKernel, []string{"argument 1 (in) is int32, want a view"}},
		{"view for scalar", cpu.Launch(k, Extent1(4), noop, ViewArg(in), ViewArg(in), ViewArg(ints)), ErrInvalidKernel, []string{"argument 3 (a) is *amp.ArrayView[int32], want a scalar"}},
		{"nil view", cpu.Launch(k, Extent1(4), noop, ViewArg(in), ViewArg[float32](nil), ScalarArg(float32(1))), ErrInvalidKernel, []string{"argument 2 (out) is a nil *amp.ArrayView[float32]"}},
		{"nil arg", cpu.Launch(k, Extent1(4), noop, ViewArg(in), nil, ScalarArg(float32(1))), ErrInvalidKernel, []string{"argument 2 (out) is nil"}},
		{"tiled spec untiled", cpu.Launch(scaleSpec(true), Extent1(4), noop, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), ErrInvalidKernel, []string{"LaunchTiled"}},
		{"untiled spec tiled", cpu.LaunchTiled(k, Extent1(4).Tile(2), func(TiledIndex) {}, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), ErrInvalidKernel, []string{"with Launch"}},
		{"no Go function", cpu.Launch(k, Extent1(4), nil, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), ErrInvalidKernel, []string{"no Go function"}},
		{"view rank", cpu.Launch(k, Extent2(2, 2), noop, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), ErrInvalidKernel,
			[]string{"over a rank-2 domain indexes argument 1 (in) with rank-2 indices; it is a rank-1 view"}},
		{"view rank, tiled", cpu.LaunchTiled(scaleSpec(true), Extent2(2, 2).Tile(1, 1), func(TiledIndex) {}, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), ErrInvalidKernel,
			[]string{"argument 1 (in)"}},
		{"view rank on a GPU", (&Accelerator{path: "fake:0", kind: KindCUDA, memory: &fakeRunner{maxThreads: 1024}}).NewView().Launch(k, Extent2(2, 2), nil, ViewArg(in), ViewArg(in), ScalarArg(float32(1))), ErrInvalidKernel,
			[]string{"it is a rank-1 view"}},
	} {
		if !errors.Is(c.err, c.want) || (c.want == nil) != (c.err == nil) {
			t.Errorf("%s: got %v, want %v", c.name, c.err, c.want)
			continue
		}
		for _, s := range c.text {
			if !strings.Contains(c.err.Error(), s) {
				t.Errorf("%s: %q does not say %q", c.name, c.err, s)
			}
		}
	}
}

func TestParallelForEachOnGPUPointsAtGoampgen(t *testing.T) {
	v := (&Accelerator{path: "fake:0", kind: KindCUDA}).NewView()
	err := v.ParallelForEach(Extent1(4), func(Index) {})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "goampgen") {
		t.Errorf("got %v, want ErrUnsupported pointing at goampgen", err)
	}
}

func TestLaunchGeometry(t *testing.T) {
	type dims = [3]uint32
	for _, c := range []struct {
		dom, tile   Extent
		maxThreads  int
		grid, block dims
	}{
		{Extent1(1000), Extent{}, 1024, dims{4, 1, 1}, dims{256, 1, 1}},
		{Extent1(1), Extent{}, 1024, dims{1, 1, 1}, dims{256, 1, 1}},
		{Extent2(100, 70), Extent{}, 1024, dims{3, 13, 1}, dims{32, 8, 1}},
		{Extent3(5, 6, 70), Extent{}, 1024, dims{3, 2, 3}, dims{32, 4, 2}},
		// Narrow domains give their idle lanes to y.
		{Extent2(1000, 4), Extent{}, 1024, dims{1, 16, 1}, dims{4, 64, 1}},
		{Extent3(5, 6, 7), Extent{}, 1024, dims{1, 1, 3}, dims{8, 16, 2}},
		// A kernel that allows fewer threads a block gets smaller blocks.
		{Extent1(1000), Extent{}, 200, dims{8, 1, 1}, dims{128, 1, 1}},
		{Extent2(100, 70), Extent{}, 128, dims{3, 25, 1}, dims{32, 4, 1}},
		// Too many rows for 65535 blocks of 8: longer blocks in y.
		{Extent2(10_000_000, 100), Extent{}, 1024, dims{25, 39063, 1}, dims{4, 256, 1}},
		// Tiled: a tile is a block, the last dimension on x.
		{Extent2(64, 96), Extent2(16, 32), 1024, dims{3, 4, 1}, dims{32, 16, 1}},
		{Extent3(4, 8, 16), Extent3(2, 4, 8), 1024, dims{2, 2, 2}, dims{8, 4, 2}},
		{Extent1(2048), Extent1(1024), 1024, dims{2, 1, 1}, dims{1024, 1, 1}},
		// Empty domains launch nothing.
		{Extent2(0, 5), Extent{}, 1024, dims{}, dims{}},
	} {
		grid, block, err := launchGeometry(c.dom, c.tile, c.maxThreads)
		if err != nil || grid != c.grid || block != c.block {
			t.Errorf("%v tiles %v (max %d threads): grid %v block %v, %v; want grid %v block %v",
				c.dom, c.tile, c.maxThreads, grid, block, err, c.grid, c.block)
		}
		if err == nil && c.dom.Size() > 0 {
			// Every point has a thread.
			for a := range c.dom.Rank() {
				if n := int(grid[a]) * int(block[a]); n < c.dom.At(c.dom.Rank()-1-a) {
					t.Errorf("%v: %d threads along axis %d", c.dom, n, a)
				}
			}
			if th := block[0] * block[1] * block[2]; int(th) > c.maxThreads {
				t.Errorf("%v: %d threads a block, more than %d", c.dom, th, c.maxThreads)
			}
		}
	}
	for _, c := range []struct {
		dom, tile  Extent
		maxThreads int
		text       string
	}{
		{Extent1(1 << 40), Extent{}, 1024, "along dimension 0"},
		{Extent2(1<<31, 1), Extent{}, 1024, "blocks along dimension 0"},
		{Extent3(1<<28, 1, 1), Extent{}, 1024, "along dimension 0"},
		{Extent2(131072, 1), Extent2(1, 1), 1024, "131072 tiles along dimension 0"},
		{Extent3(128, 1, 8), Extent3(128, 1, 8), 1024, "at most 64 threads along dimension 0"},
		{Extent2(32, 32), Extent2(16, 16), 128, "at most 128 threads a tile"},
	} {
		_, _, err := launchGeometry(c.dom, c.tile, c.maxThreads)
		if !errors.Is(err, ErrInvalidComputeDomain) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%v tiles %v: got %v, want ErrInvalidComputeDomain saying %q", c.dom, c.tile, err, c.text)
		}
	}
}

type celsius float32

// TestKernelParams pins the kernel ABI: the parameters, their order and
// their Go types (which fix their sizes at the launch).
func TestKernelParams(t *testing.T) {
	v1, _ := NewArrayView(Extent1(5), make([]float32, 5))
	m, _ := NewArrayView(Extent2(6, 10), make([]float64, 60))
	v2, _ := m.Section(Index2(1, 2), Extent2(3, 4))
	v3, _ := NewArrayView(Extent3(2, 3, 4), make([]int32, 24))
	empty, _ := NewArrayView(Extent2(0, 3), []float32{})
	var bound []boundArg
	for _, x := range []struct {
		ext    Extent
		stride [MaxRank]int
		base   uint64
	}{{v1.ext, v1.stride, 0x1000}, {v2.ext, v2.stride, 0x2000 + 12*8}, {v3.ext, v3.stride, 0x3000}, {empty.ext, empty.stride, 0}} {
		b, err := bindView(x.ext, x.stride, x.base)
		if err != nil {
			t.Fatal(err)
		}
		bound = append(bound, b)
	}
	scalars := []KernelArg{ScalarArg(true), ScalarArg(false), ScalarArg(int32(-3)), ScalarArg(uint32(3)),
		ScalarArg(int64(-1 << 40)), ScalarArg(uint64(1 << 63)), ScalarArg(-7), ScalarArg(uint(7)),
		ScalarArg(float32(1.5)), ScalarArg(2.25), ScalarArg(celsius(-40))}
	for _, s := range scalars {
		bound = append(bound, boundArg{value: s.(scalarArg).value})
	}
	got := kernelParams(0xabc0, Extent3(4, 5, 6), bound)
	want := []any{
		uint64(0xabc0), int64(4), int64(5), int64(6),
		uint64(0x1000), uint32(1), int64(5), int64(1), int64(1), int64(0), int64(0),
		uint64(0x2000 + 12*8), uint32(2), int64(3), int64(4), int64(1), int64(10), int64(0),
		uint64(0x3000), uint32(3), int64(2), int64(3), int64(4), int64(12), int64(4),
		uint64(0), uint32(2), int64(0), int64(3), int64(1), int64(3), int64(0),
		uint32(1), uint32(0), int32(-3), uint32(3), int64(-1 << 40), uint64(1 << 63), int64(-7), uint64(7),
		float32(1.5), float64(2.25), float32(-40),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("params:\n got %s\nwant %s", typed(got), typed(want))
	}
	if got := ScalarArg(celsius(1)).kernelArgType(); got != "amp.celsius" {
		t.Errorf("a defined type is named %q", got)
	}
	bad := [MaxRank]int{3, 2}
	if _, err := bindView(Extent2(2, 3), bad, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a view with stride 2 in its last dimension: got %v, want ErrUnsupported", err)
	}
}

func typed(xs []any) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%T(%v)", x, x)
	}
	return strings.Join(s, " ")
}

// fakeRunner is a device that "runs" compiled kernels by recording the
// launch and reporting the status record it is given.
type fakeRunner struct {
	fakeDevice
	maxThreads  int
	prepareErr  error
	prepared    int
	runs        int
	rank        int
	small       bool
	grid, block [3]uint32
	params      []any
	status      statusRecord
}

func (d *fakeRunner) prepareKernel(k *KernelSpec) ([MaxRank + 1]int, error) {
	d.prepared++
	var m [MaxRank + 1]int
	for r := range m {
		m[r] = d.maxThreads
	}
	return m, d.prepareErr
}

func (d *fakeRunner) runKernel(k *KernelSpec, rank int, small bool, grid, block [3]uint32, params func(uint64) []any) (statusRecord, error) {
	d.runs++
	d.rank, d.small, d.grid, d.block = rank, small, grid, block
	d.params = params(0x5000)
	return d.status, nil
}

func TestLaunchOnADevice(t *testing.T) {
	dev := &fakeRunner{maxThreads: 1024}
	v := (&Accelerator{path: "fake:0", kind: KindCUDA, memory: dev}).NewView()
	hostIn := make([]float32, 8*10)
	big, _ := NewArrayView(Extent2(8, 10), hostIn)
	in, _ := big.Section(Index2(1, 2), Extent2(3, 4))
	out, _ := NewArrayView(Extent2(3, 4), make([]float32, 12))
	k := scaleSpec(false)
	if err := v.Launch(k, Extent2(3, 4), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2))); err != nil {
		t.Fatal(err)
	}
	want := []any{uint64(0x5000), int64(3), int64(4),
		uint64(0x100000 + 12*4), uint32(2), int64(3), int64(4), int64(1), int64(10), int64(0),
		uint64(0x100000), uint32(2), int64(3), int64(4), int64(1), int64(4), int64(0),
		float32(2)}
	if dev.rank != 2 || !reflect.DeepEqual(dev.params, want) {
		t.Errorf("rank %d, params\n got %s\nwant %s", dev.rank, typed(dev.params), typed(want))
	}
	if dev.grid != [3]uint32{1, 1, 1} || dev.block != [3]uint32{4, 64, 1} {
		t.Errorf("grid %v block %v", dev.grid, dev.block)
	}
	// The kernel may write out without writing all of it: out's contents
	// go to the device too, as in's do.
	if dev.uploads != 2 {
		t.Errorf("%d uploads, want 2 (in, and out, which the kernel may only partly write)", dev.uploads)
	}
	// out is now current on the device only.
	if !out.buf.is(hostStale) || in.buf.is(hostStale) {
		t.Errorf("after the kernel: out host-stale %v (want true), in host-stale %v (want false)", out.buf.is(hostStale), in.buf.is(hostStale))
	}
	_ = out.At(Index2(0, 0))
	if dev.downloads != 1 {
		t.Errorf("reading out on the host downloaded %d times, want 1", dev.downloads)
	}

	// An output whose contents were discarded is not uploaded.
	dev.uploads = 0
	out.DiscardData()
	if err := v.Launch(k, Extent2(3, 4), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2))); err != nil || dev.uploads != 0 {
		t.Errorf("a discarded output: %d uploads, %v; want none", dev.uploads, err)
	}

	// An argument the kernel does not touch is not copied, but shares the
	// address of a copy another argument makes.
	touch := &KernelSpec{Name: "kernels.Touch", PTX: "x", Entries: [MaxRank + 1]string{1: "t"},
		Args: []KernelArgSpec{{Name: "unused", View: true}, {Name: "read", View: true, Read: true}, {Name: "alone", View: true}}}
	x, _ := NewArrayView(Extent1(6), make([]float32, 6))
	xs, _ := x.Section(Index1(2), Extent1(3))
	alone, _ := NewArrayView(Extent1(5), make([]float32, 5))
	dev.uploads = 0
	if err := v.Launch(touch, Extent1(3), nil, ViewArg(xs), ViewArg(x), ViewArg(alone)); err != nil {
		t.Fatal(err)
	}
	if dev.params[2] != uint64(0x100000+2*4) || dev.params[9] != uint64(0x100000) || dev.params[16] != uint64(0) || dev.uploads != 1 {
		t.Errorf("bases %#x, %#x, %#x with %d uploads; want the shared copy's 0x100008 and 0x100000, 0 for the untouched view, 1 upload",
			dev.params[2], dev.params[9], dev.params[16], dev.uploads)
	}

	// Tiled.
	if err := v.LaunchTiled(scaleSpec(true), Extent1(64).Tile(16), nil, ViewArg(x), ViewArg(x), ScalarArg(float32(1))); err != nil {
		t.Fatal(err)
	}
	if dev.rank != 1 || dev.grid != [3]uint32{4, 1, 1} || dev.block != [3]uint32{16, 1, 1} {
		t.Errorf("tiled: rank %d grid %v block %v", dev.rank, dev.grid, dev.block)
	}

	// What comes before the device: empty domains, missing code, the
	// compiler's failure, a domain too large.
	runs, prepared := dev.runs, dev.prepared
	if err := v.Launch(k, Extent2(0, 4), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2))); err != nil || dev.runs != runs || dev.prepared != prepared {
		t.Errorf("an empty domain: %v, %d runs and %d compiles; want nothing", err, dev.runs-runs, dev.prepared-prepared)
	}
	if err := v.Launch(k, Extent3(1, 1, 1), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2))); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "rank-3") {
		t.Errorf("no rank-3 entry: got %v, want ErrUnsupported", err)
	}
	cpuOnly := scaleSpec(false)
	cpuOnly.PTX = ""
	if err := v.Launch(cpuOnly, Extent2(3, 4), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2))); !errors.Is(err, ErrUnsupported) {
		t.Errorf("no PTX: got %v, want ErrUnsupported", err)
	}
	if err := v.LaunchTiled(scaleSpec(true), Extent1(64).Tile(48), nil, ViewArg(x), ViewArg(x), ScalarArg(float32(1))); !errors.Is(err, ErrInvalidComputeDomain) {
		t.Errorf("an invalid tiling: got %v, want ErrInvalidComputeDomain", err)
	}
	dev.prepareErr = fmt.Errorf("%w: line 3: syntax error", ErrKernelCompile)
	err := v.Launch(k, Extent2(3, 4), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2)))
	if !errors.Is(err, ErrKernelCompile) || !strings.Contains(err.Error(), "kernels.Scale (scale.go:12) on fake:0") || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a compile error: got %v", err)
	}
	dev.prepareErr = nil
	dev.maxThreads = 64
	err = v.LaunchTiled(scaleSpec(true), Extent1(256).Tile(128), nil, ViewArg(x), ViewArg(x), ScalarArg(float32(1)))
	if !errors.Is(err, ErrInvalidComputeDomain) || !strings.Contains(err.Error(), "kernels.Scale") {
		t.Errorf("tiles larger than the kernel allows: got %v", err)
	}
	if err := (&Accelerator{path: "fake:1", kind: KindCUDA, memory: &fakeDevice{}}).NewView().Launch(k, Extent2(3, 4), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2))); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a device that does not run kernels: got %v, want ErrUnsupported", err)
	}
}

func TestLaunchReportsKernelFaults(t *testing.T) {
	dev := &fakeRunner{maxThreads: 1024}
	v := (&Accelerator{path: "fake:0", kind: KindCUDA, memory: dev}).NewView()
	in, _ := NewArrayView(Extent2(8, 8), make([]float32, 64))

	dev.status = statusRecord{code: ir.StatusOutOfBounds, arg: 2, where: [3]int64{5, 7, 0}}
	err := v.Launch(scaleSpec(false), Extent2(8, 8), nil, ViewArg(in), ViewArg(in), ScalarArg(float32(1)))
	var kf *KernelFaultError
	if !errors.As(err, &kf) || !errors.Is(err, ErrOutOfRange) || !errors.Is(err, ErrKernelPanic) {
		t.Fatalf("got %v, want a *KernelFaultError matching ErrOutOfRange and ErrKernelPanic", err)
	}
	if kf.Global != Index2(5, 7) || kf.Tiled || kf.Code != ir.StatusOutOfBounds || kf.Arg != 2 || kf.Accelerator != "fake:0" {
		t.Errorf("fault %+v", kf)
	}
	for _, s := range []string{"kernels.Scale (scale.go:12)", "fake:0", "thread (5, 7)", "argument 2 (out)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not say %q", err, s)
		}
	}

	dev.status = statusRecord{code: ir.StatusDivideByZero, where: [3]int64{37, 0, 0}}
	in1, _ := NewArrayView(Extent1(64), make([]float32, 64))
	err = v.LaunchTiled(scaleSpec(true), Extent1(64).Tile(16), nil, ViewArg(in1), ViewArg(in1), ScalarArg(float32(1)))
	if !errors.As(err, &kf) || errors.Is(err, ErrOutOfRange) || !kf.Tiled || kf.Tile != Index1(2) || kf.Local != Index1(5) ||
		!strings.Contains(err.Error(), "(tile (2), local (5)): integer divide by zero") {
		t.Errorf("tiled divide by zero: got %v", err)
	}

	k := scaleSpec(false)
	for _, c := range []struct {
		code, arg uint32
		text      string
		bounds    bool
	}{
		{ir.StatusOutOfBounds, 1, "index out of range of view argument 1 (in)", true},
		{ir.StatusOutOfBounds, 9, "index out of range of view argument 9", true},
		{ir.StatusStaticBounds, 2, "TileStatic call 2", true},
		{ir.StatusIndexRank, 2, "index component 2", true},
		{ir.StatusRankMismatch, 3, "wrong rank for view argument 3 (a)", true},
		{ir.StatusUnreachable, 0, "unreachable", false},
		{ir.StatusNegativeShift, 0, "negative shift", false},
		{99, 4, "unknown status code 99 (arg 4)", false},
	} {
		err := faultError(k, "fake:0", Extent1(10), Extent{}, statusRecord{code: c.code, arg: c.arg, where: [3]int64{3}})
		if err == nil || !strings.Contains(err.Error(), c.text) || errors.Is(err, ErrOutOfRange) != c.bounds || !errors.Is(err, ErrKernelPanic) {
			t.Errorf("code %d: got %v, want %q (out of range: %v)", c.code, err, c.text, c.bounds)
		}
	}
	if err := faultError(k, "fake:0", Extent1(10), Extent{}, statusRecord{}); err != nil {
		t.Errorf("status OK: got %v", err)
	}
	rec := decodeStatus([]byte{1, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0, 0, 0, 0, 0})
	if rec != (statusRecord{code: 1, arg: 2, where: [3]int64{5, -1, 7}}) {
		t.Errorf("decoded %+v", rec)
	}
}

func TestRetargetForDevice(t *testing.T) {
	header := func(s string) string {
		lines := strings.Split(s, "\n")
		return lines[0] + " | " + lines[1]
	}
	gen := ".version 7.0\n.target sm_75\n.address_size 64\n"
	for _, c := range []struct {
		driver, major, minor int
		want                 string
	}{
		{12080, 9, 0, ".version 8.7 | .target sm_90"},
		{13000, 8, 6, ".version 9.0 | .target sm_86"},
		{11040, 9, 0, ".version 7.4 | .target sm_75"},  // that ISA has no sm_90: the JIT compiles sm_75 for it
		{13000, 15, 0, ".version 9.0 | .target sm_75"}, // a device newer than this table
	} {
		got, err := retargetForDevice(gen, c.driver, c.major, c.minor)
		if err != nil || header(got) != c.want {
			t.Errorf("CUDA %d, sm_%d%d: %q, %v; want %q", c.driver, c.major, c.minor, header(got), err, c.want)
		}
	}
	if _, err := retargetForDevice(gen, 10020, 7, 5); err == nil || !strings.Contains(err.Error(), "driver") {
		t.Errorf("a CUDA 10.2 driver: got %v, want an error about the driver", err)
	}
}

// TestBindViewLimits: the compiled kernels assume extents and strides of
// at most 2^62 (ir.MaxNonNeg); a view past that is refused, not run.
func TestBindViewLimits(t *testing.T) {
	if _, err := bindView(Extent1(1<<62), [MaxRank]int{1}, 0); err != nil {
		t.Errorf("extent 2^62: %v", err)
	}
	if _, err := bindView(Extent1(1<<62+1), [MaxRank]int{1}, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("extent 2^62+1: %v, want ErrUnsupported", err)
	}
	if _, err := bindView(Extent2(2, 3), [MaxRank]int{1<<62 + 1, 1}, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("stride 2^62+1: %v, want ErrUnsupported", err)
	}
}

// TestSmallEntries: a launch whose extents and strides fit in 31 bits runs
// the kernel's SmallEntries entry where it has one; one with a view past
// that runs the general entry.
func TestSmallEntries(t *testing.T) {
	dev := &fakeRunner{maxThreads: 1024}
	v := (&Accelerator{path: "fake:0", kind: KindCUDA, memory: dev}).NewView()
	in, _ := NewArrayView(Extent2(3, 4), make([]float32, 12))
	out, _ := NewArrayView(Extent2(3, 4), make([]float32, 12))
	k := scaleSpec(false)
	run := func() bool {
		t.Helper()
		if err := v.Launch(k, Extent2(3, 4), nil, ViewArg(in), ViewArg(out), ScalarArg(float32(2))); err != nil {
			t.Fatal(err)
		}
		return dev.small
	}
	if run() {
		t.Errorf("a kernel without SmallEntries ran small")
	}
	k.SmallEntries[2] = "scale_small"
	if !run() {
		t.Errorf("a small launch ran the general entry")
	}
	for _, c := range []struct {
		dom  Extent
		grid [3]uint32
		view boundArg
		want bool
	}{
		{Extent2(3, 4), [3]uint32{1, 1, 1}, boundArg{view: true, n: [MaxRank]int64{3, 4, 1}, s: [MaxRank - 1]int64{4}}, true},
		{Extent2(1<<31-1, 4), [3]uint32{1, 1 << 21, 1}, boundArg{view: true, n: [MaxRank]int64{1<<31 - 1, 4, 1}}, true},
		{Extent2(1<<31, 4), [3]uint32{1, 1, 1}, boundArg{}, false},
		{Extent2(3, 4), [3]uint32{1<<21 + 1, 1, 1}, boundArg{}, false},
		{Extent2(3, 4), [3]uint32{1, 1, 1}, boundArg{view: true, n: [MaxRank]int64{3, 1 << 31, 1}}, false},
		{Extent2(3, 4), [3]uint32{1, 1, 1}, boundArg{view: true, n: [MaxRank]int64{3, 4, 1}, s: [MaxRank - 1]int64{1 << 31}}, false},
		{Extent2(3, 4), [3]uint32{1, 1, 1}, boundArg{value: int64(1 << 40)}, true}, // scalars are not assumed small
	} {
		if got := smallLaunch(c.dom, c.grid, []boundArg{c.view}); got != c.want {
			t.Errorf("smallLaunch(%v, %v, %+v) = %v, want %v", c.dom, c.grid, c.view, got, c.want)
		}
	}
}
