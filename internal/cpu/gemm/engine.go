package gemm

// The engines this build and CPU can run for each element type, portable
// first; the last is the one Float32, Float64 and Int32 use. The assembly
// ones are added by kernel_amd64.go when the CPU has their instructions.
//
// An engine's blocks: the packed B block is kc x nc (shared by the threads,
// in L3), each thread's packed A block mc x kc (in L2), and the micro-kernel
// streams a kc x NR micro-panel of B against each MR x kc one of A. The
// portable engines keep the textbook sizes, with a B micro-panel in half of
// L1; kernel_amd64.go says how the assembly ones' were chosen.
var (
	enginesF32 = []*engine[float32]{{kernel: portable[float32]("go-6x16", 6, 16), mc: 144, kc: 256, nc: 4096}}
	enginesF64 = []*engine[float64]{{kernel: portable[float64]("go-6x8", 6, 8), mc: 96, kc: 256, nc: 2048}}
	enginesI32 = []*engine[int32]{{kernel: portable[int32]("go-6x16", 6, 16), mc: 96, kc: 256, nc: 4096}}
)

// The engines in use: the last of each list.
var (
	engineF32 = last(enginesF32)
	engineF64 = last(enginesF64)
	engineI32 = last(enginesI32)
)

func last[T Element](engines []*engine[T]) *engine[T] { return engines[len(engines)-1] }

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
