//go:build !race

package amp

// raceEnabled reports a build with the race detector; see race_on.go.
const raceEnabled = false
