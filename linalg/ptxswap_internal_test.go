package linalg

import (
	"fmt"
	"strings"

	"github.com/goamp/goamp/amp"
)

// SwapGoKernelPTX replaces, in this test binary, the PTX of the Go
// kernel instance name (a generated spec's name without its prefix, such
// as "SimpleMatMulKernel_float32") with ptx, and returns what puts the
// original back. It exists for comparing compiler variants on a GPU
// (BenchmarkGoKernelsVsCUDA with GOAMP_PTX_VARIANTS): the swapped spec is
// a new one, so the driver compiles the new PTX.
func SwapGoKernelPTX(name, ptx string) (restore func(), err error) {
	specs := map[string]map[string]*amp.KernelSpec{
		"ScaleKernel":            kernelSpecsScaleKernel,
		"SimpleMatMulKernel":     kernelSpecsSimpleMatMulKernel,
		"TiledMatMulKernel16":    kernelSpecsTiledMatMulKernel16,
		"TiledMatMulKernel32":    kernelSpecsTiledMatMulKernel32,
		"TiledDotKernel":         kernelSpecsTiledDotKernel,
		"ExactTiledMatMulKernel": kernelSpecsExactTiledMatMulKernel,
	}
	i := strings.LastIndex(name, "_")
	if i < 0 {
		return nil, fmt.Errorf("%q: want Kernel_type", name)
	}
	m := specs[name[:i]]
	old := m[name[i+1:]]
	if old == nil {
		return nil, fmt.Errorf("no Go kernel %q", name)
	}
	s := *old
	s.PTX = ptx
	// PTX from before small-index entries has none: launch what it has.
	for r, e := range s.SmallEntries {
		if e != "" && !strings.Contains(ptx, e+"(") {
			s.SmallEntries[r] = ""
		}
	}
	m[name[i+1:]] = &s
	return func() { m[name[i+1:]] = old }, nil
}
