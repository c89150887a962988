package linalg

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/goamp/goamp/amp"
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
	if err := amp.CUDAUnavailable(); err != nil {
		b.Skipf("SKIP: no CUDA accelerator: %v", err)
	}
	acc, err := amp.Find("cuda")
	if err != nil {
		b.Fatal(err)
	}
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
	a, bm, c := slices.Clone(x), slices.Clone(x), make([]float32, n*n)
	ext := amp.Extent2(n, n)
	av, _ := amp.NewArrayView(ext, a)
	bv, _ := amp.NewArrayView(ext, bm)
	cv, _ := amp.NewArrayView(ext, c)
	defer av.Release()
	defer bv.Release()
	defer cv.Release()
	v := acc.NewView()
	opt := &Options{View: v, Kernel: "reg128"}
	type variant struct {
		name                string
		rows, cols, streams int
		interleave          bool // see overlapOrder; the name has an i
		first               int  // overlapFirstChunks; the name ends in fN
	}
	variants := []variant{{"off", 1 << 30, 1, 1, false, 1}, {"r1024c2s4", 1024, 2, 4, false, 1},
		{"r1024c2s4f2", 1024, 2, 4, false, 2}, {"r1024c2s4f4", 1024, 2, 4, false, 4}, {"r1024c2s4f8", 1024, 2, 4, false, 8},
		{"r1024c4s4i", 1024, 4, 4, true, 1}, {"r1024c4s4if4", 1024, 4, 4, true, 4}, {"r512c2s4f4", 512, 2, 4, false, 4}}
	if only := os.Getenv("GOAMP_OVERLAP_ONLY"); only != "" { // one variant, for a profiler's timeline
		variants = slices.DeleteFunc(variants, func(v variant) bool { return v.name != only })
	}
	oldRows, oldCols, oldStreams, oldInterleave, oldFirst := overlapPanelRows, overlapColBlocks, overlapStreams, overlapInterleave, overlapFirstChunks
	defer func() {
		overlapPanelRows, overlapColBlocks, overlapStreams, overlapInterleave, overlapFirstChunks = oldRows, oldCols, oldStreams, oldInterleave, oldFirst
	}()
	times := make([][]time.Duration, len(variants))
	for rep := range reps + 1 {
		for i, vr := range variants {
			overlapPanelRows, overlapColBlocks, overlapStreams, overlapInterleave, overlapFirstChunks = vr.rows, vr.cols, vr.streams, vr.interleave, vr.first
			av.Refresh()
			bv.Refresh()
			cv.DiscardData()
			if err := v.Wait(); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := MatMul(1, av, bv, 0, cv, opt); err != nil {
				b.Fatal(err)
			}
			if err := cv.Synchronize(); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
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
