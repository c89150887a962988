//go:build unix

package atomicfile

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// TestNotRegular: a device, a FIFO or a socket, named or reached through a
// link, is refused by Resolve, Check and Write with ErrNotRegular, and left
// as it was.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	var cases []struct{ path, msg string }
	add := func(path, msg string) { cases = append(cases, struct{ path, msg string }{path, msg}) }

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal("mkfifo:", err)
	}
	add(fifo, "is a FIFO (named pipe), not a regular file")
	symlink(t, "fifo", filepath.Join(dir, "tofifo"))
	add(filepath.Join(dir, "tofifo"), "resolves to "+fifo+", a FIFO (named pipe), not a regular file")

	sock := filepath.Join(dir, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
		add(sock, "is a socket, not a regular file")
	}

	// A device node. As root, replacing one is possible, so the test
	// makes its own twin of /dev/null rather than risk the real one.
	null := filepath.Join(dir, "null")
	if os.Geteuid() != 0 {
		null = "/dev/null"
	} else if err := mknodTwin(null, "/dev/null"); err != nil {
		t.Log("no device node:", err)
		null = ""
	}
	if null != "" {
		if null != "/dev/null" {
			add(null, "is a character device, not a regular file")
		}
		symlink(t, null, filepath.Join(dir, "tonull"))
		add(filepath.Join(dir, "tonull"), "resolves to "+null+", a character device, not a regular file")
	}

	before := listDir(t, dir)
	for _, c := range cases {
		fi0, err := os.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		werr := Write(context.Background(), c.path, func(io.Writer) error {
			t.Errorf("%s: the callback ran", c.path)
			return nil
		})
		checkError(t, werr, c.path, ErrNotRegular, c.msg)
		if errors.Is(werr, ErrIsDirectory) {
			t.Errorf("%v wraps ErrIsDirectory", werr)
		}
		if err := Check(c.path); err == nil || werr == nil || err.Error() != werr.Error() {
			t.Errorf("Check = %v, Write gave %v", err, werr)
		}
		if _, err := Resolve(c.path); err == nil || werr == nil || err.Error() != werr.Error() {
			t.Errorf("Resolve = %v, Write gave %v", err, werr)
		}
		if fi, err := os.Lstat(c.path); err != nil || fi.Mode() != fi0.Mode() || !os.SameFile(fi, fi0) {
			t.Errorf("%s was replaced", c.path)
		}
	}
	if after := listDir(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("directory changed from %v to %v", before, after)
	}
}
