//go:build noasm || !amd64

package gemm

// peakFMA is never called on this build: it has no assembly kernels to
// compare with the peak.
func peakFMA(string, int, bool) (flopsPerTrip int) { panic("gemm: no FMA loop on this build") }
