package opt

import (
	"math"
	"math/bits"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// interval is a closed range of integer values; full means nothing is known.
type interval struct {
	lo, hi int64
	full   bool
}

var unknown = interval{full: true}

func point(x int64) interval { return interval{lo: x, hi: x} }

// typeRange is what a value of type t can hold, as far as int64 can say.
func typeRange(t ir.Type) interval {
	switch t {
	case ir.I32:
		return interval{lo: math.MinInt32, hi: math.MaxInt32}
	case ir.U32:
		return interval{lo: 0, hi: math.MaxUint32}
	case ir.Bool:
		return interval{lo: 0, hi: 1}
	}
	return unknown
}

func (a interval) union(b interval) interval {
	if a.full || b.full {
		return unknown
	}
	return interval{lo: min(a.lo, b.lo), hi: max(a.hi, b.hi)}
}

func (a interval) intersect(b interval) interval {
	switch {
	case a.full:
		return b
	case b.full:
		return a
	}
	return interval{lo: max(a.lo, b.lo), hi: min(a.hi, b.hi)}
}

// fits reports whether a lies within the values of t.
func (a interval) fits(t ir.Type) bool {
	if a.full {
		return false
	}
	switch t {
	case ir.I32:
		return a.lo >= math.MinInt32 && a.hi <= math.MaxInt32
	case ir.U32:
		return a.lo >= 0 && a.hi <= math.MaxUint32
	case ir.U64:
		return a.lo >= 0
	case ir.I64:
		return true
	}
	return false
}

// clip is a as a value of type t: itself if it fits, else all of t.
func (a interval) clip(t ir.Type) interval {
	if a.fits(t) {
		return a
	}
	return typeRange(t)
}

func addOK(x, y int64) (int64, bool) {
	s := x + y
	return s, (s > x) == (y > 0) || y == 0
}

func mulOK(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(uint64(abs(x)), uint64(abs(y)))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	p := int64(lo)
	if (x < 0) != (y < 0) {
		p = -p
	}
	return p, true
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func (a interval) add(b interval) interval {
	if a.full || b.full || a.lo == math.MinInt64 || b.lo == math.MinInt64 {
		return unknown
	}
	lo, ok1 := addOK(a.lo, b.lo)
	hi, ok2 := addOK(a.hi, b.hi)
	if !ok1 || !ok2 {
		return unknown
	}
	return interval{lo: lo, hi: hi}
}

func (a interval) neg() interval {
	if a.full || a.lo == math.MinInt64 {
		return unknown
	}
	return interval{lo: -a.hi, hi: -a.lo}
}

func (a interval) mul(b interval) interval {
	if a.full || b.full || a.lo == math.MinInt64 || b.lo == math.MinInt64 {
		return unknown
	}
	out := interval{lo: math.MaxInt64, hi: math.MinInt64}
	for _, x := range []int64{a.lo, a.hi} {
		for _, y := range []int64{b.lo, b.hi} {
			p, ok := mulOK(x, y)
			if !ok {
				return unknown
			}
			out.lo, out.hi = min(out.lo, p), max(out.hi, p)
		}
	}
	return out
}

// fact is a comparison known to hold in a block: x op y.
type fact struct {
	op   ir.Op
	x, y *ir.Value
}

// analysis holds the ranges of one function's values and the facts that
// hold in each block.
type analysis struct {
	f     *ir.Func
	idom  map[*ir.Block]*ir.Block
	rng   map[*ir.Value]interval
	facts map[*ir.Block][]fact
}

func analyze(f *ir.Func) *analysis {
	a := &analysis{f: f, idom: f.Dominators(), rng: map[*ir.Value]interval{}, facts: map[*ir.Block][]fact{}}
	order := f.ReversePostorder()
	// Facts: those of the immediate dominator, plus the branch condition
	// when the block is reached only through one edge of it.
	for _, b := range order {
		d := a.idom[b]
		if d == b {
			continue
		}
		fs := a.facts[d]
		if len(b.Preds) == 1 && b.Preds[0].Kind == ir.If && b.Preds[0].Succs[0] != b.Preds[0].Succs[1] {
			p := b.Preds[0]
			fs = append(append([]fact(nil), fs...), condFacts(p.Cond, b == p.Succs[0])...)
		}
		a.facts[b] = fs
	}
	// Ranges: first to a fixed point where a phi that keeps changing has
	// its moving bound widened to the type's limit (which ends the
	// iteration), then a few rounds without widening, which narrow the
	// widened bounds again through the branch facts (each round applied
	// to a sound result stays sound).
	changes := map[*ir.Value]int{}
	round := func(widen bool) bool {
		changed := false
		for _, b := range order {
			for _, v := range b.Values {
				if !isInt(v.Type) {
					continue
				}
				r := a.compute(v)
				old, seen := a.rng[v]
				if seen && old == r {
					continue
				}
				if widen && seen && v.Op == ir.OpPhi {
					changes[v]++
					if changes[v] > 2 {
						r = widenTo(old, r, v.Type)
					}
				}
				if !seen || old != r {
					a.rng[v] = r
					changed = true
				}
			}
		}
		return changed
	}
	for i := 0; i < 100 && round(true); i++ {
	}
	for range 4 {
		round(false)
	}
	return a
}

func isInt(t ir.Type) bool { return t.IsInt() }

// widenTo moves the bounds of r that grew past old's to the limits of t.
func widenTo(old, r interval, t ir.Type) interval {
	if r.full || old.full {
		return typeRange(t)
	}
	lim := typeRange(t)
	if lim.full {
		lim = interval{lo: math.MinInt64, hi: math.MaxInt64}
	}
	if r.lo < old.lo {
		r.lo = lim.lo
	}
	if r.hi > old.hi {
		r.hi = lim.hi
	}
	return r
}

// condFacts are the comparisons that hold when cond is taken (or not).
func condFacts(cond *ir.Value, taken bool) []fact {
	switch {
	case cond.Op == ir.OpAnd && taken:
		return append(condFacts(cond.Args[0], true), condFacts(cond.Args[1], true)...)
	case cond.Op == ir.OpOr && !taken:
		return append(condFacts(cond.Args[0], false), condFacts(cond.Args[1], false)...)
	case cond.Op == ir.OpNot:
		return condFacts(cond.Args[0], !taken)
	case cond.Op.IsCompare() && isInt(cond.Args[0].Type):
		op := cond.Op
		if !taken {
			op = negate(op)
		}
		return []fact{{op, cond.Args[0], cond.Args[1]}}
	}
	return nil
}

func negate(op ir.Op) ir.Op {
	switch op {
	case ir.OpEq:
		return ir.OpNe
	case ir.OpNe:
		return ir.OpEq
	case ir.OpLt:
		return ir.OpGe
	case ir.OpLe:
		return ir.OpGt
	case ir.OpGt:
		return ir.OpLe
	}
	return ir.OpLt // OpGe
}

// rangeOf is the range of v, without facts.
func (a *analysis) rangeOf(v *ir.Value) interval {
	if r, ok := a.rng[v]; ok {
		return r
	}
	if x, ok := v.ConstInt(); ok {
		return point(x).clip(v.Type) // a uint64 past MaxInt64 is unknown
	}
	return typeRange(v.Type)
}

// rangeAt is the range of v where block b runs: rangeOf narrowed by the
// facts that hold in b.
func (a *analysis) rangeAt(v *ir.Value, b *ir.Block) interval {
	r := a.rangeOf(v)
	for _, f := range a.facts[b] {
		r = r.intersect(a.bound(f, v, b, r))
	}
	if !r.full && r.lo > r.hi {
		// No value: the block cannot run. Say nothing rather than
		// compute with an empty range.
		return typeRange(v.Type)
	}
	return r
}

// bound narrows r, v's range, by one fact, when the fact is about v (or a
// value-preserving conversion of it) and compared with something of known
// range.
func (a *analysis) bound(f fact, v *ir.Value, b *ir.Block, r interval) interval {
	x, y, op := f.x, f.y, f.op
	if !sameValue(x, v, r) {
		if !sameValue(y, v, r) {
			return unknown
		}
		x, y, op = y, x, swap(op)
	}
	unsigned := !x.Type.IsSigned()
	ry := a.rangeOf(y) // no facts on y: keeps this from recursing
	if ry.full {
		return unknown
	}
	if unsigned && ry.lo < 0 {
		return unknown
	}
	out := unknown
	switch op {
	case ir.OpLt:
		out = interval{lo: math.MinInt64, hi: ry.hi - 1}
	case ir.OpLe:
		out = interval{lo: math.MinInt64, hi: ry.hi}
	case ir.OpGt, ir.OpGe:
		if x.Type == ir.U64 {
			// A uint64 above y may be 2^63 or more, past what an
			// interval of int64 holds: say nothing.
			return unknown
		}
		out = interval{lo: ry.lo, hi: math.MaxInt64}
		if op == ir.OpGt {
			out.lo = ry.lo + 1
		}
	case ir.OpEq:
		out = ry
	default:
		return unknown
	}
	if unsigned {
		// An unsigned x below y is also at least 0.
		out.lo = max(out.lo, 0)
	}
	return out
}

// sameValue reports whether x is v, or a conversion of v that keeps its
// value over v's range r.
func sameValue(x, v *ir.Value, r interval) bool {
	for {
		if x == v {
			return true
		}
		if x.Op != ir.OpConvert || !isInt(x.Args[0].Type) || !r.fits(x.Type) {
			return false
		}
		x = x.Args[0]
	}
}

func swap(op ir.Op) ir.Op {
	switch op {
	case ir.OpLt:
		return ir.OpGt
	case ir.OpLe:
		return ir.OpGe
	case ir.OpGt:
		return ir.OpLt
	case ir.OpGe:
		return ir.OpLe
	}
	return op
}

// compute is v's range from its operands' ranges where v is computed.
func (a *analysis) compute(v *ir.Value) interval {
	b := v.Block
	arg := func(i int) interval { return a.rangeAt(v.Args[i], b) }
	var r interval
	switch v.Op {
	case ir.OpConst:
		x, _ := v.ConstInt()
		return point(x).clip(v.Type)
	case ir.OpParam:
		if a.f.Params[v.Aux].NonNeg {
			if a.f.SmallIndices {
				return interval{lo: 0, hi: ir.MaxSmall}.clip(v.Type)
			}
			return interval{lo: 0, hi: ir.MaxNonNeg}.clip(v.Type)
		}
		return typeRange(v.Type)
	case ir.OpSpecial:
		return a.special(ir.Special(v.Aux))
	case ir.OpAdd:
		r = arg(0).add(arg(1))
	case ir.OpSub:
		r = arg(0).add(arg(1).neg())
	case ir.OpMul:
		r = arg(0).mul(arg(1))
	case ir.OpMin:
		x, y := arg(0), arg(1)
		if x.full || y.full || !v.Type.IsSigned() && (x.lo < 0 || y.lo < 0) {
			return typeRange(v.Type)
		}
		r = interval{lo: min(x.lo, y.lo), hi: min(x.hi, y.hi)}
	case ir.OpMax:
		x, y := arg(0), arg(1)
		if x.full || y.full || !v.Type.IsSigned() && (x.lo < 0 || y.lo < 0) {
			return typeRange(v.Type)
		}
		r = interval{lo: max(x.lo, y.lo), hi: max(x.hi, y.hi)}
	case ir.OpRem:
		x, y := arg(0), arg(1)
		if !x.full && x.lo >= 0 && !y.full && y.lo > 0 {
			r = interval{lo: 0, hi: min(x.hi, y.hi-1)}
		} else {
			return typeRange(v.Type)
		}
	case ir.OpAnd:
		x, y := arg(0), arg(1)
		switch {
		case !x.full && x.lo >= 0 && !y.full && y.lo >= 0:
			r = interval{lo: 0, hi: min(x.hi, y.hi)}
		case !y.full && y.lo >= 0:
			r = interval{lo: 0, hi: y.hi}
		case !x.full && x.lo >= 0:
			r = interval{lo: 0, hi: x.hi}
		default:
			return typeRange(v.Type)
		}
	case ir.OpShr:
		x, s := arg(0), arg(1)
		if !x.full && x.lo >= 0 && x.lo <= x.hi && !s.full && s.lo >= 0 && s.lo <= s.hi && s.hi < 64 {
			r = interval{lo: x.lo >> s.hi, hi: x.hi >> s.lo}
		} else {
			return typeRange(v.Type)
		}
	case ir.OpSelect:
		r = arg(1).union(arg(2))
	case ir.OpConvert:
		if !isInt(v.Args[0].Type) {
			return typeRange(v.Type)
		}
		r = arg(0)
	case ir.OpPhi:
		r = interval{lo: math.MaxInt64, hi: math.MinInt64}
		for i, x := range v.Args {
			rx, ok := a.rng[x]
			if !ok {
				if k, isConst := x.ConstInt(); isConst {
					rx = point(k)
				} else if x.Op == ir.OpParam || x.Op == ir.OpSpecial {
					rx = a.compute(x)
				} else {
					continue // not reached yet: a back edge on the first round
				}
			}
			rx = rx.intersect(a.factsOn(x, b.Preds[i], rx))
			r = r.union(rx)
			if r.full {
				break
			}
		}
		if !r.full && r.lo > r.hi {
			return typeRange(v.Type)
		}
	default:
		return typeRange(v.Type)
	}
	return r.clip(v.Type)
}

// factsOn narrows rx, x's range, by the facts of block p.
func (a *analysis) factsOn(x *ir.Value, p *ir.Block, rx interval) interval {
	r := unknown
	for _, f := range a.facts[p] {
		r = r.intersect(a.bound(f, x, p, rx))
	}
	return r
}

// special is the range of a hardware register: exact for a kernel whose
// block shape is fixed.
func (a *analysis) special(s ir.Special) interval {
	blk := a.f.Block
	axis := func(base ir.Special) int { return int(s - base) }
	switch s {
	case ir.TidX, ir.TidY, ir.TidZ:
		if n := blk[axis(ir.TidX)]; n > 0 {
			return interval{lo: 0, hi: int64(n - 1)}
		}
		return interval{lo: 0, hi: 1023}
	case ir.NtidX, ir.NtidY, ir.NtidZ:
		if n := blk[axis(ir.NtidX)]; n > 0 {
			return point(int64(n))
		}
		if s == ir.NtidZ {
			return interval{lo: 1, hi: 64}
		}
		return interval{lo: 1, hi: 1024}
	case ir.CtaidX, ir.CtaidY, ir.CtaidZ:
		if a.f.SmallIndices {
			return interval{lo: 0, hi: ir.MaxSmallGrid - 1}
		}
		if s == ir.CtaidX {
			return interval{lo: 0, hi: math.MaxInt32 - 1}
		}
		return interval{lo: 0, hi: 65534}
	case ir.NctaidX:
		return interval{lo: 1, hi: math.MaxInt32}
	case ir.NctaidY, ir.NctaidZ:
		return interval{lo: 1, hi: 65535}
	case ir.LaneID:
		return interval{lo: 0, hi: 31}
	}
	return typeRange(ir.U32)
}

// decide says whether the comparison c holds in its block, if the ranges
// or the facts there settle it.
func (a *analysis) decide(c *ir.Value) (result, ok bool) {
	x, y := c.Args[0], c.Args[1]
	if !isInt(x.Type) {
		return false, false
	}
	b := c.Block
	rx, ry := a.rangeAt(x, b), a.rangeAt(y, b)
	unsigned := !x.Type.IsSigned()
	if !rx.full && !ry.full && (!unsigned || rx.lo >= 0 && ry.lo >= 0) {
		switch c.Op {
		case ir.OpLt:
			if rx.hi < ry.lo {
				return true, true
			}
			if rx.lo >= ry.hi {
				return false, true
			}
		case ir.OpLe:
			if rx.hi <= ry.lo {
				return true, true
			}
			if rx.lo > ry.hi {
				return false, true
			}
		case ir.OpGt:
			if rx.lo > ry.hi {
				return true, true
			}
			if rx.hi <= ry.lo {
				return false, true
			}
		case ir.OpGe:
			if rx.lo >= ry.hi {
				return true, true
			}
			if rx.hi < ry.lo {
				return false, true
			}
		case ir.OpEq:
			if rx.hi < ry.lo || rx.lo > ry.hi {
				return false, true
			}
		case ir.OpNe:
			if rx.hi < ry.lo || rx.lo > ry.hi {
				return true, true
			}
		}
	}
	// A comparison of the same two values that dominates this one. Both
	// are stripped of conversions that keep their values, so they compare
	// the same integers, whatever their types' signedness.
	sx, sy := a.strip(x, b), a.strip(y, b)
	for _, f := range a.facts[b] {
		fx, fy, op := a.strip(f.x, b), a.strip(f.y, b), f.op
		if fx == sy && fy == sx {
			fx, fy, op = fy, fx, swap(op)
		}
		if fx != sx || fy != sy {
			continue
		}
		switch {
		case op == c.Op:
			return true, true
		case op == negate(c.Op):
			return false, true
		case op == ir.OpLt && (c.Op == ir.OpLe || c.Op == ir.OpNe), op == ir.OpGt && (c.Op == ir.OpGe || c.Op == ir.OpNe):
			return true, true
		case op == ir.OpLt && (c.Op == ir.OpGe || c.Op == ir.OpGt || c.Op == ir.OpEq), op == ir.OpGt && (c.Op == ir.OpLe || c.Op == ir.OpLt || c.Op == ir.OpEq):
			return false, true
		}
	}
	return false, false
}

// strip removes from v the integer conversions that keep its value where
// block b runs.
func (a *analysis) strip(v *ir.Value, b *ir.Block) *ir.Value {
	for v.Op == ir.OpConvert && isInt(v.Args[0].Type) && a.rangeAt(v.Args[0], b).fits(v.Type) {
		v = v.Args[0]
	}
	return v
}
