//go:build race

package amp

// raceEnabled reports a build with the race detector, whose state for each
// live goroutine (about half a megabyte once it has run a while) changes
// how tile threads run (pull_race.go) and how many tiles run at once.
const raceEnabled = true
