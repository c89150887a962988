package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/openblas"
)

// BenchmarkBatchVsOpenBLAS times a batch of small products through
// Float32Batch / Float64Batch against a loop of OpenBLAS calls over the same
// batch (cblas_sgemm / cblas_dgemm, OpenBLAS's own threads), the two taking
// turns, 15 rounds after a warm-up, with a pause after every turn for the
// threads to stop spinning, and reports medians: each one's GFLOP/s
// and goamp's rate over OpenBLAS's. Every goamp result is compared with
// OpenBLAS's. It skips without libopenblas.so.0.
//
//	go test -run '^$' -bench BatchVsOpenBLAS -benchtime 1x ./internal/cpu/gemm/
func BenchmarkBatchVsOpenBLAS(b *testing.B) {
	blas := openBLASOrSkip(b)
	for _, c := range []struct{ n, count int }{{8, 4096}, {16, 1024}, {32, 512}, {64, 256}, {128, 64}} {
		b.Run(fmt.Sprintf("float32/n=%d/batch=%d", c.n, c.count), func(b *testing.B) {
			batchVsBLAS(b, c.n, c.count, Float32Batch, blas.Sgemm)
		})
		b.Run(fmt.Sprintf("float64/n=%d/batch=%d", c.n, c.count), func(b *testing.B) {
			batchVsBLAS(b, c.n, c.count, Float64Batch, blas.Dgemm)
		})
	}
}

func batchVsBLAS[T float](b *testing.B, n, count int,
	ours func(bool, bool, int, int, int, T, [][]T, int, [][]T, int, T, [][]T, int),
	theirs func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int)) {
	r := rand.New(rand.NewPCG(uint64(n), uint64(count)))
	mats := func() [][]T {
		out := make([][]T, count)
		for i := range out {
			out[i] = make([]T, n*n)
			for j := range out[i] {
				out[i][j] = T(2*r.Float64() - 1)
			}
		}
		return out
	}
	as, bs, cs, ref := mats(), mats(), mats(), mats()
	runOurs := func() { ours(false, false, n, n, n, 1, as, n, bs, n, 0, cs, n) }
	runTheirs := func() {
		for i := range ref {
			theirs(false, false, n, n, n, 1, as[i], n, bs[i], n, 0, ref[i], n)
		}
	}
	const rounds = 15
	var tOurs, tTheirs []time.Duration
	for round := range rounds + 1 {
		for _, side := range []bool{round%2 == 0, round%2 != 0} { // alternate who goes first
			start := time.Now()
			if side {
				runOurs()
			} else {
				runTheirs()
			}
			took := time.Since(start)
			// Both libraries' threads spin after a call, waiting for
			// the next: OpenBLAS's for about 0.13s (see
			// cpubench.Settle), goamp's workers for 5-50ms (idleSpin).
			// Whichever is timed next would share the cores with them
			// (on 16 cores a 256x256 OpenBLAS product took 6ms instead
			// of 0.2ms), so both get the pause: a batch of goamp's run
			// back to back, as the turns fall at each round's start,
			// had OpenBLAS's loop run among goamp's spinning workers.
			time.Sleep(200 * time.Millisecond)
			if round == 0 {
				continue
			}
			if side {
				tOurs = append(tOurs, took)
			} else {
				tTheirs = append(tTheirs, took)
			}
		}
	}
	worst := 0.0
	for i := range cs {
		for j := range cs[i] {
			worst = max(worst, math.Abs(float64(cs[i][j])-float64(ref[i][j])))
		}
	}
	if tol := 4 * float64(n) * eps[T](); worst > tol {
		b.Fatalf("goamp and OpenBLAS differ by %g (tolerance %g)", worst, tol)
	}
	median := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2]
	}
	flops := 2 * float64(n) * float64(n) * float64(n) * float64(count)
	mo, mt := median(tOurs), median(tTheirs)
	b.ReportMetric(flops/mo.Seconds()/1e9, "goamp-GFLOP/s")
	b.ReportMetric(flops/mt.Seconds()/1e9, "openblas-GFLOP/s")
	b.ReportMetric(mt.Seconds()/mo.Seconds(), "goamp/openblas")
}

// eps is T's unit roundoff.
func eps[T float]() float64 {
	if _, ok := any(T(0)).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// openBLASOrSkip opens libopenblas.so.0 for a benchmark that measures
// against it, or skips the benchmark.
func openBLASOrSkip(b *testing.B) *openblas.BLAS {
	blas, err := openblas.Open()
	if err != nil {
		b.Skipf("SKIP: %v", err)
	}
	return blas
}

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
	blas := openBLASOrSkip(b)
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
