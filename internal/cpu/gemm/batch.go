package gemm

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// Float32Batch runs len(c) independent products of one shape, c[i] =
// alpha*op(a[i])*op(b[i]) + beta*c[i], each as Float32 describes, with the
// same row strides for every product. Products too small to be worth all
// the threads run side by side, each on one thread or a few (as many as
// Float32 would give it), so that a batch of small matrices keeps every
// core busy; larger ones run one after another on all of them. The c[i]
// must not overlap one another, nor any a[j] or b[j]. It panics, before
// any work, on slices shorter than their matrices and on lists of
// different lengths.
func Float32Batch(transA, transB bool, m, n, k int, alpha float32, a [][]float32, lda int, b [][]float32, ldb int, beta float32, c [][]float32, ldc int) {
	batch(engineF32, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Float64Batch is Float32Batch for float64 matrices.
func Float64Batch(transA, transB bool, m, n, k int, alpha float64, a [][]float64, lda int, b [][]float64, ldb int, beta float64, c [][]float64, ldc int) {
	batch(engineF64, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Int32Batch is Float32Batch for int32 matrices, wrapping as Int32 does.
func Int32Batch(transA, transB bool, m, n, k int, alpha int32, a [][]int32, lda int, b [][]int32, ldb int, beta int32, c [][]int32, ldc int) {
	batch(engineI32, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func batch[T Element](eng *engine[T], transA, transB bool, m, n, k int, alpha T, a [][]T, lda int, b [][]T, ldb int, beta T, c [][]T, ldc int) {
	if len(a) != len(c) || len(b) != len(c) {
		panic(fmt.Sprintf("gemm: a batch of %d A, %d B and %d C matrices", len(a), len(b), len(c)))
	}
	// Every matrix is checked here, on the caller's goroutine: a panic on
	// a goroutine of the batch could not be recovered by the caller.
	for i := range c {
		checkMatrix("A", transA, m, k, a[i], lda)
		checkMatrix("B", transB, k, n, b[i], ldb)
		checkMatrix("C", false, m, n, c[i], ldc)
	}
	// How many products run at once: as many as the threads each would
	// get leave room for. A product that fills the machine by itself runs
	// alone, with all of them. Products get no more threads than the batch
	// leaves them: a batch of as many products as threads runs one a
	// thread, without teams or barriers (64 products of 128x128 on 16
	// cores ran at 0.86x a loop of OpenBLAS calls two threads a product,
	// the way a call of its own would take them).
	kern := &eng.pick(m).kernel
	procs := runtime.GOMAXPROCS(0)
	each := min(threadsFor(procs, m, n, k, kern.MR, kern.NR), max(1, procs/max(1, len(c))))
	side := min(len(c), max(1, procs/each))
	if side <= 1 {
		for i := range c {
			gemm(eng, transA, transB, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc)
		}
		return
	}
	// The products are claimed from a counter, so that a thread the
	// machine slows down takes fewer of them (and one the pool cannot
	// give takes none); the caller is one of the side threads. A product worth one thread runs on the claiming
	// goroutine with packing buffers of its own, without the pool's
	// bookkeeping (locks, a team, barriers), which costs as much as the
	// product itself for the smallest matrices.
	// Tiny products are claimed a chunk at a time: two threads taking
	// 16x16 products one by one traded the counter's cache line for
	// every 8192 flops.
	chunk := max(1, min(minClaimFlops/max(1, 2*m*n*k), len(c)/(4*side)))
	var next atomic.Int64
	claim := func() {
		var ws *workspace
		var t *team // one a goroutine, for all its products (see problem.alone)
		if each == 1 {
			ws = getWorkspace()
			defer putWorkspace(ws)
			t = new(team)
		}
		for {
			first := int(next.Add(int64(chunk)) - int64(chunk))
			if first >= len(c) {
				return
			}
			for i := first; i < min(first+chunk, len(c)); i++ {
				if ws == nil {
					gemm(eng, transA, transB, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc)
					continue
				}
				p := problem[T]{eng: eng.pick(m), transA: transA, transB: transB, m: m, n: n, k: k,
					alpha: alpha, beta: beta, a: a[i], b: b[i], c: c[i], lda: lda, ldb: ldb, ldc: ldc}
				p.alone(buffersOf[T](ws), t)
			}
		}
	}
	runJob(side-1, claim)
}

// minClaimFlops is about the work a thread of a batch claims at once:
// 2^18 flops, a few microseconds, against a few tens of nanoseconds for a
// claim whose counter another core wrote last.
const minClaimFlops = 1 << 18

// alone computes p on the calling goroutine only, packing into own: t
// made a team of one that takes every band of rows and packs all of B
// itself. t is the caller's, reused from product to product: a team of
// its own each time went to the heap (its barrier points at itself), and
// two goroutines of a batch allocating teams side by side shared their
// cache lines.
func (p *problem[T]) alone(own *packBuffers[T], t *team) {
	if p.m == 0 || p.n == 0 {
		return
	}
	if p.alpha == 0 || p.k == 0 {
		scale(p.m, p.n, p.beta, p.c, p.ldc)
		return
	}
	// The paths gemm takes, so that a product of a batch gives the bits a
	// call of its own gives.
	if matVec(p.transA, p.transB, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc) {
		return
	}
	t.size, t.splitRows, t.privateB, t.rows = 1, true, true, p.eng.mc
	t.loose, t.groups = false, 0
	if p.columnsOnly(t) {
		t.rows = roundUp(t.rows, 2*vectorLanes[T]()) // as run takes them
	}
	t.resetClaims()
	t.barrier.reset(1)
	p.work(t, 0, own, own) // the shared buffers go unused: privateB, splitRows
}
