//go:build linux && amd64 && !noasm

package gemm

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestCurrentCPU checks the CPU number read from the segment limit
// against the getcpu system call's. The thread may move between the two
// questions, so it asks many times and wants most answers alike.
func TestCurrentCPU(t *testing.T) {
	const getcpu = 309 // amd64; the syscall package has no name for it
	same := 0
	for range 1000 {
		var cpu uint32
		if _, _, errno := syscall.RawSyscall(getcpu, uintptr(unsafe.Pointer(&cpu)), 0, 0); errno != 0 {
			t.Skipf("getcpu: %v", errno)
		}
		got := currentCPU()
		if got < 0 {
			t.Fatal("currentCPU() = -1 on linux/amd64")
		}
		if got == int(cpu) {
			same++
		}
	}
	if same < 900 {
		t.Errorf("currentCPU agreed with getcpu %d times in 1000", same)
	}
}
