package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTeamWorkspaceNeverShared claims and releases workspaces from many
// goroutines at once, and fails if two holders ever have the same one, or
// if more CPU workspaces exist than GOMAXPROCS allows.
func TestTeamWorkspaceNeverShared(t *testing.T) {
	var mu sync.Mutex
	held := map[*workspace]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 4*runtime.GOMAXPROCS(0); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				ws, slot := teamWorkspace()
				if slot != nil && ws != &slot.ws {
					t.Error("a CPU workspace's slot does not hold it")
				}
				mu.Lock()
				if held[ws] {
					t.Error("one workspace handed to two threads at once")
				}
				held[ws] = true
				mu.Unlock()
				runtime.Gosched() // let others claim while this one holds it
				mu.Lock()
				delete(held, ws)
				mu.Unlock()
				releaseTeamWorkspace(ws, slot)
			}
		}()
	}
	wg.Wait()
	made := 0
	for i := range cpuWorkspaces.slots {
		if cpuWorkspaces.slots[i].Load() != nil {
			made++
		}
	}
	if made > runtime.GOMAXPROCS(0) || made != int(cpuWorkspaces.made.Load()) {
		t.Errorf("%d CPU workspaces exist, counted %d, GOMAXPROCS %d", made, cpuWorkspaces.made.Load(), runtime.GOMAXPROCS(0))
	}
}

// BenchmarkCurrentCPU times the question every thread of a team asks
// before it packs (see teamWorkspace).
func BenchmarkCurrentCPU(b *testing.B) {
	for b.Loop() {
		currentCPU()
	}
}

// TestIdleSpinFor: workers spin twice the last gap between calls, at least
// idleSpin and at most maxIdleSpin, and only idleSpin after a gap too long
// to cover or before any gap is known.
func TestIdleSpinFor(t *testing.T) {
	for _, tc := range []struct{ gap, want time.Duration }{
		{0, idleSpin},
		{-time.Millisecond, idleSpin}, // calls that overlapped
		{time.Millisecond, idleSpin},
		{idleSpin, 2 * idleSpin},
		{maxIdleSpin / 2, maxIdleSpin},
		{maxIdleSpin, maxIdleSpin},
		{maxIdleSpin + 1, idleSpin},
		{time.Hour, idleSpin},
	} {
		if got := idleSpinFor(tc.gap); got != tc.want {
			t.Errorf("idleSpinFor(%v) = %v, want %v", tc.gap, got, tc.want)
		}
	}
}

// TestWokenWorkerSpins: a sleeping worker woken for a call that the caller
// took back before the worker ran spins again rather than going straight
// back to sleep, where every later call would pay to wake it again.
func TestWokenWorkerSpins(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	ws := takeWorkers(1, nil)
	if len(ws) != 1 {
		t.Skip("no idle worker")
	}
	w := ws[0]
	defer w.busy.Store(false)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for start := time.Now(); !cond(); time.Sleep(100 * time.Microsecond) {
			if time.Since(start) > 2*time.Second {
				t.Fatalf("worker never %s", what)
			}
		}
	}
	callGap.Store(0) // the least idle spin
	waitFor("fell asleep", w.sleeper.asleep)
	c := new(call)
	w.give(c, 1)
	if w.next.CompareAndSwap(c, nil) { // taken back before the worker ran
		waitFor("woke", func() bool { return !w.sleeper.asleep() })
	}
	waitFor("fell asleep again", w.sleeper.asleep)
}

// TestRunJob: runJob runs the job on the caller and on up to the number of
// helpers asked for, every run over before it returns; with no idle worker
// the caller runs it alone.
func TestRunJob(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	var started, finished atomic.Int32
	job := func() {
		started.Add(1)
		time.Sleep(2 * time.Millisecond) // long enough for every helper to join
		finished.Add(1)
	}
	runJob(2, job)
	if s, f := started.Load(), finished.Load(); s < 1 || s > 3 || f != s {
		t.Errorf("runJob(2): %d runs started, %d finished by its return; want 1 to 3, all", s, f)
	}

	// Every worker busy: the caller alone.
	busy := takeWorkers(1<<20, nil) // every one there is
	defer func() {
		for _, w := range busy {
			w.busy.Store(false)
		}
	}()
	started.Store(0)
	finished.Store(0)
	runJob(2, job)
	if s, f := started.Load(), finished.Load(); s != 1 || f != 1 {
		t.Errorf("runJob(2) with no idle worker: %d runs started, %d finished; want 1, 1", s, f)
	}
}

// TestRunJobTakesBackLateWorkers: workers held back before they take the
// job (a machine that gives their threads no core) are taken back once the
// caller's run returns, not waited for.
func TestRunJobTakesBackLateWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	runJob(3, func() {}) // start the workers
	const lag = 300 * time.Millisecond
	defer testHelperLag.Store(0)
	testHelperLag.Store(int64(lag))
	var runs atomic.Int32
	for range 3 {
		start := time.Now()
		runJob(3, func() { runs.Add(1) })
		// A worker's last look before it sleeps can take the job without
		// the lag; then it runs it at once. One that saw it while spinning
		// waits lag first, and would hold runJob that long.
		if took := time.Since(start); took > lag/2 {
			t.Fatalf("runJob took %v with workers held back %v before they take a job", took, lag)
		}
	}
	if runs.Load() < 3 {
		t.Errorf("%d runs in 3 calls; the caller runs each", runs.Load())
	}
	testHelperLag.Store(0)
	runJob(3, func() {}) // the workers free again
	if busy := takeWorkers(3, nil); len(busy) < 3 {
		t.Errorf("%d of 3 workers idle after the calls", len(busy))
	} else {
		for _, w := range busy {
			w.busy.Store(false)
		}
	}
}
