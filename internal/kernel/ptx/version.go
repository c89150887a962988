package ptx

import "fmt"

// driverPTX pairs each CUDA release with the PTX ISA version it introduced,
// oldest first: a driver of that release JIT-compiles PTX up to that
// version. Source: the release history table of the PTX ISA 9.1 manual
// (docs.nvidia.com/cuda/parallel-thread-execution, "Release Notes"), as
// NVIDIA's cuda-python also encodes it (cuda/bindings/utils/_ptx_utils.py).
// CUDA 12.6 brought no new PTX version (8.5 came with 12.5, 8.6 with 12.7).
var driverPTX = []struct {
	cuda [2]int
	ptx  [2]int
}{
	{[2]int{1, 0}, [2]int{1, 0}},
	{[2]int{1, 1}, [2]int{1, 1}},
	{[2]int{2, 0}, [2]int{1, 2}},
	{[2]int{2, 1}, [2]int{1, 3}},
	{[2]int{2, 2}, [2]int{1, 4}},
	{[2]int{3, 0}, [2]int{2, 0}},
	{[2]int{3, 1}, [2]int{2, 1}},
	{[2]int{3, 2}, [2]int{2, 2}},
	{[2]int{4, 0}, [2]int{2, 3}},
	{[2]int{4, 1}, [2]int{3, 0}},
	{[2]int{5, 0}, [2]int{3, 1}},
	{[2]int{5, 5}, [2]int{3, 2}},
	{[2]int{6, 0}, [2]int{4, 0}},
	{[2]int{6, 5}, [2]int{4, 1}},
	{[2]int{7, 0}, [2]int{4, 2}},
	{[2]int{7, 5}, [2]int{4, 3}},
	{[2]int{8, 0}, [2]int{5, 0}},
	{[2]int{9, 0}, [2]int{6, 0}},
	{[2]int{9, 1}, [2]int{6, 1}},
	{[2]int{9, 2}, [2]int{6, 2}},
	{[2]int{10, 0}, [2]int{6, 3}},
	{[2]int{10, 1}, [2]int{6, 4}},
	{[2]int{10, 2}, [2]int{6, 5}},
	{[2]int{11, 0}, [2]int{7, 0}},
	{[2]int{11, 1}, [2]int{7, 1}},
	{[2]int{11, 2}, [2]int{7, 2}},
	{[2]int{11, 3}, [2]int{7, 3}},
	{[2]int{11, 4}, [2]int{7, 4}},
	{[2]int{11, 5}, [2]int{7, 5}},
	{[2]int{11, 6}, [2]int{7, 6}},
	{[2]int{11, 7}, [2]int{7, 7}},
	{[2]int{11, 8}, [2]int{7, 8}},
	{[2]int{12, 0}, [2]int{8, 0}},
	{[2]int{12, 1}, [2]int{8, 1}},
	{[2]int{12, 2}, [2]int{8, 2}},
	{[2]int{12, 3}, [2]int{8, 3}},
	{[2]int{12, 4}, [2]int{8, 4}},
	{[2]int{12, 5}, [2]int{8, 5}},
	{[2]int{12, 7}, [2]int{8, 6}},
	{[2]int{12, 8}, [2]int{8, 7}},
	{[2]int{12, 9}, [2]int{8, 8}},
	{[2]int{13, 0}, [2]int{9, 0}},
	{[2]int{13, 1}, [2]int{9, 1}},
}

// VersionForDriver returns the newest PTX ISA version that a driver
// reporting cudaVersion (cuDriverGetVersion: 1000*major + 10*minor, so
// 12040 is CUDA 12.4) accepts: the version of the newest CUDA release in
// the table at or before it. A release newer than any in the table gets
// the newest known version, which its driver accepts too (drivers load
// older PTX). A version older than CUDA 1.0 gives [0, 0].
func VersionForDriver(cudaVersion int) [2]int {
	rel := [2]int{cudaVersion / 1000, cudaVersion % 1000 / 10}
	v := [2]int{}
	for _, e := range driverPTX {
		if !less(rel, e.cuda) {
			v = e.ptx
		}
	}
	return v
}

// targetPTX is the PTX ISA version that introduced each .target sm_NN
// (PTX ISA 9.1, section 11.1.2, "PTX ISA Notes"). A module naming a target
// with an older .version is rejected by the JIT, with a message that does
// not say why; Emit and Retarget say so first. sm_101 was renamed sm_110
// in PTX ISA 9.0.
var targetPTX = map[int][2]int{
	20: {2, 0}, 30: {3, 0}, 32: {4, 0}, 35: {3, 1}, 37: {4, 1},
	50: {4, 0}, 52: {4, 1}, 53: {4, 2},
	60: {5, 0}, 61: {5, 0}, 62: {5, 0},
	70: {6, 0}, 72: {6, 1}, 75: {6, 3},
	80: {7, 0}, 86: {7, 1}, 87: {7, 4}, 88: {9, 0}, 89: {7, 8},
	90: {7, 8}, 100: {8, 6}, 101: {8, 6}, 103: {8, 8}, 110: {9, 0},
	120: {8, 7}, 121: {8, 8},
}

// checkTarget reports whether the header .version v, .target sm_sm is one
// the JIT can take. Architectures missing from targetPTX (newer than this
// table) are let through: the driver is the judge of those.
func checkTarget(v [2]int, sm int) error {
	if v[0] < 1 || v[1] < 0 || sm < 10 {
		return fmt.Errorf("ptx: no such target: PTX ISA %d.%d, sm_%d", v[0], v[1], sm)
	}
	if min, ok := targetPTX[sm]; ok && less(v, min) {
		return fmt.Errorf("ptx: sm_%d needs PTX ISA %d.%d or newer, not %d.%d", sm, min[0], min[1], v[0], v[1])
	}
	return nil
}

// less orders versions (and CUDA releases) as major, then minor.
func less(a, b [2]int) bool {
	return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
}

// KnownTarget reports whether sm_NN is a target this package knows the
// PTX ISA version of: one that Retarget can safely name for a device.
func KnownTarget(sm int) bool {
	_, ok := targetPTX[sm]
	return ok
}
