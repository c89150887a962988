// Package conformance is the test suite every matrix multiply and dot
// product implementation in goamp must pass, whatever it runs on: the
// analogue of gonum's testblas. It compares against a float64 reference
// (for int32, exact wrapping arithmetic) on fresh random inputs each run
// (the seed is printed on failure, and GOAMP_TEST_SEED replays it, one
// subtest alone too), over shapes that catch edge handling: 1x1x1,
// 1xKx1, K=1, empty, primes, sizes no tile divides, and a few hundred. The
// output is poisoned first, so an element a kernel forgets to write fails;
// NaN and Inf must propagate as in the reference; as in BLAS, with beta = 0
// C is not read, so NaN in C must not leak, and with alpha = 0 neither A nor
// B is read, so C becomes beta*C even when A and B hold NaN and Inf.
//
// Use it from a test:
//
//	func TestMyMatMul(t *testing.T) {
//		conformance.TestMatMul[float32](t, myMatMul)
//	}
package conformance

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/reference"
)

// MatMulFunc computes C = alpha*A*B + beta*C for rank-2 views, as
// linalg.MatMul does.
type MatMulFunc[T amp.Element] func(alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T]) error

// DotFunc returns the dot product of two rank-1 views, as linalg.Dot does.
type DotFunc[T amp.Element] func(x, y *amp.ArrayView[T]) (T, error)

// SeedEnv is the environment variable that fixes the random seed, to replay
// a failure.
const SeedEnv = "GOAMP_TEST_SEED"

// Shape is one M x N x K matrix multiply case.
type Shape struct{ M, N, K int }

// MatMulShapes are the shapes TestMatMul runs. Large is false when testing.Short.
func MatMulShapes(large bool) []Shape {
	s := []Shape{
		{1, 1, 1}, {1, 1, 7}, {1, 1, 64}, {5, 7, 1}, {1, 9, 4}, {9, 1, 4},
		{0, 4, 3}, {4, 0, 3}, {4, 3, 0},
		{2, 3, 2}, {3, 3, 3}, {4, 4, 4}, {16, 16, 16}, {17, 15, 33},
		{37, 53, 41}, {31, 1, 29}, {1, 61, 59}, {33, 33, 33}, {65, 31, 17},
	}
	if large {
		s = append(s, Shape{127, 131, 137}, Shape{211, 97, 256}, Shape{300, 257, 64})
	}
	return s
}

// DotLengths are the vector lengths TestDot runs.
func DotLengths(large bool) []int {
	l := []int{0, 1, 2, 3, 7, 31, 32, 33, 255, 256, 257, 1000, 1031}
	if large {
		l = append(l, 65537, 300007)
	}
	return l
}

// runSeed returns the seed of this run: SeedEnv's value, or the clock.
func runSeed(t testing.TB) uint64 {
	if v := os.Getenv(SeedEnv); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", SeedEnv, v, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// runCase runs one subtest's check on a generator derived from the run's
// seed and the subtest's name, so that -run can replay a single case with
// SeedEnv. A failure, or a panic in the code under test, reports the seed.
func runCase(t *testing.T, seed uint64, check func(r *rand.Rand) error) {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panicked: %v", p)
			}
		}()
		return check(r)
	}()
	if err != nil {
		t.Fatalf("seed %d (replay with %s=%d): %v", seed, SeedEnv, seed, err)
	}
}

// poison returns the value an unwritten output element is left holding.
func poison[T amp.Element]() T {
	var z T
	switch p := any(&z).(type) {
	case *float32:
		*p = float32(math.NaN())
	case *float64:
		*p = math.NaN()
	case *int32:
		*p = -0x21524111 // 0xdeadbeef
	}
	return z
}

// scalarCase is one choice of alpha and beta.
type scalarCase struct{ alpha, beta float64 }

var scalarCases = []scalarCase{{1, 0}, {2, 0}, {-1.5, 0.5}, {1, 1}, {0, 2}, {3, -1}}

// largeScalarCases are the cases run on large shapes (over largeWork
// multiply-adds). A kernel applies alpha and beta once an element, after
// the sum, so the small shapes test every case, and what size adds (blocks,
// tiles, threads) does not depend on them; two cases, one reading C, keep
// the suite quick under the race detector.
var largeScalarCases = []scalarCase{{1, 0}, {-1.5, 0.5}}

// largeWork is the number of multiply-adds from which a shape is large.
const largeWork = 1 << 20

// TestMatMul runs mm over every shape of MatMulShapes and every alpha/beta
// case, and checks NaN, Inf and beta = 0 handling.
func TestMatMul[T amp.Element](t *testing.T, mm MatMulFunc[T]) {
	TestMatMulShapes(t, mm, MatMulShapes(!testing.Short()))
}

// TestMatMulShapes is TestMatMul over the given shapes.
func TestMatMulShapes[T amp.Element](t *testing.T, mm MatMulFunc[T], shapes []Shape) {
	testMatMulShapes(t, mm, shapes, Shape{19, 23, 17}, []Shape{{1, 1, 1}, {19, 23, 17}, {33, 1, 5}})
}

// TestMatMulMultiples is TestMatMul for a kernel that takes only products
// whose M, N and K are multiples of tile (a textbook kernel without
// boundary checks): it runs shapes that are, empty ones included, and
// checks that shapes that are not are refused with an error, not
// computed.
func TestMatMulMultiples[T amp.Element](t *testing.T, mm MatMulFunc[T], tile int) {
	u := tile
	shapes := []Shape{{u, u, u}, {2 * u, u, 3 * u}, {3 * u, 4 * u, u}, {4 * u, 2 * u, 5 * u}, {u, 2 * u, 0}, {0, u, u}}
	testMatMulShapes(t, mm, shapes, Shape{2 * u, 3 * u, u}, []Shape{{u, u, u}, {2 * u, u, 3 * u}})
	for _, sh := range []Shape{{u + 1, u, u}, {u, u - 1, u}, {u, u, 1}} {
		t.Run(fmt.Sprintf("%dx%dx%d is refused", sh.M, sh.N, sh.K), func(t *testing.T) {
			a, _ := amp.NewArrayView(amp.Extent2(sh.M, sh.K), make([]T, sh.M*sh.K))
			b, _ := amp.NewArrayView(amp.Extent2(sh.K, sh.N), make([]T, sh.K*sh.N))
			c, _ := amp.NewArrayView(amp.Extent2(sh.M, sh.N), make([]T, sh.M*sh.N))
			if err := mm(1, a, b, 0, c); err == nil {
				t.Errorf("no error")
			}
		})
	}
}

// testMatMulShapes runs shapes, then the special values on special and
// alpha = 0 on zeros.
func testMatMulShapes[T amp.Element](t *testing.T, mm MatMulFunc[T], shapes []Shape, special Shape, zeros []Shape) {
	seed := runSeed(t)
	for _, sh := range shapes {
		cases := scalarCases
		if sh.M*sh.N*sh.K > largeWork {
			cases = largeScalarCases
		}
		for _, sc := range cases {
			// With beta = 0, C starts poisoned (NaN for floats): an element
			// left unwritten, or C read when it must not be, shows.
			name := fmt.Sprintf("%dx%dx%d/alpha=%g,beta=%g", sh.M, sh.N, sh.K, sc.alpha, sc.beta)
			t.Run(name, func(t *testing.T) {
				runCase(t, seed, func(r *rand.Rand) error { return checkMatMul(r, mm, sh, sc, nil) })
			})
		}
	}
	if isFloat[T]() {
		t.Run("NaN and Inf propagate", func(t *testing.T) {
			runCase(t, seed, func(r *rand.Rand) error { return checkSpecialValues(r, mm, special) })
		})
		t.Run("alpha=0 reads neither A nor B", func(t *testing.T) {
			runCase(t, seed, func(r *rand.Rand) error { return checkAlphaZero(r, mm, zeros) })
		})
	} else {
		t.Run("int32 wraps around", func(t *testing.T) {
			runCase(t, seed, func(r *rand.Rand) error {
				return checkMatMul(r, mm, special, scalarCase{3, -1}, fillInt32[T](r))
			})
		})
	}
}

func isFloat[T amp.Element]() bool { return reference.UnitRoundoff[T]() != 0 }

// checkMatMul runs one case on fresh random operands and says how the
// result differs from the reference. edit, if not nil, changes A and B first.
func checkMatMul[T amp.Element](r *rand.Rand, mm MatMulFunc[T], sh Shape, sc scalarCase, edit func(a, b []T)) error {
	a, b := reference.RandomSlice[T](r, sh.M*sh.K), reference.RandomSlice[T](r, sh.K*sh.N)
	if edit != nil {
		edit(a, b)
	}
	c := reference.RandomSlice[T](r, sh.M*sh.N)
	if sc.beta == 0 {
		for i := range c {
			c[i] = poison[T]()
		}
	}
	alpha, beta := T(sc.alpha), T(sc.beta)
	c0 := slices.Clone(c)
	av, err := amp.NewArrayView(amp.Extent2(sh.M, sh.K), a)
	if err != nil {
		return err
	}
	bv, err := amp.NewArrayView(amp.Extent2(sh.K, sh.N), b)
	if err != nil {
		return err
	}
	cv, err := amp.NewArrayView(amp.Extent2(sh.M, sh.N), c)
	if err != nil {
		return err
	}
	if err := mm(alpha, av, bv, beta, cv); err != nil {
		return err
	}
	if err := cv.Synchronize(); err != nil {
		return fmt.Errorf("synchronize C: %w", err)
	}
	tol := reference.Tolerance[T](sh.K)
	for i, e := range reference.MatMulErrors(sh.M, sh.N, sh.K, alpha, a, b, beta, c0, c) {
		if e > tol || math.IsNaN(e) {
			return fmt.Errorf("%dx%dx%d alpha=%g beta=%g: C[%d][%d] = %v, off by %.3g relative to the magnitude of its terms (tolerance %.3g)",
				sh.M, sh.N, sh.K, sc.alpha, sc.beta, i/sh.N, i%sh.N, c[i], e, tol)
		}
	}
	return nil
}

// checkSpecialValues puts NaN and infinities into A and B (of shape sh,
// at least 11x12x6) and checks they reach exactly the elements of C the
// reference says.
func checkSpecialValues[T amp.Element](r *rand.Rand, mm MatMulFunc[T], sh Shape) error {
	return checkMatMul(r, mm, sh, scalarCase{1, 0}, func(a, b []T) {
		nan, inf := T(math.NaN()), T(math.Inf(1))
		a[3*sh.K+5] = nan  // row 3 of C becomes NaN
		b[7*sh.N+11] = inf // column 11 becomes ±Inf (NaN in row 3)
		a[10*sh.K+0] = -inf
		b[0*sh.N+4] = 0 // -Inf * 0: C[10][4] is NaN
	})
}

// checkAlphaZero fills A and B with NaN and infinities and checks that
// alpha = 0 leaves C = beta*C exactly: the BLAS rule that A and B are then
// not read at all, which every kernel follows.
func checkAlphaZero[T amp.Element](r *rand.Rand, mm MatMulFunc[T], shapes []Shape) error {
	for _, sh := range shapes {
		for _, beta := range []float64{0, 1, -2.5} {
			specials := []T{T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1))}
			fill := func(a, b []T) {
				for i := range a {
					a[i] = specials[r.IntN(len(specials))]
				}
				for i := range b {
					b[i] = specials[r.IntN(len(specials))]
				}
			}
			if err := checkMatMul(r, mm, sh, scalarCase{0, beta}, fill); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestDot runs dot over every length of DotLengths, checks that it gives
// the same result twice, and that NaN and Inf propagate.
func TestDot[T amp.Element](t *testing.T, dot DotFunc[T]) {
	TestDotLengths(t, dot, DotLengths(!testing.Short()))
}

// TestDotLengths is TestDot over the given lengths.
func TestDotLengths[T amp.Element](t *testing.T, dot DotFunc[T], lengths []int) {
	seed := runSeed(t)
	for _, n := range lengths {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			runCase(t, seed, func(r *rand.Rand) error { return checkDot(r, dot, n, nil) })
		})
	}
	if isFloat[T]() {
		t.Run("NaN and Inf propagate", func(t *testing.T) {
			runCase(t, seed, func(r *rand.Rand) error {
				if err := checkDot(r, dot, 100, func(x, y []T) { x[37] = T(math.Inf(1)) }); err != nil {
					return err
				}
				return checkDot(r, dot, 100, func(x, y []T) { x[37], y[50] = T(math.Inf(1)), T(math.NaN()) })
			})
		})
	} else {
		t.Run("int32 wraps around", func(t *testing.T) {
			runCase(t, seed, func(r *rand.Rand) error { return checkDot(r, dot, 1031, fillInt32[T](r)) })
		})
	}
}

// fillInt32 returns an edit that fills int32 operands with values from the
// whole int32 range, so that sums and products wrap around.
func fillInt32[T amp.Element](r *rand.Rand) func(x, y []T) {
	return func(x, y []T) {
		for i := range x {
			x[i] = T(int32(r.Uint32()))
		}
		for i := range y {
			y[i] = T(int32(r.Uint32()))
		}
	}
}

// checkDot runs dot twice on fresh random vectors of length n and says how
// the result differs from the reference or between the runs.
func checkDot[T amp.Element](r *rand.Rand, dot DotFunc[T], n int, edit func(x, y []T)) error {
	x, y := reference.RandomSlice[T](r, n), reference.RandomSlice[T](r, n)
	if edit != nil {
		edit(x, y)
	}
	var got [2]T
	for i := range got {
		xv, err := amp.NewArrayView(amp.Extent1(n), x)
		if err != nil {
			return err
		}
		yv, err := amp.NewArrayView(amp.Extent1(n), y)
		if err != nil {
			return err
		}
		if got[i], err = dot(xv, yv); err != nil {
			return err
		}
	}
	if e, tol := reference.DotError(x, y, got[0]), reference.Tolerance[T](n); e > tol || math.IsNaN(e) {
		want, _ := reference.Dot(reference.ToFloat64(x), reference.ToFloat64(y))
		return fmt.Errorf("n=%d: dot = %v, want %v: off by %.3g relative to the magnitude of the terms (tolerance %.3g)", n, got[0], want, e, tol)
	}
	if got[0] != got[1] && !(got[0] != got[0] && got[1] != got[1]) {
		return fmt.Errorf("n=%d: the same inputs gave %v, then %v", n, got[0], got[1])
	}
	return nil
}
