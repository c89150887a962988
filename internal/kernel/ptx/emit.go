package ptx

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// class is a register class: the PTX register type that holds values of
// some IR types.
type class uint8

const (
	noClass class = iota
	pred          // Bool
	b32           // I32, U32
	b64           // I64, U64
	f32           // F32
	f64           // F64
	numClasses
)

var (
	classPrefix = [numClasses]string{pred: "%p", b32: "%r", b64: "%rd", f32: "%f", f64: "%fd"}
	classType   = [numClasses]string{pred: ".pred", b32: ".b32", b64: ".b64", f32: ".f32", f64: ".f64"}
	classMov    = [numClasses]string{pred: "mov.pred", b32: "mov.b32", b64: "mov.b64", f32: "mov.f32", f64: "mov.f64"}
)

func classOf(t ir.Type) class {
	switch t {
	case ir.Bool:
		return pred
	case ir.I32, ir.U32:
		return b32
	case ir.I64, ir.U64:
		return b64
	case ir.F32:
		return f32
	case ir.F64:
		return f64
	}
	return noClass
}

// reg is a virtual register: class and number.
type reg struct {
	c class
	n int
}

func (r reg) String() string { return classPrefix[r.c] + strconv.Itoa(r.n) }

// suffix is the PTX type of an IR type, signedness and all (.s32, .f64):
// what ld, st, cvt, setp and integer arithmetic are typed by.
func suffix(t ir.Type) string {
	switch t {
	case ir.I32:
		return "s32"
	case ir.U32:
		return "u32"
	case ir.I64:
		return "s64"
	case ir.U64:
		return "u64"
	case ir.F32:
		return "f32"
	case ir.F64:
		return "f64"
	}
	return "?"
}

// bits is the bit-size PTX type of a 32- or 64-bit IR type.
func bits(t ir.Type) string {
	if t.Size() == 8 {
		return "b64"
	}
	return "b32"
}

// unit is a labelled run of instructions: an IR block, or an edge split to
// hold a phi's copies.
type unit struct {
	label    string
	comments []string
	lines    []string
}

// funcEmitter writes one kernel.
type funcEmitter struct {
	f      *ir.Func
	fi     int
	opt    Options
	needs  *needs
	regs   map[*ir.Value]reg // looked up, never ranged over: output order comes from the blocks
	count  [numClasses]int   // registers handed out per class
	params []string
	shared []string
	locals []string
	order  []*ir.Block // reachable blocks, in IR order
	units  []*unit
	cur    *unit
	target map[string]bool // labels some branch names
	err    error
}

// emitFunc writes f (already verified) as an entry. fi is its index in the
// module, for symbol names; n collects what the module needs.
func emitFunc(f *ir.Func, fi int, opt Options, n *needs) (string, error) {
	e := &funcEmitter{f: f, fi: fi, opt: opt, needs: n, regs: map[*ir.Value]reg{}, target: map[string]bool{}}
	for i, p := range f.Params {
		if classOf(p.Type) == noClass || p.Type == ir.Bool {
			return "", fmt.Errorf("ptx: %s: parameter %d (%s) is %s, which a kernel cannot take", f.Name, i, p.Name, p.Type)
		}
		e.params = append(e.params, symbol('p', fi, i, p.Name))
	}
	for i, a := range f.Shared {
		if a.Elem.Size() == 0 || a.Len < 0 {
			return "", fmt.Errorf("ptx: %s: shared array %d (%s) is [%d]%s", f.Name, i, a.Name, a.Len, a.Elem)
		}
		e.shared = append(e.shared, symbol('s', fi, i, a.Name))
	}
	for i, a := range f.Locals {
		if a.Elem.Size() == 0 || a.Len < 0 {
			return "", fmt.Errorf("ptx: %s: local array %d (%s) is [%d]%s", f.Name, i, a.Name, a.Len, a.Elem)
		}
		e.locals = append(e.locals, symbol('l', fi, i, a.Name))
	}

	reach := map[*ir.Block]bool{}
	for _, b := range f.ReversePostorder() {
		reach[b] = true
	}
	for _, b := range f.Blocks {
		if reach[b] {
			e.order = append(e.order, b)
		}
	}
	// Values first, temporaries after: a phi's copies name registers of
	// blocks not yet written.
	for _, b := range e.order {
		for _, v := range b.Values {
			if v.Type != ir.Void {
				c := classOf(v.Type)
				if c == noClass {
					return "", fmt.Errorf("ptx: %s: v%d has type %s", f.Name, v.ID, v.Type)
				}
				e.regs[v] = e.newReg(c)
			}
		}
	}
	for i, b := range e.order {
		e.block(b, i)
		if e.err != nil {
			return "", e.err
		}
	}
	return e.text(), nil
}

func (e *funcEmitter) newReg(c class) reg {
	e.count[c]++
	return reg{c, e.count[c]}
}

// r is the register of v.
func (e *funcEmitter) r(v *ir.Value) string { return e.regs[v].String() }

func (e *funcEmitter) ins(format string, args ...any) {
	e.cur.lines = append(e.cur.lines, fmt.Sprintf(format, args...))
}

func (e *funcEmitter) fail(v *ir.Value, format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("ptx: %s: v%d (%s): %s", e.f.Name, v.ID, v.LongString(), fmt.Sprintf(format, args...))
	}
}

// require records that the kernel uses an instruction form needing r,
// failing if the target does not offer it.
func (e *funcEmitter) require(v *ir.Value, r requirement) {
	e.needs.add(r)
	if less(e.opt.Version, r.version) || e.opt.SM < r.sm {
		e.fail(v, "%s needs PTX ISA %d.%d and sm_%d; the target is PTX ISA %d.%d, sm_%d",
			r.what, r.version[0], r.version[1], r.sm, e.opt.Version[0], e.opt.Version[1], e.opt.SM)
	}
}

func blockLabel(b *ir.Block) string { return "$B" + strconv.Itoa(b.ID) }

func edgeLabel(b *ir.Block, j int) string { return blockLabel(b) + "_" + strconv.Itoa(j) }

func hasPhis(b *ir.Block) bool { return len(b.Values) > 0 && b.Values[0].Op == ir.OpPhi }

// split reports whether edge j of b gets a block of its own for the phi
// copies: when b branches two ways, copies at its end would run on both.
func split(b *ir.Block, j int) bool { return b.Kind == ir.If && hasPhis(b.Succs[j]) }

// edgeTarget is where edge j of b branches to.
func edgeTarget(b *ir.Block, j int) string {
	if split(b, j) {
		return edgeLabel(b, j)
	}
	return blockLabel(b.Succs[j])
}

// predIndex is the index in b.Succs[j].Preds of edge j of b (the phi
// argument it selects). A block that branches twice to one successor is
// listed in its Preds twice, in the order of b.Succs.
func predIndex(b *ir.Block, j int) int {
	s := b.Succs[j]
	m := 0
	for k := 0; k < j; k++ {
		if b.Succs[k] == s {
			m++
		}
	}
	for k, p := range s.Preds {
		if p == b {
			if m == 0 {
				return k
			}
			m--
		}
	}
	return -1
}

// block writes b, the i'th reachable block, with its terminator and the
// split edges that follow it.
func (e *funcEmitter) block(b *ir.Block, i int) {
	e.cur = &unit{label: blockLabel(b), comments: commentLines(b.Comment)}
	e.units = append(e.units, e.cur)
	for _, v := range b.Values {
		e.value(v)
	}
	var next *ir.Block
	if i+1 < len(e.order) {
		next = e.order[i+1]
	}
	nextLabel := ""
	if next != nil {
		nextLabel = blockLabel(next)
	}
	switch b.Kind {
	case ir.Return:
		e.ins("ret;")
	case ir.Jump:
		e.copies(b, 0)
		if b.Succs[0] != next {
			e.braLabel("", blockLabel(b.Succs[0]))
		}
	case ir.If:
		var splits []int
		for j := range b.Succs {
			if split(b, j) {
				splits = append(splits, j)
			}
		}
		fall := nextLabel
		if len(splits) > 0 {
			fall = edgeLabel(b, splits[0])
		}
		t0, t1 := edgeTarget(b, 0), edgeTarget(b, 1)
		p := e.r(b.Cond)
		switch {
		case t0 == t1:
			if t0 != fall {
				e.braLabel("", t0)
			}
		case t1 == fall:
			e.braLabel("@"+p+" ", t0)
		case t0 == fall:
			e.braLabel("@!"+p+" ", t1)
		default:
			e.braLabel("@"+p+" ", t0)
			e.braLabel("", t1)
		}
		for k, j := range splits {
			s := b.Succs[j]
			e.cur = &unit{label: edgeLabel(b, j), comments: []string{fmt.Sprintf("b%d -> b%d: phi copies", b.ID, s.ID)}}
			e.units = append(e.units, e.cur)
			e.copies(b, j)
			if k+1 < len(splits) || s != next {
				e.braLabel("", blockLabel(s))
			}
		}
	}
}

func (e *funcEmitter) braLabel(guard, label string) {
	e.target[label] = true
	e.ins("%sbra %s;", guard, label)
}

// copies writes the phi copies of edge j of b, in an order that gives
// every phi the value its argument had on entry to the copies.
func (e *funcEmitter) copies(b *ir.Block, j int) {
	s := b.Succs[j]
	if !hasPhis(s) {
		return
	}
	k := predIndex(b, j)
	if k < 0 {
		e.err = fmt.Errorf("ptx: %s: b%d is not among the predecessors of b%d", e.f.Name, b.ID, s.ID)
		return
	}
	var byClass [numClasses][]pcopy[reg]
	for _, v := range s.Values {
		if v.Op != ir.OpPhi {
			break
		}
		d, src := e.regs[v], e.regs[v.Args[k]]
		byClass[d.c] = append(byClass[d.c], pcopy[reg]{dst: d, src: src})
	}
	for c := pred; c < numClasses; c++ {
		for _, m := range sequentialize(byClass[c], func() reg { return e.newReg(c) }) {
			e.ins("%s %s, %s;", classMov[c], m.dst, m.src)
		}
	}
}

// commentLines splits a comment into lines of ASCII: ptxas refuses any
// other byte anywhere in a module, comments included.
func commentLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\u2013' || r == '\u2014':
			return '-'
		case r > 0x7e || r < 0x20 && r != '\n' && r != '\r' && r != '\t':
			return '?'
		}
		return r
	}, s)
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
}

// text assembles the entry: signature, declarations, then the units,
// labelled where some branch names them.
func (e *funcEmitter) text() string {
	var sb strings.Builder
	for _, c := range e.f.Comment {
		for _, l := range commentLines(c) {
			sb.WriteString("// " + l + "\n")
		}
	}
	sb.WriteString(".visible .entry " + e.f.Name + "(")
	for i, p := range e.f.Params {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "\n\t.param .%s %s", suffix(p.Type), e.params[i])
	}
	if len(e.f.Params) > 0 {
		sb.WriteString("\n")
	}
	sb.WriteString(")\n")
	if b := e.f.Block; b != [3]int{} {
		fmt.Fprintf(&sb, ".reqntid %d, %d, %d\n", b[0], b[1], b[2])
		if e.f.MinBlocks > 0 {
			fmt.Fprintf(&sb, ".minnctapersm %d\n", e.f.MinBlocks)
		}
	} else if e.f.MaxThreads > 0 {
		fmt.Fprintf(&sb, ".maxntid %d, 1, 1\n", e.f.MaxThreads)
	}
	if e.f.MaxRegs > 0 {
		fmt.Fprintf(&sb, ".maxnreg %d\n", e.f.MaxRegs)
	}
	sb.WriteString("{\n")
	for c := pred; c < numClasses; c++ {
		if e.count[c] > 0 {
			fmt.Fprintf(&sb, "\t.reg %s %s<%d>;\n", classType[c], classPrefix[c], e.count[c]+1)
		}
	}
	for i, a := range e.f.Shared {
		fmt.Fprintf(&sb, "\t.shared .align 16 .b8 %s[%d];\n", e.shared[i], max(a.Bytes(), 1))
	}
	for i, a := range e.f.Locals {
		fmt.Fprintf(&sb, "\t.local .align 8 .b8 %s[%d];\n", e.locals[i], max(a.Bytes(), 1))
	}
	for _, u := range e.units {
		sb.WriteString("\n")
		for _, c := range u.comments {
			sb.WriteString("\t// " + c + "\n")
		}
		if e.target[u.label] {
			sb.WriteString(u.label + ":\n")
		}
		for _, l := range u.lines {
			sb.WriteString("\t" + l + "\n")
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

// intConst writes an integer constant of the given width: small values in
// decimal for the reader, others as hex of the exact bits (a hex literal
// too big for .s64 is .u64, and the instruction type chops it to width,
// so every bit pattern is written the same way).
func intConst(x uint64, width int) string {
	if width == 32 {
		x = uint64(uint32(x))
		if s := int32(x); s >= -65536 && s <= 65536 {
			return strconv.Itoa(int(s))
		}
		return fmt.Sprintf("0x%08X", x)
	}
	if s := int64(x); s >= -65536 && s <= 65536 {
		return strconv.FormatInt(s, 10)
	}
	return fmt.Sprintf("0x%016X", x)
}

// f32Const and f64Const write exact bits, which no decimal form promises.
func f32Const(x float32) string { return fmt.Sprintf("0f%08X", math.Float32bits(x)) }
func f64Const(x float64) string { return fmt.Sprintf("0d%016X", math.Float64bits(x)) }

// floatConst writes x in t's float type.
func floatConst(t ir.Type, x float64) string {
	if t == ir.F32 {
		return f32Const(float32(x))
	}
	return f64Const(x)
}

// value writes the instructions computing v.
func (e *funcEmitter) value(v *ir.Value) {
	switch v.Op {
	case ir.OpPhi:
		// Written as copies at the end of each predecessor.
	case ir.OpConst:
		e.constant(v)
	case ir.OpParam:
		e.ins("ld.param.%s %s, [%s];", suffix(v.Type), e.r(v), e.params[v.Aux])
	case ir.OpSpecial:
		if v.Aux < 0 || v.Aux > int(ir.LaneID) {
			e.fail(v, "no such special register")
			return
		}
		e.ins("mov.u32 %s, %%%s;", e.r(v), ir.Special(v.Aux))
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpRem, ir.OpMin, ir.OpMax, ir.OpAnd, ir.OpOr, ir.OpXor:
		e.binary(v)
	case ir.OpShl:
		e.ins("shl.%s %s, %s, %s;", bits(v.Type), e.r(v), e.r(v.Args[0]), e.r(v.Args[1]))
	case ir.OpShr:
		e.ins("shr.%s %s, %s, %s;", suffix(v.Type), e.r(v), e.r(v.Args[0]), e.r(v.Args[1]))
	case ir.OpNeg:
		switch {
		case v.Type.IsFloat():
			e.ins("neg.%s %s, %s;", suffix(v.Type), e.r(v), e.r(v.Args[0]))
		case v.Type.IsInt():
			// neg is typed signed only; two's complement makes it right for unsigned too.
			e.ins("neg.s%d %s, %s;", v.Type.Size()*8, e.r(v), e.r(v.Args[0]))
		default:
			e.fail(v, "neg of %s", v.Type)
		}
	case ir.OpNot:
		switch {
		case v.Type == ir.Bool:
			e.ins("not.pred %s, %s;", e.r(v), e.r(v.Args[0]))
		case v.Type.IsInt():
			e.ins("not.%s %s, %s;", bits(v.Type), e.r(v), e.r(v.Args[0]))
		default:
			e.fail(v, "not of %s", v.Type)
		}
	case ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe:
		e.compare(v)
	case ir.OpConvert:
		e.convert(v)
	case ir.OpBitcast:
		e.ins("mov.%s %s, %s;", bits(v.Type), e.r(v), e.r(v.Args[0]))
	case ir.OpSelect:
		e.selectValue(v)
	case ir.OpSharedAddr:
		e.ins("mov.u32 %s, %s;", e.r(v), e.shared[v.Aux])
	case ir.OpLocalAddr:
		// mov of a .local variable gives its address in the local window,
		// which is what ld.local and st.local take.
		e.ins("mov.u64 %s, %s;", e.r(v), e.locals[v.Aux])
	case ir.OpLoad:
		e.ins("ld.%s.%s %s, [%s];", v.Space, suffix(v.Type), e.r(v), e.r(v.Args[0]))
	case ir.OpStore:
		e.ins("st.%s.%s [%s], %s;", v.Space, suffix(v.Args[1].Type), e.r(v.Args[0]), e.r(v.Args[1]))
	case ir.OpAtomic:
		e.atomic(v)
	case ir.OpBarrier:
		if v.Aux == 1 {
			e.ins("bar.sync 0;")
		} else {
			e.require(v, needBarrier)
			e.ins("barrier.sync 0;")
		}
	case ir.OpShuffle:
		e.shuffle(v)
	case ir.OpMath:
		e.mathFn(v)
	case ir.OpStatus:
		e.status(v)
	default:
		e.fail(v, "no PTX for this op")
	}
}

func (e *funcEmitter) constant(v *ir.Value) {
	switch v.Type {
	case ir.Bool:
		// -1 is how NVCC and LLVM write true; integer constants stand for
		// predicates as in C.
		x := "0"
		if v.Const != 0 {
			x = "-1"
		}
		e.ins("mov.pred %s, %s;", e.r(v), x)
	case ir.I32, ir.U32:
		e.ins("mov.b32 %s, %s;", e.r(v), intConst(v.Const, 32))
	case ir.I64, ir.U64:
		e.ins("mov.b64 %s, %s;", e.r(v), intConst(v.Const, 64))
	case ir.F32:
		e.ins("mov.f32 %s, %s;", e.r(v), f32Const(float32(math.Float64frombits(v.Const))))
	case ir.F64:
		e.ins("mov.f64 %s, %s;", e.r(v), f64Const(math.Float64frombits(v.Const)))
	}
}

func (e *funcEmitter) binary(v *ir.Value) {
	d, x, y := e.r(v), e.r(v.Args[0]), e.r(v.Args[1])
	t := v.Type
	switch {
	case t == ir.Bool:
		switch v.Op {
		case ir.OpAnd, ir.OpOr, ir.OpXor:
			e.ins("%s.pred %s, %s, %s;", v.Op, d, x, y)
		default:
			e.fail(v, "%s of bool", v.Op)
		}
	case t.IsInt():
		s := suffix(t)
		switch v.Op {
		case ir.OpAdd, ir.OpSub, ir.OpDiv, ir.OpRem, ir.OpMin, ir.OpMax:
			e.ins("%s.%s %s, %s, %s;", v.Op, s, d, x, y)
		case ir.OpMul:
			e.ins("mul.lo.%s %s, %s, %s;", s, d, x, y)
		case ir.OpAnd, ir.OpOr, ir.OpXor:
			e.ins("%s.%s %s, %s, %s;", v.Op, bits(t), d, x, y)
		}
	case t.IsFloat():
		s := suffix(t)
		switch v.Op {
		case ir.OpAdd, ir.OpSub, ir.OpMul:
			// No rounding modifier: ptxas may then fuse a mul and an add
			// into an fma, which Go's spec allows.
			e.ins("%s.%s %s, %s, %s;", v.Op, s, d, x, y)
		case ir.OpDiv:
			e.ins("div.rn.%s %s, %s, %s;", s, d, x, y)
		case ir.OpMin, ir.OpMax:
			e.floatMinMax(v)
		default:
			e.fail(v, "%s of %s", v.Op, t)
		}
	default:
		e.fail(v, "%s of %s", v.Op, t)
	}
}

// floatMinMax follows Go's min and max: NaN if either operand is NaN, and
// -0 below +0 (which PTX's min and max do too). Plain min/max return the
// other operand when one is NaN; min.NaN exists only for f32 on sm_80
// (PTX 7.0), so elsewhere a NaN test overrides the result.
func (e *funcEmitter) floatMinMax(v *ir.Value) {
	d, x, y := e.r(v), e.r(v.Args[0]), e.r(v.Args[1])
	s := suffix(v.Type)
	if v.Type == ir.F32 && e.opt.newMinNaN() {
		e.require(v, needMinNaN)
		e.ins("%s.NaN.f32 %s, %s, %s;", v.Op, d, x, y)
		return
	}
	p := e.newReg(pred)
	e.ins("%s.%s %s, %s, %s;", v.Op, s, d, x, y)
	e.ins("setp.nan.%s %s, %s, %s;", s, p, x, y)
	nan := "0f7FFFFFFF" // the canonical NaN PTX's own instructions give
	if v.Type == ir.F64 {
		nan = "0d7FFFFFFFFFFFFFFF"
	}
	e.ins("@%s mov.%s %s, %s;", p, s, d, nan)
}

var cmpNames = map[ir.Op]string{ir.OpEq: "eq", ir.OpNe: "ne", ir.OpLt: "lt", ir.OpLe: "le", ir.OpGt: "gt", ir.OpGe: "ge"}

func (e *funcEmitter) compare(v *ir.Value) {
	d, x, y := e.r(v), e.r(v.Args[0]), e.r(v.Args[1])
	t := v.Args[0].Type
	switch {
	case t == ir.Bool:
		// No setp on predicates: false < true, in logic.
		switch v.Op {
		case ir.OpEq:
			e.ins("xor.pred %s, %s, %s;", d, x, y)
			e.ins("not.pred %s, %s;", d, d)
		case ir.OpNe:
			e.ins("xor.pred %s, %s, %s;", d, x, y)
		case ir.OpLt: // !x && y
			e.ins("not.pred %s, %s;", d, x)
			e.ins("and.pred %s, %s, %s;", d, d, y)
		case ir.OpLe: // !x || y
			e.ins("not.pred %s, %s;", d, x)
			e.ins("or.pred %s, %s, %s;", d, d, y)
		case ir.OpGt: // x && !y
			e.ins("not.pred %s, %s;", d, y)
			e.ins("and.pred %s, %s, %s;", d, x, d)
		case ir.OpGe: // x || !y
			e.ins("not.pred %s, %s;", d, y)
			e.ins("or.pred %s, %s, %s;", d, x, d)
		}
	case t.IsFloat():
		op := cmpNames[v.Op]
		if v.Op == ir.OpNe {
			op = "neu" // Go: NaN != anything
		}
		e.ins("setp.%s.%s %s, %s, %s;", op, suffix(t), d, x, y)
	case t.IsInt():
		e.ins("setp.%s.%s %s, %s, %s;", cmpNames[v.Op], suffix(t), d, x, y)
	default:
		e.fail(v, "comparison of %s", t)
	}
}

// convert follows Go's conversions. Integer width changes extend by the
// source's signedness and chop when narrowing (cvt's own rules, PTX ISA
// 6.5.1, when typed by the IR types); float to integer truncates (rzi);
// int to float and f64 to f32 round to nearest even.
func (e *funcEmitter) convert(v *ir.Value) {
	d, x := e.r(v), e.r(v.Args[0])
	from, to := v.Args[0].Type, v.Type
	switch {
	case classOf(from) == noClass || classOf(to) == noClass:
		e.fail(v, "conversion from %s", from)
	case from == to:
		e.ins("%s %s, %s;", classMov[classOf(to)], d, x)
	case from == ir.Bool:
		one, zero := "1", "0"
		if to.IsFloat() {
			one, zero = floatConst(to, 1), floatConst(to, 0)
		}
		e.ins("selp.%s %s, %s, %s, %s;", suffix(to), d, one, zero, x)
	case to == ir.Bool:
		if from.IsFloat() {
			e.ins("setp.neu.%s %s, %s, %s;", suffix(from), d, x, floatConst(from, 0))
		} else {
			e.ins("setp.ne.%s %s, %s, 0;", suffix(from), d, x)
		}
	case from.IsInt() && to.IsInt():
		if from.Size() == to.Size() {
			e.ins("mov.%s %s, %s;", bits(to), d, x)
		} else {
			e.ins("cvt.%s.%s %s, %s;", suffix(to), suffix(from), d, x)
		}
	case from.IsInt() && to.IsFloat():
		e.ins("cvt.rn.%s.%s %s, %s;", suffix(to), suffix(from), d, x)
	case from.IsFloat() && to.IsInt():
		e.ins("cvt.rzi.%s.%s %s, %s;", suffix(to), suffix(from), d, x)
	case from == ir.F64 && to == ir.F32:
		e.ins("cvt.rn.f32.f64 %s, %s;", d, x)
	case from == ir.F32 && to == ir.F64:
		e.ins("cvt.f64.f32 %s, %s;", d, x)
	}
}

func (e *funcEmitter) selectValue(v *ir.Value) {
	d, c, x, y := e.r(v), e.r(v.Args[0]), e.r(v.Args[1]), e.r(v.Args[2])
	if v.Type != ir.Bool {
		e.ins("selp.%s %s, %s, %s, %s;", suffix(v.Type), d, x, y, c)
		return
	}
	// selp has no .pred form: d = c&x | !c&y.
	t := e.newReg(pred)
	e.ins("and.pred %s, %s, %s;", d, c, x)
	e.ins("not.pred %s, %s;", t, c)
	e.ins("and.pred %s, %s, %s;", t, t, y)
	e.ins("or.pred %s, %s, %s;", d, d, t)
}

// atomicType is the type atom is written with for op on t.
func atomicType(op ir.Atomic, t ir.Type) (string, bool) {
	switch op {
	case ir.AtomicAdd:
		switch t {
		case ir.I32, ir.U32, ir.F32, ir.F64:
			return suffix(t), true
		case ir.I64, ir.U64:
			return "u64", true // atom.add has no .s64; the sum's bits are the same
		}
	case ir.AtomicMin, ir.AtomicMax:
		if t.IsInt() {
			return suffix(t), true
		}
	case ir.AtomicExch, ir.AtomicCAS:
		if t.Size() > 0 {
			return bits(t), true
		}
	}
	return "", false
}

var atomicNames = [...]string{ir.AtomicAdd: "add", ir.AtomicMin: "min", ir.AtomicMax: "max", ir.AtomicExch: "exch", ir.AtomicCAS: "cas"}

func (e *funcEmitter) atomic(v *ir.Value) {
	op := ir.Atomic(v.Aux)
	if v.Aux < 0 || int(op) >= len(atomicNames) {
		e.fail(v, "no such atomic operation")
		return
	}
	at, ok := atomicType(op, v.Type)
	if !ok {
		e.fail(v, "atomic %s of %s", op, v.Type)
		return
	}
	d, a, x := e.r(v), e.r(v.Args[0]), e.r(v.Args[1])
	if v.Space == ir.Local {
		e.localAtomic(v, op)
		return
	}
	switch {
	case op == ir.AtomicAdd && v.Type == ir.F64:
		e.require(v, needAtomF64)
	case (op == ir.AtomicMin || op == ir.AtomicMax) && v.Type.Size() == 8:
		e.require(v, needAtom64)
	}
	if op == ir.AtomicCAS {
		e.ins("atom.%s.cas.%s %s, [%s], %s, %s;", v.Space, at, d, a, x, e.r(v.Args[2]))
		return
	}
	e.ins("atom.%s.%s.%s %s, [%s], %s;", v.Space, atomicNames[op], at, d, a, x)
}

// localAtomic is an atomic on thread-private memory, which atom does not
// address: no other thread can see the location, so a plain
// read-modify-write is atomic.
func (e *funcEmitter) localAtomic(v *ir.Value, op ir.Atomic) {
	d, a, x := e.r(v), e.r(v.Args[0]), e.r(v.Args[1])
	s := suffix(v.Type)
	e.ins("ld.local.%s %s, [%s];", s, d, a)
	switch op {
	case ir.AtomicAdd, ir.AtomicMin, ir.AtomicMax:
		n := e.newReg(classOf(v.Type))
		e.ins("%s.%s %s, %s, %s;", atomicNames[op], s, n, d, x)
		e.ins("st.local.%s [%s], %s;", s, a, n)
	case ir.AtomicExch:
		e.ins("st.local.%s [%s], %s;", s, a, x)
	case ir.AtomicCAS:
		p := e.newReg(pred)
		e.ins("setp.eq.%s %s, %s, %s;", bits(v.Type), p, d, x)
		e.ins("@%s st.local.%s [%s], %s;", p, s, a, e.r(v.Args[2]))
	}
}

var shuffleNames = [...]string{ir.ShuffleUp: "up", ir.ShuffleDown: "down", ir.ShuffleXor: "bfly", ir.ShuffleIdx: "idx"}

// shuffle writes shfl.sync. Its c operand packs the segment mask (bits
// 12:8: the lane bits above the group, 32-width for a power of two) and
// the clamp lane (bits 4:0): the group's first lane for up, which reads
// below itself, and its last for the other modes.
func (e *funcEmitter) shuffle(v *ir.Value) {
	if v.Aux < 0 || v.Aux >= len(shuffleNames) {
		e.fail(v, "no such shuffle mode")
		return
	}
	e.require(v, needShfl)
	c := (32 - int(v.Const)) << 8
	if ir.Shuffle(v.Aux) != ir.ShuffleUp {
		c |= 31
	}
	// .b32 takes the .f32 register as it is: a bit-size instruction type
	// is compatible with every type of its size (PTX ISA 6.1).
	e.ins("shfl.sync.%s.b32 %s, %s, %s, 0x%X, 0xFFFFFFFF;", shuffleNames[v.Aux], e.r(v), e.r(v.Args[0]), e.r(v.Args[1]), c)
}

// math writes the functions the hardware has; irmath lowers the rest to
// other ops before the IR gets here.
func (e *funcEmitter) mathFn(v *ir.Value) {
	fn := ir.MathFn(v.Aux)
	s := suffix(v.Type)
	d, x := e.r(v), e.r(v.Args[0])
	single, fast := v.Type == ir.F32, v.Fast
	switch fn {
	case ir.Sqrt:
		if single && fast {
			e.ins("sqrt.approx.f32 %s, %s;", d, x)
		} else {
			e.ins("sqrt.rn.%s %s, %s;", s, d, x)
		}
		return
	case ir.Rsqrt:
		if fast {
			e.ins("rsqrt.approx.%s %s, %s;", s, d, x)
		} else {
			// rsqrt is approximate only; a correctly rounded sqrt and
			// divide is within an ulp or so of 1/sqrt(x).
			e.ins("sqrt.rn.%s %s, %s;", s, d, x)
			e.ins("div.rn.%s %s, %s, %s;", s, d, floatConst(v.Type, 1), d)
		}
		return
	case ir.Fma:
		e.ins("fma.rn.%s %s, %s, %s, %s;", s, d, x, e.r(v.Args[1]), e.r(v.Args[2]))
		return
	case ir.Abs:
		e.ins("abs.%s %s, %s;", s, d, x)
		return
	case ir.Floor:
		e.ins("cvt.rmi.%s.%s %s, %s;", s, s, d, x)
		return
	case ir.Ceil:
		e.ins("cvt.rpi.%s.%s %s, %s;", s, s, d, x)
		return
	case ir.Trunc:
		e.ins("cvt.rzi.%s.%s %s, %s;", s, s, d, x)
		return
	}
	if single && fast {
		switch fn {
		case ir.Exp2:
			e.ins("ex2.approx.f32 %s, %s;", d, x)
			return
		case ir.Log2:
			e.ins("lg2.approx.f32 %s, %s;", d, x)
			return
		case ir.Sin:
			e.ins("sin.approx.f32 %s, %s;", d, x)
			return
		case ir.Cos:
			e.ins("cos.approx.f32 %s, %s;", d, x)
			return
		case ir.Tanh:
			e.require(v, needTanhApprox)
			e.ins("tanh.approx.f32 %s, %s;", d, x)
			return
		}
	}
	kind := "precise"
	if fast {
		kind = "fast"
	}
	e.fail(v, "no PTX instruction for %s %s %s: irmath must lower it first", kind, v.Type, fn)
}

// status claims the launch's status record for the first failure (a
// compare-and-swap of the code from 0) and, in the thread that won, fills
// in the rest. Guarded stores need no labels.
func (e *funcEmitter) status(v *ir.Value) {
	rec, code, arg := e.r(v.Args[0]), e.r(v.Args[1]), e.r(v.Args[2])
	old, won := e.newReg(b32), e.newReg(pred)
	e.ins("atom.global.cas.b32 %s, [%s], 0, %s;", old, rec, code)
	e.ins("setp.eq.u32 %s, %s, 0;", won, old)
	e.ins("@%s st.global.u32 [%s+4], %s;", won, rec, arg)
	for i, w := range v.Args[3:] {
		e.ins("@%s st.global.s64 [%s+%d], %s;", won, rec, 8+8*i, e.r(w))
	}
}
