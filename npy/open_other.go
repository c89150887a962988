//go:build !unix

package npy

import "os"

// openRead opens path for reading. Systems other than Unix have no FIFOs
// that block in open.
func openRead(path string) (*os.File, error) { return os.Open(path) }
