package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/openblas"
)

// benchRows returns the table rows of goamp bench's output, each split into
// fields, checking that the header names the columns wanted.
func benchRows(t *testing.T, out string, columns []string) [][]string {
	t.Helper()
	var rows [][]string
	header := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "type":
			header = true
			want := append([]string{"type", "n", "trans"}, columns...)
			if len(f) < len(want) || strings.Join(f[:len(want)], " ") != strings.Join(want, " ") {
				t.Errorf("table header %q, want columns %q", line, want)
			}
		case header && len(f) > 0 && (f[0] == "float32" || f[0] == "float64"):
			rows = append(rows, f)
		}
	}
	if !header {
		t.Errorf("no table in:\n%s", out)
	}
	return rows
}

// checkRows checks that rows hold the cases wanted, in order, each with a
// positive figure in every column after the case.
func checkRows(t *testing.T, rows [][]string, cases []string, columns int) {
	t.Helper()
	if len(rows) != len(cases) {
		t.Fatalf("%d rows, want %d (%q)", len(rows), len(cases), cases)
	}
	for i, r := range rows {
		if got := strings.Join(r[:3], " "); got != cases[i] {
			t.Errorf("row %d is %q, want %q", i, got, cases[i])
		}
		if len(r) != 3+columns {
			t.Errorf("row %q: %d figures, want %d", r, len(r)-3, columns)
			continue
		}
		for _, s := range r[3:] {
			if v, err := strconv.ParseFloat(s, 64); err != nil || !(v > 0) {
				t.Errorf("row %q: figure %q", r, s)
			}
		}
	}
}

func TestBench(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "gemm.svg")
	out, errOut, code := goamp(t, nil, "bench", "--sizes", "96,64", "--budget", "10ms", "--plot", svg)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"machine:", "threads:", "goamp:    kernels", "gonum:", "openblas:", "date:", "wrote " + svg} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	libs, missing := cpubench.Libraries()
	columns := []string{"goamp", "gonum", "goamp/gonum"}
	if missing == nil {
		columns = []string{"goamp", "gonum", "openblas", "goamp/openblas", "goamp/gonum"}
	} else {
		t.Logf("SKIP openblas column: %v", missing)
	}
	checkRows(t, benchRows(t, out, columns),
		[]string{"float32 64 NN", "float32 96 NN", "float64 64 NN", "float64 96 NN"}, 2*len(libs)-1)
	data, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(data, []byte("<?xml")) || !bytes.Contains(data, []byte("<svg")) || !bytes.Contains(data, []byte("goamp float32")) {
		t.Errorf("%s is not an SVG plot with goamp's line: %v, %.100q", svg, err, data)
	}
	// The fonts travel with the plot: a viewer without them would set the
	// text in a substitute of other widths and clip the legend.
	if !bytes.Contains(data, []byte("@font-face")) || !bytes.Contains(data, []byte("base64,")) {
		t.Errorf("%s does not embed its fonts", svg)
	}
}

// TestBenchFlags: the other plot formats, a subset of libraries, several
// transposes, one thread.
func TestBenchFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ file, magic string }{{"g.png", "\x89PNG\r\n\x1a\n"}, {"g.PDF", "%PDF-"}} {
		path := filepath.Join(dir, c.file)
		out := mustSucceed(t, "bench", "--sizes", "48", "--types", "FLOAT64", "--trans", "tn,NN", "--libs", "gonum,goamp",
			"--threads", "1", "--budget", "5ms", "--plot", path)
		if !strings.Contains(out, "threads:  1 ") {
			t.Errorf("--threads 1 not in the header:\n%s", out)
		}
		checkRows(t, benchRows(t, out, []string{"goamp", "gonum", "goamp/gonum"}), []string{"float64 48 NN", "float64 48 TN"}, 3)
		data, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(data, []byte(c.magic)) || len(data) < 1000 {
			t.Errorf("%s: %v, %d bytes starting %.20q", path, err, len(data), data)
		}
	}
	out := mustSucceed(t, "bench", "--sizes", "32", "--types", "float32", "--libs", "gonum", "--budget", "0s")
	checkRows(t, benchRows(t, out, []string{"gonum"}), []string{"float32 32 NN"}, 1)
	if strings.Contains(out, "goamp/") {
		t.Errorf("ratios without goamp:\n%s", out)
	}
}

// TestBenchBadFlags: every bad flag is exit status 2, one line on stderr
// naming the problem, before any work, and no plot file.
func TestBenchBadFlags(t *testing.T) {
	dir := t.TempDir()
	plotDir := filepath.Join(dir, "plots.svg")
	if err := os.Mkdir(plotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "64,zero"}, "zero"},
		{[]string{"--sizes", "0"}, "sizes"},
		{[]string{"--sizes", "1000000"}, "sizes"},
		{[]string{"--sizes", ""}, "sizes"},
		{[]string{"--types", "int32"}, "int32"},
		{[]string{"--trans", "NX"}, "NX"},
		{[]string{"--libs", "mkl"}, "mkl"},
		{[]string{"--libs", ","}, "libs"},
		{[]string{"--threads", "-1"}, "threads"},
		{[]string{"--budget", "-1s"}, "budget"},
		{[]string{"--budget", "soon"}, "budget"},
		{[]string{"--plot", filepath.Join(dir, "p.txt")}, ".svg"},
		{[]string{"--plot", filepath.Join(dir, "p")}, ".svg"},
		{[]string{"--plot", plotDir}, "directory"},
		{[]string{"--plot", filepath.Join(dir, "nodir", "p.svg")}, "cannot create a temporary file in " + filepath.Join(dir, "nodir")},
		{[]string{"--plot", "/proc/p.svg"}, "cannot create a temporary file in /proc"},
		{[]string{"--precision", "tf32"}, "--precision tf32 applies to --device cuda"},
		{[]string{"--precision", "fp8", "--device", "cuda"}, `precision "fp8"`},
		{[]string{"--precision", "bf16", "--device", "cuda", "--batch", "4"}, "no batched path in a reduced precision"},
		{[]string{"--precision", "fp16", "--device", "cuda", "--op", "dot"}, "--precision applies to --op matmul"},
		{[]string{"--device", "tpu"}, "tpu"},
		{[]string{"--device", "cuda:x"}, "cuda:x"},
		{[]string{"--device", "cuda:-1"}, "cuda:-1"},
		{[]string{"--device", "cuda:"}, "cuda:"},
		{[]string{"--reps", "3"}, "--device cuda"},
		// The GPU benchmark's flags are checked before the GPU is looked
		// for: these read the same with a GPU or without.
		{[]string{"--device", "cuda", "--libs", "mkl"}, "mkl"},
		{[]string{"--device", "cuda", "--libs", "openblas"}, "openblas"},
		{[]string{"--device", "CUDA:0", "--trans", "TN", "--libs", "naive,tiled"}, "reg128, dmma and cublas"},
		{[]string{"--device", "cuda", "--reps", "-1"}, "reps"},
		{[]string{"--device", "cuda", "--types", "int32"}, "int32"},
		{[]string{"--device", "cuda", "--plot", filepath.Join(dir, "p.txt")}, ".svg"},
		// Shapes, batches and dot products: the GPU's alone, each checked
		// before the GPU is looked for.
		{[]string{"--batch", "2"}, "--batch applies to --device cuda"},
		{[]string{"--shapes", "1x64x64", "--plot", "x.svg"}, "--plot draws GFLOP/s against n"},
		{[]string{"--shapes", "64x0x64"}, "64x0x64"},
		{[]string{"--batch", "2"}, "--batch applies to --device cuda"},
		{[]string{"--op", "dot"}, "--op dot applies to --device cuda"},
		{[]string{"--op", "fft"}, "fft"},
		{[]string{"--device", "cuda", "--op", "fft"}, "fft"},
		{[]string{"--device", "cuda", "--shapes", "64x64"}, "64x64"},
		{[]string{"--device", "cuda", "--shapes", "64x0x64"}, "64x0x64"},
		{[]string{"--device", "cuda", "--shapes", "64x8192x8192,axbxc"}, "axbxc"},
		{[]string{"--device", "cuda", "--shapes", "1048576x1048576x1"}, "elements"},
		{[]string{"--device", "cuda", "--shapes", ""}, "no shapes"},
		{[]string{"--device", "cuda", "--shapes", "8x8x8", "--sizes", "0"}, "sizes"},
		{[]string{"--device", "cuda", "--batch", "0"}, "--batch 0"},
		{[]string{"--device", "cuda", "--batch", "-3"}, "--batch -3"},
		{[]string{"--device", "cuda", "--batch", "65536"}, "65535"},
		{[]string{"--device", "cuda", "--batch", "x"}, "batch"},
		{[]string{"--device", "cuda", "--batch", "4", "--libs", "naive,tiled"}, "reg128, dmma and cublas"},
		{[]string{"--device", "cuda", "--batch", "64", "--sizes", "4096"}, "16384^2"},
		{[]string{"--device", "cuda", "--batch", "2", "--shapes", "16384x16384x1"}, "16384^2"},
		{[]string{"--device", "cuda", "--op", "dot", "--shapes", "8x8x8"}, "--shapes applies to --op matmul"},
		{[]string{"--device", "cuda", "--op", "dot", "--batch", "2"}, "--batch applies to --op matmul"},
		{[]string{"--device", "cuda", "--op", "dot", "--trans", "TN"}, "--trans applies to --op matmul"},
		{[]string{"--device", "cuda", "--op", "dot", "--sizes", "2^31"}, "2^31"},
		{[]string{"--device", "cuda", "--op", "dot", "--sizes", "0"}, "sizes"},
		{[]string{"--device", "cuda", "--op", "DOT", "--libs", "cublas"}, "cublas"},
		{[]string{"--device", "cuda", "--op", "dot", "--reps", "-1"}, "reps"},
		{[]string{"--device", "cuda", "--op", "dot", "--types", "int32"}, "int32"},
		{[]string{"--device", "cuda", "--op", "dot", "--plot", filepath.Join(dir, "p.txt")}, ".svg"},
		{[]string{"--frobnicate"}, "frobnicate"},
		{[]string{"extra"}, "extra"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"bench", "--sizes", "8"}, c.args...)
			hasPlot := false
			for _, a := range c.args {
				hasPlot = hasPlot || a == "--plot"
			}
			plotFile := filepath.Join(dir, "bench.svg")
			if !hasPlot {
				args = append(args, "--plot", plotFile)
			}
			stdout, stderr, code := goamp(t, nil, args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "goamp bench: ") {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			if !strings.Contains(strings.ToLower(stderr), strings.ToLower(c.want)) {
				t.Errorf("message %q does not name the problem (%q)", stderr, c.want)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != "plots.svg" {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
}

// TestBenchPlotPaths: --plot follows symbolic links as --out does (a
// dangling link creates its target, and the link stays), takes a 255-byte
// name, and refuses a FIFO, directly or through a link, and a loop of
// links, before any work, leaving them as they were.
func TestBenchPlotPaths(t *testing.T) {
	dir := t.TempDir()
	bench := []string{"bench", "--sizes", "8", "--types", "float32", "--libs", "goamp", "--budget", "0s", "--plot"}
	isSVG := func(path string) {
		t.Helper()
		if data, err := os.ReadFile(path); err != nil || !bytes.Contains(data, []byte("<svg")) {
			t.Errorf("%s is not an SVG plot: %v, %.100q", path, err, data)
		}
	}
	dangling := filepath.Join(dir, "dangling.svg")
	if err := os.Symlink("target.svg", dangling); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	mustSucceed(t, append(bench, dangling)...)
	if got, err := os.Readlink(dangling); err != nil || got != "target.svg" {
		t.Errorf("the link now reads %q, %v", got, err)
	}
	isSVG(filepath.Join(dir, "target.svg"))

	long := filepath.Join(dir, strings.Repeat("p", 251)+".svg")
	mustSucceed(t, append(bench, long)...)
	isSVG(long)

	fifoPath := fifo(t, filepath.Join(dir, "fifo.svg"))
	for _, c := range []struct{ link, target, want string }{
		{"", "", "is a FIFO (named pipe), not a regular file"},
		{"tofifo.svg", "fifo.svg", "resolves to " + fifoPath + ", a FIFO (named pipe), not a regular file"},
		{"loop.svg", "loop.svg", "more than 40 symbolic links in a row"},
	} {
		path := fifoPath
		if c.link != "" {
			path = filepath.Join(dir, c.link)
			if err := os.Symlink(c.target, path); err != nil {
				t.Fatal(err)
			}
		}
		stdout, stderr, code := goamp(t, nil, append(bench, path)...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--plot "+path+": "+c.want) {
			t.Errorf("--plot %s: exit %d, stderr %q; want 2 and one line saying %q\nstdout: %s", path, code, stderr, c.want, stdout)
		}
	}
	if fi, err := os.Lstat(fifoPath); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
	leftovers(t, dir)
}

// TestBenchWithoutOpenBLAS plays a machine without OpenBLAS: by default the
// benchmark runs without it and says why; asked for, it is a usage error.
func TestBenchWithoutOpenBLAS(t *testing.T) {
	saved := benchLibraries
	defer func() { benchLibraries = saved }()
	benchLibraries = func() ([]cpubench.Library, error) {
		libs, _ := cpubench.Libraries()
		return libs[:2], fmt.Errorf("%w: libopenblas.so.0: cannot open shared object file", openblas.ErrUnavailable)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "--sizes", "16", "--budget", "1ms", "--libs", "goamp,openblas"}, &stdout, &stderr); code != 2 ||
		strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "libopenblas.so.0") || stdout.Len() != 0 {
		t.Errorf("--libs openblas without OpenBLAS: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"bench", "--sizes", "16", "--types", "float32", "--budget", "1ms"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("without OpenBLAS: exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "openblas: openblas: not available: libopenblas.so.0") {
		t.Errorf("the header does not say OpenBLAS is missing:\n%s", out)
	}
	checkRows(t, benchRows(t, out, []string{"goamp", "gonum", "goamp/gonum"}), []string{"float32 16 NN"}, 3)
}

// TestBenchCUDAWithoutGPU: on a machine without a GPU (CI), --device cuda
// and cuda:N are exit status 2 with one line on stderr giving the reason
// amp gives, and nothing on stdout.
func TestBenchCUDAWithoutGPU(t *testing.T) {
	why := amp.CUDAUnavailable()
	if why == nil {
		t.Skip("SKIP: this machine has a CUDA GPU; TestBenchCUDA runs the GPU benchmark instead")
	}
	for _, device := range []string{"cuda", "cuda:1", "Cuda:0"} {
		stdout, stderr, code := goamp(t, nil, "bench", "--device", device, "--sizes", "64")
		if code != 2 || stdout != "" {
			t.Errorf("--device %s: exit %d, want 2\nstdout: %s\nstderr: %s", device, code, stdout, stderr)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "goamp bench: --device "+device+": no CUDA GPU") {
			t.Errorf("--device %s: stderr is not one line saying there is no GPU: %q", device, stderr)
		}
		if !strings.Contains(stderr, oneLine(why.Error())) {
			t.Errorf("--device %s: %q does not give the reason (%v)", device, stderr, why)
		}
	}
}

// TestBenchCUDA runs the GPU benchmark where there is a GPU: a row per
// library per case, each figure positive, and the two comparisons it prints
// after the table (tiled against naive, the GPU against the CPU).
func TestBenchCUDA(t *testing.T) {
	if why := amp.CUDAUnavailable(); why != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", why)
	}
	out, errOut, code := goamp(t, nil, "bench", "--device", "cuda", "--sizes", "100,1024", "--reps", "1", "--budget", "0s")
	if code == 2 && strings.Contains(errOut, "cublas") {
		t.Skipf("SKIP: a GPU but no cuBLAS: %s", errOut)
	}
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 9 || f[0] != "float32" {
			continue
		}
		rows++
		for _, s := range f[3:] {
			if v, err := strconv.ParseFloat(s, 64); err != nil || !(v > 0) {
				t.Errorf("row %q: figure %q", line, s)
			}
		}
	}
	if rows != 8 {
		t.Errorf("%d rows, want 8 (4 libraries, 2 sizes):\n%s", rows, out)
	}
	for _, want := range []string{"gpu:", "driver:", "cublas:", "CUBLAS_DEFAULT_MATH", "tiled against naive", "tiled32", "x the CPU"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestParseCUDADevice(t *testing.T) {
	for in, want := range map[string]int{"cuda": 0, "cuda:0": 0, "cuda:3": 3} {
		if got, ok := parseCUDADevice(in); !ok || got != want {
			t.Errorf("parseCUDADevice(%q) = %d, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"cuda:", "cuda:x", "cuda:-1", "cuda:01", "cuda:+1", "cpu", "cuda0"} {
		if _, ok := parseCUDADevice(bad); ok {
			t.Errorf("parseCUDADevice(%q) accepted", bad)
		}
	}
}

func TestIsVersion(t *testing.T) {
	for s, want := range map[string]bool{"580.65.06": true, "580.95": true, "x86_64": false, "Module": false, ".5": false, "580": false, "for": false} {
		if got := isVersion(s); got != want {
			t.Errorf("isVersion(%q) = %v", s, got)
		}
	}
}

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := &progressBar{w: &buf, stop: make(chan struct{})}
	p.update(1, 4, cpubench.Case{Type: cpubench.Float64, N: 2048, Trans: cpubench.Trans{A: true}})
	if got := buf.String(); !strings.HasPrefix(got, "\r[=======>      ") || !strings.Contains(got, "] 1/4 float64 n=2048 TN 0s\x1b[K") {
		t.Errorf("bar %q", got)
	}
	buf.Reset()
	p.print(func() { buf.WriteString("row\n") })
	if got := buf.String(); !strings.HasPrefix(got, "\r\x1b[Krow\n\r[") {
		t.Errorf("a row printed under the bar: %q", got)
	}
	buf.Reset()
	p.update(4, 4, cpubench.Case{})
	p.close()
	p.close()
	if got := buf.String(); !strings.Contains(got, "[==============================] 4/4\x1b[K") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("finished bar %q", got)
	}
	if newProgressBar(&buf) != nil {
		t.Error("a progress bar drawn into a buffer")
	}
	var none *progressBar // where stderr is not a terminal
	none.update(0, 1, cpubench.Case{})
	none.print(func() {})
	none.close()
}
