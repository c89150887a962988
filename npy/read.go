package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/goamp/goamp/half"
)

// magic is the string every .npy file starts with.
const magic = "\x93NUMPY"

// Header is what a .npy file's header says about its array.
type Header struct {
	// Shape holds the length of each dimension, as Array.Shape will.
	Shape []int
	// DType is the element type of the array.
	DType DType
	// Fortran reports that the data is stored in Fortran (column-major)
	// order; ReadArray returns it in C order all the same.
	Fortran bool // column-major data on disk
}

// ReadOptions bound what a read accepts. A nil *ReadOptions or the zero
// value means the defaults.
type ReadOptions struct {
	// MaxBytes is the most array data, in bytes, a read accepts; larger
	// arrays fail with ErrTooLarge before any data is read. 0 means
	// DefaultMaxBytes(). A negative value also means DefaultMaxBytes(),
	// so that a limit computed by mistake as negative never lifts the
	// bound; to accept anything that fits in memory, use math.MaxInt64.
	MaxBytes int64
}

func (o *ReadOptions) maxBytes() int64 {
	if o == nil || o.MaxBytes <= 0 {
		return DefaultMaxBytes()
	}
	return o.MaxBytes
}

// Read reads one array from r, which must hold exactly one .npy file: Read
// consumes r up to EOF and fails, wrapping ErrCorrupt, if bytes follow the
// array data. It is NewDecoder(r, nil) followed by ReadArray, so arrays of
// more than DefaultMaxBytes bytes fail with ErrTooLarge. It accepts format
// versions 1.0, 2.0 and 3.0 and element types '<f4', '<f8' and '<i4' in
// little-, big- or native-endian byte order, and returns the data in C
// order as a []float32, []float64 or []int32 in native values. Errors wrap
// ErrNotNPY, ErrTruncated, ErrCorrupt, ErrUnsupportedDType, ErrObjectArray,
// ErrTooLarge, or an I/O error from r.
//
// The size of r is known in advance when r is a *bytes.Reader,
// *bytes.Buffer, *strings.Reader or an *os.File open on a regular file;
// a short or overlong input then fails before any data is read. For other
// readers, see ReadArray for the memory used.
func Read(r io.Reader) (*Array, error) {
	d, err := NewDecoder(r, nil)
	if err != nil {
		return nil, err
	}
	return d.ReadArray()
}

// ReadFile reads the .npy file at path with the default options; it is
// Open(path, nil), ReadArray and Close. See Open for how path is opened and
// Read for what is accepted. Errors name path.
func ReadFile(path string) (*Array, error) {
	f, err := Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadArray()
}

// Decoder reads one .npy array from a stream in two steps: NewDecoder
// reads and checks the header, ReadArray the data. In between, Header tells
// the caller what the array is, so that it can refuse it (wrong rank or
// element type, say) without reading its data.
type Decoder struct {
	r *countingReader
	// size is the number of bytes r held when NewDecoder started, or -1
	// when that is unknown (a pipe, a socket, a generic reader).
	size int64
	h    *header
	// count and nbytes are the array's element count and data size.
	count, nbytes int
	done          bool // ReadArray was called
}

// NewDecoder reads the preamble and header of a .npy file from r, and
// nothing more, and checks them: the header must be valid and describe a
// supported array (the errors are those of Read) of at most
// opt.MaxBytes bytes of data (ErrTooLarge). When the size of r is known
// in advance (see Read), NewDecoder also fails, wrapping ErrTruncated or
// ErrCorrupt, if r holds less or more data than the header describes.
func NewDecoder(r io.Reader, opt *ReadOptions) (*Decoder, error) {
	return newDecoder(r, inputSize(r), "empty input: not a .npy file", opt)
}

// inputSize returns how many unread bytes r holds, for readers that know,
// or -1.
func inputSize(r io.Reader) int64 {
	switch r := r.(type) {
	case *bytes.Reader:
		return int64(r.Len())
	case *bytes.Buffer:
		return int64(r.Len())
	case *strings.Reader:
		return int64(r.Len())
	case *os.File:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		off, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return max(fi.Size()-off, 0)
	}
	return -1
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

// remaining returns how many unread bytes the input holds, or -1.
func (d *Decoder) remaining() int64 {
	if d.size < 0 {
		return -1
	}
	return max(d.size-d.r.n, 0)
}

// readFull is io.ReadFull that reports a short read as ErrTruncated with
// the given description.
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

// newDecoder implements NewDecoder for an input of the given size (-1 if
// unknown); emptyMsg is the message for an input with no bytes at all.
func newDecoder(r io.Reader, size int64, emptyMsg string, opt *ReadOptions) (*Decoder, error) {
	d := &Decoder{r: &countingReader{r: r}, size: size}
	r = d.r

	// Magic string and version.
	var pre [8]byte
	n, err := io.ReadFull(r, pre[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, ioError("reading magic", err)
	}
	if n == 0 {
		return nil, newError(ErrNotNPY, emptyMsg)
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
	if rem := d.remaining(); rem >= 0 && uint64(rem) < hlen {
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
	d.h = h

	var ok bool
	d.count, d.nbytes, ok = elemCount(h.shape, h.dtype.size())
	if !ok {
		return nil, newError(ErrCorrupt, fmt.Sprintf("shape %s %s is too large", shapeString(h.shape), h.dtype))
	}
	// A size known in advance settles truncation first: it is the more
	// precise diagnosis, and costs nothing to make.
	if rem := d.remaining(); rem >= 0 {
		if rem < int64(d.nbytes) {
			return nil, d.truncated(rem)
		}
		if rem > int64(d.nbytes) {
			return nil, d.trailing(rem-int64(d.nbytes), false)
		}
	}
	if limit := opt.maxBytes(); int64(d.nbytes) > limit {
		return nil, newError(ErrTooLarge, fmt.Sprintf("array too large: shape %s %s needs %d bytes, more than the limit of %d bytes",
			shapeString(h.shape), h.dtype, d.nbytes, limit))
	}
	return d, nil
}

func (d *Decoder) truncated(has int64) error {
	return newError(ErrTruncated, fmt.Sprintf("truncated data: shape %s %s needs %d bytes, file has %d",
		shapeString(d.h.shape), d.h.dtype, d.nbytes, has))
}

func (d *Decoder) trailing(extra int64, atLeast bool) error {
	q, unit := "", "bytes"
	if atLeast {
		q = "at least "
	}
	if extra == 1 {
		unit = "byte"
	}
	return newError(ErrCorrupt, fmt.Sprintf("trailing data: %s%d extra %s after the %d bytes of data for shape %s %s",
		q, extra, unit, d.nbytes, shapeString(d.h.shape), d.h.dtype))
}

// Header returns what the header says about the array. The caller may
// modify the result.
func (d *Decoder) Header() Header {
	return Header{Shape: slices.Clone(d.h.shape), DType: d.h.dtype, Fortran: d.h.fortran}
}

// ReadArray reads the array data and returns the array, in C order. It
// consumes the input up to EOF and fails, wrapping ErrCorrupt, if bytes
// follow the data, or wrapping ErrTruncated if the input ends early. It may
// be called once; later calls fail with an error wrapping os.ErrClosed.
//
// Memory: the result is allocated once, and Fortran-ordered data is
// decoded straight into its C-order places, so a read needs about the
// size of the data plus buffers of a few hundred kilobytes. When the size
// of the input is known in advance (see Read and Open), the result is
// allocated at once. Otherwise, so that a short input claiming a huge shape
// costs little, the first eighth of the data is read into pieces before
// the result is allocated: memory stays within about 9 times the data
// actually present (plus the buffers), and a complete read peaks at about
// 1.125 times the data.
func (d *Decoder) ReadArray() (*Array, error) {
	if d.done {
		return nil, &npyError{kind: os.ErrClosed, msg: "array already read: ReadArray may be called once"}
	}
	d.done = true
	h := d.h
	big := h.order.Uint16([]byte{0, 1}) == 1
	exact := d.remaining() == int64(d.nbytes)
	p := newPlacer(h.shape, h.fortran)

	var data any
	var got int64
	var err error
	switch h.dtype {
	case Float32:
		data, got, err = readData(d.r, d.count, 4, exact, p, func(dst []float32, src []byte) { decodeF32(dst, src, big) })
	case Float64:
		data, got, err = readData(d.r, d.count, 8, exact, p, func(dst []float64, src []byte) { decodeF64(dst, src, big) })
	case Int32:
		data, got, err = readData(d.r, d.count, 4, exact, p, func(dst []int32, src []byte) { decodeI32(dst, src, big) })
	case Float16:
		data, got, err = readData(d.r, d.count, 2, exact, p, func(dst []half.Float16, src []byte) { decodeF16(dst, src, big) })
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, d.truncated(got)
		}
		return nil, ioError("reading data", err)
	}

	// Nothing may follow the data.
	var probe [1]byte
	switch k, err := io.ReadFull(d.r, probe[:]); {
	case k > 0:
		const limit = 1 << 20
		more, err := io.Copy(io.Discard, io.LimitReader(d.r, limit))
		if err != nil {
			return nil, ioError("reading after data", err)
		}
		return nil, d.trailing(1+more, more == limit)
	case !errors.Is(err, io.EOF):
		return nil, ioError("reading after data", err)
	}
	return &Array{Shape: slices.Clone(h.shape), Data: data}, nil
}

// Read sizes. Data of known size is read maxChunk bytes at a time. Data of
// unknown size is read in chunks that start at minChunk bytes and double,
// so that a short input costs little; arrays of at most stageBelow bytes
// are allocated at once, and larger ones once the input has delivered
// 1/commitRatio of their data.
const (
	minChunk    = 4 << 10
	maxChunk    = 256 << 10
	stageBelow  = 64 << 10
	commitRatio = 8
)

// readData reads count elements of size bytes each from r and decodes them
// with dec into a C-ordered slice; p places Fortran-ordered elements (nil
// for C order). If exact, r is known to hold all the data and the result is
// allocated at once; otherwise the first elements are staged in pieces (see
// ReadArray). It returns the number of bytes read and, on a short read,
// io.EOF or io.ErrUnexpectedEOF.
func readData[T any](r io.Reader, count, size int, exact bool, p *placer, dec func([]T, []byte)) ([]T, int64, error) {
	if count == 0 {
		return []T{}, 0, nil
	}
	nbytes := count * size
	var out []T
	var staged [][]T
	commit := func() {
		out = make([]T, count)
		i := 0
		for _, s := range staged {
			store(out, i, s, p)
			i += len(s)
		}
		staged = nil
	}
	chunk := minChunk
	if exact || nbytes <= stageBelow {
		commit()
		chunk = maxChunk
	}
	// chunk is a multiple of size (4 or 8) so elements never straddle reads.
	buf := make([]byte, min(chunk, nbytes))
	var scratch []T // Fortran order: decoded elements waiting to be placed
	var got int64
	done := 0 // elements read
	for done < count {
		if out == nil && int64(done)*int64(size)*commitRatio >= int64(nbytes) {
			commit()
		}
		want := min((count-done)*size, chunk)
		if want > len(buf) {
			buf = make([]byte, want)
		}
		n, err := io.ReadFull(r, buf[:want])
		got += int64(n)
		if err != nil {
			return nil, got, err
		}
		m := want / size
		switch {
		case out == nil:
			s := make([]T, m)
			dec(s, buf[:want])
			staged = append(staged, s)
		case p == nil:
			dec(out[done:done+m], buf[:want])
		default:
			if len(scratch) < m {
				scratch = make([]T, m)
			}
			dec(scratch[:m], buf[:want])
			store(out, done, scratch[:m], p)
		}
		done += m
		chunk = min(2*chunk, maxChunk)
	}
	if out == nil {
		commit()
	}
	return out, got, nil
}

// store puts vals, the elements at file positions i, i+1, ..., into their
// places in the C-ordered dst. With a placer, i must be where the previous
// call left off.
func store[T any](dst []T, i int, vals []T, p *placer) {
	if p == nil {
		copy(dst[i:], vals)
		return
	}
	for _, v := range vals {
		dst[p.off] = v
		p.next()
	}
}

// placer maps file positions of a Fortran-ordered array, taken in
// sequence, to indices in C order. In the file the first axis varies
// fastest, so successive elements land a C stride apart.
type placer struct {
	shape  []int
	stride []int // C-order stride of each axis
	idx    []int // multi-index of the next file position
	off    int   // its C-order index
}

// newPlacer returns a placer for an array of the given shape, or nil when
// file order is C order: C-ordered data, and rank 0 or 1, where the two
// orders agree.
func newPlacer(shape []int, fortran bool) *placer {
	if !fortran || len(shape) < 2 {
		return nil
	}
	p := &placer{shape: shape, stride: make([]int, len(shape)), idx: make([]int, len(shape))}
	s := 1
	for k := len(shape) - 1; k >= 0; k-- {
		p.stride[k] = s
		s *= shape[k]
	}
	return p
}

// next moves to the next file position.
func (p *placer) next() {
	// The first axis advances on every element; the loop continues only
	// when it wraps.
	for k := range p.shape {
		p.idx[k]++
		p.off += p.stride[k]
		if p.idx[k] < p.shape[k] {
			return
		}
		p.off -= p.stride[k] * p.shape[k]
		p.idx[k] = 0
	}
}

// decodeF32, decodeF64, decodeI32 and decodeF16 decode len(dst) elements
// from src, big- or little-endian.
func decodeF32(dst []float32, src []byte, big bool) {
	if big {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.BigEndian.Uint32(src[4*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func decodeF64(dst []float64, src []byte, big bool) {
	if big {
		for i := range dst {
			dst[i] = math.Float64frombits(binary.BigEndian.Uint64(src[8*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
	}
}

func decodeI32(dst []int32, src []byte, big bool) {
	if big {
		for i := range dst {
			dst[i] = int32(binary.BigEndian.Uint32(src[4*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = int32(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func decodeF16(dst []half.Float16, src []byte, big bool) {
	if big {
		for i := range dst {
			dst[i] = half.Float16(binary.BigEndian.Uint16(src[2*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = half.Float16(binary.LittleEndian.Uint16(src[2*i:]))
	}
}
