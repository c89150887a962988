// Command goamp runs goamp's matrix multiply and dot product from the shell:
// on random operands or NumPy .npy files, on the CPU of any machine or on an
// accelerator, checked against a float64 reference and timed.
//
// Usage:
//
//	goamp devices        list the accelerators and their properties
//	goamp walkthrough    the C++ AMP matrix multiplication walkthrough and a tiled dot product, step by step
//	goamp matmul [flags] C = A*B (with no flags: a random 1024^3 float32 product, checked and timed)
//	goamp dot [flags]    the dot product of two vectors
//	goamp bench [flags]  matrix multiply against gonum and OpenBLAS (CPU) or cuBLAS (--device cuda); the GPU dot products against a copy (--op dot)
//
// Run `goamp COMMAND -h` for a command's flags. Exit status: 0 on success,
// 1 when a result fails --check or a kernel fails, 2 for bad usage or input
// (one line on stderr names the problem, and no output file is written).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// usageError marks errors that are the caller's: bad flags or bad input.
// They exit with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errCheckFailed is returned when --check finds the result out of tolerance;
// what was wrong has been printed already.
var errCheckFailed = errors.New("result out of tolerance")

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"devices", "list the accelerators and their properties", runDevices},
	{"walkthrough", "the C++ AMP matrix multiplication walkthrough and a tiled dot product, step by step", runWalkthrough},
	{"matmul", "C = A*B on random operands or .npy files, checked and timed", runMatMul},
	{"dot", "the dot product of two vectors", runDot},
	{"bench", "matrix multiply against gonum and OpenBLAS, or cuBLAS on a GPU, checked, in GFLOP/s (--op dot: the GPU dot products)", runBench},
}

func main() {
	ctx := catchInterrupts()
	status := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if ctx.Err() != nil {
		// Interrupted: the signal handler ends the process, with the
		// signal's status, once any temporary file is gone.
		select {}
	}
	os.Exit(status)
}

// run executes the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run, with a context whose cancellation (an interrupt)
// abandons a result being written.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, errHelp):
			return 0
		case errors.Is(err, errCheckFailed):
			return 1
		}
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "goamp %s: interrupted\n", c.name)
			return 1
		}
		fmt.Fprintf(stderr, "goamp %s: %s\n", c.name, oneLine(err.Error()))
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	fmt.Fprintf(stderr, "goamp: unknown command %q (commands: %s)\n", args[0], commandNames())
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "goamp: C++ AMP's tiled data-parallel model in Go; matrix multiply and dot product on any machine's CPU")
	fmt.Fprintln(w, "\nUsage: goamp COMMAND [flags]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'goamp COMMAND -h' for a command's flags. GOAMP_DEVICE names the default accelerator.")
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// oneLine keeps an error message to the single line the CLI promises.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
