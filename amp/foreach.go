package amp

import (
	"errors"
	"iter"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// parallelForEach runs kernel once for every point of ext on the CPU, over
// workers goroutines. Points are handed out in contiguous chunks: without
// barriers a thread needs no goroutine of its own.
func parallelForEach(workers int, ext Extent, kernel func(Index)) error {
	if err := ext.Validate(); err != nil {
		return err
	}
	total := ext.Size()
	if total == 0 {
		return nil
	}
	// About 8 chunks a worker balances uneven kernels without much hand-out traffic.
	chunk := max(1, total/(workers*8))
	workers = min(workers, (total+chunk-1)/chunk)

	var (
		nextChunk atomic.Int64
		fail      firstFailure
		wg        sync.WaitGroup
	)
	runChunk := func(lo, hi int) (err error) {
		idx := ext.indexAt(lo)
		returned := false
		defer func() {
			if r := recover(); r != nil {
				err = &KernelPanicError{Global: idx, Value: r, Stack: debug.Stack()}
			} else if !returned {
				// runtime.Goexit: this goroutine ends after its defers, so
				// record the failure here.
				fail.set(&KernelPanicError{Global: idx, Value: errGoexit, Stack: debug.Stack()})
			}
		}()
		for lin := lo; lin < hi; lin++ {
			kernel(idx)
			ext.increment(&idx)
		}
		returned = true
		return nil
	}
	for range workers {
		wg.Go(func() {
			for !fail.failed.Load() {
				lo := int(nextChunk.Add(int64(chunk))) - chunk
				if lo >= total {
					return
				}
				if err := runChunk(lo, min(lo+chunk, total)); err != nil {
					fail.set(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return fail.err
}

// errGoexit is the panic value reported for a kernel that called
// runtime.Goexit, which ends a goroutine without a panic.
var errGoexit = errors.New("kernel called runtime.Goexit (t.Fatal or t.FailNow in a kernel?)")

// firstFailure keeps the first error of a parallel run and tells the other
// workers to stop.
type firstFailure struct {
	failed atomic.Bool
	once   sync.Once
	err    error
}

func (f *firstFailure) set(err error) {
	f.failed.Store(true)
	f.once.Do(func() { f.err = err })
}

// increment moves idx to the next point of e in row-major order.
func (e Extent) increment(idx *Index) {
	for d := e.rank - 1; d >= 0; d-- {
		idx.v[d]++
		if idx.v[d] < e.n[d] || d == 0 {
			return
		}
		idx.v[d] = 0
	}
}

// parallelForEachTiled runs kernel over every point of te on the CPU. Tiles
// are handed out to workers goroutines; each worker runs one tile at a time,
// its threads as coroutines (iter.Pull) that all stay alive until the tile
// ends. A thread runs until it waits at a barrier or returns, then the next
// thread of the tile runs; when every thread waits, the barrier opens. This is
// C++ AMP's model with cooperative scheduling: barriers cost a coroutine
// switch, not an OS-level wake-up, and a tile that diverges is seen at once
// rather than hanging.
func parallelForEachTiled(workers int, te TiledExtent, kernel func(TiledIndex)) error {
	if err := te.Validate(); err != nil {
		return err
	}
	grid := te.Tiles()
	ntiles := grid.Size()
	if ntiles == 0 {
		return nil
	}
	workers = min(workers, ntiles)

	var (
		nextTile atomic.Int64
		fail     firstFailure
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			w := newTileWorker(te, kernel)
			returned := false
			defer func() {
				w.close()
				if !returned {
					// A kernel's runtime.Goexit came out of its coroutine
					// and is ending this goroutine: record why.
					err := w.goexit
					if err == nil {
						err = &KernelPanicError{Tiled: true, Value: errGoexit}
					}
					fail.set(err)
				}
			}()
			for !fail.failed.Load() {
				t := int(nextTile.Add(1)) - 1
				if t >= ntiles {
					break
				}
				if err := w.runTile(grid.indexAt(t)); err != nil {
					fail.set(err)
					break
				}
			}
			returned = true
		})
	}
	wg.Wait()
	return fail.err
}

// event is what a thread's coroutine reports when it gives control back.
type event uint8

const (
	eventBarrier event = iota + 1 // waiting at a barrier
	eventDone                     // the kernel returned
	eventPanic                    // the kernel panicked; thread.err says how
	eventAbort                    // unwound by close; the coroutine has ended
)

// abortSignal unwinds a thread parked at a barrier when its tile is abandoned.
type abortSignal struct{}

// thread is one thread of a tile: a coroutine reused from tile to tile.
type thread struct {
	w       *tileWorker
	next    func() (event, bool)
	stop    func()
	yield   func(event) bool
	ti      TiledIndex
	barrier Barrier
	waits   int // barriers waited at in the current tile
	statics int // TileStatic calls made in the current tile
	done    bool
	err     *KernelPanicError
}

// tileWorker runs tiles one after another with one set of threads.
type tileWorker struct {
	te          TiledExtent
	kernel      func(TiledIndex)
	threads     []*thread
	statics     []any // tile_static memory, by call order; reused from tile to tile
	staticsUsed int   // how many of statics the current tile has claimed
	goexit      error // set when a thread's kernel called runtime.Goexit
}

func newTileWorker(te TiledExtent, kernel func(TiledIndex)) *tileWorker {
	tileExt := te.TileExtent()
	w := &tileWorker{te: te, kernel: kernel, threads: make([]*thread, tileExt.Size())}
	for i := range w.threads {
		th := &thread{w: w}
		th.barrier.th = th
		th.ti = TiledIndex{Local: tileExt.indexAt(i), TileExtent: tileExt, Barrier: &th.barrier, th: th}
		th.next, th.stop = iter.Pull(th.loop)
		w.threads[i] = th
	}
	return w
}

// loop is the body of a thread's coroutine: run the kernel for the tile the
// worker set up, report, and wait for the next tile.
func (th *thread) loop(yield func(event) bool) {
	th.yield = yield
	for {
		ev := th.runKernel()
		if ev == eventAbort || !yield(ev) {
			return
		}
	}
}

func (th *thread) runKernel() (ev event) {
	returned := false
	defer func() {
		r := recover()
		if _, ok := r.(abortSignal); ok {
			ev = eventAbort
			return
		}
		if r == nil && !returned {
			// runtime.Goexit: it ends the coroutine and then the worker
			// goroutine, which reports this.
			r = errGoexit
			th.w.goexit = th.panicError(r)
			return
		}
		if r != nil {
			th.err = th.panicError(r)
			ev = eventPanic
		}
	}()
	th.w.kernel(th.ti)
	returned = true
	return eventDone
}

func (th *thread) panicError(value any) *KernelPanicError {
	return &KernelPanicError{Global: th.ti.Global, Tiled: true, Tile: th.ti.Tile, Local: th.ti.Local, Value: value, Stack: debug.Stack()}
}

// runTile runs every thread of the tile at tile to completion, round by
// round: in each round every live thread runs until its next barrier or its
// end.
func (w *tileWorker) runTile(tile Index) error {
	tileExt := w.te.TileExtent()
	origin := Index{rank: tile.rank}
	for d := 0; d < tile.rank; d++ {
		origin.v[d] = tile.v[d] * tileExt.n[d]
	}
	w.staticsUsed = 0
	for _, th := range w.threads {
		th.ti.Tile, th.ti.TileOrigin, th.ti.Global = tile, origin, origin.Add(th.ti.Local)
		th.waits, th.statics, th.done, th.err = 0, 0, false, nil
	}
	for live := len(w.threads); live > 0; {
		var exited, waiting *thread
		for _, th := range w.threads {
			if th.done {
				continue
			}
			switch ev, _ := th.next(); ev {
			case eventBarrier:
				if waiting == nil {
					waiting = th
				}
			case eventDone:
				th.done = true
				live--
				if exited == nil {
					exited = th
				}
			case eventPanic:
				return th.err
			default:
				panic("amp: tile thread ended unexpectedly")
			}
		}
		if exited != nil && waiting != nil {
			return &DivergenceError{Tile: tile, Exited: exited.ti.Local, Waiting: waiting.ti.Local, Returned: exited.waits}
		}
	}
	return nil
}

// close ends every thread's coroutine, unwinding those parked at a barrier,
// so that no goroutine outlives the ParallelForEachTiled call.
func (w *tileWorker) close() {
	for _, th := range w.threads {
		th.stop()
	}
}

// cpuWorkers is how many goroutines the CPU accelerator runs kernels on.
func cpuWorkers() int { return runtime.GOMAXPROCS(0) }
