package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/goamp/goamp/amp"
)

// Budgets of NewMatMulChecker (see check.go).
const (
	// refBudget is the work, in multiply-adds (each with another for its
	// bound), spent on the blocked projections' references (half on each
	// side, unless the whole product fits), and again on the lines checked
	// whole because NaN or Inf keep them out of the projections: about a
	// second each on 2 cores.
	refBudget = 1 << 31
	// maxRefEntries caps each side's kept references and partial
	// products, and the lines checked whole for NaN or Inf: 2^22 float64
	// pairs, 64 MiB.
	maxRefEntries = 1 << 22
	// lineBatch is how many lines checked whole share one pass over B (A).
	lineBatch = 16
)

// Why lines are checked whole.
const (
	whyOperands = "its operands hold NaN or Inf"
	whyNaN      = "NaN in its operands makes it NaN throughout"
)

// floatChecker checks float32 and float64 results (see check.go).
type floatChecker[T amp.Element] struct {
	p   problem[T] // its operands are dropped once the references are made
	tol float64

	// Rows and columns that NaN or Inf in their operands (or, in every
	// row, a reason wholeRows gives) keep out of the projections.
	badRow, badCol []bool
	badCols        []int

	right, left blockProj // no blocks when there are no projections
	full        bool      // right compares every element: x = 1, a column a block

	lines            []wholeLine // compared element by element
	nanRows, nanCols []int       // lines whose reference is NaN throughout
	partial          string      // what went unchecked, when something did

	pRight, pLeft, pEl allowance
}

// blockProj is a random vector split into blocks, block q being lines
// seg[q] to seg[q+1]-1 (columns for C*x, rows for y^T*C), and for each
// element of the blocked projection its reference and bound: [i*nb+q] for
// row i of C*x's block q, [q*n+j] for column j of y^T*C's block q.
type blockProj struct {
	v           []float64
	seg         []int
	want, bound []float64
}

// nb returns the number of blocks, 0 when there is no projection.
func (b *blockProj) nb() int { return max(len(b.seg)-1, 0) }

// wholeLine is the reference and bound of each element of a row or column.
type wholeLine struct {
	idx         int
	col         bool
	want, bound []float64
	why         string // why it is checked whole, when not merely sampled
}

// allowance is what a correct C may differ by in one comparison, computed
// as (tol + s)*bound*f + eta (see the derivation in check.go); past is the
// least error reported past tol.
type allowance struct{ tol, s, f, eta, past float64 }

func newAllowance(tol, s, f, eta float64) allowance {
	return allowance{tol, s, f, eta, math.Nextafter(tol, inf)}
}

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
	return max(e, al.past)
}

// blockCount returns how many blocks a side's projection is split into: its
// lines (n for C*x, m for y^T*C) as finely as budget multiply-adds allow, at
// other*k a block (m*k, n*k), and as maxRefEntries allows the references
// kept (other a block) and the partial products (k a block); at least one
// block, at most one line a block.
func blockCount(lines, other, k int, budget float64) int {
	nb := float64(lines)
	if k > 0 {
		nb = min(nb, math.Floor(budget/(float64(other)*float64(k))))
	}
	nb = min(nb, float64(maxRefEntries/max(other, 1)), float64(maxRefEntries/max(k, 1)))
	return max(int(nb), 1)
}

// blocks returns the boundaries of nb contiguous blocks of n lines, as even
// as can be: block q is lines q*n/nb to (q+1)*n/nb - 1, none empty.
func blocks(n, nb int) []int {
	seg := make([]int, nb+1)
	for q := range seg {
		seg[q] = int(int64(q) * int64(n) / int64(nb))
	}
	return seg
}

func newFloatChecker[T amp.Element](p problem[T], r *rand.Rand, budget float64) *floatChecker[T] {
	m, n, k := p.m, p.n, p.k
	fc := &floatChecker[T]{p: p, tol: p.tol}
	// Check reads none of the operands: every reference is made here.
	defer func() { fc.p.a, fc.p.b, fc.p.c0 = nil, nil, nil }()
	if m == 0 || n == 0 {
		return fc
	}
	al, be := float64(p.alpha), float64(p.beta)
	aAl, aBe := math.Abs(al), math.Abs(be)
	// NaN in row i of op(A) makes row i of the product NaN throughout (a
	// sum with a NaN term is NaN, whatever the others), and in column j of
	// op(B) column j. Inf there, and NaN or Inf in C0, leave lines whose
	// elements are finite, infinite or NaN as the other operand has it.
	nanRow, infRow := make([]bool, m), make([]bool, m)
	nanCol, infCol := make([]bool, n), make([]bool, n)
	aMax, aDirty := scanOp(p.tA, m, k, p.a, nanRow, infRow)
	bMax, bDirty := scanOp(!p.tB, n, k, p.b, nanCol, infCol)
	c0Dirty := false
	if p.c0 != nil {
		_, c0Dirty = scanOp(false, m, n, p.c0, infRow, infRow)
	}

	// Allowances (see check.go). eta is computed as 16*2^-1075*(...) from
	// exact small multiples of 2^-1071, so that its own rounding, at most
	// 2^-1075 a step, leaves more than the 8*2^-1075*(...) the errors need.
	tau := fc.tol
	etaOf := func(d int, aMax float64) float64 {
		e := float64(d) * 0x1p-1071
		return e + e*aAl + e*aAl*float64(k)*aMax + e*aBe
	}
	fc.pEl = newAllowance(tau, chain(sigma(k), u64, u64), factor(k+18), etaOf(k+4, 0))
	fc.pRight = newAllowance(tau, sigma(n)*(1+tau)+chain(sigma(n), sigma(k), u64, u64), factor(n+k+34), etaOf(n+k+4, aMax))
	fc.pLeft = newAllowance(tau, sigma(m)*(1+tau)+chain(sigma(m), sigma(k), u64, u64), factor(m+k+34), etaOf(m+k+4, bMax))

	// The random draws come first and always in this order, so that the
	// same r gives the same vectors whatever the data; lines checked whole
	// for NaN or Inf are drawn from a generator of their own.
	x := RandomSlice[float64](r, n)
	y := RandomSlice[float64](r, m)
	rows, cols := sampleLines(m, r), sampleLines(n, r)
	pick := rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))

	switch {
	case math.IsNaN(al) || math.IsNaN(be):
		// Every element of the product is NaN.
		fc.nanRows = make([]int, m)
		for i := range m {
			fc.nanRows[i] = i
		}
		return fc
	case !finite(al) || !finite(be):
		fc.wholeRows("alpha or beta is not finite", nanRow, nanCol, budget, pick)
		return fc
	case !finite(fc.pRight.eta) || !finite(fc.pLeft.eta):
		fc.wholeRows("the operands are too large for the projections", nanRow, nanCol, budget, pick)
		return fc
	}
	fc.badRow, fc.badCol = make([]bool, m), make([]bool, n)
	var infRows, infCols []int
	for i := range m {
		switch {
		case nanRow[i]:
			fc.nanRows = append(fc.nanRows, i)
		case infRow[i]:
			infRows = append(infRows, i)
		default:
			continue
		}
		fc.badRow[i] = true
	}
	for j := range n {
		switch {
		case nanCol[j]:
			fc.nanCols = append(fc.nanCols, j)
		case infCol[j]:
			infCols = append(infCols, j)
		default:
			continue
		}
		fc.badCol[j] = true
		fc.badCols = append(fc.badCols, j)
	}
	rows = slices.DeleteFunc(rows, func(i int) bool { return fc.badRow[i] })
	cols = slices.DeleteFunc(cols, func(j int) bool { return fc.badCol[j] })
	// Projections need a row and a column left in them.
	proj := len(fc.nanRows)+len(infRows) < m && len(fc.badCols) < n
	if !fc.project(x, y, rows, cols, proj, aDirty, bDirty, c0Dirty, budget) {
		fc.wholeRows("the projections would overflow", nanRow, nanCol, budget, pick)
		return fc
	}
	fc.addBadLines(infRows, infCols, whyOperands, budget, pick)
	return fc
}

// project makes the references of the sampled rows and columns and, when
// proj, of the blocked projections on x and y (see check.go). It returns
// false when a reference or bound of the projections overflowed, or came
// near enough to overflow that C's projection could.
func (fc *floatChecker[T]) project(x, y []float64, rows, cols []int, proj, aDirty, bDirty, c0Dirty bool, budget float64) bool {
	p := &fc.p
	m, n, k := p.m, p.n, p.k
	al, be := float64(p.alpha), float64(p.beta)
	aAl, aBe := math.Abs(al), math.Abs(be)
	var segR, segL []int
	if proj {
		if blockCount(n, m, k, budget) == n {
			// The whole product fits: the right side compares every
			// element, x = 1 and a column a block, and the left adds
			// nothing.
			fc.full = true
			segR = blocks(n, n)
			for j := range x {
				x[j] = 1
			}
		} else {
			segR = blocks(n, blockCount(n, m, k, budget/2))
			segL = blocks(m, blockCount(m, n, k, budget/2))
		}
		for j, bad := range fc.badCol {
			if bad {
				x[j] = 0
			}
		}
		for i, bad := range fc.badRow {
			if bad {
				y[i] = 0
			}
		}
	}

	// First op(B)*X (the blocks of x) and the sampled rows in one read of
	// B, op(A)^T*Y (the blocks of y) and the sampled columns in one of A;
	// then op(A) and op(B)^T times those; then C0's share.
	aR, aC := p.aShape()
	bR, bC := p.bShape()
	jobs := fc.rowJobs(rows)
	var zJob, vJob *job
	if segR != nil {
		zJob = mulJob(p.tB, true, x, absOf(x))
		zJob.seg = segR
		jobs = append(jobs, zJob)
	}
	(&pass[T]{x: p.b, rows: bR, cols: bC, sanitize: bDirty, jobs: jobs}).run()
	fc.lines = fc.rowLines(rows, jobs[:len(rows)], p.c0, "")

	jobs = fc.colJobs(cols)
	if segL != nil {
		vJob = mulTJob(p.tA, true, y, absOf(y))
		vJob.seg = segL
		jobs = append(jobs, vJob)
	}
	(&pass[T]{x: p.a, rows: aR, cols: aC, sanitize: aDirty, jobs: jobs}).run()
	fc.lines = append(fc.lines, fc.colLines(cols, jobs[:len(cols)], p.c0, "")...)
	if segR == nil {
		return true
	}

	// The costly part: op(A) times each block of op(B)*X, and op(B)^T
	// times each of op(A)^T*Y. Rows of op(A) (columns of op(B)) with NaN or
	// Inf spoil only their own results, which are left out; op(B)*X and
	// op(A)^T*Y read them as 0.
	zv, za := blockVecs(zJob, k)
	wr, wra := mulRows(p.a, p.tA, m, k, zv, za)
	var wl, wla [][]float64
	if vJob != nil {
		vv, va := blockVecs(vJob, k)
		wl, wla = mulRows(p.b, !p.tB, n, k, vv, va)
	}

	var cx, cy *job
	if p.c0 != nil {
		cx = &job{clean: true, v: x, vAbs: absOf(x), seg: segR}
		jobs = []*job{cx}
		if segL != nil {
			cy = &job{axpy: true, clean: true, v: y, vAbs: absOf(y), seg: segL}
			jobs = append(jobs, cy)
		}
		(&pass[T]{x: p.c0, rows: m, cols: n, sanitize: c0Dirty, jobs: jobs}).run()
	}

	// want = alpha*product + beta*C0 share, and the bound likewise.
	safe := true
	put := func(want, bound []float64, e int, prod, prodAbs float64, c0 *job, c0e int) {
		w, b := al*prod, aAl*prodAbs
		if c0 != nil {
			w += be * c0.val[c0e]
			b += aBe * c0.abs[c0e]
		}
		want[e], bound[e] = w, b
		if !finite(w) || !(b <= math.MaxFloat64/8) {
			safe = false
		}
	}
	nbR := len(segR) - 1
	fc.right = blockProj{v: x, seg: segR, want: make([]float64, m*nbR), bound: make([]float64, m*nbR)}
	for i := range m {
		if fc.badRow[i] {
			continue
		}
		for q := range nbR {
			e := i*nbR + q
			put(fc.right.want, fc.right.bound, e, wr[q][i], wra[q][i], cx, e)
		}
	}
	if segL != nil {
		nbL := len(segL) - 1
		fc.left = blockProj{v: y, seg: segL, want: make([]float64, nbL*n), bound: make([]float64, nbL*n)}
		for q := range nbL {
			for j := range n {
				if !fc.badCol[j] {
					e := q*n + j
					put(fc.left.want, fc.left.bound, e, wl[q][j], wla[q][j], cy, e)
				}
			}
		}
	}
	return safe
}

// blockVecs returns the blocks of a segmented job's result over a matrix
// whose other side is K long, each as a vector of length K, with their
// magnitudes.
func blockVecs(j *job, K int) (val, abs [][]float64) {
	ns := j.nseg()
	val, abs = make([][]float64, ns), make([][]float64, ns)
	for q := range ns {
		if j.axpy { // j.val[q*K+p]
			val[q], abs[q] = j.val[q*K:(q+1)*K], j.abs[q*K:(q+1)*K]
			continue
		}
		val[q], abs[q] = make([]float64, K), make([]float64, K) // j.val[p*ns+q]
		for p := range K {
			val[q][p], abs[q][p] = j.val[p*ns+q], j.abs[p*ns+q]
		}
	}
	return val, abs
}

// wholeRows gives up the projections: rows are checked whole, within the
// budget, for the reason why; lines of NaN are still checked throughout.
func (fc *floatChecker[T]) wholeRows(why string, nanRow, nanCol []bool, budget float64, r *rand.Rand) {
	m, n := fc.p.m, fc.p.n
	fc.right, fc.left, fc.full, fc.lines = blockProj{}, blockProj{}, false, nil
	fc.nanRows, fc.nanCols = nil, nil
	var rows []int
	for i := range m {
		if nanRow[i] {
			fc.nanRows = append(fc.nanRows, i)
		} else {
			rows = append(rows, i)
		}
	}
	for j := range n {
		if nanCol[j] {
			fc.nanCols = append(fc.nanCols, j)
		}
	}
	fc.addBadLines(rows, nil, why, budget, r)
}

// addBadLines makes the references of the rows and columns that the
// projections leave out, to be checked whole: all of them when their cost
// fits in budget multiply-adds and their references in maxRefEntries, else
// a sample (see pickLines), and then the check is partial.
func (fc *floatChecker[T]) addBadLines(rows, cols []int, why string, budget float64, r *rand.Rand) {
	p := &fc.p
	m, n := p.m, p.n
	kk := float64(max(p.k, 1))
	pr, pc := pickLines(rows, cols, kk*float64(n), kk*float64(m), n, m, budget, r)
	aR, aC := p.aShape()
	bR, bC := p.bShape()
	for start := 0; start < len(pr); start += lineBatch {
		batch := pr[start:min(start+lineBatch, len(pr))]
		jobs := fc.rowJobs(batch)
		(&pass[T]{x: p.b, rows: bR, cols: bC, jobs: jobs}).run()
		fc.lines = append(fc.lines, fc.rowLines(batch, jobs, p.c0, why)...)
	}
	for start := 0; start < len(pc); start += lineBatch {
		batch := pc[start:min(start+lineBatch, len(pc))]
		jobs := fc.colJobs(batch)
		(&pass[T]{x: p.a, rows: aR, cols: aC, jobs: jobs}).run()
		fc.lines = append(fc.lines, fc.colLines(batch, jobs, p.c0, why)...)
	}
	if len(pr) < len(rows) || len(pc) < len(cols) {
		what := fmt.Sprintf("%d of the %d rows", len(pr), len(rows))
		if len(cols) > 0 {
			what += fmt.Sprintf(" and %d of the %d columns", len(pc), len(cols))
		}
		fc.partial = fmt.Sprintf("partial check: only %s left out of the projections (%s) were checked whole, within a budget of %.3g multiply-adds; the rest went unchecked", what, why, budget)
	}
}

// pickLines returns which of rows (costing rowCost multiply-adds and rowLen
// stored references each) and cols (colCost, colLen) to check whole, in
// increasing order: all of them when they fit in budget and maxRefEntries;
// else the first and the last of each whatever they cost, then others drawn
// at random from r, a row and a column in turn, while they fit.
func pickLines(rows, cols []int, rowCost, colCost float64, rowLen, colLen int, budget float64, r *rand.Rand) (pr, pc []int) {
	order := func(ls []int) []int {
		out := slices.Clone(ls)
		if len(out) > 2 {
			out[1], out[len(out)-1] = out[len(out)-1], out[1]
			mid := out[2:]
			r.Shuffle(len(mid), func(i, j int) { mid[i], mid[j] = mid[j], mid[i] })
		}
		return out
	}
	ro, co := order(rows), order(cols)
	nr, nc := min(2, len(ro)), min(2, len(co))
	work := float64(nr)*rowCost + float64(nc)*colCost
	kept := nr*rowLen + nc*colLen
	for {
		more := false
		if nr < len(ro) && work+rowCost <= budget && kept+rowLen <= maxRefEntries {
			nr, work, kept, more = nr+1, work+rowCost, kept+rowLen, true
		}
		if nc < len(co) && work+colCost <= budget && kept+colLen <= maxRefEntries {
			nc, work, kept, more = nc+1, work+colCost, kept+colLen, true
		}
		if !more {
			break
		}
	}
	pr, pc = ro[:nr], co[:nc]
	slices.Sort(pr)
	slices.Sort(pc)
	return pr, pc
}

// scanOp marks the rows of op(X) (r x c; X, or X^T when trans, X then
// c x r) that hold NaN in nan and those that hold +Inf or -Inf in inf (which
// may be nan itself), and returns the largest magnitude of the finite
// entries and whether any was not finite. Parts of X's rows are scanned in
// parallel, each marking its own copies (made only when it finds a
// non-finite entry).
func scanOp[T amp.Element](trans bool, r, c int, x []T, nan, inf []bool) (maxAbs float64, dirty bool) {
	rows, cols := r, c
	if trans {
		rows, cols = c, r
	}
	type found struct {
		maxAbs   float64
		nan, inf []bool
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
			if f.nan == nil {
				f.nan, f.inf = make([]bool, r), make([]bool, r)
			}
			for j, v := range row {
				line := i
				if trans {
					line = j
				}
				a := math.Abs(float64(v))
				switch {
				case a != a:
					f.nan[line] = true
				case a > math.MaxFloat64:
					f.inf[line] = true
				case a > f.maxAbs:
					f.maxAbs = a
				}
			}
		}
	})
	for _, f := range res {
		maxAbs = max(maxAbs, f.maxAbs)
		if f.nan != nil {
			dirty = true
			for i := range r {
				nan[i] = nan[i] || f.nan[i]
				inf[i] = inf[i] || f.inf[i]
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
func (fc *floatChecker[T]) rowLines(rows []int, jobs []*job, c0 []T, why string) []wholeLine {
	n := fc.p.n
	lines := make([]wholeLine, len(rows))
	for q, i := range rows {
		var c0Row []T
		if c0 != nil {
			c0Row = c0[i*n : (i+1)*n]
		}
		lines[q] = fc.wholeLine(i, false, jobs[q], c0Row, 1, why)
	}
	return lines
}

// colLines is rowLines for columns.
func (fc *floatChecker[T]) colLines(cols []int, jobs []*job, c0 []T, why string) []wholeLine {
	n := fc.p.n
	lines := make([]wholeLine, len(cols))
	for q, j := range cols {
		var c0Col []T
		if c0 != nil {
			c0Col = c0[j:]
		}
		lines[q] = fc.wholeLine(j, true, jobs[q], c0Col, n, why)
	}
	return lines
}

// wholeLine makes one line's references from its job; the line's elements
// of C0 are c0[0], c0[stride], ...
func (fc *floatChecker[T]) wholeLine(idx int, col bool, j *job, c0 []T, stride int, why string) wholeLine {
	al, be := float64(fc.p.alpha), float64(fc.p.beta)
	l := wholeLine{idx: idx, col: col, want: make([]float64, len(j.val)), bound: make([]float64, len(j.val)), why: why}
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

// check checks c (see MatMulChecker.Check): one pass over C for the
// projections, then the lines checked whole, in O(m*n) whatever the data.
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
	if fc.right.nb() > 0 {
		fc.checkProjections(c, &t)
	}
	for _, l := range fc.lines {
		if l.col {
			fc.checkCol(c, l, &t)
		} else {
			fc.checkRow(c, l, &t)
		}
	}
	nan := math.NaN()
	isNaN := func(g float64) float64 {
		if g != g {
			return 0
		}
		return inf
	}
	for _, i := range fc.nanRows {
		for j, v := range c[i*n : (i+1)*n] {
			g := float64(v)
			t.see(isNaN(g), site{kind: siteRow, row: i, col: j, why: whyNaN}, g, nan)
		}
	}
	for _, j := range fc.nanCols {
		for i := range m {
			g := float64(c[i*n+j])
			t.see(isNaN(g), site{kind: siteCol, row: i, col: j, why: whyNaN}, g, nan)
		}
	}
	res := t.result(fc.tol)
	if fc.partial != "" {
		res.Partial = true
		res.Where += "; " + fc.partial
	}
	return res
}

// checkProjections computes C*X and Y^T*C, the blocked projections, in one
// read of C and compares them.
func (fc *floatChecker[T]) checkProjections(c []T, t *tracker) {
	m, n := fc.p.m, fc.p.n
	if fc.full {
		// x = 1 and a column a block: C*X is C itself, read in place, in
		// parts of rows whose worst are taken in order (so that ties go
		// to the first, as in one pass).
		pr := &fc.right
		parts := partsOf(m, n)
		worst := make([]tracker, parts)
		forParts(parts, func(q int) {
			pt := &worst[q]
			for i := q * m / parts; i < (q+1)*m/parts; i++ {
				if fc.badRow[i] {
					continue
				}
				for j, v := range c[i*n : (i+1)*n] {
					if !fc.badCol[j] {
						g, e := float64(v), i*n+j
						if err := fc.pRight.judge(g, pr.want[e], pr.bound[e]); pt.worse(err) {
							pt.see(err, site{kind: siteElem, row: i, col: j}, g, pr.want[e])
						}
					}
				}
			}
		})
		for _, pt := range worst {
			if pt.at.kind != siteNone {
				t.see(pt.worst, pt.at, pt.got, pt.want)
			}
		}
		return
	}
	jr := &job{clean: true, v: fc.right.v, seg: fc.right.seg}
	jobs := []*job{jr}
	var jl *job
	if fc.left.nb() > 0 {
		jl = &job{axpy: true, clean: true, v: fc.left.v, seg: fc.left.seg}
		jobs = append(jobs, jl)
	}
	ps := &pass[T]{x: c, rows: m, cols: n, zeroCols: fc.badCols, jobs: jobs}
	if slices.Contains(fc.badRow, true) {
		ps.skipRows = fc.badRow
	}
	ps.run()
	pr, nb := &fc.right, fc.right.nb()
	for i := range m {
		if fc.badRow[i] {
			continue
		}
		for q := range nb {
			e := i*nb + q
			if err := fc.pRight.judge(jr.val[e], pr.want[e], pr.bound[e]); t.worse(err) {
				t.see(err, site{kind: siteRight, row: i, col: -1, blk: q, nb: nb, lo: pr.seg[q], hi: pr.seg[q+1]}, jr.val[e], pr.want[e])
			}
		}
	}
	if jl == nil {
		return
	}
	pl, nb := &fc.left, fc.left.nb()
	for q := range nb {
		for j := range n {
			if !fc.badCol[j] {
				e := q*n + j
				if err := fc.pLeft.judge(jl.val[e], pl.want[e], pl.bound[e]); t.worse(err) {
					t.see(err, site{kind: siteLeft, row: -1, col: j, blk: q, nb: nb, lo: pl.seg[q], hi: pl.seg[q+1]}, jl.val[e], pl.want[e])
				}
			}
		}
	}
}

func (fc *floatChecker[T]) checkRow(c []T, l wholeLine, t *tracker) {
	n := fc.p.n
	for j, v := range c[l.idx*n : (l.idx+1)*n] {
		g := float64(v)
		if e := fc.pEl.judge(g, l.want[j], l.bound[j]); t.worse(e) {
			t.see(e, site{kind: siteRow, row: l.idx, col: j, why: l.why}, g, l.want[j])
		}
	}
}

func (fc *floatChecker[T]) checkCol(c []T, l wholeLine, t *tracker) {
	n := fc.p.n
	for i := range fc.p.m {
		g := float64(c[i*n+l.idx])
		if e := fc.pEl.judge(g, l.want[i], l.bound[i]); t.worse(e) {
			t.see(e, site{kind: siteCol, row: i, col: l.idx, why: l.why}, g, l.want[i])
		}
	}
}
