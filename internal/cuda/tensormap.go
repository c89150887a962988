package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// ErrNoTMA is returned (wrapped) by EncodeTensorMap when the driver has no
// cuTensorMapEncodeTiled (drivers before CUDA 12.0).
var ErrNoTMA = errors.New("cuda: this driver has no tensor-memory-accelerator descriptors (cuTensorMapEncodeTiled needs CUDA 12.0)")

// HasTMA reports whether the driver makes TMA descriptors
// (cuTensorMapEncodeTiled, CUDA 12.0 and newer); false before Init has
// succeeded.
func HasTMA() bool {
	return Init() == nil && drv.cuTensorMapEncodeTiled != nil
}

// TensorMap is a TMA descriptor (the driver's CUtensorMap, 128 opaque
// bytes): how a Hopper kernel's cp.async.bulk.tensor copies boxes of a
// matrix in device memory. A kernel takes it by value; PackArgs passes it.
type TensorMap struct {
	raw [16]uint64
}

// TensorMapType is the element type of a TensorMap (CUtensorMapDataType).
type TensorMapType int32

// The element types goamp's kernels copy.
const (
	TensorMapFloat16  TensorMapType = 6
	TensorMapFloat32  TensorMapType = 7
	TensorMapFloat64  TensorMapType = 8
	TensorMapBFloat16 TensorMapType = 9
	// TensorMapTFloat32 is float32 in memory that TMA rounds to TF32
	// (10 bits of mantissa, to nearest even, NaNs made quiet) as it
	// copies it, 4 bytes in shared memory: measured on an H100 against
	// every class of float32 (docs/PERFORMANCE.md, "TMA rounds TF32").
	TensorMapTFloat32 TensorMapType = 11
)

// Size is the element's size in bytes.
func (t TensorMapType) Size() int {
	switch t {
	case TensorMapFloat64:
		return 8
	case TensorMapFloat32, TensorMapTFloat32:
		return 4
	}
	return 2
}

// tensorMapSwizzle128 is CU_TENSOR_MAP_SWIZZLE_128B: boxes land in shared
// memory with 16-byte chunks of each 128-byte row permuted within groups of
// 8 rows, the layout wgmma reads without bank conflicts.
const tensorMapSwizzle128 = 3

// tensorMapSwizzleNone is CU_TENSOR_MAP_SWIZZLE_NONE: boxes land in shared
// memory as they lie.
const tensorMapSwizzleNone = 0

// EncodeTensorMap describes, for TMA on c's device, a tensor of dims[0] x dims[1] x
// dims[2] elements of type typ at device address addr, dimension 0
// contiguous, dimension i+1 strides[i] bytes apart, copied in boxes of
// box[0] x box[1] x box[2] elements in the 128-byte swizzle (box[0] times
// the element size must be at most 128), elements past the tensor's edges
// read as zero. The driver checks the rest (addr and strides multiples of
// 16 bytes, box sides at most 256) and its refusal comes back as an error.
// The driver wants c current for the call (CUDA_ERROR_INVALID_CONTEXT
// otherwise).
func (c *Context) EncodeTensorMap(typ TensorMapType, addr DevicePtr, dims [3]uint64, strides [2]uint64, box [3]uint32) (TensorMap, error) {
	if int(box[0])*typ.Size() > 128 {
		return TensorMap{}, fmt.Errorf("cuda: tensor map box of %d elements of %d bytes is wider than the 128-byte swizzle", box[0], typ.Size())
	}
	return c.encodeTensorMap(typ, addr, dims, strides, box, tensorMapSwizzle128)
}

// EncodeTensorMapPlain is EncodeTensorMap for boxes that land in shared
// memory as they lie, row after row, unswizzled (a row of box[0] elements
// a multiple of 16 bytes).
func (c *Context) EncodeTensorMapPlain(typ TensorMapType, addr DevicePtr, dims [3]uint64, strides [2]uint64, box [3]uint32) (TensorMap, error) {
	return c.encodeTensorMap(typ, addr, dims, strides, box, tensorMapSwizzleNone)
}

func (c *Context) encodeTensorMap(typ TensorMapType, addr DevicePtr, dims [3]uint64, strides [2]uint64, box [3]uint32, swizzle int32) (TensorMap, error) {
	if drv.cuTensorMapEncodeTiled == nil {
		return TensorMap{}, ErrNoTMA
	}
	// The driver wants the descriptor 64-byte aligned; Go promises 8.
	var buf [16 + 8]uint64
	off := (64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 8
	p := unsafe.Pointer(&buf[off])
	elemStrides := [3]uint32{1, 1, 1}
	const interleaveNone, l2Promote256, oobZero = 0, 3, 0
	err := c.do(func() error {
		if r := drv.cuTensorMapEncodeTiled(p, int32(typ), 3, uint64(addr), &dims[0], &strides[0], &box[0], &elemStrides[0],
			interleaveNone, swizzle, l2Promote256, oobZero); r != 0 {
			// A refused description is the caller's mistake, not a
			// fault of the context: not recorded as sticky.
			return newError("cuTensorMapEncodeTiled", r)
		}
		return nil
	})
	if err != nil {
		return TensorMap{}, fmt.Errorf("cuda: tensor map of %v elements (type %d, strides %v bytes, box %v): %w", dims, typ, strides, box, err)
	}
	var m TensorMap
	copy(m.raw[:], buf[off:off+16])
	return m, nil
}
