package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/goamp/goamp/amp"
)

// Projections of each side: two right vectors, one left, as the derivation
// in check.go assumes.
const (
	nRight = 2
	nLeft  = 1
)

// lineBatch is how many rows (columns) checked whole at Check time share one
// pass over B (A).
const lineBatch = 16

// floatChecker checks float32 and float64 results (see check.go).
type floatChecker[T amp.Element] struct {
	p   problem[T]
	tol float64

	// Rows and columns left out of the projections and checked whole at
	// each Check, because NaN or Inf in their operands spoil them (or, with
	// whyWhole saying so, every row).
	badRow, badCol   []bool
	badRows, badCols []int
	whyWhole         string
	c0               []T // a copy of C0 for them, when beta != 0

	right, left        []projection
	rows, cols         []wholeLine // stored references of the sampled lines
	pRight, pLeft, pEl allowance
}

// projection is a random vector and, for each element of the product's
// projection, its reference and bound.
type projection struct{ v, want, bound []float64 }

// wholeLine is the reference and bound of each element of a row or column.
type wholeLine struct {
	idx          int
	want, bound  []float64
	fromOperands bool
}

// allowance is what a correct C may differ by in one comparison, computed
// as (tol + s)*bound*f + eta (see the derivation in check.go).
type allowance struct{ tol, s, f, eta float64 }

// factor returns f = 1 + 4*(d+64)*u for a bound of d roundings.
func factor(d int) float64 { return 1 + 4*float64(d+64)*u64 }

// judge returns the error of g against w relative to the bound b, as MaxErr
// measures it, but at most tol exactly when g passes the rigorous test: an
// error past tol by no more than the check's own rounding could account for
// counts as tol. Non-finite values follow MaxErr: matching ones are no
// error, others +Inf.
func (al allowance) judge(g, w, b float64) float64 {
	if !finite(w) || !finite(g) {
		if math.IsNaN(w) || math.IsNaN(g) {
			if math.IsNaN(w) && math.IsNaN(g) {
				return 0
			}
			return inf
		}
		if g == w {
			return 0
		}
		return inf
	}
	d := math.Abs(g - w)
	ok := d <= (al.tol+al.s)*b*al.f+al.eta
	e := d // as MaxErr where the bound is 0
	if b > 0 {
		e = d / b
	}
	// So that Worst <= Tolerance says exactly what the rigorous test said.
	if ok {
		return min(e, al.tol)
	}
	return max(e, math.Nextafter(al.tol, inf))
}

func newFloatChecker[T amp.Element](p problem[T], r *rand.Rand) *floatChecker[T] {
	m, n, k := p.m, p.n, p.k
	fc := &floatChecker[T]{p: p, tol: p.tol}
	if m == 0 || n == 0 {
		return fc
	}
	al, be := float64(p.alpha), float64(p.beta)
	aAl, aBe := math.Abs(al), math.Abs(be)
	fc.badRow, fc.badCol = make([]bool, m), make([]bool, n)
	aMax, aDirty := scanOp(p.tA, m, k, p.a, fc.badRow)
	bMax, bDirty := scanOp(!p.tB, n, k, p.b, fc.badCol)
	c0Dirty := false
	if p.c0 != nil {
		_, c0Dirty = scanOp(false, m, n, p.c0, fc.badRow)
	}

	// Allowances (see check.go). eta is computed as 16*2^-1075*(...) from
	// exact small multiples of 2^-1071, so that its own rounding, at most
	// 2^-1075 a step, leaves more than the 8*2^-1075*(...) the errors need.
	tau := fc.tol
	etaOf := func(d int, aMax float64) float64 {
		e := float64(d) * 0x1p-1071
		return e + e*aAl + e*aAl*float64(k)*aMax + e*aBe
	}
	fc.pEl = allowance{tau, chain(sigma(k), u64, u64), factor(k + 18), etaOf(k+4, 0)}
	fc.pRight = allowance{tau, sigma(n)*(1+tau) + chain(sigma(n), sigma(k), u64, u64), factor(n + k + 34), etaOf(n+k+4, aMax)}
	fc.pLeft = allowance{tau, sigma(m)*(1+tau) + chain(sigma(m), sigma(k), u64, u64), factor(m + k + 34), etaOf(m+k+4, bMax)}

	// The random draws come first and always in this order, so that the
	// same r gives the same vectors whatever the data.
	var xs [nRight][]float64
	for t := range xs {
		xs[t] = RandomSlice[float64](r, n)
	}
	y := RandomSlice[float64](r, m)
	rows, cols := sampleLines(m, r), sampleLines(n, r)

	switch {
	case !finite(al) || !finite(be):
		fc.wholeRows("alpha or beta is not finite")
		return fc
	case !finite(fc.pRight.eta) || !finite(fc.pLeft.eta):
		fc.wholeRows("the operands are too large for the projections")
		return fc
	}
	if aDirty || bDirty || c0Dirty {
		fc.whyWhole = "its operands hold NaN or Inf"
	}
	for i, bad := range fc.badRow {
		if bad {
			fc.badRows = append(fc.badRows, i)
			y[i] = 0
		}
	}
	for j, bad := range fc.badCol {
		if bad {
			fc.badCols = append(fc.badCols, j)
			for t := range xs {
				xs[t][j] = 0
			}
		}
	}
	rows = slices.DeleteFunc(rows, func(i int) bool { return fc.badRow[i] })
	cols = slices.DeleteFunc(cols, func(j int) bool { return fc.badCol[j] })

	// First op(B)*x (and the sampled rows, op(A)_i*op(B)) in one read of B,
	// and op(A)^T*y (and the sampled columns) in one of A; then op(A) and
	// op(B)^T times those; then C0's share.
	aR, aC := p.aShape()
	bR, bC := p.bShape()
	var bx [nRight]*job
	jobs := fc.rowJobs(rows)
	for t := range xs {
		bx[t] = mulJob(p.tB, true, xs[t], absOf(xs[t]))
		jobs = append(jobs, bx[t])
	}
	(&pass[T]{x: p.b, rows: bR, cols: bC, sanitize: bDirty, jobs: jobs}).run()
	fc.rows = fc.rowLines(rows, jobs[:len(rows)], p.c0, false)

	ay := mulTJob(p.tA, true, y, absOf(y))
	jobs = append(fc.colJobs(cols), ay)
	(&pass[T]{x: p.a, rows: aR, cols: aC, sanitize: aDirty, jobs: jobs}).run()
	fc.cols = fc.colLines(cols, jobs[:len(cols)], p.c0, false)

	var abx [nRight]*job
	jobs = nil
	for t := range xs {
		abx[t] = mulJob(p.tA, true, bx[t].val, bx[t].abs)
		jobs = append(jobs, abx[t])
	}
	(&pass[T]{x: p.a, rows: aR, cols: aC, sanitize: aDirty, jobs: jobs}).run()
	bay := mulTJob(p.tB, true, ay.val, ay.abs)
	(&pass[T]{x: p.b, rows: bR, cols: bC, sanitize: bDirty, jobs: []*job{bay}}).run()

	var cx [nRight]*job
	var cy *job
	if p.c0 != nil {
		jobs = nil
		for t := range xs {
			cx[t] = mulJob(false, true, xs[t], absOf(xs[t]))
			jobs = append(jobs, cx[t])
		}
		cy = mulTJob(false, true, y, absOf(y))
		jobs = append(jobs, cy)
		(&pass[T]{x: p.c0, rows: m, cols: n, sanitize: c0Dirty, jobs: jobs}).run()
	}

	// want = alpha*product + beta*C0 share, and the bound likewise; a
	// reference or bound that overflowed, or is near enough to overflow
	// that C's projection could, leaves the rows to be checked whole.
	safe := true
	combine := func(prod *job, c0 *job, skip []bool) projection {
		pr := projection{want: make([]float64, len(prod.val)), bound: make([]float64, len(prod.val))}
		for i := range pr.want {
			w, b := al*prod.val[i], aAl*prod.abs[i]
			if c0 != nil {
				w += be * c0.val[i]
				b += aBe * c0.abs[i]
			}
			pr.want[i], pr.bound[i] = w, b
			if !skip[i] && (!finite(w) || !(b <= math.MaxFloat64/8)) {
				safe = false
			}
		}
		return pr
	}
	for t := range xs {
		var c0x *job
		if p.c0 != nil {
			c0x = cx[t]
		}
		pr := combine(abx[t], c0x, fc.badRow)
		pr.v = xs[t]
		fc.right = append(fc.right, pr)
	}
	pr := combine(bay, cy, fc.badCol)
	pr.v = y
	fc.left = append(fc.left, pr)
	if !safe {
		fc.wholeRows("the projections would overflow")
		return fc
	}
	if len(fc.badRows) > 0 || len(fc.badCols) > 0 {
		fc.keepOperands()
	} else {
		fc.p.a, fc.p.b, fc.p.c0 = nil, nil, nil // Check will not read them
	}
	return fc
}

// keepOperands keeps what Check needs to check lines whole: A and B, which
// the caller must not change, and a copy of C0, which the caller may
// overwrite with the result.
func (fc *floatChecker[T]) keepOperands() {
	if fc.p.c0 != nil {
		fc.c0 = slices.Clone(fc.p.c0)
	}
	fc.p.c0 = nil
}

// wholeRows gives up the projections: every row is checked whole at each
// Check, for the reason why.
func (fc *floatChecker[T]) wholeRows(why string) {
	m := fc.p.m
	fc.right, fc.left, fc.rows, fc.cols, fc.badCols = nil, nil, nil, nil, nil
	fc.badRows = make([]int, m)
	for i := range m {
		fc.badRows[i] = i
		fc.badRow[i] = true
	}
	clear(fc.badCol)
	fc.whyWhole = why
	fc.keepOperands()
}

// scanOp marks in bad the rows of op(X) (r x c; X, or X^T when trans, X
// then c x r) that hold NaN or Inf, and returns the largest magnitude of the
// finite entries and whether any was not finite. Parts of X's rows are
// scanned in parallel, each marking its own copy of bad (made only when it
// finds a non-finite entry).
func scanOp[T amp.Element](trans bool, r, c int, x []T, bad []bool) (maxAbs float64, dirty bool) {
	rows, cols := r, c
	if trans {
		rows, cols = c, r
	}
	type found struct {
		maxAbs float64
		bad    []bool
	}
	parts := partsOf(rows, cols)
	res := make([]found, parts)
	forParts(parts, func(q int) {
		f := &res[q]
		for i := q * rows / parts; i < (q+1)*rows/parts; i++ {
			// Plain comparisons (the builtin max minds NaN, slowly); NaN
			// fails both, so a row is clean when its largest is finite
			// and no comparison was skipped.
			mx, n := 0.0, 0
			row := x[i*cols : (i+1)*cols]
			for _, v := range row {
				a := math.Abs(float64(v))
				if a >= mx {
					mx = a
					n++
				} else if a < mx {
					n++
				}
			}
			if n == len(row) && mx <= math.MaxFloat64 {
				if mx > f.maxAbs {
					f.maxAbs = mx
				}
				continue
			}
			if f.bad == nil {
				f.bad = make([]bool, r)
			}
			for j, v := range row {
				a := math.Abs(float64(v))
				switch {
				case !(a <= math.MaxFloat64):
					if trans {
						f.bad[j] = true
					} else {
						f.bad[i] = true
					}
				case a > f.maxAbs:
					f.maxAbs = a
				}
			}
		}
	})
	for _, f := range res {
		maxAbs = max(maxAbs, f.maxAbs)
		if f.bad != nil {
			dirty = true
			for i, b := range f.bad {
				bad[i] = bad[i] || b
			}
		}
	}
	return maxAbs, dirty
}

// absOf returns |v| elementwise.
func absOf(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	return out
}

// rowJobs returns, for each row i, the job for row i of op(A)*op(B):
// op(B)^T times row i of op(A), through a read of B, raw so that NaN and
// Inf come out as MatMul has them.
func (fc *floatChecker[T]) rowJobs(rows []int) []*job {
	jobs := make([]*job, len(rows))
	for q, i := range rows {
		a := fc.p.opARow(i)
		jobs[q] = mulTJob(fc.p.tB, false, a, absOf(a))
	}
	return jobs
}

// colJobs is rowJobs for columns: op(A) times column j of op(B), through a
// read of A.
func (fc *floatChecker[T]) colJobs(cols []int) []*job {
	jobs := make([]*job, len(cols))
	for q, j := range cols {
		b := fc.p.opBCol(j)
		jobs[q] = mulJob(fc.p.tA, false, b, absOf(b))
	}
	return jobs
}

// rowLines turns rowJobs' results into references, alpha*sum + beta*C0 in
// MatMul's order of operations, and bounds.
func (fc *floatChecker[T]) rowLines(rows []int, jobs []*job, c0 []T, fromOperands bool) []wholeLine {
	n := fc.p.n
	lines := make([]wholeLine, len(rows))
	for q, i := range rows {
		var c0Row []T
		if c0 != nil {
			c0Row = c0[i*n : (i+1)*n]
		}
		lines[q] = fc.wholeLine(i, jobs[q], c0Row, 1, fromOperands)
	}
	return lines
}

// colLines is rowLines for columns.
func (fc *floatChecker[T]) colLines(cols []int, jobs []*job, c0 []T, fromOperands bool) []wholeLine {
	n := fc.p.n
	lines := make([]wholeLine, len(cols))
	for q, j := range cols {
		var c0Col []T
		if c0 != nil {
			c0Col = c0[j:]
		}
		lines[q] = fc.wholeLine(j, jobs[q], c0Col, n, fromOperands)
	}
	return lines
}

// wholeLine makes one line's references from its job; the line's elements
// of C0 are c0[0], c0[stride], ...
func (fc *floatChecker[T]) wholeLine(idx int, j *job, c0 []T, stride int, fromOperands bool) wholeLine {
	al, be := float64(fc.p.alpha), float64(fc.p.beta)
	l := wholeLine{idx: idx, want: make([]float64, len(j.val)), bound: make([]float64, len(j.val)), fromOperands: fromOperands}
	for q, v := range j.val {
		w, b := v*al, j.abs[q]*math.Abs(al)
		if c0 != nil {
			c := float64(c0[q*stride])
			w += be * c
			b += math.Abs(be * c)
		}
		l.want[q], l.bound[q] = w, b
	}
	return l
}

// check checks c (see MatMulChecker.Check).
func (fc *floatChecker[T]) check(c []T) MatMulCheck {
	m, n := fc.p.m, fc.p.n
	if len(c) < m*n {
		panic(fmt.Sprintf("reference: result of %d elements for %dx%d", len(c), m, n))
	}
	c = c[:m*n]
	var t tracker
	if m == 0 || n == 0 {
		return t.result(fc.tol)
	}
	if len(fc.right) > 0 {
		fc.checkProjections(c, &t)
	}
	for _, l := range fc.rows {
		fc.checkRow(c, l, &t)
	}
	for _, l := range fc.cols {
		fc.checkCol(c, l, &t)
	}
	// The lines the projections leave out, checked whole from A and B kept.
	aR, aC := fc.p.aShape()
	bR, bC := fc.p.bShape()
	for start := 0; start < len(fc.badRows); start += lineBatch {
		batch := fc.badRows[start:min(start+lineBatch, len(fc.badRows))]
		jobs := fc.rowJobs(batch)
		(&pass[T]{x: fc.p.b, rows: bR, cols: bC, jobs: jobs}).run()
		for _, l := range fc.rowLines(batch, jobs, fc.c0, true) {
			fc.checkRow(c, l, &t)
		}
	}
	for start := 0; start < len(fc.badCols); start += lineBatch {
		batch := fc.badCols[start:min(start+lineBatch, len(fc.badCols))]
		jobs := fc.colJobs(batch)
		(&pass[T]{x: fc.p.a, rows: aR, cols: aC, jobs: jobs}).run()
		for _, l := range fc.colLines(batch, jobs, fc.c0, true) {
			fc.checkCol(c, l, &t)
		}
	}
	return t.result(fc.tol)
}

// checkProjections computes C*x and y^T*C in one read of C and compares them.
func (fc *floatChecker[T]) checkProjections(c []T, t *tracker) {
	m, n := fc.p.m, fc.p.n
	var jobs []*job
	for _, pr := range fc.right {
		jobs = append(jobs, &job{clean: true, v: pr.v})
	}
	for _, pr := range fc.left {
		jobs = append(jobs, &job{axpy: true, clean: true, v: pr.v})
	}
	ps := &pass[T]{x: c, rows: m, cols: n, zeroCols: fc.badCols, jobs: jobs}
	if len(fc.badRows) > 0 {
		ps.skipRows = fc.badRow
	}
	ps.run()
	for q, pr := range fc.right {
		g := jobs[q].val
		for i := range m {
			if !fc.badRow[i] {
				t.see(fc.pRight.judge(g[i], pr.want[i], pr.bound[i]), site{kind: siteRight, vec: q, nVec: len(fc.right), row: i, col: -1}, g[i], pr.want[i])
			}
		}
	}
	for q, pr := range fc.left {
		g := jobs[len(fc.right)+q].val
		for j := range n {
			if !fc.badCol[j] {
				t.see(fc.pLeft.judge(g[j], pr.want[j], pr.bound[j]), site{kind: siteLeft, vec: q, nVec: len(fc.left), row: -1, col: j}, g[j], pr.want[j])
			}
		}
	}
}

func (fc *floatChecker[T]) checkRow(c []T, l wholeLine, t *tracker) {
	n := fc.p.n
	why := ""
	if l.fromOperands {
		why = fc.whyWhole
	}
	for j, v := range c[l.idx*n : (l.idx+1)*n] {
		g := float64(v)
		t.see(fc.pEl.judge(g, l.want[j], l.bound[j]), site{kind: siteRow, row: l.idx, col: j, why: why}, g, l.want[j])
	}
}

func (fc *floatChecker[T]) checkCol(c []T, l wholeLine, t *tracker) {
	n := fc.p.n
	why := ""
	if l.fromOperands {
		why = fc.whyWhole
	}
	for i := range fc.p.m {
		g := float64(c[i*n+l.idx])
		t.see(fc.pEl.judge(g, l.want[i], l.bound[i]), site{kind: siteCol, row: i, col: l.idx, why: why}, g, l.want[i])
	}
}
