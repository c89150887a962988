package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goamp/goamp/half"
	"github.com/goamp/goamp/internal/reference"
	"github.com/goamp/goamp/npy"
)

// goampBin is the goamp binary the tests run, built once by TestMain.
var goampBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goamp-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goampBin = filepath.Join(dir, "goamp")
	if out, err := exec.Command("go", "build", "-o", goampBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building goamp: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goamp runs the binary with args and returns stdout, stderr and the exit status.
func goamp(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(goampBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func mustSucceed(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := goamp(t, nil, args...)
	if code != 0 {
		t.Fatalf("goamp %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func TestWalkthrough(t *testing.T) {
	out := mustSucceed(t, "walkthrough")
	for _, want := range []string{
		"MultiplyWithOutAMP", "47  52  57", "81  90  99",
		"MultiplyWithAMP",
		"MultiplyWithTiling", "34  44  54  64", "82 108 134 160", "product[0][0] = 34",
		"dot = 1047552; closed form N(N-1) = 1047552: correct",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("walkthrough output lacks %q:\n%s", want, out)
		}
	}
}

func TestDevices(t *testing.T) {
	out := mustSucceed(t, "devices")
	if !strings.HasPrefix(out, "cpu") || !strings.Contains(out, "cores") {
		t.Errorf("devices output:\n%s", out)
	}
	_, errOut, code := goamp(t, []string{"GOAMP_DEVICE=nowhere"}, "devices")
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "GOAMP_DEVICE") {
		t.Errorf("GOAMP_DEVICE=nowhere: exit %d, stderr %q", code, errOut)
	}
}

func TestUsage(t *testing.T) {
	out, errOut, code := goamp(t, nil)
	if code != 2 || out != "" || !strings.Contains(errOut, "matmul") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, code = goamp(t, nil, "matmul", "-h")
	if code != 0 || !strings.Contains(out, "-kernel") {
		t.Errorf("matmul -h: exit %d, %q", code, out)
	}
}

func TestMatMulRandom(t *testing.T) {
	for _, typ := range []string{"float32", "float64", "int32"} {
		for _, kernel := range []string{"naive", "simple", "tiled", "auto"} {
			out := mustSucceed(t, "matmul", "--m", "37", "--n", "53", "--k", "41", "--type", typ, "--kernel", kernel, "--check", "--repeat", "2")
			for _, want := range []string{typ, "M=37 N=53 K=41", ": ok", "median"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s %s: output lacks %q:\n%s", typ, kernel, want, out)
				}
			}
		}
	}
	out := mustSucceed(t, "matmul", "--m", "20", "--n", "20", "--k", "20", "--kernel", "tiled", "--tile", "7", "--check")
	if !strings.Contains(out, "tile 7") {
		t.Errorf("--tile 7 not reported:\n%s", out)
	}
}

// npyBytes encodes data as a .npy file by hand: descr and fortran order as
// given, data in the order given.
func npyBytes(descr string, fortran bool, shape []int, data any) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	order := "False"
	if fortran {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", descr, order, tuple)
	pad := 64 - (10+len(dict)+1)%64
	header := dict + strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	if data != nil {
		binary.Write(&b, binary.LittleEndian, data)
	}
	return b.Bytes()
}

func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// transpose returns the column-major layout of a row-major m x n matrix.
func transpose[T any](s []T, m, n int) []T {
	out := make([]T, len(s))
	for i := range m {
		for j := range n {
			out[j*m+i] = s[i*n+j]
		}
	}
	return out
}

func TestMatMulNpyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	const m, k, n = 13, 29, 7
	a, b := reference.RandomSlice[float64](r, m*k), reference.RandomSlice[float64](r, k*n)
	// A in C order, B in Fortran order: both must come out right.
	pa := writeFile(t, dir, "a.npy", npyBytes("<f8", false, []int{m, k}, a))
	pb := writeFile(t, dir, "b.npy", npyBytes("<f8", true, []int{k, n}, transpose(b, k, n)))
	want := reference.MatMul(m, n, k, 1, a, b, 0, nil)
	bound := reference.MatMulBound(m, n, k, 1, a, b, 0, nil)
	for _, kernel := range []string{"naive", "simple", "tiled", "auto"} {
		pc := filepath.Join(dir, "c_"+kernel+".npy")
		mustSucceed(t, "matmul", "--a", pa, "--b", pb, "--out", pc, "--kernel", kernel, "--check")
		c, err := npy.ReadFile(pc)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := c.Data.([]float64)
		if !ok || fmt.Sprint(c.Shape) != fmt.Sprint([]int{m, n}) {
			t.Fatalf("%s: C.npy holds %T of shape %v", kernel, c.Data, c.Shape)
		}
		if e := reference.MaxErr(got, want, bound); e > reference.Tolerance[float64](k) {
			t.Errorf("%s: error %g", kernel, e)
		}
	}
}

// TestMatMulTransposes: --transa and --transb multiply by A^T and B^T
// read where they lie (A stored K x M, B N x K), on the kernels that take
// transposes, and a kernel that does not says so.
func TestMatMulTransposes(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	const m, k, n = 11, 17, 5
	at, bt := reference.RandomSlice[float64](r, k*m), reference.RandomSlice[float64](r, n*k) // A^T's storage, B^T's
	pa := writeFile(t, dir, "at.npy", npyBytes("<f8", false, []int{k, m}, at))
	pb := writeFile(t, dir, "bt.npy", npyBytes("<f8", false, []int{n, k}, bt))
	a, b := transpose(at, k, m), transpose(bt, n, k) // A is m x k, B k x n
	want := reference.MatMul(m, n, k, 1, a, b, 0, nil)
	bound := reference.MatMulBound(m, n, k, 1, a, b, 0, nil)
	pc := filepath.Join(dir, "c.npy")
	out := mustSucceed(t, "matmul", "--a", pa, "--b", pb, "--transa", "--transb", "--out", pc, "--check")
	if !strings.Contains(out, "C = A^T*B^T") {
		t.Errorf("the report does not say A^T*B^T:\n%s", out)
	}
	c, err := npy.ReadFile(pc)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Data.([]float64); fmt.Sprint(c.Shape) != fmt.Sprint([]int{m, n}) || reference.MaxErr(got, want, bound) > reference.Tolerance[float64](k) {
		t.Errorf("A^T*B^T: shape %v, error %g", c.Shape, reference.MaxErr(got, want, bound))
	}
	// The shapes are those of op(A) and op(B).
	_, stderr, code := goamp(t, nil, "matmul", "--a", pa, "--b", pb, "--transa")
	if code != 2 || !strings.Contains(stderr, "A^T is 11x17 but B is 5x17") {
		t.Errorf("A^T*B with B the wrong way round: exit %d, %q", code, stderr)
	}
	_, stderr, code = goamp(t, nil, "matmul", "--m", "8", "--n", "8", "--k", "8", "--transa", "--kernel", "tiled", "--device", "cpu")
	if code == 0 || !strings.Contains(stderr, "takes no transposes") {
		t.Errorf("tiled with --transa: exit %d, %q", code, stderr)
	}
}

func TestDot(t *testing.T) {
	dir := t.TempDir()
	x := []int32{1, 2, 3, 4, 5}
	y := []int32{10, 20, 30, 40, 50}
	px := writeFile(t, dir, "x.npy", npyBytes("<i4", false, []int{5}, x))
	py := writeFile(t, dir, "y.npy", npyBytes("<i4", false, []int{5}, y))
	pd := filepath.Join(dir, "d.npy")
	for _, kernel := range []string{"naive", "tiled", "auto"} {
		out := mustSucceed(t, "dot", "--a", px, "--b", py, "--kernel", kernel, "--check", "--out", pd)
		if !strings.Contains(out, "value: 550\n") {
			t.Errorf("%s: output lacks the value 550:\n%s", kernel, out)
		}
		d, err := npy.ReadFile(pd)
		if err != nil || len(d.Shape) != 0 || d.Data.([]int32)[0] != 550 {
			t.Errorf("%s: d.npy = %+v, %v", kernel, d, err)
		}
	}
	for _, typ := range []string{"float32", "float64", "int32"} {
		out := mustSucceed(t, "dot", "--n", "100003", "--type", typ, "--check", "--kernel", "tiled", "--tile", "33")
		if !strings.Contains(out, ": ok") {
			t.Errorf("dot %s:\n%s", typ, out)
		}
	}
}

// TestCheckInt32WrapsAround: int32 products that overflow wrap around, as
// in NumPy, and --check holds them to exactly that.
func TestCheckInt32WrapsAround(t *testing.T) {
	dir := t.TempDir()
	big := writeFile(t, dir, "big.npy", npyBytes("<i4", false, []int{1, 1}, []int32{math.MaxInt32}))
	out := mustSucceed(t, "matmul", "--a", big, "--b", big, "--check", "--out", filepath.Join(dir, "c.npy"))
	c, err := npy.ReadFile(filepath.Join(dir, "c.npy"))
	if err != nil || c.Data.([]int32)[0] != 1 || !strings.Contains(out, ": ok") { // (2^31-1)^2 = 1 modulo 2^32
		t.Errorf("(2^31-1)^2 in int32: %v, %v\n%s", c, err, out)
	}
	r := rand.New(rand.NewPCG(7, 8))
	x, y := make([]int32, 5000), make([]int32, 5000)
	for i := range x {
		x[i], y[i] = int32(r.Uint32()), int32(r.Uint32())
	}
	px := writeFile(t, dir, "x.npy", npyBytes("<i4", false, []int{5000}, x))
	py := writeFile(t, dir, "y.npy", npyBytes("<i4", false, []int{5000}, y))
	var want int32
	for i := range x {
		want += x[i] * y[i]
	}
	for _, kernel := range []string{"naive", "tiled"} {
		out := mustSucceed(t, "dot", "--a", px, "--b", py, "--check", "--kernel", kernel)
		if !strings.Contains(out, fmt.Sprintf("value: %d\n", want)) || !strings.Contains(out, ": ok") {
			t.Errorf("%s: full-range int32 dot, want %d:\n%s", kernel, want, out)
		}
	}
}

// TestBadInput runs every kind of bad input and checks for exit status 2,
// one line on stderr, and an --out file neither created nor overwritten.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	mat := func(name string, rows, cols int) string {
		return writeFile(t, dir, name, npyBytes("<f4", false, []int{rows, cols}, make([]float32, rows*cols)))
	}
	a34, b45, b56 := mat("a34.npy", 3, 4), mat("b45.npy", 4, 5), mat("b56.npy", 5, 6)
	vec4 := writeFile(t, dir, "v4.npy", npyBytes("<f4", false, []int{4}, make([]float32, 4)))
	vec5 := writeFile(t, dir, "v5.npy", npyBytes("<f4", false, []int{5}, make([]float32, 5)))
	b45i := writeFile(t, dir, "b45i.npy", npyBytes("<i4", false, []int{4, 5}, make([]int32, 20)))
	i64 := writeFile(t, dir, "i64.npy", npyBytes("<i8", false, []int{4, 5}, make([]int64, 20)))
	full := npyBytes("<f4", false, []int{4, 5}, make([]float32, 20))
	truncated := writeFile(t, dir, "truncated.npy", full[:len(full)-7])
	truncHeader := writeFile(t, dir, "trunch.npy", full[:30])
	corrupt := writeFile(t, dir, "corrupt.npy", append([]byte("\x93NUMPY\x01\x00\x20\x00{'descr': <f4 garbage!!!!!!!!  \n"), make([]byte, 80)...))
	text := writeFile(t, dir, "text.npy", []byte("this is not a numpy file\n"))
	// An object array: the payload is a pickle (protocol 2 header, then junk), never to be unpickled.
	pickle := writeFile(t, dir, "pickle.npy", append(npyBytes("|O", false, []int{4, 5}, nil), []byte("\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.")...))
	missing := filepath.Join(dir, "does-not-exist.npy")
	outDir := filepath.Join(dir, "outdir.npy")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		args []string
		want string // a word the message must contain
	}{
		{"shapes disagree", []string{"matmul", "--a", a34, "--b", b56}, "columns"},
		{"1-D matmul operand", []string{"matmul", "--a", vec4, "--b", b45}, "1-D"},
		{"2-D dot operand", []string{"dot", "--a", a34, "--b", vec4}, "2-D"},
		{"dot lengths differ", []string{"dot", "--a", vec4, "--b", vec5}, "length"},
		{"types differ", []string{"matmul", "--a", a34, "--b", b45i}, "type"},
		{"unsupported dtype", []string{"matmul", "--a", i64, "--b", b45}, "dtype"},
		{"missing file", []string{"matmul", "--a", a34, "--b", missing}, "does-not-exist"},
		{"truncated data", []string{"matmul", "--a", a34, "--b", truncated}, "truncated"},
		{"truncated header", []string{"matmul", "--a", a34, "--b", truncHeader}, "truncated"},
		{"corrupt header", []string{"matmul", "--a", a34, "--b", corrupt}, "corrupt"},
		{"not numpy", []string{"matmul", "--a", text, "--b", b45}, "not a .npy"},
		{"pickled object array", []string{"matmul", "--a", a34, "--b", pickle}, "object"},
		{"dot pickled object array", []string{"dot", "--a", pickle, "--b", vec4}, "object"},
		{"--out is a directory", []string{"matmul", "--a", a34, "--b", b45, "--out", outDir}, "directory"},
		{"--out in a missing directory", []string{"matmul", "--m", "2", "--out", filepath.Join(dir, "nodir", "c.npy")}, "no such file"},
		{"--out in an unwritable directory", []string{"matmul", "--m", "2", "--out", "/proc/c.npy"}, "cannot create"},
		{"only --a", []string{"matmul", "--a", a34}, "--b"},
		{"files and sizes", []string{"matmul", "--a", a34, "--b", b45, "--m", "3"}, "--m"},
		{"unknown kernel", []string{"matmul", "--m", "4", "--kernel", "quantum"}, "quantum"},
		{"tile too big", []string{"matmul", "--m", "4", "--kernel", "tiled", "--tile", "33"}, "tile"},
		{"tile for an untiled kernel", []string{"matmul", "--m", "4", "--kernel", "simple", "--tile", "8"}, "no tiles"},
		{"dot tile too big", []string{"dot", "--n", "4", "--kernel", "tiled", "--tile", "1025"}, "tile"},
		{"unknown device", []string{"matmul", "--m", "4", "--device", "tpu:0"}, "tpu:0"},
		{"cuda absent", []string{"matmul", "--m", "4", "--device", "cuda"}, "cuda"},
		{"bad type", []string{"matmul", "--m", "4", "--type", "complex128"}, "complex128"},
		{"negative size", []string{"matmul", "--m", "-4"}, "-4"},
		{"huge size", []string{"matmul", "--m", "100000000", "--n", "100000000", "--k", "1"}, "elements"},
		{"bad repeat", []string{"dot", "--repeat", "0"}, "repeat"},
		{"unknown flag", []string{"matmul", "--frobnicate"}, "frobnicate"},
		{"stray argument", []string{"dot", "extra"}, "extra"},
		{"unknown command", []string{"transmogrify"}, "transmogrify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "result.npy")
			args := c.args
			hasOut := false
			for _, a := range args {
				hasOut = hasOut || a == "--out"
			}
			if !hasOut && (args[0] == "matmul" || args[0] == "dot") {
				args = append(append([]string(nil), args...), "--out", out)
			}
			const previous = "an earlier result that must survive"
			if err := os.WriteFile(out, []byte(previous), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := goamp(t, nil, args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			if !strings.Contains(strings.ToLower(stderr), strings.ToLower(c.want)) {
				t.Errorf("message %q does not name the problem (%q)", stderr, c.want)
			}
			if got, err := os.ReadFile(out); err != nil || string(got) != previous {
				t.Errorf("the existing output file was touched: %q, %v", got, err)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp") || strings.HasPrefix(e.Name(), ".") {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nodir")); !os.IsNotExist(err) {
		t.Error("a missing --out directory was created")
	}
}

// TestNumPyRoundTrip has NumPy write random matrices of odd shapes in every
// type and order, multiplies them with every kernel, and compares with
// NumPy's own product. It needs python3 with numpy (Debian: python3-numpy)
// and skips, saying so, without it.
func TestNumPyRoundTrip(t *testing.T) {
	python := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("SKIP: python3 with numpy is not installed (apt-get install python3-numpy); NumPy round trips not run")
	}
	dir := t.TempDir()
	script := `
import numpy as np, sys, os
d = sys.argv[1]
rng = np.random.default_rng()
cases = [("float32", 37, 53, 41, False), ("float64", 31, 1, 29, True), ("int32", 17, 19, 23, False), ("float32", 1, 1, 1, True), ("float64", 64, 33, 65, False)]
for i, (t, m, k, n, fortran) in enumerate(cases):
    if t == "int32":
        a = rng.integers(-50, 50, (m, k)).astype(t); b = rng.integers(-50, 50, (k, n)).astype(t)
    else:
        a = rng.uniform(-1, 1, (m, k)).astype(t); b = rng.uniform(-1, 1, (k, n)).astype(t)
    if fortran:
        a = np.asfortranarray(a); b = np.asfortranarray(b)
    np.save(os.path.join(d, f"a{i}.npy"), a); np.save(os.path.join(d, f"b{i}.npy"), b)
    np.save(os.path.join(d, f"ref{i}.npy"), (a.astype(np.float64) @ b.astype(np.float64)))
    np.save(os.path.join(d, f"abs{i}.npy"), (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))))
    print(i, t, k)
`
	out, err := exec.Command(python, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy script: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var i, k int
		var typ string
		fmt.Sscan(line, &i, &typ, &k)
		ref, err1 := npy.ReadFile(filepath.Join(dir, fmt.Sprintf("ref%d.npy", i)))
		abs, err2 := npy.ReadFile(filepath.Join(dir, fmt.Sprintf("abs%d.npy", i)))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for _, kernel := range []string{"naive", "simple", "tiled", "auto"} {
			pc := filepath.Join(dir, fmt.Sprintf("c%d_%s.npy", i, kernel))
			mustSucceed(t, "matmul", "--a", filepath.Join(dir, fmt.Sprintf("a%d.npy", i)), "--b", filepath.Join(dir, fmt.Sprintf("b%d.npy", i)), "--kernel", kernel, "--out", pc)
			c, err := npy.ReadFile(pc)
			if err != nil {
				t.Fatal(err)
			}
			want, bound := ref.Data.([]float64), abs.Data.([]float64)
			var e, tol float64
			switch got := c.Data.(type) {
			case []float32:
				e, tol = reference.MaxErr(got, want, bound), reference.Tolerance[float32](k)
			case []float64:
				e, tol = reference.MaxErr(got, want, bound), reference.Tolerance[float64](k)
			case []int32:
				e, tol = reference.MaxErr(got, want, bound), 0
			}
			if fmt.Sprint(c.Shape) != fmt.Sprint(ref.Shape) || typ != fmt.Sprint(mustDType(t, c)) || e > tol || math.IsNaN(e) {
				t.Errorf("case %d (%s, k=%d) kernel %s: shape %v type %v error %g (tolerance %g)", i, typ, k, kernel, c.Shape, mustDType(t, c), e, tol)
			}
		}
	}
}

func mustDType(t *testing.T, a *npy.Array) npy.DType {
	d, err := a.DType()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestMatMulPrecision: --precision lets float32 products round their
// operands; the CPU computes exactly and says so; a precision that is none
// of the four, or one for float64 operands, is a usage error before any
// work; the mma kernel, which has only reduced precisions, is refused for
// exact arithmetic (on a GPU; without one, cuda itself is missing).
func TestMatMulPrecision(t *testing.T) {
	out := mustSucceed(t, "matmul", "--m", "30", "--n", "20", "--k", "40", "--precision", "bf16", "--device", "cpu", "--check")
	if !strings.Contains(out, "exact (bf16 allowed; the packed kernel has no reduced precision)") || !strings.Contains(out, "check: max error") {
		t.Errorf("bf16 on the CPU:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--precision", "fp8"}, `precision "fp8", want one of exact, tf32, bf16, fp16`},
		{[]string{"--precision", "tf32", "--type", "float64"}, "--precision tf32 rounds float32 operands; these are float64"},
		{[]string{"--precision", "fp16", "--type", "int32"}, "these are int32"},
	} {
		args := append([]string{"matmul", "--m", "8", "--n", "8", "--k", "8", "--device", "cpu"}, c.args...)
		stdout, stderr, code := goamp(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestFloat16: float16 .npy operands (here a Fortran-ordered B) are
// multiplied as float32, every product exact, checked, and C is written
// as float16, rounded to nearest even; random float16 operands too; a dot
// product of float16 vectors writes a float16 value.
func TestFloat16(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	const m, k, n = 13, 70, 9
	a, b := make([]uint16, m*k), make([]uint16, k*n) // float16 bits; b in Fortran order
	af, bf := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		h := half.Float16From(float32(2*r.Float64() - 1))
		a[i], af[i] = uint16(h), float64(h.Float32())
	}
	for i := range b { // b[j*k+p] holds B[p][j]
		h := half.Float16From(float32(2*r.Float64() - 1))
		b[i] = uint16(h)
		p, j := i%k, i/k
		bf[p*n+j] = float64(h.Float32())
	}
	pa := writeFile(t, dir, "a.npy", npyBytes("<f2", false, []int{m, k}, a))
	pb := writeFile(t, dir, "b.npy", npyBytes("<f2", true, []int{k, n}, b))
	pc := filepath.Join(dir, "c.npy")
	out := mustSucceed(t, "matmul", "--a", pa, "--b", pb, "--out", pc, "--device", "cpu")
	if !strings.Contains(out, "float16 (multiplied as float32") || !strings.Contains(out, "check: max error") || !strings.Contains(out, ": ok") {
		t.Errorf("report:\n%s", out)
	}
	c, err := npy.ReadFile(pc)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := c.Data.([]half.Float16)
	if !ok || fmt.Sprint(c.Shape) != fmt.Sprint([]int{m, n}) {
		t.Fatalf("C: %T %v, want float16 %dx%d", c.Data, c.Shape, m, n)
	}
	want := reference.MatMul(m, n, k, 1, af, bf, 0, nil)
	bound := reference.MatMulBound(m, n, k, 1, af, bf, 0, nil)
	for i := range want {
		// float32's sum, then one rounding to float16 of the result.
		if d := math.Abs(float64(got[i].Float32()) - want[i]); d > reference.Tolerance[float32](k)*bound[i]+0x1p-11*math.Abs(want[i])+0x1p-25 {
			t.Fatalf("C[%d] = %g, want %g", i, got[i].Float32(), want[i])
		}
	}
	out = mustSucceed(t, "matmul", "--type", "float16", "--m", "20", "--n", "30", "--k", "40", "--device", "cpu", "--out", pc)
	if c, err := npy.ReadFile(pc); err != nil || !strings.Contains(out, ": ok") {
		t.Errorf("random float16: %v\n%s", err, out)
	} else if _, ok := c.Data.([]half.Float16); !ok {
		t.Errorf("random float16 wrote %T", c.Data)
	}
	px := writeFile(t, dir, "x.npy", npyBytes("<f2", false, []int{3}, []uint16{0x3c00, 0x4000, 0xc200})) // 1, 2, -3
	py := writeFile(t, dir, "y.npy", npyBytes("<f2", false, []int{3}, []uint16{0x4400, 0x3800, 0x3c00})) // 4, 0.5, 1
	pd := filepath.Join(dir, "d.npy")
	out = mustSucceed(t, "dot", "--a", px, "--b", py, "--out", pd)
	if !strings.Contains(out, "value: 2\n") {
		t.Errorf("dot: 1*4 + 2*0.5 - 3*1 = 2:\n%s", out)
	}
	if d, err := npy.ReadFile(pd); err != nil || fmt.Sprint(d.Data) != "[16384]" { // 2.0 is 0x4000
		t.Errorf("dot wrote %v, %v; want float16 2", d, err)
	}
	// A float16 A with a float32 B is refused: one type for both.
	pf := writeFile(t, dir, "f.npy", npyBytes("<f4", false, []int{k, n}, make([]float32, k*n)))
	if _, stderr, code := goamp(t, nil, "matmul", "--a", pa, "--b", pf); code != 2 || !strings.Contains(stderr, "float16") {
		t.Errorf("float16 with float32: exit %d, %q", code, stderr)
	}
}
