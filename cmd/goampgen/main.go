// Command goampgen compiles a package's Go kernels to PTX for NVIDIA GPUs:
// goamp's answer to C++ AMP's restrict(amp). Run it with go generate in a
// package whose kernel functions carry the directive
//
//	//goamp:kernel
//
// in their doc comments, and a line such as
//
//	//go:generate go run github.com/goamp/goamp/cmd/goampgen
//
// in one of its files. It writes goamp_kernels.go beside them: for each
// kernel the PTX that the NVIDIA driver compiles when the kernel first
// runs on a GPU, and a function Launch<Kernel> (launch<kernel> for an
// unexported one) that runs the kernel on any accelerator view: the Go
// function itself on the CPU, the PTX on a CUDA GPU.
//
// A kernel is a top-level function whose first parameter is an amp.Index
// or amp.TiledIndex and whose other parameters are *amp.ArrayView[T] (T
// float32, float64 or int32) or scalars. Its body is written in a subset of
// Go (see the README's "Writing your own kernels"); anything outside the
// subset is refused with its file:line and what to do instead, and nothing
// is written.
//
// Usage:
//
//	goampgen [-check] [dir]
//
// dir is the package's directory (default "."). With -check, goampgen
// writes nothing and fails if goamp_kernels.go is not what it would write.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goamp/goamp/internal/kernel/frontend"
	"github.com/goamp/goamp/internal/kernel/gen"
)

func main() {
	check := flag.Bool("check", false, "write nothing; fail if the generated file is out of date")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: goampgen [-check] [dir]\n\nCompiles the //goamp:kernel functions of the package in dir (default .) to PTX\nand writes %s there.\n\n", gen.FileName)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := "."
	if flag.NArg() == 1 {
		dir = flag.Arg(0)
	}
	if err := run(dir, *check); err != nil {
		var list frontend.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintln(os.Stderr, relative(e.Error()))
			}
		} else {
			fmt.Fprintln(os.Stderr, "goampgen:", err)
		}
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	pkg, err := frontend.Load(dir, ".")
	if err != nil {
		return err
	}
	src, err := gen.Generate(pkg)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, gen.FileName)
	if check {
		old, err := os.ReadFile(path)
		if err != nil && len(pkg.Kernels) > 0 {
			return fmt.Errorf("%s is missing: run go generate", path)
		}
		if !bytes.Equal(old, src) && len(pkg.Kernels) > 0 {
			return fmt.Errorf("%s is out of date: run go generate", path)
		}
		return nil
	}
	if len(pkg.Kernels) == 0 {
		return fmt.Errorf("no //goamp:kernel functions in %s", dir)
	}
	// Written whole or not at all: a temporary file renamed into place.
	tmp, err := os.CreateTemp(dir, ".goamp_kernels-*.go.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// relative shortens absolute paths in a message to ones relative to the
// working directory, as the go command prints them.
func relative(msg string) string {
	wd, err := os.Getwd()
	if err != nil {
		return msg
	}
	return string(bytes.ReplaceAll([]byte(msg), []byte(wd+string(filepath.Separator)), nil))
}
