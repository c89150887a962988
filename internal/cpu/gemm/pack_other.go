//go:build noasm || !amd64

package gemm

// transposeBlocks leaves all of interleave's work to its loops on this
// build.
func transposeBlocks[T Element](dst []T, r int, src []T, ld, rows, kc int) (i0, p0 int) {
	return 0, 0
}

// copyRows leaves packing B to the loops on this build.
func copyRows[T Element](dst, src []T, ld, count, w int) bool { return false }
