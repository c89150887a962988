package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/gpubench"
)

// gpuResult makes a GPU result with the kernel and end-to-end medians
// given (in microseconds), a library a pair, rates as gpubench gives them.
func gpuResult(c cpubench.Case, batch int, times map[string][2]int, order ...string) gpubench.Result {
	r := gpubench.Result{Case: c, Batch: batch}
	for _, name := range order {
		k, e := time.Duration(times[name][0])*time.Microsecond, time.Duration(times[name][1])*time.Microsecond
		r.Libs = append(r.Libs, gpubench.LibResult{Library: name, KernelMedian: k, EndToEndMedian: e,
			KernelGFLOPS: r.Flops() / k.Seconds() / 1e9, EndToEndGFLOPS: r.Flops() / e.Seconds() / 1e9})
	}
	return r
}

// TestGPUTableSquare: square cases without a batch print the table they
// always have, column for column.
func TestGPUTableSquare(t *testing.T) {
	c := cpubench.Case{Type: cpubench.Float32, N: 1024}
	tab := newGPUTable(true, []cpubench.Case{c}, 0)
	var buf bytes.Buffer
	tab.header(&buf)
	tab.rows(&buf, gpuResult(c, 0, map[string][2]int{"reg128": {64, 2000}, "cublas": {60, 2100}}, "reg128", "cublas"))
	// The header and row formats as they were before shapes and batches.
	want := fmt.Sprintf("%-8s %5s %-5s %-14s %10s %14s %13s %10s %11s %10s", "type", "n", "trans", "library",
		"kernel_ms", "kernel_GFLOP/s", "kernel/cublas", "e2e_ms", "e2e_GFLOP/s", "e2e/cublas") + "   (ratios: rate over cuBLAS's; < 1: slower)\n"
	want += fmt.Sprintf("%-8s %5d %-5s %-14s %10s %14.1f %13s %10s %11.1f %10s\n", "float32", 1024, "NN", "reg128",
		"0.064", c.Flops()/64e-6/1e9, "0.938", "2.000", c.Flops()/2e-3/1e9, "1.050")
	want += fmt.Sprintf("%-8s %5d %-5s %-14s %10s %14.1f %13s %10s %11.1f %10s\n", "float32", 1024, "NN", "cublas",
		"0.060", c.Flops()/60e-6/1e9, "1.000", "2.100", c.Flops()/2.1e-3/1e9, "1.000")
	if got := buf.String(); got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
}

// TestGPUTableShapesAndBatches: a shape column as wide as the longest
// shape, a batch column, rates of the whole batch, and the libraries left
// out of a case under its rows, grouped by reason.
func TestGPUTableShapesAndBatches(t *testing.T) {
	skinny := cpubench.Case{Type: cpubench.Float32, M: 64, N: 8192, K: 8192}
	square := cpubench.Case{Type: cpubench.Float32, N: 512, Trans: cpubench.Trans{A: true}}
	tab := newGPUTable(true, []cpubench.Case{square, skinny}, 4)
	var buf bytes.Buffer
	tab.header(&buf)
	r := gpuResult(skinny, 4, map[string][2]int{"reg128": {1000, 9000}, "cublas": {500, 8000}}, "reg128", "cublas")
	r.LeftOut = []gpubench.LeftOut{{Library: "naive", Why: "no batched path"}, {Library: "tiled16", Why: "no batched path"}, {Library: "x", Why: "takes at most 3 rows of C"}}
	tab.rows(&buf, r)
	tab.rows(&buf, gpuResult(square, 4, map[string][2]int{"reg128": {100, 900}}, "reg128"))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6:\n%s", len(lines), buf.String())
	}
	if f := strings.Fields(lines[0]); strings.Join(f[:5], " ") != "type shape trans batch library" {
		t.Errorf("header %q", lines[0])
	}
	row := strings.Fields(lines[1])
	gflops := fmt.Sprintf("%.1f", 4*skinny.Flops()/1e-3/1e9)
	if want := []string{"float32", "64x8192x8192", "NN", "4", "reg128", "1.000", gflops, "0.500", "9.000"}; !slices.Equal(row[:9], want) {
		t.Errorf("row %q, want it to start %q", row, want)
	}
	// The columns line up: every row is as long up to the library as the
	// header.
	if i, j := strings.Index(lines[0], "library"), strings.Index(lines[1], "reg128"); i != j {
		t.Errorf("library column at %d in the header, %d in a row:\n%s", i, j, buf.String())
	}
	if want := "left out: naive, tiled16 (no batched path)"; strings.TrimSpace(lines[3]) != want {
		t.Errorf("note %q, want %q", lines[3], want)
	}
	if want := "left out: x (takes at most 3 rows of C)"; strings.TrimSpace(lines[4]) != want {
		t.Errorf("note %q, want %q", lines[4], want)
	}
	if f := strings.Fields(lines[5]); strings.Join(f[:5], " ") != "float32 512 TN 4 reg128" || f[7] != "-" {
		t.Errorf("square row %q: want no ratio in a case without cuBLAS", lines[5])
	}
}

// TestGPUComparisons: shapes are named in the comparisons after the table,
// and batches are not compared with the CPU.
func TestGPUComparisons(t *testing.T) {
	c := cpubench.Case{Type: cpubench.Float32, M: 64, N: 300, K: 70}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	r := gpuResult(c, 0, map[string][2]int{"naive": {200, 900}, "tiled16": {100, 800}, "go-tiled16": {110, 800}}, "naive", "tiled16", "go-tiled16")
	if err := gpuComparisons(w, &benchConfig{}, []gpubench.Result{r}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	out := buf.String()
	for _, want := range []string{"float32  64x300x70 tiled16 2.00x", "float32  64x300x70 go-tiled16/tiled16 1.100", "(n=1024 was not measured"} {
		if !strings.Contains(out, want) {
			t.Errorf("comparisons lack %q:\n%s", want, out)
		}
	}
	buf.Reset()
	sq := cpubench.Case{Type: cpubench.Float32, N: 1024}
	if err := gpuComparisons(w, &benchConfig{}, []gpubench.Result{gpuResult(sq, 2, map[string][2]int{"reg128": {100, 900}}, "reg128")}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if out := buf.String(); !strings.Contains(out, "not compared: each GPU run is a batch of 2 products") {
		t.Errorf("a batch compared with the CPU:\n%s", out)
	}
}

// TestDotTable: a row for the copy and each kernel, GB/s of 2n elements,
// and the copy's time over each.
func TestDotTable(t *testing.T) {
	c := gpubench.DotCase{Type: cpubench.Float32, N: 1 << 24}
	tab := newDotTable([]gpubench.DotCase{c, {Type: cpubench.Float32, N: 1000}})
	r := gpubench.DotResult{Case: c}
	for _, l := range []struct {
		name      string
		us, e2eMs int
	}{{"copy", 40, 10}, {"onepass", 50, 10}, {"warp", 80, 20}} {
		k, e := time.Duration(l.us)*time.Microsecond, time.Duration(l.e2eMs)*time.Millisecond
		r.Libs = append(r.Libs, gpubench.DotLibResult{Name: l.name, KernelMedian: k, EndToEndMedian: e,
			KernelGBPS: c.Bytes() / k.Seconds() / 1e9, EndToEndGBPS: c.Bytes() / e.Seconds() / 1e9})
	}
	var buf bytes.Buffer
	tab.header(&buf)
	tab.rows(&buf, r)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	if f := strings.Fields(lines[0]); strings.Join(f[:9], " ") != "type n kernel kernel_us kernel_GB/s of_copy e2e_ms e2e_GB/s e2e/copy" {
		t.Errorf("header %q", lines[0])
	}
	for i, want := range [][]string{
		{"float32", "2^24", "copy", "40.00", "3355.4", "1.000", "10.000", "13.4", "1.000"},
		{"float32", "2^24", "onepass", "50.00", "2684.4", "0.800", "10.000", "13.4", "1.000"},
		{"float32", "2^24", "warp", "80.00", "1677.7", "0.500", "20.000", "6.7", "0.500"},
	} {
		if got := strings.Fields(lines[i+1]); !slices.Equal(got, want) {
			t.Errorf("row %d: %q, want %q", i, got, want)
		}
	}
}

// TestBenchGPUPlots draws the bar chart of shapes and the dot products'
// lines from synthetic results.
func TestBenchGPUPlots(t *testing.T) {
	dir := t.TempDir()
	var results []cpubench.Result
	for _, s := range []cpubench.Shape{{M: 64, N: 8192, K: 8192}, {M: 8192, N: 8192, K: 64}, cpubench.Square(1024), {M: 8192, N: 64, K: 8192}} {
		r := cpubench.Result{Case: s.Case(cpubench.Float32, cpubench.Trans{})}
		r.Libs = []cpubench.LibResult{{Library: "reg128", GFLOPS: 30000}, {Library: "cublas", GFLOPS: 40000}}
		if !s.Square() {
			r.Libs = append(r.Libs, cpubench.LibResult{Library: "naive", GFLOPS: 5000})
		}
		results = append(results, r)
	}
	bars := filepath.Join(dir, "shapes.svg")
	if err := writeBarPlot(t.Context(), bars, "skinny", "GFLOP/s", []string{"naive", "reg128", "cublas"}, results, false, false); err != nil {
		t.Fatal(err)
	}
	dots := filepath.Join(dir, "dot.svg")
	var dr []gpubench.DotResult
	for _, n := range []int{1 << 20, 1 << 24} {
		c := gpubench.DotCase{Type: cpubench.Float64, N: n}
		dr = append(dr, gpubench.DotResult{Case: c, Libs: []gpubench.DotLibResult{{Name: "copy", KernelGBPS: 3000}, {Name: "onepass", KernelGBPS: 2900}}})
	}
	axes := lineAxes{title: "dots", x: "n", y: "GB/s", tick: gpubench.FormatDotSize}
	if err := writeLinePlot(t.Context(), dots, axes, []string{"copy", "onepass"}, dotPlotResults(dr), false); err != nil {
		t.Fatal(err)
	}
	for path, wants := range map[string][]string{
		bars: {"64x8192x8192", "8192x64x8192", "1024", "cublas", "naive"},
		dots: {"2^20", "2^24", "onepass float64", "copy float64"},
	} {
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data, []byte("<svg")) {
			t.Errorf("%s: %v, %.100q", path, err, data)
			continue
		}
		for _, want := range wants {
			if !bytes.Contains(data, []byte(want)) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
	}
}

// TestBenchShapesConfig: --shapes joins the square --sizes, without the
// ones --sizes has already, or stands alone; --batch is held to the
// memory of the largest square case.
func TestBenchShapesConfig(t *testing.T) {
	cfg := benchConfig{sizes: "1024,64", types: "float32", trans: "NN", shapes: "1024x1024x1024,64x8192x8192", hasShapes: true}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	want := []cpubench.Shape{cpubench.Square(64), cpubench.Square(1024), {M: 64, N: 8192, K: 8192}}
	if !slices.Equal(cfg.shapeList, want) || !slices.Equal(cfg.sizeList, []int{64, 1024}) {
		t.Errorf("shapes %v, sizes %v; want %v", cfg.shapeList, cfg.sizeList, want)
	}
	cfg = benchConfig{sizes: "1024", types: "float32", trans: "NN", shapes: "8192x8192x64", hasShapes: true, noSizes: true, batch: 4}
	if err := cfg.validate(); err != nil || !slices.Equal(cfg.shapeList, []cpubench.Shape{{M: 8192, N: 8192, K: 64}}) || cfg.sizeList != nil {
		t.Errorf("--shapes alone: %v, %v, %v", cfg.shapeList, cfg.sizeList, err)
	}
	cfg.batch = 5 // 5 x 8192^2 elements of C
	if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "8192x8192x64") {
		t.Errorf("a batch past the memory limit: %v", err)
	}
}

// TestProgressBarShapes: the bar names a shape as the table does.
func TestProgressBarShapes(t *testing.T) {
	var buf bytes.Buffer
	p := &progressBar{w: &buf, stop: make(chan struct{})}
	p.update(0, 2, cpubench.Case{Type: cpubench.Float32, M: 64, N: 8192, K: 8192})
	if got := buf.String(); !strings.Contains(got, "] 0/2 float32 64x8192x8192 NN 0s") {
		t.Errorf("bar %q", got)
	}
	buf.Reset()
	p.updateLabel(1, 2, "float64 n=2^20")
	if got := buf.String(); !strings.Contains(got, "] 1/2 float64 n=2^20 0s") {
		t.Errorf("bar %q", got)
	}
}

// TestBenchCUDAShapesBatchesDots runs the new GPU benchmarks where there
// is a GPU: shapes beside sizes with a transposed case's note, a batch on
// reg128 and cuBLAS, and the dot products against the copy, with plots.
func TestBenchCUDAShapesBatchesDots(t *testing.T) {
	if why := amp.CUDAUnavailable(); why != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", why)
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := goamp(t, nil, append([]string{"bench", "--device", "cuda", "--reps", "1", "--budget", "0s"}, args...)...)
		if code == 2 && strings.Contains(errOut, "cublas") {
			t.Skipf("SKIP: a GPU but no cuBLAS: %s", errOut)
		}
		if code != 0 {
			t.Fatalf("%q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
		return out
	}
	count := func(out, prefix string) int {
		n := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, prefix) {
				n++
			}
		}
		return n
	}
	out := run("--sizes", "100", "--shapes", "64x300x520,33x1x70", "--trans", "NN,TN", "--libs", "naive,reg128,cublas", "--plot", filepath.Join(dir, "shapes.svg"))
	// NN: 3 cases of 3 libraries; TN: 3 cases of 2, naive left out of each.
	if got := count(out, "float32"); got != 15 {
		t.Errorf("%d rows, want 15:\n%s", got, out)
	}
	if got := strings.Count(out, "left out: naive (takes no transposes)"); got != 3 {
		t.Errorf("%d notes, want 3:\n%s", got, out)
	}
	for _, want := range []string{"shape", "64x300x520", "33x1x70", "wrote "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out = run("--sizes", "100", "--shapes", "64x128x2048", "--batch", "3", "--types", "float32,float64")
	if got := count(out, "float"); got != 8 || !strings.Contains(out, "batch:") || !strings.Contains(out, "not compared") {
		t.Errorf("batches: %d rows, want 8 (reg128 and cublas, 2 cases, 2 types):\n%s", got, out)
	}
	out = run("--op", "dot", "--sizes", "1000,2^20", "--types", "float32,float64", "--plot", filepath.Join(dir, "dot.svg"))
	if got := count(out, "float"); got != 16 {
		t.Errorf("dots: %d rows, want 16 (the copy and 3 kernels, 2 lengths, 2 types):\n%s", got, out)
	}
	for _, want := range []string{"anchor:", "2^20", "onepass", "of_copy", "wrote "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
