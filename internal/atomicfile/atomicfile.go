// Package atomicfile writes a file that is replaced atomically: the new
// content goes to a temporary file in the destination's directory, which
// is synced and renamed over the destination, so that a reader sees the old
// file or the new one, never part of one, and a write that fails or is
// cancelled leaves the old file as it was and no temporary file behind.
//
// The destination is what a program writing the path would expect:
// symbolic links are followed, even dangling ones (the file a link names is
// created or replaced, and the link stays), and a destination that is not a
// regular file is refused rather than replaced: a directory with
// [ErrIsDirectory], anything else (a device such as /dev/null, a FIFO, a
// socket) with [ErrNotRegular]. [Check] makes the same checks before any
// work is done.
package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"
)

var (
	// ErrIsDirectory means the destination, after following symbolic
	// links, is a directory.
	ErrIsDirectory = errors.New("atomicfile: destination is a directory")

	// ErrNotRegular means the destination, after following symbolic
	// links, exists and is neither a regular file nor a directory: a
	// device, a FIFO, a socket... Such a file is never replaced.
	ErrNotRegular = errors.New("atomicfile: destination is not a regular file")
)

// Error is the type of the errors that Resolve, Check and Write return,
// except the errors of Write's callback, which Write returns as they are.
type Error struct {
	// Path is the destination as the caller gave it.
	Path string

	// Msg says what went wrong, without Path, for callers that name the
	// path themselves: "resolves to /dev/null, a character device, not a
	// regular file", "cannot create a temporary file in /x: permission
	// denied".
	Msg string

	// Err is the cause, for errors.Is: ErrIsDirectory, ErrNotRegular,
	// an error from the os package, ctx.Err() for a cancelled write, or
	// syscall.ELOOP (except on Plan 9) for a loop of symbolic links.
	Err error
}

// Error returns "Path: Msg", or Msg alone when Path is empty.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// fail returns the error for the step what, on the way to writing path,
// failing with err. The message keeps only the reason an *fs.PathError or
// *os.LinkError gives, as what names the file and the error's paths are
// often temporary ones.
func fail(path, what string, err error) error {
	reason := err
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		reason = pe.Err
	} else if le, ok := errors.AsType[*os.LinkError](err); ok {
		reason = le.Err
	}
	return &Error{Path: path, Msg: what + ": " + reason.Error(), Err: err}
}

// stopped is the error for a write to path stopped by its context.
func stopped(path string, ctxErr error) error {
	return &Error{Path: path, Msg: "write stopped: " + ctxErr.Error(), Err: ctxErr}
}

// Write replaces the file at path, or creates it, with what fn writes to w,
// atomically: it creates a temporary file in the destination's directory,
// has fn write to it, sets its permissions to 0644, syncs and closes it,
// checks the destination again (it may have changed during a long write)
// and renames the temporary file over it, then syncs the directory where
// the system allows. The destination is path with symbolic links followed,
// as Resolve returns it.
//
// w is not buffered: each Write goes to the file, after a check of ctx;
// callers making small writes should buffer them (and flush before fn
// returns). Once ctx is done, w's writes fail, and Write stops before the
// rename and returns an error wrapping ctx.Err(), whatever fn returned.
// An error from fn is returned as it is. On any failure or cancellation,
// or a panic in fn, the temporary file is removed and the destination left
// untouched; once the rename is made, the write is complete.
//
// The temporary file is named "." + the destination's name + ".tmp-" +
// digits, with the name cut to its first 100 bytes (at a UTF-8 character
// boundary) so that the temporary name stays within file name limits
// whatever the destination's name.
func Write(ctx context.Context, path string, fn func(w io.Writer) error) error {
	dest, err := Resolve(path)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return stopped(path, err)
	}
	f, err := createTemp(path, dest)
	if err != nil {
		return err
	}
	tmp := f.Name()
	// Until the rename, any way out (an error, a cancellation, a panic
	// in fn) removes the temporary file. Closing it twice is harmless.
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()

	if err := fn(ctxWriter{ctx, f}); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return stopped(path, cerr)
		}
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(path, "chmod "+tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fail(path, "sync "+tmp, err)
	}
	if err := f.Close(); err != nil {
		return fail(path, "close "+tmp, err)
	}
	if err := ctx.Err(); err != nil {
		return stopped(path, err)
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
		return fail(path, "rename", err)
	}
	renamed = true
	syncDir(filepath.Dir(dest))
	return nil
}

// Check reports whether Write(ctx, path, ...) can be expected to succeed,
// as far as can be known before writing: it resolves path as Write does and
// fails as Write would for a directory, a file that is not a regular file,
// a missing directory, or a directory where no temporary file can be
// created (it creates one, named as Write names them, and removes it).
func Check(path string) error {
	dest, err := Resolve(path)
	if err != nil {
		return err
	}
	f, err := createTemp(path, dest)
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fail(path, "cannot remove temporary file "+name, err)
	}
	return nil
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

// maxLinkHops bounds how many symbolic links Resolve follows in a row, as
// the kernel does (Linux's limit is 40), so that a loop of links fails.
const maxLinkHops = 40

// Resolve returns the file that Write(ctx, path, ...) writes: path with
// symbolic links followed, even dangling ones, so that the file a link
// names is created rather than the link replaced. Relative link targets are
// taken relative to the link's directory, and at most 40 links are
// followed in a row; a longer chain (a loop) fails with an error wrapping
// syscall.ELOOP. Resolve fails with ErrIsDirectory or ErrNotRegular if the
// file exists and is not a regular file.
func Resolve(path string) (string, error) {
	if path == "" {
		return "", &Error{Msg: "empty file name", Err: os.ErrInvalid}
	}
	p := path
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fail(path, "cannot stat "+p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, checkDest(fi.Mode(), path, p)
		}
		if hops == maxLinkHops {
			return "", fail(path, fmt.Sprintf("more than %d symbolic links in a row", maxLinkHops), errLinkLoop)
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", fail(path, "cannot read link "+p, err)
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
		return &Error{Path: path, Msg: "is " + what, Err: kind}
	}
	return &Error{Path: path, Msg: "resolves to " + dest + ", " + what, Err: kind}
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

// createTemp creates the temporary file for writing dest, the resolution of
// path.
func createTemp(path, dest string) (*os.File, error) {
	dir, base := filepath.Split(dest)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, tempPattern(base))
	if err != nil {
		return nil, fail(path, "cannot create a temporary file in "+dir, err)
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
