package opt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// reduceStrength replaces the 64-bit address arithmetic of a loop's
// memory accesses by pointers stepped once an iteration: strength
// reduction. A view element's address base + (i*stride + j)*size, with i
// the loop's induction variable, becomes a new induction variable p that
// starts at base + (i0*stride + j)*size and grows by step*stride*size, so
// that an iteration adds to a pointer instead of multiplying 64-bit
// integers (several instructions each on a GPU). Accesses whose addresses
// differ by a constant (the iterations of an unrolled loop, the elements
// of a row) share one pointer and add their constant offsets, which the
// back end's compiler folds into the load's address.
//
// The rewrite is exact: 64-bit integers wrap, and a + b*i is the same in
// the ring of integers modulo 2^64 however it is computed.
func reduceStrength(f *ir.Func) {
	idom := f.Dominators()
	changed := false
	for _, h := range slices.Clone(f.Blocks) {
		if reduceLoop(f, idom, h) {
			changed = true
		}
	}
	if changed {
		resolveCopies(f)
		deadCode(f)
	}
}

// dominates reports whether a dominates b.
func dominates(idom map[*ir.Block]*ir.Block, a, b *ir.Block) bool {
	for {
		if a == b {
			return true
		}
		d, ok := idom[b]
		if !ok || d == b {
			return false
		}
		b = d
	}
}

// naturalLoop is the set of blocks of the loop with header h and back
// edge from latch: those that reach latch without passing through h.
func naturalLoop(h, latch *ir.Block) map[*ir.Block]bool {
	in := map[*ir.Block]bool{h: true}
	work := []*ir.Block{latch}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if in[b] {
			continue
		}
		in[b] = true
		work = append(work, b.Preds...)
	}
	return in
}

// lin is a loop-invariant 64-bit integer: k + sum of c*x over its terms,
// each x a value computed before the loop (or a product of such values).
type lin struct {
	k     int64
	terms map[*ir.Value]int64
}

func constLin(k int64) lin { return lin{k: k} }

func (a lin) isConst() bool { return len(a.terms) == 0 }

func (a lin) isZero() bool { return a.k == 0 && a.isConst() }

func (a lin) add(b lin, sign int64) lin {
	r := lin{k: a.k + sign*b.k, terms: map[*ir.Value]int64{}}
	for x, c := range a.terms {
		r.terms[x] += c
	}
	for x, c := range b.terms {
		r.terms[x] += sign * c
	}
	for x, c := range r.terms {
		if c == 0 {
			delete(r.terms, x)
		}
	}
	return r
}

func (a lin) scale(m int64) lin {
	r := lin{k: a.k * m, terms: map[*ir.Value]int64{}}
	if m == 0 {
		return lin{}
	}
	for x, c := range a.terms {
		r.terms[x] = c * m
	}
	return r
}

// key names the terms (not k): lins with equal keys differ by a constant.
func (a lin) key() string {
	var parts []string
	for x, c := range a.terms {
		parts = append(parts, fmt.Sprintf("%d*v%d", c, x.ID))
	}
	slices.Sort(parts)
	return strings.Join(parts, "+")
}

// affine is a value of the loop as a*iv + b, iv the value of an induction
// variable's phi in the current iteration.
type affine struct {
	iv   *ir.Value // nil: b alone, invariant
	a, b lin
}

// loopReducer holds what one loop's strength reduction works with.
type loopReducer struct {
	f        *ir.Func
	h, pre   *ir.Block
	latch    *ir.Block
	preIdx   int
	in       map[*ir.Block]bool
	forms    map[*ir.Value]*affine // nil entry: not affine
	steps    map[*ir.Value]lin     // induction variable -> its step
	products map[[2]*ir.Value]*ir.Value
	made     map[*ir.Value]*ir.Value // value -> its conversion to U64/I64 in pre
}

func is64(t ir.Type) bool { return t == ir.I64 || t == ir.U64 }

func reduceLoop(f *ir.Func, idom map[*ir.Block]*ir.Block, h *ir.Block) bool {
	if len(h.Preds) != 2 {
		return false
	}
	r := &loopReducer{f: f, h: h, forms: map[*ir.Value]*affine{}, steps: map[*ir.Value]lin{},
		products: map[[2]*ir.Value]*ir.Value{}, made: map[*ir.Value]*ir.Value{}}
	for i, p := range h.Preds {
		if dominates(idom, h, p) {
			r.latch = p
		} else {
			r.pre, r.preIdx = p, i
		}
	}
	if r.latch == nil || r.pre == nil || r.latch.Kind != ir.Jump || r.pre.Kind == ir.Return {
		return false
	}
	if r.pre.Kind != ir.Jump {
		// The values computed before the loop go in a block of their own
		// on the edge into it, run once a time the loop is entered: pre
		// may be another loop's header, run every iteration of that loop.
		r.pre = splitEdge(f, r.pre, h, r.preIdx)
	}
	r.in = naturalLoop(h, r.latch)
	// A loop with a barrier is a loop over tiles: its few global accesses
	// an iteration are outweighed by the tile's shared-memory work, and
	// pointers kept across that work take registers, which can cost the
	// multiprocessor a tile (measured: 16x16 float32 tiles lost up to a
	// fifth of their speed, 32x32 a sixth). Unless the kernel fixed how
	// many tiles a multiprocessor holds (blocks=): then the registers are
	// budgeted anyway, and the pointers won (32x32 tiles: 1.17 to 1.05
	// times the CUDA C twin's time).
	if f.MinBlocks == 0 {
		for b := range r.in {
			for _, v := range b.Values {
				if v.Op == ir.OpBarrier {
					return false
				}
			}
		}
	}
	latchIdx := 1 - r.preIdx
	// Induction variables: phis of h that the loop steps by an invariant.
	for _, v := range h.Values {
		if v.Op != ir.OpPhi || !is64(v.Type) {
			continue
		}
		r.forms[v] = &affine{iv: v, a: constLin(1)}
	}
	for _, v := range h.Values {
		if v.Op != ir.OpPhi || !is64(v.Type) {
			continue
		}
		next := r.form(v.Args[latchIdx])
		if next == nil || next.iv != v || next.a.k != 1 || !next.a.isConst() || next.b.isZero() {
			r.forms[v] = nil
			continue
		}
		r.steps[v] = next.b
	}
	// Other phis of h are not affine; those that failed above were
	// recorded as nil. A form computed before that used them is stale:
	// start over with only the induction variables.
	for v := range r.forms {
		if v.Op != ir.OpPhi || r.forms[v] == nil {
			delete(r.forms, v)
		}
	}
	if len(r.steps) == 0 {
		return false
	}
	// Roots: addresses the loop computes as a*iv + b with a not 1 (the
	// cheap i + j is left alone), used other than by more arithmetic.
	type group struct {
		form *affine
		phi  *ir.Value
		typ  ir.Type
	}
	groups := map[string]*group{}
	var order []string
	var roots []*ir.Value
	for _, b := range f.Blocks {
		if !r.in[b] {
			continue
		}
		for _, v := range b.Values {
			for _, x := range v.Args {
				if v.Op == ir.OpLoad || v.Op == ir.OpStore || v.Op == ir.OpAtomic || v.Op == ir.OpSelect {
					if x.Op != ir.OpPhi && r.in[x.Block] && is64(x.Type) && !slices.Contains(roots, x) {
						if fm := r.form(x); fm != nil && fm.iv != nil && !(fm.a.isConst() && fm.a.k == 1) {
							roots = append(roots, x)
						}
					}
				}
			}
		}
	}
	if len(roots) == 0 {
		return false
	}
	for _, x := range roots {
		fm := r.form(x)
		key := fmt.Sprintf("%d|%s|%d|%s|%s", fm.iv.ID, fm.a.key(), fm.a.k, fm.b.key(), x.Type)
		g, ok := groups[key]
		if !ok {
			g = &group{form: fm, typ: x.Type}
			groups[key] = g
			order = append(order, key)
		}
		_ = g
	}
	for _, key := range order {
		g := groups[key]
		iv := g.form.iv
		init := r.lift(iv.Args[r.preIdx])
		start := r.mulLin(g.form.a, init).add(g.form.b, 1)
		step := r.mulLin(g.form.a, r.steps[iv])
		p := h.AddPhi(g.typ)
		p.Args = make([]*ir.Value, 2)
		p.Args[r.preIdx] = r.materialize(start, g.typ)
		stepV := r.materialize(step, g.typ)
		next := r.latch.Add(ir.OpAdd, g.typ, p, stepV)
		p.Args[latchIdx] = next
		g.phi = p
	}
	for _, x := range roots {
		fm := r.form(x)
		key := fmt.Sprintf("%d|%s|%d|%s|%s", fm.iv.ID, fm.a.key(), fm.a.k, fm.b.key(), x.Type)
		g := groups[key]
		d := fm.b.k - g.form.b.k
		if d == 0 {
			replace(x, g.phi)
			continue
		}
		x.Op, x.Aux, x.Const = ir.OpAdd, 0, 0
		off := r.f.NewValue(x.Block, ir.OpConst, x.Type)
		off.Const = uint64(d)
		insertBefore(x, off)
		x.Args = []*ir.Value{g.phi, off}
	}
	return true
}

// splitEdge puts a new block on the edge from pred to h, h's predecessor
// number i, and returns it.
func splitEdge(f *ir.Func, pred, h *ir.Block, i int) *ir.Block {
	b := f.NewBlock()
	b.Kind = ir.Jump
	b.Succs = []*ir.Block{h}
	b.Preds = []*ir.Block{pred}
	for j, s := range pred.Succs {
		if s == h {
			pred.Succs[j] = b
			break
		}
	}
	h.Preds[i] = b
	return b
}

// insertBefore puts v in x's block just before x.
func insertBefore(x, v *ir.Value) {
	b := x.Block
	i := slices.Index(b.Values, x)
	b.Values = slices.Insert(b.Values, i, v)
}

// lift is the invariant value x as a lin.
func (r *loopReducer) lift(x *ir.Value) lin {
	if k, ok := x.ConstInt(); ok && is64(x.Type) {
		return constLin(k)
	}
	return lin{terms: map[*ir.Value]int64{x: 1}}
}

// form is v as an affine function of an induction variable of the loop,
// or nil if it is not one (or not worth following).
func (r *loopReducer) form(v *ir.Value) *affine {
	if fm, ok := r.forms[v]; ok {
		return fm
	}
	r.forms[v] = nil // cycles through non-induction phis end here
	fm := r.compute(v)
	r.forms[v] = fm
	return fm
}

func (r *loopReducer) compute(v *ir.Value) *affine {
	if !is64(v.Type) {
		return nil
	}
	if !r.in[v.Block] {
		return &affine{b: r.lift(v)}
	}
	switch v.Op {
	case ir.OpConst:
		k, _ := v.ConstInt()
		return &affine{b: constLin(k)}
	case ir.OpConvert, ir.OpBitcast:
		if !is64(v.Args[0].Type) {
			return nil
		}
		return r.form(v.Args[0])
	case ir.OpAdd, ir.OpSub:
		x, y := r.form(v.Args[0]), r.form(v.Args[1])
		if x == nil || y == nil || (x.iv != nil && y.iv != nil && x.iv != y.iv) {
			return nil
		}
		sign := int64(1)
		if v.Op == ir.OpSub {
			sign = -1
		}
		iv := x.iv
		if iv == nil {
			iv = y.iv
		}
		return &affine{iv: iv, a: x.a.add(y.a, sign), b: x.b.add(y.b, sign)}
	case ir.OpNeg:
		x := r.form(v.Args[0])
		if x == nil {
			return nil
		}
		return &affine{iv: x.iv, a: x.a.scale(-1), b: x.b.scale(-1)}
	case ir.OpMul:
		x, y := r.form(v.Args[0]), r.form(v.Args[1])
		if x == nil || y == nil || (x.iv != nil && y.iv != nil) {
			return nil
		}
		if x.iv == nil {
			x, y = y, x
		}
		// y is invariant.
		return &affine{iv: x.iv, a: r.mulLin(x.a, y.b), b: r.mulLin(x.b, y.b)}
	case ir.OpShl:
		x := r.form(v.Args[0])
		s, ok := v.Args[1].ConstInt()
		if x == nil || !ok || s < 0 || s > 62 {
			return nil
		}
		return &affine{iv: x.iv, a: x.a.scale(1 << s), b: x.b.scale(1 << s)}
	}
	return nil
}

// mulLin multiplies two lins; a product of two values becomes a new term,
// a multiplication placed before the loop.
func (r *loopReducer) mulLin(x, y lin) lin {
	out := constLin(x.k * y.k)
	out.terms = map[*ir.Value]int64{}
	add := func(v *ir.Value, c int64) {
		if c == 0 {
			return
		}
		out.terms[v] += c
		if out.terms[v] == 0 {
			delete(out.terms, v)
		}
	}
	for v, c := range x.terms {
		add(v, c*y.k)
	}
	for v, c := range y.terms {
		add(v, c*x.k)
	}
	for u, c := range x.terms {
		for v, d := range y.terms {
			add(r.product(u, v), c*d)
		}
	}
	return out
}

// product is u*v, computed at the end of the preheader once.
func (r *loopReducer) product(u, v *ir.Value) *ir.Value {
	if u.ID > v.ID {
		u, v = v, u
	}
	k := [2]*ir.Value{u, v}
	if p, ok := r.products[k]; ok {
		return p
	}
	p := r.pre.Add(ir.OpMul, ir.I64, r.as(u, ir.I64), r.as(v, ir.I64))
	r.products[k] = p
	return p
}

// as is x as a 64-bit integer of type t, converted at the end of the
// preheader if need be.
func (r *loopReducer) as(x *ir.Value, t ir.Type) *ir.Value {
	if x.Type == t {
		return x
	}
	if c, ok := r.made[x]; ok && c.Type == t {
		return c
	}
	c := r.pre.Add(ir.OpConvert, t, x)
	r.made[x] = c
	return c
}

// materialize computes l at the end of the preheader, in type t.
func (r *loopReducer) materialize(l lin, t ir.Type) *ir.Value {
	terms := make([]*ir.Value, 0, len(l.terms))
	for v := range l.terms {
		terms = append(terms, v)
	}
	slices.SortFunc(terms, func(a, b *ir.Value) int { return a.ID - b.ID })
	var sum *ir.Value
	for _, v := range terms {
		x := r.as(v, t)
		if c := l.terms[v]; c != 1 {
			x = r.pre.Add(ir.OpMul, t, x, r.pre.Const(t, c))
		}
		if sum == nil {
			sum = x
		} else {
			sum = r.pre.Add(ir.OpAdd, t, sum, x)
		}
	}
	switch {
	case sum == nil:
		return r.pre.Const(t, l.k)
	case l.k != 0:
		return r.pre.Add(ir.OpAdd, t, sum, r.pre.Const(t, l.k))
	}
	return sum
}
