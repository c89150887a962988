//go:build noasm || !amd64

package gemm

// peakFMA reports that there is no assembly FMA loop on this build.
func peakFMA(int, bool) (flopsPerTrip int, ok bool) { return 0, false }
