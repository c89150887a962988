//go:build race

package amp

// raceEnabled reports a build with the race detector, whose state for each
// live goroutine (about half a megabyte once it has run a while) changes
// what the tile runtime can afford; see idleThreads.
const raceEnabled = true
