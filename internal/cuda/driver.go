package cuda

import (
	"fmt"
	"sync"
	"unsafe"
)

// Library is the shared object opened by Init. The driver installs it with
// that exact soname (the unversioned libcuda.so exists only with the
// toolkit's development files), and dlopen finds it without a path.
const Library = "libcuda.so.1"

// cuResult is the driver API's CUresult: 0 is success, anything else an
// error code that newError turns into an *Error.
type cuResult int32

// driver holds the bound entry points of libcuda. Handles (CUcontext,
// CUstream, CUevent, CUmodule, CUfunction) are opaque pointers, kept as
// uintptr; CUdevice is a C int; size_t is uintptr; CUdeviceptr is 64 bits.
type driver struct {
	cuInit             func(flags uint32) cuResult
	cuDriverGetVersion func(v *int32) cuResult
	cuGetErrorName     func(r cuResult, s **byte) cuResult
	cuGetErrorString   func(r cuResult, s **byte) cuResult

	cuDeviceGetCount          func(n *int32) cuResult
	cuDeviceGet               func(d *int32, ordinal int32) cuResult
	cuDeviceGetName           func(name *byte, n int32, d int32) cuResult
	cuDeviceGetAttribute      func(v *int32, attr int32, d int32) cuResult
	cuDeviceTotalMem          func(b *uintptr, d int32) cuResult
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, d int32) cuResult
	cuDevicePrimaryCtxRelease func(d int32) cuResult

	cuCtxPushCurrent func(ctx uintptr) cuResult
	cuCtxPopCurrent  func(ctx *uintptr) cuResult
	cuCtxSynchronize func() cuResult

	cuMemGetInfo        func(free, total *uintptr) cuResult
	cuMemAlloc          func(p *uint64, n uintptr) cuResult
	cuMemFree           func(p uint64) cuResult
	cuMemsetD8          func(p uint64, v uint8, n uintptr) cuResult
	cuMemsetD8Async     func(p uint64, v uint8, n uintptr, s uintptr) cuResult
	cuMemcpyHtoD        func(dst uint64, src unsafe.Pointer, n uintptr) cuResult
	cuMemcpyDtoH        func(dst unsafe.Pointer, src uint64, n uintptr) cuResult
	cuMemcpyDtoD        func(dst, src uint64, n uintptr) cuResult
	cuMemcpyHtoDAsync   func(dst uint64, src unsafe.Pointer, n uintptr, s uintptr) cuResult
	cuMemcpyDtoHAsync   func(dst unsafe.Pointer, src uint64, n uintptr, s uintptr) cuResult
	cuMemcpyDtoDAsync   func(dst, src uint64, n uintptr, s uintptr) cuResult
	cuMemcpy2DAsync     func(p *memcpy2D, s uintptr) cuResult
	cuMemHostAlloc      func(p *unsafe.Pointer, n uintptr, flags uint32) cuResult
	cuMemFreeHost       func(p unsafe.Pointer) cuResult
	cuMemHostRegister   func(p unsafe.Pointer, n uintptr, flags uint32) cuResult
	cuMemHostUnregister func(p unsafe.Pointer) cuResult

	cuStreamCreate      func(s *uintptr, flags uint32) cuResult
	cuStreamDestroy     func(s uintptr) cuResult
	cuStreamSynchronize func(s uintptr) cuResult
	cuStreamQuery       func(s uintptr) cuResult
	cuStreamWaitEvent   func(s, e uintptr, flags uint32) cuResult

	cuEventCreate      func(e *uintptr, flags uint32) cuResult
	cuEventRecord      func(e, s uintptr) cuResult
	cuEventSynchronize func(e uintptr) cuResult
	cuEventQuery       func(e uintptr) cuResult
	cuEventElapsedTime func(ms *float32, start, end uintptr) cuResult
	cuEventDestroy     func(e uintptr) cuResult

	cuModuleLoadDataEx  func(m *uintptr, image unsafe.Pointer, n uint32, opts *int32, vals *uintptr) cuResult
	cuModuleUnload      func(m uintptr) cuResult
	cuModuleGetFunction func(f *uintptr, m uintptr, name string) cuResult
	cuFuncGetAttribute  func(v *int32, attr int32, f uintptr) cuResult
	cuFuncSetAttribute  func(f uintptr, attr int32, v int32) cuResult
	cuLaunchKernel      func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params unsafe.Pointer, extra unsafe.Pointer) cuResult

	// Optional (nil on a driver older than CUDA 12.0, which has no TMA).
	cuTensorMapEncodeTiled func(m unsafe.Pointer, dtype int32, rank uint32, addr uint64, dims, strides *uint64, box, elemStrides *uint32, interleave, swizzle, l2, oob int32) cuResult
}

// symbol names one entry point: fn points at the driver field to bind,
// names lists the symbols to try, preferred first. An optional one may be
// missing (its field stays nil), the others may not.
type symbol struct {
	fn       any
	names    []string
	optional bool
}

// symbols lists every entry point with the symbol names to try.
// cuEventElapsedTime_v2 appeared in CUDA 12.8 (the v1 symbol is deprecated
// in 13.x); older drivers have only the v1, with the same signature.
func (d *driver) symbols() []symbol {
	s := func(fn any, names ...string) symbol { return symbol{fn: fn, names: names} }
	return []symbol{
		s(&d.cuInit, "cuInit"),
		s(&d.cuDriverGetVersion, "cuDriverGetVersion"),
		s(&d.cuGetErrorName, "cuGetErrorName"),
		s(&d.cuGetErrorString, "cuGetErrorString"),
		s(&d.cuDeviceGetCount, "cuDeviceGetCount"),
		s(&d.cuDeviceGet, "cuDeviceGet"),
		s(&d.cuDeviceGetName, "cuDeviceGetName"),
		s(&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		s(&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
		s(&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		s(&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
		s(&d.cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
		s(&d.cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
		s(&d.cuCtxSynchronize, "cuCtxSynchronize"),
		s(&d.cuMemGetInfo, "cuMemGetInfo_v2"),
		s(&d.cuMemAlloc, "cuMemAlloc_v2"),
		s(&d.cuMemFree, "cuMemFree_v2"),
		s(&d.cuMemsetD8, "cuMemsetD8_v2"),
		s(&d.cuMemsetD8Async, "cuMemsetD8Async"),
		s(&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
		s(&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
		s(&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
		s(&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		s(&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		s(&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		s(&d.cuMemcpy2DAsync, "cuMemcpy2DAsync_v2"),
		s(&d.cuMemHostAlloc, "cuMemHostAlloc"),
		s(&d.cuMemFreeHost, "cuMemFreeHost"),
		s(&d.cuMemHostRegister, "cuMemHostRegister_v2"),
		s(&d.cuMemHostUnregister, "cuMemHostUnregister"),
		s(&d.cuStreamCreate, "cuStreamCreate"),
		s(&d.cuStreamDestroy, "cuStreamDestroy_v2"),
		s(&d.cuStreamSynchronize, "cuStreamSynchronize"),
		s(&d.cuStreamQuery, "cuStreamQuery"),
		s(&d.cuStreamWaitEvent, "cuStreamWaitEvent"),
		s(&d.cuEventCreate, "cuEventCreate"),
		s(&d.cuEventRecord, "cuEventRecord"),
		s(&d.cuEventSynchronize, "cuEventSynchronize"),
		s(&d.cuEventQuery, "cuEventQuery"),
		s(&d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		s(&d.cuEventDestroy, "cuEventDestroy_v2"),
		s(&d.cuModuleLoadDataEx, "cuModuleLoadDataEx"),
		s(&d.cuModuleUnload, "cuModuleUnload"),
		s(&d.cuModuleGetFunction, "cuModuleGetFunction"),
		s(&d.cuFuncGetAttribute, "cuFuncGetAttribute"),
		s(&d.cuFuncSetAttribute, "cuFuncSetAttribute"),
		s(&d.cuLaunchKernel, "cuLaunchKernel"),
		{fn: &d.cuTensorMapEncodeTiled, names: []string{"cuTensorMapEncodeTiled"}, optional: true},
	}
}

var (
	initOnce sync.Once
	drv      *driver // set once Init has succeeded
	initErr  error
)

// Init opens the driver, binds its functions and calls cuInit(0). Only the
// first call does the work; later calls return its result, so every entry
// point of the package calls Init itself and callers need not. The error
// matches ErrNoDriver when libcuda.so.1 is missing, lacks a symbol or
// cannot start, and ErrNoDevice when the driver finds no GPU.
func Init() error {
	initOnce.Do(func() {
		d, err := openDriver()
		if err != nil {
			initErr = err
			return
		}
		if r := d.cuInit(0); r != 0 {
			e := newErrorWith(d, "cuInit", r)
			if e.Is(ErrNoDevice) || e.Is(ErrNoDriver) {
				initErr = e
			} else {
				// Whatever else stops cuInit (an unknown error, an OS
				// error) also means there is no usable driver here.
				initErr = fmt.Errorf("%w: %w", ErrNoDriver, e)
			}
			return
		}
		drv = d
	})
	return initErr
}

// DriverVersion is the CUDA version the driver supports, as 1000*major +
// 10*minor (13000 for CUDA 13.0): kernels built for a newer toolkit need
// at least that version.
func DriverVersion() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var v int32
	if r := drv.cuDriverGetVersion(&v); r != 0 {
		return 0, newError("cuDriverGetVersion", r)
	}
	return int(v), nil
}
