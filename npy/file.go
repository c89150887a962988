package npy

import (
	"errors"
	"os"
)

// File is a .npy file opened for reading, header read and checked, data not
// yet read.
type File struct {
	f    *os.File
	path string
	d    *Decoder
}

// Open opens the .npy file at path, reads its header and checks it as
// NewDecoder does, with the size of a regular file known in advance. Errors
// name path; a directory fails with ErrIsDirectory.
//
// Open never blocks: a FIFO is opened without waiting for a writer. A FIFO
// or pipe that has a writer (bash's process substitution <(cmd),
// /dev/stdin fed by a pipe) is read normally, and reads wait while the
// writer is slow; one with no writer reads as empty and fails at once with
// ErrNotNPY.
//
// The caller must Close the File.
func Open(path string, opt *ReadOptions) (*File, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, withPath(osError("cannot open", err), path)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, withPath(osError("cannot stat", err), path)
	}
	size := int64(-1)
	empty := "empty input: not a .npy file"
	switch m := fi.Mode(); {
	case m.IsDir():
		f.Close()
		return nil, withPath(newError(ErrIsDirectory, "is a directory"), path)
	case m.IsRegular():
		size = fi.Size()
	case m&os.ModeNamedPipe != 0:
		empty = "empty input (a FIFO or pipe with no writer?)"
	}
	d, err := newDecoder(f, size, empty, opt)
	if err != nil {
		f.Close()
		return nil, withPath(err, path)
	}
	return &File{f: f, path: path, d: d}, nil
}

// Header returns what the file's header says about its array; see
// Decoder.Header.
func (f *File) Header() Header { return f.d.Header() }

// ReadArray reads the array data; see Decoder.ReadArray. Errors name the
// file's path.
func (f *File) ReadArray() (*Array, error) {
	a, err := f.d.ReadArray()
	if err != nil {
		return nil, withPath(err, f.path)
	}
	return a, nil
}

// Close closes the file. A second Close fails with an error wrapping
// os.ErrClosed.
func (f *File) Close() error {
	if err := f.f.Close(); err != nil {
		return withPath(osError("close", err), f.path)
	}
	return nil
}

// osError wraps an error from the os package; the message leaves out the
// path an *os.PathError repeats, as the caller adds it.
func osError(what string, err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return &npyError{kind: err, msg: what + ": " + pe.Err.Error()}
	}
	return ioError(what, err)
}
