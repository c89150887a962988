package gemm

import "testing"

// TestCPUMask: remove, has and empty, at the ends of the range and past
// them.
func TestCPUMask(t *testing.T) {
	var m cpuMask
	if !m.empty() {
		t.Fatal("the zero mask is not empty")
	}
	for i := range m {
		m[i] = ^uint64(0)
	}
	gone := []int{0, 63, 64, 700, maxCPUWorkspaces - 1}
	for _, cpu := range append(gone, -1, maxCPUWorkspaces) {
		m.remove(cpu)
	}
	for cpu, want := range map[int]bool{0: false, 1: true, 63: false, 64: false, 65: true, 700: false, 701: true, maxCPUWorkspaces - 1: false, -1: false, maxCPUWorkspaces: false} {
		if m.has(cpu) != want {
			t.Errorf("has(%d) = %v, want %v", cpu, !want, want)
		}
	}
	for cpu := range maxCPUWorkspaces {
		m.remove(cpu)
	}
	if !m.empty() {
		t.Errorf("not empty after removing every CPU: %x", m)
	}
}
