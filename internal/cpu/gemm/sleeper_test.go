package gemm

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestChannelSleeperNoLostWakeUps runs testNoLostWakeUps on a channel.
func TestChannelSleeperNoLostWakeUps(t *testing.T) {
	s := newChannelSleeper()
	testNoLostWakeUps(t, s.sleep, s.wake)
}

// testNoLostWakeUps puts a worker to sleep with sleep and wakes it with
// wake thousands of times, a caller handing calls over at every moment of
// its going to sleep; a wake-up lost between its last look and its sleep
// hangs it.
func testNoLostWakeUps(t *testing.T, sleep func(*atomic.Pointer[call]) *call, wake func()) {
	var next atomic.Pointer[call]
	taken := make(chan *call)
	stop := new(call)
	go func() {
		for {
			c := sleep(&next)
			if c == nil {
				c = next.Swap(nil) // woken: the call is there
			}
			if c != nil {
				taken <- c
				if c == stop {
					return
				}
			}
		}
	}()
	rounds := 3000
	if testing.Short() {
		rounds = 500
	}
	for i := range rounds + 1 {
		c := new(call)
		if i == rounds {
			c = stop
		}
		next.Store(c)
		wake()
		select {
		case got := <-taken:
			if got != c {
				t.Fatalf("round %d: the worker took another call", i)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("round %d: the worker never woke", i)
		}
	}
}
