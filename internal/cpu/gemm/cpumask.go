package gemm

// A cpuMask is a set of CPU numbers below maxCPUWorkspaces, laid out as
// Linux's sched_setaffinity takes it (glibc's cpu_set_t).
type cpuMask [maxCPUWorkspaces / 64]uint64

// has reports whether cpu is in m (false for numbers out of range).
func (m *cpuMask) has(cpu int) bool {
	return cpu >= 0 && cpu < maxCPUWorkspaces && m[cpu/64]&(1<<(cpu%64)) != 0
}

// remove takes cpu out of m; numbers out of range are ignored.
func (m *cpuMask) remove(cpu int) {
	if cpu >= 0 && cpu < maxCPUWorkspaces {
		m[cpu/64] &^= 1 << (cpu % 64)
	}
}

// empty reports whether m holds no CPU.
func (m *cpuMask) empty() bool {
	for _, w := range m {
		if w != 0 {
			return false
		}
	}
	return true
}
