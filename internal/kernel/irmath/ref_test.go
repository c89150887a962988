package irmath

import (
	"math"
	"math/big"
	"sync"
)

// A reference good to far more than float64's precision, with math/big:
// series evaluated at refPrec bits. Slow (tens of microseconds a value),
// so it checks a sample; Go's math package checks the rest.

const refPrec = 256

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }
func newF() *big.Float        { return new(big.Float).SetPrec(refPrec) }

// bigPi is π to 1400 bits (Machin), enough to reduce any float64 mod π/2.
var bigPi = sync.OnceValue(func() *big.Float {
	const prec = 1400
	atanInv := func(n int64) *big.Float {
		sum := new(big.Float).SetPrec(prec)
		nn := new(big.Float).SetPrec(prec).SetInt64(n)
		n2 := new(big.Float).SetPrec(prec).Mul(nn, nn)
		pw := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt64(1), nn)
		eps := new(big.Float).SetMantExp(big.NewFloat(1), -prec-8)
		for k := int64(0); pw.Cmp(eps) > 0; k++ {
			t := new(big.Float).SetPrec(prec).Quo(pw, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, t)
			} else {
				sum.Sub(sum, t)
			}
			pw.Quo(pw, n2)
		}
		return sum
	}
	pi := new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetInt64(16), atanInv(5))
	return pi.Sub(pi, new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetInt64(4), atanInv(239)))
})

// bigLn2 is ln 2 = 2·atanh(1/3), to 1400 bits.
var bigLn2 = sync.OnceValue(func() *big.Float {
	const prec = 1400
	sum := new(big.Float).SetPrec(prec)
	third := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), big.NewFloat(3))
	ninth := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), big.NewFloat(9))
	pw := new(big.Float).SetPrec(prec).Set(third)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -prec-8)
	for k := int64(0); pw.Cmp(eps) > 0; k++ {
		sum.Add(sum, new(big.Float).SetPrec(prec).Quo(pw, new(big.Float).SetPrec(prec).SetInt64(2*k+1)))
		pw.Mul(pw, ninth)
	}
	return sum.Mul(sum, big.NewFloat(2))
})

// series sums term_k for k = 0, 1, … until the terms stop mattering, given
// term_0 and a function that turns term_k into term_{k+1}.
func series(t0 *big.Float, next func(t *big.Float, k int)) *big.Float {
	sum := newF().Set(t0)
	t := newF().Set(t0)
	for k := 0; k < 10000; k++ {
		next(t, k)
		if t.Sign() == 0 || sum.Sign() != 0 && t.MantExp(nil)-sum.MantExp(nil) < -refPrec-4 {
			break
		}
		sum.Add(sum, t)
	}
	return sum
}

// refExp is e^x. x is split as k·ln2 + r, |r| ≤ ln2/2, and r again by
// 2^-8 so that the series converges fast; the result is squared back.
func refExp(x *big.Float) *big.Float {
	switch {
	case x.Cmp(bf(-1200)) < 0:
		return newF()
	case x.Cmp(bf(1200)) > 0:
		return newF().SetInf(false)
	}
	ln2 := newF().Set(bigLn2())
	q := newF().Quo(x, ln2)
	kf, _ := q.Float64()
	k := math.Round(kf)
	r := newF().Sub(x, newF().Mul(bf(k), ln2))
	r.SetMantExp(r, -8)
	e := series(bf(1), func(t *big.Float, n int) {
		t.Mul(t, r)
		t.Quo(t, bf(float64(n+1)))
	})
	for range 8 {
		e.Mul(e, e)
	}
	return e.SetMantExp(e, int(k))
}

// refExpm1 is e^x - 1 for small |x|, straight from the series.
func refExpm1(x *big.Float) *big.Float {
	return series(newF().Set(x), func(t *big.Float, n int) {
		t.Mul(t, x)
		t.Quo(t, bf(float64(n+2)))
	})
}

// refLog is log(x), x > 0: x = m·2^e, m in [1/2, 1), log m = 2·atanh(s),
// s = (m-1)/(m+1).
func refLog(x *big.Float) *big.Float {
	m := newF()
	e := x.MantExp(m)
	s := newF().Quo(newF().Sub(m, bf(1)), newF().Add(m, bf(1)))
	s2 := newF().Mul(s, s)
	pw := newF().Set(s)
	sum := newF().Set(s)
	for k := 1; k < 10000; k++ {
		pw.Mul(pw, s2)
		t := newF().Quo(pw, bf(float64(2*k+1)))
		if t.Sign() == 0 || t.MantExp(nil)-sum.MantExp(nil) < -refPrec-4 {
			break
		}
		sum.Add(sum, t)
	}
	sum.Mul(sum, bf(2))
	return sum.Add(sum, newF().Mul(bf(float64(e)), bigLn2()))
}

// refSinCos returns sin x and cos x, reducing x mod π/2 at 1400 bits.
func refSinCos(x float64) (sin, cos *big.Float) {
	const prec = 1400
	pio2 := new(big.Float).SetPrec(prec).Quo(bigPi(), big.NewFloat(2))
	xb := new(big.Float).SetPrec(prec).SetFloat64(x)
	qf := new(big.Float).SetPrec(prec).Quo(xb, pio2)
	// Round qf to an integer.
	qf.Add(qf, big.NewFloat(0.5))
	qi, _ := qf.Int(nil)
	if qf.Sign() < 0 {
		if fl := new(big.Float).SetInt(qi); fl.Cmp(qf) != 0 {
			qi.Sub(qi, big.NewInt(1))
		}
	}
	r := new(big.Float).SetPrec(prec).Sub(xb, new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetInt(qi), pio2))
	rr := newF().Set(r)
	r2 := newF().Mul(rr, rr)
	s := series(newF().Set(rr), func(t *big.Float, n int) {
		t.Mul(t, r2)
		t.Quo(t, bf(float64(-(2*n+2)*(2*n+3))))
	})
	c := series(bf(1), func(t *big.Float, n int) {
		t.Mul(t, r2)
		t.Quo(t, bf(float64(-(2*n+1)*(2*n+2))))
	})
	switch new(big.Int).And(qi, big.NewInt(3)).Int64() {
	case 0:
		return s, c
	case 1:
		return c, s.Neg(s)
	case 2:
		return s.Neg(s), c.Neg(c)
	}
	return c.Neg(c), s
}

// refTanh is tanh |x| = (e^2|x| - 1)/(e^2|x| + 1) with expm1 for small
// |x|, else (1 - e^-2|x|)/(1 + e^-2|x|).
func refTanh(x float64) *big.Float {
	a := math.Abs(x)
	var t *big.Float
	if a < 0.25 {
		u := refExpm1(bf(2 * a))
		t = newF().Quo(u, newF().Add(u, bf(2)))
	} else {
		u := refExp(bf(-2 * a))
		t = newF().Quo(newF().Sub(bf(1), u), newF().Add(bf(1), u))
	}
	if x < 0 {
		t.Neg(t)
	}
	return t
}

// refPow is x^y for x > 0 finite, y finite; the sign of a negative x
// with an integer y the caller applies.
func refPow(x, y float64) *big.Float {
	l := refLog(bf(x))
	return refExp(l.Mul(l, bf(y)))
}

// ulpErr is |got - want| in units of the last place of want rounded to a
// float64 (subnormals: 2^-1074), or of a float32 if single. Infinities
// and NaNs must match exactly (else the error is +Inf); a want beyond the
// largest finite value counts as +Inf.
func ulpErr(got float64, want *big.Float, single bool) float64 {
	wf, _ := want.Float64()
	if single {
		w32, _ := want.Float32()
		wf = float64(w32)
	}
	if math.IsInf(wf, 0) || math.IsInf(got, 0) || got != got {
		if got == wf {
			return 0
		}
		return math.Inf(1)
	}
	if want.Sign() == 0 {
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	e := want.MantExp(nil) - 1 // want = 1.m · 2^e
	ulpExp := e - 52
	if single {
		ulpExp = max(e-23, -149)
	} else {
		ulpExp = max(ulpExp, -1074)
	}
	d := newF().Sub(bf(got), want)
	d.Abs(d)
	d.SetMantExp(d, -ulpExp)
	f, _ := d.Float64()
	return f
}

// ulpErr64 is ulpErr against a float64 reference (Go's math package).
func ulpErr64(got, want float64, single bool) float64 {
	if want != want {
		if got != got {
			return 0
		}
		return math.Inf(1)
	}
	return ulpErr(got, bf(want), single)
}
