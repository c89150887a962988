package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// ---------------------------------------------------------------------------
// Limits (ErrTooLarge)

func TestReadSparseHugeFile(t *testing.T) {
	// A header claiming more data than this machine has memory, in a
	// sparse file whose size matches: before the limit, ReadFile
	// allocated the whole array and the process died.
	limit := DefaultMaxBytes()
	if limit == math.MaxInt64 {
		t.Skip("no memory size known on this system")
	}
	n := max(64<<30, limit+1)/8 + 1 // float64 elements
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }", n)
	hdr := mk(dict, nil)
	path := filepath.Join(t.TempDir(), "sparse.npy")
	if err := os.WriteFile(path, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(hdr))+8*n); err != nil {
		t.Skip("no sparse files here:", err)
	}

	var err error
	alloc := allocated(func() { _, err = ReadFile(path) })
	want := fmt.Sprintf("npy: %s: array too large: shape (%d,) float64 needs %d bytes, more than the limit of %d bytes", path, n, 8*n, limit)
	if !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	checkMessage(t, err)
	if alloc > 1<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}

	// Open fails the same way; with a limit that allows the array, the
	// header can be looked at without reading the data.
	if _, err := Open(path, nil); err == nil || err.Error() != want {
		t.Errorf("Open: got %v, want %q", err, want)
	}
	f, err := Open(path, &ReadOptions{MaxBytes: 8 * n})
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Header(); len(h.Shape) != 1 || int64(h.Shape[0]) != n || h.DType != Float64 || h.Fortran {
		t.Errorf("Header() = %+v", h)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// headerOnly returns a reader that yields the preamble and header of file,
// which must be a version 1.0 file, and then fails: reading any data is an
// error.
func headerOnly(file []byte) io.Reader {
	hlen := 10 + int(binary.LittleEndian.Uint16(file[8:10]))
	return io.MultiReader(bytes.NewReader(file[:hlen]), iotest.ErrReader(errDataRead))
}

var errDataRead = errors.New("data was read")

func TestMaxBytes(t *testing.T) {
	file := mk("{'descr': '<f4', 'fortran_order': False, 'shape': (10, 100), }", make([]byte, 4000))
	tooLarge := "npy: array too large: shape (10, 100) float32 needs 4000 bytes, more than the limit of 3999 bytes"
	for _, c := range []struct {
		max  int64
		want error
	}{
		{3999, ErrTooLarge},
		{1, ErrTooLarge},
		{4000, nil},
		{0, nil},  // DefaultMaxBytes
		{-1, nil}, // also DefaultMaxBytes, not "no data allowed"
		{math.MaxInt64, nil},
	} {
		opt := &ReadOptions{MaxBytes: c.max}
		for name, r := range map[string]io.Reader{
			"bytes.Reader": bytes.NewReader(file),
			"hidden":       hiddenReader{bytes.NewReader(file)},
			"header only":  headerOnly(file),
		} {
			// The limit is checked from the header: a too large
			// array fails before any data is read.
			d, err := NewDecoder(r, opt)
			if !errors.Is(err, c.want) || (err == nil) != (c.want == nil) {
				t.Errorf("MaxBytes %d, %s: got %v, want %v", c.max, name, err, c.want)
				continue
			}
			if err != nil {
				if c.max == 3999 && err.Error() != tooLarge {
					t.Errorf("got %q, want %q", err, tooLarge)
				}
				checkMessage(t, err)
				continue
			}
			a, err := d.ReadArray()
			if name == "header only" {
				if !errors.Is(err, errDataRead) {
					t.Errorf("MaxBytes %d: ReadArray read no data: %v", c.max, err)
				}
				continue
			}
			if err != nil || len(a.Data.([]float32)) != 1000 {
				t.Errorf("MaxBytes %d, %s: got %v", c.max, name, err)
			}
		}
	}
	// A nil *ReadOptions and the zero value are the defaults.
	for _, opt := range []*ReadOptions{nil, {}} {
		if d, err := NewDecoder(bytes.NewReader(file), opt); err != nil {
			t.Errorf("%v: %v", opt, err)
		} else if _, err := d.ReadArray(); err != nil {
			t.Errorf("%v: %v", opt, err)
		}
	}
	// Empty arrays and scalars pass any limit that allows their size.
	for _, c := range []struct {
		dict string
		data []byte
	}{
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1000000), }", nil},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (), }", make([]byte, 8)},
	} {
		d, err := NewDecoder(bytes.NewReader(mk(c.dict, c.data)), &ReadOptions{MaxBytes: 8})
		if err == nil {
			_, err = d.ReadArray()
		}
		if err != nil {
			t.Errorf("%s: %v", c.dict, err)
		}
	}
}

func TestDefaultMaxBytes(t *testing.T) {
	n := DefaultMaxBytes()
	if n <= 0 {
		t.Fatalf("DefaultMaxBytes() = %d", n)
	}
	if n2 := DefaultMaxBytes(); n2 != n {
		t.Fatalf("DefaultMaxBytes changed from %d to %d", n, n2)
	}
	if (runtime.GOOS == "linux" || runtime.GOOS == "darwin") && n == math.MaxInt64 {
		t.Errorf("DefaultMaxBytes() found no memory size on %s", runtime.GOOS)
	}
	t.Logf("DefaultMaxBytes() = %d", n)
}

// ---------------------------------------------------------------------------
// Decoder and File: the header first

func TestDecoderHeaderFirst(t *testing.T) {
	// np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3))
	file := mk("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f4(binary.LittleEndian, 0, 3, 1, 4, 2, 5))
	want := &Array{Shape: []int{2, 3}, Data: []float32{0, 1, 2, 3, 4, 5}}

	// NewDecoder reads the header and not a byte more.
	d, err := NewDecoder(headerOnly(file), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := d.Header()
	if len(h.Shape) != 2 || h.Shape[0] != 2 || h.Shape[1] != 3 || h.DType != Float32 || !h.Fortran {
		t.Fatalf("Header() = %+v", h)
	}
	h.Shape[0] = 99 // the caller's copy
	if d.Header().Shape[0] != 2 {
		t.Fatal("Header() shares its Shape")
	}
	if _, err := d.ReadArray(); !errors.Is(err, errDataRead) {
		t.Fatalf("ReadArray: got %v, want the reader's error", err)
	}

	for _, r := range []io.Reader{bytes.NewReader(file), hiddenReader{bytes.NewReader(file)}} {
		d, err := NewDecoder(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := d.ReadArray()
		if err != nil || !sameArray(a, want) {
			t.Fatalf("ReadArray = %+v, %v", a, err)
		}
		// Once only.
		_, err = d.ReadArray()
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("second ReadArray: got %v, want os.ErrClosed", err)
		}
		checkMessage(t, err)
	}

	// A short or overlong input of known size fails in NewDecoder.
	for _, c := range []struct {
		in   []byte
		want error
	}{{file[:len(file)-1], ErrTruncated}, {cat(file, []byte{0}), ErrCorrupt}} {
		if _, err := NewDecoder(bytes.NewReader(c.in), nil); !errors.Is(err, c.want) {
			t.Errorf("got %v, want %v", err, c.want)
		}
		// Of unknown size, in ReadArray.
		d, err := NewDecoder(hiddenReader{bytes.NewReader(c.in)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.ReadArray(); !errors.Is(err, c.want) {
			t.Errorf("got %v, want %v", err, c.want)
		}
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := goldens()[2].file // int32 (3,)
	path := filepath.Join(dir, "v.npy")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}

	// The caller can refuse the file from its header: nothing past the
	// header has been read.
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Header(); len(h.Shape) != 1 || h.Shape[0] != 3 || h.DType != Int32 || h.Fortran {
		t.Fatalf("Header() = %+v", h)
	}
	if off, err := f.f.Seek(0, io.SeekCurrent); err != nil || off != 128 {
		t.Fatalf("Open read up to offset %d (%v), want the 128 bytes of the header", off, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, os.ErrClosed) || !strings.Contains(err.Error(), path) {
		t.Errorf("second Close: got %v", err)
	} else {
		checkMessage(t, err)
	}

	f, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.ReadArray()
	if err != nil || !sameArray(a, goldens()[2].a) {
		t.Fatalf("ReadArray = %+v, %v", a, err)
	}
	if _, err := f.ReadArray(); !errors.Is(err, os.ErrClosed) || !strings.Contains(err.Error(), path) {
		t.Errorf("second ReadArray: got %v", err)
	}
	f.Close()

	// Errors name the path; the size of a regular file is known, so a
	// short or overlong one fails in Open.
	for _, c := range []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"short.npy", file[:len(file)-2], ErrTruncated, ": truncated data: shape (3,) int32 needs 12 bytes, file has 10"},
		{"long.npy", cat(file, []byte{1, 2}), ErrCorrupt, ": trailing data: 2 extra bytes"},
		{"empty.npy", nil, ErrNotNPY, ": empty input: not a .npy file"},
		{"big.npy", file, ErrTooLarge, ": array too large: shape (3,) int32 needs 12 bytes, more than the limit of 11 bytes"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(p, &ReadOptions{MaxBytes: 11 + int64(len(c.data)-len(file))*100})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "npy: "+p+c.msg) {
			t.Errorf("%s: got %v, want %v with %q", c.name, err, c.want, c.msg)
		}
	}
	_, err = Open(filepath.Join(dir, "missing.npy"), nil)
	if want := "npy: " + filepath.Join(dir, "missing.npy") + ": cannot open: "; !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("missing: got %v", err)
	}
	_, err = Open(dir, nil)
	if !errors.Is(err, ErrIsDirectory) || err.Error() != "npy: "+dir+": is a directory" {
		t.Errorf("directory: got %v", err)
	}
}

// ---------------------------------------------------------------------------
// Memory and layout

// fortranReference transposes Fortran-ordered src of the given shape to C
// order the plain way, for comparison.
func fortranReference(src []float64, shape []int) []float64 {
	dst := make([]float64, len(src))
	idx := make([]int, len(shape))
	for i := range dst {
		// idx is the C multi-index of i; find its Fortran position.
		rem := i
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k] = rem % shape[k]
			rem /= shape[k]
		}
		f, stride := 0, 1
		for k := range shape {
			f += idx[k] * stride
			stride *= shape[k]
		}
		dst[i] = src[f]
	}
	return dst
}

func TestReadFortranLarge(t *testing.T) {
	// Larger than stageBelow and maxChunk, so that readers of unknown
	// size stage the first pieces and place them when the result is
	// allocated, and a chunk boundary falls inside every axis.
	for _, shape := range [][]int{{37, 41, 53}, {1000, 3}, {3, 1000}, {2, 1, 30000, 1}} {
		n, _, _ := elemCount(shape, 8)
		src := testData(Float64, n).([]float64)
		var body []byte
		for _, v := range src {
			body = binary.BigEndian.AppendUint64(body, math.Float64bits(v))
		}
		file := mk(fmt.Sprintf("{'descr': '>f8', 'fortran_order': True, 'shape': %s, }", shapeString(shape)), body)
		want := &Array{Shape: shape, Data: fortranReference(src, shape)}
		for _, r := range []io.Reader{bytes.NewReader(file), hiddenReader{bytes.NewReader(file)}, iotest.HalfReader(hiddenReader{bytes.NewReader(file)})} {
			a, err := Read(r)
			if err != nil {
				t.Fatal(err)
			}
			if !sameArray(a, want) {
				t.Fatalf("shape %v: wrong transposition", shape)
			}
		}
	}
}

// streamFile writes a float32 .npy file of shape (rows, cols), in C or
// Fortran order, to w; the element at file position j holds j % 16384. It
// allocates nothing while it writes, so that it can run while a reader's
// allocations are measured.
type streamFile struct {
	hdr, chunk []byte
	nbytes     int
}

func newStreamFile(rows, cols int, fortran bool) *streamFile {
	order := "False"
	if fortran {
		order = "True"
	}
	s := &streamFile{
		hdr:    mk(fmt.Sprintf("{'descr': '<f4', 'fortran_order': %s, 'shape': (%d, %d), }", order, rows, cols), nil),
		chunk:  make([]byte, 64<<10),
		nbytes: rows * cols * 4,
	}
	for i := range len(s.chunk) / 4 {
		binary.LittleEndian.PutUint32(s.chunk[4*i:], math.Float32bits(float32(i)))
	}
	return s
}

func (s *streamFile) writeTo(w io.Writer) error {
	if _, err := w.Write(s.hdr); err != nil {
		return err
	}
	for range s.nbytes / len(s.chunk) {
		if _, err := w.Write(s.chunk); err != nil {
			return err
		}
	}
	return nil
}

// checkStreamArray checks a as read from a streamFile: every 61st row, and
// the last, which is enough to catch a misplaced element and fast under the
// race detector.
func checkStreamArray(t *testing.T, a *Array, rows, cols int, fortran bool) {
	t.Helper()
	d := a.Data.([]float32)
	if len(a.Shape) != 2 || a.Shape[0] != rows || a.Shape[1] != cols || len(d) != rows*cols {
		t.Fatalf("shape %v, %d elements", a.Shape, len(d))
	}
	checkRow := func(r int) {
		for c := range cols {
			j := r*cols + c
			if fortran {
				j = r + c*rows
			}
			if d[r*cols+c] != float32(j%16384) {
				t.Fatalf("element (%d, %d) = %v, want %v", r, c, d[r*cols+c], j%16384)
			}
		}
	}
	for r := 0; r < rows; r += 61 {
		checkRow(r)
	}
	checkRow(rows - 1)
}

func TestReadPeakMemory(t *testing.T) {
	// 32 MiB of data, read through a pipe (size unknown) and from a file
	// (size known), in both orders: everything the read allocates, the
	// result included, must stay under 1.25 times the data.
	const rows, cols = 2048, 4096
	const nbytes = rows * cols * 4
	dir := t.TempDir()
	for _, fortran := range []bool{false, true} {
		sf := newStreamFile(rows, cols, fortran)
		path := filepath.Join(dir, fmt.Sprintf("f%v.npy", fortran))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := sf.writeTo(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}

		for _, how := range []string{"pipe", "file"} {
			var a *Array
			var err error
			var n uint64
			switch how {
			case "pipe":
				pr, pw := io.Pipe()
				go func() { pw.CloseWithError(sf.writeTo(pw)) }()
				n = allocated(func() { a, err = Read(pr) })
			case "file":
				n = allocated(func() { a, err = ReadFile(path) })
			}
			if err != nil {
				t.Fatal(err)
			}
			ratio := float64(n) / nbytes
			t.Logf("%s, fortran %v: allocated %d bytes for %d bytes of data: %.3fx", how, fortran, n, nbytes, ratio)
			if ratio > 1.25 {
				t.Errorf("%s, fortran %v: allocated %.3f times the data", how, fortran, ratio)
			}
			checkStreamArray(t, a, rows, cols, fortran)
			a = nil
			runtime.GC()
		}
	}
}

func TestReadShortPipeSmallMemory(t *testing.T) {
	// A pipe delivering part of the data its header promises: what the
	// read allocates stays within a small multiple of what arrived.
	const rows, cols = 4096, 4096 // 64 MiB promised
	sf := newStreamFile(rows, cols, true)
	for _, arrive := range []int{0, 64 << 10, 1 << 20, 4 << 20} {
		pr, pw := io.Pipe()
		go func() {
			if _, err := pw.Write(sf.hdr); err != nil {
				return
			}
			for range arrive / len(sf.chunk) {
				if _, err := pw.Write(sf.chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		var err error
		n := allocated(func() { _, err = Read(pr) })
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), fmt.Sprintf("file has %d", arrive)) {
			t.Fatalf("got %v", err)
		}
		t.Logf("%d bytes of %d arrived: allocated %d", arrive, rows*cols*4, n)
		if n > uint64(2*arrive)+1<<20 {
			t.Errorf("%d bytes arrived, allocated %d", arrive, n)
		}
	}
}
