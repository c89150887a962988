package frontend

import (
	"fmt"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// checkBarriers refuses a barrier that some threads of a tile might not
// reach: one in a block whose execution depends on a branch on a value
// that differs from thread to thread (C++ AMP refused these at compile
// time too). A value varies if it derives from the thread's position in
// its tile, from an atomic or a shuffle, from a load at a varying address,
// or from a phi where varying branches join.
func (c *compiler) checkBarriers() {
	if len(c.barriers) == 0 {
		return
	}
	f := c.f
	ipdom := postDominators(f)
	varying := map[*ir.Value]bool{}
	divergent := map[*ir.Block]bool{}
	for changed := true; changed; {
		changed = false
		mark := func(v *ir.Value) {
			if !varying[v] {
				varying[v] = true
				changed = true
			}
		}
		for _, b := range f.Blocks {
			for _, v := range b.Values {
				if varying[v] {
					continue
				}
				switch v.Op {
				case ir.OpSpecial:
					switch ir.Special(v.Aux) {
					case ir.TidX, ir.TidY, ir.TidZ, ir.LaneID:
						mark(v)
					}
					continue
				case ir.OpAtomic, ir.OpShuffle:
					mark(v)
					continue
				case ir.OpLoad:
					// Each thread has its own local memory: what a load
					// there gives differs between threads even at one
					// address.
					if v.Space == ir.Local {
						mark(v)
						continue
					}
				case ir.OpPhi:
					// Different threads may arrive from different
					// predecessors if any of them is divergent.
					for _, p := range b.Preds {
						if divergent[p] && !divergent[b] {
							mark(v)
						}
					}
				}
				for _, a := range v.Args {
					if varying[a] {
						mark(v)
						break
					}
				}
			}
		}
		// Blocks control-dependent on a varying branch: those reachable
		// from it before its immediate post-dominator.
		for _, b := range f.Blocks {
			if b.Kind != ir.If || !varying[b.Cond] {
				continue
			}
			stop := ipdom[b]
			var walk func(x *ir.Block)
			walk = func(x *ir.Block) {
				if x == stop || divergent[x] {
					return
				}
				divergent[x] = true
				changed = true
				for _, s := range x.Succs {
					walk(s)
				}
			}
			for _, s := range b.Succs {
				walk(s)
			}
		}
	}
	for b, pos := range c.barriers {
		if divergent[b.Block] {
			what, who := "Barrier.Wait", "a tile"
			if b.Op == ir.OpShuffle {
				what, who = "this shuffle", "a warp"
			}
			c.errs = append(c.errs, &Error{pos, fmt.Sprintf("%s is reached only by some threads of %s (it is under a condition or after a return that depends on the thread's index); every thread must reach it: move it out of the condition", what, who)})
		}
	}
}

// checkStaticLoops refuses TileStatic inside a loop: each call on the CPU
// gives new memory, and the GPU's arrays are fixed when compiled.
func (c *compiler) checkStaticLoops() {
	for b, pos := range c.staticBlocks {
		if onCycle(b) {
			c.errs = append(c.errs, &Error{pos, "amp.TileStatic is called inside a loop; call it once, before the loop, and reuse the slice"})
		}
	}
}

func onCycle(b *ir.Block) bool {
	seen := map[*ir.Block]bool{}
	var walk func(x *ir.Block) bool
	walk = func(x *ir.Block) bool {
		for _, s := range x.Succs {
			if s == b {
				return true
			}
			if !seen[s] {
				seen[s] = true
				if walk(s) {
					return true
				}
			}
		}
		return false
	}
	return walk(b)
}

// postDominators gives each block's immediate post-dominator (nil: the
// virtual exit that every Return reaches), by the same iteration as
// ir.Func.Dominators on the reversed graph.
func postDominators(f *ir.Func) map[*ir.Block]*ir.Block {
	exit := &ir.Block{ID: -1}
	preds := map[*ir.Block][]*ir.Block{} // successors in the reversed graph
	var blocks []*ir.Block
	for _, b := range f.ReversePostorder() {
		blocks = append(blocks, b)
		if b.Kind == ir.Return {
			preds[b] = append(preds[b], exit)
		}
		preds[b] = append(preds[b], b.Succs...)
	}
	// Postorder of the reversed graph from the exit.
	rsuccs := map[*ir.Block][]*ir.Block{}
	for _, b := range blocks {
		for _, s := range preds[b] {
			rsuccs[s] = append(rsuccs[s], b)
		}
	}
	var order []*ir.Block
	seen := map[*ir.Block]bool{}
	var walk func(b *ir.Block)
	walk = func(b *ir.Block) {
		seen[b] = true
		for _, s := range rsuccs[b] {
			if !seen[s] {
				walk(s)
			}
		}
		order = append(order, b)
	}
	walk(exit)
	num := map[*ir.Block]int{}
	for i, b := range order {
		num[b] = len(order) - 1 - i
	}
	ipdom := map[*ir.Block]*ir.Block{exit: exit}
	intersect := func(a, b *ir.Block) *ir.Block {
		for a != b {
			for num[a] > num[b] {
				a = ipdom[a]
			}
			for num[b] > num[a] {
				b = ipdom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := len(order) - 2; i >= 0; i-- {
			b := order[i]
			var d *ir.Block
			for _, s := range preds[b] {
				if _, ok := ipdom[s]; !ok {
					continue
				}
				if d == nil {
					d = s
				} else {
					d = intersect(s, d)
				}
			}
			if d != nil && ipdom[b] != d {
				ipdom[b] = d
				changed = true
			}
		}
	}
	out := map[*ir.Block]*ir.Block{}
	for b, d := range ipdom {
		if b != exit {
			if d == exit {
				d = nil
			}
			out[b] = d
		}
	}
	return out
}
