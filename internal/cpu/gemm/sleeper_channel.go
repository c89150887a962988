package gemm

import "sync/atomic"

// A channelSleeper sleeps on a channel: the worker's goroutine parks, and
// the runtime runs it on whichever thread it wakes. Workers sleep so on
// systems where the Linux sleeper (sleeper_linux_amd64.go) cannot run,
// and on Linux on many cores.
type channelSleeper struct {
	sleeping atomic.Bool
	wakeUp   chan struct{}
}

func newChannelSleeper() *channelSleeper {
	return &channelSleeper{wakeUp: make(chan struct{}, 1)}
}

// asleep reports whether the worker has said it is going to sleep and has
// not yet woken.
func (s *channelSleeper) asleep() bool { return s.sleeping.Load() }

// sleep says the worker is going to sleep, takes a last look at next, and
// unless that finds a call sleeps until a caller wakes it; it returns the
// call found, or nil once woken.
func (s *channelSleeper) sleep(next *atomic.Pointer[call]) *call {
	// Say we are going to sleep before the last look, so that a caller
	// that gives a call after that look sees it and wakes us.
	s.sleeping.Store(true)
	if c := next.Swap(nil); c != nil {
		s.sleeping.Store(false)
		return c
	}
	<-s.wakeUp
	s.sleeping.Store(false)
	return nil
}

// wake wakes the worker if it sleeps.
func (s *channelSleeper) wake() {
	if s.sleeping.Load() {
		select {
		case s.wakeUp <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}
