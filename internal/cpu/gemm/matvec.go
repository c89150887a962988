package gemm

import (
	"runtime"
	"sync"

	"github.com/goamp/goamp/internal/cpu/dot"
)

// matVec handles products with one column of C (n = 1) whose A rows and
// B column are contiguous: C's element i is alpha times the dot product of
// A's row i with B's column, plus beta times its old value. Packing A, as
// the blocked path does, would read and write all of A to use each element
// once; here A streams through once, the bandwidth such a product is bound
// by. It reports false, having done nothing, for the products it does not
// take: A transposed, B's column strided, or int32 (which has no vector dot
// product).
func matVec[T Element](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) bool {
	if n != 1 || transA || !(transB || ldb == 1) {
		return false
	}
	var dotT func(x, y []T) T
	switch f := any(&dotT).(type) {
	case *func(x, y []float32) float32:
		*f = dot.Float32
	case *func(x, y []float64) float64:
		*f = dot.Float64
	default:
		return false
	}
	x := b[:k] // B's column, contiguous either way
	rows := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s := alpha * dotT(a[i*lda:i*lda+k], x)
			if beta != 0 {
				s += beta * c[i*ldc]
			}
			c[i*ldc] = s
		}
	}
	parts := min(runtime.GOMAXPROCS(0), max(1, 2*m*k/minFlopsPerThread), m)
	if parts <= 1 {
		rows(0, m)
		return true
	}
	var wg sync.WaitGroup
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		go func() {
			defer wg.Done()
			rows(p*m/parts, (p+1)*m/parts)
		}()
	}
	rows(0, m/parts)
	wg.Wait()
	return true
}
