// Package opt simplifies a kernel's IR before the back end sees it, so
// that the checks Go's semantics ask for cost little where they cannot
// fail:
//
//   - common subexpressions: a computation repeated where one dominates it
//     becomes that one, so that a kernel's own test and the view check
//     it guards compare the same value;
//   - ranges: an interval for every integer value, from constants, the
//     hardware registers' limits (exact when the kernel's block shape is
//     fixed), parameters known not to be negative, and the conditions of
//     the branches that dominate each use; comparisons that the intervals
//     (or a dominating comparison of the same values) decide become
//     constants, which removes most bounds checks in loops over tiles;
//   - the control flow: branches on constants become jumps, unreachable
//     blocks go, and a block that is its predecessor's only successor and
//     has no other predecessor joins it, so that loop bodies become single
//     blocks the back end's compiler can unroll;
//   - unrolling: loops with a constant trip count and a one-block body
//     (the multiply-adds over a tile) are unrolled in full, as CUDA C's
//     #pragma unroll does, so that their indices become constants;
//   - loop versioning: a loop whose index checks all hold when a test
//     made once before it holds (the loop's bound within the view's
//     extent) gets a copy without them, chosen by that test;
//   - partial unrolling: a loop with a one-block body and a trip count
//     known only at run time does four iterations a step, then the rest,
//     so that four iterations' loads are in flight at once;
//   - if-conversion: small branches that only compute and load become
//     selects, so that the conditional tile loads of the textbook kernels
//     compile to predicated loads as CUDA C's ?: does;
//   - local words: the fault word is kept in registers within a block,
//     and becomes a constant where no check that could set it is left;
//   - strength reduction: a view element's address in a loop, base +
//     (i*stride + j)*size, becomes a pointer stepped once an iteration,
//     as nvcc makes of CUDA C's loops over arrays;
//   - address splitting: an access's address becomes a base shared by
//     the block's accesses plus a constant, which the back end folds into
//     the instruction (tile_static element [row*tile + i] of an unrolled
//     loop is one register and an offset);
//   - select chains: select(c1, select(c2, x, y), y) is select(c1 && c2,
//     x, y), so that a load under three conditions picks its address once;
//   - narrowing: a 64-bit integer computation whose result is truncated to
//     32 bits is done in 32 bits (truncation commutes with +, -, *, and the
//     bitwise operations), which turns 64-bit index arithmetic into the
//     32-bit arithmetic a GPU does in one instruction.
//
// Every rewrite keeps the value each thread computes; none relies on
// undefined behaviour.
package opt

import (
	"github.com/goamp/goamp/internal/kernel/ir"
)

// Optimize rewrites f in place.
func Optimize(f *ir.Func) {
	for range 3 {
		eliminateCommonSubexpressions(f)
		foldCompares(f)
		simplifyCFG(f)
		for unroll(f) {
			foldCompares(f)
			simplifyCFG(f)
		}
		if ifConvert(f) {
			simplifySelects(f)
			simplifyCFG(f)
		}
		narrow(f)
		forwardLocals(f)
		simplifySelects(f)
		foldBools(f)
		deadCode(f)
	}
	versionLoops(f)
	unrollPartly(f)
	foldCompares(f)
	simplifyCFG(f)
	narrow(f)
	forwardLocals(f)
	foldBools(f)
	deadCode(f)
	eliminateCommonSubexpressions(f)
	reduceStrength(f)
	if narrowByRange(f) {
		narrow(f)
		deadCode(f)
	}
	splitAddresses(f)
}
