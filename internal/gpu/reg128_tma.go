package gpu

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// reg128TMATiling is the shape of reg128's float32 tn kernel fed by TMA
// (matmul_reg128_tma_tn_f32): 128x128 tiles, two blocks an SM, a ring of
// panels in dynamic shared memory, steps of 16 along K.
var reg128TMATiling = gemmTiling{shape: kernels.Reg128TMAShape, bm: 128, bn: 128, threads: 256, perSM: 2,
	shared: kernels.Reg128TMASharedBytes, kStep: kernels.Reg128TMAStep}

// reg128TMAOff keeps float32 tn products on the kernels that load their
// panels through registers, for the benchmark and the tests that compare
// the two (GOAMP_REG128_NO_TMA=1).
var reg128TMAOff = os.Getenv("GOAMP_REG128_NO_TMA") == "1"

// reg128TMARuns counts the products queued on the TMA-fed tn kernel, for
// the tests that check the path ran.
var reg128TMARuns atomic.Int64

// reg128TMADevice reports whether device d runs the TMA-fed tn kernel: a
// GPU of compute capability 9.0 or newer (TMA; the kernel's sm_80 code
// traps) whose driver makes TMA descriptors.
func reg128TMADevice(d *Device) bool {
	return !reg128TMAOff && d.Properties.ComputeMajor >= 9 && cuda.HasTMA()
}

// reg128TMAFor reports whether reg128 runs product k of element type elem
// (s after relayout how, A at a and B at b unless copied) on the TMA-fed
// tn kernel of device d: float32 tn on 128x128 tiles (M and N over 64),
// and operands TMA can describe: on 16 bytes, row strides multiples of 4
// elements, and each operand of a batch its own matrix a multiple of 4
// elements after the one before (a batch stride of 0 has no tensor map). A
// transposed copy is all of that, but one shared by a batch has stride 0.
func reg128TMAFor(d *Device, elem string, k GemmShape, how relayout, a, b uint64) bool {
	return reg128TMAProduct(elem, k, how, a, b) && reg128TMADevice(d)
}

// reg128TMAProduct is reg128TMAFor's test of the product and its operands
// alone.
func reg128TMAProduct(elem string, k GemmShape, how relayout, a, b uint64) bool {
	if elem != kernels.Float32 || !k.TransA || k.TransB || tilingFor(elem, k.M, k.N).whole == "" {
		return false
	}
	return tmaOperand(how&copyA != 0, a, k.LDA, k.StrideA, k.Batch) && tmaOperand(how&copyB != 0, b, k.LDB, k.StrideB, k.Batch)
}

// tmaOperand reports whether TMA can read a float32 operand at addr with
// row stride ld and batch stride stride (copied: a transposed copy, on 256
// bytes with its row stride a multiple of 4).
func tmaOperand(copied bool, addr uint64, ld, stride, batch int) bool {
	if !copied && (addr%16 != 0 || ld%4 != 0) {
		return false
	}
	return batch == 1 || (stride > 0 && stride%4 == 0)
}

// reg128TensorMaps describes op(A) = A^T at a (stored K x M) and op(B) = B
// at b (K x N) as the TMA-fed tn kernel reads them: float32, 3-D {M or N,
// K, batch}, in boxes of 128 x 16 x 1 that land unswizzled.
func reg128TensorMaps(d *Device, k GemmShape, a, b cuda.DevicePtr) (ma, mb cuda.TensorMap, err error) {
	kk := uint64(max(k.K, 1)) // a product with K = 0 reads nothing, but its maps must be valid
	describe := func(addr cuda.DevicePtr, cols, ld, stride int) (cuda.TensorMap, error) {
		if k.Batch == 1 {
			stride = int(kk) * ld // unused; a multiple of 16 bytes, as TMA asks
		}
		return d.Context.EncodeTensorMapPlain(cuda.TensorMapFloat32, addr, [3]uint64{uint64(cols), kk, uint64(k.Batch)},
			[2]uint64{uint64(ld * 4), uint64(stride * 4)}, [3]uint32{128, kernels.Reg128TMAStep, 1})
	}
	if ma, err = describe(a, k.M, k.LDA, k.StrideA); err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: A: %w", err)
	}
	if mb, err = describe(b, k.N, k.LDB, k.StrideB); err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: B: %w", err)
	}
	return ma, mb, nil
}
