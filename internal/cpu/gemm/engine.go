package gemm

// Block sizes, chosen by measurement on the development machine (Zen 3 class:
// 32 KiB L1d, 512 KiB-1 MiB L2, 32 MiB L3); docs/PERFORMANCE.md has the sweep.
// kc*NR elements of B (the micro-panel reused across one A block) fit in half
// of L1; mc*kc elements of A in half of L2.
var (
	engineF32 = engine[float32]{kernel: portableF32, mc: 144, kc: 256, nc: 4096}
	engineF64 = engine[float64]{kernel: portableF64, mc: 96, kc: 256, nc: 4096}
)

// The micro-kernels this build and CPU can run, portable first.
var (
	kernelsF32 = []MicroKernel[float32]{portableF32}
	kernelsF64 = []MicroKernel[float64]{portableF64}
)

// KernelName returns the name of the micro-kernel that Float32 (or, if
// double, Float64) uses on this machine.
func KernelName(double bool) string {
	if double {
		return engineF64.kernel.Name
	}
	return engineF32.kernel.Name
}
