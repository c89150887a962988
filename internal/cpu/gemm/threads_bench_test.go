package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/openblas"
)

// BenchmarkThreadsVsOpenBLAS times one n x n x n product (NN, -gemm.n,
// default 1024) through goamp and OpenBLAS on one thread and on
// GOMAXPROCS threads, and goamp on GOMAXPROCS threads with the team
// packing one shared copy of B where it would pack one a thread
// (privateBTotal): it tells how each scales from one thread to all, the
// figure a ratio of the two libraries on all threads hides. The variants
// take turns of 15 products, a pause of 150ms after each turn for every
// thread to stop spinning, 11 timed rounds after a warm-up; it reports
// each one's median rate. It skips without libopenblas.so.0.
//
//	go test -run '^$' -bench ThreadsVsOpenBLAS -benchtime 1x ./internal/cpu/gemm
func BenchmarkThreadsVsOpenBLAS(b *testing.B) {
	blas, err := openblas.Open()
	if err != nil {
		b.Skipf("SKIP: %v", err)
	}
	b.Run("float32", func(b *testing.B) { threadsVsBLAS(b, *sizeFlag, Float32, blas.Sgemm, blas.SetThreads) })
	b.Run("float64", func(b *testing.B) { threadsVsBLAS(b, *sizeFlag, Float64, blas.Dgemm, blas.SetThreads) })
}

func threadsVsBLAS[T float](b *testing.B, n int,
	ours, theirs func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int), setThreads func(int)) {
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	defer setThreads(procs)
	defer func(old int) { privateBTotal = old }(privateBTotal)
	private := privateBTotal
	r := rand.New(rand.NewPCG(uint64(n), 3))
	mat := func() []T {
		m := make([]T, n*n)
		for i := range m {
			m[i] = T(2*r.Float64() - 1)
		}
		return m
	}
	a, bm, c := mat(), mat(), mat()
	goamp := func(threads, privateB int) func() {
		return func() {
			runtime.GOMAXPROCS(threads)
			privateBTotal = privateB
			ours(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
		}
	}
	openBLAS := func(threads int) func() {
		return func() {
			runtime.GOMAXPROCS(procs)
			setThreads(threads)
			theirs(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
		}
	}
	variants := []struct {
		name string
		run  func()
	}{
		{fmt.Sprintf("goamp-%dthreads", procs), goamp(procs, private)},
		{fmt.Sprintf("goamp-%dthreads-sharedB", procs), goamp(procs, 0)},
		{"goamp-1thread", goamp(1, private)},
		{fmt.Sprintf("openblas-%dthreads", procs), openBLAS(procs)},
		{"openblas-1thread", openBLAS(1)},
	}
	times := make([][]time.Duration, len(variants))
	for round := range 12 {
		for i, v := range variants {
			v.run() // the first after a pause: threads wake, caches refill
			for range 15 {
				start := time.Now()
				v.run()
				if round > 0 {
					times[i] = append(times[i], time.Since(start))
				}
			}
			time.Sleep(150 * time.Millisecond)
		}
	}
	for i, v := range variants {
		slices.Sort(times[i])
		b.ReportMetric(2*float64(n)*float64(n)*float64(n)/times[i][len(times[i])/2].Seconds()/1e9, v.name+"-GFLOP/s")
	}
	b.ReportMetric(0, "ns/op")
}
