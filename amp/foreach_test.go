package amp

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// checkNoLeak fails t if goroutines started during the test are still alive
// shortly after it.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines left behind:\n%s", n-before, buf[:runtime.Stack(buf, true)])
		}
	})
}

func TestParallelForEachVisitsEveryPointOnce(t *testing.T) {
	checkNoLeak(t)
	for _, ext := range []Extent{Extent1(1), Extent1(1000), Extent2(7, 13), Extent2(1, 1), Extent3(3, 5, 11), Extent2(64, 64)} {
		counts := make([]atomic.Int32, ext.Size())
		err := ParallelForEach(ext, func(idx Index) {
			if !ext.Contains(idx) {
				panic("index outside extent: " + idx.String())
			}
			lin := 0
			for d := 0; d < ext.Rank(); d++ {
				lin = lin*ext.At(d) + idx.At(d)
			}
			counts[lin].Add(1)
		})
		if err != nil {
			t.Fatalf("%v: %v", ext, err)
		}
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Fatalf("%v: point %v visited %d times", ext, ext.indexAt(i), c)
			}
		}
	}
}

func TestParallelForEachEmptyAndInvalid(t *testing.T) {
	calls := 0
	if err := ParallelForEach(Extent2(0, 5), func(Index) { calls++ }); err != nil || calls != 0 {
		t.Fatalf("empty extent: err %v, %d calls", err, calls)
	}
	if err := ParallelForEach(Extent2(-1, 5), func(Index) {}); !errors.Is(err, ErrInvalidExtent) {
		t.Fatalf("negative extent: got %v, want ErrInvalidExtent", err)
	}
	if err := ParallelForEach(Extent{}, func(Index) {}); !errors.Is(err, ErrInvalidExtent) {
		t.Fatalf("zero Extent: got %v, want ErrInvalidExtent", err)
	}
}

func TestParallelForEachPanicNamesThread(t *testing.T) {
	checkNoLeak(t)
	err := ParallelForEach(Extent2(40, 50), func(idx Index) {
		if idx.At(0) == 17 && idx.At(1) == 23 {
			panic("boom")
		}
	})
	var kp *KernelPanicError
	if !errors.As(err, &kp) || !errors.Is(err, ErrKernelPanic) {
		t.Fatalf("got %v, want a *KernelPanicError", err)
	}
	if kp.Global != Index2(17, 23) || kp.Value != "boom" {
		t.Fatalf("panic reported at %v with %v, want (17, 23) and boom", kp.Global, kp.Value)
	}
	if !strings.Contains(err.Error(), "(17, 23)") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("message %q should be one line naming (17, 23)", err)
	}
}

func TestParallelForEachPanicWithError(t *testing.T) {
	sentinel := errors.New("my failure")
	err := ParallelForEach(Extent1(10), func(idx Index) { panic(sentinel) })
	if !errors.Is(err, sentinel) || !errors.Is(err, ErrKernelPanic) {
		t.Fatalf("got %v, want both ErrKernelPanic and the panic's error", err)
	}
}

func TestTiledIndexFields(t *testing.T) {
	checkNoLeak(t)
	ext := Extent2(6, 8)
	te := ext.Tile(3, 2)
	seen := make([]atomic.Int32, ext.Size())
	err := ParallelForEachTiled(te, func(ti TiledIndex) {
		g, l, tile, o := ti.Global, ti.Local, ti.Tile, ti.TileOrigin
		if ti.TileExtent != Extent2(3, 2) {
			panic("wrong tile extent " + ti.TileExtent.String())
		}
		for d := 0; d < 2; d++ {
			if o.At(d) != tile.At(d)*ti.TileExtent.At(d) || g.At(d) != o.At(d)+l.At(d) {
				panic("inconsistent tiled index at " + g.String())
			}
		}
		seen[g.At(0)*8+g.At(1)].Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("point %v visited %d times", ext.indexAt(i), seen[i].Load())
		}
	}
	if got := te.Tiles(); got != Extent2(2, 4) {
		t.Fatalf("Tiles() = %v, want [2 x 4]", got)
	}
}

// TestBarrierOrdering checks tile_barrier::wait's promise: no thread passes
// the k-th barrier before every thread of its tile has reached it, and what a
// thread wrote before a barrier is seen by all after it.
func TestBarrierOrdering(t *testing.T) {
	checkNoLeak(t)
	const phases = 5
	for _, tile := range [][2]int{{1, 1}, {4, 4}, {8, 16}, {32, 32}, {1, 7}} {
		ext := Extent2(tile[0]*3, tile[1]*2)
		err := ParallelForEachTiled(ext.Tile(tile[0], tile[1]), func(ti TiledIndex) {
			n := ti.TileExtent.Size()
			me := ti.Local.At(0)*ti.TileExtent.At(1) + ti.Local.At(1)
			phase := TileStatic[int](ti, n)
			for p := 1; p <= phases; p++ {
				phase[me] = p
				ti.Barrier.Wait()
				for other, q := range phase {
					if q != p {
						panic("thread " + ti.Local.String() + " passed barrier while thread " + ext.indexAt(other).String() + " lags")
					}
				}
				ti.Barrier.Wait()
			}
		})
		if err != nil {
			t.Fatalf("tile %v: %v", tile, err)
		}
	}
}

// TestTileStaticSharing runs the tile_static example of "Using Tiles" in
// Microsoft's C++ AMP documentation, summing where it averages: each thread
// of a 2x2 tile copies its element into tile-static memory, and thread
// (0, 0) sums the tile into the tile's origin. With the barrier the sums are
// right; without it thread (0, 0) reads the tile before the others have
// written it, which the cooperative scheduler makes happen every time: the
// race the barrier prevents.
func TestTileStaticSharing(t *testing.T) {
	run := func(withBarrier bool) []int32 {
		data := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
		av, err := NewArrayView(Extent2(2, 6), data)
		if err != nil {
			t.Fatal(err)
		}
		err = ParallelForEachTiled(av.Extent().Tile(2, 2), func(ti TiledIndex) {
			tile := TileStatic[int32](ti, 4)
			tile[ti.Local.At(0)*2+ti.Local.At(1)] = av.At(ti.Global)
			if withBarrier {
				ti.Barrier.Wait()
			}
			if ti.Local == Index2(0, 0) {
				av.Set(ti.TileOrigin, tile[0]+tile[1]+tile[2]+tile[3])
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return []int32{data[0], data[2], data[4]}
	}
	if got, want := run(true), []int32{1 + 2 + 7 + 8, 3 + 4 + 9 + 10, 5 + 6 + 11 + 12}; !equal(got, want) {
		t.Fatalf("with barrier: tile sums %v, want %v", got, want)
	}
	if got, want := run(false), []int32{1, 3, 5}; !equal(got, want) {
		t.Fatalf("without barrier: tile sums %v, want %v (only thread (0,0)'s own element)", got, want)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTileStaticIsPerTileAndZeroed(t *testing.T) {
	ext := Extent1(64)
	sums := make([]int, 8)
	err := ParallelForEachTiled(ext.Tile(8), func(ti TiledIndex) {
		s := TileStatic[int](ti, 1)
		ti.Barrier.Wait()
		if ti.Local.At(0) == 0 {
			s[0] += ti.Tile.At(0) // zeroed per tile, so this is exactly the tile number
		}
		ti.Barrier.Wait()
		if ti.Local.At(0) == 7 {
			sums[ti.Tile.At(0)] = s[0]
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sums {
		if s != i {
			t.Fatalf("tile %d saw %d in its tile-static memory, want %d", i, s, i)
		}
	}
}

func TestTileStaticMismatchIsAnError(t *testing.T) {
	checkNoLeak(t)
	err := ParallelForEachTiled(Extent1(4).Tile(4), func(ti TiledIndex) {
		if ti.Local.At(0) == 2 {
			TileStatic[float32](ti, 3)
		} else {
			TileStatic[float32](ti, 4)
		}
		ti.Barrier.Wait()
	})
	var kp *KernelPanicError
	if !errors.As(err, &kp) || kp.Local != Index1(2) {
		t.Fatalf("got %v, want a kernel panic in local thread (2)", err)
	}
}

func TestBarrierDivergenceIsAnErrorNotAHang(t *testing.T) {
	checkNoLeak(t)
	cases := []struct {
		name   string
		kernel func(TiledIndex)
		exited Index
	}{
		{"early return", func(ti TiledIndex) {
			if ti.Global == Index2(5, 6) {
				return
			}
			ti.Barrier.Wait()
		}, Index2(1, 2)},
		{"extra barrier", func(ti TiledIndex) {
			ti.Barrier.Wait()
			if ti.Local.At(0) == 3 {
				ti.Barrier.Wait()
			}
		}, Index2(0, 0)},
		{"barrier in a data-dependent loop", func(ti TiledIndex) {
			for i := 0; i < ti.Local.At(1); i++ {
				ti.Barrier.Wait()
			}
		}, Index2(0, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- ParallelForEachTiled(Extent2(8, 8).Tile(4, 4), c.kernel) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ParallelForEachTiled hung on a divergent barrier")
			}
			var de *DivergenceError
			if !errors.As(err, &de) || !errors.Is(err, ErrBarrierDivergence) {
				t.Fatalf("got %v, want a *DivergenceError", err)
			}
			if de.Exited != c.exited {
				t.Errorf("exited thread %v, want %v (%v)", de.Exited, c.exited, err)
			}
			if !strings.Contains(err.Error(), "tile ") || !strings.Contains(err.Error(), c.exited.String()) {
				t.Errorf("message %q should name the tile and the thread", err)
			}
		})
	}
}

func TestTiledPanicNamesThreadAndUnwindsWaiters(t *testing.T) {
	checkNoLeak(t)
	err := ParallelForEachTiled(Extent2(16, 16).Tile(4, 4), func(ti TiledIndex) {
		ti.Barrier.Wait()
		if ti.Global == Index2(9, 14) {
			var s []int
			_ = s[ti.Local.At(0)] // index out of range
		}
		ti.Barrier.Wait()
	})
	var kp *KernelPanicError
	if !errors.As(err, &kp) {
		t.Fatalf("got %v, want a *KernelPanicError", err)
	}
	if kp.Global != Index2(9, 14) || kp.Tile != Index2(2, 3) || kp.Local != Index2(1, 2) {
		t.Fatalf("panic reported at global %v tile %v local %v", kp.Global, kp.Tile, kp.Local)
	}
	if !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("message %q should carry the panic value", err)
	}
}

func TestPadAndTruncate(t *testing.T) {
	ext := Extent2(10, 7)
	te := ext.Tile(4, 4)
	if err := ParallelForEachTiled(te, func(TiledIndex) {}); !errors.Is(err, ErrInvalidComputeDomain) {
		t.Fatalf("undivided extent: got %v, want ErrInvalidComputeDomain", err)
	}
	if got := te.Pad().Extent(); got != Extent2(12, 8) {
		t.Fatalf("Pad: %v, want [12 x 8]", got)
	}
	if got := te.Truncate().Extent(); got != Extent2(8, 4) {
		t.Fatalf("Truncate: %v, want [8 x 4]", got)
	}
	var inside, outside atomic.Int32
	err := ParallelForEachTiled(te.Pad(), func(ti TiledIndex) {
		if ext.Contains(ti.Global) {
			inside.Add(1)
		} else {
			outside.Add(1)
		}
	})
	if err != nil || inside.Load() != 70 || outside.Load() != 96-70 {
		t.Fatalf("padded run: err %v, %d inside, %d outside; want 70 and 26", err, inside.Load(), outside.Load())
	}
	var visited atomic.Int32
	if err := ParallelForEachTiled(te.Truncate(), func(TiledIndex) { visited.Add(1) }); err != nil || visited.Load() != 32 {
		t.Fatalf("truncated run: err %v, %d visited, want 32", err, visited.Load())
	}
	if got := Extent1(3).Tile(4).Truncate().Extent(); got != Extent1(0) {
		t.Fatalf("truncating below one tile: %v, want [0]", got)
	}
}

func TestInvalidTiles(t *testing.T) {
	for _, te := range []TiledExtent{
		Extent2(64, 64).Tile(64, 32), // 2048 threads
		Extent2(8, 8).Tile(8),        // too few tile sizes
		Extent1(8).Tile(0),           // empty tile
		Extent1(8).Tile(-2),
		Extent1(2048).Tile(2048),
	} {
		err := ParallelForEachTiled(te, func(TiledIndex) {})
		if !errors.Is(err, ErrInvalidComputeDomain) {
			t.Errorf("%v tiled %v: got %v, want ErrInvalidComputeDomain", te.Extent(), te.TileExtent(), err)
		}
	}
	if err := ParallelForEachTiled(Extent1(1024).Tile(1024), func(TiledIndex) {}); err != nil {
		t.Errorf("a 1024-thread tile: %v", err)
	}
}

func TestParallelForEachOnOtherAcceleratorIsUnsupported(t *testing.T) {
	gpu := &Accelerator{path: "fake:0", kind: KindCUDA}
	v := gpu.NewView()
	if err := v.ParallelForEach(Extent1(4), func(Index) {}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("got %v, want ErrUnsupported", err)
	}
	if err := v.ParallelForEachTiled(Extent1(4).Tile(2), func(TiledIndex) {}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("got %v, want ErrUnsupported", err)
	}
}

// TestGoexitInKernelIsAnError: runtime.Goexit (t.FailNow in a kernel, say)
// ends the goroutine without a panic; the run must fail, not return nil with
// work undone.
func TestGoexitInKernelIsAnError(t *testing.T) {
	checkNoLeak(t)
	err := ParallelForEach(Extent1(1000), func(idx Index) {
		if idx.At(0) == 10 {
			runtime.Goexit()
		}
	})
	var kp *KernelPanicError
	if !errors.As(err, &kp) || kp.Global != Index1(10) || !errors.Is(err, errGoexit) {
		t.Fatalf("flat: got %v, want a kernel error at (10) naming Goexit", err)
	}
	err = ParallelForEachTiled(Extent2(8, 8).Tile(4, 4), func(ti TiledIndex) {
		ti.Barrier.Wait()
		if ti.Global == Index2(5, 6) {
			runtime.Goexit()
		}
		ti.Barrier.Wait()
	})
	if !errors.As(err, &kp) || kp.Global != Index2(5, 6) || !errors.Is(err, errGoexit) {
		t.Fatalf("tiled: got %v, want a kernel error at (5, 6) naming Goexit", err)
	}
}

// BenchmarkBarrier measures what a barrier costs on the CPU: one tile of 256
// threads waits b.N times; the figure is per thread and wait.
//
//	go test -run '^$' -bench Barrier ./amp/
func BenchmarkBarrier(b *testing.B) {
	const threads = 256
	n := b.N
	b.ResetTimer()
	err := ParallelForEachTiled(Extent1(threads).Tile(threads), func(ti TiledIndex) {
		for range n {
			ti.Barrier.Wait()
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/threads, "ns/thread-wait")
}
