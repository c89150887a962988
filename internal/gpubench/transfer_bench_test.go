package gpubench

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/linalg"
)

// BenchmarkEndToEnd times a whole product as a user of each path waits
// for it (operands uploaded from host memory, the multiply, C downloaded),
// interleaved run by run in one process, at n = 2048 and 4096:
//
//   - cublas-pageable: cuBLAS with copies from Go slices (the driver
//     stages them through its pageable path), the anchor of issue 12;
//   - goamp-views-new: linalg.MatMul on fresh amp views each run, then
//     C.Synchronize: every run pays to page-lock the slices (the unlocking
//     is left out, as it happens when the collector finds the views);
//   - goamp-views-reused: the same views each run (A and B changed on the
//     host and Refreshed, so they upload again): the locks are kept;
//   - goamp-views-reused-again: the same once more, right after it rather
//     than after goamp-views-new (whose views' locks were just released),
//     to show what the order of the paths costs;
//
// and, for the target, pinned-copy (the three copies from page-locked
// buffers, one after another) and reg128-kernel (its kernel time). Every
// goamp result is checked against the reference. Metrics are medians in
// milliseconds and the ratios the issue names.
//
//	go test -run '^$' -bench EndToEnd -benchtime 1x ./internal/gpubench/
func BenchmarkEndToEnd(b *testing.B) {
	dev, err := gpu.Open(0)
	if err != nil {
		b.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	for _, n := range []int{2048, 4096} {
		b.Run(fmt.Sprintf("float32/n=%d", n), func(b *testing.B) { endToEnd[float32](b, dev, n) })
	}
}

func endToEnd[T float32 | float64](b *testing.B, dev *gpu.Device, n int) {
	const reps = 7
	ctx := dev.Context
	typ := cpubench.Float32
	if unsafe.Sizeof(T(0)) == 8 {
		typ = cpubench.Float64
	}
	c := cpubench.Case{Type: typ, N: n}
	p := cpubench.NewProblem(c, 1)
	a, bm, host := operands[T](p)
	bytes := n * n * int(unsafe.Sizeof(T(0)))
	gpuAcc, err := amp.Find("cuda:0")
	if err != nil {
		b.Fatal(err)
	}
	view := gpuAcc.DefaultView()
	cb, err := Libraries(dev, []string{CuBLAS})
	if err != nil {
		b.Skipf("SKIP: %v", err)
	}
	cublas := cb[0]
	var bufs [3]cuda.DevicePtr
	for i := range bufs {
		if bufs[i], err = ctx.Alloc(bytes); err != nil {
			b.Fatal(err)
		}
		defer ctx.Free(bufs[i])
	}
	var pins [3]*cuda.HostBuffer
	for i := range pins {
		if pins[i], err = ctx.AllocHost(bytes); err != nil {
			b.Fatal(err)
		}
		defer pins[i].Free()
	}
	check := func(name string) {
		if err := p.Check(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	// The fresh views get slices of their own: the reused views keep
	// a, bm and host locked, and a slice that is locked already copies
	// at the locked speed.
	a2, b2, c2 := slices.Clone(a), slices.Clone(bm), make([]T, len(host))
	ext := amp.Extent2(n, n)
	av, _ := amp.NewArrayView(ext, a)
	bv, _ := amp.NewArrayView(ext, bm)
	cv, _ := amp.NewArrayView(ext, host)
	defer av.Release()
	defer bv.Release()
	defer cv.Release()
	opts := &linalg.Options{View: view, Kernel: "reg128"}
	var kernel time.Duration
	kopts := &linalg.Options{View: view, Kernel: "reg128", KernelTime: &kernel}

	var fresh []*amp.ArrayView[T] // goamp-views-new's, released untimed
	reused := func() error {
		av.Refresh() // the host changed A and B: upload again
		bv.Refresh()
		cv.DiscardData()
		if err := linalg.MatMul(1, av, bv, 0, cv, opts); err != nil {
			return err
		}
		return cv.Synchronize()
	}
	paths := []struct {
		name string
		run  func() error
	}{
		{"pinned-copy", func() error {
			if err := ctx.CopyHtoD(bufs[0], pins[0].Ptr(), bytes); err != nil {
				return err
			}
			if err := ctx.CopyHtoD(bufs[1], pins[1].Ptr(), bytes); err != nil {
				return err
			}
			return ctx.CopyDtoH(pins[2].Ptr(), bufs[2], bytes)
		}},
		{"cublas-pageable", func() error {
			// From slices no view has locked (a2, b2, c2: the fresh
			// views of the next path release theirs each run).
			if err := cuda.CopySliceHtoD(ctx, bufs[0], a2); err != nil {
				return err
			}
			if err := cuda.CopySliceHtoD(ctx, bufs[1], b2); err != nil {
				return err
			}
			if _, err := cublas.Multiply(typ, n, n, n, bufs[0], n, bufs[1], n, bufs[2], n); err != nil {
				return err
			}
			return cuda.CopySliceDtoH(ctx, c2, bufs[2])
		}},
		{"goamp-views-new", func() error {
			av, _ := amp.NewArrayView(ext, a2)
			bv, _ := amp.NewArrayView(ext, b2)
			cv, _ := amp.NewArrayView(ext, c2)
			cv.DiscardData()
			if err := linalg.MatMul(1, av, bv, 0, cv, opts); err != nil {
				return err
			}
			if err := cv.Synchronize(); err != nil {
				return err
			}
			// A user's views go out of scope, and their device copies
			// and locks go with the collector's cleanups, later. Release
			// them after the clock stops (release below), so that the
			// next run starts from the same state.
			fresh = []*amp.ArrayView[T]{av, bv, cv}
			return nil
		}},
		{"goamp-views-reused", reused},
		{"goamp-views-reused-again", reused},
	}
	times := make([][]time.Duration, len(paths)+1)
	for r := range reps + 1 {
		for i, path := range paths {
			// Poison C on the host (NaN), untimed, so that an element a
			// path does not write fails the check.
			p.Poison()
			for i := range c2 {
				c2[i] = host[i]
			}
			runtime.GC()
			if err := ctx.Synchronize(); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := path.run(); err != nil {
				b.Fatalf("%s: %v", path.name, err)
			}
			took := time.Since(start)
			if path.name == "goamp-views-new" || path.name == "cublas-pageable" {
				copy(host, c2)
			}
			if err := releaseAll(fresh...); err != nil {
				b.Fatal(err)
			}
			fresh = nil
			if i > 0 {
				check(path.name)
			}
			if r > 0 {
				times[i] = append(times[i], took)
			}
		}
		// The kernel alone, on operands already on the device.
		if err := dev.Spin(time.Millisecond); err != nil {
			b.Fatal(err)
		}
		if err := linalg.MatMul(1, av, bv, 0, cv, kopts); err != nil {
			b.Fatal(err)
		}
		if r > 0 {
			times[len(paths)] = append(times[len(paths)], kernel)
		}
	}
	ms := func(i int) float64 { return float64(median(times[i]).Nanoseconds()) / 1e6 }
	for i, path := range paths {
		b.ReportMetric(ms(i), path.name+"-ms")
	}
	b.ReportMetric(ms(len(paths)), "reg128-kernel-ms")
	floor := max(ms(0), ms(len(paths)))
	b.ReportMetric(ms(3)/floor, "reused/max(pinned,kernel)")
	b.ReportMetric(ms(4)/floor, "reused-again/max(pinned,kernel)")
	b.ReportMetric(ms(2)/floor, "new/max(pinned,kernel)")
	b.ReportMetric(ms(1)/ms(3), "cublas-pageable/reused")
	b.ReportMetric(ms(1)/ms(2), "cublas-pageable/new")
}

func releaseAll[T amp.Element](vs ...*amp.ArrayView[T]) error {
	for _, v := range vs {
		if err := v.Release(); err != nil {
			return err
		}
	}
	return nil
}
