//go:build unix

package cpubench

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time used so far by every thread of the process,
// OpenBLAS's included.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
