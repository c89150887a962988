package gpu

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// dmmaTMATiling is the shape of matmul_dmma's kernels fed by TMA
// (matmul_dmma_tma_*): 64x64 tiles of C for every transpose, four consumer
// warps and a producer warp, three blocks an SM, steps of 16 along K.
var dmmaTMATiling = gemmTiling{shape: "tma", bm: kernels.DMMATile, bn: kernels.DMMATile, threads: kernels.DMMATMAThreads,
	perSM: kernels.DMMABlocksPerSM, shared: kernels.DMMATMASharedBytes, kStep: 16}

// dmmaTMAOff keeps float64 products on the kernels that copy their panels
// with cp.async, for the benchmark and the tests that compare the two
// (GOAMP_DMMA_NO_TMA=1).
var dmmaTMAOff = os.Getenv("GOAMP_DMMA_NO_TMA") == "1"

// dmmaTMARuns counts the products queued on the TMA-fed kernels, for the
// tests that check the path ran.
var dmmaTMARuns atomic.Int64

// dmmaTMAMinPTX is the PTX version (10*major + minor of the target) a
// TMA-fed kernel's image must come from: built for sm_80 its body is empty
// (matmul_dmma.cu), which an image compiled for compute_80 and JIT-compiled
// for a Hopper GPU (kernels.ImagesEnv) would run.
const dmmaTMAMinPTX = 90

// dmmaTMAFor reports whether float64 product s, with A at a and B at b,
// can run on the TMA-fed kernels of device d: a GPU of compute capability
// 9.0 or newer and a driver that makes TMA descriptors, A and B on 16
// bytes with even row strides, and each operand of a batch its own matrix
// an even number of elements after the one before (TMA's addresses and
// strides are multiples of 16 bytes; a batch stride of 0 has no tensor
// map).
func dmmaTMAFor(d *Device, s GemmShape, a, b uint64) bool {
	return !dmmaTMAOff && d.Properties.ComputeMajor >= 9 && cuda.HasTMA() && dmmaTMAOperands(s, a, b)
}

// dmmaTMAOperands is dmmaTMAFor's test of the operands alone.
func dmmaTMAOperands(s GemmShape, a, b uint64) bool {
	even := func(addr uint64, ld, stride int) bool {
		return addr%16 == 0 && ld%2 == 0 && (s.Batch == 1 || (stride > 0 && stride%2 == 0))
	}
	return even(a, s.LDA, s.StrideA) && even(b, s.LDB, s.StrideB)
}

// dmmaTMAKernelReady reports whether the TMA-fed kernel for s's transposes
// was compiled for sm_90 or newer (see dmmaTMAMinPTX).
func dmmaTMAKernelReady(d *Device, s GemmShape) bool {
	sym, err := kernels.GemmSymbol(kernels.MatmulDMMA, dmmaTMATiling.shape, s.TransA, s.TransB, kernels.Float64)
	if err != nil {
		return false
	}
	f, err := functionBySymbol(d, kernels.MatmulDMMA, sym)
	if err != nil {
		return false
	}
	v, err := f.Attribute(cuda.FuncPTXVersion)
	return err == nil && v >= dmmaTMAMinPTX
}

// dmmaTensorMaps describes op(A) at a and op(B) at b where they lie, as
// matmul_dmma.cu's TMA-fed kernels read them: float64, 3-D, an operand
// contiguous along K as {K, rows, batch} in boxes of a step of 16 by a
// tile's 64 rows, one contiguous along M or N as {rows, K, batch} in boxes
// of 16 x 16.
func dmmaTensorMaps(d *Device, s GemmShape, a, b uint64) (ma, mb cuda.TensorMap, err error) {
	k := uint64(max(s.K, 1)) // a product with K = 0 reads nothing, but its maps must be valid
	describe := func(addr uint64, alongK bool, rows, ld, stride int) (cuda.TensorMap, error) {
		rowsK := rows // the stored matrix's rows: rows along K, else K
		if !alongK {
			rowsK = int(k)
		}
		if s.Batch == 1 {
			stride = rowsK * ld // unused; a multiple of 16 bytes, as TMA asks
		}
		dims, box := [3]uint64{k, uint64(rows), uint64(s.Batch)}, [3]uint32{16, uint32(dmmaTMATiling.bm), 1}
		if !alongK {
			dims, box = [3]uint64{uint64(rows), k, uint64(s.Batch)}, [3]uint32{16, 16, 1}
		}
		return d.Context.EncodeTensorMap(cuda.TensorMapFloat64, cuda.DevicePtr(addr), dims,
			[2]uint64{uint64(ld * 8), uint64(stride * 8)}, box)
	}
	if ma, err = describe(a, !s.TransA, s.M, s.LDA, s.StrideA); err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: A: %w", err)
	}
	if mb, err = describe(b, s.TransB, s.N, s.LDB, s.StrideB); err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: B: %w", err)
	}
	return ma, mb, nil
}
