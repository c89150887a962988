package main

import (
	"fmt"
	"io"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/walkthrough"
)

func runDevices(args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("devices", "Lists the accelerators goamp can run on, and their properties.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	def, defErr := amp.DefaultAccelerator()
	for _, a := range amp.Accelerators() {
		mark := ""
		if defErr == nil && a == def {
			mark = " (default)"
		}
		fmt.Fprintf(stdout, "%s%s: %s\n", a.Path(), mark, a.Description())
		for _, p := range a.Properties() {
			fmt.Fprintf(stdout, "  %-20s %s\n", p.Name, p.Value)
		}
	}
	if defErr != nil {
		return usageError{defErr}
	}
	return nil
}

func runWalkthrough(args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("walkthrough", "Runs the seeds' C++ AMP walkthrough: MultiplyWithOutAMP, MultiplyWithAMP,\nMultiplyWithTiling and the shared-memory dot product, printing each result.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return walkthrough.Run(stdout)
}
