package reference

import (
	"math"
	"runtime"
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
// length rows, result of length cols).
type job struct {
	axpy  bool
	clean bool      // read X's clean rows (see pass), else its raw values
	v     []float64 // the vector
	vAbs  []float64 // a bound on |v|; nil when no magnitude is wanted
	val   []float64 // result: the compensated sums
	abs   []float64 // |X|*vAbs (or its transpose) in plain sums; nil without vAbs
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

// partial holds one part's sums for an axpy job.
type partial struct{ hi, lo, abs []float64 }

// run computes every job's val (and abs).
func (p *pass[T]) run() {
	for _, j := range p.jobs {
		n := p.rows
		if j.axpy {
			n = p.cols
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
	// The parts' pairs, added in part order with TwoSum (exact), their los
	// and the new errors summed plainly: the Sum2 bound still holds.
	for ji, j := range p.jobs {
		if !j.axpy {
			continue
		}
		for c := range p.cols {
			hi, lo, abs := acc[0][ji].hi[c], acc[0][ji].lo[c], 0.0
			if j.vAbs != nil {
				abs = acc[0][ji].abs[c]
			}
			for q := 1; q < parts; q++ {
				var e float64
				hi, e = twoSum(hi, acc[q][ji].hi[c])
				lo += e + acc[q][ji].lo[c]
				if j.vAbs != nil {
					abs += acc[q][ji].abs[c]
				}
			}
			j.val[c] = finish(hi, lo)
			if j.vAbs != nil {
				j.abs[c] = abs
			}
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
	for ji, j := range p.jobs {
		if j.axpy {
			acc[ji] = partial{hi: make([]float64, cols), lo: make([]float64, cols)}
			if j.vAbs != nil {
				acc[ji].abs = make([]float64, cols)
			}
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
			switch {
			case !j.axpy && j.vAbs != nil:
				h, l, a := dotAbs(row, j.v, j.vAbs)
				j.val[i], j.abs[i] = finish(h, l), a
			case !j.axpy:
				j.val[i] = finish(dot(row, j.v))
			case j.vAbs != nil:
				axpyAbs(w.blk[ji], acc[ji].abs, row, j.v[i], j.vAbs[i])
			default:
				axpy(w.blk[ji], row, j.v[i])
			}
		}
		if inBlock++; inBlock == blockLen || i == hi-1 {
			for ji, j := range p.jobs {
				if j.axpy {
					fold(acc[ji].hi, acc[ji].lo, w.blk[ji])
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

// fold adds the block sums blk to the pairs (hi, lo) with TwoSum and clears
// them for the next block.
func fold(hi, lo, blk []float64) {
	hi, lo = hi[:len(blk)], lo[:len(blk)]
	for j, b := range blk {
		s, e := twoSum(hi[j], b)
		hi[j] = s
		lo[j] += e
		blk[j] = 0
	}
}
