package amp

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
)

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
	if raceEnabled {
		// Each live tile thread costs the race detector up to about half
		// a megabyte: two workers keep a test process under a gigabyte
		// whatever the machine's core count, and still run tiles in
		// parallel for the detector to watch.
		workers = min(workers, raceTileWorkers)
	}

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

// raceTileWorkers is how many tiles run at once under the race detector.
const raceTileWorkers = 2

// event is what a thread's coroutine reports when it gives control back.
type event uint8

const (
	eventBarrier event = iota + 1 // waiting at a barrier
	eventDone                     // the kernel returned
	eventPanic                    // the kernel panicked; thread.err says how
	eventAbort                    // unwound from a barrier because its tile was abandoned
	eventShuffle                  // waiting at a shuffle; thread.shfl says what it gives
)

// abortSignal unwinds a thread parked at a barrier when its tile is abandoned.
type abortSignal struct{}

// thread is one thread of a tile: a coroutine (see pull) that runs the
// kernel for one point after another, reused from tile to tile within one
// call and ended when the call ends.
type thread struct {
	w        *tileWorker
	next     func() (event, bool)
	stop     func()
	yield    func(event) bool
	ti       TiledIndex
	barrier  Barrier
	inKernel bool // parked at a barrier, inside the kernel
	waits    int  // barriers waited at in the current tile
	statics  int  // TileStatic calls made in the current tile
	done     bool // the kernel returned in the current tile
	err      *KernelPanicError
	// atShuffle: waiting at a shuffle, with shfl.
	atShuffle bool
	shfl      shuffleCall
}

// tileWorker runs tiles one after another with one set of threads.
type tileWorker struct {
	te          TiledExtent
	kernel      func(TiledIndex)
	threads     []*thread
	statics     []any // tile_static memory, by call order; reused from tile to tile
	staticsUsed int   // how many of statics the current tile has claimed
	staticBytes int   // bytes of tile_static memory the current tile has claimed
	goexit      error // set when a thread's kernel called runtime.Goexit
}

func newTileWorker(te TiledExtent, kernel func(TiledIndex)) *tileWorker {
	tileExt := te.TileExtent()
	w := &tileWorker{te: te, kernel: kernel, threads: make([]*thread, tileExt.Size())}
	for i := range w.threads {
		th := &thread{w: w}
		th.barrier.th = th
		th.ti = TiledIndex{Local: tileExt.indexAt(i), TileExtent: tileExt, Barrier: &th.barrier, th: th}
		th.next, th.stop = pull(th.loop)
		w.threads[i] = th
	}
	return w
}

// loop is the body of a thread's coroutine: run the kernel for the tile the
// worker set up, report, and wait for the next tile; until stopped.
func (th *thread) loop(yield func(event) bool) {
	th.yield = yield
	for {
		if ev := th.runKernel(); ev == eventAbort || !yield(ev) {
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
			// runtime.Goexit: it ends the thread, and the worker reports it.
			th.w.goexit = th.panicError(errGoexit)
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
	w.staticsUsed, w.staticBytes = 0, 0
	for _, th := range w.threads {
		th.ti.Tile, th.ti.TileOrigin, th.ti.Global = tile, origin, origin.Add(th.ti.Local)
		th.waits, th.statics, th.done, th.err, th.atShuffle = 0, 0, false, nil, false
	}
	// Each round runs every live thread until its next barrier or its end;
	// threads that stop at a shuffle instead get their results and run on,
	// on their own, until they too reach a barrier or the end.
	shuffles := false
	var exited, waiting *thread
	for live := len(w.threads); live > 0; {
		if !shuffles {
			exited, waiting = nil, nil
		}
		for _, th := range w.threads {
			if th.done || shuffles && !th.atShuffle {
				continue
			}
			th.atShuffle = false
			th.inKernel = true
			ev, ok := th.next()
			if !ok {
				// The thread ended without reporting: runtime.Goexit in
				// the kernel (where the coroutine does not pass it on to
				// this goroutine, as iter.Pull's does).
				th.inKernel, th.done = false, true
				return w.goexitError()
			}
			switch ev {
			case eventBarrier:
				if waiting == nil {
					waiting = th
				}
			case eventShuffle:
				th.atShuffle = true
			case eventDone:
				th.inKernel, th.done = false, true
				live--
				if exited == nil {
					exited = th
				}
			case eventPanic:
				th.inKernel = false
				return th.err
			default:
				panic("amp: tile thread ended unexpectedly")
			}
		}
		shuffles = false
		for _, th := range w.threads {
			shuffles = shuffles || th.atShuffle
		}
		if shuffles {
			if err := w.resolveShuffles(tile); err != nil {
				return err
			}
			continue
		}
		if exited != nil && waiting != nil {
			return &DivergenceError{Tile: tile, Exited: exited.ti.Local, Waiting: waiting.ti.Local, Returned: exited.waits}
		}
	}
	return nil
}

// goexitError is the error for a kernel that called runtime.Goexit.
func (w *tileWorker) goexitError() error {
	if w.goexit != nil {
		return w.goexit
	}
	return &KernelPanicError{Tiled: true, Value: errGoexit}
}

// close ends every thread, unwinding those parked at a barrier of an
// abandoned tile, so that no goroutine or kernel outlives the
// ParallelForEachTiled call. A thread inside the kernel is stopped from a
// goroutine of its own: should its kernel call runtime.Goexit while it
// unwinds (a deferred t.FailNow, say), that ends the helper, not this loop,
// and the other threads are still ended.
func (w *tileWorker) close() {
	for _, th := range w.threads {
		if !th.inKernel {
			th.stop()
			continue
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			th.stop()
		}()
		<-done
	}
}
