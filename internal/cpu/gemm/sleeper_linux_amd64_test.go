//go:build linux && amd64 && !noasm

package gemm

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// processMask returns the calling thread's CPU mask, skipping the test
// when the system will not say or the mask holds one CPU only (nothing to
// keep a worker off).
func processMask(t *testing.T) cpuMask {
	t.Helper()
	var m cpuMask
	if !getAffinity(0, &m) {
		t.Skip("sched_getaffinity refused")
	}
	n := 0
	for cpu := range maxCPUWorkspaces {
		if m.has(cpu) {
			n++
		}
	}
	if n < 2 {
		t.Skip("one CPU: nothing to steer between")
	}
	return m
}

// futexSleeper returns a sleeper that sleeps on its futex whatever
// GOMAXPROCS is.
func futexSleeper() *sleeper {
	s := new(sleeper)
	s.init()
	s.channel = nil
	return s
}

// within waits up to two seconds for cond.
func within(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(50 * time.Microsecond) {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("never %s", what)
		}
	}
}

// TestSleeperKeepsOffCaller: a sleeping worker's mask leaves out the last
// caller's CPU; a caller on another CPU moves the hole to its own before
// waking it; once awake the thread has its own mask back, and sleep
// returns no call.
func TestSleeperKeepsOffCaller(t *testing.T) {
	orig := processMask(t)
	first, second := -1, -1
	for cpu := range maxCPUWorkspaces {
		if orig.has(cpu) {
			if first < 0 {
				first = cpu
			} else if second < 0 {
				second = cpu
			}
		}
	}
	defer lastCallerCPU.Store(lastCallerCPU.Load())
	lastCallerCPU.Store(int32(first))

	s := futexSleeper()
	var next atomic.Pointer[call]
	got := make(chan *call, 1)
	go func() { got <- s.sleep(&next) }()
	within(t, "fell asleep", s.asleep)

	want := func(hole int) {
		t.Helper()
		w := orig
		w.remove(hole)
		var m cpuMask
		if !getAffinity(s.tid, &m) || m != w || int(s.hole.Load()) != hole {
			t.Fatalf("asleep with mask %x and hole %d, want the process's without CPU %d", m[:2], s.hole.Load(), hole)
		}
	}
	want(first)

	// The caller that wakes it runs on second: the hole moves there. The
	// lock held keeps the worker from restoring its mask before the look.
	s.lockMask()
	s.leaveOut(s.tid, second)
	want(second)
	s.unlockMask()

	s.wake(second)
	select {
	case c := <-got:
		if c != nil {
			t.Error("woken with no call given, sleep returned one")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("never woke")
	}
	if s.asleep() || s.hole.Load() != -1 {
		t.Error("awake but still says it sleeps, or has a hole")
	}
	var m cpuMask
	if !getAffinity(s.tid, &m) || m != orig {
		t.Errorf("awake with mask %x, want its own %x back", m[:2], orig[:2])
	}
}

// TestSleeperLastLook: a call given before the worker's last look is
// taken at once, and the thread's mask is restored all the same.
func TestSleeperLastLook(t *testing.T) {
	orig := processMask(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := futexSleeper()
	var next atomic.Pointer[call]
	c := new(call)
	next.Store(c)
	if got := s.sleep(&next); got != c {
		t.Fatal("sleep did not return the call waiting for it")
	}
	var m cpuMask
	if !getAffinity(0, &m) || m != orig {
		t.Errorf("mask %x after the last look, want %x", m[:2], orig[:2])
	}
}

// TestSleeperNoLostWakeUps runs testNoLostWakeUps on the futex.
func TestSleeperNoLostWakeUps(t *testing.T) {
	processMask(t)
	s := futexSleeper()
	testNoLostWakeUps(t, s.sleep, func() { s.wake(currentCPU()) })
}

// TestSleeperOnManyCores: a worker started with GOMAXPROCS of manyCores
// or more sleeps on a channel; with fewer, on its futex.
func TestSleeperOnManyCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(manyCores))
	var many sleeper
	many.init()
	runtime.GOMAXPROCS(2)
	var few sleeper
	few.init()
	if many.channel == nil || few.channel != nil {
		t.Errorf("on %d procs on a channel: %v; on 2: %v; want true, false", manyCores, many.channel != nil, few.channel != nil)
	}
}
