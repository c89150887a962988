//go:build linux && amd64 && !noasm

package gemm

// cpuKnown says that currentCPU can answer here.
const cpuKnown = true

// currentCPU returns the number of the CPU the calling thread runs on (it
// may be stale by the time it returns), or -1 if the kernel does not say.
// Linux puts each CPU's number in the limit of a GDT segment of its own
// (the one its vDSO's getcpu reads); the LSL instruction reads it in tens
// of cycles, where the getcpu system call took 1us on the development
// machine (a VM), a fifth of a 64x64 product's time on two threads.
func currentCPU() int {
	limit, ok := cpuSegmentLimit()
	if !ok {
		return -1
	}
	return int(limit & 0xfff) // above bit 12: the NUMA node
}

// cpuSegmentLimit returns the limit of the segment whose selector is
// 0x7b (GDT entry 15, user privilege), and whether there is one.
func cpuSegmentLimit() (limit uint32, ok bool)
