package atomicfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// listDir returns the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// checkHolds checks that path is a regular file holding content.
func checkHolds(t *testing.T, path, content string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != content {
		t.Errorf("%s holds %.40q, %v; want %.40q", path, b, err, content)
	}
}

// writeString returns a Write callback writing s.
func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// checkError checks that err is an *Error naming path, wrapping want and
// saying msg after the path.
func checkError(t *testing.T, err error, path string, want error, msg string) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || !errors.Is(err, want) || e.Path != path || e.Msg != msg {
		t.Errorf("got %#v (%v), want an *Error for %q wrapping %v, saying %q", err, err, path, want, msg)
		return
	}
	text := msg
	if path != "" {
		text = path + ": " + msg
	}
	if err.Error() != text {
		t.Errorf("message %q, want %q", err, text)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := Write(context.Background(), path, writeString("new")); err != nil {
		t.Fatal(err)
	}
	checkHolds(t, path, "new")

	// Replacing a file: new content, permissions 0644 whatever the old
	// file had.
	writeFile(t, path, "old")
	if err := Write(context.Background(), path, writeString("newer")); err != nil {
		t.Fatal(err)
	}
	checkHolds(t, path, "newer")
	if fi, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Errorf("permissions %v, %v; want 0644", fi.Mode().Perm(), err)
	}
	if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out.txt"}) {
		t.Errorf("directory holds %v", names)
	}

	// A name without a directory is in the working directory.
	t.Chdir(dir)
	if err := Write(context.Background(), "rel.txt", writeString("rel")); err != nil {
		t.Fatal(err)
	}
	checkHolds(t, filepath.Join(dir, "rel.txt"), "rel")
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	sep := string(filepath.Separator)
	mkdir(t, filepath.Join(dir, "sub", "deeper"))
	mkdir(t, filepath.Join(dir, "other"))
	mkdir(t, filepath.Join(dir, "real", "deep"))
	mkdir(t, filepath.Join(dir, "x"))
	writeFile(t, filepath.Join(dir, "existing"), "")
	symlink(t, "target", filepath.Join(dir, "dangling"))
	symlink(t, "existing", filepath.Join(dir, "toexisting"))
	symlink(t, "../other/t", filepath.Join(dir, "sub", "l2"))
	symlink(t, "../l2", filepath.Join(dir, "sub", "deeper", "l1"))
	symlink(t, "t", filepath.Join(dir, "real", "l"))
	symlink(t, "../real/deep", filepath.Join(dir, "x", "b"))
	symlink(t, filepath.Join(dir, "other", "abs"), filepath.Join(dir, "abs"))

	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "new"), filepath.Join(dir, "new")},
		{filepath.Join(dir, "existing"), filepath.Join(dir, "existing")},
		{filepath.Join(dir, "toexisting"), filepath.Join(dir, "existing")},
		// A dangling link resolves to the file it names.
		{filepath.Join(dir, "dangling"), filepath.Join(dir, "target")},
		// A chain, each target relative to its own link's directory.
		{filepath.Join(dir, "sub", "deeper", "l1"), strings.Join([]string{dir, "sub", "deeper", "..", "..", "other", "t"}, sep)},
		// A link's directory is taken as written: in x/b/../l, with b a
		// link to real/deep, "b/.." is real, not x.
		{strings.Join([]string{dir, "x", "b", "..", "l"}, sep), strings.Join([]string{dir, "x", "b", "..", "t"}, sep)},
		{filepath.Join(dir, "abs"), filepath.Join(dir, "other", "abs")},
	} {
		got, err := Resolve(c.path)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}

	// Writing through the cases that need the system's path resolution.
	for _, c := range []struct{ path, file string }{
		{filepath.Join(dir, "dangling"), filepath.Join(dir, "target")},
		{filepath.Join(dir, "sub", "deeper", "l1"), filepath.Join(dir, "other", "t")},
		{strings.Join([]string{dir, "x", "b", "..", "l"}, sep), filepath.Join(dir, "real", "t")},
	} {
		if err := Write(context.Background(), c.path, writeString(c.path)); err != nil {
			t.Fatal(err)
		}
		checkHolds(t, c.file, c.path)
		if fi, err := os.Lstat(c.path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link %s was replaced", c.path)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "x", "t")); err == nil {
		t.Error("the link's directory was cleaned lexically")
	}
}

// TestErrors: every destination Write refuses is refused by Resolve and
// Check too, with the same error, and nothing is created.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	loop1, loop2 := filepath.Join(dir, "loop1"), filepath.Join(dir, "loop2")
	symlink(t, "loop2", loop1)
	symlink(t, "loop1", loop2)
	symlink(t, "missing/t", filepath.Join(dir, "nodir"))
	mkdir(t, filepath.Join(dir, "d"))
	symlink(t, "d", filepath.Join(dir, "todir"))
	existing := filepath.Join(dir, "existing")
	writeFile(t, existing, "old")
	before := listDir(t, dir)

	type errCase struct {
		path     string
		resolved bool // Resolve succeeds; Check and Write fail later
		want     error
		msg      string
	}
	cases := []errCase{
		{"", false, os.ErrInvalid, "empty file name"},
		{loop1, false, errLinkLoop, "more than 40 symbolic links in a row: " + errLinkLoop.Error()},
		{filepath.Join(dir, "d"), false, ErrIsDirectory, "is a directory"},
		{filepath.Join(dir, "d") + string(filepath.Separator), false, ErrIsDirectory, "is a directory"},
		{filepath.Join(dir, "todir"), false, ErrIsDirectory, "resolves to " + filepath.Join(dir, "d") + ", a directory"},
		{filepath.Join(dir, "nodir"), true, os.ErrNotExist, ""},
		{filepath.Join(dir, "no", "x"), true, os.ErrNotExist, ""},
	}
	if runtime.GOOS != "windows" { // where a file below a file is just missing
		cases = append(cases, errCase{existing + string(filepath.Separator) + "x", false, syscall.ENOTDIR, ""})
	}
	for _, c := range cases {
		_, rerr := Resolve(c.path)
		cerr := Check(c.path)
		werr := Write(context.Background(), c.path, func(io.Writer) error {
			t.Errorf("%q: the callback ran", c.path)
			return nil
		})
		if c.msg != "" {
			checkError(t, werr, c.path, c.want, c.msg)
		} else if !errors.Is(werr, c.want) || !strings.HasPrefix(werr.Error(), c.path+": ") {
			t.Errorf("Write(%q) = %v, want %v", c.path, werr, c.want)
		}
		if werr == nil || cerr == nil || cerr.Error() != werr.Error() {
			t.Errorf("Check(%q) = %v, Write gave %v", c.path, cerr, werr)
		}
		if c.resolved != (rerr == nil) || rerr != nil && rerr.Error() != werr.Error() {
			t.Errorf("Resolve(%q) = %v, Write gave %v", c.path, rerr, werr)
		}
	}
	if err := Write(context.Background(), filepath.Join(dir, "nodir"), nil); !strings.Contains(err.Error(), "cannot create a temporary file in "+filepath.Join(dir, "missing")) {
		t.Errorf("a missing directory: got %v", err)
	}
	if after := listDir(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("directory changed from %v to %v", before, after)
	}
	if names := listDir(t, filepath.Join(dir, "d")); len(names) != 0 {
		t.Errorf("created %v", names)
	}
	checkHolds(t, existing, "old")
}

// TestLongNames: a name of 255 bytes, the most a file may have, gets a
// temporary name within the limit, cut at a character boundary.
func TestLongNames(t *testing.T) {
	dir := t.TempDir()
	var tmpNames []string
	rename = func(from, to string) error {
		tmpNames = append(tmpNames, filepath.Base(from))
		return os.Rename(from, to)
	}
	defer func() { rename = os.Rename }()
	for _, base := range []string{
		strings.Repeat("a", 251) + ".txt",        // 255 bytes
		strings.Repeat("é", 125) + "x.txt",       // 255 bytes, 2-byte runes across the cut
		"ab日" + strings.Repeat("語", 82) + ".txt", // 255 bytes, 3-byte runes
	} {
		if len(base) != 255 {
			t.Fatalf("test name has %d bytes", len(base))
		}
		path := filepath.Join(dir, base)
		if err := Check(path); err != nil {
			t.Errorf("Check: %v", err)
		}
		if err := Write(context.Background(), path, writeString(base)); err != nil {
			t.Fatalf("%d-byte name: %v", len(base), err)
		}
		checkHolds(t, path, base)
		tmp := tmpNames[len(tmpNames)-1]
		prefix, _, _ := strings.Cut(tmp, ".tmp-")
		if len(tmp) > 255 || !utf8.ValidString(tmp) || !strings.HasPrefix(prefix, ".") || !strings.HasPrefix(base, prefix[1:]) || len(prefix) < 90 {
			t.Errorf("temporary name %q (%d bytes) for %q", tmp, len(tmp), base)
		}
		if names := listDir(t, dir); !reflect.DeepEqual(names, []string{base}) {
			t.Errorf("directory holds %v", names)
		}
		os.Remove(path)
	}
	// Short names are kept whole.
	for _, base := range []string{"a.txt", strings.Repeat("b", 100)} {
		if got, want := tempPattern(base), "."+base+".tmp-*"; got != want {
			t.Errorf("tempPattern(%q) = %q, want %q", base, got, want)
		}
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

func TestWriteCancel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	const chunks, chunk = 16, 1 << 10
	content := strings.Repeat("x", chunks*chunk)
	// write writes content in chunks; with ignore, it goes on whatever
	// the writes return.
	write := func(ignore bool) func(io.Writer) error {
		return func(w io.Writer) error {
			for i := 0; i < chunks; i++ {
				if _, err := io.WriteString(w, content[i*chunk:(i+1)*chunk]); err != nil && !ignore {
					return errors.New("writing: " + err.Error())
				}
			}
			return nil
		}
	}
	renamed := false
	rename = func(from, to string) error { renamed = true; return os.Rename(from, to) }
	defer func() { rename = os.Rename }()

	// How many checks does a whole write make? One before the temporary
	// file, one a write, one before the rename.
	counter := newCountdownCtx(-1, nil)
	if err := Write(counter, path, write(false)); err != nil {
		t.Fatal(err)
	}
	checkHolds(t, path, content)
	checks := counter.calls
	if checks != chunks+2 {
		t.Fatalf("a write of %d chunks checked its context %d times", chunks, checks)
	}

	for _, ignore := range []bool{false, true} {
		for _, at := range []int{1, 2, 5, checks} {
			writeFile(t, path, "precious")
			renamed = false
			tmpSize := int64(-1)
			ctx := newCountdownCtx(at, func() {
				for _, name := range listDir(t, dir) {
					if strings.HasPrefix(name, ".out.tmp-") {
						if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
							tmpSize = fi.Size()
						}
					}
				}
			})
			err := Write(ctx, path, write(ignore))
			checkError(t, err, path, context.Canceled, "write stopped: context canceled")
			if want := int64(at-2) * chunk; at == 1 && tmpSize != -1 || at > 1 && tmpSize != want {
				t.Errorf("cancelled at check %d: temporary file of %d bytes, want %d", at, tmpSize, want)
			}
			if renamed {
				t.Errorf("cancelled at check %d: renamed anyway", at)
			}
			if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out"}) {
				t.Errorf("cancelled at check %d: directory holds %v", at, names)
			}
			checkHolds(t, path, "precious")
		}
	}

	// A deadline is reported as such.
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	if err := Write(ctx, path, write(false)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired deadline: got %v", err)
	}
}

// TestWriteFailures: a failure after the temporary file is made (from the
// callback, a panic in it, the rename) removes it and leaves the
// destination as it was.
func TestWriteFailures(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep")
	writeFile(t, path, "precious")
	check := func(what string) {
		t.Helper()
		checkHolds(t, path, "precious")
		if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"keep"}) {
			t.Errorf("%s: directory holds %v", what, names)
		}
	}

	// The callback's error is returned as it is.
	boom := errors.New("boom")
	err := Write(context.Background(), path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if err != boom {
		t.Errorf("failing callback: got %v, want its error", err)
	}
	check("failing callback")

	func() {
		defer func() {
			if r := recover(); r != boom {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		Write(context.Background(), path, func(w io.Writer) error {
			io.WriteString(w, "partial")
			panic(boom)
		})
	}()
	check("panicking callback")

	refused := errors.New("rename refused")
	rename = func(string, string) error { return refused }
	err = Write(context.Background(), path, writeString("new"))
	rename = os.Rename
	checkError(t, err, path, refused, "rename: rename refused")
	check("failing rename")
}

// TestWriteDestinationChanged: a directory put at the destination during
// the write is not replaced.
func TestWriteDestinationChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	writeFile(t, path, "old")
	err := Write(context.Background(), path, func(w io.Writer) error {
		if err := os.Remove(path); err != nil {
			return err
		}
		if err := os.Mkdir(path, 0o755); err != nil {
			return err
		}
		_, err := io.WriteString(w, "new")
		return err
	})
	checkError(t, err, path, ErrIsDirectory, "is a directory")
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("the directory was replaced: %v", err)
	}
	if names := listDir(t, dir); !reflect.DeepEqual(names, []string{"out"}) {
		t.Errorf("directory holds %v", names)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "e")
	writeFile(t, existing, "old")
	mkdir(t, filepath.Join(dir, "sub"))
	dangling := filepath.Join(dir, "dangling")
	symlink(t, "sub/new", dangling)
	before := listDir(t, dir)

	for _, p := range []string{existing, filepath.Join(dir, "new"), dangling} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%s): %v", p, err)
		}
	}

	// A link into a directory where no file can be created.
	if os.Geteuid() != 0 && runtime.GOOS != "windows" {
		locked := filepath.Join(dir, "locked")
		mkdir(t, locked)
		if err := os.Chmod(locked, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		link := filepath.Join(dir, "tolocked")
		symlink(t, "locked/x", link)
		err := Check(link)
		if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "cannot create a temporary file in "+locked) {
			t.Errorf("unwritable directory: got %v", err)
		}
		os.Remove(link)
		os.Remove(locked)
	}

	if after := listDir(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("directory changed from %v to %v", before, after)
	}
	if names := listDir(t, filepath.Join(dir, "sub")); len(names) != 0 {
		t.Errorf("sub holds %v", names)
	}
	checkHolds(t, existing, "old")
}
