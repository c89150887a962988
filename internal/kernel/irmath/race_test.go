//go:build race

package irmath

// The race detector slows the interpreter and math/big several times over:
// fewer points keep the tests quick.
const raceEnabled = true
