package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"
)

// magic is the string every .npy file starts with.
const magic = "\x93NUMPY"

// Read reads one array from r, which must hold exactly one .npy file: Read
// consumes r up to EOF and fails, wrapping ErrCorrupt, if bytes follow the
// array data. It accepts format versions 1.0, 2.0 and 3.0 and element types
// '<f4', '<f8' and '<i4' in little-, big- or native-endian byte order, and
// returns the data in C order as a []float32, []float64 or []int32 in
// native values. Errors wrap ErrNotNPY, ErrTruncated, ErrCorrupt,
// ErrUnsupportedDType, ErrObjectArray, or an I/O error from r.
//
// Memory use is bounded by the data actually present: a short input that
// claims a huge shape fails with ErrTruncated after reading what is there.
func Read(r io.Reader) (*Array, error) {
	return read(r, knownRemaining(r))
}

// ReadFile reads the .npy file at path; see Read.
func ReadFile(path string) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		// os.Open's message repeats the path; keep only why it failed.
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, withPath(&npyError{kind: err, msg: "cannot open: " + pe.Err.Error()}, path)
		}
		return nil, withPath(ioError("open", err), path)
	}
	defer f.Close()
	remaining := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		remaining = fi.Size()
	}
	cr := &countingReader{r: f}
	a, err := read(cr, func() int64 {
		if remaining < 0 {
			return -1
		}
		return remaining - cr.n
	})
	if err != nil {
		return nil, withPath(err, path)
	}
	return a, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// knownRemaining returns a function reporting how many unread bytes r holds,
// for the in-memory readers of the standard library, whose Len reports
// exactly that; for other readers the function returns -1 (unknown).
func knownRemaining(r io.Reader) func() int64 {
	var l interface{ Len() int }
	switch r := r.(type) {
	case *bytes.Reader:
		l = r
	case *bytes.Buffer:
		l = r
	case *strings.Reader:
		l = r
	default:
		return func() int64 { return -1 }
	}
	return func() int64 { return int64(l.Len()) }
}

// readFull is io.ReadFull that reports a short read as ErrTruncated (or, for
// an empty input at the very start, ErrNotNPY) with the given description.
func readFull(r io.Reader, buf []byte, what string) error {
	n, err := io.ReadFull(r, buf)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return newError(ErrTruncated, fmt.Sprintf("truncated %s: need %d bytes, file has %d", what, len(buf), n))
	default:
		return ioError("reading "+what, err)
	}
}

// read implements Read. remaining reports how many unread bytes r holds, or
// -1 if that is unknown.
func read(r io.Reader, remaining func() int64) (*Array, error) {
	// Magic string and version.
	var pre [8]byte
	n, err := io.ReadFull(r, pre[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, ioError("reading magic", err)
	}
	if n == 0 {
		return nil, newError(ErrNotNPY, "empty input: not a .npy file")
	}
	if m := min(n, len(magic)); string(pre[:m]) != magic[:m] {
		return nil, newError(ErrNotNPY, fmt.Sprintf("bad magic %q: not a .npy file", pre[:m]))
	}
	if n < len(pre) {
		return nil, newError(ErrTruncated, fmt.Sprintf("truncated preamble: need %d bytes, file has %d", len(pre), n))
	}
	major, minor := pre[6], pre[7]
	if major < 1 || major > 3 || minor != 0 {
		return nil, newError(ErrNotNPY, fmt.Sprintf("unsupported format version %d.%d", major, minor))
	}

	// Header length and header.
	var hlen uint64
	if major == 1 {
		var b [2]byte
		if err := readFull(r, b[:], "header length"); err != nil {
			return nil, err
		}
		hlen = uint64(binary.LittleEndian.Uint16(b[:]))
	} else {
		var b [4]byte
		if err := readFull(r, b[:], "header length"); err != nil {
			return nil, err
		}
		hlen = uint64(binary.LittleEndian.Uint32(b[:]))
	}
	if hlen > MaxHeaderLen {
		return nil, newError(ErrCorrupt, fmt.Sprintf("header length %d exceeds the limit of %d bytes", hlen, MaxHeaderLen))
	}
	if rem := remaining(); rem >= 0 && uint64(rem) < hlen {
		return nil, newError(ErrTruncated, fmt.Sprintf("truncated header: need %d bytes, file has %d", hlen, rem))
	}
	var hbuf bytes.Buffer // grows with the bytes actually read
	if got, err := io.CopyN(&hbuf, r, int64(hlen)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, newError(ErrTruncated, fmt.Sprintf("truncated header: need %d bytes, file has %d", hlen, got))
		}
		return nil, ioError("reading header", err)
	}
	htext := hbuf.Bytes()
	if major < 3 {
		for i, c := range htext {
			if c >= utf8.RuneSelf {
				return nil, newError(ErrCorrupt,
					fmt.Sprintf("non-ascii byte 0x%02x at offset %d of a version %d.0 header", c, i, major))
			}
		}
	} else if !utf8.Valid(htext) {
		return nil, newError(ErrCorrupt, "version 3.0 header is not valid utf-8")
	}
	h, err := parseHeader(string(htext), major)
	if err != nil {
		return nil, err
	}

	// Data.
	size := h.dtype.size()
	count, nbytes, ok := elemCount(h.shape, size)
	if !ok {
		return nil, newError(ErrCorrupt, fmt.Sprintf("shape %s %s is too large", shapeString(h.shape), h.dtype))
	}
	truncated := func(has int64) error {
		return newError(ErrTruncated, fmt.Sprintf("truncated data: shape %s %s needs %d bytes, file has %d",
			shapeString(h.shape), h.dtype, nbytes, has))
	}
	trailing := func(extra int64, atLeast bool) error {
		q, unit := "", "bytes"
		if atLeast {
			q = "at least "
		}
		if extra == 1 {
			unit = "byte"
		}
		return newError(ErrCorrupt, fmt.Sprintf("trailing data: %s%d extra %s after the %d bytes of data for shape %s %s",
			q, extra, unit, nbytes, shapeString(h.shape), h.dtype))
	}
	rem := remaining()
	if rem >= 0 && rem < int64(nbytes) {
		return nil, truncated(rem)
	}
	if rem > int64(nbytes) {
		return nil, trailing(rem-int64(nbytes), false)
	}
	exact := rem == int64(nbytes) // the size is known: allocate it at once

	var data any
	var got int64
	switch h.dtype {
	case Float32:
		data, got, err = readElems(r, count, exact, size, func(b []byte) float32 {
			return math.Float32frombits(h.order.Uint32(b))
		})
	case Float64:
		data, got, err = readElems(r, count, exact, size, func(b []byte) float64 {
			return math.Float64frombits(h.order.Uint64(b))
		})
	case Int32:
		data, got, err = readElems(r, count, exact, size, func(b []byte) int32 {
			return int32(h.order.Uint32(b))
		})
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, truncated(got)
		}
		return nil, ioError("reading data", err)
	}

	// Nothing may follow the data.
	var probe [1]byte
	switch k, err := io.ReadFull(r, probe[:]); {
	case k > 0:
		const limit = 1 << 20
		more, err := io.Copy(io.Discard, io.LimitReader(r, limit))
		if err != nil {
			return nil, ioError("reading after data", err)
		}
		return nil, trailing(1+more, more == limit)
	case !errors.Is(err, io.EOF):
		return nil, ioError("reading after data", err)
	}

	if h.fortran && len(h.shape) > 1 {
		switch d := data.(type) {
		case []float32:
			data = fortranToC(d, h.shape)
		case []float64:
			data = fortranToC(d, h.shape)
		case []int32:
			data = fortranToC(d, h.shape)
		}
	}
	return &Array{Shape: h.shape, Data: data}, nil
}

// Chunk sizes for reading data of unknown length: the first read is small
// and each next one doubles, so the memory used stays proportional to the
// bytes actually present.
const (
	minChunk = 4 << 10
	maxChunk = 1 << 20
)

// readElems reads count elements of size bytes each, decoding each with
// conv. If exact, the input is known to hold all of them and the result is
// allocated at once; otherwise it grows as data arrives. It returns the
// number of bytes read and, on a short read, io.EOF or io.ErrUnexpectedEOF.
func readElems[T any](r io.Reader, count int, exact bool, size int, conv func([]byte) T) ([]T, int64, error) {
	var out []T
	chunk := minChunk
	if exact {
		out = make([]T, 0, count)
		chunk = maxChunk
	}
	// chunk is a multiple of size (4 or 8) so elements never straddle reads.
	buf := make([]byte, min(chunk, count*size))
	var got int64
	for len(out) < count {
		want := min((count-len(out))*size, chunk)
		if want > len(buf) {
			buf = make([]byte, want)
		}
		n, err := io.ReadFull(r, buf[:want])
		got += int64(n)
		if err != nil {
			return nil, got, err
		}
		if out == nil {
			out = make([]T, 0, min(count, 2*want/size))
		}
		for i := 0; i < want; i += size {
			out = append(out, conv(buf[i:i+size]))
		}
		chunk = min(2*chunk, maxChunk)
	}
	if out == nil {
		out = []T{}
	}
	return out, got, nil
}

// fortranToC returns the elements of a Fortran-ordered (column-major) array
// of the given shape in C (row-major) order.
func fortranToC[T any](src []T, shape []int) []T {
	dst := make([]T, len(src))
	if len(src) == 0 {
		return dst
	}
	rank := len(shape)
	// stride[k] is the distance in src between neighbours along axis k.
	stride := make([]int, rank)
	s := 1
	for k := range rank {
		stride[k] = s
		s *= shape[k]
	}
	idx := make([]int, rank)
	off := 0
	for i := range dst {
		dst[i] = src[off]
		// Advance the C-order multi-index: last axis fastest.
		for k := rank - 1; k >= 0; k-- {
			idx[k]++
			off += stride[k]
			if idx[k] < shape[k] {
				break
			}
			off -= stride[k] * shape[k]
			idx[k] = 0
		}
	}
	return dst
}
