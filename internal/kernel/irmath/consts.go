package irmath

// The constants of the routines, as float64 hex literals so that they are
// exactly what is meant. consts_test.go recomputes every one of them with
// math/big (π by Machin's formula, ln 2 by its atanh series) and checks the
// bits.

const (
	// shifter is 1.5·2^52: adding it to a value below 2^51 in magnitude
	// rounds that value to an integer, which then sits in the low bits of
	// the sum's mantissa.
	shifter = 0x1.8p52

	// π/2 = pio2A + pio2B + pio2C + (less than 2^-163): each part the
	// float64 nearest to what the parts before it leave.
	pio2A = 0x1.921fb54442d18p+00
	pio2B = 0x1.1a62633145c07p-54
	pio2C = -0x1.f1976b7ed8fbcp-110

	twoOverPi = 0x1.45f306dc9c883p-01 // 2/π rounded

	// ln 2 = ln2Hi + ln2Lo + (about 2^-110).
	ln2Hi = 0x1.62e42fefa39efp-01
	ln2Lo = 0x1.abc9e3b39803fp-56

	// ln 2 = ln2A + ln2B + (about 2^-102), ln2A with 42 significant bits
	// so that e·ln2A is exact for any exponent e of a float64 (|e| < 2^11).
	ln2A = 0x1.62e42fefa38p-01
	ln2B = 0x1.ef35793c7673p-45

	// log2(e) = log2eHi + log2eLo + (about 2^-110).
	log2eHi = 0x1.71547652b82fep+00
	log2eLo = 0x1.777d0ffda0d24p-56

	// 2/3 = twoThirdsHi + twoThirdsLo + (about 2^-108).
	twoThirdsHi = 0x1.5555555555555p-01
	twoThirdsLo = 0x1.5555555555555p-55

	sqrt2 = 0x1.6a09e667f3bcdp+00 // √2 rounded
)

// twoOverPiWords holds the binary fraction of 2/π, 64 bits a word, after a
// word of zeros that stands for its (zero) integer part: word i, i ≥ 1,
// holds bits 64(i-1)+1 to 64i after the binary point. 19 words, 1216 bits,
// reach as far as the Payne–Hanek reduction of the largest float64 needs
// (see trig.go).
var twoOverPiWords = [20]uint64{
	0,
	0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041, 0xfe5163abdebbc561,
	0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e, 0xe88235f52ebb4484,
	0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b, 0x1ff897ffde05980f,
	0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d, 0x7527bac7ebe5f17b,
	0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab,
}

// invFact[n] is 1/n! rounded to float64, n ≤ 18: the Taylor coefficients of
// exp, sin and cos.
var invFact = [...]float64{
	0x1p+00, 0x1p+00, 0x1p-01, 0x1.5555555555555p-03, 0x1.5555555555555p-05,
	0x1.1111111111111p-07, 0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16,
	0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29,
	0x1.6124613a86d09p-33, 0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-41, 0x1.ae7f3e733b81fp-45,
	0x1.952c77030ad4ap-49, 0x1.6827863b97d97p-53,
}

// atanhCoef[n] is 2/(2n+1) rounded, 2 ≤ n ≤ 13: the coefficients of
// 2·atanh(s) = 2s + 2s³/3 + 2s⁵/5 + … (index 1, 2/3, is twoThirdsHi+Lo).
var atanhCoef = [...]float64{
	2: 0x1.999999999999ap-02, 3: 0x1.2492492492492p-02, 4: 0x1.c71c71c71c71cp-03,
	5: 0x1.745d1745d1746p-03, 6: 0x1.3b13b13b13b14p-03, 7: 0x1.1111111111111p-03,
	8: 0x1.e1e1e1e1e1e1ep-04, 9: 0x1.af286bca1af28p-04, 10: 0x1.8618618618618p-04,
	11: 0x1.642c8590b2164p-04, 12: 0x1.47ae147ae147bp-04, 13: 0x1.2f684bda12f68p-04,
}
