package gpu

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// dmmaTMATiling is the shape of most float64 products on the kernels fed
// by TMA (kernels.MatmulDMMATMA): 128x64 tiles of C for every transpose,
// four consumer warps and a producer warpgroup, two blocks an SM, steps
// of 16 along K.
var dmmaTMATiling = gemmTiling{bm: kernels.DMMATMATileM, bn: kernels.DMMATile, threads: kernels.DMMATMAThreads,
	perSM: kernels.DMMATMABlocksPerSM, shared: kernels.DMMATMASharedBytes, kStep: 16}

// dmmaTMA64Tiling is their second tiling: 64x64 tiles, four consumer warps
// and a producer warp, three blocks an SM (see dmmaTMATilingFor).
var dmmaTMA64Tiling = gemmTiling{shape: kernels.DMMATMA64Shape, bm: 64, bn: 64, threads: kernels.DMMATMA64Threads,
	perSM: kernels.DMMATMA64BlocksPerSM, shared: kernels.DMMATMA64SharedBytes, kStep: 16}

// dmmaTMATilingFor returns the tiling of the TMA-fed kernels that runs
// product s on a GPU of sms multiprocessors: 64x64 tiles for a product of
// 64 rows or fewer, which would leave half of every 128-row tile empty
// (64 x 8192 x 8192: 0.96-1.01 of cuBLAS against 0.58-0.63), and for one
// whose 128x64 tiles are fewer than the SMs where its 64x64 tiles are not
// (1024^3: 0.85-0.90 against 0.78-0.80, which splits K); 128x64 tiles
// otherwise (2048^3: 0.91-0.95 against 0.87-0.91; docs/PERFORMANCE.md).
func dmmaTMATilingFor(s GemmShape, sms int) gemmTiling {
	tiles := func(t gemmTiling) int { return ceilDiv(s.M, t.bm) * ceilDiv(s.N, t.bn) * s.Batch }
	if s.M <= dmmaTMA64Tiling.bm || (tiles(dmmaTMATiling) < sms && tiles(dmmaTMA64Tiling) >= sms) {
		return dmmaTMA64Tiling
	}
	return dmmaTMATiling
}

// dmmaTMAOff keeps float64 products on the kernels that copy their panels
// with cp.async, for the benchmark and the tests that compare the two
// (GOAMP_DMMA_NO_TMA=1).
var dmmaTMAOff = os.Getenv("GOAMP_DMMA_NO_TMA") == "1"

// dmmaTMARuns and dmmaTMA64Runs count the products queued on the TMA-fed
// kernels, all of them and those of dmmaTMA64Tiling, for the tests that
// check the path ran.
var dmmaTMARuns, dmmaTMA64Runs atomic.Int64

// dmmaTMAFor reports whether float64 product s, with A at a and B at b,
// runs on the TMA-fed kernels of device d: a GPU of compute capability 9.0
// (the kernels are sm_90a code, which no other GPU loads) and a driver
// that makes TMA descriptors, A and B on 16 bytes with even row strides,
// and each operand of a batch its own matrix an even number of elements
// after the one before (TMA's addresses and strides are multiples of 16
// bytes; a batch stride of 0 has no tensor map).
func dmmaTMAFor(d *Device, s GemmShape, a, b uint64) bool {
	p := d.Properties
	return !dmmaTMAOff && p.ComputeMajor == 9 && p.ComputeMinor == 0 && cuda.HasTMA() &&
		dmmaTMAOperands(s, a, b)
}

// dmmaTMAOperands is dmmaTMAFor's test of the operands alone.
func dmmaTMAOperands(s GemmShape, a, b uint64) bool {
	even := func(addr uint64, ld, stride int) bool {
		return addr%16 == 0 && ld%2 == 0 && (s.Batch == 1 || (stride > 0 && stride%2 == 0))
	}
	return even(a, s.LDA, s.StrideA) && even(b, s.LDB, s.StrideB)
}

// dmmaTMARegisters is the register count the TMA-fed kernels must have at
// their launch: their setmaxnreg counts (40 for the producer warpgroup,
// 208 for the consumers) share out two blocks of 256 threads of 128
// registers, and with fewer a consumer's setmaxnreg.inc could wait
// forever.
const dmmaTMARegisters = 128

// dmmaTMAKernelReady reports whether device d loads the TMA-fed kernels
// of tiling t (kernels.MatmulDMMATMA, sm_90a): its nn kernel, which shares
// its image and its code with the other three; the 128x64 ones only with
// dmmaTMARegisters registers, which their setmaxnreg counts assume.
func dmmaTMAKernelReady(d *Device, t gemmTiling) bool {
	sym, err := kernels.GemmSymbol(kernels.MatmulDMMATMA, t.shape, false, false, kernels.Float64)
	if err != nil {
		return false
	}
	f, err := functionBySymbol(d, kernels.MatmulDMMATMA, sym)
	if err != nil {
		return false
	}
	if t.shape == dmmaTMA64Tiling.shape {
		return true // no setmaxnreg, no register count assumed
	}
	n, err := f.Attribute(cuda.FuncNumRegs)
	return err == nil && n == dmmaTMARegisters
}

// dmmaTensorMaps describes op(A) at a and op(B) at b where they lie, as
// the TMA-fed kernels of tiling t read them: float64, 3-D, an operand
// contiguous along K as {K, rows, batch} in boxes of a step of 16 by a
// tile's rows (t.bm for A, t.bn for B), one contiguous along M or N as
// {rows, K, batch} in boxes of 16 x 16.
func dmmaTensorMaps(d *Device, t gemmTiling, s GemmShape, a, b uint64) (ma, mb cuda.TensorMap, err error) {
	k := uint64(max(s.K, 1)) // a product with K = 0 reads nothing, but its maps must be valid
	describe := func(addr uint64, alongK bool, rows, ld, stride, tileRows int) (cuda.TensorMap, error) {
		rowsK := rows // the stored matrix's rows: rows along K, else K
		if !alongK {
			rowsK = int(k)
		}
		if s.Batch == 1 {
			stride = rowsK * ld // unused; a multiple of 16 bytes, as TMA asks
		}
		dims, box := [3]uint64{k, uint64(rows), uint64(s.Batch)}, [3]uint32{16, uint32(tileRows), 1}
		if !alongK {
			dims, box = [3]uint64{uint64(rows), k, uint64(s.Batch)}, [3]uint32{16, 16, 1}
		}
		return d.Context.EncodeTensorMap(cuda.TensorMapFloat64, cuda.DevicePtr(addr), dims,
			[2]uint64{uint64(ld * 8), uint64(stride * 8)}, box)
	}
	if ma, err = describe(a, !s.TransA, s.M, s.LDA, s.StrideA, t.bm); err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: A: %w", err)
	}
	if mb, err = describe(b, s.TransB, s.N, s.LDB, s.StrideB, t.bn); err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: B: %w", err)
	}
	return ma, mb, nil
}
