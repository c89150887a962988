package ir

// Dominators returns the immediate dominator of every block reachable from
// the entry (the entry maps to itself), by the iterative algorithm of
// Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm" (2001).
func (f *Func) Dominators() map[*Block]*Block {
	order := f.ReversePostorder()
	num := make(map[*Block]int, len(order))
	for i, b := range order {
		num[b] = i
	}
	idom := map[*Block]*Block{order[0]: order[0]}
	intersect := func(a, b *Block) *Block {
		for a != b {
			for num[a] > num[b] {
				a = idom[a]
			}
			for num[b] > num[a] {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for _, b := range order[1:] {
			var d *Block
			for _, p := range b.Preds {
				if _, ok := idom[p]; !ok {
					continue
				}
				if d == nil {
					d = p
				} else {
					d = intersect(p, d)
				}
			}
			if idom[b] != d {
				idom[b] = d
				changed = true
			}
		}
	}
	return idom
}

// ReversePostorder lists the blocks reachable from the entry so that every
// block comes after its dominators (and, loops aside, its predecessors).
func (f *Func) ReversePostorder() []*Block {
	seen := map[*Block]bool{}
	var post []*Block
	var walk func(b *Block)
	walk = func(b *Block) {
		seen[b] = true
		for _, s := range b.Succs {
			if !seen[s] {
				walk(s)
			}
		}
		post = append(post, b)
	}
	walk(f.Blocks[0])
	for i, j := 0, len(post)-1; i < j; i, j = i+1, j-1 {
		post[i], post[j] = post[j], post[i]
	}
	return post
}
