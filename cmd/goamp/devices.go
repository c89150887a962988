package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/walkthrough"
	"github.com/goamp/goamp/linalg"
)

func runDevices(_ context.Context, args []string, stdout, _ io.Writer) error {
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
		for _, op := range []linalg.Operation{linalg.OpMatMul, linalg.OpDot} {
			names := []string{"auto"}
			for _, k := range linalg.Kernels(op) {
				if k.Accelerator == a.Kind() && runsOn(a, op, k) {
					names = append(names, k.Name)
				}
			}
			fmt.Fprintf(stdout, "  %-20s %s\n", string(op)+" kernels", strings.Join(names, ", "))
		}
	}
	if err := amp.CUDAUnavailable(); err != nil {
		fmt.Fprintf(stdout, "cuda: not available: %s\n", oneLine(err.Error()))
	}
	if defErr != nil {
		return usageError{defErr}
	}
	return nil
}

func runWalkthrough(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("walkthrough", "Runs the C++ AMP \"Walkthrough: Matrix Multiplication\" (Microsoft Learn):\nMultiplyWithOutAMP, MultiplyWithAMP, MultiplyWithTiling, and a shared-memory\ndot product, printing each result. The kernels are Go functions; on a GPU\nthey run as the PTX that goampgen compiled from them.", stdout)
	device := fs.String("device", "", "accelerator: cpu, cuda, cuda:N, or auto: a GPU if there is one (default: $"+amp.DeviceEnv+", else auto)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	acc, err := pickAccelerator(*device)
	if err != nil {
		return err
	}
	return walkthrough.Run(stdout, acc.DefaultView())
}

// runsOn reports whether kernel k of op runs on a: the tensor-core kernels
// need a GPU of their compute capability (dmma and mma 8.0 or newer, wgmma
// 9.0 only); a GPU that cannot run one does not list it.
func runsOn(a *amp.Accelerator, op linalg.Operation, k linalg.KernelInfo) bool {
	if k.MinCompute == 0 && k.MaxCompute == 0 {
		return true
	}
	opt := &linalg.Options{Kernel: k.Name, View: a.DefaultView()}
	if len(k.Precisions) > 0 {
		opt.Precision = k.Precisions[0]
	}
	_, _, err := linalg.Choose(op, opt)
	return !errors.Is(err, amp.ErrUnsupported)
}
