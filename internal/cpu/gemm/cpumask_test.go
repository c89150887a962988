package gemm

import "testing"

// TestCPUMask: add, remove, has and empty, at the ends of the range and
// past them.
func TestCPUMask(t *testing.T) {
	var m cpuMask
	if !m.empty() {
		t.Fatal("the zero mask is not empty")
	}
	for _, cpu := range []int{0, 63, 64, 700, maxCPUWorkspaces - 1, -1, maxCPUWorkspaces} {
		m.add(cpu)
	}
	for cpu, want := range map[int]bool{0: true, 1: false, 63: true, 64: true, 65: false, 700: true, maxCPUWorkspaces - 1: true, -1: false, maxCPUWorkspaces: false} {
		if m.has(cpu) != want {
			t.Errorf("has(%d) = %v, want %v", cpu, !want, want)
		}
	}
	for _, cpu := range []int{0, 63, 64, 700, maxCPUWorkspaces - 1, -1, maxCPUWorkspaces} {
		m.remove(cpu)
	}
	if !m.empty() {
		t.Errorf("not empty after removing all it held: %x", m)
	}
}
