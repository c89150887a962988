package amp

import (
	"iter"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
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
		// Each tile thread costs the race detector about half a megabyte
		// (see idleThreads): two workers keep a test process near 1 GB
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
				w.release()
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
	eventAbort                    // unwound from a barrier because its tile was abandoned
)

// abortSignal unwinds a thread parked at a barrier when its tile is abandoned.
type abortSignal struct{}

// threadState is where a thread's coroutine is parked.
type threadState uint8

const (
	// threadIdle: between kernels, parked after reporting how the last one
	// ended (or not started yet). Resuming it runs the kernel of its worker.
	threadIdle threadState = iota
	// threadInKernel: inside the kernel, parked at a barrier.
	threadInKernel
	// threadDead: the coroutine has ended (runtime.Goexit, or stopped).
	threadDead
)

// thread is one thread of a tile: a coroutine that runs the kernel for one
// point after another. Threads outlive the call that started them: they are
// kept idle for the next call (see idleThreads).
type thread struct {
	w       *tileWorker // the worker it runs for; nil while idle
	next    func() (event, bool)
	stop    func()
	yield   func(event) bool
	ti      TiledIndex
	barrier Barrier
	state   threadState
	waits   int  // barriers waited at in the current tile
	statics int  // TileStatic calls made in the current tile
	done    bool // the kernel returned in the current tile
	err     *KernelPanicError
}

// tileWorker runs tiles one after another with one set of threads.
type tileWorker struct {
	te          TiledExtent
	kernel      func(TiledIndex)
	threads     []*thread
	statics     []any // tile_static memory, by call order; reused from tile to tile
	staticsUsed int   // how many of statics the current tile has claimed
	staticBytes int   // bytes of tile_static memory the current tile has claimed
	aborting    bool  // set when the tile is abandoned: threads at barriers unwind
	goexit      error // set when a thread's kernel called runtime.Goexit
}

func newTileWorker(te TiledExtent, kernel func(TiledIndex)) *tileWorker {
	tileExt := te.TileExtent()
	w := &tileWorker{te: te, kernel: kernel, threads: getThreads(tileExt.Size())}
	for i, th := range w.threads {
		th.w = w
		th.ti = TiledIndex{Local: tileExt.indexAt(i), TileExtent: tileExt, Barrier: &th.barrier, th: th}
	}
	return w
}

// loop is the body of a thread's coroutine: run the kernel of the worker
// the thread belongs to, report how it ended, and wait to be resumed for the
// next point; until stopped.
func (th *thread) loop(yield func(event) bool) {
	th.yield = yield
	for {
		if !yield(th.runKernel()) {
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
			th.state = threadDead
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
		th.waits, th.statics, th.done, th.err = 0, 0, false, nil
	}
	for live := len(w.threads); live > 0; {
		var exited, waiting *thread
		for _, th := range w.threads {
			if th.done {
				continue
			}
			th.state = threadInKernel
			switch ev, _ := th.next(); ev {
			case eventBarrier:
				if waiting == nil {
					waiting = th
				}
			case eventDone:
				th.state = threadIdle
				th.done = true
				live--
				if exited == nil {
					exited = th
				}
			case eventPanic:
				th.state = threadIdle
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

// maxUnwind is how many times release resumes a thread that keeps waiting at
// barriers after being told to unwind (a kernel that recovers the unwinding
// panic and waits again) before it gives up on reusing it.
const maxUnwind = 16

// release unwinds the threads still parked at a barrier of an abandoned tile
// and hands the live threads back for reuse, so that no work of this call
// goes on after it returns.
func (w *tileWorker) release() {
	w.aborting = true
	reusable := w.threads[:0]
	for _, th := range w.threads {
		for tries := 0; th.state == threadInKernel && tries < maxUnwind; tries++ {
			if ev, ok := th.next(); !ok {
				th.state = threadDead
			} else if ev != eventBarrier {
				th.state = threadIdle
			}
		}
		if th.state == threadInKernel {
			th.stop()
			th.state = threadDead
		}
		if th.state == threadDead {
			continue
		}
		th.w, th.ti, th.err = nil, TiledIndex{}, nil
		reusable = append(reusable, th)
	}
	putThreads(reusable)
	w.threads = nil
}

// Idle threads are kept for the next call rather than ended: starting a
// coroutine costs more than resuming one, and under the race detector every
// coroutine that ends leaves its detector state behind (Go 1.26's runtime
// does not call racegoend when a coroutine exits: about 0.5 MB each once it
// has run a while), which grew a test process by 20 MB a call and past 15 GB
// a test run. The pool holds at most what one call with the largest tiles
// can use on every worker. Without the race detector it is emptied after
// idleThreadTTL without use; with it, it is kept, since ending the threads
// would leak more than keeping them costs.
var idleThreads struct {
	sync.Mutex
	threads  []*thread
	lastUsed time.Time
	trimming bool // a trim is scheduled
}

// idleThreadTTL is how long idle threads are kept when no tiled kernel runs.
const idleThreadTTL = 10 * time.Second

// getThreads returns n idle threads, making new ones when too few are kept.
func getThreads(n int) []*thread {
	ts := make([]*thread, 0, n)
	idleThreads.Lock()
	have := len(idleThreads.threads)
	take := min(n, have)
	ts = append(ts, idleThreads.threads[have-take:]...)
	clear(idleThreads.threads[have-take:])
	idleThreads.threads = idleThreads.threads[:have-take]
	idleThreads.lastUsed = time.Now()
	idleThreads.Unlock()
	for len(ts) < n {
		th := &thread{}
		th.barrier.th = th
		th.next, th.stop = iter.Pull(th.loop)
		ts = append(ts, th)
	}
	return ts
}

// putThreads keeps idle threads for reuse, up to maxIdleThreads, and ends
// the rest.
func putThreads(ts []*thread) {
	idleThreads.Lock()
	keep := min(len(ts), max(0, maxIdleThreads()-len(idleThreads.threads)))
	idleThreads.threads = append(idleThreads.threads, ts[:keep]...)
	idleThreads.lastUsed = time.Now()
	if !raceEnabled && !idleThreads.trimming && len(idleThreads.threads) > 0 {
		idleThreads.trimming = true
		time.AfterFunc(idleThreadTTL, trimIdleThreads)
	}
	idleThreads.Unlock()
	for _, th := range ts[keep:] {
		th.stop()
	}
}

// maxIdleThreads is how many idle threads are kept: enough for one call
// with the largest tiles on every worker.
func maxIdleThreads() int {
	if raceEnabled {
		return raceTileWorkers * MaxTileThreads
	}
	return cpuWorkers() * MaxTileThreads
}

// raceTileWorkers is how many tiles run at once under the race detector.
const raceTileWorkers = 2

// trimIdleThreads ends the idle threads if none has been used for
// idleThreadTTL, and otherwise looks again when that much time will have
// passed since the last use.
func trimIdleThreads() {
	idleThreads.Lock()
	if wait := idleThreadTTL - time.Since(idleThreads.lastUsed); wait > 0 {
		time.AfterFunc(wait, trimIdleThreads)
		idleThreads.Unlock()
		return
	}
	ts := idleThreads.threads
	idleThreads.threads = nil
	idleThreads.trimming = false
	idleThreads.Unlock()
	for _, th := range ts {
		th.stop()
	}
}

// idleThreadCount is how many idle threads are kept, for tests that count
// goroutines.
func idleThreadCount() int {
	idleThreads.Lock()
	defer idleThreads.Unlock()
	return len(idleThreads.threads)
}
