package irmath

import (
	"math"
	"math/big"
	"testing"
)

// split returns the float64 parts x0 + x1 + … of x, each the nearest
// float64 to what the ones before leave.
func split(x *big.Float, n int) []float64 {
	r := new(big.Float).SetPrec(x.Prec()).Set(x)
	out := make([]float64, n)
	for i := range out {
		out[i], _ = r.Float64()
		r.Sub(r, new(big.Float).SetPrec(x.Prec()).SetFloat64(out[i]))
	}
	return out
}

func TestConstants(t *testing.T) {
	const prec = 1400
	pi := bigPi()
	ln2 := bigLn2()
	q := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Quo(a, b) }
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	two := new(big.Float).SetPrec(prec).SetInt64(2)
	check := func(name string, got []float64, x *big.Float) {
		t.Helper()
		want := split(x, len(got))
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s part %d = %x, want %x", name, i, got[i], want[i])
			}
		}
	}
	check("π/2", []float64{pio2A, pio2B, pio2C}, q(pi, two))
	check("2/π", []float64{twoOverPi}, q(two, pi))
	check("ln 2", []float64{ln2Hi, ln2Lo}, ln2)
	check("log2 e", []float64{log2eHi, log2eLo}, q(one, ln2))
	check("2/3", []float64{twoThirdsHi, twoThirdsLo}, q(two, new(big.Float).SetPrec(prec).SetInt64(3)))
	if float64(sqrt2) != float64(math.Sqrt2) {
		t.Errorf("sqrt2 = %x", sqrt2)
	}

	// ln2A: ln 2 rounded to 42 bits; ln2B the rest rounded.
	a := new(big.Float).SetPrec(42).Set(ln2)
	if f, _ := a.Float64(); f != ln2A {
		t.Errorf("ln2A = %x, want %x", ln2A, f)
	}
	check("ln 2 - ln2A", []float64{ln2B}, new(big.Float).SetPrec(prec).Sub(ln2, new(big.Float).SetFloat64(ln2A)))
	// What each split leaves out is as small as the comments say.
	rest := func(x *big.Float, parts ...float64) float64 {
		r := new(big.Float).SetPrec(prec).Set(x)
		for _, p := range parts {
			r.Sub(r, new(big.Float).SetFloat64(p))
		}
		f, _ := r.Float64()
		return math.Abs(f)
	}
	if d := rest(q(pi, two), pio2A, pio2B, pio2C); d >= 0x1p-163 {
		t.Errorf("π/2 - parts = %g", d)
	}
	if d := rest(ln2, ln2A, ln2B); d >= 0x1p-98 {
		t.Errorf("ln 2 - ln2A - ln2B = %g", d)
	}

	// The words of 2/π.
	w := q(two, pi)
	two64 := new(big.Float).SetPrec(prec).SetMantExp(one, 64)
	if twoOverPiWords[0] != 0 {
		t.Error("word 0 of 2/π is not 0")
	}
	for i := 1; i < len(twoOverPiWords); i++ {
		w.Mul(w, two64)
		ip, _ := w.Int(nil)
		if got := twoOverPiWords[i]; got != ip.Uint64() {
			t.Errorf("word %d of 2/π = %#016x, want %#016x", i, got, ip.Uint64())
		}
		w.Sub(w, new(big.Float).SetPrec(prec).SetInt(ip))
	}

	// Taylor and atanh coefficients.
	fact := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := 1; n < len(invFact); n++ {
		fact.Mul(fact, new(big.Float).SetInt64(int64(n)))
		if want, _ := q(one, fact).Float64(); invFact[n] != want {
			t.Errorf("1/%d! = %x, want %x", n, invFact[n], want)
		}
	}
	for n := 2; n < len(atanhCoef); n++ {
		if want, _ := q(two, new(big.Float).SetPrec(prec).SetInt64(int64(2*n+1))).Float64(); atanhCoef[n] != want {
			t.Errorf("2/%d = %x, want %x", 2*n+1, atanhCoef[n], want)
		}
	}
}

// convergents returns the denominators q < 2^53 of the continued fraction
// of α = 2^(e-52)·2/π from 2^40 up: by the theory of best approximations
// the last one, q, makes ||q·α|| (the distance to the nearest integer) the
// smallest of all ||m·α|| for 0 < m < 2^53, so q·2^(e-52) is the float64
// of at most that binade that is nearest a multiple of π/2.
func convergents(e int) []uint64 {
	const prec = 1400
	alpha := new(big.Float).SetPrec(prec).Quo(bigPi(), big.NewFloat(2))
	alpha.Quo(big.NewFloat(1).SetPrec(prec), alpha)
	alpha.SetMantExp(alpha, e-52)
	limit := new(big.Int).Lsh(big.NewInt(1), 53)
	x := new(big.Float).SetPrec(prec).Set(alpha)
	a0, _ := x.Int(nil)
	x.Sub(x, new(big.Float).SetPrec(prec).SetInt(a0))
	qm2, qm1 := big.NewInt(0), big.NewInt(1)
	var out []uint64
	for x.Sign() != 0 {
		inv := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), x)
		ai, _ := inv.Int(nil)
		q := new(big.Int).Add(new(big.Int).Mul(ai, qm1), qm2)
		if q.Cmp(limit) >= 0 {
			break
		}
		if q.BitLen() > 40 {
			out = append(out, q.Uint64())
		}
		qm2, qm1 = qm1, q
		x = inv.Sub(inv, new(big.Float).SetPrec(prec).SetInt(ai))
	}
	if len(out) == 0 {
		out = append(out, qm1.Uint64())
	}
	return out
}

// TestReductionHardestCase backs the claim in trig.go: no float64 in
// [1, 2^30] is closer than 2^-61 to a multiple of π/2, so the Cody–Waite
// reduction's absolute error, under 2^-131, is below 2^-70 of any reduced
// argument. (Below 1 the reduced argument is x itself or x - π/2 ≥ 0.2.)
func TestReductionHardestCase(t *testing.T) {
	const prec = 1400
	pio2 := new(big.Float).SetPrec(prec).Quo(bigPi(), big.NewFloat(2))
	worst := math.Inf(1)
	for e := 0; e < 30; e++ {
		qs := convergents(e)
		q := qs[len(qs)-1]
		x := new(big.Float).SetPrec(prec).SetMantExp(new(big.Float).SetPrec(prec).SetUint64(q), e-52)
		k := new(big.Float).SetPrec(prec).Quo(x, pio2)
		k.Add(k, big.NewFloat(0.5))
		ki, _ := k.Int(nil)
		r := new(big.Float).SetPrec(prec).Sub(x, new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetInt(ki), pio2))
		rf, _ := r.Float64()
		worst = min(worst, math.Abs(rf))
	}
	if worst < 0x1p-61 {
		t.Errorf("a float64 below 2^30 is %g from a multiple of π/2", worst)
	}
	t.Logf("closest float64 below 2^30 to a multiple of π/2: 2^%.2f away", math.Log2(worst))
}
