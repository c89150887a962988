//go:build linux && amd64 && !noasm

package gemm

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// A sleeper is how a worker sleeps between calls and is woken. On Linux
// it sleeps on a futex of its own, its thread kept off the CPU of the
// caller that will wake it: while it sleeps its affinity mask leaves that
// CPU out (the last caller's when it goes to sleep; the waking caller
// moves the hole to its own CPU if that is another).
//
// Why: on the development machine (a 2-CPU VM whose kernel packs woken
// threads onto busy CPUs), a worker woken by a caller was put on the
// caller's CPU, where the two took turns while the other CPU idled, for
// longer than a whole turn of goamp bench at n = 128 (33 products, 3 ms):
// in about half the turns goamp ran at its one-thread rate (2026-11-25,
// docs/PERFORMANCE.md, "Waking helpers off the caller's CPU"). Woken
// through a Go channel, the worker's goroutine is run by whichever idle
// thread the runtime wakes, so there is no thread to steer; on a futex the
// worker's own thread wakes, where its mask allows. Only the caller's CPU
// is left out, so that the kernel still picks an idle CPU among the rest.
//
// On waking the worker restores the mask it had. (A mask set on the
// worker's thread from outside while it sleeps is undone then; masks set
// on the whole process before the first call hold.)
//
// With GOMAXPROCS of manyCores or more when the worker starts, it sleeps
// on a channel instead, as on other systems: there the caller's CPU is one
// of many, the kernel found idle ones for woken threads, and on the
// 16-core host the futex and the hole brought no gain (float64 2048 TN ran
// at 0.95-0.96 of OpenBLAS in two runs, against 1.12-1.18 on the
// channel; the host's speed moved as much from run to run).
type sleeper struct {
	// channel, when not nil, is what the worker sleeps on instead.
	channel *channelSleeper

	sleeping atomic.Bool
	woken    atomic.Uint32 // the futex word: 1 once a caller has woken it
	// maskLock guards the thread's mask from the time the worker says it
	// sleeps until it has restored it, against a waking caller changing it
	// (a spin lock: both hold it for a system call or two).
	maskLock atomic.Bool
	tid      int     // the worker's thread; set before sleeping is
	mask     cpuMask // its mask when it went to sleep; set before sleeping is
	// hole is the CPU its mask leaves out while it sleeps, -1 when its
	// mask is its own.
	hole atomic.Int32
}

func (s *sleeper) init() {
	s.hole.Store(-1)
	if runtime.GOMAXPROCS(0) >= manyCores {
		s.channel = newChannelSleeper()
	}
}

// asleep reports whether the worker has said it is going to sleep and has
// not yet woken.
func (s *sleeper) asleep() bool {
	if s.channel != nil {
		return s.channel.asleep()
	}
	return s.sleeping.Load()
}

// sleep leaves the last caller's CPU out of the worker thread's mask, says
// it is going to sleep, takes a last look at next, and unless that finds a
// call sleeps until a caller wakes it. It restores the thread's mask and
// returns the call found, or nil once woken.
func (s *sleeper) sleep(next *atomic.Pointer[call]) *call {
	if s.channel != nil {
		return s.channel.sleep(next)
	}
	// The mask belongs to the thread: the goroutine must stay on it from
	// the change to the restore.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s.tid = syscall.Gettid()
	if getAffinity(0, &s.mask) {
		s.leaveOut(0, int(lastCallerCPU.Load()))
	}
	s.woken.Store(0)
	// Say we are going to sleep before the last look, so that a caller
	// that gives a call after that look sees it and wakes us.
	s.sleeping.Store(true)
	c := next.Swap(nil)
	if c == nil {
		for s.woken.Load() == 0 {
			futexWait(&s.woken, 0)
		}
	}
	s.lockMask()
	if s.hole.Load() >= 0 {
		setAffinity(0, &s.mask)
		s.hole.Store(-1)
	}
	s.sleeping.Store(false)
	s.unlockMask()
	return c
}

// wake wakes the worker if it sleeps, first moving the hole in its mask
// to callerCPU (the caller's CPU, -1 if unknown), so that the kernel does
// not wake it where the caller runs.
func (s *sleeper) wake(callerCPU int) {
	if s.channel != nil {
		s.channel.wake()
		return
	}
	if !s.sleeping.Load() {
		return
	}
	s.lockMask()
	defer s.unlockMask()
	if !s.sleeping.Load() {
		return
	}
	if callerCPU != int(s.hole.Load()) {
		s.leaveOut(s.tid, callerCPU)
	}
	s.woken.Store(1)
	futexWake(&s.woken)
}

// leaveOut sets thread tid's mask (0: the calling thread) to the
// worker's own without cpu, if that leaves another CPU in it.
func (s *sleeper) leaveOut(tid, cpu int) {
	if !s.mask.has(cpu) {
		return
	}
	m := s.mask
	m.remove(cpu)
	if m.empty() {
		return
	}
	if setAffinity(tid, &m) {
		s.hole.Store(int32(cpu))
	}
}

func (s *sleeper) lockMask() {
	for i := 1; !s.maskLock.CompareAndSwap(false, true); i++ {
		if i%64 == 0 {
			// The holder may be waiting for this CPU.
			syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		}
	}
}

func (s *sleeper) unlockMask() { s.maskLock.Store(false) }

// futexWait sleeps while *word is val (or until a signal interrupts).
func futexWait(word *atomic.Uint32, val uint32) {
	const futexWaitPrivate = 0 | 128
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitPrivate, uintptr(val), 0, 0, 0)
}

// futexWake wakes one thread sleeping on word.
func futexWake(word *atomic.Uint32) {
	const futexWakePrivate = 1 | 128
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWakePrivate, 1, 0, 0, 0)
}

// getAffinity reads thread tid's CPU mask (0: the calling thread).
func getAffinity(tid int, m *cpuMask) bool {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	return e == 0
}

// setAffinity sets thread tid's CPU mask (0: the calling thread). A thread
// on a CPU its new mask leaves out moves at once.
func setAffinity(tid int, m *cpuMask) bool {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	return e == 0
}
