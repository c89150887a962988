package amp

import (
	"errors"
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

// cpuWorkers is how many goroutines the CPU accelerator runs kernels on.
func cpuWorkers() int { return runtime.GOMAXPROCS(0) }
