package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// Sentinel errors, for errors.Is. The layer above decides from them whether
// to fall back to the CPU (ErrNoDriver, ErrNoDevice), to retry smaller
// (ErrOutOfMemory) or to stop using the device (ErrContextLost).
var (
	// ErrNoDriver: libcuda.so.1 cannot be opened, lacks a needed symbol, or
	// the driver cannot start (CUDA_ERROR_NOT_INITIALIZED,
	// CUDA_ERROR_DEINITIALIZED, CUDA_ERROR_STUB_LIBRARY,
	// CUDA_ERROR_INSUFFICIENT_DRIVER, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
	// CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, or any other cuInit failure).
	ErrNoDriver = errors.New("cuda: no usable CUDA driver")

	// ErrNoDevice: the driver works but sees no GPU (CUDA_ERROR_NO_DEVICE,
	// for instance with CUDA_VISIBLE_DEVICES empty), or an ordinal is out of
	// range (CUDA_ERROR_INVALID_DEVICE).
	ErrNoDevice = errors.New("cuda: no CUDA device")

	// ErrOutOfMemory: an allocation failed for lack of device or
	// page-locked host memory (CUDA_ERROR_OUT_OF_MEMORY). The context stays
	// usable.
	ErrOutOfMemory = errors.New("cuda: out of memory")

	// ErrContextLost: a kernel faulted (illegal address, device assert,
	// launch failure, ...). CUDA's rule: the context and everything in it
	// are unusable from then on and every later call fails the same way;
	// only a new process can use the device again. See Context.Err.
	ErrContextLost = errors.New("cuda: context lost to a device fault")

	// ErrReleased: a Context, Stream, Event, Module or HostBuffer was used
	// after Release, Destroy, Unload or Free.
	ErrReleased = errors.New("cuda: used after release")
)

// CUresult codes the package tests for by number.
const (
	codeInvalidValue      = 1
	codeOutOfMemory       = 2
	codeNotInitialized    = 3
	codeDeinitialized     = 4
	codeStubLibrary       = 34
	codeInsufficientDrv   = 35
	codeNoDevice          = 100
	codeInvalidDevice     = 101
	codeNotReady          = 600
	codeIllegalAddress    = 700
	codeLaunchTimeout     = 702
	codeAssert            = 710
	codeHardwareStack     = 714
	codeIllegalInstr      = 715
	codeMisalignedAddress = 716
	codeInvalidAddrSpace  = 717
	codeInvalidPC         = 718
	codeLaunchFailed      = 719
	codeTensorMemoryLeak  = 721
	codeDriverMismatch    = 803
	codeCompatNotSupp     = 804
	codeUnknown           = 999
)

// Error is a failed driver call: Op is the driver function (without its
// _v2 suffix), Code the CUresult, Name and Message the driver's own
// cuGetErrorName and cuGetErrorString for it. Log holds the JIT
// compiler's error log when a module failed to load, since the code alone
// (CUDA_ERROR_INVALID_PTX) does not say what is wrong with the kernel.
type Error struct {
	Op      string
	Code    int
	Name    string
	Message string
	Log     string
}

// Error reads like "cuda: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of
// memory)", followed by the JIT log when there is one.
func (e *Error) Error() string {
	s := fmt.Sprintf("cuda: %s: %s (%s)", e.Op, e.Name, e.Message)
	if e.Log != "" {
		s += "\n" + e.Log
	}
	return s
}

// Is matches the sentinel that classifies e's code, so that callers test
// errors.Is(err, cuda.ErrOutOfMemory) rather than numbers.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrOutOfMemory:
		return e.Code == codeOutOfMemory
	case ErrNoDevice:
		return e.Code == codeNoDevice || e.Code == codeInvalidDevice
	case ErrNoDriver:
		switch e.Code {
		case codeNotInitialized, codeDeinitialized, codeStubLibrary, codeInsufficientDrv,
			codeDriverMismatch, codeCompatNotSupp:
			return true
		}
	case ErrContextLost:
		return sticky(e.Code)
	}
	return false
}

// sticky reports whether code is one of the errors after which CUDA
// declares the context unusable ("any further CUDA work will return the
// same error"). CUDA_ERROR_UNKNOWN is included: the driver reports some
// device faults that way, and after it nothing can be trusted.
func sticky(code int) bool {
	switch code {
	case codeIllegalAddress, codeLaunchTimeout, codeAssert, codeHardwareStack, codeIllegalInstr,
		codeMisalignedAddress, codeInvalidAddrSpace, codeInvalidPC, codeLaunchFailed,
		codeTensorMemoryLeak, codeUnknown:
		return true
	}
	return false
}

// newError builds the *Error for a failed call through the loaded driver.
func newError(op string, r cuResult) *Error { return newErrorWith(drv, op, r) }

// newErrorWith builds the *Error for code r from op, asking d (which may be
// nil, in tests) for the code's name and description.
func newErrorWith(d *driver, op string, r cuResult) *Error {
	e := &Error{Op: op, Code: int(r)}
	if d != nil {
		var p *byte
		if d.cuGetErrorName(r, &p) == 0 {
			e.Name = cString(p)
		}
		p = nil
		if d.cuGetErrorString(r, &p) == 0 {
			e.Message = cString(p)
		}
	}
	if e.Name == "" {
		e.Name = fmt.Sprintf("CUresult(%d)", int(r))
	}
	if e.Message == "" {
		e.Message = "unrecognized error code"
	}
	return e
}

// cString copies the NUL-terminated C string at p (static strings owned by
// the driver) into Go memory.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 && n < 1<<16 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cBytes returns the text of buf up to its first NUL (buf filled by the
// driver, such as a JIT log).
func cBytes(buf []byte) string {
	for i, b := range buf {
		if b == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}
