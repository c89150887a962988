package gpu

import (
	"fmt"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// BenchmarkDotVsCopy times the dot products against a device-to-device
// copy of the same length, interleaved run by run in one process: a copy of
// n elements reads n and writes n, as a dot product of n reads 2n, so
// copy time over dot time is the fraction of the copy's bandwidth the dot
// product reaches (metric frac-of-copy, median of the runs). Each timed
// call starts with L2 flushed and waits behind a 1 ms spin kernel, so the
// events time the work from memory and not the host's launch. The inputs are random and every onepass result
// is checked against a float64 sum.
//
//	go test -run '^$' -bench DotVsCopy -benchtime 1x ./internal/gpu/
func BenchmarkDotVsCopy(b *testing.B) {
	d, err := Open(0)
	if err != nil {
		b.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	for _, lg := range []int{20, 22, 24, 26, 28} {
		b.Run(fmt.Sprintf("float32/n=2^%d", lg), func(b *testing.B) { dotVsCopy[float32](b, d, 1<<lg) })
		b.Run(fmt.Sprintf("float64/n=2^%d", lg), func(b *testing.B) { dotVsCopy[float64](b, d, 1<<lg) })
	}
}

func dotVsCopy[T float32 | float64](b *testing.B, d *Device, n int) {
	const reps = 51
	ctx := d.Context
	size := int(unsafe.Sizeof(T(0)))
	x, y := make([]T, n), make([]T, n)
	var want, mag float64
	for i := range x {
		// A cheap deterministic spread of values in [-1, 1).
		x[i] = T(float64((i*7919)%2003)/1001.5 - 1)
		y[i] = T(float64((i*104729)%1999)/999.5 - 1)
		p := float64(x[i]) * float64(y[i])
		want += p
		mag += max(p, -p)
	}
	var bufs [3]cuda.DevicePtr
	for i := range bufs {
		p, err := ctx.Alloc(n * size)
		if err != nil {
			b.Fatal(err)
		}
		defer ctx.Free(p)
		bufs[i] = p
	}
	if err := cuda.CopySliceHtoD(ctx, bufs[0], x); err != nil {
		b.Fatal(err)
	}
	if err := cuda.CopySliceHtoD(ctx, bufs[1], y); err != nil {
		b.Fatal(err)
	}
	dx, dy := uint64(bufs[0]), uint64(bufs[1])
	type lib struct {
		name string
		run  func() (time.Duration, error)
	}
	libs := []lib{
		{"copy", func() (time.Duration, error) {
			return d.Timed(func(s *cuda.Stream) error { return s.CopyDtoD(bufs[2], bufs[0], n*size) })
		}},
		{"onepass", func() (time.Duration, error) {
			got, t, err := DotOnePass[T](d, n, dx, dy)
			if err == nil && max(float64(got)-want, want-float64(got)) > 6e-8*max(want, -want)+2*float64(n)*1.2e-16*mag {
				err = fmt.Errorf("onepass: got %v, want %v", got, want)
			}
			return t, err
		}},
		{"warp", func() (time.Duration, error) {
			_, t, err := Dot[T](d, kernels.DotWarp, 256, n, dx, dy)
			return t, err
		}},
	}
	// Written before each timed run to push the last run's data out of L2
	// (50 MiB on the H100): otherwise a copy reads what the dot product
	// before it left there, and the other way round.
	const flushBytes = 256 << 20
	flush, err := ctx.Alloc(flushBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Free(flush)
	times := make([][]time.Duration, len(libs))
	for range b.N {
		for r := range reps + 2 {
			for i, l := range libs {
				if err := ctx.Memset(flush, byte(r), flushBytes); err != nil {
					b.Fatal(err)
				}
				if err := d.Spin(time.Millisecond); err != nil {
					b.Fatal(err)
				}
				t, err := l.run()
				if err != nil {
					b.Fatal(err)
				}
				if r >= 2 {
					times[i] = append(times[i], t)
				}
			}
		}
	}
	med := func(ts []time.Duration) time.Duration {
		ts = slices.Clone(ts)
		slices.Sort(ts)
		return ts[len(ts)/2]
	}
	copyT := med(times[0])
	b.ReportMetric(float64(copyT.Nanoseconds())/1e3, "copy-us")
	b.ReportMetric(2*float64(n*size)/copyT.Seconds()/1e9, "copy-GB/s")
	for i, l := range libs[1:] {
		t := med(times[i+1])
		b.ReportMetric(float64(t.Nanoseconds())/1e3, l.name+"-us")
		b.ReportMetric(copyT.Seconds()/t.Seconds(), l.name+"-frac-of-copy")
	}
}
