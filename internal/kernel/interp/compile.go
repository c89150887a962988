package interp

import (
	"fmt"
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// A value lives in a thread's register file as a uint64: Bool as 0 or 1,
// 32-bit integers and F32 (as its bits) zero-extended, the 64-bit types as
// their bits. One canonical form per value lets Bitcast be a copy and
// integer equality a comparison of registers.

// program is a Func prepared for running: one instruction array per block,
// operands as register numbers (Value IDs), type dispatch done once.
type program struct {
	f          *ir.Func
	blocks     []pblock
	nregs      int
	localBytes int
	// maxCopies is the longest parallel copy of any edge, for the scratch
	// buffer a thread reads a block's phi arguments into.
	maxCopies int
}

type pblock struct {
	b     *ir.Block
	insts []inst // the block's values, phis excluded (edges carry them)
	kind  ir.BlockKind
	cond  int32
	succ  [2]edge
}

// edge is a control transfer with the phi copies it makes.
type edge struct {
	to       int32
	dst, src []int32
}

type inst struct {
	code    opcode
	dst     int32
	a, b, c int32
	k       uint64    // constant bits, parameter or special index, shuffle width
	x       uint8     // atomic or shuffle mode, math function, memory size
	from    ir.Type   // Convert's source type
	space   ir.Space  // Load, Store, Atomic
	t       ir.Type   // the value's type where the code does not imply it
	args    []int32   // Status's operands
	v       *ir.Value // for errors
}

type opcode uint8

const (
	opNop opcode = iota
	opConst
	opParam
	opSpecial
	opCopy

	opAdd32
	opAdd64
	opAddF32
	opAddF64
	opSub32
	opSub64
	opSubF32
	opSubF64
	opMul32
	opMul64
	opMulF32
	opMulF64
	opDivI32
	opDivU32
	opDivI64
	opDivU64
	opDivF32
	opDivF64
	opRemI32
	opRemU32
	opRemI64
	opRemU64
	opMinI32
	opMinU32
	opMinI64
	opMinU64
	opMinF32
	opMinF64
	opMaxI32
	opMaxU32
	opMaxI64
	opMaxU64
	opMaxF32
	opMaxF64
	opAnd
	opOr
	opXor
	opShl32
	opShl64
	opShrI32
	opShrU32
	opShrI64
	opShrU64
	opNeg32
	opNeg64
	opNegF32
	opNegF64
	opNot32
	opNot64
	opNotBool

	opEq // integers and Bool: the registers
	opNe
	opEqF32
	opNeF32
	opEqF64
	opNeF64
	opLtI32 // Gt and Ge swap their operands into Lt and Le
	opLtU32
	opLtI64
	opLtU64
	opLtF32
	opLtF64
	opLeI32
	opLeU32
	opLeI64
	opLeU64
	opLeF32
	opLeF64

	opConvert
	opSelect
	opLoad
	opStore
	opAtomic
	opBarrier
	opShuffle
	opMath
	opFmaF64 // the hot math functions get codes of their own
	opFmaF32
	opStatus
)

// localBase is where the local window starts; any nonzero value far from
// global allocations would do.
const localBase = 1 << 56

func compile(f *ir.Func) (*program, error) {
	p := &program{f: f, nregs: f.NumValues()}
	index := make(map[*ir.Block]int32, len(f.Blocks))
	for i, b := range f.Blocks {
		index[b] = int32(i)
	}
	var sharedOff []int
	n := 0
	for _, a := range f.Shared {
		n = (n + 7) &^ 7
		sharedOff = append(sharedOff, n)
		n += a.Bytes()
	}
	var localOff []int
	n = 0
	for _, a := range f.Locals {
		n = (n + 7) &^ 7
		localOff = append(localOff, n)
		n += a.Bytes()
	}
	p.localBytes = n

	p.blocks = make([]pblock, len(f.Blocks))
	for bi, b := range f.Blocks {
		pb := &p.blocks[bi]
		pb.b, pb.kind = b, b.Kind
		if b.Cond != nil {
			pb.cond = int32(b.Cond.ID)
		}
		for _, v := range b.Values {
			if v.Op == ir.OpPhi {
				continue
			}
			in, err := compileValue(f, v, sharedOff, localOff)
			if err != nil {
				return nil, err
			}
			pb.insts = append(pb.insts, in)
		}
		for si, s := range b.Succs {
			if si > 1 {
				break
			}
			// The si-th edge from b to s is the n-th occurrence of b in
			// s.Preds, n counting b's earlier edges to s (an If whose arms
			// meet at one block has two).
			nth := 0
			for _, t := range b.Succs[:si] {
				if t == s {
					nth++
				}
			}
			pred := -1
			for pi, q := range s.Preds {
				if q == b {
					if nth == 0 {
						pred = pi
						break
					}
					nth--
				}
			}
			if pred < 0 {
				return nil, fmt.Errorf("interp: %s: b%d -> b%d missing from Preds", f.Name, b.ID, s.ID)
			}
			e := edge{to: index[s]}
			for _, v := range s.Values {
				if v.Op != ir.OpPhi {
					break
				}
				e.dst = append(e.dst, int32(v.ID))
				e.src = append(e.src, int32(v.Args[pred].ID))
			}
			p.maxCopies = max(p.maxCopies, len(e.dst))
			pb.succ[si] = e
		}
	}
	return p, nil
}

func compileValue(f *ir.Func, v *ir.Value, sharedOff, localOff []int) (inst, error) {
	in := inst{dst: int32(v.ID), v: v, t: v.Type}
	arg := func(i int) int32 {
		if i < len(v.Args) {
			return int32(v.Args[i].ID)
		}
		return 0
	}
	in.a, in.b, in.c = arg(0), arg(1), arg(2)
	t := v.Type
	if v.Op.IsCompare() {
		t = v.Args[0].Type
	}
	size32 := t.Size() == 4
	pick := func(c32, c64, cf32, cf64 opcode) opcode {
		switch {
		case t == ir.F32:
			return cf32
		case t == ir.F64:
			return cf64
		case size32:
			return c32
		}
		return c64
	}
	// typed picks a code among six laid out I32, U32, I64, U64, F32, F64.
	typed := func(first opcode) opcode {
		switch t {
		case ir.I32:
			return first
		case ir.U32:
			return first + 1
		case ir.I64:
			return first + 2
		case ir.U64:
			return first + 3
		case ir.F32:
			return first + 4
		case ir.F64:
			return first + 5
		}
		return opNop
	}
	bad := func() (inst, error) {
		return in, fmt.Errorf("interp: %s: b%d: %s: cannot run this", f.Name, v.Block.ID, v.LongString())
	}
	if t == ir.Bool {
		// Bool has logic and comparisons (false < true, as the PTX back
		// end orders predicates), no arithmetic.
		switch v.Op {
		case ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpNot, ir.OpSelect, ir.OpConst, ir.OpConvert, ir.OpParam:
		case ir.OpLt, ir.OpGt, ir.OpLe, ir.OpGe:
			t = ir.U64
		case ir.OpEq, ir.OpNe:
		default:
			return bad()
		}
	}
	switch op := v.Op; op {
	case ir.OpConst:
		in.code, in.k = opConst, v.Const
		switch t {
		case ir.F32:
			in.k = uint64(math.Float32bits(float32(math.Float64frombits(v.Const))))
		case ir.I32, ir.U32:
			in.k = uint64(uint32(v.Const))
		case ir.Bool:
			if v.Const != 0 {
				in.k = 1
			}
		}
	case ir.OpParam:
		in.code, in.k = opParam, uint64(v.Aux)
	case ir.OpSpecial:
		if v.Aux < 0 || v.Aux > int(ir.LaneID) {
			return bad()
		}
		in.code, in.k = opSpecial, uint64(v.Aux)
	case ir.OpAdd:
		in.code = pick(opAdd32, opAdd64, opAddF32, opAddF64)
	case ir.OpSub:
		in.code = pick(opSub32, opSub64, opSubF32, opSubF64)
	case ir.OpMul:
		in.code = pick(opMul32, opMul64, opMulF32, opMulF64)
	case ir.OpDiv:
		in.code = typed(opDivI32)
	case ir.OpRem:
		if t.IsFloat() {
			return bad()
		}
		in.code = typed(opRemI32)
	case ir.OpMin:
		in.code = typed(opMinI32)
	case ir.OpMax:
		in.code = typed(opMaxI32)
	case ir.OpAnd:
		in.code = opAnd
	case ir.OpOr:
		in.code = opOr
	case ir.OpXor:
		in.code = opXor
	case ir.OpShl:
		in.code = pick(opShl32, opShl64, opNop, opNop)
	case ir.OpShr:
		in.code = typed(opShrI32)
	case ir.OpNeg:
		in.code = pick(opNeg32, opNeg64, opNegF32, opNegF64)
	case ir.OpNot:
		in.code = pick(opNot32, opNot64, opNop, opNop)
		if t == ir.Bool {
			in.code = opNotBool
		}
	case ir.OpEq, ir.OpNe:
		switch {
		case t == ir.F32:
			in.code = opEqF32
		case t == ir.F64:
			in.code = opEqF64
		default:
			in.code = opEq
		}
		if op == ir.OpNe {
			in.code++
		}
	case ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe:
		if op == ir.OpGt || op == ir.OpGe {
			in.a, in.b = in.b, in.a
		}
		if op == ir.OpLt || op == ir.OpGt {
			in.code = typed(opLtI32)
		} else {
			in.code = typed(opLeI32)
		}
	case ir.OpConvert:
		in.code, in.from = opConvert, v.Args[0].Type
	case ir.OpBitcast:
		in.code = opCopy
	case ir.OpSelect:
		in.code = opSelect
	case ir.OpSharedAddr:
		in.code, in.k = opConst, uint64(sharedOff[v.Aux])
	case ir.OpLocalAddr:
		in.code, in.k = opConst, localBase+uint64(localOff[v.Aux])
	case ir.OpLoad:
		in.code, in.space, in.x = opLoad, v.Space, uint8(t.Size())
	case ir.OpStore:
		in.code, in.space, in.x = opStore, v.Space, uint8(v.Args[1].Type.Size())
	case ir.OpAtomic:
		in.code, in.space, in.x = opAtomic, v.Space, uint8(v.Aux)
	case ir.OpBarrier:
		in.code = opBarrier
	case ir.OpShuffle:
		in.code, in.x, in.k = opShuffle, uint8(v.Aux), v.Const
	case ir.OpMath:
		in.code, in.x = opMath, uint8(v.Aux)
		if ir.MathFn(v.Aux) == ir.Fma {
			in.code = pick(opNop, opNop, opFmaF32, opFmaF64)
		}
	case ir.OpStatus:
		in.code = opStatus
		for _, a := range v.Args {
			in.args = append(in.args, int32(a.ID))
		}
	default:
		return bad()
	}
	if in.code == opNop {
		return bad()
	}
	return in, nil
}
