//go:build !(linux && amd64)

package gemm

// cpuKnown says that currentCPU cannot answer here.
const cpuKnown = false

// currentCPU returns -1: this system does not say cheaply which CPU a
// thread runs on, so teams' threads take their packing buffers from the
// free list (see teamWorkspace).
func currentCPU() int { return -1 }
