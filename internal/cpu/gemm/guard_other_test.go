//go:build !linux

package gemm

import "testing"

// guarded returns n elements; on Linux they end where an inaccessible page
// begins (guard_linux_test.go), here they are plain.
func guarded[T Element](t *testing.T, n int) []T { return make([]T, n) }
