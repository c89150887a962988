package kernels

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.fatbin SOURCES.sha256
var files embed.FS

// ErrNotFound is returned (wrapped) for a technique, tile or element type
// that has no kernel here.
var ErrNotFound = errors.New("kernels: no such kernel")

// The techniques, one .cu file and one fatbin each.
const (
	MatmulNaive  = "matmul_naive"
	MatmulTiled  = "matmul_tiled"
	MatmulReg128 = "matmul_reg128"
	MatmulDMMA   = "matmul_dmma" // float64 only, on the FP64 tensor cores (sm_80 and newer)
	// MatmulDMMATMA is MatmulDMMA's kernels fed by TMA, on Hopper (sm_90a
	// only): internal/gpu runs a float64 dmma product on them where the
	// operands allow; it is not a technique of its own.
	MatmulDMMATMA = "matmul_dmma_tma"
	// MatmulMMA multiplies float32 matrices on the tensor cores with the
	// operands rounded to a reduced precision (its kernels' shape: "tf32",
	// "bf16" or "fp16"), sums in float32 (sm_80 and newer).
	MatmulMMA = "matmul_mma"
	// MatmulWGMMA is MatmulMMA's contract on Hopper (sm_90a only): wgmma fed
	// by TMA, each product two steps, a packing kernel per operand
	// (PackSymbol) and the multiply (its kernels' shape: the precision).
	MatmulWGMMA = "matmul_wgmma"
	// Transpose copies matrices transposed (dst = src^T), for GEMMs that
	// run another layout's kernel (its kernels: Symbol(Transpose, 0, elem)).
	Transpose  = "transpose"
	DotShared  = "dot_shared"
	DotWarp    = "dot_warp"
	DotOnePass = "dot_onepass"
)

// The one-pass dot product's launch shape (dot_onepass.cu's
// DOT_ONEPASS_THREADS and DOT_ONEPASS_MAX_BLOCKS; its tail kernels,
// dot_onepass_tail_*, take DotOnePassTailBlocks blocks) and its
// accumulator: DotOnePassAccWords 8-byte words, of which the result is
// the first DotOnePassWords, DotOnePassLimbs limbs of a fixed-point sum
// and a word of flags (DOT_ONEPASS_LIMBS, DOT_ONEPASS_WORDS,
// DOT_ONEPASS_ACC_WORDS, DOT_ONEPASS_TAIL_BLOCKS).
const (
	DotOnePassThreads    = 256
	DotOnePassMaxBlocks  = 1024
	DotOnePassTailBlocks = 792
	DotOnePassLimbs      = 66
	DotOnePassWords      = 67
	DotOnePassAccWords   = 96
)

// The DMMA kernels' launch shapes (matmul_dmma.cu's DmmaShape and
// DmmaShapeTN): 64x64 tiles of C a block of 128 threads, DMMABlocksPerSM
// blocks an SM, each with DMMASharedBytes of dynamic shared memory; tn
// (op(A) = A^T, op(B) = B) has DMMATNTileM x 64 tiles, DMMATNBlocksPerSM
// blocks an SM and DMMATNSharedBytes.
const (
	DMMATile        = 64
	DMMAThreads     = 128
	DMMABlocksPerSM = 3
	DMMASharedBytes = 50688

	DMMATNTileM       = 128
	DMMATNBlocksPerSM = 2
	DMMATNSharedBytes = 75264

	// MatmulDMMATMA's kernels (sm_90a): DMMATMATileM x 64 tiles of C a
	// block of DMMATMAThreads (4 consumer warps and a producer
	// warpgroup), DMMATMABlocksPerSM blocks an SM, DMMATMASharedBytes of
	// dynamic shared memory each.
	DMMATMATileM       = 128
	DMMATMAThreads     = 256
	DMMATMABlocksPerSM = 2
	DMMATMASharedBytes = 99392

	// MatmulDMMATMA's second tiling, its kernels' shape DMMATMA64Shape:
	// 64x64 tiles a block of DMMATMA64Threads (4 consumer warps and a
	// producer warp), DMMATMA64BlocksPerSM blocks an SM,
	// DMMATMA64SharedBytes each.
	DMMATMA64Shape       = "64x64"
	DMMATMA64Threads     = 160
	DMMATMA64BlocksPerSM = 3
	DMMATMA64SharedBytes = 66624
)

// reg128's float32 tn kernel fed by TMA (matmul_reg128_tma_tn_f32, sm_90
// and newer): 128x128 tiles of C a block of 256 threads, two blocks an
// SM, Reg128TMASharedBytes of dynamic shared memory each (a ring of four
// steps of 16 along K), slices of K multiples of Reg128TMAStep.
const (
	Reg128TMAShape       = "tma"
	Reg128TMASharedBytes = 65536
	Reg128TMAStep        = 16
)

// The MMA kernels' launch shape (matmul_mma.cu's MmaShape): 128x128 tiles
// of C a block of 256 threads, MMABlocksPerSM blocks an SM, each with
// MMASharedBytes of dynamic shared memory (over the 48 KiB a kernel gets
// without asking).
const (
	MMATile        = 128
	MMAThreads     = 256
	MMABlocksPerSM = 2
	MMASharedBytes = 81920
)

// The WGMMA kernels' launch shape (matmul_wgmma.cu): 128x256 tiles of C a
// block of 384 threads (a producer and two consumer warpgroups), one block
// an SM, with WGMMASharedBytes of dynamic shared memory; the packing
// kernels' blocks of 32x8 threads each take a WGMMAPackTile square of an
// operand; WGMMARowBytes of K a step, the width of a TMA box.
const (
	WGMMATileM       = 128
	WGMMATileN       = 256
	WGMMAThreads     = 384
	WGMMASharedBytes = 197696
	WGMMAPackTile    = 32
	WGMMARowBytes    = 128
	// WGMMADirectBoxRows is the rows of M a TMA box of an operand that
	// lies along M brings to matmul_wgmma's direct kernels (32 rows, 128
	// bytes, by a step's 32 of K: matmul_wgmma.cu's MN_BOX_ROWS).
	WGMMADirectBoxRows = 32
)

// The reduced precisions of MatmulMMA and MatmulWGMMA, as their kernels'
// shapes name them.
const (
	TF32 = "tf32"
	BF16 = "bf16"
	FP16 = "fp16"
)

// Element types, as Go spells them.
const (
	Float32 = "float32"
	Float64 = "float64"
	Int32   = "int32"
)

// Kernel is one compiled kernel: the technique file it lives in, its tile
// (matmul_tiled only; 0 elsewhere), its variant (the GEMM techniques
// only), its element type and its extern "C" name.
type Kernel struct {
	File string // technique, e.g. "matmul_tiled": the image is File+".fatbin"
	Tile int    // TILE of a TILE x TILE block for matmul_tiled, else 0
	// Variant, in a GEMM technique, is "nn", "nt", "tn" or "tt" for the
	// product with op(A), op(B) transposed where it says t (with a prefix,
	// "m64_" or "n64_", for the kernels of 64x128 or 128x64 tiles,
	// "whole_" for reg128's float32 128x128 tn kernel compiled without
	// split K, "tma_" for its float32 tn kernel fed by TMA, and
	// "tf32_", "bf16_" or "fp16_" for MatmulMMA's precisions), or
	// "reduce" for the kernel that finishes a product split along K; in
	// MatmulWGMMA the precision ("tf32") for the multiply, the
	// precision and "_pack_n" or "_pack_t" for its packing kernels, and
	// the precision, "_fused_" and the transposes ("tf32_fused_nt") for
	// its kernels that pack as they multiply, and "tf32_rs",
	// "tf32_rs_tt" and "tf32_rs_fused_nn", "_nt" or "_tt" for its TF32
	// kernels that take an operand where it lies into registers, and
	// "tf32_direct_nn" and "_tt" for those that pack nothing; "tail" for DotOnePass's kernels whose blocks take the
	// last part of the work in chunks; "" elsewhere.
	Variant string
	Elem    string // Float32, Float64 or Int32
	Symbol  string // extern "C" name, for cuModuleGetFunction
}

// Tiles returns the tile sizes MatmulTiled is compiled for (8, 16 and 32),
// as its fatbin shows them.
func Tiles() []int {
	var out []int
	for _, k := range table {
		if k.File == MatmulTiled && k.Tile > 0 && !slices.Contains(out, k.Tile) {
			out = append(out, k.Tile)
		}
	}
	return out
}

var elems = []struct{ elem, suffix string }{
	{Float32, "f32"},
	{Float64, "f64"},
	{Int32, "i32"},
}

// table lists every kernel, in Files order, then tile, then element type.
// It is read off the embedded fatbins themselves (their symbol tables hold
// each kernel's NUL-terminated name), so that adding a technique is its .cu
// file and its fatbin, with no list here to keep in step.
var table = func() []Kernel {
	var t []Kernel
	for _, file := range Files() {
		image, err := files.ReadFile(file + ".fatbin")
		if err != nil {
			panic(err) // Files lists only embedded images
		}
		name := regexp.MustCompile(regexp.QuoteMeta(file) + `(\d*)(?:_((?:m64_|n64_|64x64_|whole_|tma_|tf32_|bf16_|fp16_|(?:tf32|bf16|fp16)_fused_|tf32_rs_fused_|tf32_direct_)?(?:nn|nt|tn|tt)|reduce|tail|(?:tf32|bf16|fp16)(?:_pack_[nt]|_rs(?:_tt)?)?))?_(f32|f64|i32)\x00`)
		seen := map[Kernel]bool{}
		var found []Kernel
		for _, m := range name.FindAllSubmatch(image, -1) {
			k := Kernel{File: file, Variant: string(m[2]), Symbol: strings.TrimSuffix(string(m[0]), "\x00")}
			k.Tile, _ = strconv.Atoi(string(m[1]))
			for _, e := range elems {
				if e.suffix == string(m[3]) {
					k.Elem = e.elem
				}
			}
			if !seen[k] {
				seen[k] = true
				found = append(found, k)
			}
		}
		sort.Slice(found, func(i, j int) bool {
			if found[i].Tile != found[j].Tile {
				return found[i].Tile < found[j].Tile
			}
			if found[i].Variant != found[j].Variant {
				return found[i].Variant < found[j].Variant
			}
			return elemOrder(found[i].Elem) < elemOrder(found[j].Elem)
		})
		t = append(t, found...)
	}
	return t
}()

func elemOrder(elem string) int {
	for i, e := range elems {
		if e.elem == elem {
			return i
		}
	}
	return len(elems)
}

// Kernels returns every kernel this package ships, so that tests and
// benchmarks can walk them all. The slice is the caller's.
func Kernels() []Kernel {
	return append([]Kernel(nil), table...)
}

// Symbol returns the extern "C" name of the kernel of technique file (e.g.
// MatmulTiled), tile (8, 16 or 32 for MatmulTiled; 0 for the others) and
// element type elem (Float32, Float64 or Int32): Symbol(MatmulTiled, 16,
// Float32) is "matmul_tiled16_f32". It returns an error wrapping ErrNotFound
// for a combination that was not compiled.
func Symbol(file string, tile int, elem string) (string, error) {
	for _, k := range table {
		if k.File == file && k.Tile == tile && k.Variant == "" && k.Elem == elem {
			return k.Symbol, nil
		}
	}
	return "", fmt.Errorf("%w: technique %q, tile %d, element type %q", ErrNotFound, file, tile, elem)
}

// GemmSymbol returns the extern "C" name of the GEMM kernel of technique
// file (MatmulReg128, MatmulDMMA or MatmulMMA) with tiles of shape (""
// for the technique's own, "m64" or "n64" for reg128's 64x128 or 128x64
// tiles, the precision TF32, BF16 or FP16 for MatmulMMA), for op(A) = A^T when
// transA, op(B) = B^T when transB, and element type elem:
// GemmSymbol(MatmulReg128, "", true, false, Float32) is
// "matmul_reg128_tn_f32". It returns an error wrapping ErrNotFound for a
// combination that was not compiled.
func GemmSymbol(file, shape string, transA, transB bool, elem string) (string, error) {
	variant := transName(transA, transB)
	if shape != "" {
		variant = shape + "_" + variant
	}
	return variantSymbol(file, variant, elem)
}

// ReduceSymbol returns the extern "C" name of the kernel that finishes a
// product of GEMM technique file split along K, for element type elem:
// ReduceSymbol(MatmulReg128, Float64) is "matmul_reg128_reduce_f64".
func ReduceSymbol(file, elem string) (string, error) {
	return variantSymbol(file, "reduce", elem)
}

// WGMMASymbol returns the extern "C" name of MatmulWGMMA's multiply in
// precision (TF32, BF16 or FP16), for float32 matrices:
// WGMMASymbol(BF16) is "matmul_wgmma_bf16_f32".
func WGMMASymbol(precision string) (string, error) {
	return variantSymbol(MatmulWGMMA, precision, Float32)
}

// PackSymbol returns the extern "C" name of MatmulWGMMA's kernel that packs
// a float32 operand along K in precision, reading it transposed (stored K
// x rows) when transposed: PackSymbol(TF32, true) is
// "matmul_wgmma_tf32_pack_t_f32".
func PackSymbol(precision string, transposed bool) (string, error) {
	v := precision + "_pack_n"
	if transposed {
		v = precision + "_pack_t"
	}
	return variantSymbol(MatmulWGMMA, v, Float32)
}

// transName is the "nn", "nt", "tn" or "tt" of a product's transposes.
func transName(transA, transB bool) string {
	trans := []byte("nn")
	if transA {
		trans[0] = 't'
	}
	if transB {
		trans[1] = 't'
	}
	return string(trans)
}

// FusedSymbol returns the extern "C" name of MatmulWGMMA's kernel that
// packs a product's float32 operands in precision while it multiplies
// them, op(A) and op(B) transposed where transA and transB say:
// FusedSymbol(TF32, false, true) is "matmul_wgmma_tf32_fused_nt_f32".
func FusedSymbol(precision string, transA, transB bool) (string, error) {
	return variantSymbol(MatmulWGMMA, precision+"_fused_"+transName(transA, transB), Float32)
}

// RSSymbol returns the extern "C" name of MatmulWGMMA's multiply that
// reads op(A) unpacked, float32 where it lies along K (op(A) not
// transposed), rounded by TMA as it copies it, into registers on its way
// to the tensor cores, so that only op(B)^T is packed: RSSymbol(TF32, false) is
// "matmul_wgmma_tf32_rs_f32". With tt, the kernel that computes a tt
// product as C^T = B A that way and writes C^T transposed into C:
// "matmul_wgmma_tf32_rs_tt_f32". Only TF32 has them.
func RSSymbol(precision string, tt bool) (string, error) {
	v := precision + "_rs"
	if tt {
		v += "_tt"
	}
	return variantSymbol(MatmulWGMMA, v, Float32)
}

// DirectSymbol returns the extern "C" name of MatmulWGMMA's multiply that
// packs nothing, for a product whose op(A) lies along M (stored K x M) and
// whose op(B)^T lies along K: the caller's operands described where they
// lie, and rounded by TMA as it copies them (cuda.TensorMapTFloat32).
// DirectSymbol(TF32, true, true) is "matmul_wgmma_tf32_direct_tt_f32";
// DirectSymbol(TF32, false, false) is "matmul_wgmma_tf32_direct_nn_f32",
// the same kernel for an nn product computed as C^T = B^T A^T and written
// transposed into C. An nt product has both operands along K and runs on
// WGMMASymbol's kernel; tn and the precisions other than TF32 have none.
func DirectSymbol(precision string, transA, transB bool) (string, error) {
	if transA != transB {
		return "", fmt.Errorf("%w: %s has no direct kernel for %s", ErrNotFound, MatmulWGMMA, transName(transA, transB))
	}
	return variantSymbol(MatmulWGMMA, precision+"_direct_"+transName(transA, transB), Float32)
}

// FusedRSSymbol returns the extern "C" name of the fused kernel (as
// FusedSymbol's) that reads an operand as RSSymbol's multiplies do and
// packs the other alone, for op(A) and op(B) transposed where transA and
// transB say (nn, nt and tt):
// FusedRSSymbol(TF32, false, true) is "matmul_wgmma_tf32_rs_fused_nt_f32".
func FusedRSSymbol(precision string, transA, transB bool) (string, error) {
	return variantSymbol(MatmulWGMMA, precision+"_rs_fused_"+transName(transA, transB), Float32)
}

func variantSymbol(file, variant, elem string) (string, error) {
	for _, k := range table {
		if k.File == file && k.Variant == variant && k.Elem == elem {
			return k.Symbol, nil
		}
	}
	return "", fmt.Errorf("%w: GEMM technique %q, %s, element type %q", ErrNotFound, file, variant, elem)
}

// Files returns the techniques that have an image, sorted: "dot_onepass",
// "dot_shared", "dot_warp", "matmul_dmma", "matmul_dmma_tma", "matmul_mma",
// "matmul_naive", "matmul_reg128", "matmul_tiled", "matmul_wgmma",
// "transpose".
func Files() []string {
	names, err := fs.Glob(files, "*.fatbin")
	if err != nil {
		panic(err) // the pattern is valid
	}
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".fatbin")
	}
	sort.Strings(names)
	return names
}

// ImagesEnv names an environment variable for testing other builds of the
// kernels on a GPU: a folder of <technique>.fatbin files that Image returns
// instead of the embedded images of those techniques (the others stay
// embedded). The symbols must be those of the embedded images.
// scripts/gpu-check.sh (GPU_CHECK_SM80=1) runs the kernels' sm_80 code on a
// Hopper GPU with it: images of compute_80 PTX alone, which the driver
// compiles for the GPU at hand with __CUDA_ARCH__ = 800, so that the
// Ampere branches run (DMMA's m8n8k4 steps, for one).
const ImagesEnv = "GOAMP_KERNEL_IMAGES"

// Image returns a fresh copy of the fatbin of technique file (e.g.
// "matmul_tiled"), ready for cuModuleLoadData. The driver picks the SASS for
// the device (sm_80, sm_90) or JIT-compiles the compute_90 PTX for a newer
// one. It returns an error wrapping ErrNotFound for an unknown technique.
// With ImagesEnv set, a file of that folder takes the embedded image's
// place.
func Image(file string) ([]byte, error) {
	if file == "" || strings.ContainsAny(file, "/\\.") {
		return nil, fmt.Errorf("%w: technique %q", ErrNotFound, file)
	}
	if dir := os.Getenv(ImagesEnv); dir != "" && slices.Contains(Files(), file) {
		b, err := os.ReadFile(filepath.Join(dir, file+".fatbin"))
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("kernels: %s from %s: %w", file, ImagesEnv, err)
		}
	}
	b, err := files.ReadFile(file + ".fatbin")
	if err != nil {
		return nil, fmt.Errorf("%w: technique %q (have %s)", ErrNotFound, file, strings.Join(Files(), ", "))
	}
	return b, nil
}

// SharedBytes returns the dynamic shared memory, in bytes, that a kernel of
// technique file needs at launch with blockDim.x = block and elements of
// elemSize bytes: block*elemSize for DotShared, (block/32)*elemSize for
// DotWarp, DMMASharedBytes for MatmulDMMA (its ring of panels; its tn
// kernel takes DMMATNSharedBytes), DMMATMASharedBytes for MatmulDMMATMA
// (its DMMATMA64Shape kernels take DMMATMA64SharedBytes), 0 for the
// other matrix multiplies (their shared memory is static, or, for
// MatmulMMA and MatmulWGMMA, sized by the launch shape's constants).
func SharedBytes(file string, block, elemSize int) int {
	switch file {
	case DotShared:
		return block * elemSize
	case DotWarp:
		return block / 32 * elemSize
	case MatmulDMMA:
		return DMMASharedBytes
	case MatmulDMMATMA:
		return DMMATMASharedBytes
	}
	return 0
}

// Compiler returns the nvcc that built the images, as build.sh recorded it in
// SOURCES.sha256 (e.g. "Cuda compilation tools, release 13.0, V13.0.88").
func Compiler() string {
	b, err := files.ReadFile("SOURCES.sha256")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# nvcc: "); ok {
			return v
		}
	}
	return ""
}
