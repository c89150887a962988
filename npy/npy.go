package npy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goamp/goamp/half"
)

// Sentinel errors. Every error returned by this package wraps exactly one
// of them, or, for I/O failures and cancellation, the underlying error (an
// *os.PathError, a syscall error, context.Canceled...) instead; test with
// errors.Is.
var (
	// ErrNotNPY means the input is not a .npy file: it is empty, its magic
	// string is wrong, or its format version is not 1.0, 2.0 or 3.0.
	ErrNotNPY = errors.New("npy: not a .npy file")

	// ErrTruncated means the input ends early: inside the preamble or the
	// header, or before all the data that the header's shape promises.
	ErrTruncated = errors.New("npy: truncated file")

	// ErrCorrupt means the input is a .npy file whose content is invalid:
	// a malformed header dict, missing or unknown keys, a negative or
	// overflowing shape, bytes not allowed in the header, an oversized
	// header, or extra bytes after the array data.
	ErrCorrupt = errors.New("npy: corrupt file")

	// ErrUnsupportedDType means the array's element type is valid for NumPy
	// but not one this package handles (only float32, float64, int32 and
	// float16 are), or, for Write and Array.DType, that Data is not one of
	// []float32, []float64, []int32 or []half.Float16.
	ErrUnsupportedDType = errors.New("npy: unsupported dtype")

	// ErrObjectArray means the file holds a NumPy object array ('|O'),
	// whose payload is a Python pickle. Such files are never unpickled.
	ErrObjectArray = errors.New("npy: object arrays are not supported")

	// ErrInvalidArray means an Array passed to Write or WriteFile is not
	// self-consistent: nil, nil Data, a negative dimension, too many
	// dimensions, or len(Data) differing from the product of Shape.
	ErrInvalidArray = errors.New("npy: invalid array")

	// ErrIsDirectory means the destination given to WriteFile,
	// WriteFileContext or CheckWritable, or the file given to ReadFile or
	// Open, is a directory (after following symbolic links).
	ErrIsDirectory = errors.New("npy: destination is a directory")

	// ErrTooLarge means the header of the file being read describes more
	// array data than the read accepts (ReadOptions.MaxBytes, by default
	// DefaultMaxBytes). It is reported from the header alone, before any
	// data is read or memory allocated for it.
	ErrTooLarge = errors.New("npy: array too large")

	// ErrNotRegular means the destination given to WriteFile,
	// WriteFileContext or CheckWritable exists (after following symbolic
	// links) but is not a regular file: a device, a FIFO, a socket... Such
	// a file is never replaced.
	ErrNotRegular = errors.New("npy: destination is not a regular file")
)

// MaxHeaderLen is the largest header (the dict literal with its padding, in
// bytes) that Read accepts. NumPy itself refuses headers over 10000
// characters by default; files written by Write have headers of at most a
// few kilobytes.
const MaxHeaderLen = 1 << 20

// MaxDims is the largest number of dimensions Read and Write accept. It is
// NumPy 2's limit (NumPy 1 allowed 32).
const MaxDims = 64

// DType names an element type goamp supports.
type DType int

// The supported element types.
const (
	// Float32 is IEEE 754 single precision; Go type float32, NumPy '<f4'.
	Float32 DType = iota + 1
	// Float64 is IEEE 754 double precision; Go type float64, NumPy '<f8'.
	Float64
	// Int32 is a signed 32-bit integer; Go type int32, NumPy '<i4'.
	Int32
	// Float16 is IEEE 754 half precision; Go type half.Float16 (its
	// bits), NumPy '<f2'.
	Float16
)

// String returns the NumPy name of d ("float32", "float64", "int32" or
// "float16"), or
// "DType(n)" for a value that is not one of the constants.
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Int32:
		return "int32"
	case Float16:
		return "float16"
	}
	return "DType(" + strconv.Itoa(int(d)) + ")"
}

// size returns the number of bytes of one element of type d.
func (d DType) size() int {
	switch d {
	case Float32, Int32:
		return 4
	case Float64:
		return 8
	case Float16:
		return 2
	}
	return 0
}

// descr returns the little-endian NumPy type descriptor of d.
func (d DType) descr() string {
	switch d {
	case Float32:
		return "<f4"
	case Float64:
		return "<f8"
	case Int32:
		return "<i4"
	case Float16:
		return "<f2"
	}
	return ""
}

// Array is an n-dimensional array read from or to be written to a .npy file.
// Data is always in C (row-major) order: Read transposes Fortran-ordered files.
type Array struct {
	// Shape holds the length of each dimension. An empty (or nil) Shape
	// is a 0-dimensional array holding exactly one element.
	Shape []int
	// Data holds the elements in C order: a []float32, []float64,
	// []int32 or []half.Float16 whose length is the product of Shape (1
	// for shape ()).
	Data any
}

// DType returns the element type of a's Data. It fails, wrapping
// ErrInvalidArray, when a or its Data is nil, and, wrapping
// ErrUnsupportedDType, when Data is not a []float32, []float64, []int32 or
// []half.Float16.
func (a *Array) DType() (DType, error) {
	if a == nil {
		return 0, newError(ErrInvalidArray, "nil array")
	}
	switch a.Data.(type) {
	case []float32:
		return Float32, nil
	case []float64:
		return Float64, nil
	case []int32:
		return Int32, nil
	case []half.Float16:
		return Float16, nil
	case nil:
		return 0, newError(ErrInvalidArray, "array has nil data")
	}
	return 0, newError(ErrUnsupportedDType,
		fmt.Sprintf("unsupported data type %T (want []float32, []float64, []int32 or []half.Float16)", a.Data))
}

// dataLen returns len(a.Data) for a supported Data type.
func dataLen(data any) int {
	switch d := data.(type) {
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []int32:
		return len(d)
	case []half.Float16:
		return len(d)
	}
	return -1
}

// check validates a for writing and returns its element type.
func (a *Array) check() (DType, error) {
	dt, err := a.DType()
	if err != nil {
		return 0, err
	}
	if len(a.Shape) > MaxDims {
		return 0, newError(ErrInvalidArray,
			fmt.Sprintf("shape has %d dimensions, more than the maximum %d", len(a.Shape), MaxDims))
	}
	for _, d := range a.Shape {
		if d < 0 {
			return 0, newError(ErrInvalidArray,
				fmt.Sprintf("negative dimension %d in shape %s", d, shapeString(a.Shape)))
		}
	}
	n, _, ok := elemCount(a.Shape, dt.size())
	if !ok {
		return 0, newError(ErrInvalidArray,
			fmt.Sprintf("shape %s %s is too large", shapeString(a.Shape), dt))
	}
	if l := dataLen(a.Data); l != n {
		return 0, newError(ErrInvalidArray,
			fmt.Sprintf("data has %d elements but shape %s needs %d", l, shapeString(a.Shape), n))
	}
	return dt, nil
}

// elemCount returns the number of elements of an array of the given
// (non-negative) shape and its size in bytes with the given element size.
// ok is false if the count or the byte size overflows an int, or if the
// product of the non-zero dimensions does (so that offsets computed from any
// subset of dimensions never overflow either).
func elemCount(shape []int, itemSize int) (n, nbytes int, ok bool) {
	prod := itemSize // product of max(d, 1) times itemSize
	zero := false
	for _, d := range shape {
		if d < 0 {
			return 0, 0, false
		}
		if d == 0 {
			zero = true
			continue
		}
		if prod > math.MaxInt/d {
			return 0, 0, false
		}
		prod *= d
	}
	if zero {
		return 0, 0, true
	}
	return prod / itemSize, prod, true
}

// shapeString formats a shape as Python does: (), (5,), (3, 4).
func shapeString(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// npyError is the concrete type of every error this package returns. Its
// message is "npy: [path: ]msg"; it unwraps to kind, a sentinel or an I/O
// error.
type npyError struct {
	kind error
	path string
	msg  string
}

func (e *npyError) Error() string {
	if e.path != "" {
		return "npy: " + e.path + ": " + e.msg
	}
	return "npy: " + e.msg
}

func (e *npyError) Unwrap() error { return e.kind }

// newError returns an error with message msg wrapping kind.
func newError(kind error, msg string) error {
	return &npyError{kind: kind, msg: msg}
}

// ioError wraps an I/O error from the underlying reader or writer.
func ioError(what string, err error) error {
	return &npyError{kind: err, msg: what + ": " + err.Error()}
}

// withPath returns err with path added to its message.
func withPath(err error, path string) error {
	if e, ok := err.(*npyError); ok && e.path == "" {
		c := *e
		c.path = path
		return &c
	}
	return err
}
