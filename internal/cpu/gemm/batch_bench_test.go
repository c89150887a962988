package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
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
	blas, err := openblas.Open()
	if err != nil {
		b.Skipf("SKIP: %v", err)
	}
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
