package gemm

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"
)

// Element is the set of element types the engine multiplies.
type Element interface{ float32 | float64 | int32 }

// Float32 sets C = alpha*op(A)*op(B) + beta*C for row-major float32
// matrices, where op(X) is X or, when its trans flag is set, X's transpose.
// op(A) is m x k, op(B) is k x n and C is m x n; lda, ldb and ldc are the
// row strides (at least the row length, and at least 1). When alpha is 0, A
// and B are not read; when beta is 0, C is not read, so NaN there does not
// survive. Slices shorter than their matrices make it panic: callers check
// their arguments first.
func Float32(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(engineF32, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Float64 is Float32 for float64 matrices.
func Float64(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemm(engineF64, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Int32 is Float32 for int32 matrices. Its arithmetic wraps around on
// overflow, as Go's does, and is exact modulo 2^32 whatever the blocking or
// the micro-kernel.
func Int32(transA, transB bool, m, n, k int, alpha int32, a []int32, lda int, b []int32, ldb int, beta int32, c []int32, ldc int) {
	gemm(engineI32, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// engine is one way to run the blocked algorithm for one element type: a
// micro-kernel and the block sizes chosen for it.
type engine[T Element] struct {
	kernel     MicroKernel[T]
	mc, kc, nc int
	// narrow, if not nil, is the same engine with a kernel of fewer rows,
	// for small products whose M it divides better (see pick).
	narrow *engine[T]
}

// narrowMaxM is the largest M that pick gives the narrow kernel: past it
// the rows a wider kernel computes beyond M are a few percent of the work
// at most.
const narrowMaxM = 256

// pick returns the engine for a product of m rows: e, or e.narrow when M is
// small and the narrow kernel computes fewer rows past it (64 rows are six
// blocks of 12, 72 rows, but eight of 8).
func (e *engine[T]) pick(m int) *engine[T] {
	n := e.narrow
	if n == nil || m > narrowMaxM {
		return e
	}
	if roundUp(m, n.kernel.MR) < roundUp(m, e.kernel.MR) {
		return n
	}
	// The row kernel takes a last panel of up to 8 rows (shortRowsOK):
	// where the narrow kernel's is one and the wide kernel's is not, the
	// narrow kernel computes no rows past M either. Only up to M = 96:
	// one thread, float32 and float64 M = 71 and 83 (any N, K) ran 2-8%
	// faster, 107 and 131 up to 5% slower, 179 and 251 up to 12% slower
	// on the narrow kernel's fewer rows a panel of B.
	if m <= 96 && e.kernel.Row != nil && m%e.kernel.MR > 2*fewColumns && m%n.kernel.MR <= 2*fewColumns {
		return n
	}
	return e
}

// problem is one call's arguments, as the pieces running on the pool see
// them.
type problem[T Element] struct {
	eng            *engine[T]
	transA, transB bool
	m, n, k        int
	alpha, beta    T
	a, b, c        []T
	lda, ldb, ldc  int
}

func gemm[T Element](eng *engine[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkMatrix("A", transA, m, k, a, lda)
	checkMatrix("B", transB, k, n, b, ldb)
	checkMatrix("C", false, m, n, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	if matVec(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	eng = eng.pick(m)
	p := problem[T]{eng: eng, transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, beta: beta, a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc}
	run(&p)
}

// checkMatrix panics unless x holds an r x c matrix (c x r if trans) with
// row stride ld.
func checkMatrix[T Element](name string, trans bool, r, c int, x []T, ld int) {
	if trans {
		r, c = c, r
	}
	if r < 0 || c < 0 || ld < max(1, c) {
		panic(fmt.Sprintf("gemm: %s is %dx%d with row stride %d", name, r, c, ld))
	}
	if r > 0 && c > 0 && len(x) < (r-1)*ld+c {
		panic(fmt.Sprintf("gemm: %s is %dx%d with row stride %d but has only %d elements", name, r, c, ld, len(x)))
	}
}

// scale sets C = beta*C, without reading C when beta is 0.
func scale[T Element](m, n int, beta T, c []T, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// work is thread id's share of p, done by a team of t.size threads that
// share the packed B block (and, when the team splits C's columns, the packed
// A block too): each thread packs its part, and a barrier makes sure all of it
// is packed before anyone reads it and read before anyone repacks it (a
// team that splits C's rows keeps two B blocks, t.doubleB, and the barrier
// after packing the next one does both). A team
// in column groups packs, and meets, group by group (teamBarrier,
// sharedBlock). When
// t.privateB, each thread packs all of the B block into its own buffer
// instead, and only the barrier at the end of each pass remains (the row
// counters need it). A team that makes one pass (t.onePass) meets at no
// barrier: each thread marks its share of B packed and waits a while for
// the others' (see lateShares), then, if one is still missing, packs the
// B its bands read for itself, so that a thread the machine has stopped
// holds up no one.
// own holds the thread's private packing buffers, shared the team's; shared
// has been grown by the caller to what sharedSizes asks.
func (p *problem[T]) work(t *team, id int, own, shared *packBuffers[T]) {
	e := p.eng
	mr, nr := e.kernel.MR, e.kernel.NR
	phase := 0
	for jc := 0; jc < p.n; jc += e.nc {
		nc := min(e.nc, p.n-jc)
		for pc := 0; pc < p.k; pc += e.kc {
			kc := min(e.kc, p.k-pc)
			var bp []T
			j0, j1 := share(nc, nr, t.size, id)
			direct := p.directB(t)
			columns := p.columnsOnly(t)
			if direct || columns {
				// B is read where it lies (macroKernelDirect or
				// columnsBand): nothing to pack, nor to wait for.
			} else if t.privateB {
				bp = own.b.get(kc * roundUp(nc, nr))
				packB(bp, p.b, p.ldb, p.transB, pc, jc, kc, nc, nr)
			} else if t.onePass {
				bp = shared.b.s[:kc*roundUp(nc, nr)]
				start := time.Now()
				for {
					s := int(t.packClaims.Add(1) - 1)
					if s >= t.size {
						break
					}
					if lag := testShareLag.Load(); lag > 0 && s == 1 {
						time.Sleep(time.Duration(lag)) // a thread the machine stops mid-share
					}
					s0, s1 := share(nc, nr, t.size, s)
					packB(bp[s0*kc:], p.b, p.ldb, p.transB, pc, jc+s0, kc, s1-s0, nr)
					t.ready[s].Store(t.stamp)
				}
				// A teammate whose share takes lateShares times what this
				// thread packed has lost its core while packing it: rather
				// than wait, pack all of B here.
				if !t.awaitShares(lateSharesMin + lateShares*time.Since(start)) {
					// Only the columns of this thread's group, all that its
					// bands read.
					lateFallbacks.Add(1)
					groups := max(t.groups, 1)
					g0, g1 := share(nc, nr, groups, id%groups)
					bp = own.b.get(kc * roundUp(nc, nr))
					packB(bp[g0*kc:], p.b, p.ldb, p.transB, pc, jc+g0, kc, g1-g0, nr)
				}
			} else {
				// With column groups each group packs its own columns
				// and meets at its own barrier (teamBarrier).
				bp = p.sharedBlock(shared.b.s, t, kc, nc, id, phase)
				j0, j1 := t.packShare(nc, nr, id)
				packB(bp[j0*kc:], p.b, p.ldb, p.transB, pc, jc+j0, kc, j1-j0, nr)
				t.teamBarrier(id).wait()
			}
			beta := p.beta
			if pc > 0 {
				beta = 1 // later slices of k add to what the first wrote
			}
			if t.splitRows {
				// The threads take bands of C's rows (t.rows tall) from a
				// counter, each packing its own A: a thread that the
				// machine slows down takes fewer, rather than holding the
				// others at the next barrier. With column groups each
				// group has a counter and the group's share of the
				// block's columns. The counters alternate between phases;
				// the next phase's are reset here, by the group's first
				// thread, where every thread of the group is past their
				// last use (its barrier above ended the phase before this
				// one; only the group's threads use its counter).
				groups := max(t.groups, 1) // a team's zero value is one group
				g := id % groups
				g0, g1 := share(nc, nr, groups, g)
				claims := &t.claims[phase%2][g]
				if id == g {
					t.claims[(phase+1)%2][g].Store(0)
				}
				for g1 > g0 {
					ic := int(claims.Add(1)-1) * t.rows
					if ic >= p.m {
						break
					}
					mc := min(t.rows, p.m-ic)
					if columns {
						p.columnsBand(ic, mc, beta)
						continue
					}
					if p.inPlaceA(t) {
						// A where it lies, B where it lies (direct) or
						// packed (bp).
						p.macroKernelDirect(own, nil, bp, ic, jc, pc, mc, g0, g1, kc, beta)
						continue
					}
					ap := own.a.get(kc * roundUp(mc, mr))
					packA(ap, p.a, p.lda, p.transA, ic, pc, mc, kc, mr)
					if direct {
						p.macroKernelDirect(own, ap, nil, ic, jc, pc, mc, g0, g1, kc, beta)
					} else {
						p.macroKernel(own, ap, bp, ic, jc, mc, g0, g1, kc, beta)
					}
				}
			} else {
				// Each thread owns a band of the block's columns; the team
				// packs each A block together.
				for ic := 0; ic < p.m; ic += e.mc {
					mc := min(e.mc, p.m-ic)
					ap := shared.a.s[:kc*roundUp(mc, mr)]
					i0, i1 := share(mc, mr, t.size, id)
					packA(ap[i0*kc:], p.a, p.lda, p.transA, ic+i0, pc, i1-i0, kc, mr)
					t.barrier.wait()
					if direct {
						p.macroKernelDirect(own, ap, nil, ic, jc, pc, mc, j0, j1, kc, beta)
					} else {
						p.macroKernel(own, ap, bp, ic, jc, mc, j0, j1, kc, beta)
					}
					t.barrier.wait()
				}
			}
			if !t.loose && !t.onePass && !t.doubleB {
				t.teamBarrier(id).wait()
			}
			phase++
		}
	}
}

// columnsOnlyMax is the largest M and N of a product with both operands
// transposed that columnsOnly gives the eight-column kernels (Columns8),
// which do as many multiply-adds a load as the micro-kernels. One thread,
// a scratch benchmark taking turns with the packed path (2026-11-25, 11
// rounds of 300 calls, medians): float32 n = 32 10% faster, 64 3%, 71,
// 76 and 79 8-9%, 92 14%, 100 2% slower (four rows past 96, on a vector of
// 16), 112 7%, 128 6%, 160 3%, 192 and 256 level; float64 (against its
// four-column kernel up to 96, where that took M a multiple of 16 or 8 to
// 15 past one, and the packed path elsewhere) 32-64 level, 67-100 3-15%
// faster, 112 and 128 7-8%, 160 and 192 level.
const columnsOnlyMax = 160

// columnsOnly reports whether team t computes p through the column kernels
// alone (columnsBand): both operands transposed and read where they lie
// (one pass, A small enough for inPlaceA), M and N at most
// columnsOnlyMax, and a band of two vectors of rows (float32 32, float64
// 16) for every thread, the threads taking bands of rows. B^T then needs
// no packing: the column kernels broadcast its elements from where they
// lie, and A^T's k steps are the vectors they load.
func (p *problem[T]) columnsOnly(t *team) bool {
	k := &p.eng.kernel
	// Every thread a band: on 16 cores, with fewer bands than threads,
	// float32 n = 96 to 160 ran 0.74-0.94x as fast as on the packed
	// path's bands of 12 rows.
	return p.transA && p.transB && k.Columns8[0] != nil && k.Column != nil && t.splitRows &&
		p.k <= p.eng.kc && p.n <= p.eng.nc && p.inPlaceA(t) &&
		max(p.m, p.n) <= columnsOnlyMax && ceilDiv(p.m, 2*vectorLanes[T]()) >= t.size
}

// vectorLanes returns how many elements of T an AVX-512 vector holds.
func vectorLanes[T Element]() int {
	var zero T
	return 64 / int(unsafe.Sizeof(zero))
}

// columnsBand sets rows ic..ic+mc of C (all of its columns) through the
// column kernels (see columnsOnly): eight columns a call on two vectors of
// rows (one for a last block of at most one), the columns past the last
// eight four at a time.
func (p *problem[T]) columnsBand(ic, mc int, beta T) {
	k := &p.eng.kernel
	lanes := vectorLanes[T]()
	for i := ic; i < ic+mc; i += 2 * lanes {
		rows := min(2*lanes, ic+mc-i)
		kern := k.Columns8[1]
		if rows <= lanes {
			kern = k.Columns8[0]
		}
		j := 0
		for ; j+8 <= p.n; j += 8 {
			kern(p.k, &p.a[i], &p.b[j*p.ldb], &p.c[i*p.ldc+j], p.lda, 1, p.ldb, p.ldc, rows, p.alpha, beta)
		}
		for h := i; h < i+rows && j < p.n; h += columnRows {
			for jj := j; jj < p.n; jj += fewColumns {
				k.Column(p.k, &p.a[h], &p.b[jj*p.ldb], &p.c[h*p.ldc+jj], p.lda, 1, p.ldb, p.ldc,
					min(columnRows, i+rows-h), min(fewColumns, p.n-jj), p.alpha, beta)
			}
		}
	}
}

// lateShares and lateSharesMin set how long a thread of a onePass team
// waits for the shares of B that others took before it packs B itself:
// the time its own shares took, lateShares times, plus lateSharesMin. On the 16-core
// host with a busy loop on one core (2026-11-25), teams that met at
// barriers made float32 n = 384 and 512 at 0.33-0.62 of OpenBLAS and
// float64 320-512 at 0.25-0.75; with no barrier and 20us, 0.96-1.31 and
// 0.81-1.29, but float32 1024 on the calm host fell to 0.73-0.97 from
// 1.12-1.26 (threads packing B for themselves when a teammate was merely
// slow to start); with 200us float32 512 0.78-0.89 (0.37-0.43 with
// barriers) and float64 512 1.00-1.12 (0.68-0.75) under the loop, and
// level with barriers on the calm host (float32 1024 1.03-1.08 against
// 1.00-1.08). Variables for the tests, which count the fallbacks in
// lateFallbacks.
//
// testShareLag, when the tests set it (nanoseconds), holds the thread that
// takes share 1 of B for that long before it packs it.
var (
	testShareLag  atomic.Int64
	lateShares    time.Duration = 4
	lateSharesMin               = 200 * time.Microsecond
	lateFallbacks atomic.Int64
)

// directBMaxPanels is the most MR-row panels of A a product may have for
// its B to be read where it lies rather than packed: packing B costs a
// read and a write of it, which pays only when several panels of A reuse
// the packed copy.
var directBMaxPanels = 2

// directB reports whether team t multiplies p with B unpacked: B not
// transposed (its rows are the panels' rows), a strided twin of the
// kernel, threads that share C's columns (each reads its own part of B),
// and few panels of A.
func (p *problem[T]) directB(t *team) bool {
	return (!t.splitRows && p.directOK()) || ((t.size == 1 || t.loose) && p.directSmall())
}

// directSmallBytes is the most B a product on one thread may hold for B to
// be read where it lies whatever M: all of it then stays in L2 (1 MiB a
// core on the development machine, 2 MiB on the 16-core Xeon), where the
// panels' strided rows cost nothing, and packing it would only add a copy.
// It also bounds the B of a loose team that reads B there (looseOK). 512
// KiB rather than 256 brought float64 n = 256 (a B of 512 KiB) and float32
// n = 320 onto loose teams: on 16 cores, interleaved, NN and TN ran 1.4-1.8x
// faster than on the team with barriers (float64 n = 256 436-469 GFLOP/s
// against 256-288, OpenBLAS 231-235); on 2 cores it changed nothing
// (within 3%, n = 256 to 384).
var directSmallBytes = 512 << 10

// loosePackBytes is the most B a loose team that packs B (B transposed)
// may have: each of its threads packs all of it. With 512 KiB, float64
// n = 256 and float32 n = 320 with B transposed had run 8-16% slower on
// loose teams than on the team with barriers (16 cores, interleaved), but
// that was before packing buffers were kept by CPU (teamWorkspace), and a
// loose team is what holds up when the host takes cores away: on a
// 16-core host that had slowed down (2026-11-24), the team with barriers
// made 18-26 GFLOP/s at float64 256 TT and NT, 0.12-0.18 of OpenBLAS, and
// a loose team 158-199 (0.92-1.41); float32 320 TT and NT 34-94 (0.18-0.35)
// against 334-412 (1.38-2.11). On the same host calmer, level: float64 256
// TT 0.98 / 1.31 against 1.00 / 1.09, NT 1.14 / 1.02 against 0.99 / 1.16;
// on 2 cores level too (docs/PERFORMANCE.md, "Loose teams for B^T up to
// 512 KiB").
var loosePackBytes = 512 << 10

// directSmall reports whether a product on one thread, or on a loose team
// (see looseOK), reads B where it lies: B small enough (directSmallBytes)
// and not transposed.
func (p *problem[T]) directSmall() bool {
	k := &p.eng.kernel
	return !p.transB && k.Strided != nil && p.k*p.ldb*int(unsafe.Sizeof(p.alpha)) <= directSmallBytes
}

// inPlaceABytes is the most A a product on one thread may hold for A to
// be read where it lies as well as B (see inPlaceA). On the development
// machine (one thread, taking turns with packing) in place ran 8-30%
// faster at n = 32 to 96, 3-14% at 128 and 160, and level at 200.
var inPlaceABytes = 128 << 10

// inPlaceA reports whether team t, which reads p's B where it lies, reads
// its A there too: one thread (which packs A for itself only), a kernel
// for A as it lies (InPlace, or InPlaceT when A is transposed) and A small enough
// (inPlaceABytes) to stay in L2, where the kernel's reads of MR rows at
// once cost no more than a packed panel's. Packing A is then a copy that
// only a few panels of B reuse. A loose team's threads take bands of rows
// too, each reading its own.
func (p *problem[T]) inPlaceA(t *team) bool {
	k := &p.eng.kernel
	rows, kernel := p.m, k.InPlace != nil
	if p.transA {
		rows, kernel = p.k, k.InPlaceT != nil
	}
	return (t.size == 1 || t.loose) && kernel && rows*p.lda*int(unsafe.Sizeof(p.alpha)) <= inPlaceABytes
}

// looseOK reports whether p can be computed by a loose team: one whose
// threads never wait for each other. One pass over k and n (so that no
// thread reuses a buffer another reads), a small B, read where it lies
// (directSmall) or else packed by every thread for itself (at
// most loosePackMaxThreads of them), and rows enough for bands (not
// directOK): each thread takes bands of rows from the counter until none
// is left, reading its own part of A and all of B, and writes only its
// bands of C. The caller
// need not wait for a helper that has not started, and takes back the
// call from it (see run): on a loaded machine a helper the OS has not run
// yet then costs nothing, where a team that meets at a barrier waits for
// it (a 96x96x96 product on two threads took 2.5ms, 0.005x OpenBLAS).
func (p *problem[T]) looseOK() bool {
	e := p.eng
	small := p.directSmall() ||
		(loosePackMaxThreads > 1 && p.k*p.n*int(unsafe.Sizeof(p.alpha)) <= loosePackBytes)
	return p.n <= e.nc && p.k <= e.kc && small && !p.directOK()
}

// directOK reports whether p could be multiplied with B unpacked by a team
// that splits C's columns.
func (p *problem[T]) directOK() bool {
	k := &p.eng.kernel
	return !p.transB && k.Strided != nil && p.m < p.n && ceilDiv(p.m, k.MR) <= directBMaxPanels
}

// macroKernelDirect is macroKernel with B unpacked: a whole panel of NR
// columns goes to the strided kernel where it lies in B (rows pc.. of it);
// a last panel of fewer columns goes to edge kernels that read it where it
// lies when they cover its columns exactly, else it is packed first,
// padded with zeros, since a kernel would read past it. When ap is nil A
// is unpacked too (see inPlaceA): the in-place kernel reads MR rows of it
// where they lie, and a last panel of fewer rows is packed. When bp is not nil it is B's block
// packed (kc x NR panels from column jc on, the last padded with zeros):
// the kernels read its panels with a row stride of NR instead (A in place
// beside a transposed B, which must be packed).
func (p *problem[T]) macroKernelDirect(ws *packBuffers[T], ap, bp []T, ic, jc, pc, mc, jr0, jr1, kc int, beta T) {
	k := &p.eng.kernel
	mr, nr := k.MR, k.NR
	ldc := p.ldc
	// panelB returns the first element of B's panel at column jc+jr of the
	// block, and its row stride.
	panelB := func(jr int) (*T, int) {
		if bp != nil {
			return &bp[jr*kc], nr
		}
		return &p.b[pc*p.ldb+jc+jr], p.ldb
	}
	inPlace := ap == nil
	// A last panel of fewer than MR rows goes to the row kernel, where
	// shortRows takes it, after the others.
	rowsLeft := mc
	if p.shortRowsOK(mc) {
		mc -= mc % mr
	}
	var lastRows []T // in place: the last panel, when it is short, packed
	if inPlace && mc%mr != 0 {
		lastRows = ws.a.get(kc * mr)
		packA(lastRows, p.a, p.lda, p.transA, ic+mc/mr*mr, pc, mc%mr, kc, mr)
	}
	for jr := jr0; jr < jr1; jr += nr {
		cols := min(nr, jr1-jr)
		// The dot kernel (A where it lies, not transposed) reads op(B)'s
		// columns where they lie or gathered, never packed.
		dot := ap == nil && !p.transA
		if wide, plan := k.planEdge(cols, bp != nil, dot); cols < nr && plan != edgeKernels {
			p.lastPanelDirect(ws, ap, bp, lastRows, ic, jc, jr, pc, mc, kc, cols, wide, plan, beta)
			continue
		}
		var first, second *EdgeKernel[T]
		if cols < nr {
			first, second = k.edgeSplit(cols)
		}
		// edge is a last panel of fewer than NR columns, rows edgeLd
		// apart: B's own when edge kernels cover its columns exactly
		// (they read nothing past them), else packed and padded with
		// zeros to the columns the edge kernels read, or to NR columns
		// for the full kernel when there are none: padded to NR for an
		// edge kernel of 8 columns, float32 n = 68's last 4 columns were
		// 112 bytes of zeros a row for 16 of B (one thread, 1-3% faster
		// without them at n = 68-100).
		var edge []T
		edgeLd := nr
		switch {
		case cols < nr && bp != nil:
			edge = bp[jr*kc : (jr+nr)*kc]
		case cols < nr && first != nil && first.Cols+second.cols() == cols:
			edge, edgeLd = p.b[pc*p.ldb+jc+jr:], p.ldb
		case cols < nr:
			if first != nil {
				edgeLd = first.Cols + second.cols()
			}
			edge = ws.b.get(kc * edgeLd)
			packB(edge, p.b, p.ldb, false, pc, jc+jr, kc, cols, edgeLd)
		}
		for ir := 0; ir < mc; ir += mr {
			rows := min(mr, mc-ir)
			c := p.c[(ic+ir)*ldc+jc+jr:]
			var a *T
			switch {
			case inPlace && rows == mr:
				ea := edgeA[T]{inPlace: true, transA: p.transA, lda: p.lda}
				kernel := k.InPlace
				if p.transA {
					ea.a, kernel = &p.a[pc*p.lda+ic+ir], k.InPlaceT
				} else {
					ea.a = &p.a[(ic+ir)*p.lda+pc]
				}
				if cols == nr {
					b, ldb := panelB(jr)
					kernel(kc, ea.a, b, &c[0], p.lda, ldb, ldc, p.alpha, beta)
					continue
				}
				t := ws.edge.get(mr * nr)
				if first != nil {
					runEdge(k, first, second, kc, ea, edge, edgeLd, c, ldc, rows, cols, p.alpha, beta, t)
					continue
				}
				kernel(kc, ea.a, &edge[0], &t[0], p.lda, edgeLd, nr, p.alpha, 0)
				addBlock(c, ldc, t, nr, rows, cols, beta)
				continue
			case inPlace:
				a = &lastRows[0]
			default:
				a = &ap[ir*kc]
			}
			if rows == mr && cols == nr {
				b, ldb := panelB(jr)
				k.Strided(kc, a, b, &c[0], ldb, ldc, p.alpha, beta)
				continue
			}
			t := ws.edge.get(mr * nr)
			if edge != nil && first != nil {
				runEdge(k, first, second, kc, edgeA[T]{a: a}, edge, edgeLd, c, ldc, rows, cols, p.alpha, beta, t)
				continue
			}
			if edge != nil {
				k.Strided(kc, a, &edge[0], &t[0], edgeLd, nr, p.alpha, 0)
			} else {
				b, ldb := panelB(jr)
				k.Strided(kc, a, b, &t[0], ldb, nr, p.alpha, 0)
			}
			addBlock(c, ldc, t, nr, rows, cols, beta)
		}
	}
	if mc < rowsLeft {
		p.shortRows(ap, bp, ic, jc, pc, mc, rowsLeft, jr0, jr1, kc, beta)
	}
}

// sharedSizes returns how many elements the team's shared A and B buffers
// need.
func (p *problem[T]) sharedSizes(splitRows, privateB, doubleB bool, groups int) (a, b int) {
	e := p.eng
	kc := min(e.kc, p.k)
	if !privateB {
		b = kc * roundUp(min(e.nc, p.n), e.kernel.NR)
		if splitRows && groups > 1 {
			b = groups * p.groupRegion(groups)
		}
		if doubleB {
			b *= 2
		}
	}
	if !splitRows {
		a = kc * roundUp(min(e.mc, p.m), e.kernel.MR)
	}
	return a, b
}

// groupRegion is the part of the shared B buffer that each of a team's
// column groups (groups of them) packs into, on every pass: room for its
// share of the widest and deepest block.
func (p *problem[T]) groupRegion(groups int) int {
	e := p.eng
	nr := e.kernel.NR
	return min(e.kc, p.k) * ceilDiv(ceilDiv(min(e.nc, p.n), nr), groups) * nr
}

// sharedBlock returns the view of the shared B buffer s through which
// thread id of team t packs and reads a kc x nc block (kc x NR panels, the
// panel of column j at j*kc): the start of s, or, when the team's column
// groups meet at barriers of their own (teamBarrier), a view in which the
// columns of id's group lie in the group's own region of s
// (groupRegion). Groups then run through their passes at their own pace,
// and a group packing its next block, whose columns and depth may differ,
// never writes where another group still reads. When t.doubleB, passes
// alternate between the two halves of s.
func (p *problem[T]) sharedBlock(s []T, t *team, kc, nc, id, phase int) []T {
	nr := p.eng.kernel.NR
	if t.doubleB {
		half := len(s) / 2
		s = s[phase%2*half : (phase%2+1)*half]
	}
	if !t.splitRows || t.groups <= 1 {
		return s[:kc*roundUp(nc, nr)]
	}
	g := id % t.groups
	region := p.groupRegion(t.groups)
	g0, _ := share(nc, nr, t.groups, g)
	// g0 columns of kc come before the group's: at most g regions.
	return s[g*region-g0*kc : (g+1)*region]
}

// share returns part id's range of 0..total when it is cut into parts
// pieces made of whole units (the last unit may be short).
func share(total, unit, parts, id int) (lo, hi int) {
	units := ceilDiv(total, unit)
	lo = min(total, id*units/parts*unit)
	hi = min(total, (id+1)*units/parts*unit)
	return lo, hi
}

// macroKernel runs the micro-kernel over every MR x NR block of columns
// jr0..jr1 of the mc x nc block of C at (ic, jc), from the packed panels ap
// and bp.
func (p *problem[T]) macroKernel(ws *packBuffers[T], ap, bp []T, ic, jc, mc, jr0, jr1, kc int, beta T) {
	k := &p.eng.kernel
	mr, nr := k.MR, k.NR
	kernel := k.Func
	ldc := p.ldc
	nc := jr1
	rowsLeft := mc
	if p.shortRowsOK(mc) {
		mc -= mc % mr
	}
	for jr := jr0; jr < jr1; jr += nr {
		b := bp[jr*kc:]
		cols := min(nr, nc-jr)
		if wide, plan := k.planEdge(cols, true, false); cols < nr && plan != edgeKernels {
			for ir := 0; ir < mc; ir += mr {
				c := p.c[(ic+ir)*ldc+jc+jr:]
				p.lastPanel(ws, edgeA[T]{a: &ap[ir*kc]}, b, nr, c, min(mr, mc-ir), cols, kc, wide, plan, beta)
			}
			continue
		}
		var first, second *EdgeKernel[T]
		if cols < nr {
			first, second = k.edgeSplit(cols)
		}
		for ir := 0; ir < mc; ir += mr {
			a := &ap[ir*kc]
			rows := min(mr, mc-ir)
			c := p.c[(ic+ir)*ldc+jc+jr:]
			if rows == mr && cols == nr {
				kernel(kc, a, &b[0], &c[0], ldc, p.alpha, beta)
				continue
			}
			// An edge block: the kernels write what lies outside C into a
			// scratch buffer, and only the part inside C is kept.
			t := ws.edge.get(mr * nr)
			if first != nil {
				runEdge(k, first, second, kc, edgeA[T]{a: a}, b, nr, c, ldc, rows, cols, p.alpha, beta, t)
				continue
			}
			kernel(kc, a, &b[0], &t[0], nr, p.alpha, 0)
			addBlock(c, ldc, t, nr, rows, cols, beta)
		}
	}
	if mc < rowsLeft {
		p.shortRows(ap, bp, ic, jc, 0, mc, rowsLeft, jr0, jr1, kc, beta)
	}
}

// shortRowsOK reports whether the last panel of a block of mc rows goes to
// the row kernel (shortRows): it has fewer than MR rows, and at most 8 of
// them, since each call of four rows does one multiply-add a row and k step
// on up to rowColumns columns, where a micro-kernel does MR on NR columns
// (float32 n = 131, 11 rows, one thread: 1-4% slower through the row
// kernel; 67 to 113, 3 to 8 rows, 2-11% faster).
func (p *problem[T]) shortRowsOK(mc int) bool {
	k := &p.eng.kernel
	return k.Row != nil && mc%k.MR != 0 && mc%k.MR <= 2*fewColumns
}

// shortRows sets rows ir0..ir1 of the block of C at (ic, jc), fewer than
// MR, columns jr0..jr1 of it, through the row kernel: four rows and
// rowColumns columns a call, no row or column past the block computed or
// read. A is the packed block ap (its last panel, padded), or where it lies
// when ap is nil (k steps pc..); B is the packed block bp, or where it lies
// when bp is nil.
func (p *problem[T]) shortRows(ap, bp []T, ic, jc, pc, ir0, ir1, jr0, jr1, kc int, beta T) {
	if ir0 == ir1 {
		return
	}
	k := &p.eng.kernel
	mr, nr, ldc := k.MR, k.NR, p.ldc
	// aRow returns row r of the short panel and its strides along the
	// rows and along k.
	aRow := func(r int) (*T, int, int) {
		switch {
		case ap != nil:
			return &ap[ir0*kc+r], 1, mr
		case p.transA:
			return &p.a[pc*p.lda+ic+ir0+r], 1, p.lda
		default:
			return &p.a[(ic+ir0+r)*p.lda+pc], p.lda, 1
		}
	}
	for jr := jr0; jr < jr1; jr += nr {
		for j := jr; j < min(jr+nr, jr1); j += rowColumns {
			var b *T
			ldb := p.ldb
			if bp != nil {
				b, ldb = &bp[jr*kc+j-jr], nr
			} else {
				b = &p.b[pc*p.ldb+jc+j]
			}
			cols := min(rowColumns, jr+nr-j, jr1-j)
			for r := 0; r < ir1-ir0; r += fewColumns {
				a, ldar, ldap := aRow(r)
				k.Row(kc, a, b, &p.c[(ic+ir0+r)*ldc+jc+j], ldar, ldap, ldb, ldc,
					min(fewColumns, ir1-ir0-r), cols, p.alpha, beta)
			}
		}
	}
}

// edgePlan says how a last panel of fewer than NR columns is computed.
type edgePlan int

const (
	// edgeKernels: the edge kernels that edgeSplit picks, on B packed and
	// padded with zeros where they would read past the panel.
	edgeKernels edgePlan = iota
	// edgeFew: the widest edge kernel where the panel is as wide, the
	// column or dot kernels for the rest.
	edgeFew
	// edgeMasked: the widest edge kernel where the panel is as wide, its
	// masked twin for the rest.
	edgeMasked
)

// planEdge returns how a last panel of cols < NR columns is computed, and
// how many of its columns go to the widest edge kernel. packedB says
// whether B is packed, dot whether a rest of few columns would go to the
// dot kernel (A where it lies, untransposed), which reads B where it lies,
// rather than the column kernel.
//
// A rest of up to four columns goes to the column or dot kernels: one call
// of a column kernel does one multiply-add a column and k step on a vector
// of A's rows (two for float64), where an edge kernel does one a row (MR)
// on a vector of columns. A wider rest, short of half the edge kernel's
// columns, does too where B is not packed: its calls then cost about as
// much as an edge kernel, which would read B packed and padded to its
// width (float32 n = 87 and 103, one thread: 4-21% faster where B lies
// unpacked, 3-4% slower where it is packed; TN against the masked kernel,
// 2026-11-25: level; NN, with the dot kernel's columns of B gathered by
// 4 x 4 transposes, 0-2% faster than the masked kernel at n = 69-71,
// 86-87 and 103, where gathered by VGATHERDPS it had been 1-6% slower).
// The dot kernel gains nothing on an edge kernel exactly as wide as its
// columns: float64 n = 68, 84, 100 ran 1-4% slower through it, float32
// n = 68 (no 4-column edge kernel) 4% faster. Any other rest goes to the masked edge kernel, which
// reads B and writes C where they lie, with no padded copy and no scratch
// block (one thread, float32 n = 76, 79, 92, 127 NN and TN 12-35% faster,
// float64 71, 79, 87, 127 8-18%), except beside the widest edge kernel on a
// packed B: the whole kernel on B's padded panel does as many
// multiply-adds in one call (float32 92 and 127, float64 79 and 127 NT and
// TT 2-5% slower through two).
func (k *MicroKernel[T]) planEdge(cols int, packedB, dot bool) (wide int, plan edgePlan) {
	if len(k.Edges) == 0 {
		return 0, edgeKernels
	}
	w := k.Edges[0].Cols
	if cols >= w {
		wide = w
	}
	rest := cols - wide
	if rest == 0 {
		return wide, edgeKernels
	}
	limit := fewColumns
	if !packedB || dot { // the dot kernel reads B where it lies, or gathered
		limit = max(limit, w/2-1)
	}
	if k.Column != nil && k.Dot != nil && rest <= limit && !(dot && k.narrowestOf(rest).Cols == rest) {
		return wide, edgeFew
	}
	if k.Masked != nil && !(packedB && wide > 0) {
		return wide, edgeMasked
	}
	return wide, edgeKernels
}

// lastPanel sets the rows x cols block of C at c (rows <= MR, cols < NR)
// to alpha*A*B + beta*C as plan says (planEdge): its first wide columns
// through the widest edge kernel, the rest four at a time through the
// column kernel (edgeFew) or at once through the masked edge kernel
// (edgeMasked), which compute and read no more columns than there are. A is
// as ea says (a packed panel, or A where it lies; lastPanelDirect gives A
// where it lies untransposed to the dot kernel), B's row p of the block at
// b[p*ldb:] (packed, or where it lies).
func (p *problem[T]) lastPanel(ws *packBuffers[T], ea edgeA[T], b []T, ldb int, c []T, rows, cols, kc, wide int, plan edgePlan, beta T) {
	k := &p.eng.kernel
	if wide > 0 {
		runEdge(k, &k.Edges[0], nil, kc, ea, b, ldb, c, p.ldc, rows, wide, p.alpha, beta, ws.edge.get(k.MR*k.NR))
	}
	if plan == edgeMasked {
		p.maskedEdge(ws, ea, b[wide:], ldb, c[wide:], rows, cols-wide, kc, beta)
		return
	}
	lda := k.MR // a packed panel's k steps
	if ea.inPlace {
		lda = ea.lda
	}
	for at := wide; at < cols; at += fewColumns {
		k.Column(kc, ea.a, &b[at], &c[at], lda, ldb, 1, p.ldc, rows, min(fewColumns, cols-at), p.alpha, beta)
	}
}

// maskedEdge sets the rows x cols block of C at c (rows <= MR, cols less
// than the masked edge kernel's) through that kernel, A as ea says and
// B's row p at b[p*ldb:]; into the scratch block first when rows < MR,
// since the kernel writes MR rows.
func (p *problem[T]) maskedEdge(ws *packBuffers[T], ea edgeA[T], b []T, ldb int, c []T, rows, cols, kc int, beta T) {
	k := &p.eng.kernel
	m := k.Masked
	dst, ldc, dstBeta := &c[0], p.ldc, beta
	var t []T
	if rows < k.MR {
		t = ws.edge.get(k.MR * k.NR)
		dst, ldc, dstBeta = &t[0], k.NR, 0
	}
	switch {
	case !ea.inPlace:
		m.Strided(kc, ea.a, &b[0], dst, ldb, ldc, cols, p.alpha, dstBeta)
	case ea.transA:
		m.InPlaceT(kc, ea.a, &b[0], dst, ea.lda, ldb, ldc, cols, p.alpha, dstBeta)
	default:
		m.InPlace(kc, ea.a, &b[0], dst, ea.lda, ldb, ldc, cols, p.alpha, dstBeta)
	}
	if t != nil {
		addBlock(c, p.ldc, t, k.NR, rows, cols, beta)
	}
}

// lastPanelDirect is lastPanel for macroKernelDirect: the last panel of
// cols < NR columns of B's block (the block at column jc, the panel jr
// columns into it), for every panel of A's mc
// rows from ic. A is the packed ap, or where it lies when ap is nil, its
// last short panel packed in lastRows; B is the packed bp, or where it
// lies when bp is nil. When A lies untransposed where it lies, its rows
// lie along k and the columns past the edge kernel go to the dot kernel,
// with op(B)'s columns along k: B transposed where it lies, or else those
// columns copied transposed first.
func (p *problem[T]) lastPanelDirect(ws *packBuffers[T], ap, bp, lastRows []T, ic, jc, jr, pc, mc, kc, cols, wide int, plan edgePlan, beta T) {
	k := &p.eng.kernel
	mr, nr := k.MR, k.NR
	ldc := p.ldc
	b, ldb := bp, nr
	if bp != nil {
		b = bp[jr*kc:]
	} else {
		b, ldb = p.b[pc*p.ldb+jc+jr:], p.ldb
	}
	jc += jr // the panel's first column in B and C
	inPlace := ap == nil
	dot := inPlace && !p.transA && plan == edgeFew
	// The dot kernel's columns of op(B), each kc adjacent elements, ldbt
	// apart.
	var bt []T
	ldbt := p.ldb
	if dot && cols > wide {
		if p.transB {
			bt = p.b[(jc+wide)*p.ldb+pc:]
		} else {
			ldbt = kc
			bt = ws.bt.get(kc * (cols - wide))
			src := p.b[pc*p.ldb+jc+wide:]
			if k.GatherColumns != nil {
				_ = src[(kc-1)*p.ldb+cols-wide-1] // what the copy reads
				k.GatherColumns(&bt[0], kc, &src[0], p.ldb, kc, cols-wide)
			} else {
				interleave(bt, kc, src, p.ldb, kc, cols-wide)
			}
		}
	}
	if !dot && plan == edgeFew && inPlace && p.transA && cols > wide {
		// A^T where it lies holds every row of a k step together: the
		// columns past the edge kernel go to the column kernel for all
		// the panels at once, 16 rows a call, rather than MR (8 or 12)
		// a panel (one thread, interleaved, 2026-11-25: float32 TN n =
		// 69-71 10% faster, 67 and 83-103 3-7%; float64 and TT, whose
		// rests of more than 4 columns go to the masked kernel, level).
		for i := 0; i < mc; i += columnRows {
			c := p.c[(ic+i)*ldc+jc:]
			for at := wide; at < cols; at += fewColumns {
				k.Column(kc, &p.a[pc*p.lda+ic+i], &b[at], &c[at], p.lda, ldb, 1, ldc,
					min(columnRows, mc-i), min(fewColumns, cols-at), p.alpha, beta)
			}
		}
		if wide == 0 {
			return
		}
		cols = wide
	}
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		c := p.c[(ic+ir)*ldc+jc:]
		var ea edgeA[T]
		switch {
		case !inPlace:
			ea.a = &ap[ir*kc]
		case p.transA:
			ea = edgeA[T]{a: &p.a[pc*p.lda+ic+ir], lda: p.lda, inPlace: true, transA: true}
		case rows == mr:
			ea = edgeA[T]{a: &p.a[(ic+ir)*p.lda+pc], lda: p.lda, inPlace: true}
		default:
			ea.a = &lastRows[0]
		}
		if !dot {
			p.lastPanel(ws, ea, b, ldb, c, rows, cols, kc, wide, plan, beta)
			continue
		}
		if wide > 0 {
			runEdge(k, &k.Edges[0], nil, kc, ea, b, ldb, c, ldc, rows, wide, p.alpha, beta, ws.edge.get(mr*nr))
		}
		for r := 0; r < rows; r += fewColumns {
			a := &p.a[(ic+ir+r)*p.lda+pc]
			for j := wide; j < cols; j += fewColumns {
				k.Dot(kc, a, &bt[(j-wide)*ldbt], &c[r*ldc+j], p.lda, ldbt, ldc,
					min(fewColumns, rows-r), min(fewColumns, cols-j), p.alpha, beta)
			}
		}
	}
}

// edgeA is the A that an edge block's kernels read: a packed panel, or
// (inPlace) MR rows where they lie, lda apart, of A or (transA) of A^T.
type edgeA[T Element] struct {
	a               *T
	lda             int
	inPlace, transA bool
}

// call runs edge kernel e on A as ea says and on B at b (rows ldb apart).
func (ea edgeA[T]) call(e *EdgeKernel[T], kc int, b, c *T, ldb, ldc int, alpha, beta T) {
	switch {
	case !ea.inPlace:
		e.Strided(kc, ea.a, b, c, ldb, ldc, alpha, beta)
	case ea.transA:
		e.InPlaceT(kc, ea.a, b, c, ea.lda, ldb, ldc, alpha, beta)
	default:
		e.InPlace(kc, ea.a, b, c, ea.lda, ldb, ldc, alpha, beta)
	}
}

// runEdge sets the rows x cols block of C at c (row stride ldc, cols < NR)
// to alpha*A*B + beta*C through the edge kernels first and, if not nil,
// second (k.edgeSplit), one after the other along the columns, from A as
// ea says and B's last panel b (rows ldb apart, as many columns as the
// kernels read, zero past cols). A kernel whose columns all lie in a block
// of MR rows writes into C; the others write into the scratch t (MR x NR),
// whose part inside C is then added.
func runEdge[T Element](k *MicroKernel[T], first, second *EdgeKernel[T], kc int, ea edgeA[T], b []T, ldb int, c []T, ldc, rows, cols int, alpha, beta T, t []T) {
	nr := k.NR
	at, through := 0, -1 // through: the first column written into t
	for _, e := range [2]*EdgeKernel[T]{first, second} {
		if e == nil {
			break
		}
		if through < 0 && rows == k.MR && at+e.Cols <= cols {
			ea.call(e, kc, &b[at], &c[at], ldb, ldc, alpha, beta)
		} else {
			if through < 0 {
				through = at
			}
			ea.call(e, kc, &b[at], &t[at], ldb, nr, alpha, 0)
		}
		at += e.Cols
	}
	if through >= 0 {
		addBlock(c[through:], ldc, t[through:], nr, rows, cols-through, beta)
	}
}

// addBlock sets the rows x cols block of C at c (row stride ldc) to
// beta*C + the block's part of t (row stride nr), not reading C when beta
// is 0.
func addBlock[T Element](c []T, ldc int, t []T, nr, rows, cols int, beta T) {
	for i := range rows {
		dst, src := c[i*ldc:i*ldc+cols], t[i*nr:i*nr+cols]
		switch beta {
		case 0:
			copy(dst, src)
		case 1:
			for j := range dst {
				dst[j] += src[j]
			}
		default:
			for j := range dst {
				dst[j] = beta*dst[j] + src[j]
			}
		}
	}
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// alignedBuffer is a reusable slice whose first element sits on a 64-byte
// boundary (a cache line, and what aligned vector loads want).
type alignedBuffer[T Element] struct{ s []T }

// get returns the buffer's first n elements, growing it if needed. The
// contents are whatever was there before.
func (b *alignedBuffer[T]) get(n int) []T {
	if cap(b.s) < n {
		const align = 64
		size := int(unsafe.Sizeof(T(0)))
		raw := make([]T, n+align/size)
		off := 0
		for uintptr(unsafe.Pointer(&raw[off]))%align != 0 {
			off++
		}
		b.s = raw[off : off+n : off+n]
	}
	return b.s[:n]
}

// packBuffers is what one thread packs into.
type packBuffers[T Element] struct {
	a, b, edge alignedBuffer[T]
	// bt holds the last columns of B's block copied transposed, for the
	// dot kernel (lastPanelDirect).
	bt alignedBuffer[T]
}
