package linalg

import (
	"fmt"
	"testing"
)

// TestOverlapOrder: every panel of A and block of B goes up once, B's first
// block and A's first panel first, and each piece of C is completed by
// exactly one upload, after both of its operands.
func TestOverlapOrder(t *testing.T) {
	for _, kind := range []uploadOrder{blocksFirst, interleaved, panelsFirst} {
		for panels := 1; panels <= 5; panels++ {
			for blocks := 1; blocks <= 4; blocks++ {
				name := fmt.Sprintf("order=%d/%dx%d", kind, panels, blocks)
				order := overlapOrder(panels, blocks, kind)
				if len(order) != panels+blocks {
					t.Fatalf("%s: %d uploads, want %d", name, len(order), panels+blocks)
				}
				if order[0].panel || order[0].index != 0 || !order[1].panel || order[1].index != 0 {
					t.Fatalf("%s: starts %+v %+v, want B's block 0 then A's panel 0", name, order[0], order[1])
				}
				upA, upB := 0, 0
				done := make(map[[2]int]int)
				for _, u := range order {
					if u.panel {
						if u.index != upA || u.partners != upB {
							t.Fatalf("%s: %+v after %d panels and %d blocks", name, u, upA, upB)
						}
						for j := range u.partners {
							done[[2]int{u.index, j}]++
						}
						upA++
					} else {
						if u.index != upB || u.partners != upA {
							t.Fatalf("%s: %+v after %d panels and %d blocks", name, u, upA, upB)
						}
						for i := range u.partners {
							done[[2]int{i, u.index}]++
						}
						upB++
					}
				}
				for i := range panels {
					for j := range blocks {
						if done[[2]int{i, j}] != 1 {
							t.Fatalf("%s: piece (%d, %d) completed %d times", name, i, j, done[[2]int{i, j}])
						}
					}
				}
				switch {
				case kind == blocksFirst && blocks > 1 && order[2].panel:
					t.Fatalf("%s: third upload %+v, want B's block 1 (B first)", name, order[2])
				case kind == interleaved && panels > 1 && blocks > 1 && (order[2].panel || !order[3].panel):
					t.Fatalf("%s: uploads 2 and 3 %+v %+v, want a block then a panel", name, order[2], order[3])
				case kind == panelsFirst && panels > 1 && !order[2].panel:
					t.Fatalf("%s: third upload %+v, want A's panel 1 (A first)", name, order[2])
				case kind == panelsFirst && blocks > 1 && order[panels+1].panel:
					t.Fatalf("%s: upload %d %+v, want B's block 1 after every panel", name, panels+1, order[panels+1])
				}
			}
		}
	}
}
