package linalg

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
)

// BenchmarkOverlap times one float32 product end to end on the first GPU,
// as a user of reused views waits for it (A and B changed on the host and
// Refreshed, so both go up again; C downloaded by Synchronize), with the
// overlapped path's panel height (r), column blocks (c) and kernel streams
// (s) varied and with it off, interleaved run by run. Metrics: medians in
// milliseconds.
//
//	go test -run '^$' -bench Overlap -benchtime 1x ./linalg/
func BenchmarkOverlap(b *testing.B) {
	acc := firstCUDA(b)
	for _, n := range []int{2048, 4096} {
		b.Run(fmt.Sprintf("float32/n=%d", n), func(b *testing.B) { overlapVariants(b, acc, n) })
	}
}

func overlapVariants(b *testing.B, acc *amp.Accelerator, n int) {
	const reps = 7
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*n)
	for i := range x {
		x[i] = float32(r.Float64())
	}
	a, bm, c, av, bv, cv, release := squareOperands(n, x)
	defer release()
	v := acc.NewView()
	opt := &Options{View: v, Kernel: "reg128"}
	type variant struct {
		name                string
		rows, cols, streams int
		order               uploadOrder // see overlapOrder; the name has i (interleaved) or p (panels first)
		first               int         // overlapFirstChunks; the name ends in fN
		phase, phaseSlice   int         // overlapPhaseOne, overlapPhaseSlice; the name starts with phased (and has kN)
		phaseFirst          int         // overlapPhaseFirst (0: the default); the name ends in fN
	}
	variants := []variant{{"off", 1 << 30, 1, 1, blocksFirst, 1, 0, 0, 0}, {"r1024c2s4f4", 1024, 2, 4, blocksFirst, 4, 0, 0, 0},
		{"phased50r512s2k512", 512, 2, 2, blocksFirst, 1, 50, 512, 0}, {"phased50r512s2k512f128", 512, 2, 2, blocksFirst, 1, 50, 512, 128},
		{"phased50r512s2k256f128", 512, 2, 2, blocksFirst, 1, 50, 256, 128}, {"phased55r512s2k512", 512, 2, 2, blocksFirst, 1, 55, 512, 0},
		{"phased55r512s2k512f128", 512, 2, 2, blocksFirst, 1, 55, 512, 128}, {"phased50r1024s2", 1024, 2, 2, blocksFirst, 1, 50, 0, 0}}
	if only := os.Getenv("GOAMP_OVERLAP_ONLY"); only != "" { // one variant, for a profiler's timeline
		variants = slices.DeleteFunc(variants, func(v variant) bool { return v.name != only })
	}
	defer saveOverlapKnobs()()
	times := make([][]time.Duration, len(variants))
	for rep := range reps + 1 {
		for i, vr := range variants {
			overlapPanelRows, overlapColBlocks, overlapStreams, overlapOrderKind, overlapFirstChunks = vr.rows, vr.cols, vr.streams, vr.order, vr.first
			overlapPhaseOne, overlapPhaseSlice, overlapPhaseRows, overlapPhaseStreams = vr.phase, vr.phaseSlice, vr.rows, vr.streams
			overlapPhaseFirst = overlapMinChunk
			if vr.phaseFirst > 0 {
				overlapPhaseFirst = vr.phaseFirst
			}
			if vr.phase > 0 {
				// The pieces' panels still bound which products overlap.
				overlapPanelRows = 1024
			}
			took := timeProduct(b, av, bv, cv, opt)
			// Spot-check a corner of C against a float64 dot product.
			var want float64
			for k := range n {
				want += float64(a[k]) * float64(bm[k*n])
			}
			if got := float64(c[0]); got < want*(1-1e-4) || got > want*(1+1e-4) {
				b.Fatalf("%s: C[0][0] = %v, want %v", vr.name, got, want)
			}
			if rep > 0 {
				times[i] = append(times[i], took)
			}
		}
	}
	for i, vr := range variants {
		ts := slices.Clone(times[i])
		slices.Sort(ts)
		b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds())/1e6, vr.name+"-ms")
	}
}

// BenchmarkOverlapTimeline prints when each copy and kernel of one
// overlapped float32 product at n = 4096 ends (CUDA events recorded on each
// stream right after the operation, through overlapTrace), in milliseconds
// from the first mark, after a warm-up: three runs of the pieces (their
// default cut and upload order) and three of the phased schedule (its
// defaults). "ready" marks are when a piece's operands are up and
// its stream free; its kernel may start later, when the GPU has room.
//
//	go test -run '^$' -bench OverlapTimeline -benchtime 1x -v ./linalg/
func BenchmarkOverlapTimeline(b *testing.B) {
	acc := firstCUDA(b)
	d, err := gpu.Open(acc.Ordinal())
	if err != nil {
		b.Fatal(err)
	}
	const n = 4096
	x := make([]float32, n*n)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	_, _, _, av, bv, cv, release := squareOperands(n, x)
	defer release()
	v := acc.NewView()
	type mark struct {
		label string
		ev    *cuda.Event
	}
	var marks []mark
	defer saveOverlapKnobs()()
	defer func() { overlapTrace = nil }()
	phase := overlapPhaseOne
	for run := range 7 {
		// Runs 1-3 the pieces, 4-6 the phased schedule (the default).
		overlapPhaseOne = 0
		if run > 3 {
			overlapPhaseOne = phase
		}
		marks = marks[:0]
		overlapTrace = func(st *cuda.Stream, label string) {
			ev, err := d.Context.NewEvent()
			if err == nil {
				err = ev.Record(st)
			}
			if err != nil {
				b.Fatal(err)
			}
			marks = append(marks, mark{label, ev})
		}
		took := timeProduct(b, av, bv, cv, &Options{View: v, Kernel: "reg128"})
		if len(marks) == 0 {
			b.Fatal("the product was not overlapped")
		}
		if run > 0 {
			b.Logf("run %d: %.3f ms on the host clock", run, float64(took.Nanoseconds())/1e6)
			for _, m := range marks {
				ms, err := cuda.ElapsedMillis(marks[0].ev, m.ev)
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("  %7.3f  %s", ms, m.label)
			}
		}
		for _, m := range marks {
			m.ev.Destroy()
		}
	}
}

// saveOverlapKnobs returns a function that puts overlappedGemm's knobs back
// as they are now.
func saveOverlapKnobs() func() {
	rows, cols, streams, order, first := overlapPanelRows, overlapColBlocks, overlapStreams, overlapOrderKind, overlapFirstChunks
	phase, phaseFirst, slice, phaseRows, phaseStreams := overlapPhaseOne, overlapPhaseFirst, overlapPhaseSlice, overlapPhaseRows, overlapPhaseStreams
	return func() {
		overlapPanelRows, overlapColBlocks, overlapStreams, overlapOrderKind, overlapFirstChunks = rows, cols, streams, order, first
		overlapPhaseOne, overlapPhaseFirst, overlapPhaseSlice, overlapPhaseRows, overlapPhaseStreams = phase, phaseFirst, slice, phaseRows, phaseStreams
	}
}

// squareOperands returns A and B, copies of x (n x n), a zeroed C, views of
// the three, and a function that releases the views.
func squareOperands(n int, x []float32) (a, b, c []float32, av, bv, cv *amp.ArrayView[float32], release func()) {
	a, b, c = slices.Clone(x), slices.Clone(x), make([]float32, n*n)
	ext := amp.Extent2(n, n)
	av, _ = amp.NewArrayView(ext, a)
	bv, _ = amp.NewArrayView(ext, b)
	cv, _ = amp.NewArrayView(ext, c)
	return a, b, c, av, bv, cv, func() {
		av.Release()
		bv.Release()
		cv.Release()
	}
}

// firstCUDA returns the first CUDA accelerator, or skips tb where there is
// none.
func firstCUDA(tb testing.TB) *amp.Accelerator {
	tb.Helper()
	if err := amp.CUDAUnavailable(); err != nil {
		tb.Skipf("SKIP: no CUDA accelerator: %v", err)
	}
	acc, err := amp.Find("cuda")
	if err != nil {
		tb.Fatal(err)
	}
	return acc
}

// timeProduct times C = A*B on opt's view as a user of reused views waits
// for it: A and B changed on the host (Refreshed, so both go up again), C
// downloaded by Synchronize; the view's earlier work is waited for first.
func timeProduct(b *testing.B, av, bv, cv *amp.ArrayView[float32], opt *Options) time.Duration {
	b.Helper()
	av.Refresh()
	bv.Refresh()
	cv.DiscardData()
	if err := opt.View.Wait(); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := MatMul(1, av, bv, 0, cv, opt); err != nil {
		b.Fatal(err)
	}
	if err := cv.Synchronize(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}
