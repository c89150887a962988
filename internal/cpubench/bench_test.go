package cpubench

import (
	"os"
	"strconv"
	"testing"
)

// BenchmarkGEMM runs every case on every library, as sub-benchmarks named
// type/n=N/TRANS/library ("BenchmarkGEMM/float32/n=1024/NN/goamp"), and
// reports GFLOP/s beside ns/op. The operands are made once per case and
// shared by its libraries; each library's last product is checked, and a
// wrong one fails the benchmark.
//
// The testing package times each library on its own, so these figures are
// for benchstat and for profiling one library; `goamp bench` times the
// libraries interleaved, which is fairer on a noisy machine.
//
// The cases default to TestSizes, both types, NN; the environment
// variables GOAMP_BENCH_SIZES ("64,4096"), GOAMP_BENCH_TYPES ("float64")
// and GOAMP_BENCH_TRANS ("NN,TN") choose others, and -bench selects among
// them ("-bench GEMM/float32/n=1024/NN/").
func BenchmarkGEMM(b *testing.B) {
	sizes, types, trans := TestSizes, Types, []Trans{{}}
	if s := os.Getenv("GOAMP_BENCH_SIZES"); s != "" {
		var err error
		if sizes, err = ParseSizes(s); err != nil {
			b.Fatalf("GOAMP_BENCH_SIZES: %v", err)
		}
	}
	if s := os.Getenv("GOAMP_BENCH_TYPES"); s != "" {
		var err error
		if types, err = ParseTypes(s); err != nil {
			b.Fatalf("GOAMP_BENCH_TYPES: %v", err)
		}
	}
	if s := os.Getenv("GOAMP_BENCH_TRANS"); s != "" {
		var err error
		if trans, err = ParseTrans(s); err != nil {
			b.Fatalf("GOAMP_BENCH_TRANS: %v", err)
		}
	}
	libs, missing := Libraries()
	if missing != nil {
		b.Logf("SKIP openblas: %v", missing)
	}
	for _, typ := range types {
		b.Run(string(typ), func(b *testing.B) {
			for _, n := range sizes {
				b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
					for _, tr := range trans {
						b.Run(tr.String(), func(b *testing.B) {
							benchCase(b, Case{Type: typ, N: n, Trans: tr}, libs)
						})
					}
				})
			}
		})
	}
}

// benchCase runs one case's sub-benchmarks, one per library.
func benchCase(b *testing.B, c Case, libs []Library) {
	p := NewProblem(c, DefaultOptions.Seed)
	for _, lib := range libs {
		b.Run(lib.Name, func(b *testing.B) {
			p.Poison()
			Settle() // the previous library's threads may still spin
			for b.Loop() {
				p.Run(lib)
			}
			b.ReportMetric(c.Flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if err := p.Check(); err != nil {
				b.Fatalf("%s %s: %v", lib.Name, c, err)
			}
		})
	}
}
