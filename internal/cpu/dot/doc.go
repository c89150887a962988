// Package dot is goamp's CPU dot product of unit-stride vectors: the level-1
// BLAS routines sdot and ddot without the strides.
//
// On amd64 with AVX2 and FMA the work is done by assembly kernels, generated
// by the avo program in ../_asm/dot, that keep four independent vector
// accumulators: a dot product is limited by loads (two vectors for every
// multiply-add), and four chains of fused multiply-adds are enough to keep
// the one FMA a cycle those loads allow in flight. Elsewhere, under the
// noasm build tag, or on a CPU without AVX2 and FMA, a pure-Go twin with
// four scalar accumulators does the same job. Tests run every kernel this
// build has on the same inputs and hold each to the float64 reference.
//
// Float32 accumulates in float32, as BLAS sdot does: it is as accurate as the
// rounding of float32 sums allows (the partial sums are spread over many
// accumulators, so the error grows slower than in a plain loop), but it can
// overflow to ±Inf where a float64 sum would not.
package dot
