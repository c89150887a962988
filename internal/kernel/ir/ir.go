// Package ir is goamp's kernel intermediate representation: the layer
// between a front end (package kernel/gossa compiles a subset of Go) and a
// back end (package kernel/ptx writes PTX for NVIDIA's driver).
//
// A Func is one GPU kernel in SSA form: Blocks of Values, each Value an
// operation on scalars (no aggregates: a front end splits structs and arrays
// into their scalar leaves). Control flow is explicit (Jump, If, Return
// terminators); values that meet at a join are Phi values whose arguments
// follow the order of the block's Preds. Memory is addressed by integer
// addresses: 64-bit (U64) in global and local memory, 32-bit (U32) offsets
// in shared memory, taken from SharedAddr.
//
// The IR knows nothing of Go or of PTX text; its rules (checked by Verify)
// are what both sides may rely on.
package ir

import "fmt"

// Type is the type of a scalar value.
type Type uint8

// The scalar types. Bool values are predicates; they are never stored to
// memory (a front end widens them to U32 first).
const (
	Void Type = iota // no value: Store, Barrier
	Bool
	I32
	U32
	I64
	U64
	F32
	F64
)

var typeNames = [...]string{Void: "void", Bool: "bool", I32: "i32", U32: "u32", I64: "i64", U64: "u64", F32: "f32", F64: "f64"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", t)
}

// Size is the type's size in bytes in memory (Bool: 0, it lives in
// predicates only).
func (t Type) Size() int {
	switch t {
	case I32, U32, F32:
		return 4
	case I64, U64, F64:
		return 8
	}
	return 0
}

// IsInt reports whether t is one of the integer types.
func (t Type) IsInt() bool { return t >= I32 && t <= U64 }

// IsSigned reports whether t is a signed integer type.
func (t Type) IsSigned() bool { return t == I32 || t == I64 }

// IsFloat reports whether t is F32 or F64.
func (t Type) IsFloat() bool { return t == F32 || t == F64 }

// Space is a memory space.
type Space uint8

// The memory spaces. Global and Local addresses are U64, Shared addresses
// are U32.
const (
	Global Space = iota + 1
	Shared
	Local
)

func (s Space) String() string {
	switch s {
	case Global:
		return "global"
	case Shared:
		return "shared"
	case Local:
		return "local"
	}
	return fmt.Sprintf("Space(%d)", s)
}

// AddrType is the type of an address in space s.
func (s Space) AddrType() Type {
	if s == Shared {
		return U32
	}
	return U64
}

// Op is what a Value computes.
type Op uint8

// The operations. Args are listed as the rule for each; "x, y" are operands
// of the value's own Type unless said otherwise.
const (
	OpInvalid Op = iota

	OpConst   // no args; Const holds the bits (floats as math.Float64bits of the value, F32 too)
	OpParam   // no args; Aux is the index into Func.Params; Type is the param's
	OpSpecial // no args; Aux is a Special; Type U32

	// Arithmetic, x op y, both and the result of Type. Integer Div and Rem
	// truncate toward zero (Go's rule); the front end guards division by zero.
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpRem // integers only
	OpMin
	OpMax
	// Bitwise, integers (and Bool for And, Or, Xor).
	OpAnd
	OpOr
	OpXor
	// Shifts: x of Type, count U32. A count of the width or more gives 0
	// (Shl, and Shr of unsigned types) or all sign bits (Shr of signed
	// types), as in Go and PTX.
	OpShl
	OpShr
	// Unary.
	OpNeg // arithmetic negation
	OpNot // bitwise complement; logical not for Bool

	// Comparisons of two operands of one type (Args[0].Type); Type Bool.
	// Floats: ordered except Ne, which is true when either is NaN (Go's rule).
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe

	OpConvert // x of any type to Type: Go's conversion rules (float to int truncates; int narrowing wraps; Bool to int gives 0 or 1; to Bool is x != 0)
	OpBitcast // x of another type of the same Size, bits unchanged
	OpSelect  // cond Bool, x, y: x if cond else y

	OpSharedAddr // no args; Aux is the index into Func.Shared; Type U32
	OpLocalAddr  // no args; Aux is the index into Func.Locals; Type U64
	OpLoad       // addr (Space.AddrType()); Space; Type is the element type
	OpStore      // addr, value; Space; Type Void
	OpAtomic     // addr, x [, cmp for AtomicCAS: Args addr, cmp, new]; Space; Aux an Atomic; result the old value, of Type

	// OpBarrier waits until every thread of the block arrives. Aux is 1 if
	// every thread is known to reach it under uniform control flow
	// (bar.sync), 0 if not (barrier.sync, which allows divergent arrival
	// within a warp). Type Void.
	OpBarrier

	// OpShuffle exchanges a 32-bit value (I32, U32 or F32) within a warp:
	// Args x, lane-or-delta U32; Aux a Shuffle mode. Every thread of the
	// warp takes part (mask 0xffffffff); Const holds the width (1 to 32, a
	// power of two) of the groups the lanes form.
	OpShuffle

	// OpMath is a math function: Aux a MathFn, Args its operands, all of
	// Type (F32 or F64). Fast chooses the hardware approximation where one
	// exists (C++ AMP's fast_math); otherwise the result is correctly
	// rounded or within the function's documented error (precise_math).
	OpMath

	// OpPhi takes Args[i] when control came from Block.Preds[i].
	OpPhi

	// OpStatus records a failure for the host to read after the launch, in
	// the status record (see StatusRecordBytes) at a global address: Args
	// record U64, code U32, arg U32, where0, where1, where2 I64 (the
	// failing thread's global index, as the front end defines it). Only
	// the first failure of a launch is kept: the code is claimed with a
	// compare-and-swap from 0, and only its winner writes the rest. The
	// thread goes on. Type Void.
	OpStatus
)

var opNames = [...]string{
	OpInvalid: "invalid", OpConst: "const", OpParam: "param", OpSpecial: "special",
	OpAdd: "add", OpSub: "sub", OpMul: "mul", OpDiv: "div", OpRem: "rem", OpMin: "min", OpMax: "max",
	OpAnd: "and", OpOr: "or", OpXor: "xor", OpShl: "shl", OpShr: "shr", OpNeg: "neg", OpNot: "not",
	OpEq: "eq", OpNe: "ne", OpLt: "lt", OpLe: "le", OpGt: "gt", OpGe: "ge",
	OpConvert: "convert", OpBitcast: "bitcast", OpSelect: "select",
	OpSharedAddr: "sharedaddr", OpLocalAddr: "localaddr", OpLoad: "load", OpStore: "store", OpAtomic: "atomic",
	OpBarrier: "barrier", OpShuffle: "shuffle", OpMath: "math", OpPhi: "phi", OpStatus: "status",
}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", o)
}

// IsCompare reports whether o is one of the comparisons.
func (o Op) IsCompare() bool { return o >= OpEq && o <= OpGe }

// IsBinary reports whether o takes two operands of its own type.
func (o Op) IsBinary() bool { return o >= OpAdd && o <= OpXor }

// Special is a read-only hardware register (OpSpecial).
type Special uint8

// The special registers.
const (
	TidX Special = iota // thread index in the block
	TidY
	TidZ
	NtidX // block dimensions
	NtidY
	NtidZ
	CtaidX // block index in the grid
	CtaidY
	CtaidZ
	NctaidX // grid dimensions
	NctaidY
	NctaidZ
	LaneID // lane in the warp, 0..31
)

var specialNames = [...]string{"tid.x", "tid.y", "tid.z", "ntid.x", "ntid.y", "ntid.z",
	"ctaid.x", "ctaid.y", "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z", "laneid"}

func (s Special) String() string {
	if int(s) < len(specialNames) {
		return specialNames[s]
	}
	return fmt.Sprintf("Special(%d)", s)
}

// Atomic is the read-modify-write of an OpAtomic.
type Atomic uint8

// The atomic operations. Add works on I32, U32, U64, F32 and F64; Min and
// Max on I32, U32, I64, U64; Exch and CAS on 32- and 64-bit types.
const (
	AtomicAdd Atomic = iota
	AtomicMin
	AtomicMax
	AtomicExch
	AtomicCAS
)

var atomicNames = [...]string{"add", "min", "max", "exch", "cas"}

func (a Atomic) String() string {
	if int(a) < len(atomicNames) {
		return atomicNames[a]
	}
	return fmt.Sprintf("Atomic(%d)", a)
}

// Shuffle is the lane pattern of an OpShuffle.
type Shuffle uint8

// The shuffle modes: from lane (lane - delta), (lane + delta), (lane ^
// mask), or the lane given.
const (
	ShuffleUp Shuffle = iota
	ShuffleDown
	ShuffleXor
	ShuffleIdx
)

var shuffleNames = [...]string{"up", "down", "bfly", "idx"}

func (s Shuffle) String() string {
	if int(s) < len(shuffleNames) {
		return shuffleNames[s]
	}
	return fmt.Sprintf("Shuffle(%d)", s)
}

// MathFn is the function of an OpMath.
type MathFn uint8

// The math functions and their operand counts.
const (
	Sqrt  MathFn = iota // 1
	Rsqrt               // 1: 1/sqrt(x)
	Fma                 // 3: x*y+z rounded once
	Abs                 // 1
	Floor               // 1
	Ceil                // 1
	Trunc               // 1
	Exp                 // 1: e^x
	Exp2                // 1
	Log                 // 1: natural
	Log2                // 1
	Sin                 // 1
	Cos                 // 1
	Pow                 // 2: x^y
	Tanh                // 1
)

var mathNames = [...]string{"sqrt", "rsqrt", "fma", "abs", "floor", "ceil", "trunc", "exp", "exp2", "log", "log2", "sin", "cos", "pow", "tanh"}

func (m MathFn) String() string {
	if int(m) < len(mathNames) {
		return mathNames[m]
	}
	return fmt.Sprintf("MathFn(%d)", m)
}

// Arity is how many operands m takes.
func (m MathFn) Arity() int {
	switch m {
	case Fma:
		return 3
	case Pow:
		return 2
	}
	return 1
}

// StatusRecordBytes is the size of the status record OpStatus writes:
// u32 code at offset 0, u32 arg at 4, i64 where[3] at 8, 16 and 24. The host
// zeroes it before a launch.
const StatusRecordBytes = 32

// Status codes a kernel reports through OpStatus (the first of a launch
// wins). The host turns them into errors naming the kernel.
const (
	StatusOK            = 0
	StatusOutOfBounds   = 1 // an array view index outside the view; arg: the kernel argument (1-based)
	StatusStaticBounds  = 2 // a TileStatic slice index out of range; arg: which TileStatic call (1-based)
	StatusDivideByZero  = 3 // integer division by zero
	StatusIndexRank     = 4 // an index component at or above the index's rank; arg: the component
	StatusRankMismatch  = 5 // an index of one rank used on a view of another; arg: the kernel argument
	StatusUnreachable   = 6 // control reached code the front end proved dead (a bug)
	StatusNegativeShift = 7 // a shift by a negative count
)

// MaxRank is the highest rank of a compute domain (amp.MaxRank).
const MaxRank = 3
