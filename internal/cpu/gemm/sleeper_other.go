//go:build !(linux && amd64 && !noasm)

package gemm

import "sync/atomic"

// A sleeper is how a worker sleeps between calls and is woken: here on a
// channel (on linux/amd64 on a futex, kept off the caller's CPU; see
// sleeper_linux_amd64.go).
type sleeper struct{ channel *channelSleeper }

func (s *sleeper) init() { s.channel = newChannelSleeper() }

// asleep reports whether the worker has said it is going to sleep and has
// not yet woken.
func (s *sleeper) asleep() bool { return s.channel.asleep() }

// sleep takes a last look at next and sleeps unless that finds a call (see
// channelSleeper.sleep).
func (s *sleeper) sleep(next *atomic.Pointer[call]) *call { return s.channel.sleep(next) }

// wake wakes the worker if it sleeps; the caller's CPU is not known here.
func (s *sleeper) wake(int) { s.channel.wake() }
