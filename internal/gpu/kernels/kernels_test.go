package kernels

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const rebuild = "run internal/gpu/kernels/build.sh on a machine with nvcc"

// sourcesFile parses SOURCES.sha256 (sha256sum format, # comments) as
// embedded: file name -> hex sha256.
func sourcesFile(t *testing.T) map[string]string {
	t.Helper()
	b, err := files.ReadFile("SOURCES.sha256")
	if err != nil {
		t.Fatalf("SOURCES.sha256 is not embedded: %v; %s", err, rebuild)
	}
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimSpace(name), "*")
		if !ok || len(sum) != 64 || name == "" {
			t.Fatalf("SOURCES.sha256: malformed line %q; %s", line, rebuild)
		}
		sums[name] = strings.ToLower(sum)
	}
	return sums
}

// sources lists the .cu files in this folder, sorted.
func sources(t *testing.T) []string {
	t.Helper()
	cu, err := filepath.Glob("*.cu")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(cu)
	if len(cu) == 0 {
		t.Fatal("no .cu files found next to the test")
	}
	return cu
}

func TestSourcesMatchBuild(t *testing.T) {
	sums := sourcesFile(t)
	headers, err := filepath.Glob("*.cuh")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(sources(t), headers...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		want, ok := sums[name]
		switch {
		case !ok:
			t.Errorf("%s is new and was never built: %s", name, rebuild)
		case hex.EncodeToString(h[:]) != want:
			t.Errorf("%s changed without being rebuilt: %s", name, rebuild)
		}
		delete(sums, name)
	}
	for name := range sums {
		t.Errorf("SOURCES.sha256 lists %s, which is gone: remove its fatbin and %s", name, rebuild)
	}
}

func TestEverySourceHasAFatbin(t *testing.T) {
	var cu []string
	for _, name := range sources(t) {
		cu = append(cu, strings.TrimSuffix(name, ".cu"))
	}
	// On disk, and in what go:embed put in the binary.
	disk, err := filepath.Glob("*.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range disk {
		disk[i] = strings.TrimSuffix(n, ".fatbin")
	}
	sort.Strings(disk)
	embedded := Files()
	for _, n := range cu {
		if !slices.Contains(disk, n) {
			t.Errorf("%s.cu has no %s.fatbin: %s", n, n, rebuild)
		}
	}
	for _, n := range disk {
		if !slices.Contains(cu, n) {
			t.Errorf("%s.fatbin has no %s.cu: remove it, or restore its source", n, n)
		}
	}
	if !slices.Equal(embedded, disk) {
		t.Errorf("Files() = %v, want the fatbins on disk %v", embedded, disk)
	}
}

// symbolLine matches the kernel-defining macro calls in the .cu files, e.g.
// "MATMUL_TILED(matmul_tiled8_f32, float, 8)" at the start of a line.
var symbolLine = regexp.MustCompile(`(?m)^[A-Z][A-Z0-9_]*\(([a-z][a-z0-9_]*), *(float|double|int)\b`)

func TestTableMatchesSources(t *testing.T) {
	ctype := map[string]string{"float": Float32, "double": Float64, "int": Int32}
	for _, name := range sources(t) {
		file := strings.TrimSuffix(name, ".cu")
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		inSource := map[string]string{}
		for _, m := range symbolLine.FindAllStringSubmatch(string(b), -1) {
			inSource[m[1]] = ctype[m[2]]
		}
		if len(inSource) == 0 {
			t.Errorf("%s: found no kernel definitions (NAME(symbol, type, ...) lines)", name)
		}
		for _, k := range Kernels() {
			if k.File != file {
				continue
			}
			elem, ok := inSource[k.Symbol]
			switch {
			case !ok:
				t.Errorf("%s does not define %s, which the table lists", name, k.Symbol)
			case elem != k.Elem:
				t.Errorf("%s defines %s for %s, the table says %s", name, k.Symbol, elem, k.Elem)
			}
			delete(inSource, k.Symbol)
		}
		for sym := range inSource {
			t.Errorf("%s defines %s, which the table in kernels.go does not list", name, sym)
		}
	}
}

func TestFatbinsHoldEveryKernel(t *testing.T) {
	const fatbinMagic = 0xBA55ED50 // fatBinaryCtl.h: FATBIN_MAGIC, little-endian
	for _, file := range Files() {
		img, err := Image(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(img) < 16 || binary.LittleEndian.Uint32(img) != fatbinMagic {
			t.Errorf("%s.fatbin does not start with the fatbin magic: %s", file, rebuild)
			continue
		}
		n := 0
		for _, k := range Kernels() {
			if k.File != file {
				continue
			}
			n++
			// The name is in each cubin's string table and in the PTX
			// (build.sh turns compression off).
			if c := bytes.Count(img, []byte(k.Symbol)); c < 2 {
				t.Errorf("%s.fatbin holds %q %d times, want it in the SASS and the PTX: %s", file, k.Symbol, c, rebuild)
			}
		}
		if n == 0 {
			t.Errorf("%s.fatbin: the table in kernels.go lists no kernel for it", file)
		}
	}
}

func TestSymbol(t *testing.T) {
	for _, c := range []struct {
		file string
		tile int
		elem string
		want string
	}{
		{MatmulNaive, 0, Float32, "matmul_naive_f32"},
		{MatmulNaive, 0, Int32, "matmul_naive_i32"},
		{MatmulTiled, 8, Float64, "matmul_tiled8_f64"},
		{MatmulTiled, 16, Float32, "matmul_tiled16_f32"},
		{MatmulTiled, 32, Int32, "matmul_tiled32_i32"},
		{DotShared, 0, Float64, "dot_shared_f64"},
		{DotWarp, 0, Int32, "dot_warp_i32"},
	} {
		got, err := Symbol(c.file, c.tile, c.elem)
		if err != nil || got != c.want {
			t.Errorf("Symbol(%q, %d, %q) = %q, %v; want %q", c.file, c.tile, c.elem, got, err, c.want)
		}
	}
	for _, c := range []struct {
		file string
		tile int
		elem string
	}{
		{MatmulTiled, 0, Float32}, {MatmulTiled, 4, Float32}, {MatmulNaive, 16, Float32},
		{MatmulNaive, 0, "complex64"}, {"matmul_cublas", 0, Float32}, {DotWarp, 0, "f32"},
	} {
		if got, err := Symbol(c.file, c.tile, c.elem); !errors.Is(err, ErrNotFound) {
			t.Errorf("Symbol(%q, %d, %q) = %q, %v; want ErrNotFound", c.file, c.tile, c.elem, got, err)
		}
	}
	if len(Kernels()) != 103 {
		t.Errorf("%d kernels, want 103 (4 techniques and transpose x 3 types + 3 tiles x 3 types + (4 transposes + reduce) x 3 types + 2 skinny tiles x 4 transposes + whole K x 1 transpose + TMA-fed tn + 4 DMMA transposes + 2 TMA-fed DMMA tilings x 4 transposes + 3 MMA precisions x 4 transposes + 3 WGMMA precisions x (multiply + 2 packs + 4 fused transposes) + TF32's A-from-registers multiply, its tt twin and 3 fused transposes + TF32's 2 direct multiplies + the one-pass dot product's 2 tail kernels)", len(Kernels()))
	}
	if got, err := RSSymbol(TF32, false); err != nil || got != "matmul_wgmma_tf32_rs_f32" {
		t.Errorf("RSSymbol(tf32) = %q, %v", got, err)
	}
	if got, err := RSSymbol(TF32, true); err != nil || got != "matmul_wgmma_tf32_rs_tt_f32" {
		t.Errorf("RSSymbol(tf32, tt) = %q, %v", got, err)
	}
	if got, err := RSSymbol(BF16, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("RSSymbol(bf16) = %q, %v; want ErrNotFound", got, err)
	}
	for _, c := range []struct {
		precision      string
		transA, transB bool
		want           string
	}{
		{TF32, false, false, "matmul_wgmma_tf32_direct_nn_f32"},
		{TF32, true, true, "matmul_wgmma_tf32_direct_tt_f32"},
		{TF32, false, true, ""}, {TF32, true, false, ""}, {BF16, false, false, ""},
	} {
		got, err := DirectSymbol(c.precision, c.transA, c.transB)
		if c.want == "" && !errors.Is(err, ErrNotFound) || c.want != "" && (err != nil || got != c.want) {
			t.Errorf("DirectSymbol(%s, %v, %v) = %q, %v; want %q", c.precision, c.transA, c.transB, got, err, c.want)
		}
	}
	if got, err := FusedRSSymbol(TF32, false, true); err != nil || got != "matmul_wgmma_tf32_rs_fused_nt_f32" {
		t.Errorf("FusedRSSymbol(tf32, nt) = %q, %v", got, err)
	}
	if got, err := FusedRSSymbol(TF32, true, true); err != nil || got != "matmul_wgmma_tf32_rs_fused_tt_f32" {
		t.Errorf("FusedRSSymbol(tf32, tt) = %q, %v", got, err)
	}
	if got, err := FusedRSSymbol(TF32, true, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("FusedRSSymbol(tf32, tn) = %q, %v; want ErrNotFound", got, err)
	}
	if got, err := FusedSymbol(TF32, false, true); err != nil || got != "matmul_wgmma_tf32_fused_nt_f32" {
		t.Errorf("FusedSymbol(tf32, nt) = %q, %v", got, err)
	}
	if got, err := FusedSymbol(FP16, true, false); err != nil || got != "matmul_wgmma_fp16_fused_tn_f32" {
		t.Errorf("FusedSymbol(fp16, tn) = %q, %v", got, err)
	}
	if got, err := FusedSymbol("fp8", false, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("FusedSymbol(fp8) = %q, %v; want ErrNotFound", got, err)
	}
	if got, err := WGMMASymbol(FP16); err != nil || got != "matmul_wgmma_fp16_f32" {
		t.Errorf("WGMMASymbol(fp16) = %q, %v", got, err)
	}
	if got, err := PackSymbol(TF32, true); err != nil || got != "matmul_wgmma_tf32_pack_t_f32" {
		t.Errorf("PackSymbol(tf32, true) = %q, %v", got, err)
	}
	if got, err := PackSymbol(BF16, false); err != nil || got != "matmul_wgmma_bf16_pack_n_f32" {
		t.Errorf("PackSymbol(bf16, false) = %q, %v", got, err)
	}
	if got, err := WGMMASymbol("fp8"); !errors.Is(err, ErrNotFound) {
		t.Errorf("WGMMASymbol(fp8) = %q, %v; want ErrNotFound", got, err)
	}
	if got, err := GemmSymbol(MatmulMMA, BF16, true, true, Float32); err != nil || got != "matmul_mma_bf16_tt_f32" {
		t.Errorf("GemmSymbol(matmul_mma, bf16, tt, float32) = %q, %v", got, err)
	}
	for _, c := range []struct{ shape, elem string }{{"", Float32}, {TF32, Float64}, {"int8", Float32}} {
		if got, err := GemmSymbol(MatmulMMA, c.shape, false, false, c.elem); !errors.Is(err, ErrNotFound) {
			t.Errorf("GemmSymbol(matmul_mma, %q, %s) = %q, %v; want ErrNotFound", c.shape, c.elem, got, err)
		}
	}
	if got, err := GemmSymbol(MatmulReg128, "whole", true, false, Float32); err != nil || got != "matmul_reg128_whole_tn_f32" {
		t.Errorf("GemmSymbol(whole, tn, float32) = %q, %v", got, err)
	}
	if got, err := GemmSymbol(MatmulReg128, "m64", false, true, Float32); err != nil || got != "matmul_reg128_m64_nt_f32" {
		t.Errorf("GemmSymbol(m64, nt, float32) = %q, %v", got, err)
	}
	if got, err := GemmSymbol(MatmulReg128, "n64", false, false, Float64); !errors.Is(err, ErrNotFound) {
		t.Errorf("GemmSymbol(n64, float64) = %q, %v; want ErrNotFound (float32 only)", got, err)
	}
	if got, err := GemmSymbol(MatmulDMMA, "", true, false, Float64); err != nil || got != "matmul_dmma_tn_f64" {
		t.Errorf("GemmSymbol(matmul_dmma, tn, float64) = %q, %v", got, err)
	}
	if got, err := GemmSymbol(MatmulDMMATMA, "", false, true, Float64); err != nil || got != "matmul_dmma_tma_nt_f64" {
		t.Errorf("GemmSymbol(matmul_dmma_tma, nt, float64) = %q, %v", got, err)
	}
	if got, err := GemmSymbol(MatmulDMMATMA, DMMATMA64Shape, true, true, Float64); err != nil || got != "matmul_dmma_tma_64x64_tt_f64" {
		t.Errorf("GemmSymbol(matmul_dmma_tma, 64x64, tt, float64) = %q, %v", got, err)
	}
	if got, err := GemmSymbol(MatmulDMMA, "", false, false, Float32); !errors.Is(err, ErrNotFound) {
		t.Errorf("GemmSymbol(matmul_dmma, float32) = %q, %v; want ErrNotFound (float64 only)", got, err)
	}
	if got, err := ReduceSymbol(MatmulReg128, Int32); err != nil || got != "matmul_reg128_reduce_i32" {
		t.Errorf("ReduceSymbol(matmul_reg128, int32) = %q, %v", got, err)
	}
	for _, c := range []struct {
		transA, transB bool
		elem, want     string
	}{
		{false, false, Float32, "matmul_reg128_nn_f32"},
		{false, true, Float64, "matmul_reg128_nt_f64"},
		{true, false, Int32, "matmul_reg128_tn_i32"},
		{true, true, Float32, "matmul_reg128_tt_f32"},
	} {
		got, err := GemmSymbol(MatmulReg128, "", c.transA, c.transB, c.elem)
		if err != nil || got != c.want {
			t.Errorf("GemmSymbol(%v, %v, %q) = %q, %v; want %q", c.transA, c.transB, c.elem, got, err, c.want)
		}
	}
	if got, err := GemmSymbol(MatmulTiled, "", false, false, Float32); !errors.Is(err, ErrNotFound) {
		t.Errorf("GemmSymbol(matmul_tiled) = %q, %v; want ErrNotFound", got, err)
	}
	if got, err := Symbol(MatmulReg128, 0, Float32); !errors.Is(err, ErrNotFound) {
		t.Errorf("Symbol(matmul_reg128) = %q, %v; want ErrNotFound (it needs its transposes)", got, err)
	}
	if !slices.Equal(Tiles(), []int{8, 16, 32}) {
		t.Errorf("Tiles() = %v", Tiles())
	}
}

func TestImage(t *testing.T) {
	want := []string{DotOnePass, DotShared, DotWarp, MatmulDMMA, MatmulDMMATMA, MatmulMMA, MatmulNaive, MatmulReg128, MatmulTiled, MatmulWGMMA, Transpose}
	if got := Files(); !slices.Equal(got, want) {
		t.Errorf("Files() = %v, want %v", got, want)
	}
	a, err := Image(MatmulTiled)
	if err != nil || len(a) == 0 {
		t.Fatalf("Image(%q) = %d bytes, %v", MatmulTiled, len(a), err)
	}
	a[0] ^= 0xff // the caller's copy: the next call is unchanged
	if b, _ := Image(MatmulTiled); b[0] == a[0] {
		t.Error("Image returns shared bytes, want a fresh copy")
	}
	for _, bad := range []string{"", "nope", "matmul_tiled.fatbin", "../kernels/matmul_tiled", "SOURCES", "SOURCES.sha256", "*"} {
		if _, err := Image(bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("Image(%q) error = %v, want ErrNotFound", bad, err)
		}
	}
}

func TestCompiler(t *testing.T) {
	if c := Compiler(); !strings.Contains(c, "release") {
		t.Errorf("Compiler() = %q, want nvcc's version line from SOURCES.sha256", c)
	}
}

func TestSharedBytes(t *testing.T) {
	if got := SharedBytes(DotShared, 256, 8); got != 2048 {
		t.Errorf("SharedBytes(dot_shared, 256, 8) = %d", got)
	}
	if got := SharedBytes(DotWarp, 256, 8); got != 64 {
		t.Errorf("SharedBytes(dot_warp, 256, 8) = %d", got)
	}
	if got := SharedBytes(DotWarp, 16, 4); got != 0 {
		t.Errorf("SharedBytes(dot_warp, 16, 4) = %d", got)
	}
	if got := SharedBytes(MatmulDMMATMA, 256, 8); got != DMMATMASharedBytes {
		t.Errorf("SharedBytes(matmul_dmma_tma, 256, 8) = %d, want %d", got, DMMATMASharedBytes)
	}
	if got := SharedBytes(MatmulTiled, 256, 4); got != 0 {
		t.Errorf("SharedBytes(matmul_tiled, 256, 4) = %d", got)
	}
}

// The launch shapes in kernels.go are the .cu files' #defines.
func TestLaunchShapesMatchSources(t *testing.T) {
	for _, c := range []struct {
		file, define string
		want         int
	}{
		{"matmul_dmma.cu", "DMMA_SHARED_BYTES", DMMASharedBytes},
		{"matmul_dmma.cu", "DMMA_BLOCKS_PER_SM", DMMABlocksPerSM},
		{"matmul_dmma.cu", "DMMA_TN_TILE_M", DMMATNTileM},
		{"matmul_dmma.cu", "DMMA_TN_SHARED_BYTES", DMMATNSharedBytes},
		{"matmul_dmma.cu", "DMMA_TN_BLOCKS_PER_SM", DMMATNBlocksPerSM},
		{"matmul_dmma_tma.cu", "DMMA_TMA_TILE_M", DMMATMATileM},
		{"matmul_dmma_tma.cu", "DMMA_TMA_THREADS", DMMATMAThreads},
		{"matmul_dmma_tma.cu", "DMMA_TMA_SHARED_BYTES", DMMATMASharedBytes},
		{"matmul_dmma_tma.cu", "DMMA_TMA_BLOCKS_PER_SM", DMMATMABlocksPerSM},
		{"matmul_dmma_tma.cu", "DMMA_TMA64_THREADS", DMMATMA64Threads},
		{"matmul_dmma_tma.cu", "DMMA_TMA64_SHARED_BYTES", DMMATMA64SharedBytes},
		{"matmul_dmma_tma.cu", "DMMA_TMA64_BLOCKS_PER_SM", DMMATMA64BlocksPerSM},
		{"dot_onepass.cu", "DOT_ONEPASS_THREADS", DotOnePassThreads},
		{"dot_onepass.cu", "DOT_ONEPASS_MAX_BLOCKS", DotOnePassMaxBlocks},
		{"dot_onepass.cu", "DOT_ONEPASS_LIMBS", DotOnePassLimbs},
		{"dot_onepass.cu", "DOT_ONEPASS_WORDS", DotOnePassWords},
		{"dot_onepass.cu", "DOT_ONEPASS_ACC_WORDS", DotOnePassAccWords},
		{"dot_onepass.cu", "DOT_ONEPASS_TAIL_BLOCKS", DotOnePassTailBlocks},
		{"matmul_reg128.cu", "REG128_TMA_SHARED_BYTES", Reg128TMASharedBytes},
		{"matmul_mma.cu", "MMA_SHARED_BYTES", MMASharedBytes},
		{"matmul_mma.cu", "MMA_BLOCKS_PER_SM", MMABlocksPerSM},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^#define ` + c.define + ` (\d+)$`).FindSubmatch(b)
		if m == nil {
			t.Errorf("%s has no #define %s", c.file, c.define)
			continue
		}
		if got, _ := strconv.Atoi(string(m[1])); got != c.want {
			t.Errorf("%s: %s is %d, kernels.go says %d", c.file, c.define, got, c.want)
		}
	}
}

// TestImagesEnv checks that a folder named by ImagesEnv replaces the
// embedded images it holds, and only those.
func TestImagesEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, MatmulDMMA+".fatbin"), []byte("another build"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, MatmulMMA+".fatbin"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ImagesEnv, dir)
	if b, err := Image(MatmulDMMA); err != nil || string(b) != "another build" {
		t.Errorf("Image(%q) with %s = %q, %v; want the folder's file", MatmulDMMA, ImagesEnv, b, err)
	}
	embedded, _ := files.ReadFile(MatmulTiled + ".fatbin")
	if b, err := Image(MatmulTiled); err != nil || !bytes.Equal(b, embedded) {
		t.Errorf("Image(%q) with no file of its own in %s: %d bytes, %v; want the embedded image", MatmulTiled, ImagesEnv, len(b), err)
	}
	// A file that is there but cannot be read is an error, not a silent
	// fall back to the embedded image.
	if _, err := Image(MatmulMMA); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Image(%q) with a folder in its place: %v, want a read error", MatmulMMA, err)
	}
	if _, err := Image("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Image(%q) with %s set: %v, want ErrNotFound", "nope", ImagesEnv, err)
	}
}
