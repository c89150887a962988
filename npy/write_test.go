package npy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// symlink makes a symbolic link or skips the test where there are none.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// checkLink checks that link is still a symbolic link to target.
func checkLink(t *testing.T, link, target string) {
	t.Helper()
	got, err := os.Readlink(link)
	if err != nil || got != target {
		t.Errorf("link %s now reads %q, %v; want %q", link, got, err, target)
	}
}

// checkHolds checks that path holds the array a.
func checkHolds(t *testing.T, path string, a *Array) {
	t.Helper()
	got, err := ReadFile(path)
	if err != nil || !sameArray(got, a) {
		t.Errorf("%s holds %+v, %v; want %+v", path, got, err, a)
	}
}

func TestWriteFileDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	a := goldens()[0].a

	// A dangling link: the file it names is created, the link stays.
	link := filepath.Join(dir, "link.npy")
	symlink(t, "target.npy", link)
	if err := WriteFile(link, a); err != nil {
		t.Fatal(err)
	}
	checkLink(t, link, "target.npy")
	checkHolds(t, filepath.Join(dir, "target.npy"), a)

	// A chain of links, relative to each link's own directory.
	mkdir(t, filepath.Join(dir, "sub", "deeper"))
	mkdir(t, filepath.Join(dir, "other"))
	symlink(t, "../other/t.npy", filepath.Join(dir, "sub", "l2"))
	symlink(t, "../l2", filepath.Join(dir, "sub", "deeper", "l1"))
	if err := WriteFile(filepath.Join(dir, "sub", "deeper", "l1"), a); err != nil {
		t.Fatal(err)
	}
	checkHolds(t, filepath.Join(dir, "other", "t.npy"), a)
	checkLink(t, filepath.Join(dir, "sub", "l2"), "../other/t.npy")

	// Other forms of link (absolute targets, a link's directory taken as
	// written) are atomicfile's, tested there.
}

func TestWriteFileSymlinkErrors(t *testing.T) {
	dir := t.TempDir()
	a := goldens()[0].a
	loop1, loop2 := filepath.Join(dir, "loop1"), filepath.Join(dir, "loop2")
	symlink(t, "loop2", loop1)
	symlink(t, "loop1", loop2)
	nodir := filepath.Join(dir, "nodir")
	symlink(t, "missing/t.npy", nodir)
	todir := filepath.Join(dir, "todir")
	mkdir(t, filepath.Join(dir, "d"))
	symlink(t, "d", todir)
	before := listDir(t, dir)
	for _, c := range []struct {
		path string
		want error // nil: none of this package's sentinels (the system's ELOOP)
		msg  string
	}{
		{loop1, nil, "more than 40 symbolic links in a row"},
		{nodir, os.ErrNotExist, "cannot create a temporary file in " + filepath.Join(dir, "missing")},
		{todir, ErrIsDirectory, "resolves to " + filepath.Join(dir, "d") + ", a directory"},
	} {
		err := WriteFile(c.path, a)
		kindOK := errors.Is(err, c.want)
		if c.want == nil {
			kindOK = err != nil && !slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(err, s) })
		}
		if !kindOK || !strings.Contains(err.Error(), "npy: "+c.path+": ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v with %q", c.path, err, c.want, c.msg)
			continue
		}
		checkMessage(t, err)
		// CheckWritable shares the resolution: the same error.
		if err2 := CheckWritable(c.path); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("CheckWritable(%s) = %v, WriteFile gave %v", c.path, err2, err)
		}
	}
	if after := listDir(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("directory changed from %v to %v", before, after)
	}
	if names := listDir(t, filepath.Join(dir, "d")); len(names) != 0 {
		t.Errorf("created %v", names)
	}
}

func TestWriteFileLongName(t *testing.T) {
	dir := t.TempDir()
	a := goldens()[0].a
	// The temporary names themselves are atomicfile's, tested there.
	for _, base := range []string{
		strings.Repeat("a", 251) + ".npy",        // 255 bytes
		strings.Repeat("é", 125) + "x.npy",       // 255 bytes, 2-byte runes across the cut
		"ab日" + strings.Repeat("語", 82) + ".npy", // 255 bytes, 3-byte runes
	} {
		if len(base) != 255 {
			t.Fatalf("test name has %d bytes", len(base))
		}
		path := filepath.Join(dir, base)
		if err := CheckWritable(path); err != nil {
			t.Errorf("CheckWritable: %v", err)
		}
		if err := WriteFile(path, a); err != nil {
			t.Fatalf("%d-byte name: %v", len(base), err)
		}
		checkHolds(t, path, a)
		if names := listDir(t, dir); !reflect.DeepEqual(names, []string{base}) {
			t.Errorf("directory holds %v", names)
		}
		os.Remove(path)
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "e.npy")
	if err := os.WriteFile(existing, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	mkdir(t, sub)
	dangling := filepath.Join(dir, "dangling")
	symlink(t, "sub/new.npy", dangling)
	toMissing := filepath.Join(dir, "tomissing")
	symlink(t, "nosuchdir/x.npy", toMissing)
	before := listDir(t, dir)

	for _, p := range []string{existing, filepath.Join(dir, "new.npy"), dangling, filepath.Join(dir, strings.Repeat("n", 255))} {
		if err := CheckWritable(p); err != nil {
			t.Errorf("CheckWritable(%s): %v", p, err)
		}
	}
	type failCase struct {
		path string
		want error
	}
	fails := []failCase{
		{sub, ErrIsDirectory},
		{filepath.Join(dir, "nosuchdir", "x.npy"), os.ErrNotExist},
		{toMissing, os.ErrNotExist},
		{"", os.ErrInvalid},
	}
	if runtime.GOOS != "windows" { // where a file below a file is just missing
		fails = append(fails, failCase{existing + string(filepath.Separator) + "x", syscall.ENOTDIR})
	}
	for _, c := range fails {
		err := CheckWritable(c.path)
		if !errors.Is(err, c.want) {
			t.Errorf("CheckWritable(%q): got %v, want %v", c.path, err, c.want)
			continue
		}
		checkMessage(t, err)
		if werr := WriteFile(c.path, goldens()[0].a); werr == nil || werr.Error() != err.Error() {
			t.Errorf("WriteFile(%q) = %v, CheckWritable gave %v", c.path, werr, err)
		}
	}

	// A link into a directory where no file can be created.
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked")
		mkdir(t, locked)
		if err := os.Chmod(locked, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		link := filepath.Join(dir, "tolocked")
		symlink(t, "locked/x.npy", link)
		err := CheckWritable(link)
		if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "cannot create a temporary file in "+locked) {
			t.Errorf("unwritable directory: got %v", err)
		}
		os.Remove(link)
	}

	if after := listDir(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("directory changed from %v to %v", before, after)
	}
	if names := listDir(t, sub); len(names) != 0 {
		t.Errorf("sub holds %v", names)
	}
	if b, _ := os.ReadFile(existing); string(b) != "old" {
		t.Errorf("existing file changed to %q", b)
	}
}

// countdownCtx is a context cancelled by the n-th call of its Err method,
// so that a test can stop a write at a given check.
type countdownCtx struct {
	context.Context
	cancel   context.CancelFunc
	n, calls int
	onCancel func()
}

func newCountdownCtx(n int, onCancel func()) *countdownCtx {
	ctx, cancel := context.WithCancel(context.Background())
	return &countdownCtx{Context: ctx, cancel: cancel, n: n, onCancel: onCancel}
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls == c.n {
		if c.onCancel != nil {
			c.onCancel()
		}
		c.cancel()
	}
	return c.Context.Err()
}

func TestWriteFileContextCancel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.npy")
	old := []byte("precious")
	a := &Array{Shape: []int{1 << 20}, Data: testData(Float32, 1<<20)} // 4 MiB, 64 chunks

	// How many checks does a whole write make?
	counter := newCountdownCtx(-1, nil)
	if err := WriteFileContext(counter, path, a); err != nil {
		t.Fatal(err)
	}
	checkHolds(t, path, a)
	checks := counter.calls
	if checks < 60 {
		t.Fatalf("a write of 64 chunks checked its context %d times", checks)
	}

	// Cancel in the middle of the data, and at the very last check,
	// before the rename.
	for _, at := range []int{1, 10, checks} {
		if err := os.WriteFile(path, old, 0o600); err != nil {
			t.Fatal(err)
		}
		var tmpSize int64 = -1
		ctx := newCountdownCtx(at, func() {
			for _, name := range listDir(t, dir) {
				if strings.HasPrefix(name, ".out.npy.tmp-") {
					if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
						tmpSize = fi.Size()
					}
				}
			}
		})
		err := WriteFileContext(ctx, path, a)
		if !errors.Is(err, context.Canceled) || err.Error() != "npy: "+path+": write stopped: context canceled" {
			t.Fatalf("cancelled at check %d: got %v", at, err)
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				t.Errorf("error %q wraps %v", err, s)
			}
		}
		switch {
		case at == 1 && tmpSize != -1:
			t.Errorf("cancelled before starting, yet a temporary file existed")
		case at == 10 && tmpSize <= 0:
			t.Errorf("cancelled at check 10: temporary file size %d, want a write in progress", tmpSize)
		case at == checks && tmpSize != 128+4<<20:
			t.Errorf("cancelled at the last check: temporary file size %d, want all the data", tmpSize)
		}
		if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out.npy"}) {
			t.Errorf("cancelled at check %d: directory holds %v", at, names)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, old) {
			t.Errorf("cancelled at check %d: existing file changed", at)
		}
	}

	// A deadline is reported as such.
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	if err := WriteFileContext(ctx, path, a); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired deadline: got %v", err)
	}
}
