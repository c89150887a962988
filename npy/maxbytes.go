package npy

import (
	"math"
	"sync"
)

// DefaultMaxBytes returns the limit on array data, in bytes, that reads
// apply when ReadOptions.MaxBytes is 0: the memory of this machine, beyond
// which reading an array could only end with the process killed. On Linux
// it is the smaller of the physical memory and the memory limit of the
// process's cgroup (cgroup v2 memory.max, or v1 memory.limit_in_bytes), on
// darwin the physical memory; elsewhere, or when it cannot be found out,
// math.MaxInt64, which leaves only the overflow checks. It is computed on
// the first call.
func DefaultMaxBytes() int64 { return defaultMaxBytes() }

var defaultMaxBytes = sync.OnceValue(func() int64 {
	if n := machineMemory(); n > 0 {
		return n
	}
	return math.MaxInt64
})
