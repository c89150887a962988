package gonumblas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/goamp/goamp/internal/reference"
)

// BenchmarkDenseMul times mat.Dense.Mul, the way most gonum users multiply,
// at n = 512 with gonum's native BLAS and with ours, switching with
// blas64.Use and restoring the previous implementation afterwards. Each
// product is checked against the float64 reference before the timing.
//
//	go test -run '^$' -bench BenchmarkDenseMul ./gonumblas
func BenchmarkDenseMul(b *testing.B) {
	const n = 512
	r := rand.New(rand.NewPCG(1, n))
	ad, bd := reference.RandomSlice[float64](r, n*n), reference.RandomSlice[float64](r, n*n)
	want := reference.MatMul(n, n, n, 1, ad, bd, 0, nil)
	bound := reference.MatMulBound(n, n, n, 1, ad, bd, 0, nil)
	am, bm := mat.NewDense(n, n, ad), mat.NewDense(n, n, bd)
	for _, lib := range []struct {
		name string
		impl blas.Float64
	}{{"gonum", gonum.Implementation{}}, {"goamp", Implementation{}}} {
		b.Run(fmt.Sprintf("n=%d/%s", n, lib.name), func(b *testing.B) {
			prev := blas64.Implementation()
			blas64.Use(lib.impl)
			defer blas64.Use(prev)
			c := mat.NewDense(n, n, nil)
			c.Mul(am, bm)
			if e := reference.MaxErr(c.RawMatrix().Data, want, bound); e > reference.Tolerance[float64](n) {
				b.Fatalf("error %.3g", e)
			}
			for b.Loop() {
				c.Mul(am, bm)
			}
			reportGFLOPs(b, n)
		})
	}
}

// BenchmarkSgemm times Sgemm (C = A*B, n = 512) of gonum's native BLAS and
// ours: mat has no float32 matrices, so this calls them directly.
//
//	go test -run '^$' -bench BenchmarkSgemm ./gonumblas
func BenchmarkSgemm(b *testing.B) {
	const n = 512
	r := rand.New(rand.NewPCG(2, n))
	a, bb := reference.RandomSlice[float32](r, n*n), reference.RandomSlice[float32](r, n*n)
	af, bf := reference.ToFloat64(a), reference.ToFloat64(bb)
	want := reference.MatMul(n, n, n, 1, af, bf, 0, nil)
	bound := reference.MatMulBound(n, n, n, 1, af, bf, 0, nil)
	for _, lib := range []struct {
		name string
		impl blas.Float32
	}{{"gonum", gonum.Implementation{}}, {"goamp", Implementation{}}} {
		b.Run(fmt.Sprintf("n=%d/%s", n, lib.name), func(b *testing.B) {
			c := make([]float32, n*n)
			sgemm := func() { lib.impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n) }
			sgemm()
			if e := reference.MaxErr(c, want, bound); e > reference.Tolerance[float32](n) {
				b.Fatalf("error %.3g", e)
			}
			for b.Loop() {
				sgemm()
			}
			reportGFLOPs(b, n)
		})
	}
}

func reportGFLOPs(b *testing.B, n int) {
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
