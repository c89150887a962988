package frontend

import (
	"fmt"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// instr compiles one SSA instruction into c.cur.
func (c *compiler) instr(fr *frame, in ssa.Instruction) {
	switch in := in.(type) {
	case *ssa.DebugRef:
	case *ssa.Phi:
		c.phi(fr, in)
	case *ssa.BinOp:
		fr.vals[in] = c.binOp(fr, in)
	case *ssa.UnOp:
		fr.vals[in] = c.unOp(fr, in)
	case *ssa.Convert:
		fr.vals[in] = c.convertGo(fr, in.X, in.Type(), in.Pos())
	case *ssa.MultiConvert:
		fr.vals[in] = c.convertGo(fr, in.X, in.Type(), in.Pos())
	case *ssa.ChangeType:
		fr.vals[in] = c.value(fr, in.X)
	case *ssa.Call:
		if r := c.call(fr, in); r != nil {
			fr.vals[in] = r
		}
	case *ssa.Extract:
		agg, ok := c.value(fr, in.Tuple).(*aggVal)
		if !ok {
			c.fail(in.Pos(), "internal compiler error: extract from a non-tuple")
		}
		fr.vals[in] = agg.f[in.Index]
	case *ssa.Field:
		fr.vals[in] = c.field(fr, in)
	case *ssa.Index:
		fr.vals[in] = c.indexValue(fr, in)
	case *ssa.FieldAddr:
		fr.vals[in] = c.fieldAddr(fr, in)
	case *ssa.IndexAddr:
		fr.vals[in] = c.indexAddr(fr, in)
	case *ssa.Alloc:
		fr.vals[in] = c.alloc(fr, in)
	case *ssa.Store:
		c.store(fr, in)
	case *ssa.If:
		cond := c.scalar(fr, in.Cond)
		b := in.Block()
		t, e := fr.entry[b.Succs[0]], fr.entry[b.Succs[1]]
		fr.exit[b], fr.exitOf[c.cur] = c.cur, b
		if t == e {
			c.cur.SetJump(t)
		} else {
			c.cur.SetIf(cond, t, e)
		}
	case *ssa.Jump:
		b := in.Block()
		fr.exit[b], fr.exitOf[c.cur] = c.cur, b
		c.cur.SetJump(fr.entry[b.Succs[0]])
	case *ssa.Return:
		b := in.Block()
		fr.exit[b], fr.exitOf[c.cur] = c.cur, b
		if fr.cont == nil {
			c.cur.SetReturn()
			return
		}
		var res []value
		for _, r := range in.Results {
			res = append(res, c.value(fr, r))
		}
		fr.results = append(fr.results, res)
		fr.retFrom = append(fr.retFrom, c.cur)
		c.cur.SetJump(fr.cont)
	case *ssa.Panic:
		c.fail(in.Pos(), "kernels cannot panic on the GPU; check the condition before the call or store a flag in an array view")
	case *ssa.Go:
		c.fail(in.Pos(), "kernels cannot start goroutines; every thread of the domain already runs the kernel")
	case *ssa.Defer, *ssa.RunDefers:
		c.fail(in.Pos(), "kernels cannot defer calls; make the call at the end of the kernel")
	case *ssa.Send, *ssa.Select, *ssa.MakeChan:
		c.fail(in.Pos(), "kernels cannot use channels; threads of a tile share data through amp.TileStatic and Barrier.Wait")
	case *ssa.MakeMap, *ssa.MapUpdate, *ssa.Lookup:
		c.fail(in.Pos(), "kernels cannot use maps or index strings; use fixed-size arrays or array views")
	case *ssa.MakeInterface:
		for _, r := range *in.Referrers() {
			if p, ok := r.(*ssa.Panic); ok {
				c.fail(p.Pos(), "kernels cannot panic on the GPU; check the condition before the call or store a flag in an array view")
			}
		}
		c.fail(in.Pos(), "kernels cannot use interfaces; use concrete types (a generic kernel over amp.Element for several element types)")
	case *ssa.TypeAssert, *ssa.ChangeInterface:
		c.fail(in.Pos(), "kernels cannot use interfaces; use concrete types (a generic kernel over amp.Element for several element types)")
	case *ssa.MakeClosure:
		c.fail(in.Pos(), "kernels cannot make closures or function values; write a top-level function and call it")
	case *ssa.MakeSlice:
		c.fail(in.Pos(), "kernels cannot make slices (make or append); use a fixed-size array, amp.TileStatic, or an array view")
	case *ssa.Slice, *ssa.SliceToArrayPointer:
		c.fail(in.Pos(), "kernels cannot slice; index the array, TileStatic slice or view directly")
	case *ssa.Range, *ssa.Next:
		c.fail(in.Pos(), "kernels cannot range over strings or maps; use a counted for loop")
	default:
		c.fail(in.Pos(), "kernels cannot use %T (%s)", in, in)
	}
}

func (c *compiler) phi(fr *frame, p *ssa.Phi) {
	// The template is the value on an edge that is already compiled: one
	// from a predecessor that dominates or precedes (a loop's entry edge).
	var template value
	for _, e := range p.Edges {
		if _, ok := fr.vals[e]; ok {
			template = fr.vals[e]
			break
		}
		if k, ok := e.(*ssa.Const); ok {
			template = c.constant(fr, k)
			break
		}
	}
	if template == nil {
		t := c.resolve(fr, p.Type())
		if st, _, ok := scalarType(t); ok {
			template = &ir.Value{Type: st}
		} else {
			c.fail(p.Pos(), "internal compiler error: a phi of %s with no compiled edge", t)
		}
	}
	if !isScalarish(template) {
		fr.vals[p] = template
		fr.phis = append(fr.phis, pendingPhi{phi: p, template: template})
		return
	}
	var parts []*ir.Value
	for _, l := range leaves(template) {
		parts = append(parts, c.cur.AddPhi(l.Type))
	}
	v, _ := rebuild(template, parts)
	fr.vals[p] = v
	fr.phis = append(fr.phis, pendingPhi{phi: p, template: template, parts: parts})
}

// scalar is the compiled form of an SSA value that must be a scalar.
func (c *compiler) scalar(fr *frame, v ssa.Value) *ir.Value {
	x, ok := c.value(fr, v).(*ir.Value)
	if !ok {
		c.fail(v.Pos(), "%s is used as a scalar", typeName(v.Type()))
	}
	return x
}

// binop appends x op y, folding integer constants.
func (c *compiler) binop(op ir.Op, x, y *ir.Value) *ir.Value {
	if r, ok := foldBinop(op, x, y); ok {
		return c.iconst(x.Type, r)
	}
	return c.cur.Add(op, x.Type, x, y)
}

func (c *compiler) cmp(op ir.Op, x, y *ir.Value) *ir.Value {
	return c.cur.Add(op, ir.Bool, x, y)
}

func (c *compiler) binOp(fr *frame, in *ssa.BinOp) value {
	xv, yv := c.value(fr, in.X), c.value(fr, in.Y)
	if xi, ok := xv.(*indexVal); ok {
		yi, ok2 := yv.(*indexVal)
		if !ok2 || (in.Op != token.EQL && in.Op != token.NEQ) {
			c.fail(in.Pos(), "amp.Index values can only be compared with == and !=")
		}
		eq := c.bconst(xi.rank == yi.rank)
		if xi.rank == yi.rank {
			for d := range xi.rank {
				eq = c.and(eq, c.cmp(ir.OpEq, xi.c[d], yi.c[d]))
			}
		}
		if in.Op == token.NEQ {
			return c.cur.Add(ir.OpNot, ir.Bool, eq)
		}
		return eq
	}
	if xa, ok := xv.(*aggVal); ok && (in.Op == token.EQL || in.Op == token.NEQ) {
		ya := yv.(*aggVal)
		xl, yl := leaves(xa), leaves(ya)
		eq := c.bconst(true)
		for i := range xl {
			eq = c.and(eq, c.cmp(ir.OpEq, xl[i], yl[i]))
		}
		if in.Op == token.NEQ {
			return c.cur.Add(ir.OpNot, ir.Bool, eq)
		}
		return eq
	}
	x, ok1 := xv.(*ir.Value)
	y, ok2 := yv.(*ir.Value)
	if !ok1 || !ok2 {
		c.fail(in.Pos(), "operator %s on %s is not supported in kernels", in.Op, typeName(in.X.Type()))
	}
	if b, ok := in.X.Type().Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
		c.fail(in.Pos(), "kernels cannot use strings")
	}
	switch in.Op {
	case token.ADD:
		return c.binop(ir.OpAdd, x, y)
	case token.SUB:
		return c.binop(ir.OpSub, x, y)
	case token.MUL:
		return c.binop(ir.OpMul, x, y)
	case token.QUO, token.REM:
		op := ir.OpDiv
		if in.Op == token.REM {
			op = ir.OpRem
		}
		if x.Type.IsInt() {
			y = c.guardDivisor(y)
		}
		return c.binop(op, x, y)
	case token.AND:
		return c.binop(ir.OpAnd, x, y)
	case token.OR:
		return c.binop(ir.OpOr, x, y)
	case token.XOR:
		return c.binop(ir.OpXor, x, y)
	case token.AND_NOT:
		return c.binop(ir.OpAnd, x, c.not(y))
	case token.SHL, token.SHR:
		op := ir.OpShl
		if in.Op == token.SHR {
			op = ir.OpShr
		}
		return c.cur.Add(op, x.Type, x, c.shiftCount(y))
	case token.EQL:
		return c.cmp(ir.OpEq, x, y)
	case token.NEQ:
		return c.cmp(ir.OpNe, x, y)
	case token.LSS:
		return c.cmp(ir.OpLt, x, y)
	case token.LEQ:
		return c.cmp(ir.OpLe, x, y)
	case token.GTR:
		return c.cmp(ir.OpGt, x, y)
	case token.GEQ:
		return c.cmp(ir.OpGe, x, y)
	}
	c.fail(in.Pos(), "operator %s is not supported in kernels", in.Op)
	return nil
}

func (c *compiler) and(x, y *ir.Value) *ir.Value {
	if k, ok := x.ConstInt(); ok && x.Type == ir.Bool {
		if k != 0 {
			return y
		}
		return x
	}
	return c.cur.Add(ir.OpAnd, ir.Bool, x, y)
}

func (c *compiler) not(x *ir.Value) *ir.Value {
	if k, ok := x.ConstInt(); ok && x.Type != ir.Bool {
		return c.iconst(x.Type, ^k)
	}
	return c.cur.Add(ir.OpNot, x.Type, x)
}

// guardDivisor reports a division by zero (Go panics) and divides by 1
// instead, so the thread goes on with a harmless value.
func (c *compiler) guardDivisor(y *ir.Value) *ir.Value {
	if k, ok := y.ConstInt(); ok && k != 0 {
		return y
	}
	zero := c.cmp(ir.OpEq, y, c.iconst(y.Type, 0))
	c.reportIf(zero, ir.StatusDivideByZero, 0)
	return c.cur.Add(ir.OpSelect, y.Type, zero, c.iconst(y.Type, 1), y)
}

// shiftCount turns a Go shift count of any integer type into the IR's U32,
// saturating large counts (the result is the same for any count at or
// above the width) and reporting negative ones (Go panics).
func (c *compiler) shiftCount(y *ir.Value) *ir.Value {
	if k, ok := y.ConstInt(); ok {
		if k < 0 {
			c.fail(token.NoPos, "negative shift count %d", k)
		}
		return c.iconst(ir.U32, min(k, 255))
	}
	if y.Type.IsSigned() {
		c.reportIf(c.cmp(ir.OpLt, y, c.iconst(y.Type, 0)), ir.StatusNegativeShift, 0)
	}
	if y.Type.Size() == 8 {
		u := c.convert(y, ir.U64)
		big := c.cmp(ir.OpGt, u, c.iconst(ir.U64, 255))
		return c.cur.Add(ir.OpSelect, ir.U32, big, c.iconst(ir.U32, 255), c.convert(u, ir.U32))
	}
	return c.convert(y, ir.U32)
}

// reportIf records status code (with arg) when cond holds, then goes on.
func (c *compiler) reportIf(cond *ir.Value, code, arg int) {
	if k, ok := cond.ConstInt(); ok && k == 0 {
		return
	}
	fail, join := c.f.NewBlock(), c.f.NewBlock()
	c.cur.SetIf(cond, fail, join)
	c.cur = fail
	c.report(code, arg)
	fail.SetJump(join)
	c.cur = join
}

// report appends an OpStatus for code with the thread's global index.
func (c *compiler) report(code, arg int) {
	var w [3]*ir.Value
	for d := range 3 {
		if d < c.rank {
			w[d] = c.global.c[d]
		} else {
			w[d] = c.iconst(ir.I64, 0)
		}
	}
	c.cur.Add(ir.OpStatus, ir.Void, c.status, c.iconst(ir.U32, int64(code)), c.iconst(ir.U32, int64(arg)), w[0], w[1], w[2])
}

func (c *compiler) unOp(fr *frame, in *ssa.UnOp) value {
	switch in.Op {
	case token.MUL:
		x := c.value(fr, in.X)
		switch x := x.(type) {
		case *cellVal:
			if !x.stored {
				c.fail(in.Pos(), "internal compiler error: a variable read before it is set")
			}
			return x.v
		case *fieldCellVal:
			return c.fieldOf(x.cell.v, x.t, x.i, in.Pos())
		}
		p, ok := x.(*ptrVal)
		if !ok {
			c.fail(in.Pos(), "kernels can dereference only pointers to TileStatic elements and local variables")
		}
		return c.load(p)
	case token.ARROW:
		c.fail(in.Pos(), "kernels cannot use channels")
	}
	x := c.scalar(fr, in.X)
	switch in.Op {
	case token.SUB:
		if k, ok := x.ConstInt(); ok && x.Type.IsInt() {
			return c.iconst(x.Type, -k)
		}
		return c.cur.Add(ir.OpNeg, x.Type, x)
	case token.XOR, token.NOT:
		return c.not(x)
	}
	c.fail(in.Pos(), "operator %s is not supported in kernels", in.Op)
	return nil
}

// convertGo compiles a Go conversion.
func (c *compiler) convertGo(fr *frame, x ssa.Value, to types.Type, pos token.Pos) value {
	to = c.resolve(fr, to)
	st, _, ok := scalarType(to)
	if !ok {
		c.fail(pos, "conversion to %s is not supported in kernels", typeName(to))
	}
	xv := c.scalar(fr, x)
	return c.convert(xv, st)
}

// convert converts x to t, folding integer constants.
func (c *compiler) convert(x *ir.Value, t ir.Type) *ir.Value {
	if x.Type == t {
		return x
	}
	if k, ok := x.ConstInt(); ok && t.IsInt() && x.Type.IsInt() {
		if x.Type == ir.U64 {
			return c.iconst(t, int64(uint64(x.Const)))
		}
		return c.iconst(t, k)
	}
	return c.cur.Add(ir.OpConvert, t, x)
}

func foldBinop(op ir.Op, x, y *ir.Value) (int64, bool) {
	if !x.Type.IsInt() {
		return 0, false
	}
	a, ok1 := x.ConstInt()
	b, ok2 := y.ConstInt()
	if !ok1 || !ok2 {
		return 0, false
	}
	var r int64
	switch op {
	case ir.OpAdd:
		r = a + b
	case ir.OpSub:
		r = a - b
	case ir.OpMul:
		r = a * b
	case ir.OpAnd:
		r = a & b
	case ir.OpOr:
		r = a | b
	case ir.OpXor:
		r = a ^ b
	case ir.OpDiv, ir.OpRem:
		if b == 0 || x.Type.IsSigned() == false && (x.Type == ir.U64) {
			return 0, false
		}
		if op == ir.OpDiv {
			r = a / b
		} else {
			r = a % b
		}
	default:
		return 0, false
	}
	return wrap(x.Type, r), true
}

// wrap reduces r to t's width, as Go's arithmetic does.
func wrap(t ir.Type, r int64) int64 {
	switch t {
	case ir.I32:
		return int64(int32(r))
	case ir.U32:
		return int64(uint32(r))
	}
	return r
}

// call compiles a call: an intrinsic of amp or math, or a function of the
// kernel's package, inlined.
func (c *compiler) call(fr *frame, in *ssa.Call) value {
	common := in.Common()
	if common.IsInvoke() {
		c.fail(in.Pos(), "kernels cannot call methods through an interface")
	}
	var args []value
	argAt := func(i int) value { return c.value(fr, common.Args[i]) }
	switch fn := common.Value.(type) {
	case *ssa.Builtin:
		return c.builtin(fr, in, fn.Name())
	case *ssa.Function:
		obj, _ := fn.Object().(*types.Func)
		if obj == nil {
			c.fail(in.Pos(), "kernels cannot call %s", fn.Name())
		}
		path := ""
		if obj.Pkg() != nil {
			path = obj.Pkg().Path()
		}
		switch {
		case path == AMPPath:
			return c.ampCall(fr, in, obj, fn)
		case path == "math":
			return c.mathCall(fr, in, obj.Name(), false)
		case path == FastMathPath:
			return c.mathCall(fr, in, obj.Name(), true)
		case path == PreciseMathPath:
			return c.mathCall(fr, in, obj.Name(), false)
		case obj.Pkg() == c.pkg:
			for i := range common.Args {
				args = append(args, argAt(i))
			}
			return c.inline(fr, in, fn, args)
		}
		c.fail(in.Pos(), "kernels can call only functions of their own package (and amp's and math's); %s.%s is in %s: copy it into this package", obj.Pkg().Name(), obj.Name(), path)
	}
	c.fail(in.Pos(), "kernels cannot call function values; call a top-level function directly")
	return nil
}

// inline compiles a call of a function of the kernel's package in place.
func (c *compiler) inline(fr *frame, in *ssa.Call, fn *ssa.Function, args []value) value {
	body := fn
	subst := map[*types.TypeParam]types.Type{}
	if o := fn.Origin(); o != nil {
		body = o
		targs := fn.TypeArgs()
		for i := range body.TypeParams().Len() {
			subst[body.TypeParams().At(i)] = c.resolve(fr, targs[i])
		}
	}
	for _, s := range c.stack {
		if s == body {
			c.fail(in.Pos(), "kernels cannot be recursive: %s calls itself; write it as a loop", body.Name())
		}
	}
	if body.Signature.Variadic() {
		c.fail(in.Pos(), "kernels cannot call variadic functions (%s)", body.Name())
	}
	callee := newFrame(body, subst)
	for i, p := range body.Params {
		callee.vals[p] = args[i]
	}
	c.stack = append(c.stack, body)
	cont := c.f.NewBlock()
	c.body(callee, cont)
	c.stack = c.stack[:len(c.stack)-1]
	c.cur = cont
	n := body.Signature.Results().Len()
	if n == 0 || len(callee.results) == 0 {
		if len(callee.results) == 0 && n > 0 {
			c.fail(in.Pos(), "%s never returns", body.Name())
		}
		return nil
	}
	// Results meet at cont: one phi per scalar leaf, in cont's pred order.
	res := make([]value, n)
	for i := range n {
		first := callee.results[0][i]
		same := true
		for _, r := range callee.results[1:] {
			same = same && r[i] == first
		}
		if same || len(callee.results) == 1 {
			res[i] = first
			continue
		}
		if !isScalarish(first) {
			c.fail(in.Pos(), "%s returns different %s values from different returns; the GPU needs one known value", body.Name(), typeName(body.Signature.Results().At(i).Type()))
		}
		var parts []*ir.Value
		for _, l := range leaves(first) {
			parts = append(parts, cont.AddPhi(l.Type))
		}
		for _, pred := range cont.Preds {
			for k, from := range callee.retFrom {
				if from == pred {
					r := callee.results[k][i]
					if !sameShape(r, first) {
						c.fail(in.Pos(), "%s returns values of different shapes", body.Name())
					}
					for j, l := range leaves(r) {
						parts[j].Args = append(parts[j].Args, l)
					}
				}
			}
		}
		res[i], _ = rebuild(first, parts)
	}
	if n == 1 {
		return res[0]
	}
	return &aggVal{f: res}
}

func (c *compiler) builtin(fr *frame, in *ssa.Call, name string) value {
	args := in.Common().Args
	switch name {
	case "len", "cap":
		switch v := c.value(fr, args[0]).(type) {
		case *staticVal:
			return c.iconst(ir.I64, v.n)
		case *aggVal:
			return c.iconst(ir.I64, int64(len(v.f)))
		case *ptrVal:
			if v.shape.count > 0 {
				return c.iconst(ir.I64, int64(v.shape.count))
			}
		}
		c.fail(in.Pos(), "kernels can take len only of TileStatic slices and arrays")
	case "min", "max":
		op := ir.OpMin
		if name == "max" {
			op = ir.OpMax
		}
		r := c.scalar(fr, args[0])
		for _, a := range args[1:] {
			r = c.cur.Add(op, r.Type, r, c.scalar(fr, a))
		}
		return r
	}
	c.fail(in.Pos(), "kernels cannot call builtin %s", name)
	return nil
}

// field compiles x.f on a value.
func (c *compiler) field(fr *frame, in *ssa.Field) value {
	return c.fieldOf(c.value(fr, in.X), in.X.Type(), in.Field, in.Pos())
}

// fieldOf is field i of x, a value of type t.
func (c *compiler) fieldOf(x value, t types.Type, i int, pos token.Pos) value {
	switch x := x.(type) {
	case *tiledVal:
		name := fieldName(t, i)
		switch name {
		case "Global":
			return x.global
		case "Local":
			return x.local
		case "Tile":
			return x.tile
		case "TileOrigin":
			return x.origin
		case "TileExtent":
			return x.ext
		case "Barrier":
			return barrierVal{}
		}
		c.fail(pos, "kernels cannot use TiledIndex.%s", name)
	case *aggVal:
		return x.f[i]
	}
	c.fail(pos, "field %s of %s is not supported in kernels", fieldName(t, i), typeName(t))
	return nil
}

func fieldName(t types.Type, i int) string {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if s, ok := t.Underlying().(*types.Struct); ok && i < s.NumFields() {
		return s.Field(i).Name()
	}
	return fmt.Sprint(i)
}

// indexValue compiles a[i] on an array value (not in memory).
func (c *compiler) indexValue(fr *frame, in *ssa.Index) value {
	agg, ok := c.value(fr, in.X).(*aggVal)
	if !ok {
		c.fail(in.Pos(), "indexing %s is not supported in kernels", typeName(in.X.Type()))
	}
	i := c.scalar(fr, in.Index)
	if k, ok := i.ConstInt(); ok {
		if k < 0 || int(k) >= len(agg.f) {
			c.fail(in.Pos(), "index %d out of range of an array of %d", k, len(agg.f))
		}
		return agg.f[k]
	}
	// A dynamic index into an array value: select among its elements.
	c.reportIf(c.not(c.inRange(c.convert(i, ir.I64), int64(len(agg.f)))), ir.StatusStaticBounds, 0)
	r := agg.f[0]
	i64 := c.convert(i, ir.I64)
	for k := 1; k < len(agg.f); k++ {
		hit := c.cmp(ir.OpEq, i64, c.iconst(ir.I64, int64(k)))
		r = c.selectValue(hit, agg.f[k], r, in.Pos())
	}
	return r
}

func (c *compiler) selectValue(cond *ir.Value, x, y value, pos token.Pos) value {
	if !sameShape(x, y) || !isScalarish(x) {
		c.fail(pos, "cannot choose between values of this type at run time")
	}
	xl, yl := leaves(x), leaves(y)
	out := make([]*ir.Value, len(xl))
	for i := range xl {
		out[i] = c.cur.Add(ir.OpSelect, xl[i].Type, cond, xl[i], yl[i])
	}
	v, _ := rebuild(x, out)
	return v
}

// inRange is whether i (I64) lies in [0, n).
func (c *compiler) inRange(i *ir.Value, n int64) *ir.Value {
	if k, ok := i.ConstInt(); ok {
		return c.bconst(k >= 0 && k < n)
	}
	return c.cmp(ir.OpLt, c.convert(i, ir.U64), c.iconst(ir.U64, n))
}

// guarded runs access where ok holds; elsewhere it reports code and the
// result is the zero of t (Void: no result). The thread goes on either way,
// so barriers after it still meet.
func (c *compiler) guarded(ok *ir.Value, code, arg int, t ir.Type, access func() *ir.Value) *ir.Value {
	if k, isConst := ok.ConstInt(); isConst && k != 0 {
		return access()
	}
	acc, fail, join := c.f.NewBlock(), c.f.NewBlock(), c.f.NewBlock()
	c.cur.SetIf(ok, acc, fail)
	c.cur = acc
	v := access()
	c.cur.SetJump(join)
	c.cur = fail
	c.report(code, arg)
	fail.SetJump(join)
	c.cur = join
	if t == ir.Void {
		return nil
	}
	var zero *ir.Value
	if t.IsFloat() {
		zero = c.fconst(t, 0)
	} else {
		zero = c.iconst(t, 0)
	}
	phi := join.AddPhi(t)
	phi.Args = []*ir.Value{v, zero} // join.Preds: the access, then the failure
	return phi
}
