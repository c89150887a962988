package ir

import (
	"fmt"
	"math"
	"strings"
)

// Value is one SSA value: an operation, its operands and its result type.
// Values that produce nothing (Store, Barrier, Status) have Type Void.
type Value struct {
	ID    int
	Op    Op
	Type  Type
	Args  []*Value
	Aux   int    // Op-specific: param, special, shared or local index; Atomic, Shuffle or MathFn
	Const uint64 // OpConst bits; OpShuffle width
	Space Space  // OpLoad, OpStore, OpAtomic
	Fast  bool   // OpMath: the hardware approximation is good enough
	Block *Block
}

// ConstInt returns the value of an integer or Bool constant, sign-extended
// from signed types; ok is false if v is not a constant.
func (v *Value) ConstInt() (x int64, ok bool) {
	if v.Op != OpConst || v.Type.IsFloat() {
		return 0, false
	}
	switch v.Type {
	case I32:
		return int64(int32(v.Const)), true
	case U32:
		return int64(uint32(v.Const)), true
	}
	return int64(v.Const), true
}

// ConstFloat returns the value of a float constant.
func (v *Value) ConstFloat() (x float64, ok bool) {
	if v.Op != OpConst || !v.Type.IsFloat() {
		return 0, false
	}
	return math.Float64frombits(v.Const), true
}

// BlockKind is how a block ends.
type BlockKind uint8

// The terminators.
const (
	Jump   BlockKind = iota + 1 // to Succs[0]
	If                          // to Succs[0] if Cond, else Succs[1]
	Return                      // the thread ends
)

// Block is a basic block: values computed in order, then a terminator.
// Phi values come first.
type Block struct {
	ID     int
	Values []*Value
	Kind   BlockKind
	Cond   *Value // If
	Succs  []*Block
	Preds  []*Block
	Func   *Func
	// Comment, if not empty, is written before the block's label (a source
	// position, for a reader of the PTX).
	Comment string
}

// Param is a kernel parameter, passed by value at launch.
type Param struct {
	Name string
	Type Type // not Bool: a flag is passed as U32
	// NonNeg promises that the value is never negative and at most
	// MaxNonNeg (an extent, a stride: the runtime checks it at launch),
	// which lets passes reason about ranges.
	NonNeg bool
}

// MaxNonNeg is the most a NonNeg parameter can be: 2^62, more than any
// extent or stride of memory that exists, and far enough from 2^63 that an
// index near it plus a tile or a loop step does not wrap.
const MaxNonNeg = 1 << 62

// MaxSmall and MaxSmallGrid bound a SmallIndices entry's NonNeg
// parameters and grid dimensions.
const (
	MaxSmall     = 1<<31 - 1
	MaxSmallGrid = 1 << 21
)

// Array is a fixed-size array in shared or local memory.
type Array struct {
	Name string
	Elem Type
	Len  int
}

// Bytes is the array's size in bytes.
func (a Array) Bytes() int { return a.Elem.Size() * a.Len }

// Func is one kernel entry point.
type Func struct {
	Name   string // the entry's symbol
	Params []Param
	Shared []Array
	Locals []Array
	Blocks []*Block // Blocks[0] is the entry
	// MaxThreads, if not 0, is the most threads a block of this kernel is
	// launched with (.maxntid), which lets the back end's register
	// allocator plan for it.
	MaxThreads int
	// Block, if not zero, is the exact shape (x, y, z) of every block the
	// kernel is launched with (.reqntid): the tile sizes a kernel was
	// compiled for.
	Block [3]int
	// MinBlocks, if not 0 (and Block is set), is how many blocks a
	// multiprocessor should hold at once (.minnctapersm), which caps the
	// registers a thread may use.
	MinBlocks int
	// MaxRegs, if not 0, caps the registers a thread may use (.maxnreg),
	// so that more threads fit on a multiprocessor.
	MaxRegs int
	// SmallIndices marks an entry the runtime launches only when every
	// NonNeg parameter is at most MaxSmall and every grid dimension at
	// most MaxSmallGrid blocks: its indices then fit in 32 bits, and the
	// passes may use that to compute them in 32 bits.
	SmallIndices bool
	// Comment lines go before the entry (the kernel's Go source position).
	Comment []string

	nextValue, nextBlock int
}

// Module is a set of kernels compiled together into one PTX module.
type Module struct {
	Funcs []*Func
}

// NewFunc returns a kernel with an empty entry block.
func NewFunc(name string) *Func {
	f := &Func{Name: name}
	f.NewBlock()
	return f
}

// Entry is the first block.
func (f *Func) Entry() *Block { return f.Blocks[0] }

// NewBlock appends an empty block.
func (f *Func) NewBlock() *Block {
	b := &Block{ID: f.nextBlock, Func: f}
	f.nextBlock++
	f.Blocks = append(f.Blocks, b)
	return b
}

// AddParam appends a parameter and returns its index.
func (f *Func) AddParam(name string, t Type) int {
	f.Params = append(f.Params, Param{Name: name, Type: t})
	return len(f.Params) - 1
}

// AddShared appends a shared-memory array and returns its index.
func (f *Func) AddShared(name string, elem Type, n int) int {
	f.Shared = append(f.Shared, Array{Name: name, Elem: elem, Len: n})
	return len(f.Shared) - 1
}

// AddLocal appends a thread-local array and returns its index.
func (f *Func) AddLocal(name string, elem Type, n int) int {
	f.Locals = append(f.Locals, Array{Name: name, Elem: elem, Len: n})
	return len(f.Locals) - 1
}

// SharedBytes is the static shared memory the kernel declares.
func (f *Func) SharedBytes() int {
	n := 0
	for _, a := range f.Shared {
		n = (n+7)&^7 + a.Bytes()
	}
	return n
}

// NumValues is one more than the highest Value ID handed out.
func (f *Func) NumValues() int { return f.nextValue }

// newValue makes a value without placing it in a block.
func (f *Func) newValue(op Op, t Type, args ...*Value) *Value {
	v := &Value{ID: f.nextValue, Op: op, Type: t, Args: args}
	f.nextValue++
	return v
}

// NewValue makes a value that belongs to block b but is not yet in its
// Values: for passes that place it themselves.
func (f *Func) NewValue(b *Block, op Op, t Type, args ...*Value) *Value {
	v := f.newValue(op, t, args...)
	v.Block = b
	return v
}

// Add appends a value computing op over args to b.
func (b *Block) Add(op Op, t Type, args ...*Value) *Value {
	v := b.Func.newValue(op, t, args...)
	v.Block = b
	b.Values = append(b.Values, v)
	return v
}

// AddPhi inserts a phi at the start of b (after b's other phis). Its Args
// are set later, one per predecessor, with SetPhiArgs or by appending.
func (b *Block) AddPhi(t Type) *Value {
	v := b.Func.newValue(OpPhi, t)
	v.Block = b
	i := 0
	for i < len(b.Values) && b.Values[i].Op == OpPhi {
		i++
	}
	b.Values = append(b.Values, nil)
	copy(b.Values[i+1:], b.Values[i:])
	b.Values[i] = v
	return v
}

// Const appends an integer or Bool constant of type t holding x (truncated
// to t's width).
func (b *Block) Const(t Type, x int64) *Value {
	v := b.Add(OpConst, t)
	switch t {
	case F32, F64:
		v.Const = math.Float64bits(float64(x))
	case Bool:
		if x != 0 {
			v.Const = 1
		}
	case I32, U32:
		v.Const = uint64(uint32(x))
	default:
		v.Const = uint64(x)
	}
	return v
}

// ConstFloat appends a float constant of type t (F32 values are rounded to
// float32 first).
func (b *Block) ConstFloat(t Type, x float64) *Value {
	if t == F32 {
		x = float64(float32(x))
	}
	v := b.Add(OpConst, t)
	v.Const = math.Float64bits(x)
	return v
}

// SetJump ends b with a jump to to.
func (b *Block) SetJump(to *Block) {
	b.Kind, b.Succs = Jump, []*Block{to}
	to.Preds = append(to.Preds, b)
}

// SetIf ends b with a branch on cond.
func (b *Block) SetIf(cond *Value, then, els *Block) {
	b.Kind, b.Cond, b.Succs = If, cond, []*Block{then, els}
	then.Preds = append(then.Preds, b)
	els.Preds = append(els.Preds, b)
}

// SetReturn ends b: the thread is done.
func (b *Block) SetReturn() { b.Kind = Return }

// Verify checks the IR's rules: every block terminated, operands of the
// right types and counts, phis first with one argument per predecessor,
// every operand defined in a block that dominates its use (or, for a phi,
// the matching predecessor), IDs unique.
func (f *Func) Verify() error {
	if len(f.Blocks) == 0 {
		return fmt.Errorf("ir: %s: no blocks", f.Name)
	}
	idom := f.Dominators()
	where := map[*Value]int{} // position within block
	seen := map[int]bool{}
	for _, b := range f.Blocks {
		for i, v := range b.Values {
			if v.Block != b {
				return fmt.Errorf("ir: %s: v%d listed in b%d belongs to another block", f.Name, v.ID, b.ID)
			}
			if seen[v.ID] {
				return fmt.Errorf("ir: %s: value ID %d used twice", f.Name, v.ID)
			}
			seen[v.ID] = true
			where[v] = i
		}
	}
	dominates := func(a, b *Block) bool {
		for ; b != nil; b = idom[b] {
			if a == b {
				return true
			}
			if idom[b] == b {
				return false
			}
		}
		return false
	}
	for _, b := range f.Blocks {
		if _, ok := idom[b]; !ok {
			continue // unreachable blocks are allowed and ignored
		}
		phis := true
		for i, v := range b.Values {
			if v.Op == OpPhi {
				if !phis {
					return fmt.Errorf("ir: %s: phi v%d after non-phi in b%d", f.Name, v.ID, b.ID)
				}
				if len(v.Args) != len(b.Preds) {
					return fmt.Errorf("ir: %s: phi v%d has %d args, b%d has %d preds", f.Name, v.ID, len(v.Args), b.ID, len(b.Preds))
				}
				for k, a := range v.Args {
					if a == nil || a.Type != v.Type {
						return fmt.Errorf("ir: %s: phi v%d arg %d: wrong type", f.Name, v.ID, k)
					}
					if _, ok := idom[b.Preds[k]]; ok && !dominates(a.Block, b.Preds[k]) {
						return fmt.Errorf("ir: %s: phi v%d arg v%d does not dominate pred b%d", f.Name, v.ID, a.ID, b.Preds[k].ID)
					}
				}
				continue
			}
			phis = false
			for _, a := range v.Args {
				if a == nil {
					return fmt.Errorf("ir: %s: v%d has a nil operand", f.Name, v.ID)
				}
				if _, ok := where[a]; !ok {
					return fmt.Errorf("ir: %s: v%d uses v%d, which is in no block", f.Name, v.ID, a.ID)
				}
				if a.Block == b && where[a] >= i || a.Block != b && !dominates(a.Block, b) {
					return fmt.Errorf("ir: %s: v%d (%s) uses v%d before it is defined", f.Name, v.ID, v.Op, a.ID)
				}
			}
			if err := f.checkOperands(v); err != nil {
				return err
			}
		}
		switch b.Kind {
		case Jump:
			if len(b.Succs) != 1 {
				return fmt.Errorf("ir: %s: b%d jumps to %d blocks", f.Name, b.ID, len(b.Succs))
			}
		case If:
			if len(b.Succs) != 2 || b.Cond == nil || b.Cond.Type != Bool {
				return fmt.Errorf("ir: %s: b%d: malformed If", f.Name, b.ID)
			}
			if b.Cond.Block != b && !dominates(b.Cond.Block, b) {
				return fmt.Errorf("ir: %s: b%d: condition v%d does not dominate", f.Name, b.ID, b.Cond.ID)
			}
		case Return:
		default:
			return fmt.Errorf("ir: %s: b%d has no terminator", f.Name, b.ID)
		}
		for _, s := range b.Succs {
			found := false
			for _, p := range s.Preds {
				found = found || p == b
			}
			if !found {
				return fmt.Errorf("ir: %s: b%d -> b%d missing from Preds", f.Name, b.ID, s.ID)
			}
		}
	}
	return nil
}

func (f *Func) checkOperands(v *Value) error {
	bad := func(why string) error {
		return fmt.Errorf("ir: %s: v%d = %s %s: %s", f.Name, v.ID, v.Op, v.Type, why)
	}
	nargs := func(n int) error {
		if len(v.Args) != n {
			return bad(fmt.Sprintf("%d operands, want %d", len(v.Args), n))
		}
		return nil
	}
	same := func(args ...*Value) error {
		for _, a := range args {
			if a.Type != v.Type {
				return bad(fmt.Sprintf("operand v%d is %s", a.ID, a.Type))
			}
		}
		return nil
	}
	switch op := v.Op; {
	case op == OpConst:
		return nargs(0)
	case op == OpParam:
		if v.Aux < 0 || v.Aux >= len(f.Params) || f.Params[v.Aux].Type != v.Type {
			return bad("no such parameter of that type")
		}
		return nargs(0)
	case op == OpSpecial:
		if v.Type != U32 {
			return bad("special registers are u32")
		}
		return nargs(0)
	case op.IsBinary():
		if err := nargs(2); err != nil {
			return err
		}
		if op == OpRem && !v.Type.IsInt() || (op == OpAnd || op == OpOr || op == OpXor) && v.Type.IsFloat() {
			return bad("not defined on this type")
		}
		return same(v.Args...)
	case op == OpShl || op == OpShr:
		if err := nargs(2); err != nil {
			return err
		}
		if !v.Type.IsInt() || v.Args[1].Type != U32 {
			return bad("shifts take an integer and a u32 count")
		}
		return same(v.Args[0])
	case op == OpNeg || op == OpNot:
		if err := nargs(1); err != nil {
			return err
		}
		return same(v.Args...)
	case op.IsCompare():
		if err := nargs(2); err != nil {
			return err
		}
		if v.Type != Bool || v.Args[0].Type != v.Args[1].Type {
			return bad("comparisons take two operands of one type and give bool")
		}
	case op == OpConvert:
		return nargs(1)
	case op == OpBitcast:
		if err := nargs(1); err != nil {
			return err
		}
		if v.Args[0].Type.Size() != v.Type.Size() || v.Type.Size() == 0 {
			return bad("bitcast between types of different sizes")
		}
	case op == OpSelect:
		if err := nargs(3); err != nil {
			return err
		}
		if v.Args[0].Type != Bool {
			return bad("select's condition is not bool")
		}
		return same(v.Args[1:]...)
	case op == OpSharedAddr:
		if v.Aux < 0 || v.Aux >= len(f.Shared) || v.Type != U32 {
			return bad("no such shared array")
		}
	case op == OpLocalAddr:
		if v.Aux < 0 || v.Aux >= len(f.Locals) || v.Type != U64 {
			return bad("no such local array")
		}
	case op == OpLoad, op == OpStore, op == OpAtomic:
		if v.Space < Global || v.Space > Local {
			return bad("no memory space")
		}
		if len(v.Args) == 0 || v.Args[0].Type != v.Space.AddrType() {
			return bad("address of the wrong type for the space")
		}
		switch op {
		case OpLoad:
			if v.Type.Size() == 0 {
				return bad("loads a type without a size")
			}
			return nargs(1)
		case OpStore:
			if err := nargs(2); err != nil {
				return err
			}
			if v.Type != Void || v.Args[1].Type.Size() == 0 {
				return bad("stores a type without a size")
			}
		case OpAtomic:
			n := 2
			if Atomic(v.Aux) == AtomicCAS {
				n = 3
			}
			if err := nargs(n); err != nil {
				return err
			}
			return same(v.Args[1:]...)
		}
	case op == OpBarrier:
		if v.Type != Void {
			return bad("barrier has no value")
		}
		return nargs(0)
	case op == OpShuffle:
		if err := nargs(2); err != nil {
			return err
		}
		if v.Type != I32 && v.Type != U32 && v.Type != F32 || v.Args[1].Type != U32 {
			return bad("shuffles move 32-bit values by a u32 lane")
		}
		if w := v.Const; w < 1 || w > 32 || w&(w-1) != 0 {
			return bad("shuffle width not a power of two up to 32")
		}
		return same(v.Args[0])
	case op == OpMath:
		if !v.Type.IsFloat() {
			return bad("math on a non-float type")
		}
		if err := nargs(MathFn(v.Aux).Arity()); err != nil {
			return err
		}
		return same(v.Args...)
	case op == OpStatus:
		if err := nargs(6); err != nil {
			return err
		}
		want := []Type{U64, U32, U32, I64, I64, I64}
		for i, a := range v.Args {
			if a.Type != want[i] {
				return bad(fmt.Sprintf("operand %d is %s, want %s", i, a.Type, want[i]))
			}
		}
	default:
		return bad("unknown op")
	}
	return nil
}

// String prints the function, one value a line, for tests and debugging.
func (f *Func) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "func %s(", f.Name)
	for i, p := range f.Params {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s %s", p.Name, p.Type)
	}
	sb.WriteString(")\n")
	for i, a := range f.Shared {
		fmt.Fprintf(&sb, "  shared %d %s [%d]%s\n", i, a.Name, a.Len, a.Elem)
	}
	for i, a := range f.Locals {
		fmt.Fprintf(&sb, "  local %d %s [%d]%s\n", i, a.Name, a.Len, a.Elem)
	}
	for _, b := range f.Blocks {
		fmt.Fprintf(&sb, "b%d:", b.ID)
		if len(b.Preds) > 0 {
			sb.WriteString(" <-")
			for _, p := range b.Preds {
				fmt.Fprintf(&sb, " b%d", p.ID)
			}
		}
		sb.WriteString("\n")
		for _, v := range b.Values {
			sb.WriteString("  " + v.LongString() + "\n")
		}
		switch b.Kind {
		case Jump:
			fmt.Fprintf(&sb, "  jump b%d\n", b.Succs[0].ID)
		case If:
			fmt.Fprintf(&sb, "  if v%d b%d b%d\n", b.Cond.ID, b.Succs[0].ID, b.Succs[1].ID)
		case Return:
			sb.WriteString("  return\n")
		}
	}
	return sb.String()
}

// LongString prints one value.
func (v *Value) LongString() string {
	var sb strings.Builder
	if v.Type != Void {
		fmt.Fprintf(&sb, "v%d = ", v.ID)
	}
	fmt.Fprintf(&sb, "%s", v.Op)
	switch v.Op {
	case OpConst:
		if x, ok := v.ConstFloat(); ok {
			fmt.Fprintf(&sb, " %v", x)
		} else {
			x, _ := v.ConstInt()
			fmt.Fprintf(&sb, " %d", x)
		}
	case OpParam, OpSharedAddr, OpLocalAddr:
		fmt.Fprintf(&sb, " %d", v.Aux)
	case OpSpecial:
		fmt.Fprintf(&sb, " %s", Special(v.Aux))
	case OpLoad, OpStore:
		fmt.Fprintf(&sb, ".%s", v.Space)
	case OpAtomic:
		fmt.Fprintf(&sb, ".%s.%s", v.Space, Atomic(v.Aux))
	case OpShuffle:
		fmt.Fprintf(&sb, ".%s width %d", Shuffle(v.Aux), v.Const)
	case OpMath:
		fmt.Fprintf(&sb, ".%s", MathFn(v.Aux))
		if v.Fast {
			sb.WriteString(".fast")
		}
	case OpBarrier:
		if v.Aux == 1 {
			sb.WriteString(".uniform")
		}
	}
	if v.Type != Void {
		fmt.Fprintf(&sb, " %s", v.Type)
	}
	for _, a := range v.Args {
		fmt.Fprintf(&sb, " v%d", a.ID)
	}
	return sb.String()
}

// Clone returns a copy of f that shares nothing with it: passes may
// rewrite one without touching the other (a kernel's SmallIndices entry is
// compiled from a copy of its IR).
func (f *Func) Clone() *Func {
	g := &Func{}
	*g = *f
	g.Params = append([]Param(nil), f.Params...)
	g.Shared = append([]Array(nil), f.Shared...)
	g.Locals = append([]Array(nil), f.Locals...)
	g.Comment = append([]string(nil), f.Comment...)
	blocks := make(map[*Block]*Block, len(f.Blocks))
	values := map[*Value]*Value{}
	g.Blocks = make([]*Block, len(f.Blocks))
	for i, b := range f.Blocks {
		nb := &Block{ID: b.ID, Kind: b.Kind, Func: g, Comment: b.Comment}
		blocks[b], g.Blocks[i] = nb, nb
		for _, v := range b.Values {
			nv := &Value{}
			*nv = *v
			nv.Block = nb
			values[v] = nv
			nb.Values = append(nb.Values, nv)
		}
	}
	for _, b := range f.Blocks {
		nb := blocks[b]
		for _, v := range nb.Values {
			args := make([]*Value, len(v.Args))
			for i, x := range v.Args {
				args[i] = values[x]
			}
			v.Args = args
		}
		if b.Cond != nil {
			nb.Cond = values[b.Cond]
		}
		for _, s := range b.Succs {
			nb.Succs = append(nb.Succs, blocks[s])
		}
		for _, p := range b.Preds {
			nb.Preds = append(nb.Preds, blocks[p])
		}
	}
	return g
}
