package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutThroughLinks: --out follows symbolic links as documented (a
// dangling link creates its target), never replaces a device or other
// special file, and finds every problem with the destination before the
// work, with exit status 2.
func TestOutThroughLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links and device nodes")
	}
	dir := t.TempDir()
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A dangling link: the result goes to its target, and the link stays.
	target := filepath.Join(dir, "target.npy")
	dangling := link("dangling.npy", "target.npy")
	mustSucceed(t, "matmul", "--m", "3", "--n", "4", "--k", "5", "--repeat", "1", "--out", dangling)
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if fi, err := os.Stat(target); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link's target was not created: %v", err)
	}

	// A 255-byte name (the longest a file may have): the temporary file's
	// name must stay within the limit too.
	long := filepath.Join(dir, strings.Repeat("x", 251)+".npy")
	mustSucceed(t, "matmul", "--m", "2", "--repeat", "1", "--check=false", "--out", long)

	for _, c := range []struct {
		name, out, want string
	}{
		{"a link to /dev/null", link("null.npy", "/dev/null"), "not a regular file"},
		{"a FIFO", fifo(t, filepath.Join(dir, "fifo-out.npy")), "not a regular file"},
		{"a link into a missing directory", link("nowhere.npy", filepath.Join(dir, "missing", "c.npy")), "missing"},
		{"a link into an unwritable directory", link("proc.npy", "/proc/c.npy"), "proc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			// A product big enough that doing it first would show.
			stdout, stderr, code := goamp(t, nil, "matmul", "--m", "2048", "--n", "2048", "--k", "2048", "--out", c.out)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and one line naming %q\nstdout: %s", code, stderr, c.want, stdout)
			}
			if strings.Contains(stdout, "time:") || time.Since(start) > 5*time.Second {
				t.Errorf("the product was computed before the destination was refused (%v)\n%s", time.Since(start), stdout)
			}
		})
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v, %v", fi, err)
	}
	leftovers(t, dir)
}

// TestSpecialInputs: a FIFO with no writer fails at once rather than
// blocking, and a file whose header is wrong for the command is refused
// from the header, before its data is read (the data here is a sparse
// hole of gigabytes).
func TestSpecialInputs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("FIFOs and sparse files")
	}
	dir := t.TempDir()
	b := writeFile(t, dir, "b.npy", npyBytes("<f4", false, []int{4, 5}, make([]float32, 20)))
	fifo := fifo(t, filepath.Join(dir, "fifo.npy"))
	sparse := func(name string, shape []int, elems int64) string {
		p := writeFile(t, dir, name, npyBytes("<f4", false, shape, []float32{}))
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, fi.Size()+4*elems); err != nil {
			t.Skip("truncate:", err)
		}
		return p
	}
	vector := sparse("vector.npy", []int{1 << 31}, 1<<31)      // 8 GiB of zeros
	huge := sparse("huge.npy", []int{1 << 20, 1 << 16}, 1<<36) // 256 GiB of zeros
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"FIFO without a writer", []string{"matmul", "--a", fifo, "--b", b}, "fifo"},
		{"1-D operand of 8 GiB", []string{"matmul", "--a", vector, "--b", b}, "1-D"},
		{"operand larger than memory", []string{"matmul", "--a", huge, "--b", huge}, "too large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan struct{})
			var stderr string
			var code int
			go func() {
				defer close(done)
				_, stderr, code = goamp(t, nil, c.args...)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("goamp did not return")
			}
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(strings.ToLower(stderr), strings.ToLower(c.want)) {
				t.Errorf("exit %d, stderr %q; want 2 and one line naming %q", code, stderr, c.want)
			}
		})
	}
}

// TestInterruptLeavesNothing sends SIGTERM while goamp writes a large
// result: the temporary file must go, the destination stay as it was.
func TestInterruptLeavesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "c.npy")
	const previous = "an earlier result that must survive"
	caught := false
	for try := 0; try < 5 && !caught; try++ {
		if err := os.WriteFile(out, []byte(previous), 0o644); err != nil {
			t.Fatal(err)
		}
		// A 256 MiB result from a trivial product: the write is most of the run.
		cmd := exec.Command(goampBin, "matmul", "--m", "4096", "--n", "8192", "--k", "1", "--type", "float64",
			"--repeat", "1", "--check=false", "--out", out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && !caught {
			if tmp, _ := filepath.Glob(filepath.Join(dir, ".c.npy.tmp-*")); len(tmp) > 0 {
				cmd.Process.Signal(syscall.SIGTERM)
				caught = true
			}
			time.Sleep(time.Millisecond)
		}
		err := cmd.Wait()
		if !caught {
			continue // finished before the temporary file was seen: try again
		}
		// goamp ends by the signal itself, as if it had not caught it, once
		// the temporary file is gone.
		var ws syscall.WaitStatus
		if ee, ok := err.(*exec.ExitError); ok {
			ws, _ = ee.Sys().(syscall.WaitStatus)
		}
		if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			if err == nil {
				// The write finished just before the signal: try again.
				caught = false
				continue
			}
			t.Errorf("exit: %v, want death by SIGTERM", err)
		}
	}
	if !caught {
		t.Skip("never saw the temporary file: the write was too quick to interrupt")
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != previous {
		t.Errorf("the destination changed: %.40q, %v", got, err)
	}
	leftovers(t, dir)
}

// fifo makes a FIFO at path.
func fifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	return path
}

// leftovers fails t if dir holds a temporary or probe file.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") || strings.Contains(e.Name(), "probe") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

// TestDefaultsKeepTheirMeaning: the product is checked and timed over three
// runs whatever other flags are given; a single run says it was cold; a
// tile size of 0 is every kernel's default.
func TestDefaultsKeepTheirMeaning(t *testing.T) {
	out := mustSucceed(t, "matmul", "--m", "64", "--n", "48", "--k", "32")
	for _, want := range []string{"median", "of 3 runs", "check:", ": ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("matmul with size flags lacks %q:\n%s", want, out)
		}
	}
	out = mustSucceed(t, "matmul", "--m", "64", "--repeat", "1", "--check=false")
	if !strings.Contains(out, "one cold run") || strings.Contains(out, "check:") {
		t.Errorf("--repeat 1 --check=false:\n%s", out)
	}
	out = mustSucceed(t, "dot", "--n", "1000")
	if !strings.Contains(out, "of 3 runs") || !strings.Contains(out, "check:") {
		t.Errorf("dot with --n:\n%s", out)
	}
	mustSucceed(t, "matmul", "--m", "16", "--kernel", "packed", "--tile", "0")
	mustSucceed(t, "dot", "--n", "16", "--kernel", "vector", "--tile", "0")
}

// TestHelpTexts: each command's help says what it takes.
func TestHelpTexts(t *testing.T) {
	out := mustSucceed(t, "devices", "-h")
	if strings.Contains(out, "Flags:") || !strings.Contains(out, "no flags") {
		t.Errorf("devices -h:\n%s", out)
	}
	mm, dot := mustSucceed(t, "matmul", "-h"), mustSucceed(t, "dot", "-h")
	if !strings.Contains(mm, "packed") || strings.Contains(mm, "vector") {
		t.Errorf("matmul -h does not list matmul's kernels:\n%s", mm)
	}
	if !strings.Contains(dot, "vector") || strings.Contains(dot, "packed") || strings.Contains(dot, "simple") {
		t.Errorf("dot -h does not list dot's kernels:\n%s", dot)
	}
}

// TestBenchThreadsBounded: more threads than CPUs is refused at once.
func TestBenchThreadsBounded(t *testing.T) {
	start := time.Now()
	_, stderr, code := goamp(t, nil, "bench", "--threads", "100000", "--sizes", "64")
	if code != 2 || !strings.Contains(stderr, "--threads") || time.Since(start) > 5*time.Second {
		t.Errorf("--threads 100000: exit %d after %v, stderr %q", code, time.Since(start), stderr)
	}
}

// TestIgnoredSignalStaysIgnored: a signal ignored when goamp starts (nohup,
// a script's background job) does not end it.
func TestIgnoredSignalStaysIgnored(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command(sh, "-c", `trap "" HUP; exec "$0" "$@"`, goampBin,
		"matmul", "--m", "2048", "--n", "2048", "--k", "2048", "--type", "float64", "--repeat", "4", "--check=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGHUP)
	if err := cmd.Wait(); err != nil {
		t.Errorf("goamp with SIGHUP ignored, sent SIGHUP: %v, want success", err)
	}
}
