package reference

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
)

// BenchmarkCheckMatMul times the check of an n x n x n product, as
// sub-benchmarks type/n=N/new (NewMatMulChecker: the references, from A and
// B) and type/n=N/check (Check: one result); CheckMatMul costs the two
// together. The data are random, C too, so the check fails, at the same cost
// as it passes. The sizes default to 1024 and 8192 (three 8192^2 float32
// matrices are 768 MiB, float64 twice that); GOAMP_CHECK_SIZES ("4096,8192")
// chooses others.
func BenchmarkCheckMatMul(b *testing.B) {
	sizes := []int{1024, 8192}
	if s := os.Getenv("GOAMP_CHECK_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("GOAMP_CHECK_SIZES: bad size %q", f)
			}
			sizes = append(sizes, n)
		}
	}
	b.Run("float32", func(b *testing.B) { benchCheck[float32](b, sizes) })
	b.Run("float64", func(b *testing.B) { benchCheck[float64](b, sizes) })
	b.Run("int32", func(b *testing.B) { benchCheck[int32](b, sizes) })
}

func benchCheck[T amp.Element](b *testing.B, sizes []int) {
	for _, n := range sizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, uint64(n)))
			x, y, c := RandomSlice[T](r, n*n), RandomSlice[T](r, n*n), RandomSlice[T](r, n*n)
			var ch *MatMulChecker[T]
			b.Run("new", func(b *testing.B) {
				for b.Loop() {
					ch = NewMatMulChecker(false, false, n, n, n, 1, x, y, 0, nil, r)
				}
			})
			b.Run("check", func(b *testing.B) {
				if ch == nil {
					ch = NewMatMulChecker(false, false, n, n, n, 1, x, y, 0, nil, r)
				}
				for b.Loop() {
					ch.Check(c)
				}
			})
		})
	}
}
