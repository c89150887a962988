//go:build !(linux && amd64 && !noasm)

package gemm

// cpuKnown says that currentCPU cannot answer here.
const cpuKnown = false

// currentCPU returns -1: without the assembly that reads it on
// linux/amd64 (other systems and architectures, the noasm build tag) there
// is no cheap way to ask which CPU a thread runs on, so teams' threads take
// their packing buffers from the free list (see teamWorkspace).
func currentCPU() int { return -1 }
