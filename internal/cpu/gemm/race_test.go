//go:build race

package gemm

// raceEnabled: the race detector slows the engine 10-50x, so the tests keep
// to their smaller shapes under it; the full sweep runs without it.
const raceEnabled = true
