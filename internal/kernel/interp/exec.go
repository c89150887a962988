package interp

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// maxSteps bounds a launch's work (values computed plus blocks left); a var
// so that a test can lower it.
var maxSteps int64 = 1e9

// maxBlockThreads is PTX's limit on the threads of a block.
const maxBlockThreads = 1024

// Launch runs f over grid × block threads (x fastest in both). params holds
// one raw 64-bit value per f.Params entry: integers as their bits (only the
// low 32 count for 32-bit types), F32 as math.Float32bits, F64 as
// math.Float64bits. Global memory is mem. The first error a thread meets
// (or a broken shuffle, or the step budget running out) ends the launch.
func Launch(f *ir.Func, grid, block [3]int, params []uint64, mem *Memory) error {
	if err := f.Verify(); err != nil {
		return fmt.Errorf("interp: %w", err)
	}
	if len(params) != len(f.Params) {
		return fmt.Errorf("interp: %s: %d parameters, want %d", f.Name, len(params), len(f.Params))
	}
	nthreads := 1
	for i := range 3 {
		if grid[i] < 1 || block[i] < 1 {
			return fmt.Errorf("interp: %s: launch of %v blocks of %v threads", f.Name, grid, block)
		}
		nthreads *= block[i]
	}
	limit := maxBlockThreads
	if f.MaxThreads > 0 {
		limit = min(limit, f.MaxThreads)
	}
	if nthreads > limit {
		return fmt.Errorf("interp: %s: %d threads in a block, more than %d", f.Name, nthreads, limit)
	}
	p, err := compile(f)
	if err != nil {
		return err
	}
	l := &launch{p: p, mem: mem, grid: grid, block: block}
	l.params = make([]uint64, len(params))
	for i, x := range params {
		switch f.Params[i].Type {
		case ir.I32, ir.U32, ir.F32:
			x = uint64(uint32(x))
		case ir.Bool:
			x = b2r(x != 0)
		}
		l.params[i] = x
	}
	l.shared = make([]byte, f.SharedBytes())
	l.threads = make([]thread, nthreads)
	regs := make([]uint64, nthreads*p.nregs)
	var local []byte
	if p.localBytes > 0 {
		local = make([]byte, nthreads*p.localBytes)
	}
	for i := range l.threads {
		t := &l.threads[i]
		t.regs = regs[i*p.nregs : (i+1)*p.nregs : (i+1)*p.nregs]
		if local != nil {
			t.local = local[i*p.localBytes : (i+1)*p.localBytes : (i+1)*p.localBytes]
		}
		t.scratch = make([]uint64, p.maxCopies)
		t.lane = i % 32
		x := i % block[0]
		y := i / block[0] % block[1]
		z := i / (block[0] * block[1])
		t.special = [ir.LaneID + 1]uint64{
			ir.TidX: uint64(x), ir.TidY: uint64(y), ir.TidZ: uint64(z),
			ir.NtidX: uint64(block[0]), ir.NtidY: uint64(block[1]), ir.NtidZ: uint64(block[2]),
			ir.NctaidX: uint64(grid[0]), ir.NctaidY: uint64(grid[1]), ir.NctaidZ: uint64(grid[2]),
			ir.LaneID: uint64(t.lane),
		}
	}
	for cz := range grid[2] {
		for cy := range grid[1] {
			for cx := range grid[0] {
				if err := l.runBlock([3]int{cx, cy, cz}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

type launch struct {
	p           *program
	mem         *Memory
	grid, block [3]int
	params      []uint64
	shared      []byte
	threads     []thread
	steps       int64
	last        alloc // the global allocation last hit: most accesses hit it again
}

type state uint8

const (
	running state = iota
	atBarrier
	atShuffle
	done
)

type thread struct {
	regs    []uint64
	local   []byte
	scratch []uint64
	special [ir.LaneID + 1]uint64
	lane    int
	blk     int32
	pc      int32
	state   state
}

func (l *launch) runBlock(ctaid [3]int) error {
	clear(l.shared)
	for i := range l.threads {
		t := &l.threads[i]
		clear(t.regs)
		clear(t.local)
		t.blk, t.pc, t.state = 0, 0, running
		t.special[ir.CtaidX] = uint64(ctaid[0])
		t.special[ir.CtaidY] = uint64(ctaid[1])
		t.special[ir.CtaidZ] = uint64(ctaid[2])
	}
	for {
		for i := range l.threads {
			if t := &l.threads[i]; t.state == running {
				if err := l.run(t); err != nil {
					return err
				}
			}
		}
		// Every thread now waits or is done.
		shuffled, waiting := false, false
		for w := 0; w < len(l.threads); w += 32 {
			warp := l.threads[w:min(w+32, len(l.threads))]
			n := 0
			for i := range warp {
				if warp[i].state == atShuffle {
					n++
				}
			}
			switch n {
			case 0:
			case len(warp):
				l.shuffle(warp)
				shuffled = true
			default:
				return l.brokenShuffle(warp)
			}
		}
		if shuffled {
			continue
		}
		for i := range l.threads {
			if t := &l.threads[i]; t.state == atBarrier {
				t.state, waiting = running, true
			}
		}
		if !waiting {
			return nil
		}
	}
}

func (l *launch) brokenShuffle(warp []thread) error {
	var at *inst
	why := "returned"
	for i := range warp {
		t := &warp[i]
		switch t.state {
		case atShuffle:
			if at == nil {
				at = &l.p.blocks[t.blk].insts[t.pc]
			}
		case atBarrier:
			why = "wait at a barrier"
		}
	}
	return l.errorf(at, "shuffle reached by only part of a warp (lanes %d to %d; others %s)", warp[0].lane, warp[len(warp)-1].lane, why)
}

// shuffle completes the shfl.sync every lane of warp waits at, by PTX's
// rule: the width w makes groups of w lanes; up, down and bfly reading
// outside the lane's own group (or, for bfly, past its end) take the lane's
// own value; idx takes its lane modulo w within the group.
func (l *launch) shuffle(warp []thread) {
	var out [32]uint64
	for i := range warp {
		t := &warp[i]
		in := &l.p.blocks[t.blk].insts[t.pc]
		lane := int(t.lane)
		b := int(uint32(t.regs[in.b]) & 31)
		seg := (32 - int(in.k)) & 31
		minLane := lane & seg
		maxLane := minLane | (31 &^ seg)
		var j int
		ok := true
		switch ir.Shuffle(in.x) {
		case ir.ShuffleUp:
			j = lane - b
			ok = j >= minLane
		case ir.ShuffleDown:
			j = lane + b
			ok = j <= maxLane
		case ir.ShuffleXor:
			j = lane ^ b
			ok = j <= maxLane
		case ir.ShuffleIdx:
			j = minLane | (b &^ seg)
		}
		if !ok || j >= len(warp) {
			j = lane
		}
		src := &warp[j]
		out[i] = src.regs[l.p.blocks[src.blk].insts[src.pc].a]
	}
	for i := range warp {
		t := &warp[i]
		in := &l.p.blocks[t.blk].insts[t.pc]
		t.regs[in.dst] = out[i]
		t.pc++
		t.state = running
	}
}

func (l *launch) errorf(in *inst, format string, args ...any) error {
	f := l.p.f
	return fmt.Errorf("interp: %s: b%d: %s: %s", f.Name, in.v.Block.ID, in.v.LongString(), fmt.Sprintf(format, args...))
}

// run runs t until it returns or waits.
func (l *launch) run(t *thread) error {
	regs := t.regs
	p := l.p
	for {
		pb := &p.blocks[t.blk]
		insts := pb.insts
		start := int(t.pc)
		for pc := start; pc < len(insts); pc++ {
			in := &insts[pc]
			a, b := regs[in.a], regs[in.b]
			var r uint64
			switch in.code {
			case opConst:
				r = in.k
			case opParam:
				r = l.params[in.k]
			case opSpecial:
				r = t.special[in.k]
			case opCopy:
				r = a

			case opAdd32:
				r = uint64(uint32(a + b))
			case opAdd64:
				r = a + b
			case opAddF32:
				r = r32(f32(a) + f32(b))
			case opAddF64:
				r = r64(f64(a) + f64(b))
			case opSub32:
				r = uint64(uint32(a - b))
			case opSub64:
				r = a - b
			case opSubF32:
				r = r32(f32(a) - f32(b))
			case opSubF64:
				r = r64(f64(a) - f64(b))
			case opMul32:
				r = uint64(uint32(a * b))
			case opMul64:
				r = a * b
			case opMulF32:
				r = r32(f32(a) * f32(b))
			case opMulF64:
				r = r64(f64(a) * f64(b))
			case opDivI32, opRemI32:
				if int32(b) == 0 {
					return l.errorf(in, "integer division by zero")
				}
				if in.code == opDivI32 {
					r = uint64(uint32(int32(a) / int32(b)))
				} else {
					r = uint64(uint32(int32(a) % int32(b)))
				}
			case opDivU32, opRemU32:
				if uint32(b) == 0 {
					return l.errorf(in, "integer division by zero")
				}
				if in.code == opDivU32 {
					r = uint64(uint32(a) / uint32(b))
				} else {
					r = uint64(uint32(a) % uint32(b))
				}
			case opDivI64, opRemI64:
				if b == 0 {
					return l.errorf(in, "integer division by zero")
				}
				if in.code == opDivI64 {
					r = uint64(int64(a) / int64(b))
				} else {
					r = uint64(int64(a) % int64(b))
				}
			case opDivU64, opRemU64:
				if b == 0 {
					return l.errorf(in, "integer division by zero")
				}
				if in.code == opDivU64 {
					r = a / b
				} else {
					r = a % b
				}
			case opDivF32:
				r = r32(f32(a) / f32(b))
			case opDivF64:
				r = r64(f64(a) / f64(b))
			case opMinI32:
				r = uint64(uint32(min(int32(a), int32(b))))
			case opMinU32, opMinU64:
				r = min(a, b)
			case opMinI64:
				r = uint64(min(int64(a), int64(b)))
			case opMinF32:
				r = r32(min(f32(a), f32(b)))
			case opMinF64:
				r = r64(min(f64(a), f64(b)))
			case opMaxI32:
				r = uint64(uint32(max(int32(a), int32(b))))
			case opMaxU32, opMaxU64:
				r = max(a, b)
			case opMaxI64:
				r = uint64(max(int64(a), int64(b)))
			case opMaxF32:
				r = r32(max(f32(a), f32(b)))
			case opMaxF64:
				r = r64(max(f64(a), f64(b)))
			case opAnd:
				r = a & b
			case opOr:
				r = a | b
			case opXor:
				r = a ^ b
			case opShl32:
				r = uint64(uint32(a) << uint32(b))
			case opShl64:
				r = a << uint32(b)
			case opShrI32:
				r = uint64(uint32(int32(a) >> uint32(b)))
			case opShrU32:
				r = uint64(uint32(a) >> uint32(b))
			case opShrI64:
				r = uint64(int64(a) >> uint32(b))
			case opShrU64:
				r = a >> uint32(b)
			case opNeg32:
				r = uint64(uint32(-a))
			case opNeg64:
				r = -a
			case opNegF32:
				r = a ^ 1<<31
			case opNegF64:
				r = a ^ 1<<63
			case opNot32:
				r = uint64(^uint32(a))
			case opNot64:
				r = ^a
			case opNotBool:
				r = a ^ 1

			case opEq:
				r = b2r(a == b)
			case opNe:
				r = b2r(a != b)
			case opEqF32:
				r = b2r(f32(a) == f32(b))
			case opNeF32:
				r = b2r(f32(a) != f32(b))
			case opEqF64:
				r = b2r(f64(a) == f64(b))
			case opNeF64:
				r = b2r(f64(a) != f64(b))
			case opLtI32:
				r = b2r(int32(a) < int32(b))
			case opLtU32, opLtU64:
				r = b2r(a < b)
			case opLtI64:
				r = b2r(int64(a) < int64(b))
			case opLtF32:
				r = b2r(f32(a) < f32(b))
			case opLtF64:
				r = b2r(f64(a) < f64(b))
			case opLeI32:
				r = b2r(int32(a) <= int32(b))
			case opLeU32, opLeU64:
				r = b2r(a <= b)
			case opLeI64:
				r = b2r(int64(a) <= int64(b))
			case opLeF32:
				r = b2r(f32(a) <= f32(b))
			case opLeF64:
				r = b2r(f64(a) <= f64(b))

			case opConvert:
				r = convert(in.from, in.t, a)
			case opSelect:
				if a != 0 {
					r = b
				} else {
					r = regs[in.c]
				}
			case opFmaF64:
				r = r64(math.FMA(f64(a), f64(b), f64(regs[in.c])))
			case opFmaF32:
				r = r32(fma32(f32(a), f32(b), f32(regs[in.c])))
			case opMath:
				r = mathFn(ir.MathFn(in.x), in.t, a, b, regs[in.c])

			case opLoad:
				m, err := l.access(t, in, a, int(in.x))
				if err != nil {
					return err
				}
				r = load(m)
			case opStore:
				m, err := l.access(t, in, a, int(in.x))
				if err != nil {
					return err
				}
				store(m, b)
				continue
			case opAtomic:
				m, err := l.access(t, in, a, in.t.Size())
				if err != nil {
					return err
				}
				old := load(m)
				x, cmp := b, uint64(0)
				if ir.Atomic(in.x) == ir.AtomicCAS {
					x, cmp = regs[in.c], b
				}
				nw, ok := atomicOp(ir.Atomic(in.x), in.t, old, x, cmp)
				if !ok {
					return l.errorf(in, "no such atomic on %s", in.t)
				}
				store(m, nw)
				r = old
			case opStatus:
				if err := l.status(t, in); err != nil {
					return err
				}
				continue
			case opBarrier:
				l.steps += int64(pc - start + 1)
				t.pc, t.state = int32(pc+1), atBarrier
				return nil
			case opShuffle:
				l.steps += int64(pc - start + 1)
				t.pc, t.state = int32(pc), atShuffle
				return nil
			default:
				return l.errorf(in, "cannot run this")
			}
			regs[in.dst] = r
		}
		l.steps += int64(len(insts) - start + 1)
		if l.steps > maxSteps {
			return fmt.Errorf("interp: %s: b%d: more than %d steps: the kernel does not end", p.f.Name, pb.b.ID, maxSteps)
		}
		var e *edge
		switch pb.kind {
		case ir.Jump:
			e = &pb.succ[0]
		case ir.If:
			if regs[pb.cond] != 0 {
				e = &pb.succ[0]
			} else {
				e = &pb.succ[1]
			}
		default:
			t.state = done
			return nil
		}
		// Phis read their arguments simultaneously.
		for i, s := range e.src {
			t.scratch[i] = regs[s]
		}
		for i, d := range e.dst {
			regs[d] = t.scratch[i]
		}
		t.blk, t.pc = e.to, 0
	}
}

// access returns the n bytes at addr in in's memory space, as t sees it.
func (l *launch) access(t *thread, in *inst, addr uint64, n int) ([]byte, error) {
	var mem []byte
	var off uint64
	switch in.space {
	case ir.Global:
		if a := &l.last; addr >= a.base && addr-a.base <= uint64(len(a.data)) && uint64(n) <= uint64(len(a.data))-(addr-a.base) {
			o := addr - a.base
			return a.data[o : o+uint64(n)], nil
		}
		b, ok := l.mem.span(addr, n)
		if !ok {
			return nil, l.errorf(in, "%d bytes at global address %#x are outside any allocation", n, addr)
		}
		l.last = l.mem.allocs[l.mem.find(addr)]
		return b, nil
	case ir.Shared:
		mem, off = l.shared, uint64(uint32(addr))
	case ir.Local:
		mem, off = t.local, addr-localBase
	default:
		return nil, l.errorf(in, "no memory space")
	}
	if off > uint64(len(mem)) || uint64(n) > uint64(len(mem))-off {
		return nil, l.errorf(in, "%d bytes at %s address %#x are outside its %d bytes", n, in.space, addr, len(mem))
	}
	if n == 0 {
		return nil, l.errorf(in, "access of no bytes")
	}
	return mem[off : off+uint64(n)], nil
}

func load(m []byte) uint64 {
	switch len(m) {
	case 4:
		return uint64(binary.LittleEndian.Uint32(m))
	case 8:
		return binary.LittleEndian.Uint64(m)
	}
	var x uint64
	for i := len(m) - 1; i >= 0; i-- {
		x = x<<8 | uint64(m[i])
	}
	return x
}

func store(m []byte, x uint64) {
	switch len(m) {
	case 4:
		binary.LittleEndian.PutUint32(m, uint32(x))
	case 8:
		binary.LittleEndian.PutUint64(m, x)
	default:
		for i := range m {
			m[i] = byte(x >> (8 * i))
		}
	}
}

// status claims the status record for the first failure: the code goes in
// only if the record's code is still 0, and only then the rest.
func (l *launch) status(t *thread, in *inst) error {
	r := func(i int) uint64 { return t.regs[in.args[i]] }
	rec, ok := l.mem.span(r(0), ir.StatusRecordBytes)
	if !ok {
		return l.errorf(in, "status record at %#x is outside any allocation", r(0))
	}
	if binary.LittleEndian.Uint32(rec) != 0 {
		return nil
	}
	binary.LittleEndian.PutUint32(rec[0:], uint32(r(1)))
	binary.LittleEndian.PutUint32(rec[4:], uint32(r(2)))
	binary.LittleEndian.PutUint64(rec[8:], r(3))
	binary.LittleEndian.PutUint64(rec[16:], r(4))
	binary.LittleEndian.PutUint64(rec[24:], r(5))
	return nil
}
