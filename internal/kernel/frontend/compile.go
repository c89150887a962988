package frontend

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// compiler turns one kernel, at one rank and one set of type arguments,
// into an ir.Func.
type compiler struct {
	fset  *token.FileSet
	pkg   *types.Package
	k     *Kernel
	f     *ir.Func
	rank  int
	cur   *ir.Block
	entry *ir.Block
	errs  ErrorList
	pos   token.Position // of the construct being compiled, for errors

	status *ir.Value
	dom    [ir.MaxRank]*ir.Value
	global *indexVal
	tiled  *tiledVal
	views  []*viewVal
	stack  []*ssa.Function

	fault *ir.Value // address of the thread's fault word (noteFault), nil until used

	statics       int
	staticBlocks  map[*ir.Block]token.Position // blocks that call TileStatic
	barriers      map[*ir.Value]token.Position
	sharedBytes   int
	consts        map[constKey]*ir.Value
	staticsByCall map[*ssa.Call]*staticVal
}

type constKey struct {
	t    ir.Type
	bits uint64
}

// bail stops compiling the current kernel: the error is in c.errs.
type bail struct{}

func (c *compiler) fail(pos token.Pos, format string, args ...any) {
	p := c.pos
	if pos.IsValid() {
		p = c.fset.Position(pos)
	}
	c.errs = append(c.errs, &Error{p, fmt.Sprintf(format, args...)})
	panic(bail{})
}

// compileKernel compiles fn for every rank and every instance.
func compileKernel(pkg *Package, fn *ssa.Function, fd *ast.FuncDecl, dir directive) ([]*Kernel, ErrorList) {
	pos := pkg.Fset.Position(fd.Pos())
	combos, err := instances(fn, pos)
	if err != nil {
		return nil, ErrorList{err}
	}
	var out []*Kernel
	var errs ErrorList
	for _, targs := range combos {
		k := &Kernel{GoName: fn.Name(), Name: fn.Name(), TypeArgs: targs, Pos: pos, Package: pkg.Name, Tile: dir.tile, Blocks: dir.blocks, Regs: dir.regs}
		subst := map[*types.TypeParam]types.Type{}
		if len(targs) > 0 {
			var names []string
			for i, t := range targs {
				subst[fn.TypeParams().At(i)] = t
				names = append(names, types.TypeString(t, nil))
			}
			k.Name += "[" + strings.Join(names, ",") + "]"
			if n, ok := dir.regsFor[strings.Join(names, ",")]; ok {
				k.Regs = n
			}
		}
		ok := true
		for r := 1; r <= ir.MaxRank; r++ {
			if dir.tile != nil && r != len(dir.tile) {
				continue // compiled for one tile shape, so for its rank only
			}
			c := &compiler{fset: pkg.Fset, pkg: fn.Pkg.Pkg, k: k, rank: r, pos: pos,
				staticBlocks: map[*ir.Block]token.Position{}, barriers: map[*ir.Value]token.Position{},
				consts: map[constKey]*ir.Value{}, staticsByCall: map[*ssa.Call]*staticVal{}}
			f, cerrs := c.compile(fn, subst, k.Args == nil)
			errs = append(errs, cerrs...)
			if f == nil {
				ok = false
				break
			}
			k.Funcs[r] = f
		}
		if ok {
			out = append(out, k)
		}
	}
	return out, errs
}

// entryName is the PTX symbol of a kernel at a rank.
func entryName(k *Kernel, rank int) string {
	var sb strings.Builder
	sb.WriteString("goamp_")
	for _, r := range k.Name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	fmt.Fprintf(&sb, "_r%d", rank)
	return sb.String()
}

func (c *compiler) compile(fn *ssa.Function, subst map[*types.TypeParam]types.Type, first bool) (f *ir.Func, errs ErrorList) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bail); !ok {
				panic(r)
			}
			f = nil
		}
		errs = c.errs
	}()
	c.f = ir.NewFunc(entryName(c.k, c.rank))
	c.f.MaxRegs = c.k.Regs
	c.f.Comment = []string{fmt.Sprintf("%s for a rank-%d domain (%s:%d)", c.k.Name, c.rank, shortFile(c.k.Pos.Filename), c.k.Pos.Line)}
	c.entry = c.f.Entry()
	c.cur = c.entry
	if fn.Signature.Results().Len() != 0 {
		c.fail(fn.Pos(), "kernel %s returns a value; kernels write their results to array views", fn.Name())
	}
	params := fn.Params
	if len(params) == 0 {
		c.fail(fn.Pos(), "kernel %s needs an amp.Index or amp.TiledIndex as its first parameter", fn.Name())
	}
	c.status = c.param("status", ir.U64)
	for d := range c.rank {
		c.dom[d] = c.nonNegParam(fmt.Sprintf("dom%d", d), ir.I64)
	}
	fr := newFrame(fn, subst)
	// The first parameter: the thread's place in the domain.
	switch c.ampName(params[0].Type()) {
	case "TiledIndex":
		c.k.Tiled = true
	case "Index":
		if c.k.Tile != nil {
			c.fail(fn.Pos(), "kernel %s takes an amp.Index: tile= is for kernels that take an amp.TiledIndex", fn.Name())
		}
	default:
		c.fail(params[0].Pos(), "the first parameter of kernel %s is %s; it must be amp.Index or amp.TiledIndex", fn.Name(), params[0].Type())
	}
	c.k.Index = params[0].Name()
	var args []*Arg
	for i, p := range params[1:] {
		t := c.resolve(fr, p.Type())
		a := &Arg{Name: p.Name(), Type: t}
		if !first {
			a = c.k.Args[i]
		}
		if elem, ok := c.viewElem(t); ok {
			a.View, a.Elem = true, elem
			v := &viewVal{arg: i, elem: elem}
			v.base = c.param(p.Name()+"_base", ir.U64)
			v.rank = c.param(p.Name()+"_rank", ir.U32)
			for d := range ir.MaxRank {
				v.n[d] = c.nonNegParam(fmt.Sprintf("%s_n%d", p.Name(), d), ir.I64)
			}
			for d := range ir.MaxRank - 1 {
				v.s[d] = c.nonNegParam(fmt.Sprintf("%s_s%d", p.Name(), d), ir.I64)
			}
			c.views = append(c.views, v)
			fr.vals[p] = v
		} else if st, isBool, ok := scalarType(t); ok {
			a.Elem, a.IsBool = st, isBool
			if isBool {
				u := c.param(p.Name(), ir.U32)
				fr.vals[p] = c.cmp(ir.OpNe, u, c.iconst(ir.U32, 0))
			} else {
				fr.vals[p] = c.param(p.Name(), st)
			}
		} else {
			c.fail(p.Pos(), "kernel parameter %s has type %s; kernel arguments are *amp.ArrayView[T] (T float32, float64 or int32) or scalars (bool, int32, uint32, int, int64, uint, uint64, float32, float64)", p.Name(), t)
		}
		args = append(args, a)
	}
	c.k.Args = args // the same Args for every rank: Read, Write and Ranks add up
	c.k.Sig = fn.Signature
	c.setupIndex(fr, params[0])
	c.stack = append(c.stack, fn)
	c.body(fr, nil)
	c.reportFaults()
	if c.sharedBytes > 0 {
		c.checkStaticLoops()
	}
	c.checkBarriers()
	if err := c.f.Verify(); err != nil {
		c.errs = append(c.errs, &Error{c.k.Pos, "internal compiler error: " + err.Error()})
		return nil, c.errs
	}
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return c.f, nil
}

func shortFile(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// nonNegParam is a parameter the runtime never passes negative (an
// extent or a stride).
func (c *compiler) nonNegParam(name string, t ir.Type) *ir.Value {
	v := c.param(name, t)
	c.f.Params[v.Aux].NonNeg = true
	return v
}

func (c *compiler) param(name string, t ir.Type) *ir.Value {
	i := c.f.AddParam(name, t)
	v := c.entry.Add(ir.OpParam, t)
	v.Aux = i
	return v
}

// setupIndex computes the thread's indices. Dimension rank-1 is the
// fastest and runs along x, as C++ AMP maps its last dimension.
func (c *compiler) setupIndex(fr *frame, p *ssa.Parameter) {
	axis := func(d int) int { return c.rank - 1 - d }
	special := func(s ir.Special) *ir.Value {
		v := c.entry.Add(ir.OpSpecial, ir.U32)
		v.Aux = int(s)
		return c.convert(v, ir.I64)
	}
	g := &indexVal{rank: c.rank}
	local := &indexVal{rank: c.rank}
	tile := &indexVal{rank: c.rank}
	origin := &indexVal{rank: c.rank}
	ext := &extentVal{rank: c.rank}
	if c.k.Tile != nil {
		c.f.Block = [3]int{1, 1, 1}
		for d, n := range c.k.Tile {
			c.f.Block[axis(d)] = n
		}
		c.f.MinBlocks = c.k.Blocks
	}
	for d := range c.rank {
		a := axis(d)
		tid := special(ir.TidX + ir.Special(a))
		ntid := special(ir.NtidX + ir.Special(a))
		if c.k.Tile != nil {
			ntid = c.iconst(ir.I64, int64(c.k.Tile[d]))
		}
		ctaid := special(ir.CtaidX + ir.Special(a))
		local.c[d], tile.c[d], ext.n[d] = tid, ctaid, ntid
		origin.c[d] = c.binop(ir.OpMul, ctaid, ntid)
		g.c[d] = c.binop(ir.OpAdd, origin.c[d], tid)
	}
	c.global = g
	if c.k.Tiled {
		c.tiled = &tiledVal{global: g, local: local, tile: tile, origin: origin, ext: ext}
		fr.vals[p] = c.tiled
		return
	}
	// A plain domain is covered by whole blocks: threads past its end return.
	var out *ir.Value
	for d := range c.rank {
		o := c.cmp(ir.OpGe, c.convert(g.c[d], ir.U64), c.convert(c.dom[d], ir.U64))
		if out == nil {
			out = o
		} else {
			out = c.binop(ir.OpOr, out, o)
		}
	}
	exit, body := c.f.NewBlock(), c.f.NewBlock()
	c.cur.SetIf(out, exit, body)
	exit.SetReturn()
	c.cur = body
	fr.vals[p] = g
}

// frame is one inlined call of a function (the kernel itself at the top).
type frame struct {
	fn      *ssa.Function
	subst   map[*types.TypeParam]types.Type
	vals    map[ssa.Value]value
	entry   map[*ssa.BasicBlock]*ir.Block
	exit    map[*ssa.BasicBlock]*ir.Block
	exitOf  map[*ir.Block]*ssa.BasicBlock
	phis    []pendingPhi
	cont    *ir.Block // where an inlined call's returns go; nil at the top
	results [][]value // per return, with retFrom
	retFrom []*ir.Block
}

type pendingPhi struct {
	phi      *ssa.Phi
	template value
	parts    []*ir.Value
}

func newFrame(fn *ssa.Function, subst map[*types.TypeParam]types.Type) *frame {
	return &frame{fn: fn, subst: subst, vals: map[ssa.Value]value{},
		entry: map[*ssa.BasicBlock]*ir.Block{}, exit: map[*ssa.BasicBlock]*ir.Block{}, exitOf: map[*ir.Block]*ssa.BasicBlock{}}
}

// body compiles fr.fn's blocks, starting from c.cur. With cont set (an
// inlined call) returns jump there; the results are in fr.results.
func (c *compiler) body(fr *frame, cont *ir.Block) {
	fn := fr.fn
	if fn.Blocks == nil {
		c.fail(fn.Pos(), "%s has no Go body the compiler can see (assembly or a function from another package?)", fn.Name())
	}
	fr.cont = cont
	for _, b := range fn.Blocks {
		fr.entry[b] = c.f.NewBlock()
	}
	c.cur.SetJump(fr.entry[fn.Blocks[0]])
	for _, b := range fn.DomPreorder() {
		c.cur = fr.entry[b]
		if b.Comment != "" && c.cur.Comment == "" {
			c.cur.Comment = ""
		}
		for _, in := range b.Instrs {
			if p := in.Pos(); p.IsValid() {
				c.pos = c.fset.Position(p)
			}
			c.instr(fr, in)
		}
	}
	for _, pp := range fr.phis {
		c.fillPhi(fr, pp)
	}
}

func (c *compiler) fillPhi(fr *frame, pp pendingPhi) {
	b := fr.entry[pp.phi.Block()]
	if pp.parts == nil { // a phi of non-scalars: every edge must carry the same one
		for _, e := range pp.phi.Edges {
			if v := c.value(fr, e); v != pp.template {
				c.fail(pp.phi.Pos(), "%s values meet at a join from different sources; the GPU needs each such value to be one known argument or TileStatic slice", typeName(pp.phi.Type()))
			}
		}
		return
	}
	for _, irPred := range b.Preds {
		sp := fr.exitOf[irPred]
		idx := -1
		for i, p := range pp.phi.Block().Preds {
			if p == sp {
				idx = i
			}
		}
		if idx < 0 {
			c.fail(pp.phi.Pos(), "internal compiler error: phi edge not found")
		}
		v := c.value(fr, pp.phi.Edges[idx])
		if !sameShape(v, pp.template) {
			c.fail(pp.phi.Pos(), "values of different shapes meet at a join (indices of different ranks?)")
		}
		for i, l := range leaves(v) {
			pp.parts[i].Args = append(pp.parts[i].Args, l)
		}
	}
}

// value is the compiled form of an SSA value: an instruction's result
// already compiled, or a constant, made in the entry block.
func (c *compiler) value(fr *frame, v ssa.Value) value {
	if x, ok := fr.vals[v]; ok {
		return x
	}
	switch v := v.(type) {
	case *ssa.Const:
		return c.constant(fr, v)
	case *ssa.Global:
		c.fail(token.NoPos, "kernels cannot use package-level variable %s; pass its value as an argument", v.Name())
	case *ssa.Function:
		c.fail(v.Pos(), "kernels cannot use function %s as a value; call it directly", v.Name())
	case *ssa.FreeVar:
		c.fail(v.Pos(), "kernels cannot use variable %s captured from an enclosing function; pass it as an argument", v.Name())
	case *ssa.Builtin:
		c.fail(v.Pos(), "kernels cannot use builtin %s as a value", v.Name())
	}
	c.fail(v.Pos(), "internal compiler error: %s (%T) used before it is compiled", v.Name(), v)
	return nil
}

func (c *compiler) constant(fr *frame, k *ssa.Const) value {
	t := c.resolve(fr, k.Type())
	if k.Value == nil {
		return c.zero(t, k.Pos())
	}
	st, _, ok := scalarType(t)
	if !ok {
		c.fail(k.Pos(), "constants of type %s are not supported in kernels", t)
	}
	switch st {
	case ir.Bool:
		return c.bconst(constant.BoolVal(k.Value))
	case ir.F32, ir.F64:
		x, _ := constant.Float64Val(constant.ToFloat(k.Value))
		return c.fconst(st, x)
	case ir.U64, ir.U32:
		x, _ := constant.Uint64Val(constant.ToInt(k.Value))
		return c.iconst(st, int64(x))
	default:
		x, _ := constant.Int64Val(constant.ToInt(k.Value))
		return c.iconst(st, x)
	}
}

// zero is the zero value of t.
func (c *compiler) zero(t types.Type, pos token.Pos) value {
	if st, _, ok := scalarType(t); ok {
		if st.IsFloat() {
			return c.fconst(st, 0)
		}
		return c.iconst(st, 0)
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		if c.ampName(t) != "" {
			c.fail(pos, "the zero %s is not supported in kernels; use the kernel's own indices or amp.Index1/2/3", typeName(t))
		}
		a := &aggVal{}
		for i := range u.NumFields() {
			a.f = append(a.f, c.zero(u.Field(i).Type(), pos))
		}
		return a
	case *types.Array:
		a := &aggVal{}
		for range u.Len() {
			a.f = append(a.f, c.zero(u.Elem(), pos))
		}
		return a
	}
	c.refuseType(t, pos)
	return nil
}

// refuseType says that kernels cannot hold values of type t.
func (c *compiler) refuseType(t types.Type, pos token.Pos) {
	switch t.Underlying().(type) {
	case *types.Signature:
		c.fail(pos, "kernels cannot use function values; call a top-level function directly")
	case *types.Interface:
		c.fail(pos, "kernels cannot use interfaces; use concrete types")
	case *types.Slice:
		c.fail(pos, "kernels cannot hold slices other than amp.TileStatic's; use a fixed-size array")
	case *types.Map:
		c.fail(pos, "kernels cannot use maps; use fixed-size arrays or array views")
	case *types.Chan:
		c.fail(pos, "kernels cannot use channels")
	case *types.Pointer:
		c.fail(pos, "kernels cannot hold pointers other than *amp.ArrayView arguments")
	}
	if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
		c.fail(pos, "kernels cannot use strings")
	}
	c.fail(pos, "kernels cannot hold values of type %s", typeName(t))
}

// constIn keeps constants in the entry block, which dominates every use.
func (c *compiler) iconst(t ir.Type, x int64) *ir.Value {
	probe := &ir.Value{Op: ir.OpConst, Type: t}
	if t == ir.Bool {
		if x != 0 {
			probe.Const = 1
		}
	} else if t == ir.I32 || t == ir.U32 {
		probe.Const = uint64(uint32(x))
	} else {
		probe.Const = uint64(x)
	}
	key := constKey{t, probe.Const}
	if v, ok := c.consts[key]; ok {
		return v
	}
	v := c.entry.Const(t, x)
	c.consts[key] = v
	return v
}

func (c *compiler) bconst(b bool) *ir.Value {
	if b {
		return c.iconst(ir.Bool, 1)
	}
	return c.iconst(ir.Bool, 0)
}

func (c *compiler) fconst(t ir.Type, x float64) *ir.Value {
	if t == ir.F32 {
		x = float64(float32(x))
	}
	key := constKey{t, math.Float64bits(x)}
	if v, ok := c.consts[key]; ok {
		return v
	}
	v := c.entry.ConstFloat(t, x)
	c.consts[key] = v
	return v
}

// resolve substitutes the frame's type arguments into t.
func (c *compiler) resolve(fr *frame, t types.Type) types.Type {
	if len(fr.subst) == 0 {
		return t
	}
	return substType(t, fr.subst)
}

func substType(t types.Type, subst map[*types.TypeParam]types.Type) types.Type {
	switch t := t.(type) {
	case *types.TypeParam:
		if s, ok := subst[t]; ok {
			return s
		}
		return t
	case *types.Pointer:
		return types.NewPointer(substType(t.Elem(), subst))
	case *types.Slice:
		return types.NewSlice(substType(t.Elem(), subst))
	case *types.Array:
		return types.NewArray(substType(t.Elem(), subst), t.Len())
	case *types.Named:
		if t.TypeArgs().Len() == 0 {
			return t
		}
		var args []types.Type
		for i := range t.TypeArgs().Len() {
			args = append(args, substType(t.TypeArgs().At(i), subst))
		}
		inst, err := types.Instantiate(nil, t.Origin(), args, false)
		if err != nil {
			return t
		}
		return inst
	}
	return t
}

// ampName is the name of t if it is one of package amp's named types (or a
// pointer to one), else "".
func (c *compiler) ampName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != AMPPath {
		return ""
	}
	return n.Obj().Name()
}

// viewElem reports whether t is *amp.ArrayView[T] and gives T.
func (c *compiler) viewElem(t types.Type) (ir.Type, bool) {
	p, ok := t.(*types.Pointer)
	if !ok || c.ampName(p.Elem()) != "ArrayView" {
		return 0, false
	}
	n := p.Elem().(*types.Named)
	if n.TypeArgs().Len() != 1 {
		return 0, false
	}
	st, isBool, ok := scalarType(n.TypeArgs().At(0))
	if !ok || isBool || st == ir.U32 || st == ir.I64 || st == ir.U64 {
		return 0, false
	}
	return st, true
}

// scalarType maps a Go scalar type to its IR type.
func scalarType(t types.Type) (st ir.Type, isBool, ok bool) {
	b, ok := t.Underlying().(*types.Basic)
	if !ok {
		return 0, false, false
	}
	switch b.Kind() {
	case types.Bool, types.UntypedBool:
		return ir.Bool, true, true
	case types.Int32, types.UntypedRune:
		return ir.I32, false, true
	case types.Uint32:
		return ir.U32, false, true
	case types.Int, types.Int64, types.UntypedInt:
		return ir.I64, false, true
	case types.Uint, types.Uint64:
		return ir.U64, false, true
	case types.Float32:
		return ir.F32, false, true
	case types.Float64, types.UntypedFloat:
		return ir.F64, false, true
	}
	return 0, false, false
}

func typeName(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Name() })
}
