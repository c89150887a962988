//go:build !unix

package cpubench

import "time"

// cpuTime cannot be read here; Settle falls back to a fixed wait.
func cpuTime() (time.Duration, bool) { return 0, false }
