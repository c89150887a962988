package reference

import (
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/goamp/goamp/amp"
)

// The passes below send several vectors through one read of a matrix: each
// row of X is converted to float64 once, and every vector's products with it
// are summed in blocks of blockLen terms whose sums go into compensated pairs
// (see the derivation in check.go).

// blockLen is how many terms a sum adds plainly before the block's sum goes,
// without error, into its (hi, lo) pair: the plain part's error is
// gamma_blockLen, and the pair costs one TwoSum per blockLen terms.
const blockLen = 16

// maxParts caps the parts a pass splits a matrix's rows into, and
// minPartElems is the fewest elements a part holds (below it a goroutine
// costs more than it saves). The parts depend on the matrix's shape alone,
// never on GOMAXPROCS, so the sums, and the errors a check reports, are the
// same on every machine.
const (
	maxParts     = 16
	minPartElems = 1 << 16
)

// u64 is float64's unit roundoff.
const u64 = 0x1p-53

// gamma returns gamma_j = j*u/(1-j*u), the bound on the relative error of
// j roundings in float64.
func gamma(j int) float64 {
	x := float64(j) * u64
	return x / (1 - x)
}

// sigma bounds the error of a blocked compensated sum of K products (as the
// passes compute them), relative to the sum of the magnitudes of the terms.
func sigma(K int) float64 {
	if K <= 0 {
		return 0
	}
	gL := gamma(min(blockLen, K))
	gN := gamma(K + maxParts)
	return gL + (u64+2*gN*gN)*(1+gL)
}

// chain returns prod(1+e) - 1 for the relative errors e of steps done one
// after another, summed as a + b + a*b so that no cancellation rounds it.
func chain(es ...float64) float64 {
	r := 0.0
	for _, e := range es {
		r = r + e + r*e
	}
	return r
}

// twoSum returns s = fl(a+b) and the exact error e, a+b = s+e (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	z := s - a
	e = (a - (s - z)) + (b - z)
	return s, e
}

// finish returns hi + lo, the compensated sum, or hi alone where hi is not
// finite: hi is then the plain float64 sum, whose NaN or infinity is the one
// the sum in any order gives (lo is then NaN, from TwoSum's Inf - Inf).
func finish(hi, lo float64) float64 {
	if s := hi + lo; finite(s) {
		return s
	}
	return hi
}

// job is one vector sent through a pass over a row-major rows x cols matrix
// X: X*v (v of length cols, result of length rows), or X^T*v (axpy: v of
// length rows, result of length cols). With seg, the vector is split into
// blocks, block q being v[seg[q]:seg[q+1]], and the job computes each
// block's product apart: X*v_q for every q (result rows x nseg, element
// [i*nseg+q]), or X^T*v_q (result nseg x cols, element [q*cols+c]), where
// v_q is v outside block q set to 0. That is the product with the matrix
// whose column q is v_q, at the cost of one product with v.
type job struct {
	axpy  bool
	clean bool      // read X's clean rows (see pass), else its raw values
	v     []float64 // the vector
	vAbs  []float64 // a bound on |v|; nil when no magnitude is wanted
	seg   []int     // block boundaries, 0 = seg[0] < seg[1] < ... = len(v); nil for one block
	val   []float64 // result: the compensated sums
	abs   []float64 // |X|*vAbs (or its transpose) in plain sums; nil without vAbs
}

// nseg returns the number of blocks of j's vector.
func (j *job) nseg() int {
	if j.seg == nil {
		return 1
	}
	return len(j.seg) - 1
}

// span returns block q's part of the vector, [lo, hi), for a vector of
// length n.
func (j *job) span(q, n int) (lo, hi int) {
	if j.seg == nil {
		return 0, n
	}
	return j.seg[q], j.seg[q+1]
}

// segOf returns the block that holds element i of the vector.
func (j *job) segOf(i int) int {
	if j.seg == nil {
		return 0
	}
	return sort.SearchInts(j.seg, i+1) - 1
}

// mulJob returns a job for op(X)*v and mulTJob one for op(X)^T*v, op(X) = X,
// or X^T when trans; X is the matrix as stored, which the pass reads.
func mulJob(trans, clean bool, v, vAbs []float64) *job {
	return &job{axpy: trans, clean: clean, v: v, vAbs: vAbs}
}

func mulTJob(trans, clean bool, v, vAbs []float64) *job {
	return &job{axpy: !trans, clean: clean, v: v, vAbs: vAbs}
}

// pass sends jobs through one read of x (rows x cols, row-major). Raw rows
// are x's values; clean rows read non-finite entries as 0 (sanitize), whole
// rows as 0 (skipRows[i]) and columns as 0 (zeroCols), so that the
// projections leave out what NaN and Inf would spoil.
type pass[T amp.Element] struct {
	x          []T
	rows, cols int
	sanitize   bool
	skipRows   []bool
	zeroCols   []int
	jobs       []*job
}

// partsOf returns the number of parts of a rows x cols matrix.
func partsOf(rows, cols int) int {
	return max(1, min(maxParts, rows, rows*cols/minPartElems))
}

// forParts calls f for parts 0 to parts-1, on up to GOMAXPROCS goroutines.
func forParts(parts int, f func(q int)) {
	var next atomic.Int64
	work := func() {
		for {
			q := int(next.Add(1)) - 1
			if q >= parts {
				return
			}
			f(q)
		}
	}
	workers := min(parts, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		work()
		return
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
}

// partial holds one part's sums for an axpy job: for the blocks seg0,
// seg0+1, ... that its rows fall in, cols pairs each.
type partial struct {
	seg0        int
	hi, lo, abs []float64
}

// run computes every job's val (and abs).
func (p *pass[T]) run() {
	for _, j := range p.jobs {
		n := p.rows * j.nseg()
		if j.axpy {
			n = j.nseg() * p.cols
		}
		j.val = make([]float64, n)
		if j.vAbs != nil {
			j.abs = make([]float64, n)
		}
	}
	if p.rows == 0 || p.cols == 0 || len(p.jobs) == 0 {
		return
	}
	parts := partsOf(p.rows, p.cols)
	acc := make([][]partial, parts)
	workers := make(chan *worker, parts)
	forParts(parts, func(q int) {
		var w *worker
		select {
		case w = <-workers: // a finished part's scratch
		default:
			w = p.newWorker()
		}
		acc[q] = p.runPart(w, q*p.rows/parts, (q+1)*p.rows/parts)
		workers <- w
	})
	// The parts' pairs, added in part order with TwoSum (exact, and exact
	// from 0) to each block's pair, their los and the new errors summed
	// plainly: the Sum2 bound still holds, with at most maxParts more
	// TwoSums in a sum.
	for ji, j := range p.jobs {
		if !j.axpy {
			continue
		}
		hi, lo := make([]float64, len(j.val)), make([]float64, len(j.val))
		for q := range parts {
			a := acc[q][ji]
			off := a.seg0 * p.cols
			for e, h := range a.hi {
				s, err := twoSum(hi[off+e], h)
				hi[off+e] = s
				lo[off+e] += err + a.lo[e]
			}
			if j.vAbs != nil {
				for e, s := range a.abs {
					j.abs[off+e] += s
				}
			}
		}
		for e := range j.val {
			j.val[e] = finish(hi[e], lo[e])
		}
	}
}

// worker is one goroutine's scratch: the row in float64, raw and clean, and
// a block sum for each axpy job.
type worker struct {
	raw, clean []float64
	blk        [][]float64
}

func (p *pass[T]) newWorker() *worker {
	w := &worker{raw: make([]float64, p.cols), clean: make([]float64, p.cols), blk: make([][]float64, len(p.jobs))}
	for ji, j := range p.jobs {
		if j.axpy {
			w.blk[ji] = make([]float64, p.cols)
		}
	}
	return w
}

// needClean reports whether clean rows differ from raw ones.
func (p *pass[T]) needClean() bool {
	return p.sanitize || p.skipRows != nil || len(p.zeroCols) > 0
}

// runPart runs rows lo to hi, returning the part's axpy sums.
func (p *pass[T]) runPart(w *worker, lo, hi int) []partial {
	cols := p.cols
	acc := make([]partial, len(p.jobs))
	segNow := make([]int, len(p.jobs)) // an axpy job's block of row i
	for ji, j := range p.jobs {
		if j.axpy {
			s0 := j.segOf(lo)
			n := (j.segOf(hi-1) - s0 + 1) * cols
			acc[ji] = partial{seg0: s0, hi: make([]float64, n), lo: make([]float64, n)}
			if j.vAbs != nil {
				acc[ji].abs = make([]float64, n)
			}
			segNow[ji] = s0
		}
	}
	x64, isF64 := any(p.x).([]float64)
	needClean := p.needClean()
	inBlock := 0
	for i := lo; i < hi; i++ {
		// The raw row: float64 data are read in place.
		raw := w.raw
		if isF64 {
			raw = x64[i*cols : (i+1)*cols]
		} else {
			for c, v := range p.x[i*cols : (i+1)*cols] {
				raw[c] = float64(v)
			}
		}
		clean, skip := raw, false
		if needClean {
			skip = p.skipRows != nil && p.skipRows[i]
			clean = w.clean
			copy(clean, raw)
			if p.sanitize {
				for c, v := range clean {
					if !finite(v) {
						clean[c] = 0
					}
				}
			}
			for _, c := range p.zeroCols {
				clean[c] = 0
			}
		}
		for ji, j := range p.jobs {
			row := raw
			if j.clean {
				if skip {
					continue // the row reads as 0: a dot of 0, nothing to add
				}
				row = clean
			}
			if !j.axpy {
				ns := j.nseg()
				for q := range ns {
					a, b := j.span(q, cols)
					if j.vAbs != nil {
						h, l, s := dotAbs(row[a:b], j.v[a:b], j.vAbs[a:b])
						j.val[i*ns+q], j.abs[i*ns+q] = finish(h, l), s
					} else {
						j.val[i*ns+q] = finish(dot(row[a:b], j.v[a:b]))
					}
				}
				continue
			}
			if j.vAbs != nil {
				off := (segNow[ji] - acc[ji].seg0) * cols
				axpyAbs(w.blk[ji], acc[ji].abs[off:off+cols], row, j.v[i], j.vAbs[i])
			} else {
				axpy(w.blk[ji], row, j.v[i])
			}
		}
		// The block sums go into their pairs every blockLen rows, at the
		// end of the part, and where a job's next row starts a new block
		// of its vector.
		inBlock++
		fold := inBlock == blockLen || i == hi-1
		for ji, j := range p.jobs {
			if j.axpy && j.seg != nil && i+1 == j.seg[segNow[ji]+1] {
				fold = true
			}
		}
		if fold {
			for ji, j := range p.jobs {
				if !j.axpy {
					continue
				}
				off := (segNow[ji] - acc[ji].seg0) * cols
				foldInto(acc[ji].hi[off:off+cols], acc[ji].lo[off:off+cols], w.blk[ji])
				if j.seg != nil && i+1 == j.seg[segNow[ji]+1] {
					segNow[ji]++
				}
			}
			inBlock = 0
		}
	}
	return acc
}

// dotAbs returns the blocked compensated sum of x[j]*v[j] as a pair (hi, lo)
// and the plain sum of |x[j]|*va[j]. Each block is summed in four chains,
// which the processor overlaps (any order of a block keeps its error within
// gamma_blockLen).
func dotAbs(x, v, va []float64) (hi, lo, sa float64) {
	n := len(x)
	v, va = v[:n], va[:n]
	j := 0
	for ; j+blockLen <= n; j += blockLen {
		xb, vb, ab := (*[blockLen]float64)(x[j:]), (*[blockLen]float64)(v[j:]), (*[blockLen]float64)(va[j:])
		var s0, s1, s2, s3, a0, a1, a2, a3 float64
		for q := 0; q < blockLen; q += 4 {
			s0 += xb[q] * vb[q]
			s1 += xb[q+1] * vb[q+1]
			s2 += xb[q+2] * vb[q+2]
			s3 += xb[q+3] * vb[q+3]
			a0 += math.Abs(xb[q]) * ab[q]
			a1 += math.Abs(xb[q+1]) * ab[q+1]
			a2 += math.Abs(xb[q+2]) * ab[q+2]
			a3 += math.Abs(xb[q+3]) * ab[q+3]
		}
		var e float64
		hi, e = twoSum(hi, (s0+s1)+(s2+s3))
		lo += e
		sa += (a0 + a1) + (a2 + a3)
	}
	if j < n {
		var s, a float64
		for ; j < n; j++ {
			s += x[j] * v[j]
			a += math.Abs(x[j]) * va[j]
		}
		var e float64
		hi, e = twoSum(hi, s)
		lo += e
		sa += a
	}
	return hi, lo, sa
}

// dotAbsOf is dotAbs with |x| given, xa, for rows dotted with many vectors.
// Each block is summed in two chains of pairs, which keeps every sum in a
// register (four chains of each spill one, 30% slower); any order of a
// block keeps its error within gamma_blockLen.
func dotAbsOf(x, xa, v, va []float64) (hi, lo, sa float64) {
	n := len(x)
	xa, v, va = xa[:n], v[:n], va[:n]
	j := 0
	for ; j+blockLen <= n; j += blockLen {
		xb, xab := (*[blockLen]float64)(x[j:]), (*[blockLen]float64)(xa[j:])
		vb, ab := (*[blockLen]float64)(v[j:]), (*[blockLen]float64)(va[j:])
		var s0, s1, a0, a1 float64
		for q := 0; q < blockLen; q += 4 {
			s0 += xb[q]*vb[q] + xb[q+2]*vb[q+2]
			s1 += xb[q+1]*vb[q+1] + xb[q+3]*vb[q+3]
			a0 += xab[q]*ab[q] + xab[q+2]*ab[q+2]
			a1 += xab[q+1]*ab[q+1] + xab[q+3]*ab[q+3]
		}
		var e float64
		hi, e = twoSum(hi, s0+s1)
		lo += e
		sa += a0 + a1
	}
	if j < n {
		var s, a float64
		for ; j < n; j++ {
			s += x[j] * v[j]
			a += xa[j] * va[j]
		}
		var e float64
		hi, e = twoSum(hi, s)
		lo += e
		sa += a
	}
	return hi, lo, sa
}

// dot is dotAbs without the magnitudes.
func dot(x, v []float64) (hi, lo float64) {
	n := len(x)
	v = v[:n]
	j := 0
	for ; j+blockLen <= n; j += blockLen {
		xb, vb := (*[blockLen]float64)(x[j:]), (*[blockLen]float64)(v[j:])
		var s0, s1, s2, s3 float64
		for q := 0; q < blockLen; q += 4 {
			s0 += xb[q] * vb[q]
			s1 += xb[q+1] * vb[q+1]
			s2 += xb[q+2] * vb[q+2]
			s3 += xb[q+3] * vb[q+3]
		}
		var e float64
		hi, e = twoSum(hi, (s0+s1)+(s2+s3))
		lo += e
	}
	if j < n {
		var s float64
		for ; j < n; j++ {
			s += x[j] * v[j]
		}
		var e float64
		hi, e = twoSum(hi, s)
		lo += e
	}
	return hi, lo
}

// axpyAbs adds x*w to the block sums blk and |x|*wa to abs.
func axpyAbs(blk, abs, x []float64, w, wa float64) {
	blk, abs = blk[:len(x)], abs[:len(x)]
	for j, v := range x {
		blk[j] += v * w
		abs[j] += math.Abs(v) * wa
	}
}

// axpy adds x*w to the block sums blk.
func axpy(blk, x []float64, w float64) {
	blk = blk[:len(x)]
	for j, v := range x {
		blk[j] += v * w
	}
}

// foldInto adds the block sums blk to the pairs (hi, lo) with TwoSum and
// clears them for the next block.
func foldInto(hi, lo, blk []float64) {
	hi, lo = hi[:len(blk)], lo[:len(blk)]
	for j, b := range blk {
		s, e := twoSum(hi[j], b)
		hi[j] = s
		lo[j] += e
		blk[j] = 0
	}
}

// gatherRows is how many rows of op(X) mulRows gathers at once from a
// transposed X: a cache line's worth of each of X's rows.
const gatherRows = 16

// mulRows returns op(X)*vs[q] and |op(X)|*vAbs[q] for each of the vectors
// vs[q] (length K): val[q] and abs[q], of length R, the first as blocked
// compensated sums (what dotAbs returns), the second in plain sums. op(X) is
// R x K: X as stored when !trans, else X^T, X then stored K x R, whose rows
// are gathered gatherRows at a time into float64 rows. This is the costly
// step of the blocked projections, R*K*len(vs) multiply-adds: each row of
// op(X) is read once, its magnitudes taken once, and dotted with every
// vector. Rows are split into parts
// by shape, never by GOMAXPROCS, and each output is one dotAbs: the sums are
// the same on every machine.
func mulRows[T amp.Element](x []T, trans bool, R, K int, vs, vAbs [][]float64) (val, abs [][]float64) {
	val, abs = make([][]float64, len(vs)), make([][]float64, len(vs))
	for q := range vs {
		val[q], abs[q] = make([]float64, R), make([]float64, R)
	}
	if R == 0 || K == 0 || len(vs) == 0 {
		return val, abs
	}
	x64, isF64 := any(x).([]float64)
	g := 1
	if trans {
		g = gatherRows
	}
	parts := partsOf(R, K)
	type scratch struct{ buf, rowAbs []float64 }
	free := make(chan *scratch, parts)
	forParts(parts, func(part int) {
		var sc *scratch
		select {
		case sc = <-free: // a finished part's
		default:
			sc = &scratch{make([]float64, g*K), make([]float64, K)}
		}
		defer func() { free <- sc }()
		buf, rowAbs := sc.buf, sc.rowAbs
		for i0 := part * R / parts; i0 < (part+1)*R/parts; i0 += g {
			cnt := min(g, (part+1)*R/parts-i0)
			switch {
			case trans:
				for p := range K {
					for r, v := range x[p*R+i0 : p*R+i0+cnt] {
						buf[r*K+p] = float64(v)
					}
				}
			case !isF64:
				for p, v := range x[i0*K : (i0+1)*K] {
					buf[p] = float64(v)
				}
			}
			for r := range cnt {
				row := buf[r*K : (r+1)*K]
				if !trans && isF64 {
					row = x64[i0*K : (i0+1)*K]
				}
				for p, v := range row {
					rowAbs[p] = math.Abs(v)
				}
				for q, v := range vs {
					h, l, s := dotAbsOf(row, rowAbs, v, vAbs[q])
					val[q][i0+r], abs[q][i0+r] = finish(h, l), s
				}
			}
		}
	})
	return val, abs
}
