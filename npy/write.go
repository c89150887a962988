package npy

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"math"

	"github.com/goamp/goamp/half"
	"github.com/goamp/goamp/internal/atomicfile"
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
	case []half.Float16:
		err = writeElems(w, d, 2, func(b []byte, v half.Float16) {
			binary.LittleEndian.PutUint16(b, uint16(v))
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
//
// A symbolic link at path is followed, as os.WriteFile and numpy.save do:
// the file it names is replaced, or created if the link dangles, and the
// link stays. Relative link targets are taken relative to the link's
// directory, and at most 40 links are followed in a row.
//
// WriteFile fails without creating anything if a is invalid (as Write
// does), if the destination is an existing directory (ErrIsDirectory), or
// if it exists and is not a regular file (ErrNotRegular): a device such as
// /dev/null, a FIFO or a socket is never replaced. The temporary file is
// named "." + the destination's name + ".tmp-" + digits, with the name cut
// to its first 100 bytes (at a UTF-8 character boundary) so that the
// temporary name stays within file name limits. CheckWritable makes the
// same checks ahead of time.
func WriteFile(path string, a *Array) error {
	return WriteFileContext(context.Background(), path, a)
}

// WriteFileContext is WriteFile that stops when ctx is done: it then removes
// its temporary file, leaves path untouched and returns an error wrapping
// ctx.Err(). It checks ctx before it starts, between chunks of 64 KiB of
// data, and before the final rename; once the rename is made, the write is
// complete.
func WriteFileContext(ctx context.Context, path string, a *Array) error {
	// An invalid array is refused before the destination is looked at,
	// so that nothing is created for it.
	if _, err := a.check(); err != nil {
		return withPath(err, path)
	}
	err := atomicfile.Write(ctx, path, func(w io.Writer) error {
		// Buffered so that the header and the data reach the file,
		// and the context check, in writes of up to writeChunk bytes.
		bw := bufio.NewWriterSize(w, writeChunk)
		if err := Write(bw, a); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return ioError("writing data", err)
		}
		return nil
	})
	return fileError(err, path)
}

// CheckWritable reports whether WriteFile(path, ...) can be expected to
// succeed, as far as can be known before writing: it resolves symbolic
// links as WriteFile does and fails, as WriteFile would, for a directory, a
// non-regular file, a missing directory, or a directory where no temporary
// file can be created (it creates and removes one, named as WriteFile names
// them). Errors name path.
func CheckWritable(path string) error {
	return fileError(atomicfile.Check(path), path)
}

// fileError returns an error from atomicfile in this package's form,
// "npy: path: ...", wrapping this package's sentinel where atomicfile's
// wraps its own: callers test for npy's, whose messages name npy, and
// every error of this package wraps at most one sentinel, its own. Other
// errors, those of Write, only gain the path.
func fileError(err error, path string) error {
	if err == nil {
		return nil
	}
	e, ok := err.(*atomicfile.Error)
	if !ok {
		return withPath(err, path)
	}
	kind := e.Err
	switch kind {
	case atomicfile.ErrIsDirectory:
		kind = ErrIsDirectory
	case atomicfile.ErrNotRegular:
		kind = ErrNotRegular
	}
	return withPath(&npyError{kind: kind, msg: e.Msg}, path)
}
