package dynlib

import (
	"strings"
	"sync"
	"testing"
)

// TestOpenMissingGivesTheReason opens a library that does not exist from
// many goroutines at once: every error is dlopen's own reason (naming the
// library), never empty nor Open's fallback for a lost one.
func TestOpenMissingGivesTheReason(t *testing.T) {
	const name = "libgoamp-no-such-library.so.0"
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for i := range errs {
		wg.Go(func() {
			for range 20 {
				// dlopen's own reason names the file; Open's fallback for a
				// lost reason names it too, so look for that one's words.
				if _, err := Open(name); err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "gave no reason") {
					errs[i] = err
					if err == nil {
						errs[i] = errNil
					}
					return
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("goroutine %d: Open(%q) = %v, want an error that names it", i, name, err)
		}
	}
}

var errNil = nilError{}

type nilError struct{}

func (nilError) Error() string { return "no error" }
