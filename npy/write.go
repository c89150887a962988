package npy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"unicode/utf8"
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
	return writeFile(context.Background(), path, a)
}

// WriteFileContext is WriteFile that stops when ctx is done: it then removes
// its temporary file, leaves path untouched and returns an error wrapping
// ctx.Err(). It checks ctx before it starts, between chunks of 64 KiB of
// data, and before the final rename; once the rename is made, the write is
// complete.
func WriteFileContext(ctx context.Context, path string, a *Array) error {
	return writeFile(ctx, path, a)
}

// CheckWritable reports whether WriteFile(path, ...) can be expected to
// succeed, as far as can be known before writing: it resolves symbolic
// links as WriteFile does and fails, as WriteFile would, for a directory, a
// non-regular file, a missing directory, or a directory where no temporary
// file can be created (it creates and removes one, named as WriteFile names
// them). Errors name path.
func CheckWritable(path string) error {
	dest, err := resolveDest(path)
	if err != nil {
		return err
	}
	f, err := createTemp(dest)
	if err != nil {
		return withPath(err, path)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return withPath(osError("cannot remove temporary file "+name, err), path)
	}
	return nil
}

// writeFile implements WriteFileContext; its named result lets the deferred
// cleanup see whether it failed.
func writeFile(ctx context.Context, path string, a *Array) (err error) {
	dest, err := resolveDest(path)
	if err != nil {
		return err
	}
	if _, err := a.check(); err != nil {
		return withPath(err, path)
	}
	if err := ctx.Err(); err != nil {
		return withPath(stopped(err), path)
	}
	f, err := createTemp(dest)
	if err != nil {
		return withPath(err, path)
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

	bw := bufio.NewWriterSize(ctxWriter{ctx, f}, writeChunk)
	if err := Write(bw, a); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return withPath(stopped(cerr), path)
		}
		return withPath(err, path)
	}
	if err := bw.Flush(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return withPath(stopped(cerr), path)
		}
		return withPath(ioError("writing "+tmp, err), path)
	}
	if err := f.Chmod(0o644); err != nil {
		return withPath(osError("chmod "+tmp, err), path)
	}
	if err := f.Sync(); err != nil {
		return withPath(osError("sync "+tmp, err), path)
	}
	closed = true
	if err := f.Close(); err != nil {
		return withPath(osError("close "+tmp, err), path)
	}
	if err := ctx.Err(); err != nil {
		return withPath(stopped(err), path)
	}
	// The destination was checked before all the work; make sure nobody
	// has since put a directory or a device there, which rename would
	// replace.
	if fi, err := os.Lstat(dest); err == nil {
		if err := checkDest(fi.Mode(), path, dest); err != nil {
			return err
		}
	}
	if err := rename(tmp, dest); err != nil {
		return withPath(ioError("rename", err), path)
	}
	syncDir(filepath.Dir(dest))
	return nil
}

// stopped is the error for a write stopped by its context.
func stopped(ctxErr error) error {
	return &npyError{kind: ctxErr, msg: "write stopped: " + ctxErr.Error()}
}

// ctxWriter is a writer that fails once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// maxLinkHops bounds how many symbolic links resolveDest follows in a row,
// as the kernel does (Linux's limit is 40), so that a loop of links fails.
const maxLinkHops = 40

// resolveDest returns the file WriteFile(path) writes: path with symbolic
// links followed, even dangling ones, so that the file a link names is
// created rather than the link replaced. It fails if that file exists and
// is not a regular file. Errors name path.
func resolveDest(path string) (string, error) {
	if path == "" {
		return "", newError(os.ErrInvalid, "empty file name")
	}
	p := path
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", withPath(osError("cannot stat "+p, err), path)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, checkDest(fi.Mode(), path, p)
		}
		if hops == maxLinkHops {
			return "", withPath(&npyError{kind: errLinkLoop,
				msg: fmt.Sprintf("more than %d symbolic links in a row: %s", maxLinkHops, errLinkLoop)}, path)
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", withPath(osError("cannot read link "+p, err), path)
		}
		if target != "" && !filepath.IsAbs(target) && filepath.VolumeName(target) == "" && !os.IsPathSeparator(target[0]) {
			// Relative to the link's directory. That directory is
			// joined as written, not cleaned: cleaning "a/b/../" to
			// "a/" is wrong when b is itself a link.
			dir, _ := filepath.Split(p)
			target = dir + target
		}
		p = target
	}
}

// checkDest fails if a file of mode m, found at dest when resolving path,
// may not be replaced.
func checkDest(m fs.FileMode, path, dest string) error {
	if m.IsRegular() {
		return nil
	}
	what, kind := "not a regular file", ErrNotRegular
	switch {
	case m.IsDir():
		what, kind = "a directory", ErrIsDirectory
	case m&fs.ModeCharDevice != 0:
		what = "a character device, not a regular file"
	case m&fs.ModeDevice != 0:
		what = "a block device, not a regular file"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO (named pipe), not a regular file"
	case m&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link, not a regular file"
	}
	if dest == path {
		return withPath(newError(kind, "is "+what), path)
	}
	return withPath(newError(kind, "resolves to "+dest+", "+what), path)
}

// maxTempBase is the most bytes of the destination's name that a temporary
// file's name repeats: with the dot, ".tmp-" and CreateTemp's up to 10
// digits, a name of at most 116 bytes, within the 255 of common file
// systems and the 143 of eCryptfs.
const maxTempBase = 100

// tempPattern returns the os.CreateTemp pattern for a temporary file
// standing in for the file named base.
func tempPattern(base string) string {
	if len(base) > maxTempBase {
		cut := maxTempBase
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return "." + base + ".tmp-*"
}

// createTemp creates the temporary file for writing dest.
func createTemp(dest string) (*os.File, error) {
	dir, base := filepath.Split(dest)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, tempPattern(base))
	if err != nil {
		return nil, osError("cannot create a temporary file in "+dir, err)
	}
	return f, nil
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
