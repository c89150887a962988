package main

import (
	"testing"

	"github.com/goamp/goamp/amp"
)

// TestRun transposes matrices of odd shapes on every accelerator of the
// machine; run checks every element.
func TestRun(t *testing.T) {
	for _, acc := range amp.Accelerators() {
		for _, s := range [][2]int{{1, 1}, {1000, 777}, {15, 17}, {3, 4096}} {
			if err := run(acc.Path(), s[0], s[1]); err != nil {
				t.Errorf("%s %dx%d: %v", acc.Path(), s[0], s[1], err)
			}
		}
	}
	if err := run("cpu", 0, 3); err == nil {
		t.Error("a 0x3 matrix: no error")
	}
}
