// Package readme holds the test that keeps the Go code in the repository's
// README.md compiling; it has no code of its own.
//
// The test takes every fenced block opened with ```go from README.md, makes a
// package of each in one temporary module, and runs go vet and go build on
// them, then runs each program. The module requires github.com/goamp/goamp
// v0.0.0 and replaces it with this checkout, with the repository's go.sum,
// GOFLAGS=-mod=mod, GOPROXY=off and GOWORK=off: nothing is downloaded, since
// everything the snippets import is in the module cache once the repository
// builds. Without a go command on PATH the test is skipped.
//
// # How a block becomes a package
//
// A block that starts with a package clause (after comments and blank lines)
// is a whole file and is used as it stands: package main is built and run,
// any other package is vetted and built.
//
// Any other block is a fragment. Its leading import declarations go at the
// top of the file, and what follows them is
//
//   - top-level declarations (func, type, var, const), if it parses as such.
//     They go into package main if they declare func main. If they declare a
//     test function (func TestXxx(t *testing.T)), they go into
//     snippet_test.go of a package of their own, which go vet type-checks
//     but the test does not run. Otherwise they go into a package of their own.
//   - statements otherwise, which become the body of func main.
//
// A fragment therefore names every package it uses in an import declaration,
// as a file would: the test adds none.
//
// A program (package main) is run with GOAMP_DEVICE=cpu, so it needs no GPU,
// and fails the test if it exits with an error. If its block has an
// "// Output:" comment, as Go's examples do, what follows the marker (the
// rest of that line and the comment lines after it) must equal its standard
// output, each line trimmed of surrounding space.
//
// Code that is not meant to compile (a sketch, an error shown on purpose)
// belongs in a block of another language, such as ```text.
package readme
