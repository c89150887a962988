package amp

import (
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"unsafe"
)

// TestOverlapsByElements compares Overlaps with a brute-force search for a
// shared element, over random sections of one slice: views side by side in
// one slice share no element even though the slice spans both.
func TestOverlapsByElements(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	data := make([]float32, 600)
	parents := []*ArrayView[float32]{}
	for _, e := range []Extent{Extent1(600), Extent2(20, 30), Extent2(1, 600), Extent2(600, 1), Extent3(6, 10, 10), Extent3(4, 1, 150)} {
		v, err := NewArrayView(e, data)
		if err != nil {
			t.Fatal(err)
		}
		parents = append(parents, v)
	}
	// Views over shifted slices of the same array, too.
	for _, shift := range []int{1, 29, 31, 300} {
		v, err := NewArrayView(Extent2(9, 30), data[shift:])
		if err != nil {
			t.Fatal(err)
		}
		parents = append(parents, v)
	}
	randomSection := func(p *ArrayView[float32]) *ArrayView[float32] {
		e := p.Extent()
		var origin, ext [MaxRank]int
		for d := range e.Rank() {
			origin[d] = r.IntN(e.At(d))
			ext[d] = r.IntN(e.At(d)-origin[d]) + 1
		}
		var s *ArrayView[float32]
		var err error
		switch e.Rank() {
		case 1:
			s, err = p.Section(Index1(origin[0]), Extent1(ext[0]))
		case 2:
			s, err = p.Section(Index2(origin[0], origin[1]), Extent2(ext[0], ext[1]))
		default:
			s, err = p.Section(Index3(origin[0], origin[1], origin[2]), Extent3(ext[0], ext[1], ext[2]))
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	positions := func(v *ArrayView[float32]) map[uintptr]bool {
		set := map[uintptr]bool{}
		idx := Index{rank: v.ext.rank}
		for range v.ext.Size() {
			set[uintptr(unsafe.Pointer(&v.host[v.pos(idx)]))] = true
			v.ext.increment(&idx)
		}
		return set
	}
	disjoint, shared := 0, 0
	for range 3000 {
		a := randomSection(parents[r.IntN(len(parents))])
		b := randomSection(parents[r.IntN(len(parents))])
		want := false
		pa := positions(a)
		for p := range positions(b) {
			if pa[p] {
				want = true
				break
			}
		}
		if got := a.Overlaps(b); got != want {
			t.Fatalf("%v at offset %d (strides %v) and %v at offset %d (strides %v): Overlaps = %v, want %v",
				a.ext, a.offset, a.stride, b.ext, b.offset, b.stride, got, want)
		}
		if b.Overlaps(a) != want {
			t.Fatalf("Overlaps is not symmetric")
		}
		if want {
			shared++
		} else {
			disjoint++
		}
	}
	if disjoint < 300 || shared < 300 {
		t.Fatalf("too few cases of one kind: %d disjoint, %d shared", disjoint, shared)
	}
}

// TestTileStaticLimit: asking for more tile-static memory than a tile may
// have is an error from ParallelForEachTiled, not the end of the process.
func TestTileStaticLimit(t *testing.T) {
	checkNoLeak(t)
	cases := []struct {
		name   string
		kernel func(TiledIndex)
		ok     bool
	}{
		{"2^36 float32", func(ti TiledIndex) { TileStatic[float32](ti, 1<<36) }, false},
		{"max int64s", func(ti TiledIndex) { TileStatic[int64](ti, int(^uint(0)>>1)) }, false},
		{"negative", func(ti TiledIndex) { TileStatic[float64](ti, -1) }, false},
		{"exactly the limit", func(ti TiledIndex) { TileStatic[float64](ti, MaxTileStaticBytes/8) }, true},
		{"the limit in two calls", func(ti TiledIndex) {
			TileStatic[float32](ti, MaxTileStaticBytes/8)
			TileStatic[float64](ti, MaxTileStaticBytes/16)
		}, true},
		{"one byte over in the second call", func(ti TiledIndex) {
			TileStatic[float32](ti, MaxTileStaticBytes/4)
			TileStatic[byte](ti, 1)
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Several tiles on each worker: the budget is per tile.
			err := ParallelForEachTiled(Extent1(64).Tile(8), c.kernel)
			if c.ok {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				return
			}
			var kp *KernelPanicError
			if !errors.Is(err, ErrTileStaticLimit) || !errors.As(err, &kp) {
				t.Fatalf("got %v, want a kernel error wrapping ErrTileStaticLimit", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("message %q is not one line", err)
			}
		})
	}
}

// TestZeroAcceleratorView: a view that belongs to no accelerator is an
// error wherever it is used, not a nil dereference.
func TestZeroAcceleratorView(t *testing.T) {
	for name, v := range map[string]*AcceleratorView{"zero": {}, "nil": nil, "of a zero Accelerator": (&Accelerator{}).NewView()} {
		if err := v.ParallelForEach(Extent1(4), func(Index) {}); !errors.Is(err, ErrNoAccelerator) {
			t.Errorf("%s view: ParallelForEach: got %v, want ErrNoAccelerator", name, err)
		}
		if err := v.ParallelForEachTiled(Extent1(4).Tile(2), func(TiledIndex) {}); !errors.Is(err, ErrNoAccelerator) {
			t.Errorf("%s view: ParallelForEachTiled: got %v, want ErrNoAccelerator", name, err)
		}
		if err := v.Wait(); !errors.Is(err, ErrNoAccelerator) {
			t.Errorf("%s view: Wait: got %v, want ErrNoAccelerator", name, err)
		}
		data := []float32{1, 2, 3, 4}
		av, _ := NewArrayView(Extent2(2, 2), data)
		if _, _, err := av.DeviceMatrix(v, AccessRead); !errors.Is(err, ErrNoAccelerator) {
			t.Errorf("%s view: DeviceMatrix: got %v, want ErrNoAccelerator", name, err)
		}
	}
	if v := (*AcceleratorView)(nil); v.Accelerator() != nil {
		t.Error("a nil view's Accelerator is not nil")
	}
	if err := CPU().DefaultView().Check(); err != nil {
		t.Errorf("the CPU's default view: %v", err)
	}
}

// TestGoexitWhileUnwinding: a kernel whose deferred function calls
// runtime.Goexit (a t.FailNow in a recover, say) while its tile is
// abandoned must not keep the other threads of the tile parked for ever.
func TestGoexitWhileUnwinding(t *testing.T) {
	checkNoLeak(t)
	err := ParallelForEachTiled(Extent1(64).Tile(8), func(ti TiledIndex) {
		defer func() {
			if r := recover(); r != nil {
				runtime.Goexit()
			}
		}()
		if ti.Local.At(0) == 3 {
			return // diverges: the others wait at the barrier
		}
		ti.Barrier.Wait()
	})
	if err == nil {
		t.Fatal("a diverging tile passed")
	}
}

// TestTiledMemoryIsBounded runs many tiled calls and checks that the
// process's resident memory stops growing: under the race detector every
// coroutine that ends leaves state behind, which once grew a test process
// by 20 MB a call (tile threads are goroutines under the detector).
func TestTiledMemoryIsBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	call := func() {
		err := ParallelForEachTiled(Extent2(32, 32).Tile(8, 8), func(ti TiledIndex) {
			s := TileStatic[float32](ti, 64)
			s[ti.Local.At(0)*8+ti.Local.At(1)] = 1
			ti.Barrier.Wait()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The race detector's state for each thread grows to its cap over the
	// first few hundred calls.
	for range 300 {
		call()
	}
	runtime.GC()
	before := residentKB(t)
	const calls = 200
	for range calls {
		call()
	}
	runtime.GC()
	grew := residentKB(t) - before
	// 128 threads a call (two workers); before the fix the race detector
	// kept about 5 KB a thread: 130 MB over these calls.
	if grew > 40<<10 {
		t.Fatalf("resident memory grew by %d MB over %d tiled calls", grew>>10, calls)
	}
}

func residentKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Skip(err)
			}
			return kb
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestTiledInSynctestBubble: tiled kernels work inside a testing/synctest
// bubble, before and after calls outside one: no tile thread outlives its
// call, so none crosses into or out of a bubble.
func TestTiledInSynctestBubble(t *testing.T) {
	kernel := func(ti TiledIndex) { ti.Barrier.Wait() }
	if err := ParallelForEachTiled(Extent1(64).Tile(8), kernel); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		if err := ParallelForEachTiled(Extent1(64).Tile(8), kernel); err != nil {
			t.Fatal(err)
		}
	})
	if err := ParallelForEachTiled(Extent1(64).Tile(8), kernel); err != nil {
		t.Fatal(err)
	}
}
