//go:build unix

package npy

import (
	"os"
	"syscall"
)

// openRead opens path for reading without blocking in open, which for a
// FIFO with no writer would wait forever.
func openRead(path string) (*os.File, error) {
	var fd int
	var err error
	for {
		// O_NOCTTY: opening a terminal to read must not make it the
		// process's controlling terminal.
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	// Non-blocking mode was for open only: reads must wait for a slow
	// writer, not fail with EAGAIN. A blocking descriptor also keeps the
	// FIFO out of the runtime poller, which on darwin misses a FIFO's last
	// writer closing.
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
