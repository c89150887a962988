package cpubench

import "time"

// Settle waits until this process stops using the CPU, for up to a second,
// so that one library's leftover work does not slow the next one timed.
// OpenBLAS's worker threads, once a call is done, spin for about 0.13s (its
// thread timeout, 2^28 clock cycles) waiting for the next call before they
// sleep; on a 16-core machine goamp, timed during that spin, ran at a fifth
// to a half of its speed, and Settle waited 0.13s after each OpenBLAS turn.
// goamp's workers spin for 5 to 50 ms after a call before they sleep
// (twice the last gap between calls; see internal/cpu/gemm's idleSpinFor)
// and gonum's threads end with the call, so after them Settle returns
// within about 10 to 60 ms.
//
// Where the process's CPU time cannot be read, Settle waits 0.2s.
func Settle() {
	const (
		poll    = 2 * time.Millisecond
		quiet   = 2 // polls in a row: one can miss a spinner the OS paused
		maxWait = time.Second
		busy    = 0.25 // of one core: a spinning thread uses all of one
	)
	start := time.Now()
	lastCPU, ok := cpuTime()
	if !ok {
		time.Sleep(200 * time.Millisecond)
		return
	}
	last, calm := start, 0
	for time.Since(start) < maxWait {
		time.Sleep(poll)
		cpu, _ := cpuTime()
		now := time.Now()
		if float64(cpu-lastCPU) < busy*float64(now.Sub(last)) {
			if calm++; calm == quiet {
				return
			}
		} else {
			calm = 0
		}
		lastCPU, last = cpu, now
	}
}
