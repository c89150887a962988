package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// CUjit_option values (cuda.h) that LoadModule passes.
const (
	jitInfoLogBuffer       = 3
	jitInfoLogBufferBytes  = 4
	jitErrorLogBuffer      = 5
	jitErrorLogBufferBytes = 6
)

// jitLogBytes is the size of each JIT log buffer: enough for many lines
// of ptxas diagnostics, which is all a failed load needs to explain itself.
const jitLogBytes = 16 << 10

// Module is loaded device code: a cubin, a fatbin, or PTX that the driver
// compiles for this device when loaded.
type Module struct {
	ctx *Context
	h   atomic.Uintptr // CUmodule; 0 once unloaded
	log string
}

// fatbinMagic opens a fatbin (the container nvcc --fatbin writes, holding
// cubins and PTX for several architectures), little-endian.
const fatbinMagic = 0xBA55ED50

// moduleImage returns the image as cuModuleLoadDataEx wants it: cubins
// (ELF) and fatbins as they are, anything else taken for PTX text, which
// the driver reads up to a NUL, so one is appended where missing (in a
// copy: the caller's slice is not touched).
func moduleImage(image []byte) []byte {
	if bytes.HasPrefix(image, []byte("\x7fELF")) ||
		len(image) >= 4 && binary.LittleEndian.Uint32(image) == fatbinMagic {
		return image
	}
	if len(image) > 0 && image[len(image)-1] == 0 {
		return image
	}
	out := make([]byte, len(image)+1)
	copy(out, image)
	return out
}

// LoadModule loads a cubin, fatbin or PTX image into the context. PTX is
// compiled by the driver's JIT for this device (and cached by the driver
// on disk). If loading fails, the *Error's Log holds the JIT compiler's
// error log, which names the offending line; JITLog keeps its info log
// (warnings, register use) on success.
func (c *Context) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("cuda: cuModuleLoadDataEx: empty image")
	}
	img := moduleImage(image)
	errLog := make([]byte, jitLogBytes)
	infoLog := make([]byte, jitLogBytes)
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferBytes, jitInfoLogBuffer, jitInfoLogBufferBytes}
	// Option values are void*: buffer addresses, and sizes cast to void*
	// (which the driver overwrites with the bytes it wrote). The buffers
	// are pinned so that their addresses, hidden from the GC in uintptrs,
	// stay theirs for the call.
	var pin runtime.Pinner
	pin.Pin(&errLog[0])
	pin.Pin(&infoLog[0])
	pin.Pin(&img[0])
	defer pin.Unpin()
	vals := []uintptr{
		uintptr(unsafe.Pointer(&errLog[0])), jitLogBytes,
		uintptr(unsafe.Pointer(&infoLog[0])), jitLogBytes,
	}
	var h uintptr
	var r cuResult
	err := c.do(func() error {
		r = drv.cuModuleLoadDataEx(&h, unsafe.Pointer(&img[0]), uint32(len(opts)), &opts[0], &vals[0])
		return nil
	})
	runtime.KeepAlive(errLog)
	runtime.KeepAlive(infoLog)
	runtime.KeepAlive(img)
	if err != nil {
		return nil, err
	}
	if r != 0 {
		e := newError("cuModuleLoadDataEx", r)
		e.Log = cBytes(errLog)
		c.noteSticky(e)
		return nil, e
	}
	m := &Module{ctx: c, log: cBytes(infoLog)}
	m.h.Store(h)
	return m, nil
}

// JITLog is the JIT compiler's info log from loading the module (empty for
// cubins, and usually for clean PTX).
func (m *Module) JITLog() string { return m.log }

// Function looks up a kernel by its symbol name: the .entry name in PTX,
// the extern "C" name (or the mangled one) in CUDA C.
func (m *Module) Function(name string) (*Function, error) {
	h := m.h.Load()
	if h == 0 {
		return nil, ErrReleased
	}
	var f uintptr
	op := fmt.Sprintf("cuModuleGetFunction(%q)", name)
	if err := m.ctx.call(op, func() cuResult { return drv.cuModuleGetFunction(&f, h, name) }); err != nil {
		return nil, err
	}
	return &Function{mod: m, h: f, Name: name}, nil
}

// Unload releases the module; its Functions become invalid. Kernels still
// running finish first.
func (m *Module) Unload() error {
	h := m.h.Swap(0)
	if h == 0 {
		return ErrReleased
	}
	return m.ctx.call("cuModuleUnload", func() cuResult { return drv.cuModuleUnload(h) })
}

// Function is one kernel of a loaded Module. Launching it from several
// goroutines at once is safe.
type Function struct {
	mod  *Module
	h    uintptr // CUfunction
	Name string  // the symbol name it was looked up by
}

// FuncAttribute is a CUfunction_attribute: a fact about a compiled kernel
// (cuFuncGetAttribute), some of which can be set (cuFuncSetAttribute).
type FuncAttribute int32

// Function attributes (values from cuda.h's CUfunction_attribute).
const (
	FuncMaxThreadsPerBlock         FuncAttribute = 0 // most threads a block of this kernel can have (registers permitting)
	FuncSharedSizeBytes            FuncAttribute = 1 // static shared memory
	FuncConstSizeBytes             FuncAttribute = 2
	FuncLocalSizeBytes             FuncAttribute = 3 // local memory per thread: spills show up here
	FuncNumRegs                    FuncAttribute = 4 // registers per thread
	FuncPTXVersion                 FuncAttribute = 5 // 10*major+minor of the PTX ISA target
	FuncBinaryVersion              FuncAttribute = 6 // 10*major+minor of the SASS it runs
	FuncMaxDynamicSharedSizeBytes  FuncAttribute = 8
	FuncPreferredSharedMemCarveout FuncAttribute = 9 // percent of L1/shared split given to shared
)

// live returns ErrReleased once the function's module is unloaded.
func (f *Function) live() error {
	if f.mod.h.Load() == 0 {
		return ErrReleased
	}
	return nil
}

// Attribute reads one attribute of the compiled kernel.
func (f *Function) Attribute(a FuncAttribute) (int, error) {
	if err := f.live(); err != nil {
		return 0, err
	}
	var v int32
	err := f.mod.ctx.call("cuFuncGetAttribute", func() cuResult { return drv.cuFuncGetAttribute(&v, int32(a), f.h) })
	return int(v), err
}

// SetAttribute sets a settable attribute (FuncMaxDynamicSharedSizeBytes,
// FuncPreferredSharedMemCarveout).
func (f *Function) SetAttribute(a FuncAttribute, v int) error {
	if err := f.live(); err != nil {
		return err
	}
	return f.mod.ctx.call("cuFuncSetAttribute", func() cuResult { return drv.cuFuncSetAttribute(f.h, int32(a), int32(v)) })
}

// SetMaxDynamicSharedMemory lets launches of f ask for up to bytes of
// dynamic shared memory. Without it a launch may use at most 48 KiB (less
// the kernel's static shared memory); with it, up to the device's
// MaxSharedMemoryPerBlockOptin (227 KiB on an H100).
func (f *Function) SetMaxDynamicSharedMemory(bytes int) error {
	return f.SetAttribute(FuncMaxDynamicSharedSizeBytes, bytes)
}

// Args are kernel arguments packed for cuLaunchKernel: one 8-byte slot
// per argument holding its value (a TensorMap, 128 bytes, gets a buffer of
// its own in maps instead), and the void* array of their addresses.
// Packing ahead of a launch (PackArgs, then LaunchArgs) keeps the work out
// of a timed window; Launch packs and launches in one call.
type Args struct {
	slots  []uint64
	maps   [][]uint64 // the TensorMap arguments' buffers
	params []unsafe.Pointer
}

// PackArgs packs args (int32, uint32, int64, uint64, float32, float64,
// DevicePtr or TensorMap, one per kernel parameter, in order) for
// LaunchArgs. The
// driver reads each slot with the size the kernel declares for that
// parameter, so the Go type must match it exactly; int and uint are
// refused because their size says nothing about the kernel's.
func PackArgs(args ...any) (*Args, error) {
	a := &Args{}
	if len(args) == 0 {
		return a, nil
	}
	a.slots = make([]uint64, len(args))
	a.params = make([]unsafe.Pointer, len(args))
	for i, arg := range args {
		p := unsafe.Pointer(&a.slots[i])
		switch v := arg.(type) {
		case int32:
			*(*int32)(p) = v
		case uint32:
			*(*uint32)(p) = v
		case int64:
			*(*int64)(p) = v
		case uint64:
			*(*uint64)(p) = v
		case float32:
			*(*uint32)(p) = math.Float32bits(v)
		case float64:
			*(*uint64)(p) = math.Float64bits(v)
		case DevicePtr:
			*(*uint64)(p) = uint64(v)
		case TensorMap:
			// 128 bytes, more than a slot: a copy of its own, aligned as
			// the kernel's parameter is (64 bytes).
			buf := make([]uint64, 16+8)
			off := (64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 8
			copy(buf[off:], v.raw[:])
			a.maps = append(a.maps, buf)
			p = unsafe.Pointer(&buf[off])
		default:
			return nil, fmt.Errorf("cuda: kernel argument %d has type %T; want int32, uint32, int64, uint64, float32, float64, DevicePtr or TensorMap, matching the kernel's parameter", i, arg)
		}
		a.params[i] = p
	}
	return a, nil
}

// Launch queues f on stream s (nil: the default stream) over grid blocks
// of block threads, with sharedBytes of dynamic shared memory, passing
// args (int32, uint32, int64, uint64, float32, float64, DevicePtr or
// TensorMap, one per kernel parameter, in order, each the parameter's
// exact size).
//
// It returns as soon as the launch is queued. An error here is about the
// launch itself (bad dimensions, too much shared memory, a released
// module); a fault while the kernel runs is reported by the next
// synchronizing call and matches ErrContextLost.
func (f *Function) Launch(grid, block [3]uint32, sharedBytes int, s *Stream, args ...any) error {
	a, err := PackArgs(args...)
	if err != nil {
		return fmt.Errorf("%w (launching %s)", err, f.Name)
	}
	return f.LaunchArgs(grid, block, sharedBytes, s, a)
}

// LaunchArgs is Launch with arguments packed by PackArgs. An Args may be
// launched any number of times, but not from two goroutines at once.
func (f *Function) LaunchArgs(grid, block [3]uint32, sharedBytes int, s *Stream, a *Args) error {
	if err := f.live(); err != nil {
		return err
	}
	if err := s.live(); err != nil {
		return err
	}
	if sharedBytes < 0 || uint64(sharedBytes) > math.MaxUint32 {
		return fmt.Errorf("cuda: cuLaunchKernel(%s): shared memory size %d out of range", f.Name, sharedBytes)
	}
	// params holds Go pointers to slots and maps and goes to C: all are
	// pinned, as the cgo rules ask. The driver copies the values at
	// launch, so they are unpinned as soon as cuLaunchKernel returns.
	var pin runtime.Pinner
	var pp unsafe.Pointer
	if len(a.params) > 0 {
		pin.Pin(&a.slots[0])
		pin.Pin(&a.params[0])
		for _, m := range a.maps {
			pin.Pin(&m[0])
		}
		pp = unsafe.Pointer(&a.params[0])
	}
	defer pin.Unpin()
	err := f.mod.ctx.call("cuLaunchKernel("+f.Name+")", func() cuResult {
		return drv.cuLaunchKernel(f.h, grid[0], grid[1], grid[2], block[0], block[1], block[2],
			uint32(sharedBytes), s.handle(), pp, nil)
	})
	runtime.KeepAlive(a)
	return err
}
