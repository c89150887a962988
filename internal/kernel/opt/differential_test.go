package opt

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// optSeedEnv names the environment variable that fixes the seed of
// TestOptimizeAgainstInterpreter, to replay a failure.
const optSeedEnv = "GOAMP_OPT_SEED"

// The shape of the random kernels and of their launches.
const (
	randomKernels      = 300 // kernels a run checks
	randomKernelsShort = 60  // with -short
	inputsPerKernel    = 4   // launches of each kernel
	blockThreads       = 4   // threads of a block, in x
	outWords           = 256 // output words of each thread
	bufWords           = 64  // words of the buffer the kernels load and store
)

// TestOptimizeAgainstInterpreter runs random kernels in the interpreter as
// written and after Optimize, on the same inputs, and requires that they
// leave the same memory, byte for byte. Every other kernel is optimized
// as a SmallIndices entry, and launched only within the limits those are
// launched under (NonNeg parameters at most ir.MaxSmall, grid dimensions
// at most ir.MaxSmallGrid), which the passes may rely on.
//
// Every pass must keep the value each thread computes. The hand-written
// tests check each pass on the pattern it was written for; random kernels
// reach the combinations they do not: branches and nested loops around
// checked and unchecked accesses, loop steps known only at run time and
// steps that fail a versioned loop's guard, the fault word, shared memory,
// division, and values at the edges of 32- and 64-bit types where
// narrowing and the ranges go wrong if they are wrong.
//
// The seed comes from the clock unless GOAMP_OPT_SEED sets it; every
// failure names it, and the kernel it failed on, for a replay.
func TestOptimizeAgainstInterpreter(t *testing.T) {
	seed := differentialSeed(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d: replay with %s=%d", seed, optSeedEnv, seed)
		}
	})
	kernels := randomKernels
	if testing.Short() {
		kernels = randomKernelsShort
	}
	// The kernels are independent: check them in a parallel subtest for
	// each processor (under the race detector, that takes a third less).
	parts := min(runtime.GOMAXPROCS(0), kernels)
	whole := t
	for part := range parts {
		t.Run(fmt.Sprintf("part%d", part), func(t *testing.T) {
			t.Parallel()
			for k := part; k < kernels; k += parts {
				if whole.Failed() {
					return // one failing kernel is report enough
				}
				// A stream of its own for each kernel: kernel k is the
				// same whatever the parts and with -short or without.
				r := rand.New(rand.NewPCG(seed, uint64(k)))
				small := k%2 == 1
				checkRandomKernel(t, r, small, fmt.Sprintf("%s=%d, kernel %d (SmallIndices %v)", optSeedEnv, seed, k, small))
			}
		})
	}
}

// differentialSeed returns the seed of this run: GOAMP_OPT_SEED's value,
// or the clock.
func differentialSeed(t *testing.T) uint64 {
	if s := os.Getenv(optSeedEnv); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", optSeedEnv, s, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// checkRandomKernel builds a kernel from r, optimizes a copy of it
// (marked SmallIndices if small), and compares the copy's launches with
// the kernel's own on inputs drawn from r (within SmallIndices' limits if
// small). where names the seed and the kernel in failures.
func checkRandomKernel(t *testing.T, r *rand.Rand, small bool, where string) {
	t.Helper()
	f, stored := buildRandomKernel(r)
	if err := f.Verify(); err != nil {
		t.Fatalf("%s: the generator made invalid IR: %v\n%s", where, err, f)
	}
	g, err := optimizeCopy(f, small)
	if err != nil {
		t.Fatalf("%s: %v\nkernel as written:\n%s", where, err, f)
	}
	for range inputsPerKernel {
		in := randomInputs(r, small)
		want, err := runKernel(f, in)
		if err != nil {
			// The generator keeps every access in bounds and every
			// divisor nonzero: a failure here is its bug.
			t.Fatalf("%s: the kernel as written fails on %s: %v\n%s", where, in.describe(f), err, f)
		}
		got, err := runKernel(g, in)
		if err != nil {
			t.Fatalf("%s: the optimized kernel fails on %s: %v\nkernel as written:\n%s", where, in.describe(f), err, f)
		}
		if diff := describeDifference(want, got, stored); diff != "" {
			t.Fatalf("%s: on %s the optimized kernel leaves other memory:%s\nkernel as written:\n%s",
				where, in.describe(f), diff, f)
		}
	}
}

// optimizeCopy returns a copy of f, marked SmallIndices if small, after
// Optimize. A pass that panics or leaves IR that Verify rejects is an
// error.
func optimizeCopy(f *ir.Func, small bool) (g *ir.Func, err error) {
	g = f.Clone()
	g.SmallIndices = small
	defer func() {
		if p := recover(); p != nil {
			g, err = nil, fmt.Errorf("Optimize panicked: %v\n%s", p, debug.Stack())
		}
	}()
	Optimize(g)
	if err := g.Verify(); err != nil {
		return nil, fmt.Errorf("Optimize left invalid IR: %v\n%s", err, g)
	}
	return g, nil
}

// paramKind is the set of values a random kernel's parameter takes.
type paramKind uint8

// The kinds of parameters.
const (
	anyParam    paramKind = iota // any value of its type
	boundParam                   // NonNeg, up to ir.MaxNonNeg: a loop's bound
	extentParam                  // NonNeg, at most bufWords: the extent of a view of the buffer
)

// randomKernelParams are the parameters of every random kernel after its
// two addresses (its output and the buffer). The runtime passes a view's
// extent within the memory under it, so an index checked against an
// extentParam may be used to address the buffer; one checked against a
// boundParam only where the kernel bounds it otherwise.
var randomKernelParams = []struct {
	name string
	typ  ir.Type
	kind paramKind
}{
	{"n0", ir.I64, boundParam}, {"n1", ir.I64, boundParam},
	{"m0", ir.I64, extentParam}, {"m1", ir.I64, extentParam},
	{"k0", ir.I64, anyParam}, {"k1", ir.I64, anyParam},
	{"u", ir.U32, anyParam}, {"w", ir.U64, anyParam}, {"s", ir.I32, anyParam},
}

// integerTypes are the types random kernels compute in.
var integerTypes = [...]ir.Type{ir.I32, ir.U32, ir.I64, ir.U64}

// The constants random computations use: small ones, as index
// arithmetic has (they put values just past the bounds the ranges find),
// and ones at the edges of the 32- and 64-bit types.
var (
	smallConstants = [...]int64{-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 32, 63, 64}
	edgeConstants  = [...]int64{1<<31 - 1, 1 << 31, -(1 << 31), 1<<32 - 1, 1 << 32, 1 << 40, 1<<62 + 1, 1<<63 - 1, -1 << 63}
)

// blockConstant names a constant of a block (see kernelBuilder.constant).
type blockConstant struct {
	b *ir.Block
	t ir.Type
	x int64
}

// kernelBuilder builds one random kernel (see buildRandomKernel).
type kernelBuilder struct {
	rand *rand.Rand
	f    *ir.Func
	// usable holds, by type, the values the block being filled may use:
	// those of the blocks that dominate it. A branch's arm and a loop's
	// body work on a copy (enterScope), whose values do not dominate what
	// follows them.
	usable    map[ir.Type][]*ir.Value
	constants map[blockConstant]*ir.Value // see constant
	out       *ir.Value                   // the address of the thread's output words
	buf       *ir.Value                   // the address of the buffer, which every thread shares
	bounds    []*ir.Value                 // the boundParam parameters
	extents   []*ir.Value                 // the extentParam parameters
	tid       *ir.Value                   // tid.x
	fault     *ir.Value                   // the address of the thread's fault word, a one-word local
	// stored[k] is the value stored to the thread's output word k, to
	// name it in a failure.
	stored []*ir.Value
}

// buildRandomKernel builds a kernel from r: one or two stretches of random
// computations (with loads, stores, the fault word and shared memory),
// each followed at times by a branch or a loop (nested at times, with
// branches in it), and at the end a store of every value still usable, and of the
// fault word, to the thread's output words. It returns the kernel and
// what it stores to each output word.
//
// Every access the kernel makes is in bounds and no divisor is zero,
// whatever the inputs randomInputs makes: a thread's indices are masked,
// checked against an extent, or bounded by the loops around them.
func buildRandomKernel(r *rand.Rand) (*ir.Func, []*ir.Value) {
	f := ir.NewFunc("random")
	kb := &kernelBuilder{rand: r, f: f, usable: map[ir.Type][]*ir.Value{}, constants: map[blockConstant]*ir.Value{}}
	if r.IntN(2) == 0 {
		f.Block = [3]int{blockThreads, 1, 1} // exact ranges for tid.x and ntid.x
	}
	e := f.Entry()
	param := func(name string, t ir.Type, nonNeg bool) *ir.Value {
		v := e.Add(ir.OpParam, t)
		v.Aux = f.AddParam(name, t)
		f.Params[v.Aux].NonNeg = nonNeg
		return v
	}
	out := param("out", ir.U64, false)
	kb.buf = param("buf", ir.U64, false)
	for _, p := range randomKernelParams {
		v := kb.keep(param(p.name, p.typ, p.kind != anyParam))
		switch p.kind {
		case boundParam:
			kb.bounds = append(kb.bounds, v)
		case extentParam:
			kb.extents = append(kb.extents, v)
		}
	}
	special := func(s ir.Special) *ir.Value {
		v := e.Add(ir.OpSpecial, ir.U32)
		v.Aux = int(s)
		kb.keep(e.Add(ir.OpConvert, ir.I64, v))
		return kb.keep(v)
	}
	kb.tid = special(ir.TidX)
	ctaid, ntid := special(ir.CtaidX), special(ir.NtidX)
	// Each thread has outWords words of its own, from out +
	// (ctaid*ntid + tid)*outWords*8, so that every thread's values count.
	wide := func(x *ir.Value) *ir.Value { return e.Add(ir.OpConvert, ir.U64, x) }
	thread := e.Add(ir.OpAdd, ir.U64, e.Add(ir.OpMul, ir.U64, wide(ctaid), wide(ntid)), wide(kb.tid))
	kb.out = e.Add(ir.OpAdd, ir.U64, out, e.Add(ir.OpMul, ir.U64, thread, kb.constant(e, ir.U64, 8*outWords)))
	f.AddShared("scratch", ir.U32, 4*blockThreads)
	kb.fault = e.Add(ir.OpLocalAddr, ir.U64)
	kb.fault.Aux = f.AddLocal("fault", ir.U32, 1)
	e.Add(ir.OpStore, ir.Void, kb.fault, kb.constant(e, ir.U32, 0)).Space = ir.Local

	cur := e
	for range 1 + r.IntN(2) {
		for range 1 + r.IntN(4) {
			kb.addComputation(cur)
		}
		switch r.IntN(3) {
		case 0:
			cur = kb.addBranch(cur)
		case 1:
			cur = kb.addLoop(cur, 0)
		}
	}
	fault := cur.Add(ir.OpLoad, ir.U32, kb.fault)
	fault.Space = ir.Local
	kb.storeOut(cur, fault)
	for _, t := range append(integerTypes[:], ir.Bool) {
		for _, v := range kb.usable[t] {
			if v.Op != ir.OpParam && v.Op != ir.OpSpecial { // no pass changes those
				kb.storeOut(cur, v)
			}
		}
	}
	cur.SetReturn()
	return f, kb.stored
}

// keep makes v usable by what follows it, and returns it.
func (kb *kernelBuilder) keep(v *ir.Value) *ir.Value {
	kb.usable[v.Type] = append(kb.usable[v.Type], v)
	return v
}

// pick returns a usable value of type t (every integer type has some from
// the entry block on): half the time one of the last few made, so that
// computations build on each other (x, x-1, (x-1)/2, (x-1)/2 < 3) and
// reach the values at the edges of the ranges the passes find.
func (kb *kernelBuilder) pick(t ir.Type) *ir.Value {
	vs := kb.usable[t]
	if kb.rand.IntN(2) == 0 {
		vs = vs[max(0, len(vs)-3):]
	}
	return vs[kb.rand.IntN(len(vs))]
}

// operand returns a usable value of type t, or, a third of the time, a
// new constant of it.
func (kb *kernelBuilder) operand(b *ir.Block, t ir.Type) *ir.Value {
	if kb.rand.IntN(3) == 0 {
		return kb.randomConstant(b, t)
	}
	return kb.pick(t)
}

// randomConstant returns a constant of type t: a small one two times in
// three, else one at an edge of a type.
func (kb *kernelBuilder) randomConstant(b *ir.Block, t ir.Type) *ir.Value {
	if kb.rand.IntN(3) == 0 {
		return kb.constant(b, t, edgeConstants[kb.rand.IntN(len(edgeConstants))])
	}
	return kb.constant(b, t, smallConstants[kb.rand.IntN(len(smallConstants))])
}

// constant returns the constant x of type t in block b, made once per
// block (a block's uses share it, as after common subexpressions), which
// keeps the kernels small.
func (kb *kernelBuilder) constant(b *ir.Block, t ir.Type, x int64) *ir.Value {
	key := blockConstant{b, t, x}
	c, ok := kb.constants[key]
	if !ok {
		c = b.Const(t, x)
		kb.constants[key] = c
	}
	return c
}

// enterScope starts a branch's arm or a loop's body: the values made from
// now on are usable until the returned function is called.
func (kb *kernelBuilder) enterScope() (leave func()) {
	saved := kb.usable
	kb.usable = maps.Clone(saved)
	for t, vs := range kb.usable {
		kb.usable[t] = slices.Clone(vs)
	}
	return func() { kb.usable = saved }
}

// condition returns a Bool for a branch or a select: a new comparison of a
// usable value with another or with a constant, or, at times, a usable
// Bool or its negation or conjunction with another. Half the new
// comparisons are of a value compared before, whose range the earlier
// comparison's branch narrows (if w > 5 { ... w <= 1<<63-1 ... }).
func (kb *kernelBuilder) condition(b *ir.Block) *ir.Value {
	r := kb.rand
	if len(kb.usable[ir.Bool]) > 0 && r.IntN(4) == 0 {
		c := kb.pick(ir.Bool)
		switch r.IntN(4) {
		case 0:
			return c
		case 1:
			return kb.keep(b.Add(ir.OpNot, ir.Bool, c))
		default:
			ops := []ir.Op{ir.OpAnd, ir.OpOr, ir.OpXor}
			return kb.keep(b.Add(ops[r.IntN(len(ops))], ir.Bool, c, kb.pick(ir.Bool)))
		}
	}
	ops := []ir.Op{ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe}
	op := ops[r.IntN(len(ops))]
	if r.IntN(2) == 0 {
		for _, c := range slices.Backward(kb.usable[ir.Bool]) {
			if !c.Op.IsCompare() {
				continue
			}
			// x against what it was compared with, that plus or minus
			// one, or a constant at an edge of a type.
			x, y := c.Args[0], c.Args[1]
			switch k, isConst := y.ConstInt(); {
			case isConst && r.IntN(2) == 0:
				y = kb.constant(b, y.Type, k+int64(r.IntN(3))-1)
			case r.IntN(2) == 0:
				y = kb.constant(b, y.Type, edgeConstants[r.IntN(len(edgeConstants))])
			}
			return kb.keep(b.Add(op, ir.Bool, x, y))
		}
	}
	t := integerTypes[r.IntN(len(integerTypes))]
	x, y := kb.pick(t), kb.operand(b, t)
	if x.Op.IsBinary() && r.IntN(2) == 0 {
		// Against x's own constant (x%8 against 7, x&15 against 16,
		// min(n, 9) against 9), plus or minus one: the edges of x's range.
		if k, isConst := x.Args[1].ConstInt(); isConst {
			y = kb.constant(b, t, k+int64(r.IntN(3))-1)
		}
	}
	return kb.keep(b.Add(op, ir.Bool, x, y))
}

// addComputation appends one random computation to b: arithmetic, a
// shift, a division, a conversion, a comparison and a select, a load from
// the buffer (masked or checked), a copy within it, a store to the
// output, an update of the fault word, or an access to the thread's part
// of shared memory.
func (kb *kernelBuilder) addComputation(b *ir.Block) {
	r := kb.rand
	t := integerTypes[r.IntN(len(integerTypes))]
	switch r.IntN(20) {
	case 0, 1:
		ops := []ir.Op{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpMin, ir.OpMax}
		kb.keep(b.Add(ops[r.IntN(len(ops))], t, kb.pick(t), kb.operand(b, t)))
	case 2, 3:
		// Index arithmetic, n-1 or i*4+2: values a little outside the
		// ranges of their operands.
		ops := []ir.Op{ir.OpAdd, ir.OpSub, ir.OpMul}
		k := smallConstants[r.IntN(len(smallConstants))]
		if r.IntN(2) == 0 {
			k = int64(2*r.IntN(2) - 1) // n-1, n+1
		}
		kb.keep(b.Add(ops[r.IntN(len(ops))], t, kb.pick(t), kb.constant(b, t, k)))
	case 4:
		// A count of the width or more gives 0 or the sign bits.
		count := kb.constant(b, ir.U32, int64(r.IntN(8*t.Size()+2)))
		if r.IntN(3) == 0 {
			count = kb.pick(ir.U32)
		}
		op := ir.OpShl
		if r.IntN(2) == 0 {
			op = ir.OpShr
		}
		kb.keep(b.Add(op, t, kb.pick(t), count))
	case 5, 6:
		op := ir.OpDiv
		if r.IntN(2) == 0 {
			op = ir.OpRem
		}
		var d *ir.Value
		if r.IntN(3) == 0 {
			// A divisor known at run time, guarded as the front end
			// guards it: y == 0 ? 1 : y.
			y := kb.pick(t)
			zero := b.Add(ir.OpEq, ir.Bool, y, kb.constant(b, t, 0))
			d = b.Add(ir.OpSelect, t, zero, kb.constant(b, t, 1), y)
		} else {
			// Powers of two become shifts and masks where the dividend
			// is never negative.
			divisors := []int64{1, 2, 4, 8, 32, 3, 7, -1, -4}
			d = kb.constant(b, t, divisors[r.IntN(len(divisors))])
		}
		kb.keep(b.Add(op, t, kb.pick(t), d))
	case 7:
		op := ir.OpNeg
		if r.IntN(2) == 0 {
			op = ir.OpNot
		}
		kb.keep(b.Add(op, t, kb.pick(t)))
	case 8, 9:
		var x *ir.Value
		if r.IntN(4) == 0 {
			x = kb.condition(b)
		} else {
			x = kb.pick(integerTypes[r.IntN(len(integerTypes))])
		}
		kb.keep(b.Add(ir.OpConvert, t, x))
	case 10:
		kb.condition(b)
	case 11, 12:
		kb.keep(b.Add(ir.OpSelect, t, kb.condition(b), kb.pick(t), kb.operand(b, t)))
	case 13, 14:
		// buf[(x & 15) + c]: in bounds whatever x is.
		x := b.Add(ir.OpAnd, ir.I64, kb.pick(ir.I64), kb.constant(b, ir.I64, 15))
		idx := b.Add(ir.OpAdd, ir.I64, x, kb.constant(b, ir.I64, int64(r.IntN(4))))
		kb.keep(kb.load(b, kb.element(b, b.Add(ir.OpConvert, ir.U64, idx))))
	case 15:
		// x < m ? buf[x] : 0, the check of a view's extent m.
		kb.addCheckedAccess(b, kb.pick(ir.I64), kb.extents[r.IntN(len(kb.extents))])
	case 16:
		// buf[x+1] = buf[x+2] for x = y & 15, in go/ssa's order: the
		// destination's address, then the source's, its load, and the
		// store. The addresses share a base.
		x := b.Add(ir.OpAnd, ir.I64, kb.pick(ir.I64), kb.constant(b, ir.I64, 15))
		elem := func(c int64) *ir.Value {
			return kb.element(b, b.Add(ir.OpConvert, ir.U64, b.Add(ir.OpAdd, ir.I64, x, kb.constant(b, ir.I64, c))))
		}
		dst, src := elem(1), elem(2)
		b.Add(ir.OpStore, ir.Void, dst, kb.load(b, src)).Space = ir.Global
	case 17:
		kb.storeOut(b, kb.pick(t))
	case 18:
		// A check that failed raises the fault word to its code.
		old := b.Add(ir.OpLoad, ir.U32, kb.fault)
		old.Space = ir.Local
		raised := b.Add(ir.OpMax, ir.U32, old, kb.constant(b, ir.U32, int64(1+r.IntN(3))))
		b.Add(ir.OpStore, ir.Void, kb.fault, b.Add(ir.OpSelect, ir.U32, kb.condition(b), raised, old)).Space = ir.Local
	case 19:
		// scratch[tid*4 + c]: each thread its own four words, so that
		// no barrier is needed.
		base := b.Add(ir.OpSharedAddr, ir.U32)
		base.Aux = 0
		idx := b.Add(ir.OpAdd, ir.U32, b.Add(ir.OpMul, ir.U32, kb.tid, kb.constant(b, ir.U32, 4)), kb.constant(b, ir.U32, int64(r.IntN(4))))
		addr := b.Add(ir.OpAdd, ir.U32, base, b.Add(ir.OpMul, ir.U32, idx, kb.constant(b, ir.U32, 4)))
		if r.IntN(2) == 0 {
			b.Add(ir.OpStore, ir.Void, addr, kb.pick(ir.U32)).Space = ir.Shared
		} else {
			l := b.Add(ir.OpLoad, ir.U32, addr)
			l.Space = ir.Shared
			kb.keep(l)
		}
	}
}

// element returns the address of buf[idx], for idx an I64 converted to
// U64, computed as the front end does (a multiply by 8) or as a shift.
func (kb *kernelBuilder) element(b *ir.Block, wide *ir.Value) *ir.Value {
	var off *ir.Value
	if kb.rand.IntN(4) == 0 {
		off = b.Add(ir.OpShl, ir.U64, wide, kb.constant(b, ir.U32, 3))
	} else {
		off = b.Add(ir.OpMul, ir.U64, wide, kb.constant(b, ir.U64, 8))
	}
	return b.Add(ir.OpAdd, ir.U64, kb.buf, off)
}

// load appends a global I64 load from addr.
func (kb *kernelBuilder) load(b *ir.Block, addr *ir.Value) *ir.Value {
	l := b.Add(ir.OpLoad, ir.I64, addr)
	l.Space = ir.Global
	return l
}

// addCheckedAccess appends an access to buf[idx] checked as a view's
// index is, uint64(idx) < uint64(limit): a load, idx in range ? buf[idx] :
// 0, or, a quarter of the time, a store of a usable value (to buf[0] if
// the check fails). Half the time a failed check also raises the fault
// word, fault = max(fault, code), as the front end records it.
func (kb *kernelBuilder) addCheckedAccess(b *ir.Block, idx, limit *ir.Value) {
	r := kb.rand
	wide := b.Add(ir.OpConvert, ir.U64, idx)
	ok := b.Add(ir.OpLt, ir.Bool, wide, b.Add(ir.OpConvert, ir.U64, limit))
	addr := b.Add(ir.OpSelect, ir.U64, ok, kb.element(b, wide), kb.buf)
	if r.IntN(4) == 0 {
		b.Add(ir.OpStore, ir.Void, addr, kb.pick(ir.I64)).Space = ir.Global
	} else {
		kb.keep(b.Add(ir.OpSelect, ir.I64, ok, kb.load(b, addr), kb.constant(b, ir.I64, 0)))
	}
	if r.IntN(2) == 0 {
		old := b.Add(ir.OpLoad, ir.U32, kb.fault)
		old.Space = ir.Local
		code := b.Add(ir.OpSelect, ir.U32, ok, kb.constant(b, ir.U32, 0), kb.constant(b, ir.U32, int64(1+r.IntN(3))))
		b.Add(ir.OpStore, ir.Void, kb.fault, b.Add(ir.OpMax, ir.U32, old, code)).Space = ir.Local
	}
}

// storeOut appends a store of v (widened to 64 bits) to the thread's next
// output word, if one is left.
func (kb *kernelBuilder) storeOut(b *ir.Block, v *ir.Value) {
	k := len(kb.stored)
	if k == outWords {
		return
	}
	kb.stored = append(kb.stored, v)
	x := v
	if v.Type.Size() != 8 {
		x = b.Add(ir.OpConvert, ir.U64, v)
	}
	addr := b.Add(ir.OpAdd, ir.U64, kb.out, kb.constant(b, ir.U64, int64(8*k)))
	b.Add(ir.OpStore, ir.Void, addr, x).Space = ir.Global
}

// setPhiArgs gives phi, in block b, the value from[p] for each of b's
// predecessors p.
func setPhiArgs(phi *ir.Value, from map[*ir.Block]*ir.Value) {
	phi.Args = nil
	for _, p := range phi.Block.Preds {
		phi.Args = append(phi.Args, from[p])
	}
}

// addBranch ends cur with a branch and returns the block where its arms
// meet: an if-else, an if without an else, or an if y != 0 whose arm
// divides by y (a division no pass may move out from under its test).
// The join has a phi for each integer type whose latest value differs
// between the arms, so that what the arms compute counts.
func (kb *kernelBuilder) addBranch(cur *ir.Block) *ir.Block {
	f, r := kb.f, kb.rand
	join := f.NewBlock()
	// from[t][p] is the value of type t the join takes from predecessor p.
	from := map[ir.Type]map[*ir.Block]*ir.Value{}
	for _, t := range integerTypes {
		from[t] = map[*ir.Block]*ir.Value{}
	}
	passOn := func(p *ir.Block) {
		for _, t := range integerTypes {
			from[t][p] = kb.usable[t][len(kb.usable[t])-1]
		}
	}
	// arm fills b, a branch's arm, with computations and ends it with a
	// jump to join.
	arm := func(b *ir.Block, fill func()) {
		leave := kb.enterScope()
		fill()
		passOn(b)
		leave()
		b.SetJump(join)
	}
	computations := func(b *ir.Block) func() {
		return func() {
			for range 1 + r.IntN(4) {
				kb.addComputation(b)
			}
		}
	}
	switch r.IntN(3) {
	case 0:
		then, els := f.NewBlock(), f.NewBlock()
		cur.SetIf(kb.condition(cur), then, els)
		arm(then, computations(then))
		arm(els, computations(els))
	case 1:
		then := f.NewBlock()
		passOn(cur)
		cur.SetIf(kb.condition(cur), then, join)
		arm(then, computations(then))
	case 2:
		t := integerTypes[r.IntN(len(integerTypes))]
		y := kb.pick(t)
		then := f.NewBlock()
		passOn(cur)
		cur.SetIf(cur.Add(ir.OpNe, ir.Bool, y, kb.constant(cur, t, 0)), then, join)
		op := ir.OpDiv
		if r.IntN(2) == 0 {
			op = ir.OpRem
		}
		arm(then, func() { kb.keep(then.Add(op, t, kb.pick(t), y)) })
	}
	for _, t := range integerTypes {
		var first *ir.Value
		same := true
		for _, p := range join.Preds {
			if first == nil {
				first = from[t][p]
			}
			same = same && from[t][p] == first
		}
		if !same { // else the value is from before the branch, and usable
			phi := join.AddPhi(t)
			setPhiArgs(phi, from[t])
			kb.keep(phi)
		}
	}
	return join
}

// addLoop ends pre with a jump to a new loop and returns the loop's exit
// block. The loop counts an I64 i up (by a constant, by a step known only
// at run time, or by 2^41, which fails the guard of a versioned loop),
// down, or geometrically (doubling or halving), to a bound that is a
// constant (the loop may be unrolled in full) or min(n, c) for a bound
// parameter n, computed before the loop or in its header; the bounds keep
// i within a few dozen. Its body makes checked accesses to buf[i*s + j]
// (and at times to buf[k] for a k fixed before the loop), computations,
// at times a branch and, at depth 0, at times an inner loop, and folds
// its latest values into an accumulator, acc = acc*3 + x, whose value
// depends on the order of the iterations.
func (kb *kernelBuilder) addLoop(pre *ir.Block, depth int) *ir.Block {
	f, r := kb.f, kb.rand
	head, body, exit := f.NewBlock(), f.NewBlock(), f.NewBlock()
	pre.SetJump(head)
	i := head.AddPhi(ir.I64)
	acc := head.AddPhi(ir.I64)
	const64 := func(b *ir.Block, x int64) *ir.Value { return kb.constant(b, ir.I64, x) }
	// At times an access whose index is fixed before the loop (and may be
	// negative): a versioned copy keeps its check.
	var invariant *ir.Value
	if r.IntN(4) == 0 {
		invariant = kb.pick(ir.I64)
	}

	// Half the loops count up by a step, as a loop over a view does: the
	// shape versioning and partial unrolling handle.
	const (
		countUp   = iota // for i := low; i < limit; i += step
		countUpTo        // for i := low; i <= limit; i += step
		countDown        // for i := limit; i > low; i -= step
		doubling         // for i := 1; i < limit; i *= 2 (or <<= 1)
		halving          // for i := limit; i > 0; i /= 2 (or >>= 1)
	)
	shape := countUp
	if r.IntN(2) == 0 {
		shape = 1 + r.IntN(4)
	}
	var limit *ir.Value
	bound := kb.bounds[r.IntN(len(kb.bounds))]
	switch k := r.IntN(6); {
	case k < 2:
		limit = const64(pre, int64(1+r.IntN(8)))
	case k < 5 || shape == countDown || shape == halving: // those start at it
		limit = kb.keep(pre.Add(ir.OpMin, ir.I64, bound, const64(pre, int64(3+r.IntN(8)))))
	default:
		limit = head.Add(ir.OpMin, ir.I64, bound, const64(head, 9))
	}
	// The step and the low end of the loops that count by a step.
	var step, low *ir.Value
	if shape == countUp || shape == countUpTo || shape == countDown {
		switch r.IntN(3) {
		case 0:
			step = const64(pre, int64(1+r.IntN(3)))
		case 1:
			step = pre.Add(ir.OpAdd, ir.I64, pre.Add(ir.OpAnd, ir.I64, kb.pick(ir.I64), const64(pre, 3)), const64(pre, 1))
		case 2:
			negative := pre.Add(ir.OpLt, ir.Bool, kb.pick(ir.I64), const64(pre, 0))
			step = pre.Add(ir.OpSelect, ir.I64, negative, const64(pre, 1<<41+int64(r.IntN(2))), const64(pre, 2))
		}
		low = const64(pre, int64(r.IntN(2)))
		if r.IntN(3) == 0 {
			low = pre.Add(ir.OpSub, ir.I64, pre.Add(ir.OpAnd, ir.I64, kb.pick(ir.I64), const64(pre, 7)), const64(pre, 3))
		}
	}

	// The offsets j of the body's accesses, in [0, 3]: constants, or a
	// value fixed before the loop (which versioning needs).
	offsets := make([]*ir.Value, 1+r.IntN(2))
	for k := range offsets {
		switch r.IntN(3) {
		case 0:
			offsets[k] = const64(body, int64(r.IntN(4)))
		case 1:
			offsets[k] = const64(pre, int64(r.IntN(4)))
		case 2:
			offsets[k] = pre.Add(ir.OpAnd, ir.I64, kb.pick(ir.I64), const64(pre, 3))
		}
	}

	// start, cond and next (made in the latch, once it is known) make i.
	var start, cond *ir.Value
	var next func(latch *ir.Block) *ir.Value
	switch shape {
	case countUp, countUpTo:
		start = low
		op := ir.OpLt
		if shape == countUpTo {
			op = ir.OpLe
		}
		cond = head.Add(op, ir.Bool, i, limit)
		next = func(b *ir.Block) *ir.Value { return b.Add(ir.OpAdd, ir.I64, i, step) }
	case countDown:
		start = limit
		cond = head.Add(ir.OpGt, ir.Bool, i, low)
		next = func(b *ir.Block) *ir.Value { return b.Add(ir.OpSub, ir.I64, i, step) }
	case doubling:
		start = const64(pre, 1)
		cond = head.Add(ir.OpLt, ir.Bool, i, limit)
		next = func(b *ir.Block) *ir.Value {
			if r.IntN(2) == 0 {
				return b.Add(ir.OpShl, ir.I64, i, kb.constant(b, ir.U32, 1))
			}
			return b.Add(ir.OpMul, ir.I64, i, const64(b, 2))
		}
	case halving:
		start = limit
		cond = head.Add(ir.OpGt, ir.Bool, i, const64(head, 0))
		next = func(b *ir.Block) *ir.Value {
			if r.IntN(2) == 0 {
				return b.Add(ir.OpShr, ir.I64, i, kb.constant(b, ir.U32, 1))
			}
			return b.Add(ir.OpDiv, ir.I64, i, const64(b, 2))
		}
	}
	head.SetIf(cond, body, exit)

	leave := kb.enterScope()
	kb.keep(i)
	kb.keep(acc)
	// i is within [-3, 16] here, so i*s + j with s <= 2 and j <= 3 is
	// within the buffer once the check passes, whatever the check's limit.
	for _, j := range offsets {
		var idx *ir.Value
		switch r.IntN(4) {
		case 0, 3:
			idx = body.Add(ir.OpAdd, ir.I64, i, j)
		case 1:
			idx = body.Add(ir.OpAdd, ir.I64, body.Add(ir.OpMul, ir.I64, i, const64(body, int64(r.IntN(3)))), j)
		case 2:
			s := body.Add(ir.OpAnd, ir.I64, kb.pick(ir.I64), const64(body, 1))
			idx = body.Add(ir.OpAdd, ir.I64, body.Add(ir.OpMul, ir.I64, i, s), j)
		}
		limits := append(slices.Clone(kb.bounds), kb.extents...)
		kb.addCheckedAccess(body, idx, limits[r.IntN(len(limits))])
	}
	if invariant != nil {
		kb.addCheckedAccess(body, invariant, kb.extents[r.IntN(len(kb.extents))])
	}
	for range 1 + r.IntN(4) {
		kb.addComputation(body)
	}
	latch := body
	if r.IntN(4) == 0 {
		latch = kb.addBranch(latch)
	}
	if depth == 0 && r.IntN(3) == 0 {
		latch = kb.addLoop(latch, depth+1)
		for range r.IntN(3) {
			kb.addComputation(latch)
		}
	}
	// acc = acc*3 + (the latest value of each integer type, xor-ed), so
	// that what the body computes counts.
	var latest *ir.Value
	for _, t := range integerTypes {
		v := kb.usable[t][len(kb.usable[t])-1]
		if t != ir.I64 {
			v = latch.Add(ir.OpConvert, ir.I64, v)
		}
		if latest == nil {
			latest = v
		} else {
			latest = latch.Add(ir.OpXor, ir.I64, latest, v)
		}
	}
	folded := latch.Add(ir.OpAdd, ir.I64, latch.Add(ir.OpMul, ir.I64, acc, const64(latch, 3)), latest)
	iNext := next(latch)
	latch.SetJump(head)
	leave()
	setPhiArgs(i, map[*ir.Block]*ir.Value{pre: start, latch: iNext})
	setPhiArgs(acc, map[*ir.Block]*ir.Value{pre: const64(pre, 0), latch: folded})
	// The header's values dominate the exit.
	kb.keep(i)
	kb.keep(acc)
	return exit
}

// kernelInputs are the inputs of one launch of a random kernel.
type kernelInputs struct {
	params []uint64 // randomKernelParams' values
	buf    []uint64 // the buffer's words before the launch
	blocks int      // blocks of blockThreads threads, in x
}

// Values of the parameters: those at the edges of the types, and small
// ones, which loops and checks of indices meet.
var (
	boundValues = []uint64{0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 40, 1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1 << 40, ir.MaxNonNeg - 1, ir.MaxNonNeg}
	anyValues   = []uint64{0, 1, 2, 3, 7, 1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, 1<<64 - 1, 1<<64 - 2, 1<<64 - 5, 1<<64 - 1<<31, 12345678901}
)

// randomInputs draws a launch's inputs from r; with small, within the
// limits a SmallIndices entry is launched under.
func randomInputs(r *rand.Rand, small bool) kernelInputs {
	in := kernelInputs{blocks: 1 + r.IntN(3)} // far below ir.MaxSmallGrid
	for _, p := range randomKernelParams {
		var x uint64
		switch p.kind {
		case boundParam:
			for {
				x = boundValues[r.IntN(len(boundValues))]
				if !small || x <= ir.MaxSmall {
					break
				}
			}
		case extentParam:
			// Often small: near the loops' bounds, where a check
			// settled once before a loop holds in the last
			// iteration or fails in it.
			x = uint64(r.IntN(bufWords + 1))
			if r.IntN(2) == 0 {
				x = uint64(r.IntN(12))
			}
		case anyParam:
			x = anyValues[r.IntN(len(anyValues))]
			if r.IntN(4) == 0 {
				x = r.Uint64()
			}
		}
		in.params = append(in.params, x)
	}
	in.buf = make([]uint64, bufWords)
	for i := range in.buf {
		// Small words as well as any: a loaded word may be an index.
		if r.IntN(2) == 0 {
			in.buf[i] = uint64(r.IntN(bufWords+8) - 4)
		} else {
			in.buf[i] = r.Uint64()
		}
	}
	return in
}

// describe names the launch's shape and parameters, for a failure.
func (in kernelInputs) describe(f *ir.Func) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "grid (%d,1,1) of blocks (%d,1,1), params", in.blocks, blockThreads)
	for i, x := range in.params {
		// As the kernel sees it: 32-bit parameters take the low half.
		p := f.Params[2+i]
		switch p.Type {
		case ir.I32:
			fmt.Fprintf(&sb, " %s=%d", p.Name, int32(x))
		case ir.U32:
			fmt.Fprintf(&sb, " %s=%d", p.Name, uint32(x))
		case ir.I64:
			fmt.Fprintf(&sb, " %s=%d", p.Name, int64(x))
		default:
			fmt.Fprintf(&sb, " %s=%d", p.Name, x)
		}
	}
	return sb.String()
}

// kernelRun is the memory a launch leaves: the threads' output words and
// the buffer.
type kernelRun struct{ out, buf []byte }

// runKernel launches f in the interpreter on in.
func runKernel(f *ir.Func, in kernelInputs) (kernelRun, error) {
	mem := interp.NewMemory()
	outBytes := 8 * outWords * blockThreads * in.blocks
	out, buf := mem.Alloc(outBytes), mem.Alloc(8*bufWords)
	bb := mem.Bytes(buf, 8*bufWords)
	for i, x := range in.buf {
		binary.LittleEndian.PutUint64(bb[8*i:], x)
	}
	params := append([]uint64{out, buf}, in.params...)
	err := interp.Launch(f, [3]int{in.blocks, 1, 1}, [3]int{blockThreads, 1, 1}, params, mem)
	return kernelRun{out: mem.Bytes(out, outBytes), buf: bb}, err
}

// describeDifference lists the first words where got differs from want,
// an output word with the value the kernel as written stores there
// (stored[k] to each thread's word k), or returns "" if none does.
func describeDifference(want, got kernelRun, stored []*ir.Value) string {
	const shown = 4
	var sb strings.Builder
	n := 0
	compare := func(a, b []byte, name func(word int) string) {
		for i := 0; i < len(a); i += 8 {
			x, y := binary.LittleEndian.Uint64(a[i:]), binary.LittleEndian.Uint64(b[i:])
			if x == y {
				continue
			}
			if n++; n <= shown {
				fmt.Fprintf(&sb, "\n  %s: as written %#x, optimized %#x", name(i/8), x, y)
			}
		}
	}
	compare(want.out, got.out, func(w int) string {
		thread, k := w/outWords, w%outWords
		if k < len(stored) {
			return fmt.Sprintf("thread %d's word %d (%s)", thread, k, stored[k].LongString())
		}
		return fmt.Sprintf("thread %d's word %d (not stored)", thread, k)
	})
	compare(want.buf, got.buf, func(w int) string { return fmt.Sprintf("buf[%d]", w) })
	if n > shown {
		fmt.Fprintf(&sb, "\n  and %d more words", n-shown)
	}
	return sb.String()
}
