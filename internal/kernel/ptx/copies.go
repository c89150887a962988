package ptx

// pcopy is one register copy, dst <- src, of a parallel copy.
type pcopy[R comparable] struct{ dst, src R }

// sequentialize orders a parallel copy (every destination takes the value
// its source had before any of the copies, as a phi's arguments do on an
// edge) into moves that are correct one after another. Destinations must be
// distinct. newTemp gives a register that is no copy's source or
// destination; it is called at most once, and only if the copies hold a
// cycle (the swap a, b = b, a), which no order of plain moves can do
// without one.
//
// A move is safe to emit once no copy still to be done reads its
// destination. When none is safe, what is left is disjoint cycles (every
// register is the destination of at most one copy, so a register that is
// read and written has exactly one writer, and a chain of such registers
// can only close on itself); saving one destination of a cycle in the
// temporary and letting its reader read the temporary opens the cycle into
// a chain, and the chain then empties before the next cycle is touched, so
// one temporary serves them all.
func sequentialize[R comparable](copies []pcopy[R], newTemp func() R) []pcopy[R] {
	var pending []pcopy[R]
	for _, c := range copies {
		if c.dst != c.src {
			pending = append(pending, c)
		}
	}
	read := func(r R) bool {
		for _, c := range pending {
			if c.src == r {
				return true
			}
		}
		return false
	}
	var (
		out     []pcopy[R]
		tmp     R
		haveTmp bool
	)
	for len(pending) > 0 {
		ready := -1
		for i, c := range pending {
			if !read(c.dst) {
				ready = i
				break
			}
		}
		if ready >= 0 {
			out = append(out, pending[ready])
			pending = append(pending[:ready], pending[ready+1:]...)
			continue
		}
		if !haveTmp {
			tmp, haveTmp = newTemp(), true
		}
		d := pending[0].dst
		out = append(out, pcopy[R]{dst: tmp, src: d})
		for i := range pending {
			if pending[i].src == d {
				pending[i].src = tmp
			}
		}
	}
	return out
}
