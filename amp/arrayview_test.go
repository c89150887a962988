package amp

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestExtentAndIndex(t *testing.T) {
	e := Extent3(2, 3, 4)
	if e.Rank() != 3 || e.Size() != 24 || e.At(2) != 4 || e.String() != "[2 x 3 x 4]" {
		t.Fatalf("Extent3(2, 3, 4): rank %d size %d string %s", e.Rank(), e.Size(), e)
	}
	if !e.Contains(Index3(1, 2, 3)) || e.Contains(Index3(2, 0, 0)) || e.Contains(Index2(0, 0)) || e.Contains(Index3(0, -1, 0)) {
		t.Fatal("Contains is wrong")
	}
	for lin := range e.Size() {
		idx := e.indexAt(lin)
		want := Index3(lin/12, lin/4%3, lin%4)
		if idx != want {
			t.Fatalf("indexAt(%d) = %v, want %v", lin, idx, want)
		}
	}
	if Index2(1, 2).Add(Index2(3, 4)) != Index2(4, 6) || Index2(1, 2).String() != "(1, 2)" {
		t.Fatal("Index arithmetic or formatting is wrong")
	}
	for _, dims := range [][]int{{}, {1, 2, 3, 4}, {3, -1}, {1 << 40, 1 << 40}} {
		if _, err := NewExtent(dims...); !errors.Is(err, ErrInvalidExtent) {
			t.Errorf("NewExtent(%v): got %v, want ErrInvalidExtent", dims, err)
		}
	}
	if e, err := NewExtent(5, 0); err != nil || e.Size() != 0 {
		t.Errorf("NewExtent(5, 0) = %v, %v", e, err)
	}
}

func TestArrayViewAccessAndSection(t *testing.T) {
	data := make([]float64, 20)
	for i := range data {
		data[i] = float64(i)
	}
	av, err := NewArrayView(Extent2(4, 5), data)
	if err != nil {
		t.Fatal(err)
	}
	if av.At2(2, 3) != 13 || av.At(Index2(3, 4)) != 19 {
		t.Fatal("row-major element access is wrong")
	}
	sec, err := av.Section(Index2(1, 2), Extent2(2, 3))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 6)
	if n := sec.CopyTo(got); n != 6 || !equal(got, []float64{7, 8, 9, 12, 13, 14}) {
		t.Fatalf("section holds %v", got[:n])
	}
	sec.Set2(1, 2, -1)
	if data[14] != -1 {
		t.Fatal("a write through a section did not reach the slice")
	}
	if _, err := av.Section(Index2(3, 3), Extent2(2, 2)); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("section past the end: got %v, want ErrOutOfRange", err)
	}
	if _, err := av.Section(Index1(0), Extent1(2)); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("section of another rank: got %v, want ErrOutOfRange", err)
	}
	if _, err := NewArrayView(Extent2(4, 6), data); !errors.Is(err, ErrShortData) {
		t.Fatalf("short slice: got %v, want ErrShortData", err)
	}
	mustPanic(t, "At2 out of range", func() { av.At2(4, 0) })
	mustPanic(t, "At1 on a rank-2 view", func() { av.At1(0) })
	mustPanic(t, "At with a rank-1 index", func() { av.At(Index1(0)) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// fakeDevice is an accelerator with memory of its own, made of Go slices:
// it lets the tests watch when views upload and download.
type fakeDevice struct {
	uploads, downloads int
	failAlloc          bool
	onRelease          func()
}

type fakeMemory struct {
	dev  *fakeDevice
	data []byte
}

func (d *fakeDevice) allocate(n int) (deviceMemory, error) {
	if d.failAlloc {
		return nil, errors.New("fake: out of memory")
	}
	return &fakeMemory{dev: d, data: make([]byte, n)}, nil
}

func (m *fakeMemory) upload(src unsafe.Pointer, n int) error {
	m.dev.uploads++
	copy(m.data, unsafe.Slice((*byte)(src), n))
	return nil
}

func (m *fakeMemory) download(dst unsafe.Pointer, n int) error {
	m.dev.downloads++
	copy(unsafe.Slice((*byte)(dst), n), m.data)
	return nil
}

func (m *fakeMemory) release() {
	m.data = nil
	if m.dev.onRelease != nil {
		m.dev.onRelease()
	}
}

// address pretends every copy starts at 0x100000: predictable, and never
// dereferenced.
func (m *fakeMemory) address() uint64 { return 0x100000 }

// deviceSlice shows a fake device copy as float32s, as a kernel there would.
func deviceSlice(m deviceMemory) []float32 {
	b := m.(*fakeMemory).data
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func TestArrayViewCopiesToADeviceLazily(t *testing.T) {
	dev := &fakeDevice{}
	host := []float32{1, 2, 3, 4}
	av, _ := NewArrayView(Extent1(4), host)

	mem, err := av.onDevice(dev, AccessRead)
	if err != nil || dev.uploads != 1 || deviceSlice(mem)[2] != 3 {
		t.Fatalf("first use: err %v, %d uploads", err, dev.uploads)
	}
	if _, err := av.onDevice(dev, AccessRead); err != nil || dev.uploads != 1 {
		t.Fatalf("second use of an unchanged view uploaded again (%d uploads)", dev.uploads)
	}
	host[0] = 10 // behind the view's back
	av.Refresh()
	mem, _ = av.onDevice(dev, AccessRead)
	if dev.uploads != 2 || deviceSlice(mem)[0] != 10 {
		t.Fatalf("after Refresh: %d uploads, device holds %v", dev.uploads, deviceSlice(mem))
	}
	av.Set1(1, 20) // through the view: no Refresh needed
	mem, _ = av.onDevice(dev, AccessReadWrite)
	if dev.uploads != 3 || deviceSlice(mem)[1] != 20 {
		t.Fatalf("after Set: %d uploads, device holds %v", dev.uploads, deviceSlice(mem))
	}
	deviceSlice(mem)[3] = 40 // the "kernel" writes on the device
	if host[3] != 4 || dev.downloads != 0 {
		t.Fatal("data came home before anyone asked")
	}
	if err := av.Synchronize(); err != nil || host[3] != 40 || dev.downloads != 1 {
		t.Fatalf("Synchronize: err %v, host %v, %d downloads", err, host, dev.downloads)
	}
	if err := av.Synchronize(); err != nil || dev.downloads != 1 {
		t.Fatal("a second Synchronize downloaded again")
	}

	mem, _ = av.onDevice(dev, AccessReadWrite)
	deviceSlice(mem)[0] = 99
	if got := av.At1(0); got != 99 || dev.downloads != 2 {
		t.Fatalf("host read after a device write: %v with %d downloads, want 99 after an implicit synchronize", got, dev.downloads)
	}

	av.DiscardData()
	before := dev.uploads
	av.Refresh() // host changed, but then discarded again below
	av.DiscardData()
	if _, err := av.onDevice(dev, AccessReadWrite); err != nil || dev.uploads != before {
		t.Fatalf("DiscardData did not skip the upload (%d uploads, want %d)", dev.uploads, before)
	}
	if _, err := av.onDevice(dev, AccessWrite); err != nil || dev.uploads != before {
		t.Fatal("a write-only use uploaded")
	}
	if err := av.Release(); err != nil || len(av.buf.copies) != 0 {
		t.Fatalf("Release: %v, %d copies left", err, len(av.buf.copies))
	}
}

func TestArrayViewDeviceAllocationFailure(t *testing.T) {
	av, _ := NewArrayView(Extent1(4), make([]float32, 4))
	if _, err := av.onDevice(&fakeDevice{failAlloc: true}, AccessRead); err == nil {
		t.Fatal("allocation failure was not reported")
	}
	av.Set1(0, 1) // the view still works on the host
	if av.At1(0) != 1 {
		t.Fatal("view unusable after a failed device allocation")
	}
}

func TestFindAccelerators(t *testing.T) {
	cpu, err := Find("cpu")
	if err != nil || cpu.Kind() != KindCPU || cpu != CPU() {
		t.Fatalf("Find(cpu) = %v, %v", cpu, err)
	}
	if a, err := Find("auto"); err != nil || a == nil {
		t.Fatalf("Find(auto) = %v, %v", a, err)
	}
	if _, err := Find("tpu:3"); !errors.Is(err, ErrNoAccelerator) {
		t.Fatalf("Find(tpu:3): got %v, want ErrNoAccelerator", err)
	}
	t.Setenv(DeviceEnv, "cpu")
	if a, err := DefaultAccelerator(); err != nil || a != CPU() {
		t.Fatalf("GOAMP_DEVICE=cpu: %v, %v", a, err)
	}
	t.Setenv(DeviceEnv, "nonesuch")
	if _, err := DefaultAccelerator(); !errors.Is(err, ErrNoAccelerator) {
		t.Fatalf("GOAMP_DEVICE=nonesuch: got %v, want ErrNoAccelerator", err)
	}
	if len(CPU().Properties()) == 0 || CPU().Description() == "" {
		t.Fatal("the CPU accelerator describes nothing")
	}
}

func TestHugeSectionsAndPaddingAreErrors(t *testing.T) {
	v, _ := NewArrayView(Extent1(5), make([]float32, 5))
	if _, err := v.Section(Index1(math.MaxInt), Extent1(1)); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("section at MaxInt: got %v, want ErrOutOfRange", err)
	}
	if s, err := v.Section(Index1(5), Extent1(0)); err != nil || s.Extent().Size() != 0 {
		t.Errorf("empty section at the end: %v, %v", s, err)
	}
	err := ParallelForEachTiled(Extent1(math.MaxInt-3).Tile(1024).Pad(), func(TiledIndex) {})
	if !errors.Is(err, ErrInvalidExtent) || !strings.Contains(err.Error(), "too many points") {
		t.Errorf("padding an extent near MaxInt: got %v, want ErrInvalidExtent", err)
	}
}

// TestSectionDiscardKeepsTheRest: device copies hold the whole slice, so a
// section's DiscardData or write-only use must not lose the data around it.
func TestSectionDiscardKeepsTheRest(t *testing.T) {
	dev := &fakeDevice{}
	host := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	parent, _ := NewArrayView(Extent1(8), host)
	sec, _ := parent.Section(Index1(0), Extent1(4))
	sec.DiscardData()
	mem, err := sec.onDevice(dev, AccessReadWrite)
	if err != nil || dev.uploads != 1 || deviceSlice(mem)[5] != 6 {
		t.Fatalf("a section's discard skipped the upload of the rest (%d uploads)", dev.uploads)
	}
	if got := parent.At1(5); got != 6 {
		t.Fatalf("parent[5] = %v after a section's discard, want 6", got)
	}
	parent.Set1(6, 70) // host changes: copies are stale
	if _, err := sec.onDevice(dev, AccessWrite); err != nil || dev.uploads != 2 {
		t.Fatalf("write-only use of a section did not upload the rest (%d uploads)", dev.uploads)
	}
	whole, _ := parent.Section(Index1(0), Extent1(8))
	if !whole.coversBuffer() || sec.coversBuffer() {
		t.Fatal("coversBuffer is wrong")
	}
}

func TestOverlaps(t *testing.T) {
	data := make([]int32, 10)
	a, _ := NewArrayView(Extent1(5), data[:5])
	b, _ := NewArrayView(Extent1(5), data[5:])
	c, _ := NewArrayView(Extent1(6), data[4:])
	empty, _ := NewArrayView(Extent1(0), data[:0])
	if a.Overlaps(b) || !a.Overlaps(c) || !c.Overlaps(b) || a.Overlaps(empty) || !a.Overlaps(a) {
		t.Fatal("Overlaps is wrong")
	}
}

func TestHostMatrix(t *testing.T) {
	data := make([]float32, 20)
	for i := range data {
		data[i] = float32(i)
	}
	v, _ := NewArrayView(Extent2(4, 5), data)
	s, err := v.Section(Index2(1, 2), Extent2(2, 3))
	if err != nil {
		t.Fatal(err)
	}
	m, ld, err := s.HostMatrix(true)
	if err != nil || ld != 5 || m[0] != 7 || m[ld+2] != 14 {
		t.Fatalf("HostMatrix of a section: data[0]=%v ld=%d err=%v; want 7, 5, nil", m[0], ld, err)
	}
	m[ld+1] = -1
	if v.At2(2, 3) != -1 {
		t.Errorf("a write through HostMatrix did not reach the view")
	}
	empty, _ := NewArrayView(Extent2(3, 0), []float32{})
	if m, _, err := empty.HostMatrix(false); err != nil || m != nil {
		t.Errorf("empty view: got %v, %v; want nil data and no error", m, err)
	}
	row, _ := NewArrayView(Extent1(3), data)
	if _, _, err := row.HostMatrix(false); !errors.Is(err, ErrInvalidExtent) {
		t.Errorf("rank-1 view: got %v, want ErrInvalidExtent", err)
	}
}

func TestHostVector(t *testing.T) {
	v, _ := NewArrayView(Extent1(6), []int32{0, 1, 2, 3, 4, 5})
	s, _ := v.Section(Index1(2), Extent1(3))
	x, err := s.HostVector(false)
	if err != nil || len(x) != 3 || x[0] != 2 || x[2] != 4 {
		t.Fatalf("HostVector of a section: %v, %v; want [2 3 4]", x, err)
	}
	m, _ := NewArrayView(Extent2(2, 3), []int32{0, 1, 2, 3, 4, 5})
	if _, err := m.HostVector(false); !errors.Is(err, ErrInvalidExtent) {
		t.Errorf("rank-2 view: got %v, want ErrInvalidExtent", err)
	}
}

func TestDeviceMatrixAndVector(t *testing.T) {
	dev := &fakeDevice{}
	gpu := &Accelerator{path: "fake:0", kind: KindCUDA, memory: dev}
	v := gpu.NewView()
	data := make([]float64, 20)
	m, _ := NewArrayView(Extent2(4, 5), data)
	s, _ := m.Section(Index2(1, 2), Extent2(2, 3))
	addr, ld, err := s.DeviceMatrix(v, AccessRead)
	if err != nil || ld != 5 || addr != 0x100000+7*8 {
		t.Fatalf("DeviceMatrix of a section: %#x, %d, %v; want %#x, 5, nil", addr, ld, err, 0x100000+7*8)
	}
	if dev.uploads != 1 {
		t.Errorf("reading on the device uploaded %d times, want 1", dev.uploads)
	}
	if _, _, err := s.DeviceMatrix(v, AccessRead); err != nil || dev.uploads != 1 {
		t.Errorf("a second read uploaded again (%d uploads, %v)", dev.uploads, err)
	}
	if _, _, err := m.DeviceMatrix(CPU().DefaultView(), AccessRead); !errors.Is(err, ErrUnsupported) {
		t.Errorf("DeviceMatrix on the CPU: got %v, want ErrUnsupported", err)
	}
	x, _ := NewArrayView(Extent1(6), make([]float32, 6))
	if _, _, err := x.DeviceMatrix(v, AccessRead); !errors.Is(err, ErrInvalidExtent) {
		t.Errorf("DeviceMatrix of a vector: got %v, want ErrInvalidExtent", err)
	}
	xs, _ := x.Section(Index1(2), Extent1(3))
	if addr, err := xs.DeviceVector(v, AccessWrite); err != nil || addr != 0x100000+2*4 {
		t.Errorf("DeviceVector of a section: %#x, %v", addr, err)
	}
	empty, _ := NewArrayView(Extent1(0), []float32{})
	if addr, err := empty.DeviceVector(v, AccessRead); err != nil || addr != 0 {
		t.Errorf("DeviceVector of an empty view: %#x, %v; want 0, nil", addr, err)
	}
}

// TestUnreachableViewFreesDeviceCopies: a view dropped without Release has
// its device copies freed once the garbage collector finds it unreachable.
func TestUnreachableViewFreesDeviceCopies(t *testing.T) {
	dev := &fakeDevice{}
	released := make(chan struct{}, 1)
	dev.onRelease = func() { released <- struct{}{} }
	func() {
		v, _ := NewArrayView(Extent1(8), make([]float32, 8))
		if _, err := v.onDevice(dev, AccessRead); err != nil {
			t.Fatal(err)
		}
	}()
	for range 20 {
		runtime.GC()
		select {
		case <-released:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the device copy of an unreachable view was never released")
}

func TestProjection(t *testing.T) {
	data := make([]float64, 2*3*4)
	for i := range data {
		data[i] = float64(i)
	}
	v, err := NewArrayView(Extent3(2, 3, 4), data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := v.Projection(1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Extent() != Extent2(3, 4) || m.At2(2, 3) != 23 || m.At2(0, 0) != 12 {
		t.Errorf("matrix 1 of a 2x3x4 view: extent %v, [2][3] = %v, [0][0] = %v", m.Extent(), m.At2(2, 3), m.At2(0, 0))
	}
	row, err := m.Projection(2)
	if err != nil {
		t.Fatal(err)
	}
	if row.Extent() != Extent1(4) || row.At1(1) != 21 {
		t.Errorf("row 2 of it: extent %v, [1] = %v", row.Extent(), row.At1(1))
	}
	if got := m.Strides(); len(got) != 2 || got[0] != 4 || got[1] != 1 {
		t.Errorf("Strides() = %v, want [4 1]", got)
	}
	// A projection of a section keeps the section's strides.
	s, err := v.Section(Index3(0, 1, 1), Extent3(2, 2, 2))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Projection(1)
	if err != nil {
		t.Fatal(err)
	}
	if ps.At2(1, 1) != 12+2*4+2 {
		t.Errorf("projection of a section: [1][1] = %v, want %v", ps.At2(1, 1), 12+2*4+2)
	}
	ps.Set2(0, 0, -1) // writes go to the shared data
	if data[12+4+1] != -1 {
		t.Error("a projection does not share its view's data")
	}
	for _, i := range []int{-1, 2} {
		if _, err := v.Projection(i); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("Projection(%d) = %v, want ErrOutOfRange", i, err)
		}
	}
	if _, err := row.Projection(0); !errors.Is(err, ErrInvalidExtent) {
		t.Errorf("projection of a rank-1 view: %v, want ErrInvalidExtent", err)
	}
	e, _ := NewArrayView(Extent3(2, 0, 3), []float64{})
	if p, err := e.Projection(1); err != nil || p.Extent().Size() != 0 {
		t.Errorf("projection of an empty view: %v, %v", p, err)
	}
}

// Offset is where a view starts in its slice: 0 whole, a section's or a
// projection's first element otherwise.
func TestArrayViewOffset(t *testing.T) {
	data := make([]float32, 2*4*6)
	v, err := NewArrayView(Extent3(2, 4, 6), data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Projection(1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Section(Index2(2, 3), Extent2(2, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  int
		want int
	}{{"whole", v.Offset(), 0}, {"projection 1", p.Offset(), 24}, {"its section from (2, 3)", s.Offset(), 24 + 2*6 + 3}} {
		if c.got != c.want {
			t.Errorf("%s: Offset() = %d, want %d", c.name, c.got, c.want)
		}
	}
	s.Set(Index2(0, 0), 7)
	if data[s.Offset()] != 7 {
		t.Errorf("the section's first element is not data[Offset()]")
	}
}
