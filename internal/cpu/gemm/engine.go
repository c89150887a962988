package gemm

// Block sizes for the development machine (AMD EPYC, 32 KiB L1d, 512 KiB-1 MiB
// L2, 32 MiB L3). kc*NR elements of B (the micro-panel reused across one A
// block) take 16 KiB, half of L1; mc*kc elements of A (the block reused
// across all of B's panels) about 150-200 KiB of L2; kc*nc of B 4 MiB of L3.
// Sweeps of mc in 72..240, kc in 192..512 and nc in 512..4096 moved the speed
// by less than the run-to-run noise (about 10%) around these values;
// docs/PERFORMANCE.md says how they were run.
var (
	engineF32 = engine[float32]{kernel: portableF32, mc: 144, kc: 256, nc: 4096}
	engineF64 = engine[float64]{kernel: portableF64, mc: 96, kc: 256, nc: 2048}
	engineI32 = engine[int32]{kernel: portableI32, mc: 96, kc: 256, nc: 4096}
)

// The micro-kernels this build and CPU can run, portable first.
var (
	kernelsF32 = []MicroKernel[float32]{portableF32}
	kernelsF64 = []MicroKernel[float64]{portableF64}
	kernelsI32 = []MicroKernel[int32]{portableI32}
)

// KernelName returns the name of the micro-kernel that Float32, Float64 or
// Int32 (as elem is "float32", "float64" or "int32") uses on this machine.
func KernelName(elem string) string {
	switch elem {
	case "float64":
		return engineF64.kernel.Name
	case "int32":
		return engineI32.kernel.Name
	}
	return engineF32.kernel.Name
}
