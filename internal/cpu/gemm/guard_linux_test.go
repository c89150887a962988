package gemm

import (
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns n elements whose last one ends where an inaccessible
// page begins, so that a kernel reading or writing past them faults. It
// falls back to make when the pages cannot be had.
func guarded[T Element](t *testing.T, n int) []T {
	size := int(unsafe.Sizeof(T(0))) * n
	page := syscall.Getpagesize()
	body := (size + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, body+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]T, n)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[body:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[body-size])), n)
}
