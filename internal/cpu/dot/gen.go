package dot

// The kernels in dot_amd64.s and their Go declarations are written by the
// avo program in ../_asm/dot. CI reruns it and fails if they differ.
//go:generate sh -c "cd ../_asm && go run ./dot -out ../dot/dot_amd64.s -stubs ../dot/dot_stubs_amd64.go -pkg dot"
