// Package gpubench is goamp's GPU benchmark: goamp's CUDA kernels (the
// naive kernel, one thread per element of C, the shared-memory tiled kernel,
// tiles 16 and 32, and the register-tiled reg128, from
// internal/gpu/kernels, and the Go kernels compiled to PTX) against
// NVIDIA's cuBLAS, on the same device, operands and buffers; and linalg's
// CUDA dot products against a device-to-device copy (dot.go). `goamp bench
// --device cuda` runs it.
//
// # What is measured
//
// Each case (a type, a shape and transposes: C = op(A)*op(B), row-major,
// square n x n x n or any M x N x K) gets fresh random operands, uniform
// in [-1, 1) and never zeros, drawn as internal/cpubench draws them, so
// that a case means the same operands on the CPU and the GPU. Two times
// are taken of every library:
//
//   - Kernel only: A and B are already on the device (uploaded once); CUDA
//     events recorded on the default stream just before and just after the
//     launch (for cuBLAS, around the cublasSgemm call) give the time on the
//     GPU's own clock. A short spin kernel queued first keeps the GPU busy
//     while the host queues the events and the launch, so that the span
//     holds the GPU's work and not the host's launch overhead (see
//     Options.Spin). This is the kernel's speed.
//   - End to end: host clock from the start of the upload of A and B (from
//     ordinary, pageable Go memory) to the end of the download of C, the
//     multiply between. This is what a caller with matrices in Go slices
//     waits for. Device buffers are allocated once per case and not timed,
//     as a caller would keep them.
//
// After a warm-up of each library (both ways; it also loads the kernels and
// lets cuBLAS pick its algorithm), the libraries take turns repetition by
// repetition (naive, tiled16, tiled32, cublas, naive, ...), so that a clock
// change or a neighbour's burst lands on all of them; the median of each
// way is turned into GFLOP/s at 2*M*N*K flops.
//
// With Options.Batch a case is a strided batch of products, A, B and C
// each that many matrices one after another, multiplied in one call by the
// libraries that have a batched path (reg128, one launch; cuBLAS,
// cublas<T>gemmStridedBatched); a case leaves out, with a reason in
// Result.LeftOut, the libraries that cannot take it (a batch, transposes,
// more rows than their grid holds).
//
// Every repetition's C is copied back and checked against float64
// references with internal/cpubench's check (random projections, and whole
// first, last and random rows and columns), held to
// reference.Tolerance[T](K), every product of a batch; C is filled with
// NaN before each run, so an element a kernel does not write fails. A
// wrong result is an error wrapping cpubench.ErrWrongResult, never a
// figure.
//
// cuBLAS runs in its default math mode: plain fp32 (fp64 for Dgemm), no
// TF32 tensor cores; see internal/cublas.
package gpubench

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/goamp/goamp/internal/cpubench"
	"github.com/goamp/goamp/internal/cublas"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/gpu/kernels"
	"github.com/goamp/goamp/internal/precision"
)

// Names of the libraries, in the order tables show them: goamp's kernels
// from the simplest, then cuBLAS, the anchor every ratio is taken against.
const (
	Naive   = "naive"   // matmul_naive: one thread per element of C, operands from global memory
	Tiled16 = "tiled16" // matmul_tiled, 16x16 tiles in shared memory (the kernel's default tile)
	Tiled32 = "tiled32" // matmul_tiled, 32x32 tiles
	Reg128  = "reg128"  // matmul_reg128: 128x128 block tiles, 8x8 a thread in registers
	DMMA    = "dmma"    // matmul_dmma: float64 on the FP64 tensor cores (fed by TMA on Hopper)
	MMA     = "mma"     // matmul_mma: float32 in the reduced precision LibrariesIn is given, on the tensor cores
	WGMMA   = "wgmma"   // matmul_wgmma: the same on Hopper's tensor cores (compute capability 9.0 only)
	CuBLAS  = "cublas"  // cublasSgemm_v2 / cublasDgemm_v2; cublasGemmEx in a reduced precision

	// The Go kernels (linalg's kernels_go.go, compiled to PTX by goampgen),
	// each beside its CUDA C twin.
	GoSimple     = "go-simple"      // MultiplyWithAMP in Go: naive's twin
	GoTiled16    = "go-tiled16"     // the tiled multiply for any shape in Go, 16x16 tiles: tiled16's twin
	GoTiled32    = "go-tiled32"     // the same, 32x32 tiles: tiled32's twin
	GoTiledExact = "go-tiled-exact" // C++ AMP's tiled multiply (seed 000), 16x16 tiles, sizes multiples of 16
)

// LibraryNames lists every library the benchmark knows, present or not.
var LibraryNames = []string{Naive, Tiled16, Tiled32, Reg128, DMMA, MMA, WGMMA, GoSimple, GoTiled16, GoTiled32, GoTiledExact, CuBLAS}

// DefaultLibraries are those a run measures when not told: all but
// go-tiled-exact, which takes only sizes that are multiples of its tile.
var DefaultLibraries = []string{Naive, Tiled16, Tiled32, Reg128, DMMA, GoSimple, GoTiled16, GoTiled32, CuBLAS}

// goTwins pairs each Go kernel with its CUDA C twin, for the comparison
// `goamp bench --device cuda` prints.
var goTwins = [][2]string{{GoSimple, Naive}, {GoTiled16, Tiled16}, {GoTiled32, Tiled32}, {GoTiledExact, Tiled16}}

// GoTwins returns the pairs (Go kernel, its CUDA C twin) among the libraries.
func GoTwins() [][2]string { return slices.Clone(goTwins) }

// DefaultSizes are the sizes `goamp bench --device cuda` runs when not told:
// 1024 is where a GPU starts to be worth its copies, 4096 where every
// kernel is well past its launch and tail effects.
var DefaultSizes = []int{1024, 2048, 4096}

// MultiplyFunc sets C = A*B on the device for row-major matrices of type t
// at device addresses a (m x k, row stride lda), b (k x n, ldb) and c (m x n,
// ldc), C not read, and waits for it. It returns the kernel's time on the
// device, from CUDA events recorded on the default stream around the launch.
type MultiplyFunc func(t cpubench.Type, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error)

// GemmFunc is MultiplyFunc with op(A) and op(B) as tr says: A is stored k x
// m (row stride lda) when tr.A, B n x k when tr.B.
type GemmFunc func(t cpubench.Type, tr cpubench.Trans, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error)

// BatchFunc is GemmFunc for a strided batch of batch independent products
// in one call: product i reads A at a + strideA*i elements, B at b +
// strideB*i, and writes C at c + strideC*i.
type BatchFunc func(t cpubench.Type, tr cpubench.Trans, m, n, k, batch int, a cuda.DevicePtr, lda, strideA int, b cuda.DevicePtr, ldb, strideB int, c cuda.DevicePtr, ldc, strideC int) (time.Duration, error)

// Library is a GPU GEMM the benchmark measures.
type Library struct {
	Name        string // one of LibraryNames; tables use it
	Description string // one line for the header of a table
	Multiply    MultiplyFunc
	// Gemm, if not nil, takes transposed operands too; a case with
	// transposes measures only the libraries that have it.
	Gemm GemmFunc
	// Batch, if not nil, multiplies a strided batch in one call; a batched
	// case measures only the libraries that have it.
	Batch BatchFunc
	// Multiple, if not 0, is what every size must be a multiple of.
	Multiple int
	// maxM, if not 0, is the most rows of C the library takes: gpu.MatMul
	// and amp's tiled launches give each tile of rows a block in the
	// grid's y, which holds at most 65535.
	maxM int
	// only, if not "", is the one element type the library multiplies
	// (dmma: float64); cases of the others leave it out.
	only cpubench.Type
	// precision, if not "", is the reduced precision the library
	// multiplies float32 operands in (mma, and cuBLAS when a run asks for
	// one); its float32 results are checked within that precision's
	// tolerance (reference.ToleranceIn).
	precision string
	// reducedOnly: the library multiplies in reduced precisions only
	// (mma), and a run in exact arithmetic leaves it out.
	reducedOnly bool
	// notHere, if not "", says why the library cannot run on this GPU
	// (wgmma elsewhere than on compute capability 9.0); it measures no case.
	notHere string
}

// Precision is the reduced precision l multiplies float32 operands in, ""
// for float32 arithmetic.
func (l Library) Precision() string { return l.precision }

// leftOut says why library l cannot measure case c in batches of batch
// (0: one product at a time), or "" when it can.
func (l Library) leftOut(c cpubench.Case, batch int) string {
	m, _, _ := c.Dims()
	switch {
	case l.notHere != "":
		return l.notHere
	case batch > 0 && l.Batch == nil:
		return "no batched path"
	case c.Trans != (cpubench.Trans{}) && l.Gemm == nil:
		return "takes no transposes"
	case l.maxM > 0 && m > l.maxM:
		return fmt.Sprintf("takes at most %d rows of C", l.maxM)
	case l.only != "" && c.Type != l.only:
		return fmt.Sprintf("multiplies %s only", l.only)
	case l.reducedOnly && l.precision == "":
		return "multiplies in a reduced precision only (--precision tf32, bf16 or fp16)"
	case l.precision != "" && batch > 0 && l.Name == CuBLAS:
		return "has no batched path in a reduced precision here"
	}
	return ""
}

// CheckSizes returns an error naming the first library that cannot take
// one of sizes (see Library.Multiple), nil if all can.
func CheckSizes(libs []Library, sizes []int) error {
	for _, l := range libs {
		for _, n := range sizes {
			if l.Multiple > 0 && n%l.Multiple != 0 {
				return fmt.Errorf("%s takes sizes that are multiples of %d, not %d", l.Name, l.Multiple, n)
			}
		}
	}
	return nil
}

// CheckShapes is CheckSizes for products of any shape: every one of M, N
// and K must be a multiple of a library's Multiple. A library named for
// sizes it cannot take is an error, not a note, as with --sizes: it is
// measured only when named (go-tiled-exact), and the one asking for it
// should hear at once that it will not be.
func CheckShapes(libs []Library, shapes []cpubench.Shape) error {
	for _, l := range libs {
		for _, s := range shapes {
			if l.Multiple > 0 && (s.M%l.Multiple != 0 || s.N%l.Multiple != 0 || s.K%l.Multiple != 0) {
				if s.Square() {
					return fmt.Errorf("%s takes sizes that are multiples of %d, not %d", l.Name, l.Multiple, s.N)
				}
				return fmt.Errorf("%s takes shapes whose M, N and K are multiples of %d, not %s", l.Name, l.Multiple, s)
			}
		}
	}
	return nil
}

// ParseLibraries reads --libs: a comma-separated list of library names, in
// any case and order, where "tiled" stands for tiled16 and tiled32, "goamp"
// for goamp's CUDA C kernels and "go" for its Go kernels. The result is in
// the order of LibraryNames, without repeats; "" means DefaultLibraries.
func ParseLibraries(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return slices.Clone(DefaultLibraries), nil
	}
	want := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		name := strings.ToLower(strings.TrimSpace(f))
		switch name {
		case "":
			continue
		case "tiled":
			want[Tiled16], want[Tiled32] = true, true
		case "goamp":
			want[Naive], want[Tiled16], want[Tiled32], want[Reg128], want[DMMA], want[MMA], want[WGMMA] = true, true, true, true, true, true, true
		case "go":
			want[GoSimple], want[GoTiled16], want[GoTiled32], want[GoTiledExact] = true, true, true, true
		default:
			if !slices.Contains(LibraryNames, name) {
				return nil, fmt.Errorf("unknown library %q (want %s, or tiled for both tiles, goamp for the CUDA C kernels, go for the Go kernels)",
					strings.TrimSpace(f), strings.Join(LibraryNames, ", "))
			}
			want[name] = true
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no library named")
	}
	var names []string
	for _, n := range LibraryNames {
		if want[n] {
			names = append(names, n)
		}
	}
	return names, nil
}

// Libraries returns the libraries of names (as from ParseLibraries) on dev.
// goamp's kernels are always there. cuBLAS is made on first use and kept
// for the life of the process, as the device's context is; when it is asked
// for and cannot be had, Libraries returns an error saying why (wrapping
// cublas.ErrUnavailable when the library is not installed), and no
// libraries: every ratio is against cuBLAS.
func Libraries(dev *gpu.Device, names []string) ([]Library, error) {
	return LibrariesIn(dev, names, "")
}

// LibrariesIn is Libraries for a run in which float32 products may be
// computed in precision prec (precision.TF32, BF16 or FP16; "" or
// precision.Exact for float32 arithmetic): mma multiplies in it, and
// cuBLAS, the anchor, in the matching compute type (cublasGemmEx with
// CUBLAS_COMPUTE_32F_FAST_TF32, _16BF or _16F); the other kernels
// multiply exactly. float64 cases are exact whatever prec says.
func LibrariesIn(dev *gpu.Device, names []string, prec string) ([]Library, error) {
	if prec == precision.Exact {
		prec = ""
	}
	if err := precision.Check(prec); prec != "" && err != nil {
		return nil, fmt.Errorf("gpubench: %w", err)
	}
	var libs []Library
	for _, name := range names {
		switch name {
		case Naive:
			libs = append(libs, goampLibrary(dev, name, kernels.MatmulNaive, 0,
				"matmul_naive.cu, 16x16 blocks, one thread per element of C, A and B read from global memory"))
			libs[len(libs)-1].maxM = 65535 * 16
		case Tiled16, Tiled32:
			tile := 16
			if name == Tiled32 {
				tile = 32
			}
			libs = append(libs, goampLibrary(dev, name, kernels.MatmulTiled, tile,
				fmt.Sprintf("matmul_tiled.cu, %dx%d tiles of A and B in shared memory, one thread per element of C", tile, tile)))
			libs[len(libs)-1].maxM = 65535 * tile
		case Reg128:
			libs = append(libs, gemmLibrary(dev, name, kernels.MatmulReg128, "",
				"matmul_reg128.cu, 128x128 tiles of C a block, 8x8 a thread in registers, loads two steps ahead; float32 tn fed by TMA on Hopper, float32 nn, nt, tt of enough work on transposed copies into it"))
		case DMMA:
			l := gemmLibrary(dev, name, kernels.MatmulDMMA, "",
				"float64 on the FP64 tensor cores: on Hopper matmul_dmma_tma.cu (mma.sync m16n8k8, a 4-step ring filled by TMA: 128x64 tiles of C a block and a producer warpgroup, or 64x64 tiles and a producer warp for products of 64 rows or fewer and those with too few 128x64 tiles to fill the GPU) where the operands allow, else matmul_dmma.cu (m16n8k16, 64x64 tiles, 128x64 in tn, a 3-step cp.async ring)")
			l.only = cpubench.Float64
			libs = append(libs, l)
		case MMA:
			libs = append(libs, reducedLibrary(dev, name, kernels.MatmulMMA, prec, "the tensor cores (mma.sync)", "128x128 tiles of C a block, a 4-step cp.async ring"))
		case WGMMA:
			l := reducedLibrary(dev, name, kernels.MatmulWGMMA, prec, "Hopper's tensor cores (wgmma fed by TMA), operands packed along K first (in tf32 read where they lie and rounded by TMA: nn, nt and tt aligned pack nothing)", "128x256 tiles of C a block, a 4-step mbarrier ring; in tf32 past one wave a block an SM walking the tiles")
			if p := dev.Properties; p.ComputeMajor != 9 || p.ComputeMinor != 0 {
				l.notHere = fmt.Sprintf("runs on compute capability 9.0 only, not %d.%d", p.ComputeMajor, p.ComputeMinor)
			}
			libs = append(libs, l)
		case GoSimple:
			libs = append(libs, goKernelLibrary(dev, name, "go-simple", 0,
				"MultiplyWithAMP written in Go, compiled to PTX by goampgen (linalg's kernels_go.go): naive's twin"))
		case GoTiled16, GoTiled32:
			tile := 16
			if name == GoTiled32 {
				tile = 32
			}
			libs = append(libs, goKernelLibrary(dev, name, "go-tiled", tile,
				fmt.Sprintf("the tiled multiply for any shape written in Go, compiled to PTX, %dx%d tiles: tiled%d's twin", tile, tile, tile)))
			libs[len(libs)-1].maxM = 65535 * tile // amp's grid, a tile of rows a block
		case GoTiledExact:
			l := goKernelLibrary(dev, name, "go-tiled-exact", 16,
				"C++ AMP's tiled multiply (seed 000) written in Go, compiled to PTX, 16x16 tiles, sizes multiples of 16")
			l.Multiple, l.maxM = 16, 65535*16
			libs = append(libs, l)
		case CuBLAS:
			l, err := cublasLibrary(dev, prec)
			if err != nil {
				return nil, err
			}
			libs = append(libs, l)
		default:
			return nil, fmt.Errorf("gpubench: unknown library %q", name)
		}
	}
	return libs, nil
}

// goampLibrary is one of goamp's kernels through gpu.MatMul, which records
// the events around its launch itself.
func goampLibrary(dev *gpu.Device, name, technique string, tile int, desc string) Library {
	return Library{Name: name, Description: desc,
		Multiply: func(t cpubench.Type, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
			if t == cpubench.Float64 {
				return gpu.MatMul[float64](dev, technique, tile, m, n, k, 1, uint64(a), lda, uint64(b), ldb, 0, uint64(c), ldc)
			}
			return gpu.MatMul[float32](dev, technique, tile, m, n, k, 1, uint64(a), lda, uint64(b), ldb, 0, uint64(c), ldc)
		}}
}

// reducedLibrary is a tensor-core technique that multiplies float32 in
// reduced precisions only (mma, wgmma), in prec: on where, with tiles.
func reducedLibrary(dev *gpu.Device, name, technique, prec, where, tiles string) Library {
	what := "float32 in a reduced precision on " + where
	if prec != "" {
		what = fmt.Sprintf("float32 rounded to %s on %s, sums in float32", prec, where)
	}
	l := gemmLibrary(dev, name, technique, prec, fmt.Sprintf("%s.cu, %s, %s", technique, what, tiles))
	l.only, l.precision, l.reducedOnly = cpubench.Float32, prec, true
	return l
}

// gemmLibrary is one of goamp's GEMM kernels through gpu.Gemm: one product,
// any transposes, or a strided batch in one launch (the grid's z); prec is
// the reduced precision of MatmulMMA's float32 products ("" for the others).
func gemmLibrary(dev *gpu.Device, name, technique, prec string, desc string) Library {
	batched := func(t cpubench.Type, tr cpubench.Trans, m, n, k, batch int, a cuda.DevicePtr, lda, strideA int, b cuda.DevicePtr, ldb, strideB int, c cuda.DevicePtr, ldc, strideC int) (time.Duration, error) {
		s := gpu.GemmShape{TransA: tr.A, TransB: tr.B, M: m, N: n, K: k, LDA: lda, LDB: ldb, LDC: ldc,
			Batch: batch, StrideA: strideA, StrideB: strideB, StrideC: strideC}
		if t == cpubench.Float32 {
			s.Precision = prec
		}
		if t == cpubench.Float64 {
			return gpu.Gemm[float64](dev, technique, s, 1, uint64(a), uint64(b), 0, uint64(c))
		}
		return gpu.Gemm[float32](dev, technique, s, 1, uint64(a), uint64(b), 0, uint64(c))
	}
	gemm := func(t cpubench.Type, tr cpubench.Trans, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
		return batched(t, tr, m, n, k, 1, a, lda, 0, b, ldb, 0, c, ldc, 0)
	}
	return Library{Name: name, Description: desc, Gemm: gemm, Batch: batched,
		Multiply: func(t cpubench.Type, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
			return gemm(t, cpubench.Trans{}, m, n, k, a, lda, b, ldb, c, ldc)
		}}
}

// BLASInfo describes the cuBLAS the benchmark uses, for the record.
type BLASInfo struct {
	Library string          // the shared object that opened
	Version int             // as cublas.Handle.Version gives it
	Math    cublas.MathMode // read back from the handle: must be the default (no TF32)
}

// String reads "libcublas.so.13, cuBLAS 13.0.2, CUBLAS_DEFAULT_MATH (fp32, no TF32)".
func (b BLASInfo) String() string {
	return fmt.Sprintf("%s, cuBLAS %s, %s", b.Library, cublas.FormatVersion(b.Version), b.Math)
}

type blasState struct {
	h          *cublas.Handle
	info       BLASInfo
	start, end *cuda.Event
}

var (
	blasMu sync.Mutex
	blases = map[int]*blasState{} // by device ordinal
)

// openBLAS returns dev's cuBLAS handle and timing events, making them on
// first use.
func openBLAS(dev *gpu.Device) (*blasState, error) {
	blasMu.Lock()
	defer blasMu.Unlock()
	if s := blases[dev.Ordinal]; s != nil {
		return s, nil
	}
	path, err := cublas.Open()
	if err != nil {
		return nil, err
	}
	h, err := cublas.New(dev.Context)
	if err != nil {
		return nil, err
	}
	s := &blasState{h: h, info: BLASInfo{Library: path}}
	fail := func(err error) (*blasState, error) {
		h.Destroy()
		return nil, err
	}
	if s.info.Version, err = h.Version(); err != nil {
		return fail(err)
	}
	if s.info.Math, err = h.MathMode(); err != nil {
		return fail(err)
	}
	if s.info.Math != cublas.MathDefault {
		// New sets the default mode; anything else would not be fp32 against fp32.
		return fail(fmt.Errorf("cublas: math mode is %v, want the default (plain fp32)", s.info.Math))
	}
	if s.start, err = dev.Context.NewEvent(); err != nil {
		return fail(err)
	}
	if s.end, err = dev.Context.NewEvent(); err != nil {
		s.start.Destroy()
		return fail(err)
	}
	blases[dev.Ordinal] = s
	return s, nil
}

// BLAS returns what cuBLAS on dev is (opening it if need be), or why it
// cannot be had.
func BLAS(dev *gpu.Device) (BLASInfo, error) {
	s, err := openBLAS(dev)
	if err != nil {
		return BLASInfo{}, err
	}
	return s.info, nil
}

// computeTypes are cuBLAS's compute types for the reduced precisions.
var computeTypes = map[string]cublas.ComputeType{
	precision.TF32: cublas.Compute32FFastTF32,
	precision.BF16: cublas.Compute32FFastBF16,
	precision.FP16: cublas.Compute32FFastFP16,
}

// cublasLibrary is cuBLAS, timed as gpu.MatMul times goamp's kernels: an
// event on the default stream just before the call, one just after, and a
// wait for the second. cuBLAS queues on the default stream (the handle's
// stream is never set). With a reduced precision prec its float32 products
// go through cublasGemmEx in the matching compute type.
func cublasLibrary(dev *gpu.Device, prec string) (Library, error) {
	s, err := openBLAS(dev)
	if err != nil {
		return Library{}, err
	}
	compute := computeTypes[prec]
	gemm := func(t cpubench.Type, tr cpubench.Trans, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
		return s.timed(func() error {
			switch {
			case t == cpubench.Float64:
				return s.h.Dgemm(tr.A, tr.B, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
			case prec != "":
				return s.h.SgemmIn(compute, tr.A, tr.B, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
			}
			return s.h.Sgemm(tr.A, tr.B, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
		})
	}
	batched := func(t cpubench.Type, tr cpubench.Trans, m, n, k, batch int, a cuda.DevicePtr, lda, strideA int, b cuda.DevicePtr, ldb, strideB int, c cuda.DevicePtr, ldc, strideC int) (time.Duration, error) {
		return s.timed(func() error {
			if t == cpubench.Float64 {
				return s.h.DgemmStridedBatched(tr.A, tr.B, m, n, k, 1, a, lda, strideA, b, ldb, strideB, 0, c, ldc, strideC, batch)
			}
			return s.h.SgemmStridedBatched(tr.A, tr.B, m, n, k, 1, a, lda, strideA, b, ldb, strideB, 0, c, ldc, strideC, batch)
		})
	}
	desc := s.info.String()
	if prec != "" {
		desc += fmt.Sprintf("; float32 through cublasGemmEx in %v", compute)
	}
	return Library{Name: CuBLAS, Description: desc, Gemm: gemm, Batch: batched, precision: prec,
		Multiply: func(t cpubench.Type, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
			return gemm(t, cpubench.Trans{}, m, n, k, a, lda, b, ldb, c, ldc)
		}}, nil
}

// timed runs call, which queues cuBLAS work on the default stream, between
// the state's two events, and waits for the second.
func (s *blasState) timed(call func() error) (time.Duration, error) {
	if err := s.start.Record(nil); err != nil {
		return 0, err
	}
	if err := call(); err != nil {
		return 0, err
	}
	if err := s.end.Record(nil); err != nil {
		return 0, err
	}
	if err := s.end.Synchronize(); err != nil {
		return 0, fmt.Errorf("cublas: kernel: %w", err)
	}
	ms, err := cuda.ElapsedMillis(s.start, s.end)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// IsUnavailable reports whether err says cuBLAS is not installed (rather
// than installed and failing).
func IsUnavailable(err error) bool { return errors.Is(err, cublas.ErrUnavailable) }
