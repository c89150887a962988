//go:build !race

package irmath

const raceEnabled = false
