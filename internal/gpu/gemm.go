package gpu

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// GemmShape is the shape of a (batched) matrix product C = alpha*op(A)*op(B)
// + beta*C on row-major matrices, as the GEMM kernels take it.
type GemmShape struct {
	// TransA makes op(A) = A^T, with A stored K x M; otherwise A is M x K.
	// TransB makes op(B) = B^T, with B stored N x K; otherwise B is K x N.
	TransA, TransB bool
	// M, N, K: op(A) is M x K, op(B) is K x N, C is M x N.
	M, N, K int
	// LDA, LDB, LDC are the row strides, in elements, of A, B and C as
	// stored: at least their number of columns (and at least 1).
	LDA, LDB, LDC int
	// Batch is the number of products (1 to 65535); product i uses the
	// matrices StrideA*i, StrideB*i and StrideC*i elements after the first.
	Batch                     int
	StrideA, StrideB, StrideC int
	// Precision is what kernels.MatmulMMA and MatmulWGMMA round the
	// operands to before they multiply them (kernels.TF32, BF16 or FP16;
	// they need one). The other techniques multiply exactly and take only
	// "".
	Precision string
	// WholeK keeps K in one piece even when the product has too few tiles
	// of C to fill the GPU (see splitK): for a panel of a larger product,
	// whose other panels run beside or right after it.
	WholeK bool
}

// maxGemmBatch is the most products one launch takes: the grid's z.
const maxGemmBatch = 65535

// check refuses shapes the kernels cannot take, before any device work.
func (s GemmShape) check() error {
	if s.M < 0 || s.N < 0 || s.K < 0 {
		return fmt.Errorf("gpu: gemm: negative size %dx%dx%d", s.M, s.N, s.K)
	}
	if s.Batch < 1 || s.Batch > maxGemmBatch {
		return fmt.Errorf("gpu: gemm: batch of %d, want 1 to %d", s.Batch, maxGemmBatch)
	}
	colsA, colsB := s.K, s.N
	if s.TransA {
		colsA = s.M
	}
	if s.TransB {
		colsB = s.K
	}
	for _, ld := range []struct {
		name     string
		ld, cols int
	}{{"lda", s.LDA, colsA}, {"ldb", s.LDB, colsB}, {"ldc", s.LDC, s.N}} {
		if ld.ld < max(1, ld.cols) {
			return fmt.Errorf("gpu: gemm: %s = %d, want at least %d", ld.name, ld.ld, max(1, ld.cols))
		}
	}
	if s.StrideA < 0 || s.StrideB < 0 || s.StrideC < 0 {
		return fmt.Errorf("gpu: gemm: negative batch stride")
	}
	// Products that wrote into one another's C would race.
	if c := (s.M-1)*s.LDC + s.N; s.Batch > 1 && s.M > 0 && s.N > 0 && s.StrideC < c {
		return fmt.Errorf("gpu: gemm: C's batch stride %d is shorter than a C (%d elements): the products would overwrite one another", s.StrideC, c)
	}
	// The kernels round M and N up to whole tiles, and add row offsets of
	// up to a tile, in 32-bit arithmetic: they need that much room below
	// 2^31.
	if s.M > maxGemmDim || s.N > maxGemmDim {
		return fmt.Errorf("gpu: gemm: %dx%d: M and N must be at most %d", s.M, s.N, maxGemmDim)
	}
	return fitsInt32(s.M, s.N, s.K, s.LDA, s.LDB, s.LDC)
}

// maxGemmDim is the largest M or N the GEMM kernels take: 2^31-1 less
// the largest tile (256).
const maxGemmDim = 1<<31 - 1 - 256

// gemmTiling is one shape of the GEMM kernels' blocks: a tile of C of bm x
// bn, threads a block, and how many blocks an SM holds at once.
type gemmTiling struct {
	shape string // as kernels.GemmSymbol names it
	// whole, if not "", is the shape of the same kernel compiled without
	// split K, for the tn products that take one slice.
	whole          string
	bm, bn         int
	threads, perSM int
	shared         int // dynamic shared memory a block, bytes (0: static only)
	kStep          int // K a step of the kernel's main loop: slices of K are multiples of it
}

// wholeOff makes GemmOn launch the kernels with split K even for products
// of one slice, for the benchmark that compares the two (GOAMP_REG128_SPLIT_ONLY=1).
var wholeOff = os.Getenv("GOAMP_REG128_SPLIT_ONLY") == "1"

// relayoutOff makes GemmOn run float32 products on their own kernels,
// never on transposed copies of their operands (see relayoutFor), for the
// benchmark that compares the two (GOAMP_REG128_NO_RELAYOUT=1).
var relayoutOff = os.Getenv("GOAMP_REG128_NO_RELAYOUT") == "1"

// relayoutTNOff keeps the copies that lead to the TMA-fed tn kernel off:
// nn, nt and tt run as they did before it (GOAMP_REG128_NO_TN_RELAYOUT=1).
var relayoutTNOff = os.Getenv("GOAMP_REG128_NO_TN_RELAYOUT") == "1"

// The products that relayoutFor takes: M*N*K of relayoutMinWork or more
// (below, the copy's launch costs more than the faster kernel saves), M*N*K
// at least relayoutMinRatio times the elements copied (the copy's traffic
// a few percent of the product's time: squares from n = 1536 on), and a
// copy of at most relayoutMaxBytes. relayoutTNMinRatio replaces
// relayoutMinRatio for the copies that lead to the TMA-fed tn kernel,
// which gains more: nn and tt with N or M of 1024 or more, nt (both
// copied) with MN/(M+N) of 1024 or more (squares from 2048), each with
// relayoutMinWork. Variables for the tests.
var (
	relayoutMinWork    = int64(1) << 31
	relayoutMinRatio   = int64(1536)
	relayoutTNMinRatio = int64(1024)
)

const relayoutMaxBytes = 1 << 30

// relayouts counts the products GemmOn ran on transposed copies of
// operands, for the tests.
var relayouts atomic.Int64

// relayout is how GemmOn runs a product: as it is, or on transposed copies
// of A, of B or of both (kernels.Transpose, into the device's workspace).
type relayout int

const (
	asItIs relayout = 0
	copyA  relayout = 1             // A (M x K) read from its copy A^T (K x M): nn runs as tn, nt as tt
	copyB  relayout = 2             // B^T (N x K) read from its copy B (K x N): tt runs as tn, nt as nn
	copyAB          = copyA | copyB // both
)

// tnReach says which copies lead product to the TMA-fed tn kernel (see
// reg128TMAFor): none unless the device runs it (device), and an operand
// that is not copied must suit TMA as it lies (a, b).
type tnReach struct{ device, a, b bool }

// tnReachFor is s's tnReach on device d with A at a and B at b.
func tnReachFor(d *Device, s GemmShape, a, b uint64) tnReach {
	return tnReach{
		device: reg128TMADevice(d),
		a:      tmaOperand(false, a, s.LDA, s.StrideA, s.Batch),
		b:      tmaOperand(false, b, s.LDB, s.StrideB, s.Batch),
	}
}

// relayoutFor returns how GemmOn runs product s of technique on element
// type elem. Where reg128's TMA-fed tn kernel runs (tn), float32 products
// of 128x128 tiles take it: nn on a copy of A, tt on a copy of B, nt on
// copies of both, as long as the copies' traffic is a small part of the
// product's (relayoutTNMinRatio). Elsewhere, reg128's float32 nt kernel
// stores both panels transposed in shared memory and runs at 0.91-0.92 of
// cuBLAS (128x128 tiles) and 0.84 (128x64 tiles, 8192 x 64 x 8192); the
// kernels of the layouts that store one panel as it comes run faster on a
// transposed copy of the smaller of A and B, the copy included: tt on A^T
// at 0.93 (n = 2048) to 0.96 (8192) (H100, goamp bench with and without
// GOAMP_REG128_NO_RELAYOUT, docs/PERFORMANCE.md). Without TMA, tn loses
// that way (0.89-0.93 against 0.91-0.94: cuBLAS's own tn is its fastest
// layout), and float64's kernels are dmma's. Panels of a larger product
// (WholeK) run as they are: their copies would take turns in the one
// workspace, where the panels are meant to run side by side.
func relayoutFor(technique, elem string, s GemmShape, tn tnReach) relayout {
	if technique != kernels.MatmulReg128 || elem != kernels.Float32 || s.WholeK || relayoutOff || s.K == 0 {
		return asItIs
	}
	if tn.device && !relayoutTNOff && tilingFor(elem, s.M, s.N).whole != "" {
		// A copy that a batch shares (batch stride 0) has no tensor map.
		copyAOK, copyBOK := s.Batch == 1 || s.StrideA > 0, s.Batch == 1 || s.StrideB > 0
		how := asItIs
		switch {
		case !s.TransA && !s.TransB && tn.b && copyAOK:
			how = copyA
		case s.TransA && s.TransB && tn.a && copyBOK:
			how = copyB
		case !s.TransA && s.TransB && copyAOK && copyBOK:
			how = copyAB
		}
		if how != asItIs && relayoutPays(s, how, relayoutTNMinRatio) {
			return how
		}
	}
	if s.TransA || !s.TransB {
		return asItIs
	}
	how := copyA
	if s.N < s.M {
		how = copyB
	}
	if !relayoutPays(s, how, relayoutMinRatio) {
		return asItIs
	}
	return how
}

// relayoutPays reports whether product s is worth running on the copies
// how asks for: M*N*K at least relayoutMinWork and ratio times the
// elements copied, and copies of at most relayoutMaxBytes.
func relayoutPays(s GemmShape, how relayout, ratio int64) bool {
	var copied int64
	if how&copyA != 0 {
		copied += int64(copiesFor(s.Batch, s.StrideA)) * int64(s.K) * int64(transposedLD(s.M))
	}
	if how&copyB != 0 {
		copied += int64(copiesFor(s.Batch, s.StrideB)) * int64(s.K) * int64(transposedLD(s.N))
	}
	work := int64(s.Batch) * int64(s.M) * int64(s.N) * int64(s.K)
	return work > 0 && work >= relayoutMinWork && work >= ratio*copied && copied*4 <= relayoutMaxBytes
}

// copiesFor is how many transposed copies a batch of products with the
// given batch stride of the copied operand needs: one when every product
// reads the same matrix (stride 0).
func copiesFor(batch, stride int) int {
	if stride == 0 {
		return 1
	}
	return batch
}

// transposeCopy is one operand's transposed copy for a product: its
// source, rows x K (A: M x K, B: N x K) with row stride ld and batch
// stride stride, and the copy, K x rows with row stride ldCopy and batch
// stride strideCopy, batch matrices from offset bytes into the workspace.
type transposeCopy struct {
	ofA                bool // A's copy, else B's
	rows               int
	src                uint64
	ld, stride         int
	ldCopy, strideCopy int
	batch              int
	offset, bytes      int
}

// relaid returns the product the kernel runs when s runs as how says (A
// at a, B at b, elements of size bytes), and the copies it reads, laid
// out one after the other (each on 256 bytes) from offset 0.
func relaid(s GemmShape, how relayout, a, b uint64, size int) (GemmShape, []transposeCopy) {
	k := s
	var out []transposeCopy
	offset := 0
	add := func(ofA bool, rows int, src uint64, ld, stride int) (ldCopy, strideCopy int) {
		ldCopy = transposedLD(rows)
		strideCopy = min(stride, 1) * s.K * ldCopy
		batch := copiesFor(s.Batch, stride)
		bytes := (batch*s.K*ldCopy*size + 255) &^ 255
		out = append(out, transposeCopy{ofA: ofA, rows: rows, src: src, ld: ld, stride: stride,
			ldCopy: ldCopy, strideCopy: strideCopy, batch: batch, offset: offset, bytes: bytes})
		offset += bytes
		return ldCopy, strideCopy
	}
	if how&copyA != 0 {
		k.LDA, k.StrideA = add(true, s.M, a, s.LDA, s.StrideA)
		k.TransA = !s.TransA
	}
	if how&copyB != 0 {
		k.LDB, k.StrideB = add(false, s.N, b, s.LDB, s.StrideB)
		k.TransB = !s.TransB
	}
	return k, out
}

// copiesBytes is the workspace the copies take.
func copiesBytes(cs []transposeCopy) int {
	n := 0
	for _, c := range cs {
		n += c.bytes
	}
	return n
}

func (r relayout) String() string {
	switch r {
	case copyA:
		return "copyA"
	case copyB:
		return "copyB"
	case copyAB:
		return "copyAB"
	}
	return "asItIs"
}

// transposedLD is the row stride of a transposed copy of rows rows: a
// multiple of 4, so that the kernels' 16-byte loads apply.
func transposedLD(rows int) int { return (rows + 3) / 4 * 4 }

// defaultSharedLimit is the dynamic shared memory a kernel may take
// without raising its limit (cuFuncSetAttribute).
const defaultSharedLimit = 48 << 10

// dmmaTiling is matmul_dmma's shape for nn, nt and tt; dmmaTilingTN its
// tn kernel's, whose taller tiles suit panels that both lie along m or n.
var (
	dmmaTiling   = gemmTiling{bm: kernels.DMMATile, bn: kernels.DMMATile, threads: kernels.DMMAThreads, perSM: kernels.DMMABlocksPerSM, shared: kernels.DMMASharedBytes, kStep: 16}
	dmmaTilingTN = gemmTiling{bm: kernels.DMMATNTileM, bn: kernels.DMMATile, threads: kernels.DMMAThreads, perSM: kernels.DMMATNBlocksPerSM, shared: kernels.DMMATNSharedBytes, kStep: 16}
)

// mmaTiling is matmul_mma's one shape; its kernels' names carry the
// precision where reg128's carry their tile (see gemmTechnique).
var mmaTiling = gemmTiling{bm: kernels.MMATile, bn: kernels.MMATile, threads: kernels.MMAThreads, perSM: kernels.MMABlocksPerSM, shared: kernels.MMASharedBytes, kStep: 16}

// gemmTechnique checks that technique is a GEMM technique with a kernel for
// elem and s's precision, and returns its tiling for product s (its shape
// and transposes).
func gemmTechnique(technique, elem string, s GemmShape) (gemmTiling, error) {
	precision, m, n := s.Precision, s.M, s.N
	if technique == kernels.MatmulMMA || technique == kernels.MatmulWGMMA {
		switch {
		case elem != kernels.Float32:
			return gemmTiling{}, fmt.Errorf("%w: %s multiplies float32 only, not %s", kernels.ErrNotFound, technique, elem)
		case precision != kernels.TF32 && precision != kernels.BF16 && precision != kernels.FP16:
			return gemmTiling{}, fmt.Errorf("%w: %s needs a precision (tf32, bf16 or fp16), not %q", kernels.ErrNotFound, technique, precision)
		}
		t := mmaTiling
		if technique == kernels.MatmulWGMMA {
			t = wgmmaTiling
		}
		t.shape = precision
		return t, nil
	}
	if precision != "" {
		return gemmTiling{}, fmt.Errorf("%w: %s multiplies exactly, not in %s", kernels.ErrNotFound, technique, precision)
	}
	switch {
	case technique == kernels.MatmulReg128:
		return tilingFor(elem, m, n), nil
	case technique == kernels.MatmulDMMA && elem == kernels.Float64 && s.TransA && !s.TransB:
		return dmmaTilingTN, nil
	case technique == kernels.MatmulDMMA && elem == kernels.Float64:
		return dmmaTiling, nil
	case technique == kernels.MatmulDMMA:
		return gemmTiling{}, fmt.Errorf("%w: %s multiplies float64 only, not %s", kernels.ErrNotFound, technique, elem)
	}
	return gemmTiling{}, fmt.Errorf("%w: GEMM technique %q", kernels.ErrNotFound, technique)
}

// tilingFor picks reg128's block shape for a product of element type elem:
// the 128x128 tiles, except for float32 products with M or N of 64 or
// less, whose 128x128 tiles would be half empty.
func tilingFor(elem string, m, n int) gemmTiling {
	switch {
	case elem == kernels.Float32 && m <= 64 && m <= n:
		return gemmTiling{shape: "m64", bm: 64, bn: 128, threads: 128, perSM: 3, kStep: 8}
	case elem == kernels.Float32 && n <= 64:
		return gemmTiling{shape: "n64", bm: 128, bn: 64, threads: 128, perSM: 3, kStep: 8}
	case elem == kernels.Float64:
		return gemmTiling{bm: 128, bn: 128, threads: 256, perSM: 1, kStep: 8}
	case elem == kernels.Float32:
		return gemmTiling{whole: "whole", bm: 128, bn: 128, threads: 256, perSM: 2, kStep: 8}
	}
	return gemmTiling{bm: 128, bn: 128, threads: 256, perSM: 2, kStep: 8}
}

// splitK returns how many slices of K a product is split into, and the
// length of each (a multiple of the kernel's step along K, t.kStep): 1 and K while the
// products' tiles of C fill the GPU's sms multiprocessors; otherwise as
// many slices as fit on them t.perSM blocks deep, each at least 256 long,
// at most 16. A product with few tiles and a long K (64 x 8192 x 8192, 1024
// x 1024 x 1024 on an H100) otherwise leaves most of the GPU idle. The
// count rounds down: one more slice than fits starts a second wave of a few
// blocks, which the rest of the GPU waits for (64 x 8192 x 8192 in float32
// split 7 ways, 448 blocks where 396 fit, ran at 0.54 of cuBLAS; 6 ways at
// 0.88).
func splitK(s GemmShape, sms int, t gemmTiling) (slices, kSlice int) {
	tiles := ceilDiv(s.M, t.bm) * ceilDiv(s.N, t.bn) * s.Batch
	if tiles >= sms || s.K < 512 {
		return 1, max(s.K, 1)
	}
	want := min(sms*t.perSM/tiles, s.K/256, 16)
	if want <= 1 {
		return 1, max(s.K, 1)
	}
	kSlice = ceilDiv(ceilDiv(s.K, want), t.kStep) * t.kStep
	return ceilDiv(s.K, kSlice), kSlice
}

// reduceFunction returns the kernel that adds the slices of a product of
// element type elem split along K: every GEMM technique leaves its slices
// as reg128's do, and reg128's kernel adds them.
func reduceFunction(d *Device, elem string) (*cuda.Function, error) {
	sym, err := kernels.ReduceSymbol(kernels.MatmulReg128, elem)
	if err != nil {
		return nil, err
	}
	return functionBySymbol(d, kernels.MatmulReg128, sym)
}

// workspace is a device's scratch memory for products split along K, for
// wgmma's packed operands and for operands copied transposed (relayoutFor),
// kept and grown as needed (never shrunk); mu is held by the one Gemm
// using it, so that products on different streams that need it take
// turns.
type workspace struct {
	mu    sync.Mutex
	ptr   cuda.DevicePtr
	bytes int
	last  *cuda.Stream // the stream of the last product that used it
}

// grow makes w at least bytes long. The caller holds w.mu.
func (w *workspace) grow(ctx *cuda.Context, bytes int) error {
	if w.bytes >= bytes {
		return nil
	}
	if w.ptr != 0 {
		// Products queued on other streams may still use the old one.
		if err := ctx.Synchronize(); err != nil {
			return err
		}
		if err := ctx.Free(w.ptr); err != nil {
			return err
		}
		w.ptr, w.bytes = 0, 0
	}
	p, err := ctx.Alloc(bytes)
	if err != nil {
		return fmt.Errorf("gpu: gemm workspace of %d bytes: %w", bytes, err)
	}
	w.ptr, w.bytes = p, bytes
	return nil
}

// Gemm computes the products s describes on the device, with technique
// kernels.MatmulReg128 (any element type; float32 on Hopper and newer
// through its tn kernel fed by TMA where the operands allow, on transposed
// copies for the other layouts: see reg128TMAFor and relayoutFor),
// kernels.MatmulDMMA (float64, on
// the FP64 tensor cores; on Hopper fed by TMA where the operands allow,
// see dmmaTMAFor), kernels.MatmulMMA (float32 in s.Precision, on
// the tensor cores) or kernels.MatmulWGMMA (the same on Hopper's; see
// gemmWGMMA), A, B and C at device addresses a, b and c. C is not
// read when beta is 0, nor A and B when alpha is 0. A product with too few
// tiles of C to fill the GPU is split along K (see splitK): slices go to a
// workspace of the device's, and a second kernel adds them, in order, into
// C; the result is the same on every run. It returns the kernels' time on
// the device, measured with CUDA events, once they have finished.
func Gemm[T Element](d *Device, technique string, s GemmShape, alpha T, a uint64, b uint64, beta T, c uint64) (time.Duration, error) {
	if _, err := gemmTechnique(technique, elemName[T](), s); err != nil {
		return 0, err
	}
	if err := s.check(); err != nil {
		return 0, err
	}
	if s.M == 0 || s.N == 0 {
		return 0, nil // no element of C to write
	}
	t, err := GemmOn(d, d.Context.DefaultStream(), technique, s, alpha, a, b, beta, c)
	if err != nil {
		return 0, err
	}
	return t.Wait()
}

// GemmOn is Gemm queued on stream st: it returns once the kernels are
// queued, with their Timing (nil when there was nothing to run), and the
// caller waits for it or drops it. A split product's slices, and the
// transposed copies of operands that a float32 product may run on
// (relayoutFor), are in the device's workspace: a product on another
// stream that needs the workspace waits, on the device, for this one to
// be done with it.
func GemmOn[T Element](d *Device, st *cuda.Stream, technique string, s GemmShape, alpha T, a uint64, b uint64, beta T, c uint64) (*Timing, error) {
	t, err := gemmTechnique(technique, elemName[T](), s)
	if err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.M == 0 || s.N == 0 {
		return nil, nil // no element of C to write
	}
	// float64 on Hopper: the DMMA kernels fed by TMA where the operands
	// allow it (and the driver takes their descriptors).
	var tma bool
	var ma, mb cuda.TensorMap
	if technique == kernels.MatmulDMMA && dmmaTMAFor(d, s, a, b) {
		tt := dmmaTMATilingFor(s, d.Properties.MultiProcessors)
		if dmmaTMAKernelReady(d, tt) {
			if mapA, mapB, err := dmmaTensorMaps(d, tt, s, a, b); err == nil { // else the cp.async kernels
				ma, mb, t, tma = mapA, mapB, tt, true
			}
		}
	}
	blocks := ceilDiv(s.M, t.bm) * ceilDiv(s.N, t.bn)
	if blocks > 1<<31-1 {
		return nil, fmt.Errorf("gpu: gemm: %dx%d needs %d blocks, more than a grid holds", s.M, s.N, blocks)
	}
	if technique == kernels.MatmulWGMMA {
		return gemmWGMMA(d, st, t, s, float32(alpha), a, b, float32(beta), c)
	}
	size := int(unsafe.Sizeof(T(0)))
	elem := elemName[T]()
	// k is the product the kernel runs: s, or s with operands read from
	// transposed copies (in the workspace, split products' slices after
	// them).
	how := asItIs
	if alpha != 0 {
		how = relayoutFor(technique, elem, s, tnReachFor(d, s, a, b))
	}
	k, transposes := relaid(s, how, a, b, size)
	// float32 tn on Hopper and newer: the kernel fed by TMA, where its
	// operands allow it.
	regTMA := technique == kernels.MatmulReg128 && reg128TMAFor(d, elem, k, how, a, b)
	if regTMA {
		t = reg128TMATiling
	}
	slices, kSlice := 1, max(s.K, 1)
	if alpha != 0 && !s.WholeK {
		slices, kSlice = splitK(s, d.Properties.MultiProcessors, t)
	}
	var sliceBytes int
	if slices > 1 {
		sliceBytes = slices * s.M * s.N * s.Batch * size
	}
	// The kernels are looked up (a first use loads them, which can wait for
	// the device) before the workspace is taken.
	file := technique // the image the kernel is in
	if tma {
		file = kernels.MatmulDMMATMA
	}
	f, err := gemmFunction[T](d, file, t, k, slices)
	if err != nil {
		return nil, err
	}
	var reduce, tf *cuda.Function
	if slices > 1 {
		if reduce, err = reduceFunction(d, elem); err != nil {
			return nil, err
		}
	}
	if len(transposes) > 0 {
		sym, err := kernels.Symbol(kernels.Transpose, 0, elem)
		if err != nil {
			return nil, err
		}
		if tf, err = functionBySymbol(d, kernels.Transpose, sym); err != nil {
			return nil, err
		}
	}
	copyBytes := copiesBytes(transposes)
	var work cuda.DevicePtr
	if copyBytes+sliceBytes > 0 {
		d.work.mu.Lock()
		defer d.work.mu.Unlock() // held until the kernels are queued
		err := d.work.grow(d.Context, copyBytes+sliceBytes)
		if copyBytes > 0 && errors.Is(err, cuda.ErrOutOfMemory) {
			// No room for the copies: the product runs as it is.
			// Copies lead only to tn, and a tn product has none: s is
			// not tn, and runs on its own kernel.
			k, how, transposes, copyBytes, tf = s, asItIs, nil, 0, nil
			if regTMA {
				regTMA, t = false, tilingFor(elem, s.M, s.N)
			}
			if f, err = gemmFunction[T](d, file, t, k, slices); err == nil {
				err = d.work.grow(d.Context, sliceBytes)
			}
		}
		if err != nil {
			return nil, err
		}
		// The last product that used the workspace may still be running
		// on another stream.
		if err := st.Follow(d.work.last); err != nil {
			return nil, err
		}
		d.work.last = st
		if slices > 1 {
			work = d.work.ptr + cuda.DevicePtr(copyBytes)
		}
	}
	ka, kb := cuda.DevicePtr(a), cuda.DevicePtr(b)
	for _, cp := range transposes {
		if cp.ofA {
			ka = d.work.ptr + cuda.DevicePtr(cp.offset)
		} else {
			kb = d.work.ptr + cuda.DevicePtr(cp.offset)
		}
	}
	if regTMA {
		if ma, mb, err = reg128TensorMaps(d, k, ka, kb); err != nil {
			// The driver refused a descriptor: the kernel that reads the
			// operands itself (its slices of K, multiples of 16, suit it).
			regTMA, t = false, tilingFor(elem, s.M, s.N)
			if f, err = gemmFunction[T](d, file, t, k, slices); err != nil {
				return nil, err
			}
		}
	}
	// Arguments packed before the timed window, which should hold the
	// kernels and no Go work.
	targs := make([]*cuda.Args, len(transposes))
	tgrids := make([][3]uint32, len(transposes))
	for i, cp := range transposes {
		// A (M x K) or B (N x K) into its copy (K x M or K x N).
		targs[i], err = cuda.PackArgs(int32(cp.rows), int32(s.K), cuda.DevicePtr(cp.src), int32(cp.ld), int64(cp.stride),
			d.work.ptr+cuda.DevicePtr(cp.offset), int32(cp.ldCopy), int64(cp.strideCopy))
		if err != nil {
			return nil, err
		}
		tgrids[i] = [3]uint32{uint32(ceilDiv(s.K, 32)), uint32(min(ceilDiv(cp.rows, 32), 65535)), uint32(cp.batch)}
	}
	var args *cuda.Args
	if tma || regTMA {
		args, err = cuda.PackArgs(int32(s.M), int32(s.N), int32(s.K), alpha, ma, mb, beta, cuda.DevicePtr(c),
			int32(s.LDC), int64(s.StrideC), int32(kSlice), work)
	} else {
		args, err = cuda.PackArgs(int32(s.M), int32(s.N), int32(s.K), alpha, ka, int32(k.LDA), int64(k.StrideA),
			kb, int32(k.LDB), int64(k.StrideB), beta, cuda.DevicePtr(c), int32(s.LDC), int64(s.StrideC),
			int32(kSlice), work)
	}
	if err != nil {
		return nil, err
	}
	grid := [3]uint32{uint32(blocks), uint32(slices), uint32(s.Batch)}
	var rargs *cuda.Args
	var rgrid [3]uint32
	if slices > 1 {
		rargs, err = cuda.PackArgs(int32(s.M), int32(s.N), int32(slices), work, beta, cuda.DevicePtr(c), int32(s.LDC), int64(s.StrideC))
		if err != nil {
			return nil, err
		}
		rgrid = [3]uint32{uint32(min(ceilDiv(s.M*s.N, 256), 1024)), uint32(s.Batch), 1} // batch in y, as the reduce kernel reads it
	}
	timing, err := d.Queue(st, func(st *cuda.Stream) error {
		for i := range transposes {
			if err := tf.LaunchArgs(tgrids[i], [3]uint32{32, 8, 1}, 0, st, targs[i]); err != nil {
				return err
			}
		}
		if err := f.LaunchArgs(grid, [3]uint32{uint32(t.threads), 1, 1}, t.shared, st, args); err != nil {
			return err
		}
		if slices > 1 {
			return reduce.LaunchArgs(rgrid, [3]uint32{256, 1, 1}, 0, st, rargs)
		}
		return nil
	})
	if err == nil && how != asItIs {
		relayouts.Add(1)
	}
	if err == nil && regTMA {
		reg128TMARuns.Add(1)
	}
	if err == nil && tma {
		dmmaTMARuns.Add(1)
		if t.shape == dmmaTMA64Tiling.shape {
			dmmaTMA64Runs.Add(1)
		}
	}
	return timing, err
}

// gemmFunction returns the kernel of technique with tiling t that runs
// product k in slices slices of K, its shared-memory limit raised where
// the tiling needs more than the default.
func gemmFunction[T Element](d *Device, technique string, t gemmTiling, k GemmShape, slices int) (*cuda.Function, error) {
	shape := t.shape
	if slices == 1 && t.whole != "" && k.TransA && !k.TransB && !wholeOff {
		shape = t.whole // tn only: see matmul_reg128.cu
	}
	sym, err := kernels.GemmSymbol(technique, shape, k.TransA, k.TransB, elemName[T]())
	if err != nil {
		return nil, err
	}
	f, err := functionBySymbol(d, technique, sym)
	if err != nil {
		return nil, err
	}
	if t.shared > defaultSharedLimit {
		// Idempotent, and cheap next to a launch.
		if err := f.SetMaxDynamicSharedMemory(t.shared); err != nil {
			return nil, fmt.Errorf("gpu: gemm: %s: %w", sym, err)
		}
	}
	return f, nil
}
