package npy

import (
	"math"

	"golang.org/x/sys/unix"
)

// machineMemory returns the physical memory, or -1 if unknown.
func machineMemory() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil || n == 0 {
		return -1
	}
	return int64(min(n, math.MaxInt64))
}
