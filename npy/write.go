package npy

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Write writes a to w as a .npy file: format version 1.0 (2.0 if the header
// needs it), little-endian, C order, with the data starting at a multiple
// of 64 bytes. The bytes are exactly those numpy.save writes for the same
// array. It fails, wrapping ErrInvalidArray or ErrUnsupportedDType, before
// writing anything if a is not valid (see Array.DType and Array), and
// otherwise returns any error from w.
func Write(w io.Writer, a *Array) error {
	dt, err := a.check()
	if err != nil {
		return err
	}
	hdr, err := encodeHeader(dt, a.Shape)
	if err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return ioError("writing header", err)
	}
	switch d := a.Data.(type) {
	case []float32:
		err = writeElems(w, d, 4, func(b []byte, v float32) {
			binary.LittleEndian.PutUint32(b, math.Float32bits(v))
		})
	case []float64:
		err = writeElems(w, d, 8, func(b []byte, v float64) {
			binary.LittleEndian.PutUint64(b, math.Float64bits(v))
		})
	case []int32:
		err = writeElems(w, d, 4, func(b []byte, v int32) {
			binary.LittleEndian.PutUint32(b, uint32(v))
		})
	}
	if err != nil {
		return ioError("writing data", err)
	}
	return nil
}

// writeChunk is the size of the buffer Write encodes data into.
const writeChunk = 64 << 10

// writeElems encodes data in little-endian order, size bytes per element,
// and writes it to w in chunks.
func writeElems[T any](w io.Writer, data []T, size int, put func([]byte, T)) error {
	if len(data) == 0 {
		return nil
	}
	buf := make([]byte, min(writeChunk, len(data)*size))
	per := len(buf) / size
	for len(data) > 0 {
		n := min(per, len(data))
		for i, v := range data[:n] {
			put(buf[i*size:], v)
		}
		if _, err := w.Write(buf[:n*size]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// WriteFile writes a to the file at path as Write does, atomically: it
// writes a temporary file in the same directory, syncs and closes it, sets
// its permissions to 0644 and renames it over path. On any failure the
// temporary file is removed and an existing file at path is left untouched.
// A symbolic link at path is followed: the file it names is replaced. If
// path names an existing directory, WriteFile fails with an error
// wrapping ErrIsDirectory without creating anything; if a is invalid it
// fails as Write does, also without creating anything.
func WriteFile(path string, a *Array) error {
	return writeFile(path, a)
}

// writeFile implements WriteFile; its named result lets the deferred
// cleanup see whether it failed.
func writeFile(path string, a *Array) (err error) {
	if path == "" {
		return newError(os.ErrInvalid, "empty file name")
	}
	// Through a symbolic link, write the file it names, as os.WriteFile
	// and np.save do, rather than replace the link with a regular file.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return withPath(newError(ErrIsDirectory, "is a directory"), path)
	}
	if _, err := a.check(); err != nil {
		return withPath(err, path)
	}

	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return ioError("create temporary file", err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()

	bw := bufio.NewWriterSize(f, writeChunk)
	if err := Write(bw, a); err != nil {
		return withPath(err, path)
	}
	if err := bw.Flush(); err != nil {
		return ioError("write "+tmp, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return ioError("chmod", err)
	}
	if err := f.Sync(); err != nil {
		return ioError("sync", err)
	}
	closed = true
	if err := f.Close(); err != nil {
		return ioError("close", err)
	}
	if err := rename(tmp, path); err != nil {
		return ioError("rename", err)
	}
	syncDir(dir)
	return nil
}

// rename is os.Rename; tests replace it to exercise failure handling.
var rename = os.Rename

// syncDir makes a rename in dir durable where the platform supports it;
// failures are ignored, as some systems cannot sync directories.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
