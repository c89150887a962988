package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/npy"
)

// errHelp is returned after -h printed a command's flags.
var errHelp = errors.New("help shown")

// flagSet is a command's flags and the help text -h prints.
type flagSet struct {
	*flag.FlagSet
	help func()
}

// newFlagSet returns a flag set that reports parse errors as one-line usage
// errors instead of printing the whole usage text.
func newFlagSet(name, synopsis string, stdout io.Writer) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every parse error too; parseFlags
	// prints the help itself, for -h only.
	fs.Usage = func() {}
	fs.help = func() {
		nflags := 0
		fs.VisitAll(func(*flag.Flag) { nflags++ })
		if nflags == 0 {
			fmt.Fprintf(stdout, "Usage: goamp %s\n\n%s\n\nIt takes no flags.\n", name, synopsis)
			return
		}
		fmt.Fprintf(stdout, "Usage: goamp %s [flags]\n\n%s\n\nFlags:\n", name, synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args into fs, turning -h into errHelp and other problems
// into usage errors. Positional arguments are refused.
func parseFlags(fs *flagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.help()
			return errHelp
		}
		return usagef("%v (see goamp %s -h)", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (see goamp %s -h)", fs.Arg(0), fs.Name())
	}
	return nil
}

// flagsSet returns the names of the flags given on the command line.
func flagsSet(fs *flagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// pickAccelerator returns the accelerator --device names, or the default
// (GOAMP_DEVICE, else the best present) when it is empty.
func pickAccelerator(device string) (*amp.Accelerator, error) {
	var (
		acc *amp.Accelerator
		err error
	)
	if device == "" {
		acc, err = amp.DefaultAccelerator()
	} else {
		acc, err = amp.Find(device)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return acc, nil
}

// checkOutPath refuses an --out that cannot be written, before any work is
// done: a name without .npy, a directory, a device or other special file, a
// missing or unwritable directory, links followed as the write will follow
// them (npy.CheckWritable).
func checkOutPath(path string) error {
	if path == "" {
		return nil
	}
	if !strings.HasSuffix(strings.ToLower(path), ".npy") {
		return usagef("--out %s: the output is a NumPy file and must end in .npy", path)
	}
	// CheckWritable makes and removes a probe file: under writing, so that
	// an interrupt cannot end the process in between.
	if err := whileWriting(context.Background(), func() error { return npy.CheckWritable(path) }); err != nil {
		return usagef("--out: %v", err)
	}
	return nil
}
