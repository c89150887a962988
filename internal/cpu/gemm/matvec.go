package gemm

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/goamp/goamp/internal/cpu/dot"
)

// matVecMaxRowBytes bounds the rows of C that matVec takes: 8 float32
// columns, 4 float64. Past it the blocked path, whose micro-kernels use
// each element of A for NR columns at once, is faster (on 2 cores of the
// development machine, 4096 x N x 4096: float32 N = 8 63 GFLOP/s here
// against 56, 12 73 against 83; float64 N = 4 25 against 21, 6 28 against
// 31).
const matVecMaxRowBytes = 32

// matVecMinA is the fewest elements of A for which matVec pays: on a small
// A, short dot products and the copy of op(B)'s columns cost more than the
// blocked path's packing (a batch of 8x8x8 float32 products ran at 1.5
// GFLOP/s here against 3.6 blocked).
const matVecMinA = 1 << 14

// matVec handles products of a few columns of C (matVecMaxRowBytes) with A's rows
// contiguous: element (i, j) of C is alpha times the dot product of A's row
// i with op(B)'s column j, plus beta times its old value. Packing A, as the
// blocked path does, would read and write all of A to use each element a
// few times; here A streams through once, the bandwidth such a product is
// bound by, each row from L1 for its n dot products. op(B)'s columns are
// used where they lie when contiguous (B transposed, or one column with
// ldb = 1) and copied into one buffer otherwise (k x n elements). It
// reports false, having done nothing, for the products it does not take: A
// transposed, more columns, or int32 (which has no vector dot product).
func matVec[T Element](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) bool {
	if n*int(unsafe.Sizeof(alpha)) > matVecMaxRowBytes || transA || m*k < matVecMinA {
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
	// op(B)'s column j: cols[j*stride : j*stride+k].
	cols, stride := b, ldb
	if !transB && !(n == 1 && ldb == 1) {
		// Into a workspace's buffer, not a fresh slice: a loop of such
		// calls would otherwise leave n*k elements of garbage a call.
		ws := getWorkspace()
		defer putWorkspace(ws)
		cols, stride = buffersOf[T](ws).b.get(n*k), k
		for p := range k {
			for j := range n {
				cols[j*k+p] = b[p*ldb+j]
			}
		}
	} else if !transB {
		stride = k // the one column, contiguous
	}
	parts := min(runtime.GOMAXPROCS(0), max(1, 2*m*n*k/minFlopsPerThread), m)
	if parts <= 1 {
		matVecRows(dotT, 0, m, n, k, alpha, a, lda, cols, stride, beta, c, ldc)
		return true
	}
	matVecParallel(parts, dotT, m, n, k, alpha, a, lda, cols, stride, beta, c, ldc)
	return true
}

// matVecParallel is matVecRows over all m rows, cut into parts bands that
// run on goroutines of their own, the caller's the first. Its closures
// capture its arguments, which therefore go to the heap: in a function of
// their own, only the calls that take several threads pay for that.
func matVecParallel[T Element](parts int, dotT func(x, y []T) T, m, n, k int, alpha T, a []T, lda int, cols []T, stride int, beta T, c []T, ldc int) {
	var wg sync.WaitGroup
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		go func() {
			defer wg.Done()
			matVecRows(dotT, p*m/parts, (p+1)*m/parts, n, k, alpha, a, lda, cols, stride, beta, c, ldc)
		}()
	}
	matVecRows(dotT, 0, m/parts, n, k, alpha, a, lda, cols, stride, beta, c, ldc)
	wg.Wait()
}

// matVecRows sets rows lo..hi of C (n columns) to alpha*A*op(B) + beta*C,
// not reading C when beta is 0, each element one dot product (dotT) of a
// row of A and a column of op(B) at cols[j*stride:]. A function of its own
// rather than a closure, so that a call on one thread allocates nothing.
func matVecRows[T Element](dotT func(x, y []T) T, lo, hi, n, k int, alpha T, a []T, lda int, cols []T, stride int, beta T, c []T, ldc int) {
	for i := lo; i < hi; i++ {
		row := a[i*lda : i*lda+k]
		for j := range n {
			s := alpha * dotT(row, cols[j*stride:j*stride+k])
			if beta != 0 {
				s += beta * c[i*ldc+j]
			}
			c[i*ldc+j] = s
		}
	}
}
