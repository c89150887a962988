package cpubench

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/goamp/goamp/internal/reference"
)

// ErrWrongResult is wrapped by the error Measure and Run return when a
// library's product fails the check: such a run gives no figure at all.
var ErrWrongResult = errors.New("wrong result")

// Options says how long to measure each case. The zero value means the
// defaults.
type Options struct {
	// Budget is the timed time to aim for per library per case (default
	// 500ms): a library is repeated until it has MinReps repetitions and
	// this much time, or MaxReps repetitions. Half a second is enough for a
	// stable median and keeps a 7-size, 2-type run to minutes.
	Budget time.Duration
	// MinReps is the fewest timed repetitions a median is taken of (default
	// 3), except for SlowRep.
	MinReps int
	// MaxReps caps the repetitions of fast cases (default 1000): past it
	// the median no longer moves, and the checks between repetitions cost
	// more than the multiplies.
	MaxReps int
	// SlowRep is the time past which one repetition is enough (default 2s):
	// gonum takes 15s or more a multiply at n=4096, and noise is a small part
	// of that. A warm-up slower than this counts as the one repetition, as
	// the costs a warm-up is there to absorb (page faults in new buffers,
	// starting threads) are milliseconds.
	SlowRep time.Duration
	// Turn is how long a library runs before the next takes over (default
	// 100ms): reps longer than that take turns one by one, shorter ones in
	// batches of about that long. Between turns Measure lets the machine
	// settle (see Settle), which takes a few milliseconds, or about 0.13s
	// after OpenBLAS; a pause after every short rep would make small sizes
	// take minutes.
	Turn time.Duration
	// LeadIn is the time below which a rep is short enough to run one
	// more, untimed, at the start of each turn (default 1s). The first rep
	// after a pause is slow: threads wake up, caches refill, the clock
	// speeds up. On a 16-core machine goamp's first rep of a turn at
	// n=2048 ran a quarter slower than the rest; the lead-in takes that
	// cost. Past a second a rep dilutes it to a percent or so, and a
	// lead-in would double the time a case takes.
	LeadIn time.Duration
	// Turns is the fewest turns a fast library's reps are spread over
	// (default 30): a turn also ends after MaxReps/Turns reps. Without it a
	// library whose MaxReps reps fit in one Turn (n = 64 and 128, where a
	// rep takes microseconds) ran them all in one stretch, the next library
	// in the next, and a host that changed speed between the two stretches
	// moved the ratio: on the 16-core host n = 64 read anywhere from 0.66
	// to 1.67 of OpenBLAS from run to run. There the medians of single
	// turns of 100 reps (2026-11-25) fell into two levels, about 9 and 14
	// us a float64 product, for both libraries alike and from one turn to
	// the next; with 10 turns a library the ratio still read 0.81-1.33,
	// with 30 the share of slow turns each library draws evens out.
	Turns int
	// Seed makes the operands; each case draws its own from it (default 1).
	Seed uint64
	// Progress, when set, is called by Run before each case, with the number
	// of cases done, the total and the case about to run, and once more when
	// all are done (done == total, current the last case).
	Progress func(done, total int, current Case)
}

// DefaultOptions are the options that the zero Options stand for.
var DefaultOptions = Options{Budget: 500 * time.Millisecond, MinReps: 3, MaxReps: 1000, SlowRep: 2 * time.Second, Turn: 100 * time.Millisecond, LeadIn: time.Second, Turns: 30, Seed: 1}

func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Budget == 0 {
		o.Budget = d.Budget
	}
	if o.MinReps == 0 {
		o.MinReps = d.MinReps
	}
	if o.MaxReps == 0 {
		o.MaxReps = d.MaxReps
	}
	o.MaxReps = max(o.MaxReps, o.MinReps)
	if o.SlowRep == 0 {
		o.SlowRep = d.SlowRep
	}
	if o.Turn == 0 {
		o.Turn = d.Turn
	}
	if o.LeadIn == 0 {
		o.LeadIn = d.LeadIn
	}
	if o.Turns == 0 {
		o.Turns = d.Turns
	}
	if o.Seed == 0 {
		o.Seed = d.Seed
	}
	return o
}

// LibResult is one library's measurement of one case.
type LibResult struct {
	Library string
	Times   []time.Duration // every timed repetition, in the order run
	Median  time.Duration
	GFLOPS  float64 // Case.Flops() / Median, in 10^9 per second
}

// Result is the measurement of one case on every library, in the order the
// libraries were given.
type Result struct {
	Case Case
	Libs []LibResult
}

// GFLOPS returns the rate of the library named lib, and whether it was
// measured.
func (r Result) GFLOPS(lib string) (float64, bool) {
	for _, l := range r.Libs {
		if l.Library == lib {
			return l.GFLOPS, true
		}
	}
	return 0, false
}

// Run measures every case on every library, calling each (when not nil)
// with each case's result as soon as it is known, and opt.Progress as it
// goes. It stops at the first wrong result.
func Run(cases []Case, libs []Library, opt Options, each func(Result)) ([]Result, error) {
	var results []Result
	for i, c := range cases {
		if opt.Progress != nil {
			opt.Progress(i, len(cases), c)
		}
		r, err := Measure(c, libs, opt)
		if err != nil {
			return results, err
		}
		results = append(results, r)
		if each != nil {
			each(r)
		}
	}
	if opt.Progress != nil && len(cases) > 0 {
		opt.Progress(len(cases), len(cases), cases[len(cases)-1])
	}
	return results, nil
}

// Measure times case c on each library: fresh operands, a checked warm-up
// of each library, then timed and checked repetitions, the libraries taking
// turns until each has its share (see Options); each turn but those of slow
// reps starts with an untimed lead-in rep (see Options.LeadIn). Taking turns means a burst
// of noise from the rest of the machine lands on every library, not on
// whichever happened to be running; the median then drops it.
//
// After each turn Measure waits for the machine to settle (Settle):
// OpenBLAS's threads spin for about 0.13s after each call, waiting for the
// next, and on a machine of 16 cores goamp, run in that time, was measured
// at a fifth to a half of its speed.
func Measure(c Case, libs []Library, opt Options) (Result, error) {
	opt = opt.withDefaults()
	p := NewProblem(c, opt.Seed)
	// The operands are garbage for the next case to collect; collect them
	// now rather than during a timed multiply.
	runtime.GC()

	type state struct {
		times []time.Duration // timed reps
		total time.Duration   // their sum
		last  time.Duration   // the last rep, timed or not
		done  bool
	}
	st := make([]state, len(libs))
	repsPerTurn := max(1, opt.MaxReps/opt.Turns)
	finished := func(s *state) bool {
		n := len(s.times)
		return n >= opt.MaxReps || n >= opt.MinReps && s.total >= opt.Budget || n >= 1 && slices.Min(s.times) > opt.SlowRep
	}
	rep := func(i int) (time.Duration, error) {
		p.Poison()
		start := time.Now()
		p.Run(libs[i])
		took := time.Since(start)
		if err := p.Check(); err != nil {
			return 0, fmt.Errorf("%s %s: %w: %v", libs[i].Name, c, ErrWrongResult, err)
		}
		return took, nil
	}
	for i := range libs {
		took, err := rep(i)
		if err != nil {
			return Result{}, err
		}
		st[i].last = took
		if took > opt.SlowRep {
			st[i] = state{times: []time.Duration{took}, total: took, last: took, done: true}
		}
		Settle()
	}
	for {
		active := false
		for i := range libs {
			s := &st[i]
			if s.done {
				continue
			}
			active = true
			if s.last < opt.LeadIn {
				if _, err := rep(i); err != nil {
					return Result{}, err
				}
			}
			for turn, reps := time.Duration(0), 0; !s.done && turn < opt.Turn && reps < repsPerTurn; reps++ {
				took, err := rep(i)
				if err != nil {
					return Result{}, err
				}
				s.times = append(s.times, took)
				s.total += took
				s.last = took
				turn += took
				s.done = finished(s)
			}
			Settle()
		}
		if !active {
			break
		}
	}

	res := Result{Case: c}
	for i, lib := range libs {
		med := median(st[i].times)
		res.Libs = append(res.Libs, LibResult{Library: lib.Name, Times: st[i].times, Median: med, GFLOPS: gflops(c, med)})
	}
	return res, nil
}

// gflops is the rate of one multiply of c taking d.
func gflops(c Case, d time.Duration) float64 {
	if d <= 0 {
		return math.Inf(1)
	}
	return c.Flops() / d.Seconds() / 1e9
}

// median returns the middle of ts (the mean of the middle two for an even
// count).
func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Problem is one case's operands, result buffer and check, ready to run on
// any library. Measure uses it, and so do the sub-benchmarks of
// BenchmarkGEMM, which let the testing package do the timing.
type Problem struct {
	Case Case
	impl interface {
		run(Library)
		poison()
		check() error
		checkIn(unit float64) error
	}
}

// NewProblem makes random operands for c (uniform in [-1, 1), each case its
// own, drawn from seed) and the references to check results against.
func NewProblem(c Case, seed uint64) *Problem {
	h := fnv.New64a()
	h.Write([]byte(c.String()))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	if c.Type == Float64 {
		return &Problem{Case: c, impl: newProblem[float64](c, r)}
	}
	return &Problem{Case: c, impl: newProblem[float32](c, r)}
}

// Run multiplies once on lib: C = op(A)*op(B), with beta 0 so that C is
// written, never read.
func (p *Problem) Run(lib Library) { p.impl.run(lib) }

// Poison fills C with NaN, so that an element a library fails to write
// fails the check rather than pass with the value of an earlier run.
func (p *Problem) Poison() { p.impl.poison() }

// Check returns an error saying how C differs from the product, or nil when
// it is right within the tolerance for its type and n terms.
func (p *Problem) Check() error { return p.impl.check() }

// CheckIn is Check for a float32 product computed with its operands
// rounded to a format of unit roundoff unit (TF32, BF16, FP16): the
// tolerance is reference.ToleranceIn's. Its references are made on first
// use, with a checker of their own.
func (p *Problem) CheckIn(unit float64) error { return p.impl.checkIn(unit) }

type problem[T Float] struct {
	m, n, k int
	tr      Trans
	a, b, c []T
	chk     *reference.MatMulChecker[T]
	// chkIn checks in a reduced precision of unit roundoff unitIn (see
	// CheckIn); nil until asked for.
	chkIn  *reference.MatMulChecker[T]
	unitIn float64
}

// newProblem draws A (M x K, K x M when transposed), then B (K x N, or
// N x K), then the checker's vectors, from r: for a square case the draws
// of every earlier version of this code, so a case keeps its operands.
func newProblem[T Float](c Case, r *rand.Rand) *problem[T] {
	m, n, k := c.Dims()
	p := &problem[T]{m: m, n: n, k: k, tr: c.Trans, c: make([]T, m*n)}
	p.a = reference.RandomSlice[T](r, m*k)
	p.b = reference.RandomSlice[T](r, k*n)
	p.chk = reference.NewMatMulChecker(c.Trans.A, c.Trans.B, m, n, k, 1, p.a, p.b, 0, nil, r)
	return p
}

// run multiplies with every row stride the stored width of its matrix.
func (p *problem[T]) run(lib Library) {
	lda, ldb := p.k, p.n
	if p.tr.A {
		lda = p.m
	}
	if p.tr.B {
		ldb = p.k
	}
	gemmOf[T](lib)(p.tr.A, p.tr.B, p.m, p.n, p.k, 1, p.a, max(lda, 1), p.b, max(ldb, 1), 0, p.c, max(p.n, 1))
}

func (p *problem[T]) poison() {
	nan := T(math.NaN())
	for i := range p.c {
		p.c[i] = nan
	}
}

func (p *problem[T]) check() error { return p.chk.Check(p.c).Err() }

func (p *problem[T]) checkIn(unit float64) error {
	if p.chkIn == nil || p.unitIn != unit {
		// Its own random vectors, from a fixed seed: the problem's stream
		// has been drawn from for the exact checker.
		r := rand.New(rand.NewPCG(uint64(p.m)<<32|uint64(p.n), uint64(p.k)))
		p.chkIn = reference.NewMatMulCheckerTol(p.tr.A, p.tr.B, p.m, p.n, p.k, 1, p.a, p.b, 0, nil, r, reference.ToleranceIn(p.k, unit))
		p.unitIn = unit
	}
	return p.chkIn.Check(p.c).Err()
}
