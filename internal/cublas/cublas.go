// Package cublas opens NVIDIA's cuBLAS at run time with purego (no cgo, no
// CUDA toolkit at build time) so that benchmarks can measure goamp's GPU
// kernels against it in the same process, on the same device memory. It is
// for benchmarks only: goamp never needs cuBLAS to run, and a machine
// without it still runs every goamp kernel.
//
// # What it binds
//
// Only what a GEMM comparison needs: cublasCreate_v2, cublasDestroy_v2,
// cublasSetStream_v2, cublasGetVersion_v2, cublasSetMathMode,
// cublasGetMathMode, cublasSgemm_v2, cublasDgemm_v2,
// cublasSgemmStridedBatched and cublasDgemmStridedBatched (cuBLAS has no
// _v2 of the last two: they came in CUDA 8, after the _v2 API), and
// cublasGemmEx, for float32 products in a compute type that names a
// reduced precision (SgemmIn).
//
// # Plain FP32
//
// New puts every handle in CUBLAS_DEFAULT_MATH, cuBLAS's default, and says
// so explicitly rather than trusting the default: in that mode Sgemm
// multiplies in IEEE float32 with float32 accumulation, as goamp's kernels
// do, and never uses TF32 tensor cores (CUBLAS_TF32_TENSOR_OP_MATH rounds
// the inputs to 10 mantissa bits and would make the comparison fp32 against
// something much cheaper). MathMode reads the mode back for the record.
// A reduced precision is asked for by name, one call at a time, through
// SgemmIn's compute type, never by the handle's mode.
//
// # Threads and contexts
//
// cuBLAS works in whatever CUDA context is current on the calling OS thread,
// and the Go scheduler moves goroutines between threads. So every call here
// runs inside cuda.Context.Do, which locks the goroutine to its thread and
// makes the handle's context current for the length of the call. A Handle
// must not be used by two goroutines at once (cuBLAS handles keep per-call
// state); one per goroutine is fine.
//
// # Layout
//
// cuBLAS is column-major and goamp row-major. A row-major matrix read as
// column-major is its transpose, so the row-major product C = op(A)*op(B)
// is the column-major C^T = op(B)^T * op(A)^T: Sgemm and Dgemm call cuBLAS
// with the operands swapped (B first), m and n swapped, and the transpose
// flags unchanged. They take the arguments of goamp's CPU GEMM
// (gemm.Float32), with device addresses for the matrices.
package cublas

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/goamp/goamp/internal/cuda"
)

// Libraries are the shared objects Open tries, in order: cuBLAS 13's soname,
// the development symlink (any version: the _v2 entry points used here have
// kept their signatures since CUDA 6), and the toolkit's default folder,
// for machines where it is installed but not on the loader's path.
var Libraries = []string{"libcublas.so.13", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so.13"}

// ErrUnavailable is wrapped by the error Open (and so New) returns when
// cuBLAS cannot be loaded: not installed, not on the loader's path, or
// missing a symbol.
var ErrUnavailable = errors.New("cublas: not available")

// Status is a cublasStatus_t: 0 is success, anything else a failure.
type Status int32

// The cublasStatus_t codes (cublas_api.h).
const (
	StatusSuccess         Status = 0
	StatusNotInitialized  Status = 1  // cuBLAS could not start (no usable CUDA context or driver)
	StatusAllocFailed     Status = 3  // a device allocation inside cuBLAS failed
	StatusInvalidValue    Status = 7  // a bad argument: size, leading dimension, transpose
	StatusArchMismatch    Status = 8  // the GPU lacks a feature the call needs
	StatusMappingError    Status = 11 // a texture or memory mapping failed
	StatusExecutionFailed Status = 13 // a kernel failed to launch or run
	StatusInternalError   Status = 14 // an internal CUDA call failed
	StatusNotSupported    Status = 15 // the combination of arguments is not supported
	StatusLicenseError    Status = 16 // a licensing problem (old dev builds)
)

var statusNames = map[Status][2]string{
	StatusSuccess:         {"CUBLAS_STATUS_SUCCESS", "success"},
	StatusNotInitialized:  {"CUBLAS_STATUS_NOT_INITIALIZED", "cuBLAS is not initialized"},
	StatusAllocFailed:     {"CUBLAS_STATUS_ALLOC_FAILED", "resource allocation failed"},
	StatusInvalidValue:    {"CUBLAS_STATUS_INVALID_VALUE", "an unsupported value or parameter was passed"},
	StatusArchMismatch:    {"CUBLAS_STATUS_ARCH_MISMATCH", "the device lacks a required feature"},
	StatusMappingError:    {"CUBLAS_STATUS_MAPPING_ERROR", "access to GPU memory space failed"},
	StatusExecutionFailed: {"CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
	StatusInternalError:   {"CUBLAS_STATUS_INTERNAL_ERROR", "an internal cuBLAS operation failed"},
	StatusNotSupported:    {"CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
	StatusLicenseError:    {"CUBLAS_STATUS_LICENSE_ERROR", "license error"},
}

// String is cuBLAS's name for the status, "CUBLAS_STATUS_INVALID_VALUE";
// a code this package does not know reads "CUBLAS_STATUS(42)".
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n[0]
	}
	return fmt.Sprintf("CUBLAS_STATUS(%d)", int32(s))
}

// Error is a failed cuBLAS call: Op names the function, Status its result.
type Error struct {
	Op     string
	Status Status
}

// Error reads like "cublas: cublasSgemm_v2: CUBLAS_STATUS_INVALID_VALUE (an
// unsupported value or parameter was passed)".
func (e *Error) Error() string {
	desc := "unrecognized status"
	if n, ok := statusNames[e.Status]; ok {
		desc = n[1]
	}
	return fmt.Sprintf("cublas: %s: %s (%s)", e.Op, e.Status, desc)
}

// check turns a status into nil or an *Error naming op.
func check(op string, s Status) error {
	if s == StatusSuccess {
		return nil
	}
	return &Error{Op: op, Status: s}
}

// MathMode is a cublasMath_t.
type MathMode int32

// The math modes this package names (cublas_api.h). Only MathDefault is ever
// set here; the others are named so that MathMode can say what it found.
const (
	MathDefault    MathMode = 0 // IEEE fp32 for Sgemm, no TF32: what New sets
	MathTensorOp   MathMode = 1 // deprecated; tensor cores for half-precision inputs
	MathPedantic   MathMode = 2 // strict IEEE, no reduced-precision paths at all
	MathTF32       MathMode = 3 // TF32 tensor cores for fp32: what New avoids
	mathDisallowRR MathMode = 16
)

// String names the mode as cuBLAS does, with what it means for Sgemm.
func (m MathMode) String() string {
	base := m &^ mathDisallowRR
	var s string
	switch base {
	case MathDefault:
		s = "CUBLAS_DEFAULT_MATH (fp32, no TF32)"
	case MathTensorOp:
		s = "CUBLAS_TENSOR_OP_MATH"
	case MathPedantic:
		s = "CUBLAS_PEDANTIC_MATH (strict fp32)"
	case MathTF32:
		s = "CUBLAS_TF32_TENSOR_OP_MATH (TF32!)"
	default:
		s = fmt.Sprintf("cublasMath_t(%d)", int32(base))
	}
	if m&mathDisallowRR != 0 {
		s += " | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION"
	}
	return s
}

// library holds cuBLAS's bound entry points. Handles and streams are opaque
// pointers (uintptr); device addresses are 64-bit; C ints are int32.
type library struct {
	path string // the name that opened

	create      func(h *uintptr) Status
	destroy     func(h uintptr) Status
	setStream   func(h uintptr, s uintptr) Status
	getVersion  func(h uintptr, v *int32) Status
	setMathMode func(h uintptr, m MathMode) Status
	getMathMode func(h uintptr, m *MathMode) Status
	sgemm       func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, b uint64, ldb int32, beta *float32, c uint64, ldc int32) Status
	dgemm       func(h uintptr, ta, tb, m, n, k int32, alpha *float64, a uint64, lda int32, b uint64, ldb int32, beta *float64, c uint64, ldc int32) Status
	// The batch strides are C long long, the batch count an int.
	sgemmStridedBatched func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, strideA int64, b uint64, ldb int32, strideB int64, beta *float32, c uint64, ldc int32, strideC int64, batch int32) Status
	dgemmStridedBatched func(h uintptr, ta, tb, m, n, k int32, alpha *float64, a uint64, lda int32, strideA int64, b uint64, ldb int32, strideB int64, beta *float64, c uint64, ldc int32, strideC int64, batch int32) Status
	// The data types are cudaDataType_t, the compute type a
	// cublasComputeType_t and the algorithm a cublasGemmAlgo_t, all C enums
	// (int).
	gemmEx func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, aType int32, lda int32, b uint64, bType int32, ldb int32, beta *float32, c uint64, cType int32, ldc int32, compute ComputeType, algo int32) Status
}

// symbols lists every entry point to bind: fn points at the field, name is
// the symbol.
func (l *library) symbols() []struct {
	fn   any
	name string
} {
	return []struct {
		fn   any
		name string
	}{
		{&l.create, "cublasCreate_v2"},
		{&l.destroy, "cublasDestroy_v2"},
		{&l.setStream, "cublasSetStream_v2"},
		{&l.getVersion, "cublasGetVersion_v2"},
		{&l.setMathMode, "cublasSetMathMode"},
		{&l.getMathMode, "cublasGetMathMode"},
		{&l.sgemm, "cublasSgemm_v2"},
		{&l.dgemm, "cublasDgemm_v2"},
		{&l.sgemmStridedBatched, "cublasSgemmStridedBatched"},
		{&l.dgemmStridedBatched, "cublasDgemmStridedBatched"},
		{&l.gemmEx, "cublasGemmEx"},
	}
}

var (
	openOnce sync.Once
	lib      *library
	openErr  error
)

// Open loads cuBLAS once, trying Libraries in order, and returns the name
// that opened, or an error wrapping ErrUnavailable that says why none did.
// New calls it; callers need it only to report on cuBLAS before making a
// handle.
func Open() (string, error) {
	openOnce.Do(func() { lib, openErr = openLibrary() })
	if openErr != nil {
		return "", openErr
	}
	return lib.path, nil
}

// Handle is a cuBLAS handle bound to one CUDA context.
type Handle struct {
	ctx *cuda.Context
	h   atomic.Uintptr // cublasHandle_t; 0 once destroyed
}

// errDestroyed is returned by calls on a destroyed Handle.
var errDestroyed = errors.New("cublas: handle used after Destroy")

// New creates a cuBLAS handle in ctx (normally a device's primary context,
// which the CUDA runtime inside cuBLAS shares) and sets its math mode to
// MathDefault: plain fp32, no TF32. Work goes to the default stream until
// SetStream says otherwise. The error wraps ErrUnavailable when cuBLAS
// cannot be loaded.
func New(ctx *cuda.Context) (*Handle, error) {
	if _, err := Open(); err != nil {
		return nil, err
	}
	var h uintptr
	err := ctx.Do(func() error { return check("cublasCreate_v2", lib.create(&h)) })
	if err != nil {
		return nil, err
	}
	hd := &Handle{ctx: ctx}
	hd.h.Store(h)
	if err := hd.do("cublasSetMathMode", func(h uintptr) Status { return lib.setMathMode(h, MathDefault) }); err != nil {
		hd.Destroy()
		return nil, err
	}
	return hd, nil
}

// do runs one cuBLAS call on h with the context current.
func (hd *Handle) do(op string, f func(h uintptr) Status) error {
	h := hd.h.Load()
	if h == 0 {
		return errDestroyed
	}
	return hd.ctx.Do(func() error { return check(op, f(h)) })
}

// Destroy releases the handle and its workspace; cuBLAS waits for the
// handle's queued work first. Later calls return an error; a second Destroy
// is harmless.
func (hd *Handle) Destroy() error {
	h := hd.h.Swap(0)
	if h == 0 {
		return nil
	}
	return hd.ctx.Do(func() error { return check("cublasDestroy_v2", lib.destroy(h)) })
}

// SetStream makes the handle queue its work on s (nil: the default
// stream, as after New).
func (hd *Handle) SetStream(s *cuda.Stream) error {
	return hd.do("cublasSetStream_v2", func(h uintptr) Status { return lib.setStream(h, s.Handle()) })
}

// Version is cuBLAS's version as major*10000 + minor*100 + patch (130002
// for 13.0.2); FormatVersion writes it out.
func (hd *Handle) Version() (int, error) {
	var v int32
	err := hd.do("cublasGetVersion_v2", func(h uintptr) Status { return lib.getVersion(h, &v) })
	return int(v), err
}

// FormatVersion writes a Version as "13.0.2".
func FormatVersion(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000, v%10000/100, v%100)
}

// MathMode reads the handle's math mode back from cuBLAS.
func (hd *Handle) MathMode() (MathMode, error) {
	var m MathMode
	err := hd.do("cublasGetMathMode", func(h uintptr) Status { return lib.getMathMode(h, &m) })
	return m, err
}

// cuBLAS transpose codes (cublasOperation_t).
const (
	opN = 0 // CUBLAS_OP_N
	opT = 1 // CUBLAS_OP_T
)

func op(t bool) int32 {
	if t {
		return opT
	}
	return opN
}

// dims checks that sizes are not negative and fit cuBLAS's 32-bit ints, so
// that a mistake reads as a Go error rather than a huge unsigned size.
func dims(op string, sizes ...int) error {
	for _, s := range sizes {
		if s < 0 || s > 1<<31-1 {
			return fmt.Errorf("cublas: %s: size %d out of range (0 to 2^31-1)", op, s)
		}
	}
	return nil
}

// Sgemm queues C = alpha*op(A)*op(B) + beta*C on the handle's stream for
// row-major float32 matrices at device addresses a (op(A) m x k, row stride
// lda), b (op(B) k x n, ldb) and c (m x n, ldc): the arguments of
// gemm.Float32. It returns once the work is queued, not done; record an
// event after it, or copy C back, to wait. alpha and beta are read from host
// memory during the call (cuBLAS's default pointer mode). C is not read when
// beta is 0.
func (hd *Handle) Sgemm(transA, transB bool, m, n, k int, alpha float32, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, beta float32, c cuda.DevicePtr, ldc int) error {
	if err := dims("cublasSgemm_v2", m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	al, be, unpin := hostScalars(alpha, beta)
	defer unpin()
	// Row-major C = op(A)*op(B) is column-major C^T = op(B)^T*op(A)^T: B
	// first, n and m swapped, the transposes as they are (see the package
	// doc).
	return hd.do("cublasSgemm_v2", func(h uintptr) Status {
		return lib.sgemm(h, op(transB), op(transA), int32(n), int32(m), int32(k),
			al, uint64(b), int32(ldb), uint64(a), int32(lda), be, uint64(c), int32(ldc))
	})
}

// Dgemm is Sgemm for float64 (cublasDgemm_v2), with gemm.Float64's
// arguments.
func (hd *Handle) Dgemm(transA, transB bool, m, n, k int, alpha float64, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, beta float64, c cuda.DevicePtr, ldc int) error {
	if err := dims("cublasDgemm_v2", m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	al, be, unpin := hostScalars(alpha, beta)
	defer unpin()
	return hd.do("cublasDgemm_v2", func(h uintptr) Status {
		return lib.dgemm(h, op(transB), op(transA), int32(n), int32(m), int32(k),
			al, uint64(b), int32(ldb), uint64(a), int32(lda), be, uint64(c), int32(ldc))
	})
}

// ComputeType is a cublasComputeType_t: how cublasGemmEx multiplies.
type ComputeType int32

// The compute types SgemmIn takes, for float32 operands (cublas_api.h).
const (
	Compute32F         ComputeType = 68 // float32 arithmetic, as Sgemm in MathDefault
	Compute32FFastFP16 ComputeType = 74 // operands may be rounded to FP16 (or TF32), float32 sums
	Compute32FFastBF16 ComputeType = 75 // operands may be rounded to BF16 (or TF32), float32 sums
	Compute32FFastTF32 ComputeType = 77 // operands may be rounded to TF32, float32 sums
)

// String names the type as cuBLAS does.
func (c ComputeType) String() string {
	switch c {
	case Compute32F:
		return "CUBLAS_COMPUTE_32F"
	case Compute32FFastFP16:
		return "CUBLAS_COMPUTE_32F_FAST_16F"
	case Compute32FFastBF16:
		return "CUBLAS_COMPUTE_32F_FAST_16BF"
	case Compute32FFastTF32:
		return "CUBLAS_COMPUTE_32F_FAST_TF32"
	}
	return fmt.Sprintf("cublasComputeType_t(%d)", int32(c))
}

const (
	cudaR32F    = 0  // CUDA_R_32F (library_types.h)
	gemmDefault = -1 // CUBLAS_GEMM_DEFAULT: cuBLAS's heuristics pick the algorithm
)

// SgemmIn is Sgemm (float32 storage, the same arguments) through
// cublasGemmEx with compute type compute: Compute32FFastTF32, for
// instance, lets cuBLAS round the operands to TF32 and run on the tensor
// cores, as goamp's mma kernel does when asked for TF32. Like Sgemm it
// returns once the work is queued.
func (hd *Handle) SgemmIn(compute ComputeType, transA, transB bool, m, n, k int, alpha float32, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, beta float32, c cuda.DevicePtr, ldc int) error {
	const name = "cublasGemmEx"
	if err := dims(name, m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	switch compute {
	case Compute32F, Compute32FFastFP16, Compute32FFastBF16, Compute32FFastTF32:
	default:
		return fmt.Errorf("cublas: %s: compute type %v is not one for float32 operands", name, compute)
	}
	al, be, unpin := hostScalars(alpha, beta)
	defer unpin()
	// Swapped as in Sgemm: B first, n and m swapped.
	return hd.do(name, func(h uintptr) Status {
		return lib.gemmEx(h, op(transB), op(transA), int32(n), int32(m), int32(k),
			al, uint64(b), cudaR32F, int32(ldb), uint64(a), cudaR32F, int32(lda),
			be, uint64(c), cudaR32F, int32(ldc), compute, gemmDefault)
	})
}

// hostScalars returns alpha and beta for a call that reads them by
// address (cuBLAS's default pointer mode): on the heap, pinned, so that
// their addresses stay theirs for the call whatever the Go runtime does;
// unpin releases them once the call has returned.
func hostScalars[T float32 | float64](alpha, beta T) (al, be *T, unpin func()) {
	al, be = new(T), new(T)
	*al, *be = alpha, beta
	var pin runtime.Pinner
	pin.Pin(al)
	pin.Pin(be)
	return al, be, pin.Unpin
}

// batchArgs checks a strided batch's count and strides as dims checks
// sizes: the count is a C int, the strides long long, none negative.
func batchArgs(op string, batch int, strides ...int) error {
	if batch < 0 || batch > 1<<31-1 {
		return fmt.Errorf("cublas: %s: batch of %d out of range (0 to 2^31-1)", op, batch)
	}
	for _, s := range strides {
		if s < 0 {
			return fmt.Errorf("cublas: %s: negative batch stride %d", op, s)
		}
	}
	return nil
}

// SgemmStridedBatched queues batch products C_i = alpha*op(A_i)*op(B_i) +
// beta*C_i (cublasSgemmStridedBatched), each as Sgemm takes one, where A_i
// starts strideA elements after A_(i-1), and likewise B_i and C_i: a
// strided batch in one call. Like Sgemm it returns once the work is
// queued.
func (hd *Handle) SgemmStridedBatched(transA, transB bool, m, n, k int, alpha float32, a cuda.DevicePtr, lda, strideA int, b cuda.DevicePtr, ldb, strideB int, beta float32, c cuda.DevicePtr, ldc, strideC, batch int) error {
	const name = "cublasSgemmStridedBatched"
	if err := dims(name, m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	if err := batchArgs(name, batch, strideA, strideB, strideC); err != nil {
		return err
	}
	al, be, unpin := hostScalars(alpha, beta)
	defer unpin()
	// Swapped as in Sgemm: B (and its stride) first, n and m swapped.
	return hd.do(name, func(h uintptr) Status {
		return lib.sgemmStridedBatched(h, op(transB), op(transA), int32(n), int32(m), int32(k),
			al, uint64(b), int32(ldb), int64(strideB), uint64(a), int32(lda), int64(strideA),
			be, uint64(c), int32(ldc), int64(strideC), int32(batch))
	})
}

// DgemmStridedBatched is SgemmStridedBatched for float64
// (cublasDgemmStridedBatched).
func (hd *Handle) DgemmStridedBatched(transA, transB bool, m, n, k int, alpha float64, a cuda.DevicePtr, lda, strideA int, b cuda.DevicePtr, ldb, strideB int, beta float64, c cuda.DevicePtr, ldc, strideC, batch int) error {
	const name = "cublasDgemmStridedBatched"
	if err := dims(name, m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	if err := batchArgs(name, batch, strideA, strideB, strideC); err != nil {
		return err
	}
	al, be, unpin := hostScalars(alpha, beta)
	defer unpin()
	return hd.do(name, func(h uintptr) Status {
		return lib.dgemmStridedBatched(h, op(transB), op(transA), int32(n), int32(m), int32(k),
			al, uint64(b), int32(ldb), int64(strideB), uint64(a), int32(lda), int64(strideA),
			be, uint64(c), int32(ldc), int64(strideC), int32(batch))
	})
}
