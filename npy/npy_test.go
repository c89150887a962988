package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode"

	"github.com/goamp/goamp/half"
)

// ---------------------------------------------------------------------------
// Helpers

// hexb decodes hex digits, ignoring spaces.
func hexb(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// npyFile builds a file with the given version and exact header text (no
// padding is added) followed by data.
func npyFile(major byte, hdr string, data []byte) []byte {
	b := []byte(magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	b = append(b, hdr...)
	return append(b, data...)
}

// padded pads a header dict with spaces and '\n' so that the preamble of a
// file of the given version is a multiple of align bytes.
func padded(major byte, dict string, align int) string {
	pre := 10
	if major > 1 {
		pre = 12
	}
	n := pre + len(dict) + 1
	return dict + strings.Repeat(" ", (align-n%align)%align) + "\n"
}

// mk builds a valid-looking v1.0 file with a 64-aligned header.
func mk(dict string, data []byte) []byte { return npyFile(1, padded(1, dict, 64), data) }

// f4 encodes float32 values in the given byte order.
func f4(o binary.AppendByteOrder, vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = o.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func f8(o binary.AppendByteOrder, vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = o.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

func i4(o binary.AppendByteOrder, vs ...int32) []byte {
	var b []byte
	for _, v := range vs {
		b = o.AppendUint32(b, uint32(v))
	}
	return b
}

// hiddenReader hides the concrete type of a reader so Read cannot learn
// its length in advance and must read incrementally.
type hiddenReader struct{ r io.Reader }

func (h hiddenReader) Read(p []byte) (int, error) { return h.r.Read(p) }

// readBoth reads b through a bytes.Reader (length known in advance) and
// through readers of unknown length (one of them returning a byte at a
// time), checks the results agree, and returns the first.
func readBoth(t testing.TB, b []byte) (*Array, error) {
	t.Helper()
	a1, err1 := Read(bytes.NewReader(b))
	a2, err2 := Read(hiddenReader{bytes.NewReader(b)})
	checkSame(t, "hidden reader", a1, err1, a2, err2)
	if len(b) < 1<<16 {
		a3, err3 := Read(iotest.OneByteReader(bytes.NewReader(b)))
		checkSame(t, "one-byte reader", a1, err1, a3, err3)
	}
	return a1, err1
}

func checkSame(t testing.TB, what string, a1 *Array, err1 error, a2 *Array, err2 error) {
	t.Helper()
	if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
		t.Fatalf("%s: results differ: %v vs %v", what, err1, err2)
	}
	if err1 == nil && !sameArray(a1, a2) {
		t.Fatalf("%s: arrays differ: %+v vs %+v", what, a1, a2)
	}
}

// sameArray compares shapes and data bit for bit (so NaNs compare equal).
func sameArray(a, b *Array) bool {
	if len(a.Shape) != len(b.Shape) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	switch x := a.Data.(type) {
	case []half.Float16:
		y, ok := b.Data.([]half.Float16)
		return ok && slices.Equal(x, y)
	case []float32:
		y, ok := b.Data.([]float32)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	case []float64:
		y, ok := b.Data.([]float64)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
		return true
	case []int32:
		y, ok := b.Data.([]int32)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return false
}

// checkMessage checks the message conventions: one line, "npy: " prefix,
// lower case, no trailing period.
func checkMessage(t testing.TB, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "npy: ") {
		t.Errorf("message %q does not start with \"npy: \"", msg)
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("message %q is not one line", msg)
	}
	if strings.HasSuffix(msg, ".") {
		t.Errorf("message %q ends with a period", msg)
	}
	if rest := strings.TrimPrefix(msg, "npy: "); rest != "" && unicode.IsUpper(rune(rest[0])) {
		t.Errorf("message %q does not start in lower case", msg)
	}
}

var sentinels = []error{ErrNotNPY, ErrTruncated, ErrCorrupt, ErrUnsupportedDType, ErrObjectArray, ErrInvalidArray, ErrIsDirectory, ErrTooLarge, ErrNotRegular}

// ---------------------------------------------------------------------------
// DType

func TestDTypeString(t *testing.T) {
	for d, want := range map[DType]string{Float32: "float32", Float64: "float64", Int32: "int32", 0: "DType(0)", 9: "DType(9)"} {
		if got := d.String(); got != want {
			t.Errorf("DType(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestArrayDType(t *testing.T) {
	for _, c := range []struct {
		a    *Array
		want DType
		err  error
	}{
		{&Array{Data: []float32{1}}, Float32, nil},
		{&Array{Data: []float64{1}}, Float64, nil},
		{&Array{Data: []int32{1}}, Int32, nil},
		{&Array{Data: []float32(nil)}, Float32, nil},
		{nil, 0, ErrInvalidArray},
		{&Array{}, 0, ErrInvalidArray},
		{&Array{Data: []int64{1}}, 0, ErrUnsupportedDType},
		{&Array{Data: float32(1)}, 0, ErrUnsupportedDType},
	} {
		got, err := c.a.DType()
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("DType(%+v) = %v, %v; want %v, %v", c.a, got, err, c.want, c.err)
		}
		if err != nil {
			checkMessage(t, err)
		}
	}
}

// ---------------------------------------------------------------------------
// Round trips

// testData returns n elements of the given type, with awkward values mixed in.
func testData(dt DType, n int) any {
	switch dt {
	case Float32:
		d := make([]float32, n)
		special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32}
		for i := range d {
			d[i] = float32(i)*1.25 - 3
			if i%5 == 4 {
				d[i] = special[(i/5)%len(special)]
			}
		}
		return d
	case Float64:
		d := make([]float64, n)
		special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.SmallestNonzeroFloat64, math.MaxFloat64}
		for i := range d {
			d[i] = float64(i)*0.1 - 7
			if i%5 == 4 {
				d[i] = special[(i/5)%len(special)]
			}
		}
		return d
	case Float16:
		// Bits of every kind: normals, subnormals, zeros, infinities, NaN.
		d := make([]half.Float16, n)
		for i := range d {
			d[i] = half.Float16(uint16(i*0x1357 + 0x3c00))
		}
		return d
	default:
		d := make([]int32, n)
		special := []int32{math.MinInt32, math.MaxInt32, -1}
		for i := range d {
			d[i] = int32(i*7919) - 100
			if i%5 == 4 {
				d[i] = special[(i/5)%len(special)]
			}
		}
		return d
	}
}

func TestRoundTrip(t *testing.T) {
	shapes := [][]int{{}, {0}, {1}, {7}, {3, 4}, {2, 3, 5}, {0, 3}, {4, 0, 2}, {1, 1, 1, 1}}
	for _, dt := range []DType{Float32, Float64, Int32, Float16} {
		for _, shape := range shapes {
			t.Run(dt.String()+shapeString(shape), func(t *testing.T) {
				n, _, _ := elemCount(shape, dt.size())
				a := &Array{Shape: shape, Data: testData(dt, n)}
				var buf bytes.Buffer
				if err := Write(&buf, a); err != nil {
					t.Fatal(err)
				}
				b := buf.Bytes()
				// The data starts at a multiple of 64 and the file is
				// exactly preamble + data.
				hlen := int(binary.LittleEndian.Uint16(b[8:10]))
				if (10+hlen)%64 != 0 || len(b) != 10+hlen+n*dt.size() || b[10+hlen-1] != '\n' {
					t.Fatalf("bad layout: header length %d, file %d bytes", hlen, len(b))
				}
				got, err := readBoth(t, b)
				if err != nil {
					t.Fatal(err)
				}
				if !sameArray(a, got) {
					t.Fatalf("round trip: got %+v, want %+v", got, a)
				}
				if got.Shape == nil {
					t.Errorf("Read returned a nil Shape")
				}
				if dt2, err := got.DType(); err != nil || dt2 != dt {
					t.Errorf("DType() = %v, %v", dt2, err)
				}
			})
		}
	}
}

func TestRoundTripLarge(t *testing.T) {
	// Larger than the read and write chunk sizes, to exercise chunking.
	a := &Array{Shape: []int{300, 1001}, Data: testData(Float64, 300*1001)}
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	for _, r := range []io.Reader{bytes.NewReader(buf.Bytes()), hiddenReader{bytes.NewReader(buf.Bytes())}, iotest.HalfReader(bytes.NewReader(buf.Bytes()))} {
		got, err := Read(r)
		if err != nil {
			t.Fatal(err)
		}
		if !sameArray(a, got) {
			t.Fatal("large round trip differs")
		}
	}
}

// ---------------------------------------------------------------------------
// Golden files: the exact bytes numpy.save writes (NumPy >= 1.24: header
// dict, then spaces so the first axis could grow to 21 digits
// (GROWTH_AXIS_MAX_DIGITS), then spaces and '\n' up to a 64-byte boundary).

type golden struct {
	name string
	a    *Array
	file []byte
}

func goldens() []golden {
	// np.arange(6, dtype='<f4').reshape(2, 3)
	// dict: 59 bytes; growth: 21-len("2") = 20 spaces; with '\n' 80 bytes;
	// 10+80 = 90, 90 % 64 = 26, so 64-26 = 38 more spaces:
	// HEADER_LEN = 59+20+38+1 = 118 = 0x76, preamble 128 bytes.
	f32x23 := cat([]byte("\x93NUMPY\x01\x00\x76\x00"),
		[]byte("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
		bytes.Repeat([]byte(" "), 58), []byte("\n"),
		hexb("00000000 0000803f 00000040 00004040 00008040 0000a040"))

	// np.array(3.5) (float64, shape ()): dict 55 bytes, no growth padding
	// for shape (); 10+56 = 66, 66 % 64 = 2, so 62 spaces; HEADER_LEN 118.
	f64scalar := cat([]byte("\x93NUMPY\x01\x00\x76\x00"),
		[]byte("{'descr': '<f8', 'fortran_order': False, 'shape': (), }"),
		bytes.Repeat([]byte(" "), 62), []byte("\n"),
		hexb("000000000000 0c40"))

	// np.arange(3, dtype='<i4'): dict 57 bytes; growth 20; 10+78 = 88,
	// 88 % 64 = 24, so 40 more spaces: 60 spaces; HEADER_LEN 118.
	i32x3 := cat([]byte("\x93NUMPY\x01\x00\x76\x00"),
		[]byte("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"),
		bytes.Repeat([]byte(" "), 60), []byte("\n"),
		hexb("00000000 01000000 02000000"))

	// np.array([[-1, 2**31-1], [-2**31, 0]], dtype='<i4'): as f32x23.
	i32x22 := cat([]byte("\x93NUMPY\x01\x00\x76\x00"),
		[]byte("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }"),
		bytes.Repeat([]byte(" "), 58), []byte("\n"),
		hexb("ffffffff ffffff7f 00000080 00000000"))

	// np.zeros((100000, 0)): dict 64 bytes; growth 21-6 = 15; 10+80 = 90,
	// so 38 more spaces: 53 spaces; HEADER_LEN 118; no data.
	f64empty := cat([]byte("\x93NUMPY\x01\x00\x76\x00"),
		[]byte("{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 0), }"),
		bytes.Repeat([]byte(" "), 53), []byte("\n"))

	// np.zeros((0, 10, 10) + (1,)*11, dtype='<f4'): dict 97 bytes; growth
	// 20; with '\n' 118 bytes; 10+118 = 128 is already aligned, and NumPy's
	// _wrap_header then adds a full 64 spaces (64 - 128%64):
	// 84 spaces, HEADER_LEN 97+84+1 = 182 = 0xb6, preamble 192.
	f32aligned := cat([]byte("\x93NUMPY\x01\x00\xb6\x00"),
		[]byte("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }"),
		bytes.Repeat([]byte(" "), 84), []byte("\n"))

	return []golden{
		{"f32 (2, 3)", &Array{Shape: []int{2, 3}, Data: []float32{0, 1, 2, 3, 4, 5}}, f32x23},
		{"f64 ()", &Array{Shape: []int{}, Data: []float64{3.5}}, f64scalar},
		{"i32 (3,)", &Array{Shape: []int{3}, Data: []int32{0, 1, 2}}, i32x3},
		{"i32 (2, 2)", &Array{Shape: []int{2, 2}, Data: []int32{-1, math.MaxInt32, math.MinInt32, 0}}, i32x22},
		{"f64 (100000, 0)", &Array{Shape: []int{100000, 0}, Data: []float64{}}, f64empty},
		{"f32 aligned", &Array{Shape: []int{0, 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, Data: []float32{}}, f32aligned},
	}
}

func TestGolden(t *testing.T) {
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, g.a); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), g.file) {
				t.Fatalf("Write:\n got %q\nwant %q", buf.Bytes(), g.file)
			}
			got, err := readBoth(t, g.file)
			if err != nil {
				t.Fatal(err)
			}
			if !sameArray(got, g.a) {
				t.Fatalf("Read = %+v, want %+v", got, g.a)
			}
		})
	}
}

func TestGoldenScalarNilShape(t *testing.T) {
	// A nil Shape is the same as an empty one.
	var buf bytes.Buffer
	if err := Write(&buf, &Array{Data: []float64{3.5}}); err != nil {
		t.Fatal(err)
	}
	if want := goldens()[1].file; !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("got %q, want %q", buf.Bytes(), want)
	}
}

// ---------------------------------------------------------------------------
// Reading other layouts

func TestReadFortran2D(t *testing.T) {
	// np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3)): numpy
	// writes fortran_order True and the data column by column.
	file := cat([]byte("\x93NUMPY\x01\x00\x76\x00"),
		[]byte("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"),
		bytes.Repeat([]byte(" "), 59), []byte("\n"),
		f4(binary.LittleEndian, 0, 3, 1, 4, 2, 5))
	a, err := readBoth(t, file)
	if err != nil {
		t.Fatal(err)
	}
	want := &Array{Shape: []int{2, 3}, Data: []float32{0, 1, 2, 3, 4, 5}}
	if !sameArray(a, want) {
		t.Fatalf("got %+v, want %+v", a, want)
	}
}

func TestReadFortran3D(t *testing.T) {
	// C-order value of element (i, j, k) of shape (2, 3, 4) is i*12+j*4+k;
	// in Fortran order the first index varies fastest.
	var vals []int32
	for k := range 4 {
		for j := range 3 {
			for i := range 2 {
				vals = append(vals, int32(i*12+j*4+k))
			}
		}
	}
	file := mk("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3, 4), }", i4(binary.BigEndian, vals...))
	a, err := readBoth(t, file)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int32, 24)
	for i := range want {
		want[i] = int32(i)
	}
	if !sameArray(a, &Array{Shape: []int{2, 3, 4}, Data: want}) {
		t.Fatalf("got %+v", a)
	}
}

func TestReadFortranDegenerate(t *testing.T) {
	// Rank 0 and 1, and empty arrays, are the same in both orders.
	for _, c := range []struct {
		dict string
		data []byte
		want *Array
	}{
		{"{'descr': '<f8', 'fortran_order': True, 'shape': (), }", f8(binary.LittleEndian, 2), &Array{Shape: []int{}, Data: []float64{2}}},
		{"{'descr': '<f8', 'fortran_order': True, 'shape': (3,), }", f8(binary.LittleEndian, 1, 2, 3), &Array{Shape: []int{3}, Data: []float64{1, 2, 3}}},
		{"{'descr': '<f8', 'fortran_order': True, 'shape': (3, 0, 2), }", nil, &Array{Shape: []int{3, 0, 2}, Data: []float64{}}},
		{"{'descr': '<f8', 'fortran_order': True, 'shape': (1, 3, 1), }", f8(binary.LittleEndian, 1, 2, 3), &Array{Shape: []int{1, 3, 1}, Data: []float64{1, 2, 3}}},
	} {
		a, err := readBoth(t, mk(c.dict, c.data))
		if err != nil {
			t.Fatal(err)
		}
		if !sameArray(a, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.dict, a, c.want)
		}
	}
}

func TestReadByteOrders(t *testing.T) {
	for _, c := range []struct {
		descr string
		data  []byte
		want  any
	}{
		{"'>f4'", f4(binary.BigEndian, 1.5, -2, float32(math.Inf(1))), []float32{1.5, -2, float32(math.Inf(1))}},
		{"'>f8'", f8(binary.BigEndian, 1.5, -2, math.Pi), []float64{1.5, -2, math.Pi}},
		{"'>i4'", i4(binary.BigEndian, 1, -2, math.MinInt32), []int32{1, -2, math.MinInt32}},
		{"'=f4'", f4(binary.NativeEndian, 1.5, -2, 7), []float32{1.5, -2, 7}},
		{"'=f8'", f8(binary.NativeEndian, 1.5, -2, 7), []float64{1.5, -2, 7}},
		{"'=i4'", i4(binary.NativeEndian, 1, -2, 7), []int32{1, -2, 7}},
		{"'<f8'", f8(binary.LittleEndian, 1.5, -2, 7), []float64{1.5, -2, 7}},
	} {
		file := mk("{'descr': "+c.descr+", 'fortran_order': False, 'shape': (3,), }", c.data)
		a, err := readBoth(t, file)
		if err != nil {
			t.Fatalf("%s: %v", c.descr, err)
		}
		if !sameArray(a, &Array{Shape: []int{3}, Data: c.want}) {
			t.Errorf("%s: got %v, want %v", c.descr, a.Data, c.want)
		}
	}
}

func TestReadBigEndianFortran(t *testing.T) {
	// np.asfortranarray(np.arange(6.0).reshape(3, 2)).astype('>f8')
	file := mk("{'descr': '>f8', 'fortran_order': True, 'shape': (3, 2), }", f8(binary.BigEndian, 0, 2, 4, 1, 3, 5))
	a, err := readBoth(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if !sameArray(a, &Array{Shape: []int{3, 2}, Data: []float64{0, 1, 2, 3, 4, 5}}) {
		t.Fatalf("got %+v", a)
	}
}

func TestReadVersions(t *testing.T) {
	dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	data := f4(binary.LittleEndian, 0, 1, 2, 3, 4, 5)
	want := &Array{Shape: []int{2, 3}, Data: []float32{0, 1, 2, 3, 4, 5}}

	// Version 2.0 as numpy.save(..., version=(2, 0)) writes it: a 4-byte
	// header length, HEADER_LEN 116 (0x74) so the preamble is 128 bytes.
	v2 := cat([]byte("\x93NUMPY\x02\x00\x74\x00\x00\x00"), []byte(dict),
		bytes.Repeat([]byte(" "), 56), []byte("\n"), data)
	// Version 3.0: same layout, UTF-8 header.
	v3 := cat([]byte("\x93NUMPY\x03\x00\x74\x00\x00\x00"), []byte(dict),
		bytes.Repeat([]byte(" "), 56), []byte("\n"), data)
	// Old NumPy (< 1.14) aligned to 16 bytes and had no growth padding:
	// 10+59+1 = 70, 70 % 16 = 6, so 10 spaces; HEADER_LEN 70 (0x46).
	old := cat([]byte("\x93NUMPY\x01\x00\x46\x00"), []byte(dict),
		bytes.Repeat([]byte(" "), 10), []byte("\n"), data)
	// Python 2 NumPy wrote long integers in v1.0/v2.0 headers.
	py2 := mk("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", data)
	// Other writers: different key order, double quotes, u prefix, spacing,
	// no trailing comma, no padding or newline at all, misalignment.
	loose := []string{
		`{"shape": (2, 3), "fortran_order": False, "descr": "<f4"}`,
		"{ 'shape' : ( 2 , 3 , ) ,\n'descr':u'<f4','fortran_order':False}",
		"  {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}\t\n\n",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (+2, 3), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': ((2), 3), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,)}",
	}
	files := map[string][]byte{"v2.0": v2, "v3.0": v3, "16-aligned": old, "python2": py2}
	for i, h := range loose {
		files[fmt.Sprintf("loose%d", i)] = npyFile(1, h, data)
	}
	for name, file := range files {
		a, err := readBoth(t, file)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !sameArray(a, want) {
			t.Errorf("%s: got %+v", name, a)
		}
	}
}

func TestReadV3UTF8(t *testing.T) {
	// A version 3.0 header may hold UTF-8 in strings; such a descr is a
	// structured dtype with a non-ASCII field name, which is unsupported.
	dict := "{'descr': [('é', '<f4')], 'fortran_order': False, 'shape': (1,), }"
	_, err := readBoth(t, npyFile(3, padded(3, dict, 64), f4(binary.LittleEndian, 1)))
	if !errors.Is(err, ErrUnsupportedDType) || !strings.Contains(err.Error(), "é") {
		t.Errorf("v3: got %v, want ErrUnsupportedDType naming the descr", err)
	}
	// The same header in version 1.0 is not ASCII.
	_, err = readBoth(t, npyFile(1, padded(1, dict, 64), f4(binary.LittleEndian, 1)))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "non-ascii") {
		t.Errorf("v1: got %v, want ErrCorrupt for non-ascii", err)
	}
}

func TestWrapHeaderVersion2(t *testing.T) {
	// A header too long for version 1.0's 16-bit length needs version 2.0.
	dict := "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }" + strings.Repeat(" ", 70000)
	pre, err := wrapHeader(dict)
	if err != nil {
		t.Fatal(err)
	}
	if pre[6] != 2 || pre[7] != 0 {
		t.Fatalf("version %d.%d, want 2.0", pre[6], pre[7])
	}
	hlen := binary.LittleEndian.Uint32(pre[8:12])
	if int(hlen) != len(pre)-12 || len(pre)%64 != 0 || pre[len(pre)-1] != '\n' {
		t.Fatalf("bad v2 preamble: header length %d, preamble %d bytes", hlen, len(pre))
	}
	a, err := readBoth(t, cat(pre, i4(binary.LittleEndian, 7, -7)))
	if err != nil {
		t.Fatal(err)
	}
	if !sameArray(a, &Array{Shape: []int{2}, Data: []int32{7, -7}}) {
		t.Fatalf("got %+v", a)
	}
	// Just below the limit stays version 1.0.
	pre, err = wrapHeader(strings.Repeat(" ", 65535-64))
	if err != nil || pre[6] != 1 {
		t.Fatalf("want version 1.0, got %v, %v", pre[:8], err)
	}
	// Over MaxHeaderLen is refused.
	if _, err := wrapHeader(strings.Repeat(" ", MaxHeaderLen)); !errors.Is(err, ErrInvalidArray) {
		t.Fatalf("oversized header: got %v", err)
	}
}

// ---------------------------------------------------------------------------
// Bad input

type badCase struct {
	name string
	in   []byte
	want error
	msg  string // substring of the message
}

func badCases() []badCase {
	valid := mk("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", make([]byte, 48))
	hdr := func(rest string) []byte { return mk("{'descr': '<f4', 'fortran_order': False, "+rest, make([]byte, 8)) }
	dict := func(d string) []byte { return mk(d, make([]byte, 8)) }
	descr := func(d string) []byte {
		return mk("{'descr': "+d+", 'fortran_order': False, 'shape': (2,), }", make([]byte, 16))
	}
	// A pickle as numpy.save(allow_pickle=True) writes for an object array.
	pickle := hexb("80 04 95 a4 00 00 00 00 00 00 00 8c 15 6e 75 6d 70 79 2e 63 6f 72 65 2e 6d 75 6c 74 69 61 72 72 61 79 94 8c 0c 5f 72 65 63 6f 6e 73 74 72 75 63 74 94 93 94 2e")
	bigHdr := []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{}")
	return []badCase{
		{"empty", nil, ErrNotNPY, "empty input"},
		{"wrong magic", []byte("PK\x03\x04 this is a zip file"), ErrNotNPY, "bad magic"},
		{"text", []byte("hello, world\n"), ErrNotNPY, "bad magic"},
		{"magic prefix only", []byte("\x93NUM"), ErrTruncated, "truncated preamble"},
		{"no version", []byte("\x93NUMPY"), ErrTruncated, "truncated preamble"},
		{"version 0.0", []byte("\x93NUMPY\x00\x00\x10\x00"), ErrNotNPY, "version 0.0"},
		{"version 4.0", []byte("\x93NUMPY\x04\x00\x10\x00"), ErrNotNPY, "version 4.0"},
		{"version 1.1", []byte("\x93NUMPY\x01\x01\x10\x00"), ErrNotNPY, "version 1.1"},
		{"no header length", []byte("\x93NUMPY\x01\x00\x76"), ErrTruncated, "truncated header length"},
		{"no v2 header length", []byte("\x93NUMPY\x02\x00\x76\x00\x00"), ErrTruncated, "truncated header length"},
		{"truncated header", valid[:40], ErrTruncated, "truncated header: need 118 bytes, file has 30"},
		{"header length over limit", bigHdr, ErrCorrupt, "header length 4294967295 exceeds"},
		{"truncated data", valid[:128+20], ErrTruncated, "truncated data: shape (3, 4) float32 needs 48 bytes, file has 20"},
		{"no data", valid[:128], ErrTruncated, "needs 48 bytes, file has 0"},
		{"trailing byte", cat(valid, []byte{0}), ErrCorrupt, "trailing data: 1 extra byte after"},
		{"trailing file", cat(valid, valid), ErrCorrupt, "trailing data: 176 extra bytes"},
		{"object array", mk("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", pickle), ErrObjectArray, "'|O'"},
		{"object array O8", mk("{'descr': '|O8', 'fortran_order': False, 'shape': (2,), }", pickle), ErrObjectArray, "pickle"},
		{"object array <O", mk("{'descr': '<O', 'fortran_order': False, 'shape': (2,), }", pickle), ErrObjectArray, "object array"},
		{"int64", descr("'<i8'"), ErrUnsupportedDType, "'<i8'"},
		{"float128", descr("'<f16'"), ErrUnsupportedDType, "'<f16'"},
		{"uint8", descr("'|u1'"), ErrUnsupportedDType, "'|u1'"},
		{"complex64", descr("'<c8'"), ErrUnsupportedDType, "'<c8'"},
		{"uint32", descr("'<u4'"), ErrUnsupportedDType, "'<u4'"},
		{"bool", descr("'|b1'"), ErrUnsupportedDType, "'|b1'"},
		{"unicode", descr("'<U2'"), ErrUnsupportedDType, "'<U2'"},
		{"bytes", descr("'|S8'"), ErrUnsupportedDType, "'|S8'"},
		{"datetime", descr("'<M8[ns]'"), ErrUnsupportedDType, "'<M8[ns]'"},
		{"no byte order", descr("'f4'"), ErrUnsupportedDType, "'f4'"},
		{"not applicable order", descr("'|f4'"), ErrUnsupportedDType, "'|f4'"},
		{"name", descr("'float32'"), ErrUnsupportedDType, "'float32'"},
		{"long double", descr("'<f16'"), ErrUnsupportedDType, "'<f16'"},
		{"empty descr", descr("''"), ErrUnsupportedDType, "''"},
		{"structured", descr("[('x', '<f4'), ('y', '<f4')]"), ErrUnsupportedDType, "[('x', '<f4'), ('y', '<f4')]"},
		{"structured object", descr("[('x', '|O')]"), ErrUnsupportedDType, "structured"},
		{"sub-array", descr("('<f4', (2,))"), ErrUnsupportedDType, "('<f4', (2,))"},
		{"descr int", descr("5"), ErrCorrupt, "descr is not a dtype descriptor: 5"},
		{"descr dict", descr("{'a': [1, True], \"b\": ()}"), ErrCorrupt, "descr is not a dtype descriptor: {'a': [1, True], 'b': ()}"},
		{"descr escapes", descr("'\\'\\\\\\t\\\"'"), ErrUnsupportedDType, "unsupported dtype '\\'\\\\\\t\"'"},
		{"descr long", descr("'" + strings.Repeat("<f4", 100) + "'"), ErrUnsupportedDType, "<f4<f... (truncated) (supported"},
		{"descr unicode", npyFile(3, padded(3, "{'descr': '\u00e9\u2028\x7f', 'fortran_order': False, 'shape': (2,), }", 64), nil), ErrCorrupt, "control character"},
		{"descr line separator", npyFile(3, padded(3, "{'descr': '\u00e9\u2028', 'fortran_order': False, 'shape': (2,), }", 64), nil), ErrUnsupportedDType, "unsupported dtype '\u00e9\\u2028'"},
		{"descr None", descr("None"), ErrCorrupt, "descr is not a dtype descriptor: None"},
		{"missing shape", dict("{'descr': '<f4', 'fortran_order': False, }"), ErrCorrupt, "no 'shape' key"},
		{"missing descr", dict("{'fortran_order': False, 'shape': (2,), }"), ErrCorrupt, "no 'descr' key"},
		{"missing fortran_order", dict("{'descr': '<f4', 'shape': (2,), }"), ErrCorrupt, "no 'fortran_order' key"},
		{"empty dict", dict("{}"), ErrCorrupt, "no 'descr' key"},
		{"unknown key", hdr("'shape': (2,), 'version': 3, }"), ErrCorrupt, "unknown header key 'version'"},
		{"duplicate key", hdr("'shape': (2,), 'shape': (2,), }"), ErrCorrupt, "duplicate header key 'shape'"},
		{"non-string key", hdr("'shape': (2,), 1: 2, }"), ErrCorrupt, "header key is not a string: 1"},
		{"negative dim", hdr("'shape': (-2,), }"), ErrCorrupt, "negative dimension in shape (-2,)"},
		{"negative dim 2", hdr("'shape': (2, -1), }"), ErrCorrupt, "negative dimension"},
		{"shape list", hdr("'shape': [2], }"), ErrCorrupt, "shape is not a tuple: [2]"},
		{"shape int", hdr("'shape': (2), }"), ErrCorrupt, "shape is not a tuple: 2"},
		{"shape float", hdr("'shape': (2.0,), }"), ErrCorrupt, "only decimal integers"},
		{"shape hex", hdr("'shape': (0x2,), }"), ErrCorrupt, "only decimal integers"},
		{"shape string", hdr("'shape': ('2',), }"), ErrCorrupt, "shape is not a tuple of integers"},
		{"shape bool", hdr("'shape': (True,), }"), ErrCorrupt, "shape is not a tuple of integers"},
		{"shape nested", hdr("'shape': ((2,),), }"), ErrCorrupt, "shape is not a tuple of integers"},
		{"shape leading zero", hdr("'shape': (02,), }"), ErrCorrupt, "leading zeros"},
		{"shape huge int", hdr("'shape': (99999999999999999999,), }"), ErrCorrupt, "too large"},
		{"shape overflow", hdr("'shape': (4611686018427387904, 4611686018427387904), }"), ErrCorrupt, "is too large"},
		{"shape bytes overflow", hdr("'shape': (2305843009213693952,), }"), ErrCorrupt, "is too large"},
		{"too many dims", hdr("'shape': (" + strings.Repeat("1, ", 65) + "), }"), ErrCorrupt, "65 dimensions"},
		{"python2 long in v3", npyFile(3, padded(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }", 64), make([]byte, 8)), ErrCorrupt, "only decimal integers"},
		{"fortran_order 0", dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }"), ErrCorrupt, "fortran_order is not True or False: 0"},
		{"fortran_order string", dict("{'descr': '<f4', 'fortran_order': 'False', 'shape': (2,), }"), ErrCorrupt, "fortran_order is not True or False"},
		{"lowercase false", dict("{'descr': '<f4', 'fortran_order': false, 'shape': (2,), }"), ErrCorrupt, "unexpected name 'false'"},
		{"garbage", dict("garbage"), ErrCorrupt, "unexpected name 'garbage'"},
		{"binary garbage", npyFile(1, "\x00\x01\x02\n", nil), ErrCorrupt, "unexpected"},
		{"not a dict", dict("[1, 2]"), ErrCorrupt, "header is not a dict: [1, 2]"},
		{"empty header", npyFile(1, "", nil), ErrCorrupt, "end of header"},
		{"blank header", npyFile(1, "          \n", nil), ErrCorrupt, "end of header"},
		{"unterminated dict", dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)"), ErrCorrupt, "expected ',' or '}'"},
		{"unterminated string", dict("{'descr: '<f4'}"), ErrCorrupt, "expected ':'"},
		{"unterminated string 2", npyFile(1, "{'descr", nil), ErrCorrupt, "unterminated string"},
		{"string across newline", dict("{'descr"), ErrCorrupt, "control character '\\n' in string"},
		{"unterminated escape", npyFile(1, "{'descr\\", nil), ErrCorrupt, "unterminated string"},
		{"missing colon", dict("{'descr' '<f4'}"), ErrCorrupt, "expected ':' after dict key"},
		{"missing comma", hdr("'shape': (1 2), }"), ErrCorrupt, "expected ',' or ')'"},
		{"double comma", hdr("'shape': (1,, 2), }"), ErrCorrupt, "unexpected ','"},
		{"lone comma", hdr("'shape': (,), }"), ErrCorrupt, "unexpected ','"},
		{"dict comma", dict("{,}"), ErrCorrupt, "unexpected ','"},
		{"two dicts", dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } {}"), ErrCorrupt, "after the header dict"},
		{"comment", dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } # hi"), ErrCorrupt, "after the header dict"},
		{"call", dict("{'descr': '<f4', 'fortran_order': False, 'shape': tuple([2]), }"), ErrCorrupt, "unexpected name 'tuple'"},
		{"expression", hdr("'shape': (1+1,), }"), ErrCorrupt, "expected ',' or ')'"},
		{"double sign", hdr("'shape': (--1,), }"), ErrCorrupt, "expected a digit"},
		{"bad escape", descr("'<f\\x34'"), ErrCorrupt, "unsupported escape"},
		{"raw newline in string", descr("'<f\n4'"), ErrCorrupt, "control character"},
		{"bytes prefix", descr("b'<f4'"), ErrCorrupt, "unexpected name 'b'"},
		{"triple quotes", descr("'''<f4'''"), ErrCorrupt, "expected ','"},
		{"deep nesting", hdr("'shape': " + strings.Repeat("(", 100) + strings.Repeat(")", 100) + ", }"), ErrCorrupt, "nesting deeper than 32"},
		{"non-ascii v1", dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } \xe9"), ErrCorrupt, "non-ascii byte 0xe9"},
		{"invalid utf-8 v3", npyFile(3, padded(3, "{'descr': '\xff', 'fortran_order': False, 'shape': (2,), }", 64), make([]byte, 8)), ErrCorrupt, "not valid utf-8"},
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			a, err := readBoth(t, c.in)
			if err == nil {
				t.Fatalf("accepted: %+v", a)
			}
			if !errors.Is(err, c.want) {
				t.Errorf("error %q does not wrap %q", err, c.want)
			}
			for _, s := range sentinels {
				if s != c.want && errors.Is(err, s) {
					t.Errorf("error %q also wraps %q", err, s)
				}
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not contain %q", err, c.msg)
			}
			checkMessage(t, err)
		})
	}
}

func TestTruncatedMessage(t *testing.T) {
	valid := mk("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", make([]byte, 48))
	_, err := Read(bytes.NewReader(valid[:len(valid)-28]))
	if want := "npy: truncated data: shape (3, 4) float32 needs 48 bytes, file has 20"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestReadIOError(t *testing.T) {
	boom := errors.New("disk on fire")
	file := goldens()[0].file
	for _, n := range []int{0, 4, 9, 50, 130} {
		r := io.MultiReader(bytes.NewReader(file[:n]), iotest.ErrReader(boom))
		_, err := Read(r)
		if !errors.Is(err, boom) {
			t.Errorf("after %d bytes: got %v, want the reader's error", n, err)
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				t.Errorf("after %d bytes: I/O error %q wraps %q", n, err, s)
			}
		}
		if err != nil {
			checkMessage(t, err)
		}
	}
}

// allocated returns the bytes allocated on the heap while running f.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestGiantShapeFailsFast(t *testing.T) {
	for _, c := range []struct {
		dict string
		want error
	}{
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }", ErrTruncated},          // 8 TiB
		{"{'descr': '<f4', 'fortran_order': True, 'shape': (1048576, 1048576, 1024), }", ErrTruncated},   // 4 PiB
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (1073741824, 1073741824), }", ErrTruncated},  // 4 EiB
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ErrCorrupt},    // overflows
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }", ErrCorrupt}, // overflows
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807,), }", ErrCorrupt},      // overflows
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775807), }", ErrCorrupt},    // empty, but overflows
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (4096, 4096), }", ErrTruncated},              // 128 MiB
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 0), }", ErrCorrupt},    // overflows
	} {
		file := mk(c.dict, bytes.Repeat([]byte{1}, 100))
		// A reader of unknown size cannot be seen to be short before its
		// data is read: under the default limit a claim larger than this
		// machine's memory fails first with ErrTooLarge; with no limit it
		// must still fail with ErrTruncated, allocating little.
		hiddenWant := c.want
		if d, err := NewDecoder(hiddenReader{bytes.NewReader(file)}, &ReadOptions{MaxBytes: math.MaxInt64}); err == nil && int64(d.nbytes) > DefaultMaxBytes() {
			hiddenWant = ErrTooLarge
		}
		readers := map[string]struct {
			r    func() io.Reader
			opt  *ReadOptions
			want error
		}{
			"bytes.Reader":    {func() io.Reader { return bytes.NewReader(file) }, nil, c.want},
			"hidden":          {func() io.Reader { return hiddenReader{bytes.NewReader(file)} }, nil, hiddenWant},
			"hidden no limit": {func() io.Reader { return hiddenReader{bytes.NewReader(file)} }, &ReadOptions{MaxBytes: math.MaxInt64}, c.want},
		}
		for name, rd := range readers {
			var err error
			n := allocated(func() {
				var d *Decoder
				if d, err = NewDecoder(rd.r(), rd.opt); err == nil {
					_, err = d.ReadArray()
				}
			})
			if !errors.Is(err, rd.want) {
				t.Errorf("%s %s: got %v, want %v", name, c.dict, err, rd.want)
			}
			if n > 1<<20 {
				t.Errorf("%s %s: allocated %d bytes", name, c.dict, n)
			}
		}
		path := filepath.Join(t.TempDir(), "giant.npy")
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		n := allocated(func() { _, err = ReadFile(path) })
		if !errors.Is(err, c.want) || n > 1<<20 {
			t.Errorf("ReadFile %s: %v, allocated %d bytes", c.dict, err, n)
		}
	}
}

func TestGiantHeaderFailsFast(t *testing.T) {
	// A v2 header claiming just under the limit, in a tiny file.
	file := []byte("\x93NUMPY\x02\x00\xff\xff\x0f\x00{'descr'")
	for _, r := range []io.Reader{bytes.NewReader(file), hiddenReader{bytes.NewReader(file)}} {
		var err error
		n := allocated(func() { _, err = Read(r) })
		if !errors.Is(err, ErrTruncated) || n > 1<<16 {
			t.Errorf("got %v, allocated %d bytes", err, n)
		}
	}
}

// ---------------------------------------------------------------------------
// Write errors

func TestWriteInvalid(t *testing.T) {
	for _, c := range []struct {
		name string
		a    *Array
		want error
		msg  string
	}{
		{"nil array", nil, ErrInvalidArray, "nil array"},
		{"nil data", &Array{Shape: []int{2}}, ErrInvalidArray, "nil data"},
		{"wrong type", &Array{Shape: []int{2}, Data: []int64{1, 2}}, ErrUnsupportedDType, "[]int64"},
		{"not a slice", &Array{Data: 1.5}, ErrUnsupportedDType, "float64"},
		{"too short", &Array{Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5}}, ErrInvalidArray, "data has 5 elements but shape (2, 3) needs 6"},
		{"too long", &Array{Shape: []int{}, Data: []float64{1, 2}}, ErrInvalidArray, "data has 2 elements but shape () needs 1"},
		{"scalar empty", &Array{Data: []int32{}}, ErrInvalidArray, "needs 1"},
		{"negative", &Array{Shape: []int{-1}, Data: []int32{}}, ErrInvalidArray, "negative dimension -1"},
		{"overflow", &Array{Shape: []int{1 << 40, 1 << 40}, Data: []int32{}}, ErrInvalidArray, "too large"},
		{"too many dims", &Array{Shape: make([]int, 65), Data: []int32{}}, ErrInvalidArray, "65 dimensions"},
	} {
		var buf bytes.Buffer
		err := Write(&buf, c.a)
		if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, err, c.want, c.msg)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes", c.name, buf.Len())
		}
		if err != nil {
			checkMessage(t, err)
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errors.New("device full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteIOError(t *testing.T) {
	a := &Array{Shape: []int{100000}, Data: make([]float32, 100000)}
	for _, n := range []int{0, 100, 128, 70000} {
		err := Write(&failWriter{n: n}, a)
		if err == nil || !strings.Contains(err.Error(), "device full") {
			t.Errorf("after %d bytes: got %v", n, err)
		} else {
			checkMessage(t, err)
		}
	}
}

// ---------------------------------------------------------------------------
// Files

// listDir returns the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npy")
	for _, g := range goldens() {
		if err := WriteFile(path, g.a); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, g.file) {
			t.Fatalf("%s: file differs from golden", g.name)
		}
		a, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !sameArray(a, g.a) {
			t.Fatalf("%s: ReadFile = %+v", g.name, a)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Errorf("permissions %v, want 0644", fi.Mode().Perm())
	}
	if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"a.npy"}) {
		t.Errorf("directory holds %v, want only a.npy", names)
	}
}

func TestWriteFileRelative(t *testing.T) {
	t.Chdir(t.TempDir())
	a := goldens()[0].a
	if err := WriteFile("rel.npy", a); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile("rel.npy")
	if err != nil || !sameArray(got, a) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if names := listDir(t, "."); !reflect.DeepEqual(names, []string{"rel.npy"}) {
		t.Errorf("directory holds %v", names)
	}
}

func TestWriteFileDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "out.npy")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(sub, goldens()[0].a)
	if !errors.Is(err, ErrIsDirectory) || !strings.Contains(err.Error(), sub) {
		t.Fatalf("got %v, want ErrIsDirectory naming the path", err)
	}
	checkMessage(t, err)
	if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out.npy"}) {
		t.Errorf("parent holds %v", names)
	}
	if names := listDir(t, sub); len(names) != 0 {
		t.Errorf("directory holds %v", names)
	}
	if err := WriteFile(dir+string(filepath.Separator), goldens()[0].a); !errors.Is(err, ErrIsDirectory) {
		t.Errorf("trailing separator: got %v", err)
	}
}

func TestWriteFileInvalidKeepsExisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.npy")
	old := []byte("precious")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*Array{
		{Shape: []int{3}, Data: []float32{1, 2}},
		{Shape: []int{1}, Data: []string{"x"}},
		nil,
	} {
		err := WriteFile(path, a)
		if err == nil {
			t.Fatal("WriteFile accepted an invalid array")
		}
		checkMessage(t, err)
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name the path", err)
		}
		b, _ := os.ReadFile(path)
		if !bytes.Equal(b, old) {
			t.Fatalf("existing file changed to %q", b)
		}
		if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"keep.npy"}) {
			t.Fatalf("directory holds %v", names)
		}
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(filepath.Join(dir, "no", "such", "x.npy"), goldens()[0].a)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want a not-exist error", err)
	}
	checkMessage(t, err)
	if names := listDir(t, dir); len(names) != 0 {
		t.Fatalf("created %v", names)
	}
	if err := WriteFile("", goldens()[0].a); err == nil {
		t.Fatal("empty path accepted")
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadFile(filepath.Join(dir, "missing.npy"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
	path := filepath.Join(dir, "bad.npy")
	if err := os.WriteFile(path, goldens()[0].file[:140], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(path)
	want := "npy: " + path + ": truncated data: shape (2, 3) float32 needs 24 bytes, file has 12"
	if !errors.Is(err, ErrTruncated) || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if err := os.WriteFile(path, append(goldens()[0].file, 1, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = ReadFile(path); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "2 extra bytes") {
		t.Errorf("trailing: got %v", err)
	}
	if _, err = ReadFile(dir); err == nil {
		t.Errorf("reading a directory succeeded")
	}
}

// ---------------------------------------------------------------------------
// Fuzzing

func FuzzRead(f *testing.F) {
	for _, g := range goldens() {
		f.Add(g.file)
	}
	for _, c := range badCases() {
		f.Add(c.in)
	}
	f.Add(mk("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3, 2), }", make([]byte, 48)))
	f.Add(mk("{'descr': '=f8', 'fortran_order': True, 'shape': (2, 2), }", f8(binary.LittleEndian, 1, 2, 3, 4)))
	f.Add(npyFile(3, padded(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 64), make([]byte, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bytes.NewReader(b))
		a2, err2 := Read(hiddenReader{bytes.NewReader(b)})
		if errors.Is(err, ErrTruncated) && errors.Is(err2, ErrTooLarge) {
			// Of unknown size, an input is found short only by reading
			// data, which the default limit forbids for this array.
			d, err := NewDecoder(hiddenReader{bytes.NewReader(b)}, &ReadOptions{MaxBytes: math.MaxInt64})
			if err != nil || int64(d.nbytes) <= DefaultMaxBytes() {
				t.Fatalf("ErrTooLarge (%v), yet without a limit: %v", err2, err)
			}
			checkMessage(t, err2)
		} else {
			checkSame(t, "hidden reader", a, err, a2, err2)
		}
		// With a small limit: the same result for arrays within it,
		// ErrTooLarge from the header for the others.
		const small = 64
		for _, r := range []io.Reader{bytes.NewReader(b), hiddenReader{bytes.NewReader(b)}} {
			var a3 *Array
			d, err3 := NewDecoder(r, &ReadOptions{MaxBytes: small})
			if err3 == nil {
				if h := d.Header(); !reflect.DeepEqual(h.Shape, d.h.shape) || h.DType != d.h.dtype || d.nbytes > small {
					t.Fatalf("Header() = %+v for %d bytes of data", h, d.nbytes)
				}
				a3, err3 = d.ReadArray()
			}
			if errors.Is(err3, ErrTooLarge) {
				// Only for a valid header describing more data.
				d, err := NewDecoder(hiddenReader{bytes.NewReader(b)}, &ReadOptions{MaxBytes: math.MaxInt64})
				if err != nil || d.nbytes <= small {
					t.Fatalf("ErrTooLarge (%v), yet without a limit: %v", err3, err)
				}
				checkMessage(t, err3)
				continue
			}
			checkSame(t, "small limit", a, err, a3, err3)
		}
		if err != nil {
			wraps := 0
			for _, s := range sentinels {
				if errors.Is(err, s) {
					wraps++
				}
			}
			if wraps != 1 {
				t.Fatalf("error %q wraps %d sentinels", err, wraps)
			}
			checkMessage(t, err)
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatalf("Write of accepted array %+v: %v", a, err)
		}
		back, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if !sameArray(a, back) {
			t.Fatalf("round trip differs: %+v vs %+v", a, back)
		}
		// Writing is canonical: a second round gives the same bytes.
		var buf2 bytes.Buffer
		if err := Write(&buf2, back); err != nil || !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
			t.Fatalf("second write differs (%v)", err)
		}
	})
}

func TestWriteFileThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.npy")
	link := filepath.Join(dir, "link.npy")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := WriteFile(link, &Array{Shape: []int{2}, Data: []float32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi, err)
	}
	a, err := ReadFile(target)
	if err != nil || a.Data.([]float32)[1] != 2 {
		t.Fatalf("the link's target holds %+v, %v", a, err)
	}
}

// A big-endian, Fortran-ordered float16 file reads in C order, with its
// values as NumPy writes them (1.0 is 0x3c00, -2.0 0xc000, 65504 0x7bff).
func TestReadFloat16(t *testing.T) {
	// C order: [[1, -2, 0.5], [65504, 2^-24, -0]]; Fortran order on disk.
	bits := []uint16{0x3c00, 0x7bff, 0xc000, 0x0001, 0x3800, 0x8000}
	data := make([]byte, 2*len(bits))
	for i, b := range bits {
		binary.BigEndian.PutUint16(data[2*i:], b)
	}
	a, err := readBoth(t, mk("{'descr': '>f2', 'fortran_order': True, 'shape': (2, 3), }", data))
	if err != nil {
		t.Fatal(err)
	}
	want := []half.Float16{0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x8000}
	if !sameArray(a, &Array{Shape: []int{2, 3}, Data: want}) {
		t.Fatalf("got %+v, want %v", a, want)
	}
	got := half.Float32s(a.Data.([]half.Float16))
	if got[0] != 1 || got[1] != -2 || got[2] != 0.5 || got[3] != 65504 || got[4] != 0x1p-24 || !math.Signbit(float64(got[5])) {
		t.Errorf("values %v", got)
	}
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	if hdr := buf.String()[10:80]; !strings.HasPrefix(hdr, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }") {
		t.Errorf("header %q", hdr)
	}
}
