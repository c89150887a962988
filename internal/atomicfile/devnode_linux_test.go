package atomicfile

import "syscall"

// mknodTwin makes at path a character device node for the same device as
// the node of.
func mknodTwin(path, of string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(of, &st); err != nil {
		return err
	}
	return syscall.Mknod(path, syscall.S_IFCHR|0o666, int(st.Rdev))
}
