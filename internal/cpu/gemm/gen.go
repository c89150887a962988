package gemm

// The micro-kernels in kernel_amd64.s and their Go declarations are written
// by the avo program in ../_asm/gemm. CI reruns it and fails if they differ.
//go:generate sh -c "cd ../_asm && go run ./gemm -out ../gemm/kernel_amd64.s -stubs ../gemm/kernel_stubs_amd64.go -pkg gemm"
