package npy

import (
	"bufio"
	"bytes"
	"io/fs"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// machineMemory returns the memory the process can use, or -1 if unknown.
func machineMemory() int64 {
	n := int64(-1)
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) == nil {
		unit := uint64(info.Unit)
		if unit == 0 { // kernels before 2.3.23 count in bytes
			unit = 1
		}
		total := uint64(info.Totalram)
		if total > math.MaxInt64/unit {
			n = math.MaxInt64
		} else {
			n = int64(total * unit)
		}
	}
	if c := cgroupLimit(os.DirFS("/")); c > 0 && (n < 0 || c < n) {
		n = c
	}
	return n
}

// cgroupLimit returns the smallest memory limit set on the process's cgroup
// or its ancestors, read from fsys (the root file system), or -1 if there
// is none. Inside a container with its own cgroup namespace the process's
// cgroup is the root of /sys/fs/cgroup; without one, /proc/self/cgroup
// names it below that root. Both places are looked at.
func cgroupLimit(fsys fs.FS) int64 {
	limit := int64(-1)
	consider := func(name string) {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return
		}
		// "max" (v2) means no limit and fails to parse, as it should.
		v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		if err == nil && v > 0 && (limit < 0 || v < limit) {
			limit = v
		}
	}
	walk := func(root, cg, file string) {
		for p := path.Clean("/" + cg); ; p = path.Dir(p) {
			consider(path.Join(root, p, file))
			if p == "/" {
				return
			}
		}
	}
	const v2, v1 = "sys/fs/cgroup", "sys/fs/cgroup/memory"
	walk(v2, "/", "memory.max")
	walk(v1, "/", "memory.limit_in_bytes")
	b, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return limit
	}
	// Lines are "hierarchy-ID:controllers:path"; v2's is "0::path".
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		id, rest, ok1 := strings.Cut(sc.Text(), ":")
		controllers, cg, ok2 := strings.Cut(rest, ":")
		switch {
		case !ok1 || !ok2:
		case id == "0" && controllers == "":
			walk(v2, cg, "memory.max")
		case strings.Contains(","+controllers+",", ",memory,"):
			walk(v1, cg, "memory.limit_in_bytes")
		}
	}
	return limit
}
