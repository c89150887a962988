// Package gpubench is goamp's GPU matrix-multiply benchmark: goamp's CUDA
// kernels (the naive kernel, one thread per element of C, and the shared-memory tiled kernel, tiles
// 16 and 32, from internal/gpu/kernels) against NVIDIA's cuBLAS, on the same
// device, operands and buffers. `goamp bench --device cuda` runs it.
//
// # What is measured
//
// Each case (a type and a size n: C = A*B, n x n, row-major) gets fresh
// random operands, uniform in [-1, 1) and never zeros, drawn as
// internal/cpubench draws them, so that a case means the same operands on
// the CPU and the GPU. Two times are taken of every library:
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
// way is turned into GFLOP/s at 2n^3 flops.
//
// Every repetition's C is copied back and checked against float64
// references with internal/cpubench's check (random projections, and whole
// first, last and random rows and columns), held to
// reference.Tolerance[T](n); C is filled with NaN before each run, so an
// element a kernel does not write fails. A wrong result is an error wrapping
// cpubench.ErrWrongResult, never a figure.
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
)

// Names of the libraries, in the order tables show them: goamp's kernels
// from the simplest, then cuBLAS, the anchor every ratio is taken against.
const (
	Naive   = "naive"   // matmul_naive: one thread per element of C, operands from global memory
	Tiled16 = "tiled16" // matmul_tiled, 16x16 tiles in shared memory (the kernel's default tile)
	Tiled32 = "tiled32" // matmul_tiled, 32x32 tiles
	Reg128  = "reg128"  // matmul_reg128: 128x128 block tiles, 8x8 a thread in registers
	CuBLAS  = "cublas"  // cublasSgemm_v2 / cublasDgemm_v2

	// The Go kernels (linalg's kernels_go.go, compiled to PTX by goampgen),
	// each beside its CUDA C twin.
	GoSimple     = "go-simple"      // MultiplyWithAMP in Go: naive's twin
	GoTiled16    = "go-tiled16"     // the tiled multiply for any shape in Go, 16x16 tiles: tiled16's twin
	GoTiled32    = "go-tiled32"     // the same, 32x32 tiles: tiled32's twin
	GoTiledExact = "go-tiled-exact" // C++ AMP's tiled multiply (seed 000), 16x16 tiles, sizes multiples of 16
)

// LibraryNames lists every library the benchmark knows, present or not.
var LibraryNames = []string{Naive, Tiled16, Tiled32, Reg128, GoSimple, GoTiled16, GoTiled32, GoTiledExact, CuBLAS}

// DefaultLibraries are those a run measures when not told: all but
// go-tiled-exact, which takes only sizes that are multiples of its tile.
var DefaultLibraries = []string{Naive, Tiled16, Tiled32, Reg128, GoSimple, GoTiled16, GoTiled32, CuBLAS}

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

// Library is a GPU GEMM the benchmark measures.
type Library struct {
	Name        string // one of LibraryNames; tables use it
	Description string // one line for the header of a table
	Multiply    MultiplyFunc
	// Gemm, if not nil, takes transposed operands too; a case with
	// transposes measures only the libraries that have it.
	Gemm GemmFunc
	// Multiple, if not 0, is what every size must be a multiple of.
	Multiple int
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
			want[Naive], want[Tiled16], want[Tiled32], want[Reg128] = true, true, true, true
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
	var libs []Library
	for _, name := range names {
		switch name {
		case Naive:
			libs = append(libs, goampLibrary(dev, name, kernels.MatmulNaive, 0,
				"matmul_naive.cu, 16x16 blocks, one thread per element of C, A and B read from global memory"))
		case Tiled16, Tiled32:
			tile := 16
			if name == Tiled32 {
				tile = 32
			}
			libs = append(libs, goampLibrary(dev, name, kernels.MatmulTiled, tile,
				fmt.Sprintf("matmul_tiled.cu, %dx%d tiles of A and B in shared memory, one thread per element of C", tile, tile)))
		case Reg128:
			libs = append(libs, gemmLibrary(dev, name, kernels.MatmulReg128,
				"matmul_reg128.cu, 128x128 tiles of C a block, 8x8 a thread in registers, loads two steps ahead"))
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
		case GoTiledExact:
			l := goKernelLibrary(dev, name, "go-tiled-exact", 16,
				"C++ AMP's tiled multiply (seed 000) written in Go, compiled to PTX, 16x16 tiles, sizes multiples of 16")
			l.Multiple = 16
			libs = append(libs, l)
		case CuBLAS:
			l, err := cublasLibrary(dev)
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

// gemmLibrary is one of goamp's GEMM kernels through gpu.Gemm, one product
// without transposes.
func gemmLibrary(dev *gpu.Device, name, technique string, desc string) Library {
	gemm := func(t cpubench.Type, tr cpubench.Trans, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
		s := gpu.GemmShape{TransA: tr.A, TransB: tr.B, M: m, N: n, K: k, LDA: lda, LDB: ldb, LDC: ldc, Batch: 1}
		if t == cpubench.Float64 {
			return gpu.Gemm[float64](dev, technique, s, 1, uint64(a), uint64(b), 0, uint64(c))
		}
		return gpu.Gemm[float32](dev, technique, s, 1, uint64(a), uint64(b), 0, uint64(c))
	}
	return Library{Name: name, Description: desc, Gemm: gemm,
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

// cublasLibrary is cuBLAS, timed as gpu.MatMul times goamp's kernels: an
// event on the default stream just before the call, one just after, and a
// wait for the second. cuBLAS queues on the default stream (the handle's
// stream is never set).
func cublasLibrary(dev *gpu.Device) (Library, error) {
	s, err := openBLAS(dev)
	if err != nil {
		return Library{}, err
	}
	gemm := func(t cpubench.Type, tr cpubench.Trans, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
		if err := s.start.Record(nil); err != nil {
			return 0, err
		}
		var err error
		if t == cpubench.Float64 {
			err = s.h.Dgemm(tr.A, tr.B, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
		} else {
			err = s.h.Sgemm(tr.A, tr.B, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
		}
		if err != nil {
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
	return Library{Name: CuBLAS, Description: s.info.String(), Gemm: gemm,
		Multiply: func(t cpubench.Type, m, n, k int, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, c cuda.DevicePtr, ldc int) (time.Duration, error) {
			return gemm(t, cpubench.Trans{}, m, n, k, a, lda, b, ldb, c, ldc)
		}}, nil
}

// IsUnavailable reports whether err says cuBLAS is not installed (rather
// than installed and failing).
func IsUnavailable(err error) bool { return errors.Is(err, cublas.ErrUnavailable) }
