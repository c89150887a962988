//go:build !race

package amp

import "iter"

// pull runs a tile thread as a coroutine: resuming one costs about a
// hundred nanoseconds, a third of a hand-off between goroutines. Under the
// race detector threads are goroutines instead (pull_race.go).
func pull(seq func(yield func(event) bool)) (next func() (event, bool), stop func()) {
	return iter.Pull(seq)
}
