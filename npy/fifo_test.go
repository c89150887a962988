//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package npy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a FIFO at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("cannot make a FIFO:", err)
	}
}

// within runs f and fails the test if it takes more than a second; unblock
// is called to let a stuck f return.
func within(t *testing.T, what string, f func() error, unblock func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Second):
		unblock()
		<-done
		t.Fatalf("%s blocked", what)
		return nil
	}
}

func TestReadFileFIFONoWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo.npy")
	mkfifo(t, path)
	// Should open block after all, a writer that opens and closes at
	// once releases it.
	unblock := func() {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	err := within(t, "ReadFile", func() error { _, err := ReadFile(path); return err }, unblock)
	want := "npy: " + path + ": empty input (a FIFO or pipe with no writer?)"
	if !errors.Is(err, ErrNotNPY) || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	checkMessage(t, err)
	err = within(t, "Open", func() error { _, err := Open(path, nil); return err }, unblock)
	if !errors.Is(err, ErrNotNPY) {
		t.Fatalf("Open: got %v", err)
	}
}

func TestReadFileFIFOWithWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fifo.npy")
	mkfifo(t, path)
	a := &Array{Shape: []int{300, 100}, Data: testData(Float64, 30000)} // 240 kB: more than a pipe holds
	var file bytes.Buffer
	if err := Write(&file, a); err != nil {
		t.Fatal(err)
	}

	// The writer is there before the read starts, as with a shell's
	// pipeline. A reader held open meanwhile (reading nothing) lets the
	// writer open the FIFO without waiting.
	hold, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Close()
		// A slow writer: ReadFile must wait, not fail.
		b := file.Bytes()
		w.Write(b[:100])
		time.Sleep(100 * time.Millisecond)
		w.Write(b[100:50000])
		time.Sleep(100 * time.Millisecond)
		w.Write(b[50000:])
	}()
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameArray(got, a) {
		t.Fatal("read the wrong array from the FIFO")
	}
}

func TestReadFileDevFdPipe(t *testing.T) {
	// What bash's process substitution <(cmd) and /dev/stdin from a pipe
	// hand over: /dev/fd/N for a pipe that has its writer.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		w.Close()
		t.Skip("no /dev/fd here:", err)
	}
	g := goldens()[0]
	go func() {
		defer w.Close()
		w.Write(g.file[:50])
		time.Sleep(50 * time.Millisecond)
		w.Write(g.file[50:])
	}()
	got, err := ReadFile(path)
	if err != nil || !sameArray(got, g.a) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestWriteFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	a := goldens()[0].a
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	var cases []struct{ path, what string }
	add := func(path, what string) { cases = append(cases, struct{ path, what string }{path, what}) }
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
	if os.Geteuid() == 0 {
		null := filepath.Join(dir, "null")
		if mknodTwin(null, "/dev/null") == nil {
			add(null, "is a character device, not a regular file")
			symlink(t, null, filepath.Join(dir, "tonull"))
			add(filepath.Join(dir, "tonull"), "resolves to "+null+", a character device, not a regular file")
		}
	} else {
		add("/dev/null", "is a character device, not a regular file")
		symlink(t, "/dev/null", filepath.Join(dir, "tonull"))
		add(filepath.Join(dir, "tonull"), "resolves to /dev/null, a character device, not a regular file")
	}

	before := listDir(t, dir)
	for _, c := range cases {
		t.Logf("%s: %s", c.path, c.what)
		fi0, _ := os.Lstat(c.path)
		err := WriteFile(c.path, a)
		want := "npy: " + c.path + ": " + c.what
		if !errors.Is(err, ErrNotRegular) || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
			continue
		}
		checkMessage(t, err)
		if err2 := CheckWritable(c.path); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("CheckWritable = %v, WriteFile gave %v", err2, err)
		}
		if fi, err := os.Lstat(c.path); err != nil || fi.Mode() != fi0.Mode() || !os.SameFile(fi, fi0) {
			t.Errorf("%s was replaced", c.path)
		}
	}
	if after := listDir(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("directory changed from %v to %v", before, after)
	}
	for _, name := range before {
		if strings.Contains(name, ".tmp-") {
			t.Errorf("temporary file %s left", name)
		}
	}
}
