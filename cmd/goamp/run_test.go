package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// TestExitStatus checks how run maps a command's error to the exit status.
func TestExitStatus(t *testing.T) {
	saved := commands
	defer func() { commands = saved }()
	for _, c := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errHelp, 0},
		{errCheckFailed, 1},
		{errors.New("device fell over"), 1},
		{usagef("bad input"), 2},
	} {
		commands = []command{{name: "fake", run: func(context.Context, []string, io.Writer, io.Writer) error { return c.err }}}
		var stderr bytes.Buffer
		if got := run([]string{"fake"}, io.Discard, &stderr); got != c.code {
			t.Errorf("error %v: exit %d, want %d", c.err, got, c.code)
		}
		if c.code != 0 && c.err != errCheckFailed && strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("error %v: stderr %q is not one line", c.err, stderr.String())
		}
	}
}

func TestCheckResult(t *testing.T) {
	var out bytes.Buffer
	if err := checkResult[float32](&out, []float64{0, 1e-9}, 1); err != nil || !strings.Contains(out.String(), ": ok") {
		t.Errorf("exact result: %v, %q", err, out.String())
	}
	out.Reset()
	if err := checkResult[float32](&out, []float64{0, 0.005}, 1); !errors.Is(err, errCheckFailed) || !strings.Contains(out.String(), "FAILED") {
		t.Errorf("result off by 0.5%%: %v, %q", err, out.String())
	}
	out.Reset()
	if err := checkResult[float64](&out, []float64{math.NaN()}, 1); !errors.Is(err, errCheckFailed) {
		t.Errorf("NaN error: %v, %q", err, out.String())
	}
}
