package ptx

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// runCopies applies moves one after another to registers that start out
// holding their own number, and returns the final state.
func runCopies(moves []pcopy[int], nregs int) []int {
	regs := make([]int, nregs)
	for i := range regs {
		regs[i] = i
	}
	for _, m := range moves {
		regs[m.dst] = regs[m.src]
	}
	return regs
}

// checkCopies sequentializes copies over registers 0..n-1 (the temporary
// is n) and checks the moves against the parallel meaning: every
// destination ends with its source's first value, every other register but
// the temporary keeps its own, and the temporary is asked for only when
// the copies hold a cycle.
func checkCopies(t *testing.T, copies []pcopy[int], n int) {
	t.Helper()
	temps := 0
	moves := sequentialize(copies, func() int { temps++; return n })
	if temps > 1 {
		t.Fatalf("%v: %d temporaries", copies, temps)
	}
	got := runCopies(moves, n+1)
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	for _, c := range copies {
		want[c.dst] = c.src
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v: moves %v leave r%d = %d, want %d", copies, moves, i, got[i], want[i])
		}
	}
	if hasCycle(copies) != (temps == 1) {
		t.Fatalf("%v: %d temporaries, cycle %v", copies, temps, hasCycle(copies))
	}
	// No move is wasted: one per copy that changes something, plus one
	// per cycle broken.
	if limit := countChanging(copies) + cycles(copies); len(moves) > limit {
		t.Fatalf("%v: %d moves, want at most %d: %v", copies, len(moves), limit, moves)
	}
}

func countChanging(copies []pcopy[int]) int {
	n := 0
	for _, c := range copies {
		if c.dst != c.src {
			n++
		}
	}
	return n
}

// cycles counts the cycles of length two or more among the copies: each
// register has at most one writer, so following writers back from a
// register either ends or comes round.
func cycles(copies []pcopy[int]) int {
	src := map[int]int{}
	for _, c := range copies {
		if c.dst != c.src {
			src[c.dst] = c.src
		}
	}
	seen := map[int]bool{}
	n := 0
	for _, c := range copies {
		start := c.dst
		if seen[start] {
			continue
		}
		var path []int
		r, ok := start, true
		onPath := map[int]bool{}
		for ok && !seen[r] && !onPath[r] {
			onPath[r] = true
			path = append(path, r)
			r, ok = src[r]
		}
		if ok && onPath[r] {
			n++
		}
		for _, p := range path {
			seen[p] = true
		}
	}
	return n
}

func hasCycle(copies []pcopy[int]) bool { return cycles(copies) > 0 }

func TestSequentializeCases(t *testing.T) {
	cases := []struct {
		name   string
		copies []pcopy[int]
	}{
		{"empty", nil},
		{"self", []pcopy[int]{{0, 0}}},
		{"one", []pcopy[int]{{0, 1}}},
		{"swap", []pcopy[int]{{0, 1}, {1, 0}}},
		{"chain", []pcopy[int]{{0, 1}, {1, 2}, {2, 3}}},
		{"chain reversed", []pcopy[int]{{2, 3}, {1, 2}, {0, 1}}},
		{"rotate three", []pcopy[int]{{0, 1}, {1, 2}, {2, 0}}},
		{"fan-out", []pcopy[int]{{0, 3}, {1, 3}, {2, 3}}},
		{"fan-out of a cycle member", []pcopy[int]{{0, 1}, {1, 0}, {2, 0}, {3, 1}}},
		{"two cycles", []pcopy[int]{{0, 1}, {1, 0}, {2, 3}, {3, 4}, {4, 2}}},
		{"fib", []pcopy[int]{{0, 1}, {1, 2}}}, // x, y = y, x+y with x+y in r2
		{"cycle with tail", []pcopy[int]{{0, 1}, {1, 0}, {2, 1}, {5, 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkCopies(t, c.copies, 6) })
	}
}

// TestSequentializeRandom checks permutations (every register a
// destination: cycles only), and random maps with fan-out, self copies and
// chains.
func TestSequentializeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 3000; iter++ {
		n := 1 + rng.IntN(9)
		var copies []pcopy[int]
		if iter%2 == 0 {
			for d, s := range rng.Perm(n) {
				copies = append(copies, pcopy[int]{d, s})
			}
		} else {
			for _, d := range rng.Perm(n)[:rng.IntN(n+1)] {
				copies = append(copies, pcopy[int]{d, rng.IntN(n)})
			}
		}
		t.Run(fmt.Sprint(iter), func(t *testing.T) { checkCopies(t, copies, n) })
	}
}
