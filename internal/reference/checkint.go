package reference

import (
	"fmt"
	"math/rand/v2"

	"github.com/goamp/goamp/amp"
)

// intRight is the number of right projections of int32 results, against
// one left, unblocked (see check.go).
const intRight = 2

// intChecker checks int32 results exactly, in the wrapping arithmetic of
// type T (see check.go). Its code is generic so that it shares problem with
// the float checker; only int32 reaches it.
type intChecker[T amp.Element] struct {
	p           problem[T]
	right, left []intProjection[T]
	rows, cols  []intLine[T]
}

// intProjection is a random vector and the product's projection on it.
type intProjection[T amp.Element] struct{ v, want []T }

// intLine is a row's or column's exact values.
type intLine[T amp.Element] struct {
	idx  int
	want []T
}

func newIntChecker[T amp.Element](p problem[T], r *rand.Rand) *intChecker[T] {
	m, n := p.m, p.n
	ic := &intChecker[T]{p: p}
	if m == 0 || n == 0 {
		return ic
	}
	// Uniform over all 2^32 values: an error that is odd in some element
	// then moves the projection but with probability 2^-32.
	random := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = T(int32(r.Uint32()))
		}
		return v
	}
	var xs [intRight][]T
	for t := range xs {
		xs[t] = random(n)
	}
	y := random(m)
	rows, cols := sampleLines(m, r), sampleLines(n, r)

	aR, aC := p.aShape()
	bR, bC := p.bShape()
	var jobs []*intJob[T]
	for _, i := range rows { // row i of op(A)*op(B) = op(B)^T * row i of op(A)
		jobs = append(jobs, &intJob[T]{axpy: !p.tB, v: lineOf(p.tA, m, p.k, p.a, i)})
	}
	var bx [intRight]*intJob[T]
	for t := range xs {
		bx[t] = &intJob[T]{axpy: p.tB, v: xs[t]}
		jobs = append(jobs, bx[t])
	}
	(&intPass[T]{x: p.b, rows: bR, cols: bC, jobs: jobs}).run()
	for q, i := range rows {
		ic.rows = append(ic.rows, ic.line(i, jobs[q].val, p.c0, i*n, 1))
	}

	jobs = nil
	for _, j := range cols { // column j = op(A) * column j of op(B)
		jobs = append(jobs, &intJob[T]{axpy: p.tA, v: lineOf(!p.tB, n, p.k, p.b, j)})
	}
	ay := &intJob[T]{axpy: !p.tA, v: y}
	(&intPass[T]{x: p.a, rows: aR, cols: aC, jobs: append(jobs, ay)}).run()
	for q, j := range cols {
		ic.cols = append(ic.cols, ic.line(j, jobs[q].val, p.c0, j, n))
	}

	var abx [intRight]*intJob[T]
	jobs = nil
	for t := range xs {
		abx[t] = &intJob[T]{axpy: p.tA, v: bx[t].val}
		jobs = append(jobs, abx[t])
	}
	(&intPass[T]{x: p.a, rows: aR, cols: aC, jobs: jobs}).run()
	bay := &intJob[T]{axpy: !p.tB, v: ay.val}
	(&intPass[T]{x: p.b, rows: bR, cols: bC, jobs: []*intJob[T]{bay}}).run()

	var cx [intRight]*intJob[T]
	var cy *intJob[T]
	if p.c0 != nil {
		jobs = nil
		for t := range xs {
			cx[t] = &intJob[T]{v: xs[t]}
			jobs = append(jobs, cx[t])
		}
		cy = &intJob[T]{axpy: true, v: y}
		(&intPass[T]{x: p.c0, rows: m, cols: n, jobs: append(jobs, cy)}).run()
	}
	combine := func(v []T, prod, c0 *intJob[T]) intProjection[T] {
		pr := intProjection[T]{v: v, want: make([]T, len(prod.val))}
		for i, s := range prod.val {
			pr.want[i] = p.alpha * s
			if c0 != nil {
				pr.want[i] += p.beta * c0.val[i]
			}
		}
		return pr
	}
	for t := range xs {
		var c0x *intJob[T]
		if p.c0 != nil {
			c0x = cx[t]
		}
		ic.right = append(ic.right, combine(xs[t], abx[t], c0x))
	}
	ic.left = append(ic.left, combine(y, bay, cy))
	ic.p.a, ic.p.b, ic.p.c0 = nil, nil, nil // Check will not read them
	return ic
}

// line makes a row's or column's values, alpha*sum + beta*C0 as MatMulErrors
// has them; the line's elements of C0 are c0[off], c0[off+stride], ...
func (ic *intChecker[T]) line(idx int, sums []T, c0 []T, off, stride int) intLine[T] {
	l := intLine[T]{idx: idx, want: make([]T, len(sums))}
	for q, s := range sums {
		l.want[q] = ic.p.alpha * s
		if c0 != nil {
			l.want[q] += ic.p.beta * c0[off+q*stride]
		}
	}
	return l
}

// lineOf returns row i of op(X), op(X) = X (r x c) or, when trans, X^T (X
// then c x r).
func lineOf[T amp.Element](trans bool, r, c int, x []T, i int) []T {
	if !trans {
		return x[i*c : (i+1)*c]
	}
	out := make([]T, c)
	for q := range c {
		out[q] = x[q*r+i]
	}
	return out
}

func (ic *intChecker[T]) check(c []T) MatMulCheck {
	m, n := ic.p.m, ic.p.n
	if len(c) < m*n {
		panic(fmt.Sprintf("reference: result of %d elements for %dx%d", len(c), m, n))
	}
	c = c[:m*n]
	var t tracker
	if m == 0 || n == 0 {
		return t.result(0)
	}
	eq := func(g, w T) float64 {
		if g == w {
			return 0
		}
		return inf
	}
	var jobs []*intJob[T]
	for _, pr := range ic.right {
		jobs = append(jobs, &intJob[T]{v: pr.v})
	}
	for _, pr := range ic.left {
		jobs = append(jobs, &intJob[T]{axpy: true, v: pr.v})
	}
	(&intPass[T]{x: c, rows: m, cols: n, jobs: jobs}).run()
	for q, pr := range ic.right {
		for i, g := range jobs[q].val {
			t.see(eq(g, pr.want[i]), site{kind: siteRight, vec: q, nVec: len(ic.right), row: i, col: -1}, float64(g), float64(pr.want[i]))
		}
	}
	for q, pr := range ic.left {
		for j, g := range jobs[len(ic.right)+q].val {
			t.see(eq(g, pr.want[j]), site{kind: siteLeft, vec: q, nVec: len(ic.left), row: -1, col: j}, float64(g), float64(pr.want[j]))
		}
	}
	for _, l := range ic.rows {
		for j, g := range c[l.idx*n : (l.idx+1)*n] {
			t.see(eq(g, l.want[j]), site{kind: siteRow, row: l.idx, col: j}, float64(g), float64(l.want[j]))
		}
	}
	for _, l := range ic.cols {
		for i := range m {
			g := c[i*n+l.idx]
			t.see(eq(g, l.want[i]), site{kind: siteCol, row: i, col: l.idx}, float64(g), float64(l.want[i]))
		}
	}
	return t.result(0)
}

// intJob is one vector through an intPass: X*v, or X^T*v when axpy.
type intJob[T amp.Element] struct {
	axpy   bool
	v, val []T
}

// intPass is pass for exact wrapping arithmetic: no rounding, so no blocks
// and no pairs, and the parts' sums may be added in any order.
type intPass[T amp.Element] struct {
	x          []T
	rows, cols int
	jobs       []*intJob[T]
}

func (p *intPass[T]) run() {
	for _, j := range p.jobs {
		if j.axpy {
			j.val = make([]T, p.cols)
		} else {
			j.val = make([]T, p.rows)
		}
	}
	if p.rows == 0 || p.cols == 0 || len(p.jobs) == 0 {
		return
	}
	parts := partsOf(p.rows, p.cols)
	acc := make([][][]T, parts)
	forParts(parts, func(q int) { acc[q] = p.runPart(q*p.rows/parts, (q+1)*p.rows/parts) })
	for ji, j := range p.jobs {
		if j.axpy {
			for q := range parts {
				for c, s := range acc[q][ji] {
					j.val[c] += s
				}
			}
		}
	}
}

func (p *intPass[T]) runPart(lo, hi int) [][]T {
	cols := p.cols
	acc := make([][]T, len(p.jobs))
	for ji, j := range p.jobs {
		if j.axpy {
			acc[ji] = make([]T, cols)
		}
	}
	for i := lo; i < hi; i++ {
		row := p.x[i*cols : (i+1)*cols]
		for ji, j := range p.jobs {
			if j.axpy {
				w, out := j.v[i], acc[ji][:len(row)]
				for c, x := range row {
					out[c] += x * w
				}
				continue
			}
			v := j.v[:len(row)]
			var s T
			for c, x := range row {
				s += x * v[c]
			}
			j.val[i] = s
		}
	}
	return acc
}
