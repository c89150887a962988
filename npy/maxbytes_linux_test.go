package npy

import (
	"testing"
	"testing/fstest"

	"golang.org/x/sys/unix"
)

func TestCgroupLimit(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, c := range []struct {
		name string
		fs   fstest.MapFS
		want int64
	}{
		{"nothing", fstest.MapFS{}, -1},
		{"v2 namespaced", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("1073741824\n"),
		}, 1 << 30},
		{"v2 unlimited", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		}, -1},
		{"v2 nested, ancestor smallest", fstest.MapFS{
			"proc/self/cgroup":                   file("0::/a/b\n"),
			"sys/fs/cgroup/a/memory.max":         file("5000\n"),
			"sys/fs/cgroup/a/b/memory.max":       file("max\n"),
			"sys/fs/cgroup/unrelated/memory.max": file("10\n"),
		}, 5000},
		{"v2 nested, own smallest", fstest.MapFS{
			"proc/self/cgroup":             file("0::/a/b\n"),
			"sys/fs/cgroup/a/memory.max":   file("5000\n"),
			"sys/fs/cgroup/a/b/memory.max": file("4000\n"),
		}, 4000},
		{"v1", fstest.MapFS{
			"proc/self/cgroup":                                 file("5:cpu,cpuacct:/x\n4:memory:/box/1\n0::/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":       file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/box/1/memory.limit_in_bytes": file("123456789\n"),
		}, 123456789},
		{"garbage", fstest.MapFS{
			"proc/self/cgroup":         file("nonsense\n::\n"),
			"sys/fs/cgroup/memory.max": file("-5\n"),
		}, -1},
		{"no /proc", fstest.MapFS{
			"sys/fs/cgroup/memory.max": file("777"),
		}, 777},
	} {
		if got := cgroupLimit(c.fs); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

func TestDefaultMaxBytesLinux(t *testing.T) {
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		t.Skip(err)
	}
	ram := int64(info.Totalram) * int64(max(info.Unit, 1))
	if n := DefaultMaxBytes(); n <= 0 || n > ram {
		t.Errorf("DefaultMaxBytes() = %d, physical memory %d", n, ram)
	}
}
