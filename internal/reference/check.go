package reference

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/goamp/goamp/amp"
)

// Checking a product in O(n^2): how CheckMatMul and MatMulChecker work, what
// they catch and what they miss, and why a correct result always passes.
//
// MatMulErrors computes every element of alpha*op(A)*op(B) + beta*C0, which
// costs m*n*k: minutes at n = 4096, hours at 8192. CheckMatMul and
// MatMulChecker instead compare blocked random projections of C with those
// of the product, and whole rows and columns element by element. Making the
// references reads A and B a few times and spends a budget of about 2^31
// multiply-adds (refBudget: 1.3 s on 2 cores at n = 8192); checking a result
// then costs a few passes over C.
//
// Notation: R = alpha*op(A)*op(B) + beta*C0 exactly (real arithmetic on the
// values of type T), M = |alpha|*|op(A)|*|op(B)| + |beta|*|C0| (elementwise
// magnitudes: the sum of the magnitudes of each element's terms, what
// MatMulBound computes), tau = Tolerance[T](k). A result C is correct when
// |C_ij - R_ij| <= tau*M_ij for every element: the test MatMulErrors applies.
// u = 2^-53 is float64's unit roundoff, gamma_j = j*u/(1-j*u).
//
// # Blocked random projections (Freivalds' test, in blocks)
//
// For random x (length n), (C*x)_i - (R*x)_i = sum_j (C_ij - R_ij)*x_j, so a
// correct C has |(C*x)_i - (R*x)_i| <= tau*(M*|x|)_i. Split the columns into
// nb contiguous blocks J_1, ..., J_nb of w = n/nb (or one more) columns, and
// let X be the n x nb matrix whose column q is x on J_q and 0 elsewhere:
// (C*X)_iq sums row i of C over block q alone, and for a correct C
//
//	|(C*X)_iq - (R*X)_iq| <= tau*(M*|X|)_iq = tau*sum_{j in J_q} M_ij*|x_j|.
//
// The check computes, in float64, g = C*X (one pass over C, whatever nb),
// p = alpha*(op(A)*(op(B)*X)) + beta*(C0*X) and the bound b =
// |alpha|*(|op(A)|*(|op(B)|*|X|)) + |beta|*(|C0|*|X|). op(B)*X costs k*n (each
// element of B falls in one block) and C0*X m*n, but op(A) times the k x nb
// matrix op(B)*X costs nb*m*k: that is what the budget buys. Likewise on the
// left, rows split into blocks of h = m/nb' rows, Y^T*C (nb' x n) against
// ((Y^T*op(A))*op(B) + beta*Y^T*C0), at nb'*k*n. Each side gets half the
// budget: nb = min(n, 2^30/(m*k)) and nb' = min(m, 2^30/(n*k)), at least 1,
// and small enough that the references kept stay within 2^22 entries
// (blockCount): 16 blocks of 512 at m = n = k = 8192, 64 of 64 at 4096, 16
// of 64 at m = n = 1024, k = 65536. Where the whole product fits in the
// budget (m*n*k <= 2^31, and n*max(m, k) <= 2^22), nb = n and x = 1: C*X is
// C itself, p the whole product, and every element is compared; the left
// side then adds nothing and is left out. x and y are uniform in [-1, 1).
// One block (nb = 1) is the plain projection C*x; the error analysis below
// is that of a projection, applied to each column of X.
//
// What they catch. An error E = C - R shows in element (i, q) of C*X as
// sum_{j in J_q} E_ij*x_j against an allowance of about tau*M*w/2 (M a
// typical M_ij of the block; E|x_j| = 1/2): the summed tolerance of the
// block's w elements, not of the row's n. With x random, that sum has a
// standard deviation of |E_{i,J_q}|/sqrt(3) (the 2-norm of the row's errors
// in the block), whatever the signs of the errors, and hides within the
// allowance with a probability of about 0.7*tau*M*w/|E_{i,J_q}| when that is
// below 1. So:
//
//   - A wrong b x b tile whose elements are off by e is seen by b rows of
//     C*X and b columns of Y^T*C (a tile across a block boundary by more,
//     each with part of it), each with a chance of about
//     c = 0.7*tau*M*w/(e*sqrt(b)) of hiding (when below 1), all of them
//     together about c^(2b): a tile of 8x8 or more is caught almost surely
//     once e*sqrt(b) exceeds about tau*M*w, that is tau*M*n/nb, and often
//     below that; smaller tiles need larger errors. A zeroed tile of a
//     random float32 product has e of about 1/(12*k*2^-24) tolerances
//     (|R_ij| near sqrt(k)/3 against M_ij near k/4): 170 at k = 8192 (up
//     to 600 for the largest of a tile, 17 to 270 for one element drawn
//     at random). Measured at m = n = k = 8192 (10 random seeds and
//     interior positions each): a zeroed 128x128, 32x32 or 8x8 tile caught
//     10 times of 10, 4x4 8 times, 2x2 3 times, a single element never
//     (but where a line checked whole crosses it). With one block, as the
//     check was before, all of them 0 times of 10, and at m = n = 1024,
//     k = 65536 a zeroed 32x32 tile 0 of 10 (10 of 10 with blocks).
//   - One wrong element, off by e, is caught by its block only when e*|x_j|
//     passes the block's allowance: never when e is below about tau*M*w/2
//     (256 tolerances at 8192 cubed; all of them where the whole product
//     fits), with probability 1 - tau*M*w/(2e) above. The left projection
//     gives it a second chance, the lines checked whole a third where they
//     cross it (blocked kernels go wrong at edges, where the first and
//     last rows and columns are checked whole).
//   - An error spread over many elements (a wrong scale, alpha or beta
//     ignored, a transpose, a lost k term, a NaN anywhere) moves many
//     blocks, each by its 2-norm over the block, far past their
//     allowances.
//
// What they miss is what stays within the allowances: errors of a few
// elements each below about w/2 tolerances (the block's), with a
// probability that falls as the errors grow. The check is a strong test of
// a kernel, not a proof that every element is right; only a budget that
// covers the whole product (nb = n) makes it one.
//
// # Whole rows and columns
//
// The first, the last and one random row, and likewise columns (every row
// when m <= 8, every column when n <= 8), are compared element by element
// with their float64 references, each held to tau*M_ij as MatMulErrors does.
// Blocked kernels go wrong at edges, where blocks are partial; there one bad
// element is caught.
//
// # The float64 arithmetic of the check, and why a correct C always passes
//
// The references are computed in float64, which rounds. A plain float64 sum
// of K terms is off by up to gamma_K times the sum of their magnitudes: for
// K = 8192 that is 8192u, more than tau itself for float64 results
// (16*sqrt(8194)*u, about 1448u). So every sum here is computed in blocks of
// L = 16 terms summed plainly (error at most gamma_L of the block's
// magnitudes, in any order of the block), and the block sums are added to a
// pair (hi, lo) with Knuth's TwoSum, which is exact: hi + lo, rounded, is
// returned. Only the plain sum of the TwoSum errors into lo rounds, and those
// errors total at most gamma_N times the magnitudes, N the number of block
// sums and parts (Ogita, Rump and Oishi's Sum2, which holds for any order of
// the TwoSums). So a sum of K products is off by at most
//
//	sigma_K = gamma_min(L,K) + (u + 2*gamma_N^2)*(1 + gamma_L),  N = K + 16,
//
// times the sum of the magnitudes of its terms: about 18u, whatever K. A
// block's sum (over J_q, or over a block of rows) has fewer terms than the
// line, folds its partial block of L into its pair where the block ends,
// and takes at most one TwoSum more from each of the at most 16 parts that
// a pass splits a matrix into: its error is within sigma_K of the whole
// line's K, as sigma grows with K.
//
// Right projection, element (i, q), with x_q = column q of X: op(B)*x_q is
// off by sigma_n*|op(B)|*|x_q|; op(A) times it adds
// sigma_k*|op(A)|*|op(B)*x_q|, at most sigma_k*(1+sigma_n)*|op(A)|*|op(B)|*|x_q|;
// alpha*, beta*, beta*C0*x_q (off by sigma_n) and the last + round once each.
// So |p - R*x_q| <= rho*M*|x_q| with rho = (1+sigma_n)(1+sigma_k)(1+u)^2 - 1.
// The C side: |g - C*x_q| <= sigma_n*|C|*|x_q| <= sigma_n*(1+tau)*M*|x_q|, as
// |C| <= |R| + tau*M <= (1+tau)*M for a correct C. Hence for a correct C
//
//	|g - p| <= (tau + s)*M*|x_q|,  s = sigma_n*(1+tau) + rho.
//
// The computed bound b holds sums and products of non-negative numbers, so
// each rounding only shrinks it by a factor of at least 1-u; a term of it
// passes through at most D = n+k+34 roundings (a sum of K terms takes at
// most K+16: K in its part, up to 16 joining the parts; then alpha* and +),
// so M*|x_q| <= b/(1-D*u) <= b*(1+2*D*u). The allowance is computed as
// (tau + s)*b*f + eta with f = 1 + 4*(D+64)*u, which covers that factor and
// the fewer than 64 roundings of forming s and the allowance itself. As
// rounding is monotone, the rounded |g - p| of a correct C then never
// exceeds the rounded allowance. The left projection is the same with m for
// n (D = m+k+34, C side sigma_m); an element of a whole row or column has
// rho = (1+sigma_k)(1+u)^2 - 1, no C side (C_ij is exact in float64) and
// D = k+18.
//
// eta covers underflow, where the relative model fails: a product below
// 2^-1022 may be off by 2^-1075 absolutely (sums of such numbers are exact,
// and TwoSum stays exact). Following each such error through the chain gives
// eta = 16*2^-1075*(n+k+4)*(1 + |alpha|*(1 + k*max|op(A)|) + |beta|) for the
// right projections (m and max|op(B)| for the left; a block has fewer
// terms) and 16*2^-1075*(k+4)*(1 + |alpha| + |beta|) for elements: a few
// multiples of the smallest float64 unless the data are near 1e-300. For
// float32 data no float64 product of the check underflows.
//
// Overflow is not modelled; it is detected. The projections are used only
// when every reference and bound is finite and the bounds are below
// MaxFloat64/8, which keeps every partial sum of a correct C's projections
// finite too; when that fails (float64 data near 1e150 or more), or alpha or
// beta is infinite, rows are checked whole instead, as many as a budget
// allows (see NaN and Inf below). Whether a sum whose partial sums pass
// MaxFloat64 overflows depends on the order of its terms, for a kernel as
// for MatMul; the whole rows' references sum in blocks, not in MatMul's
// order, so there the two may differ.
//
// For float32 results all this rounding (s at most about 60u, with
// u = 2^-53) is far below tau (at least 8*2^-24). For float64 results s is
// about 4% of tau at k = 8192 and 7% at k = 2000, but at k of a few it is
// larger than tau (38u against 12u at k = 1, n = 200): there the
// projections catch only errors of several times the tolerance, and the
// whole rows and columns, whose slack rho is sigma_k + 2u (4u at k = 1),
// the rest. So an error within s of the tolerance may pass, but a correct
// result never fails.
//
// # NaN and Inf
//
// The rules are MaxErr's: an element whose reference is NaN must be NaN, one
// whose reference is +Inf or -Inf must be that infinity, and matching
// non-finite values are no error; NaN or Inf in C where the reference is
// finite is an error of +Inf.
//
// A NaN in row i of op(A) makes row i of the product NaN throughout (a sum
// with a NaN term is NaN, whatever the others), and a NaN in column j of
// op(B) column j; NaN alpha or beta makes every element NaN. Those lines
// are checked element by element, each element of C required to be NaN, at
// m*n at most: complete, and cheap.
//
// An infinity in row i of op(A) or column j of op(B), or a NaN or infinity
// in row i of C0 (with beta != 0), leaves a line whose elements are finite,
// infinite or NaN as the other operand has it. Such rows and columns are
// left out of the projections (their entries read as 0 on both sides) and
// checked whole, element by element against exact float64 references made
// with the others: k*n multiply-adds a row, k*m a column. All of them are
// when that fits in a second budget of 2^31 multiply-adds (and 2^22 stored
// references); past it, the first and the last of them, rows and columns,
// and others drawn at random while the budget lasts (pickLines), and the
// result says the check was partial (MatMulCheck.Partial, and Where): the
// others go unchecked, rather than the check costing a full product. The
// rows checked whole in place of the projections, when alpha or beta is
// infinite or the projections would overflow, are chosen the same way.
// So NaN and Inf in the operands never cause a false failure, and a NaN or
// Inf in C elsewhere makes a projection non-finite, which fails. As in BLAS
// and MatMul, C0 is not read when beta == 0, nor A and B when alpha == 0.
//
// # int32
//
// int32 arithmetic wraps modulo 2^32, where addition and multiplication are
// exact and associative, so the projections are exact too: two right
// vectors and one left, unblocked (an exact test needs no blocks), uniform
// over all int32 values, wrapping sums, and equality required; whole rows
// and columns are compared exactly, as MatMulErrors does. An error in a row
// of C that is odd in some element passes that row's projection with
// probability 2^-32; one divisible by 2^j at most, with probability 2^(j-32)
// (1/2 for an error of 2^31, which flips the top bit alone).

// MatMulCheck is the result of CheckMatMul or MatMulChecker.Check: the worst
// error found and where.
type MatMulCheck struct {
	// Worst is the largest error found, relative to the magnitude of the
	// terms (M, or M*|X| for a projection), as MatMulErrors measures it
	// against the float64 reference; for a projection it is the error of
	// the projected element, which for a correct result is within the same
	// tolerance. An error past Tolerance by no more than the check's own
	// float64 rounding could account for counts as Tolerance, so that a
	// result passes exactly when Worst <= Tolerance. +Inf for NaN or Inf
	// where the reference differs, and for any int32 difference.
	Worst float64
	// Tolerance is Tolerance[T](k), what Worst is held to.
	Tolerance float64
	// Where says where Worst was found: "element (i, j) of row i, checked
	// whole", "row i of the projection C*x over columns j0 to j1 (block 3
	// of 16)", and so on, followed, when Partial, by what went unchecked.
	// Empty when C has no elements.
	Where string
	// Row and Col are the element's indices in C, Col -1 for a right
	// projection (which sums part of row Row, the columns Where names) and
	// Row -1 for a left one (column Col); -1 both when C has no elements.
	Row, Col int
	// Got and Want are the values compared there: C's element and its
	// reference, or the projection of C and the projection of the product.
	Got, Want float64
	// Partial is true when part of C went unchecked. Rows and columns
	// that NaN or Inf in their operands keep out of the projections (or
	// every row, when alpha or beta is infinite or the operands are too
	// large for the projections) are checked whole, at k*n (k*m)
	// multiply-adds a line; past a budget of about 2^31, only the first,
	// the last and a random sample of them are, and a pass says nothing of
	// the others. Where then ends with how many were checked. (Lines whose
	// reference is NaN throughout, from a NaN in op(A) or op(B), are always
	// checked, at no such cost.)
	Partial bool
}

// OK reports whether the result passed: Worst <= Tolerance.
func (c MatMulCheck) OK() bool { return c.Worst <= c.Tolerance }

// Err returns nil when the result passed, else an error saying by how much
// and where it failed.
func (c MatMulCheck) Err() error {
	if c.OK() {
		return nil
	}
	return fmt.Errorf("error %.3g relative to the magnitude of the terms, past the tolerance %.3g, at %s: got %g, want %g",
		c.Worst, c.Tolerance, c.Where, c.Got, c.Want)
}

// MatMulChecker holds the references for checking results of one product,
// alpha*op(A)*op(B) + beta*C0, computed once: many results of the same
// product (a benchmark's repetitions) are each checked at the cost of a few
// passes over C. Check may be called from several goroutines at once.
type MatMulChecker[T amp.Element] struct {
	check func(c []T) MatMulCheck
}

// NewMatMulChecker computes the references for checking C (m x n) against
// alpha*op(A)*op(B) + beta*C0, row-major, with op(A) m x k and op(B) k x n:
// A is m x k, or k x m when transA (op(A) = A^T), and likewise B is k x n, or
// n x k when transB. C0 (m x n) is read only when beta != 0 (as in BLAS) and
// only here, so C may be computed over it; c0 may be nil when beta == 0. The
// random vectors and lines are drawn from r. It panics if a slice is shorter
// than its matrix. As in BLAS and MatMul, A and B are not read when
// alpha == 0.
//
// It reads A and B a few times, O(m*k + k*n + m*n), and spends a budget of
// about 2^31 multiply-adds on the blocked projections' references (or
// m*n*k, the whole product, when that is less): about 1.3 s on 2 cores
// at m = n = k = 8192 (see the derivation above). Rows and columns whose
// operands hold NaN or Inf are checked whole from references made here too,
// within a second such budget (see MatMulCheck.Partial). Every reference is
// made here, so Check costs a few passes over C, O(m*n), and the checker
// keeps none of a, b and c0: they may change once it returns. The
// references it keeps take O(m + n) memory for the sampled lines, and at
// most 64 MiB (2^22 pairs of float64) for each side's projection and for
// the lines checked for NaN or Inf.
func NewMatMulChecker[T amp.Element](transA, transB bool, m, n, k int, alpha T, a, b []T, beta T, c0 []T, r *rand.Rand) *MatMulChecker[T] {
	return newMatMulChecker(transA, transB, m, n, k, alpha, a, b, beta, c0, r, refBudget)
}

// NewMatMulCheckerTol is NewMatMulChecker with tolerance tol in place of
// Tolerance[T](k): for a floating-point product computed in a reduced
// precision, whose tolerance ToleranceIn gives.
func NewMatMulCheckerTol[T amp.Element](transA, transB bool, m, n, k int, alpha T, a, b []T, beta T, c0 []T, r *rand.Rand, tol float64) *MatMulChecker[T] {
	p := newProblem(transA, transB, m, n, k, alpha, a, b, beta, c0)
	p.tol = tol
	return newMatMulCheckerOf(p, r, refBudget)
}

// newMatMulChecker is NewMatMulChecker with the budget of multiply-adds for
// the blocked projections, and for the lines checked whole for NaN or Inf,
// as a parameter (tests scale it down with the sizes).
func newMatMulChecker[T amp.Element](transA, transB bool, m, n, k int, alpha T, a, b []T, beta T, c0 []T, r *rand.Rand, budget float64) *MatMulChecker[T] {
	return newMatMulCheckerOf(newProblem(transA, transB, m, n, k, alpha, a, b, beta, c0), r, budget)
}

func newMatMulCheckerOf[T amp.Element](p problem[T], r *rand.Rand, budget float64) *MatMulChecker[T] {
	if UnitRoundoff[T]() == 0 {
		return &MatMulChecker[T]{check: newIntChecker(p, r).check}
	}
	return &MatMulChecker[T]{check: newFloatChecker(p, r, budget).check}
}

// newProblem checks the arguments of NewMatMulChecker and returns the
// product they describe.
func newProblem[T amp.Element](transA, transB bool, m, n, k int, alpha T, a, b []T, beta T, c0 []T) problem[T] {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("reference: negative dimension in %dx%dx%d", m, n, k))
	}
	if len(a) < m*k || len(b) < k*n || (beta != 0 && len(c0) < m*n) {
		panic(fmt.Sprintf("reference: operands of %d, %d and %d elements for a %dx%dx%d product", len(a), len(b), len(c0), m, n, k))
	}
	p := problem[T]{tA: transA, tB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a[:m*k], b: b[:k*n], tol: Tolerance[T](k)}
	if alpha == 0 {
		// As in BLAS and MatMul, A and B are then not read: the product
		// is beta*C0 whatever they hold. The tolerance stays k's.
		p.k, p.a, p.b = 0, nil, nil
	}
	if beta != 0 {
		p.c0 = c0[:m*n]
	}
	return p
}

// Check checks c, the m x n row-major result, against the product. It panics
// if c is shorter than m*n.
func (ch *MatMulChecker[T]) Check(c []T) MatMulCheck { return ch.check(c) }

// CheckMatMul checks C (m x n) against alpha*A*B + beta*C0, row-major, A m x
// k, B k x n, C0 m x n (read only when beta != 0; c0 may then be nil), in
// time O(m*k + k*n + m*n) plus a budget of about 2^31 multiply-adds (see
// NewMatMulChecker), with random vectors and lines drawn from r: blocked
// random projections (Freivalds' test) and whole rows and columns, with a
// bound that a correct result always meets, float64 rounding of the check
// included (the comment at the top of check.go derives it, and says what
// it catches and what it may miss). The result says
// how far C strays and where; res.Err() is nil when it passes. See
// MatMulChecker for transposed operands and for many results of one product.
func CheckMatMul[T amp.Element](m, n, k int, alpha T, a, b []T, beta T, c0, c []T, r *rand.Rand) MatMulCheck {
	return NewMatMulChecker(false, false, m, n, k, alpha, a, b, beta, c0, r).Check(c)
}

// problem is the product a checker checks.
type problem[T amp.Element] struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta T
	a, b, c0    []T     // c0 nil when beta == 0
	tol         float64 // Tolerance[T] of the caller's k
}

// aShape and bShape are A's and B's stored shapes (rows, columns).
func (p *problem[T]) aShape() (int, int) {
	if p.tA {
		return p.k, p.m
	}
	return p.m, p.k
}

func (p *problem[T]) bShape() (int, int) {
	if p.tB {
		return p.n, p.k
	}
	return p.k, p.n
}

// opARow returns row i of op(A) and opBCol column j of op(B), in float64.
func (p *problem[T]) opARow(i int) []float64 { return line(p.tA, p.m, p.k, p.a, i) }
func (p *problem[T]) opBCol(j int) []float64 { return line(!p.tB, p.n, p.k, p.b, j) }

// line returns row i of op(X), op(X) = X (r x c) or, when trans, X^T (X
// then c x r), in float64.
func line[T amp.Element](trans bool, r, c int, x []T, i int) []float64 {
	out := make([]float64, c)
	if trans {
		for q := range c {
			out[q] = float64(x[q*r+i])
		}
		return out
	}
	for q, v := range x[i*c : (i+1)*c] {
		out[q] = float64(v)
	}
	return out
}

// allLines is the size up to which every row (column) is checked whole:
// k*n work a row is then no more than the projections cost.
const allLines = 8

// sampleLines picks the rows (or columns) of n to check whole: all when few,
// else the first, the last and one at random.
func sampleLines(n int, r *rand.Rand) []int {
	if n <= allLines {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	return []int{0, 1 + r.IntN(n-2), n - 1}
}

// siteKind says which test an error was found in.
type siteKind int

const (
	siteNone  siteKind = iota
	siteRight          // element row of C*x (for floats, of a block of C*X)
	siteLeft           // element col of y^T*C (for floats, of a block of Y^T*C)
	siteElem           // element (row, col), compared with the whole product
	siteRow            // element (row, col) of a row checked whole
	siteCol            // element (row, col) of a column checked whole
)

// site is where an error was found: for int32's projections, vector vec of
// nVec; for float blocks, block blk of nb, lines lo to hi-1.
type site struct {
	kind      siteKind
	vec, nVec int
	blk, nb   int
	lo, hi    int
	row, col  int
	why       string // why a line is checked whole, when not merely sampled
}

func (s site) String() string {
	why := ""
	if s.why != "" {
		why = " (" + s.why + ")"
	}
	switch {
	case s.kind == siteRight && s.nb > 0:
		return fmt.Sprintf("row %d of the projection C*x over columns %d to %d (block %d of %d)", s.row, s.lo, s.hi-1, s.blk+1, s.nb)
	case s.kind == siteLeft && s.nb > 0:
		return fmt.Sprintf("column %d of the projection y^T*C over rows %d to %d (block %d of %d)", s.col, s.lo, s.hi-1, s.blk+1, s.nb)
	case s.kind == siteRight:
		return fmt.Sprintf("row %d of the projection C*x (vector %d of %d)", s.row, s.vec+1, s.nVec)
	case s.kind == siteLeft:
		return fmt.Sprintf("column %d of the projection y^T*C (vector %d of %d)", s.col, s.vec+1, s.nVec)
	case s.kind == siteElem:
		return fmt.Sprintf("element (%d, %d), compared with the whole product", s.row, s.col)
	case s.kind == siteRow:
		return fmt.Sprintf("element (%d, %d) of row %d, checked whole%s", s.row, s.col, s.row, why)
	case s.kind == siteCol:
		return fmt.Sprintf("element (%d, %d) of column %d, checked whole%s", s.row, s.col, s.col, why)
	}
	return ""
}

// tracker keeps the worst error seen; on a tie the first seen stays, so that
// the report does not depend on timing.
type tracker struct {
	worst     float64
	at        site
	got, want float64
}

func (t *tracker) see(e float64, at site, got, want float64) {
	if t.worse(e) {
		t.worst, t.at, t.got, t.want = e, at, got, want
	}
}

// worse reports whether an error of e would be kept: a cheap test before
// see, for loops over every element.
func (t *tracker) worse(e float64) bool { return e > t.worst || t.at.kind == siteNone }

func (t *tracker) result(tol float64) MatMulCheck {
	res := MatMulCheck{Worst: t.worst, Tolerance: tol, Row: -1, Col: -1, Got: t.got, Want: t.want}
	if t.at.kind != siteNone {
		res.Where = t.at.String()
		res.Row, res.Col = t.at.row, t.at.col
		switch t.at.kind {
		case siteRight:
			res.Col = -1
		case siteLeft:
			res.Row = -1
		}
	}
	return res
}

// finite reports whether f is neither NaN nor infinite.
func finite(f float64) bool { return f-f == 0 }

// inf is +Inf, the error of a mismatch that no tolerance covers.
var inf = math.Inf(1)
