package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/gpubench"
)

// benchDot runs `goamp bench --device cuda --op dot`: the GPU's dot
// products against a device-to-device copy of the same length. As in
// benchGPU, every flag is checked before the GPU is looked for.
func benchDot(ctx context.Context, cfg *benchConfig, ordinal int, stdout, stderr io.Writer) error {
	names, err := gpubench.ParseDotKernels(cfg.libs)
	if err != nil {
		return usagef("--libs %q: %v", cfg.libs, err)
	}
	if cfg.reps < 0 {
		return usagef("--reps %d: want at least 1 (0: the default, %d)", cfg.reps, gpubench.DefaultDotReps)
	}
	dev, path, err := openGPU(cfg, ordinal)
	if err != nil {
		return err
	}
	ks, err := gpubench.DotKernels(dev, names)
	if err != nil {
		return err
	}
	reps := cfg.reps
	if reps == 0 {
		reps = gpubench.DefaultDotReps
	}
	cases := gpubench.DotCases(cfg.sizeList, cfg.typeList)

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	date := time.Now().UTC()
	fmt.Fprintf(w, "goamp bench: x.y on the GPU %s against a device-to-device copy of n elements; GB/s = 2n elements / median time\n", path)
	fmt.Fprintf(w, "gpu:      %s\n", dev.Properties)
	fmt.Fprintf(w, "driver:   %s\n", driverVersion())
	for i, k := range ks {
		label := "goamp:"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "%-9s %-8s %s\n", label, k.Name, k.Description)
	}
	fmt.Fprintf(w, "anchor:   %-8s cuMemcpyDtoDAsync of x into a third buffer: reads n elements and writes n, as x.y reads 2n\n", gpubench.DotCopy)
	fmt.Fprintf(w, "method:   fresh random vectors a case, uniform in [-1, 1); a checked warm-up of each, then %d rounds in\n", reps)
	fmt.Fprintf(w, "          which the copy and the kernels take turns; kernel: CUDA events on the default stream around the\n")
	fmt.Fprintf(w, "          launch (the copy: around the copy), x and y already on the GPU, a %d MiB buffer written first\n", gpubench.DefaultFlushBytes>>20)
	fmt.Fprintf(w, "          so that L2 holds neither, then a %v spin kernel so that the host's launch is not counted;\n", gpubench.DefaultSpin)
	fmt.Fprintf(w, "          e2e: host clock from the upload of x and y (pageable memory) to the result on the host (the\n")
	fmt.Fprintf(w, "          copy: to the copy's end); medians; every kernel's every result checked against a float64 sum\n")
	fmt.Fprintf(w, "          (float32: onepass within float64's tolerance and one rounding, warp and tiled float32's)\n")
	fmt.Fprintf(w, "date:     %s\n\n", date.Format("2006-01-02 15:04 UTC"))
	tab := newDotTable(cases)
	tab.header(w)
	w.Flush()

	bar := newProgressBar(stderr)
	defer bar.close()
	opt := gpubench.DotOptions{Reps: reps, Progress: func(done, total int, c gpubench.DotCase) {
		bar.updateLabel(done, total, fmt.Sprintf("%s n=%s", c.Type, gpubench.FormatDotSize(c.N)))
	}}
	results, err := gpubench.RunDot(dev, cases, ks, opt, func(r gpubench.DotResult) {
		bar.print(func() {
			tab.rows(w, r)
			w.Flush()
		})
	})
	bar.close()
	if err != nil {
		return err
	}
	if cfg.plot != "" {
		libs := append([]string{gpubench.DotCopy}, names...)
		axes := lineAxes{
			title: fmt.Sprintf("x.y and a copy of x, kernel time, L2 flushed, on %s, %s", dev.Properties.Name, date.Format("2006-01-02")),
			x:     "n (elements of x and of y)",
			y:     "GB/s (2n elements / median time)",
			tick:  gpubench.FormatDotSize,
		}
		if err := writeLinePlot(ctx, cfg.plot, axes, libs, dotPlotResults(results), false); err != nil {
			return fmt.Errorf("--plot %s: %v", cfg.plot, err)
		}
		fmt.Fprintf(w, "\nwrote %s (kernel GB/s)\n", cfg.plot)
	}
	return nil
}

// dotPlotResults turns the dot products' results into the rows a line
// plot draws: GB/s in the GFLOPS field, against n.
func dotPlotResults(results []gpubench.DotResult) []cpubench.Result {
	var pr []cpubench.Result
	for _, r := range results {
		c := cpubench.Result{Case: cpubench.Case{Type: r.Case.Type, N: r.Case.N}}
		for _, l := range r.Libs {
			c.Libs = append(c.Libs, cpubench.LibResult{Library: l.Name, GFLOPS: l.KernelGBPS})
		}
		pr = append(pr, c)
	}
	return pr
}

// dotTable prints one row for the copy and one a kernel a case: kernel
// and end-to-end medians, bandwidths, and the copy's time over each.
type dotTable struct{ sizeWidth int }

func newDotTable(cases []gpubench.DotCase) dotTable {
	t := dotTable{sizeWidth: 5}
	for _, c := range cases {
		t.sizeWidth = max(t.sizeWidth, len(gpubench.FormatDotSize(c.N)))
	}
	return t
}

func (t dotTable) header(w io.Writer) {
	fmt.Fprintf(w, "%-8s %*s %-8s %10s %11s %8s %10s %9s %8s", "type", t.sizeWidth, "n", "kernel",
		"kernel_us", "kernel_GB/s", "of_copy", "e2e_ms", "e2e_GB/s", "e2e/copy")
	fmt.Fprintf(w, "   (of_copy: the copy's time over the kernel's, the fraction of its bandwidth; < 1: slower)\n")
}

func (t dotTable) rows(w io.Writer, r gpubench.DotResult) {
	cp, _ := r.Lib(gpubench.DotCopy)
	ratio := func(anchor, x time.Duration) string {
		return strconv.FormatFloat(anchor.Seconds()/x.Seconds(), 'f', 3, 64)
	}
	for _, l := range r.Libs {
		fmt.Fprintf(w, "%-8s %*s %-8s %10s %11.1f %8s %10s %9.1f %8s\n", r.Case.Type, t.sizeWidth, gpubench.FormatDotSize(r.Case.N), l.Name,
			strconv.FormatFloat(l.KernelMedian.Seconds()*1e6, 'f', 2, 64), l.KernelGBPS, ratio(cp.KernelMedian, l.KernelMedian),
			strconv.FormatFloat(l.EndToEndMedian.Seconds()*1e3, 'f', 3, 64), l.EndToEndGBPS, ratio(cp.EndToEndMedian, l.EndToEndMedian))
	}
}

// writeBarPlot draws each library's rate as a bar, a group of bars a case:
// products of several shapes lie on no axis of n. A library left out of a
// case has no bar there. The file appears whole or not at all.
func writeBarPlot(ctx context.Context, path, title, yLabel string, libs []string, results []cpubench.Result, byType, byTrans bool) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "case: M x N x K (n: n x n x n)"
	p.Y.Label.Text = yLabel
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil // the categories need no lines between them
	p.Add(grid)

	labels := make([]string, len(results))
	for i, r := range results {
		labels[i] = r.Case.Size()
		if byType {
			labels[i] = string(r.Case.Type) + " " + labels[i]
		}
		if byTrans {
			labels[i] += " " + r.Case.Trans.String()
		}
	}
	// About 5 inches of plot share the groups, four fifths of each group
	// bars, the rest the gap to the next.
	width := vg.Length(min(24, max(1, 0.8*360/float64(max(1, len(results)*len(libs))))))
	top := 0.0
	for i, lib := range libs {
		vals := make(plotter.Values, len(results))
		for j, r := range results {
			if g, ok := r.GFLOPS(lib); ok && !math.IsInf(g, 0) && !math.IsNaN(g) {
				vals[j] = g
				top = max(top, g)
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(len(libs)-1)/2) * width
		p.Add(bars)
		legend.Add(lib, bars)
	}
	p.NominalX(labels...)
	if len(labels) > 3 {
		// Slanted, so that long shapes do not run into one another.
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	// Room above the tallest bar, and half a group beside the outer ones,
	// so that no bar touches the frame.
	p.Y.Min, p.Y.Max = 0, max(top*1.08, 1)
	p.X.Min, p.X.Max = -0.5, float64(len(results))-0.5
	return drawPlot(ctx, path, p, legend)
}
