package ptx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// This file runs emitted PTX on a small interpreter of the instructions a
// single thread's scalar code uses, and compares the stores it makes with
// the IR's own meaning. Its point is the control flow: phi copies,
// critical edges, fall-through and branch senses, which golden files only
// show to a reader.

// runPTX interprets the one entry in src for a single thread, with the
// given 64-bit parameter values, and returns the global stores as
// address -> bits. It fails the test on any instruction it does not know.
func runPTX(t *testing.T, src string, params map[string]uint64) map[uint64]uint64 {
	t.Helper()
	var code []string
	labels := map[string]int{}
	in := false
	for _, l := range strings.Split(src, "\n") {
		switch {
		case l == "{":
			in = true
		case l == "}":
			in = false
		case !in, l == "", strings.HasPrefix(l, "\t//"), strings.HasPrefix(l, "\t."):
		case strings.HasSuffix(l, ":"):
			labels[strings.TrimSuffix(l, ":")] = len(code)
		default:
			code = append(code, strings.TrimSuffix(strings.TrimSpace(l), ";"))
		}
	}
	regs := map[string]uint64{}
	mem := map[uint64]uint64{}
	val := func(s string) uint64 {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "%"):
			x, ok := regs[s]
			if !ok {
				t.Fatalf("read of %s before it is written", s)
			}
			return x
		case strings.HasPrefix(s, "0f"), strings.HasPrefix(s, "0d"):
			x, err := strconv.ParseUint(s[2:], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return x
		case strings.HasPrefix(s, "0x"):
			x, err := strconv.ParseUint(s[2:], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("bad operand %q", s)
		}
		return uint64(x)
	}
	b2u := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	for pc, steps := 0, 0; ; steps++ {
		if steps > 100000 {
			t.Fatal("the PTX does not finish")
		}
		if pc >= len(code) {
			t.Fatal("ran off the end of the entry")
		}
		ins := code[pc]
		pc++
		if strings.HasPrefix(ins, "@") {
			sp := strings.IndexByte(ins, ' ')
			g := ins[1:sp]
			neg := strings.HasPrefix(g, "!")
			if (val(strings.TrimPrefix(g, "!")) != 0) == neg {
				continue
			}
			ins = ins[sp+1:]
		}
		op, rest, _ := strings.Cut(ins, " ")
		var ops []string
		if rest != "" {
			ops = strings.Split(rest, ", ")
		}
		parts := strings.Split(op, ".")
		typ := parts[len(parts)-1]
		set := func(x uint64) {
			switch typ {
			case "s32", "u32", "b32", "f32":
				x = uint64(uint32(x))
			case "pred":
				x = b2u(x != 0)
			}
			regs[ops[0]] = x
		}
		s32 := func(s string) int32 { return int32(uint32(val(s))) }
		fl := func(s string) float32 { return math.Float32frombits(uint32(val(s))) }
		switch parts[0] {
		case "ret":
			return mem
		case "bra":
			pc = labels[ops[0]]
		case "mov":
			set(val(ops[1]))
		case "ld":
			if parts[1] != "param" {
				t.Fatalf("%s: only parameters are loaded here", ins)
			}
			set(params[strings.Trim(ops[1], "[]")])
		case "st":
			addr, off, _ := strings.Cut(strings.Trim(ops[0], "[]"), "+")
			a := val(addr)
			if off != "" {
				a += val(off)
			}
			x := val(ops[1])
			if typ == "s32" || typ == "u32" || typ == "f32" {
				x = uint64(uint32(x))
			}
			mem[a] = x
		case "add", "sub", "mul", "xor", "and", "or":
			if typ == "f32" {
				x, y := fl(ops[1]), fl(ops[2])
				r := map[string]float32{"add": x + y, "sub": x - y, "mul": x * y}[parts[0]]
				set(uint64(math.Float32bits(r)))
				break
			}
			x, y := val(ops[1]), val(ops[2])
			set(map[string]uint64{"add": x + y, "sub": x - y, "mul": x * y, "xor": x ^ y, "and": x & y, "or": x | y}[parts[0]])
		case "not":
			set(^val(ops[1]))
		case "selp":
			if val(ops[3]) != 0 {
				set(val(ops[1]))
			} else {
				set(val(ops[2]))
			}
		case "setp":
			var r bool
			switch typ {
			case "s32":
				x, y := s32(ops[1]), s32(ops[2])
				r = map[string]bool{"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[parts[1]]
			case "u32":
				x, y := uint32(val(ops[1])), uint32(val(ops[2]))
				r = map[string]bool{"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[parts[1]]
			default:
				t.Fatalf("%s: setp type not interpreted", ins)
			}
			typ = "pred"
			set(b2u(r))
		default:
			t.Fatalf("%s: not interpreted", ins)
		}
	}
}

// runIR interprets f for a single thread: the same stores by the IR's
// meaning of its ops, phis taking the argument of the edge control came in
// by.
func runIR(t *testing.T, f *ir.Func, params []uint64) map[uint64]uint64 {
	t.Helper()
	vals := map[*ir.Value]uint64{}
	mem := map[uint64]uint64{}
	var prev *ir.Block
	prevSucc := -1
	b := f.Entry()
	for steps := 0; ; steps++ {
		if steps > 100000 {
			t.Fatal("the IR does not finish")
		}
		// Phis read their arguments all at once, before any is written. The
		// edge's argument: a block branching to b twice is in b.Preds twice,
		// in the order of its Succs.
		var phis []uint64
		for _, v := range b.Values {
			if v.Op == ir.OpPhi {
				var at []int
				for k, p := range b.Preds {
					if p == prev {
						at = append(at, k)
					}
				}
				nth := 0
				for _, s := range prev.Succs[:prevSucc] {
					if s == b {
						nth++
					}
				}
				phis = append(phis, vals[v.Args[at[nth]]])
			}
		}
		for i, v := range b.Values {
			if i < len(phis) {
				vals[v] = phis[i]
				continue
			}
			a := func(k int) uint64 { return vals[v.Args[k]] }
			var r uint64
			switch v.Op {
			case ir.OpConst:
				r = v.Const
				if v.Type == ir.F32 {
					r = uint64(math.Float32bits(float32(math.Float64frombits(v.Const))))
				}
			case ir.OpParam:
				r = params[v.Aux]
			case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpXor:
				if v.Type == ir.F32 {
					x, y := math.Float32frombits(uint32(a(0))), math.Float32frombits(uint32(a(1)))
					r = uint64(math.Float32bits(map[ir.Op]float32{ir.OpAdd: x + y, ir.OpSub: x - y, ir.OpMul: x * y}[v.Op]))
				} else {
					x, y := a(0), a(1)
					r = map[ir.Op]uint64{ir.OpAdd: x + y, ir.OpSub: x - y, ir.OpMul: x * y, ir.OpXor: x ^ y}[v.Op]
				}
			case ir.OpLt, ir.OpGt, ir.OpNe:
				var lt, gt bool
				if v.Args[0].Type == ir.I32 {
					lt, gt = int32(a(0)) < int32(a(1)), int32(a(0)) > int32(a(1))
				} else {
					lt, gt = uint32(a(0)) < uint32(a(1)), uint32(a(0)) > uint32(a(1))
				}
				r = map[ir.Op]uint64{ir.OpLt: b2u(lt), ir.OpGt: b2u(gt), ir.OpNe: b2u(lt || gt)}[v.Op]
			case ir.OpConvert:
				if v.Args[0].Type != ir.Bool || v.Type != ir.U32 {
					t.Fatalf("conversion %s not interpreted", v.LongString())
				}
				r = a(0)
			case ir.OpStore:
				mem[a(0)] = a(1)
			default:
				t.Fatalf("%s not interpreted", v.LongString())
			}
			if v.Type.Size() == 4 {
				r = uint64(uint32(r))
			}
			vals[v] = r
		}
		switch b.Kind {
		case ir.Return:
			return mem
		case ir.Jump:
			prev, prevSucc, b = b, 0, b.Succs[0]
		case ir.If:
			j := 1
			if vals[b.Cond] != 0 {
				j = 0
			}
			prev, prevSucc, b = b, j, b.Succs[j]
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func sameStores(t *testing.T, what string, got, want map[uint64]uint64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) { // fmt sorts map keys
		t.Errorf("%s: PTX stores %v, IR stores %v", what, got, want)
	}
}

func TestRunLoop(t *testing.T) {
	f := buildLoop()
	src, err := Emit(&ir.Module{Funcs: []*ir.Func{f}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const out = 0x1000
	for _, n := range []int{0, 1, 2, 3, 10, 20} {
		p, q := math.Float32bits(1.25), math.Float32bits(-3)
		ptx := runPTX(t, src, map[string]uint64{"p0_0_n": uint64(n), "p0_1_p": uint64(p), "p0_2_q": uint64(q), "p0_3_out": out})
		sameStores(t, fmt.Sprintf("n=%d", n), ptx, runIR(t, f, []uint64{uint64(n), uint64(p), uint64(q), out}))
	}
}

// randomCFG builds a kernel of nb working blocks, each with np I32 phis, a
// Bool phi and a step counter phi. Block i computes, stops to the exit
// block once the counter reaches a limit, and otherwise goes through a
// dispatcher to one or two (maybe equal) working blocks, passing a
// shuffle of its values as phi arguments: swaps, cycles, fan-out, and
// critical edges everywhere. The exit block has phis too and stores them.
func randomCFG(rng *rand.Rand, nb, np int) *ir.Func {
	f := ir.NewFunc("random")
	f.AddParam("out", ir.U64)
	entry := f.Entry()
	work := make([]*ir.Block, nb)
	disp := make([]*ir.Block, nb)
	for i := range work {
		work[i] = f.NewBlock()
		disp[i] = f.NewBlock()
	}
	exit := f.NewBlock()
	rng.Shuffle(len(f.Blocks)-1, func(i, j int) { // IR block order is not flow order
		f.Blocks[i+1], f.Blocks[j+1] = f.Blocks[j+1], f.Blocks[i+1]
	})

	consts := []*ir.Value{entry.Const(ir.I32, 0), entry.Const(ir.I32, 1), entry.Const(ir.I32, -7)}
	bools := []*ir.Value{entry.Const(ir.Bool, 1), entry.Const(ir.Bool, 0)}
	zero := entry.Const(ir.I32, 0)
	limit := entry.Const(ir.I32, int64(3+rng.IntN(25)))
	out := param(entry, 0)

	type state struct{ xs, flags []*ir.Value } // values a block passes on
	phisOf := func(b *ir.Block) (xs []*ir.Value, flag, count *ir.Value) {
		for k := 0; k < np; k++ {
			xs = append(xs, b.AddPhi(ir.I32))
		}
		return xs, b.AddPhi(ir.Bool), b.AddPhi(ir.I32)
	}
	type phiSet struct {
		xs          []*ir.Value
		flag, count *ir.Value
	}
	sets := make([]phiSet, nb)
	for i, b := range work {
		xs, flag, count := phisOf(b)
		sets[i] = phiSet{xs, flag, count}
	}
	exs, eflag, ecount := phisOf(exit)

	// pass appends phi arguments for an edge into a block with phis.
	pass := func(to phiSet, from state, count *ir.Value) {
		for _, x := range to.xs {
			x.Args = append(x.Args, from.xs[rng.IntN(len(from.xs))])
		}
		to.flag.Args = append(to.flag.Args, from.flags[rng.IntN(len(from.flags))])
		to.count.Args = append(to.count.Args, count)
	}
	first := rng.IntN(nb)
	entry.SetJump(work[first])
	pass(sets[first], state{consts, bools}, zero)

	for i, b := range work {
		s := sets[i]
		x, y := s.xs[rng.IntN(np)], s.xs[rng.IntN(np)]
		ops := []ir.Op{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpXor}
		z := b.Add(ops[rng.IntN(len(ops))], ir.I32, x, y)
		lt := b.Add(ir.OpLt, ir.Bool, x, y)
		c1 := b.Add(ir.OpAdd, ir.I32, s.count, consts[1])
		st := state{append(append([]*ir.Value{}, s.xs...), z), []*ir.Value{s.flag, lt}}
		b.SetIf(b.Add(ir.OpLt, ir.Bool, c1, limit), disp[i], exit)
		pass(phiSet{exs, eflag, ecount}, st, c1)

		d := disp[i]
		switch rng.IntN(3) {
		case 0:
			j := rng.IntN(nb)
			d.SetJump(work[j])
			pass(sets[j], st, c1)
		default:
			j, k := rng.IntN(nb), rng.IntN(nb)
			if rng.IntN(4) == 0 {
				k = j // both edges to one block, with different arguments
			}
			d.SetIf(st.flags[rng.IntN(2)], work[j], work[k])
			pass(sets[j], st, c1)
			pass(sets[k], st, c1)
		}
	}
	for k, v := range append(append([]*ir.Value{}, exs...), exit.Add(ir.OpConvert, ir.U32, eflag), ecount) {
		store(exit, ir.Global, offset(exit, out, int64(4*k)), v)
	}
	exit.SetReturn()
	return f
}

func TestRunRandomCFG(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 300; iter++ {
		f := randomCFG(rng, 1+rng.IntN(5), 1+rng.IntN(4))
		if err := f.Verify(); err != nil {
			t.Fatalf("iteration %d builds bad IR: %v\n%s", iter, err, f)
		}
		src, err := Emit(&ir.Module{Funcs: []*ir.Func{f}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkPTX(t, src)
		const out = 0x1000
		got := runPTX(t, src, map[string]uint64{"p0_0_out": out})
		want := runIR(t, f, []uint64{out})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("iteration %d: PTX stores %v, IR stores %v\n%s\n%s", iter, got, want, f, src)
		}
	}
}
