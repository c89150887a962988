package gpu

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// wgmmaTiling is matmul_wgmma's one shape. Its slices of K are multiples
// of 64, a step of its 16-bit kernels and two of TF32's: a step never
// reads into the next slice.
var wgmmaTiling = gemmTiling{bm: kernels.WGMMATileM, bn: kernels.WGMMATileN, threads: kernels.WGMMAThreads, perSM: 1, shared: kernels.WGMMASharedBytes, kStep: 64}

// wgmmaPacked describes how matmul_wgmma's packing kernels lay an operand
// out in precision: the element's type for TMA and its size, and the row
// stride, in elements, for K elements a row (rows padded to 16 bytes, as
// TMA needs).
func wgmmaPacked(precision string, k int) (typ cuda.TensorMapType, size, ld int) {
	switch precision {
	case kernels.TF32:
		typ = cuda.TensorMapFloat32 // already rounded by the packing kernel
	case kernels.BF16:
		typ = cuda.TensorMapBFloat16
	default:
		typ = cuda.TensorMapFloat16
	}
	size = typ.Size()
	per := 16 / size
	return typ, size, ceilDiv(max(k, 1), per) * per
}

// wgmmaMaxRows is the largest M or N that matmul_wgmma takes: its packing
// kernels step over rows a grid's height (65535 blocks of 32 rows) at a
// time in 32-bit arithmetic, which must not pass 2^31.
const wgmmaMaxRows = 1<<31 - 1 - 65535*32

// wgmmaMaxSlice is the longest slice of K one block of matmul_wgmma takes
// (its count of steps is 32-bit arithmetic on the slice's length).
const wgmmaMaxSlice = 1<<31 - 128

// wgmmaFuseOff runs every product as packing kernels and a multiply, for
// the benchmark that compares them with the fused kernels
// (GOAMP_WGMMA_NO_FUSE=1).
var wgmmaFuseOff = os.Getenv("GOAMP_WGMMA_NO_FUSE") == "1"

// wgmmaRSOff packs op(A) in TF32 too, for the benchmark and the tests
// that compare it with reading op(A) where it lies (GOAMP_WGMMA_NO_RS=1).
var wgmmaRSOff = os.Getenv("GOAMP_WGMMA_NO_RS") == "1"

// wgmmaRSRuns counts the products queued with an operand read where it
// lies, and wgmmaRSTTRuns the tt ones among them (computed as C^T), for
// the tests that check the paths ran.
var wgmmaRSRuns, wgmmaRSTTRuns atomic.Int64

// wgmmaRegistersA reports whether a product at a reads op(A) where it
// lies, rounded to TF32 by TMA as it copies it, into registers on its way
// to the tensor cores (kernels.RSSymbol), packing op(B)^T alone: TF32
// with op(A) stored along K, as TMA can read it (its start and its rows
// on 16 bytes; a batch's products apart, by a multiple of 16 bytes). The
// rounding is the packing kernel's (to nearest even), so the products are
// the same; products whose op(B) TMA can read where it lies too pack
// nothing (wgmmaDirect) and never come here; a tt product run as C^T may split
// K into other slices, and so add its sums in another order. Measured on the
// H100 (docs/PERFORMANCE.md, "A in registers"): TF32 nn 4096^3 0.90 of
// cuBLAS against 0.82 with both operands packed. A tt product whose B
// passes (asked of wgmmaTransposed's shape) runs as C^T = B A that way.
func wgmmaRegistersA(s GemmShape, a uint64) bool {
	return !wgmmaRSOff && s.Precision == kernels.TF32 && !s.TransA && s.K > 0 && wgmmaLies(a, s.LDA, s.StrideA, s.Batch)
}

// wgmmaTransposed is the shape of C^T = op(B)^T op(A)^T for a product of
// shape s: N x M, B as the first operand and A as the second, each with
// its own leading dimension and batch stride, transposed where s's other
// operand was; C's leading dimension and stride stay (the kernels that
// take it write C^T transposed into C).
func wgmmaTransposed(s GemmShape) GemmShape {
	s.M, s.N = s.N, s.M
	s.TransA, s.TransB = !s.TransB, !s.TransA
	s.LDA, s.LDB = s.LDB, s.LDA
	s.StrideA, s.StrideB = s.StrideB, s.StrideA
	return s
}

// wgmmaFusedWaves is how many waves of blocks (one an SM) a product may
// take and still run as one fused kernel, by precision. Measured on the
// H100 (docs/PERFORMANCE.md, "Packing inside the multiply"): fused, the
// packing overlaps the multiply but shares the SMs and L2 with it, which
// pays where little else is running (one wave: TF32 2048^3 0.77 of cuBLAS
// against 0.65, BF16 1.12 against 0.90) and costs past a few waves (BF16
// 8192^3: 1.43 against 1.52). TF32, whose packing moves twice the bytes,
// gains at every size measured (8192^3, 15.5 waves: 0.91 against 0.89).
var wgmmaFusedWaves = map[string]int{kernels.TF32: 16, kernels.BF16: 4, kernels.FP16: 4}

// wgmmaFusedMinK is the shortest K of a product of more than one wave
// that runs fused. With little K a block's multiply is short and waits for
// its items, which three warps a block pack more slowly than the packing
// kernels do: TF32 8192x8192x64 ran at 0.66-0.74 of cuBLAS fused against
// 0.85 as two kernels; from K = 3072 up fused won at every size measured.
// A variable for the tests that run the fused kernels' later waves on
// small products.
var wgmmaFusedMinK = 2048

// wgmmaFusedRuns counts the products queued as fused kernels, for the
// tests that check both paths ran.
var wgmmaFusedRuns atomic.Int64

// wgmmaPackers is the warps of each fused block that pack: all three
// that its producer warpgroup has besides the TMA thread's (one or two
// were 24% and 5% slower at 4096^3 in TF32).
const wgmmaPackers = 3

// wgmmaFusedChunk is K a flag of the fused kernels covers (matmul_wgmma.cu's
// KC): their counters are 1 + ceil(K/chunk)*(tiles of M + tiles of N).
const wgmmaFusedChunk = 128

// wgmmaFused reports whether a product of slices slices of K runs as one
// fused kernel on a GPU of sms SMs: one product, K whole, few enough tiles,
// K long enough if they take more than one wave, and items (32 rows by a
// chunk of K or half of one) that the kernels' 32-bit counter holds.
// With rs (wgmmaRegistersA) the kernel packs op(B)^T alone.
func wgmmaFused(s GemmShape, slices, sms int, rs bool) bool {
	if wgmmaFuseOff || slices != 1 || s.Batch != 1 || s.K == 0 {
		return false
	}
	tiles := wgmmaTiles(s)
	if tiles > sms && s.K < wgmmaFusedMinK {
		return false
	}
	rows := ceilDiv(s.N, 32)
	if !rs {
		rows += ceilDiv(s.M, 32)
	}
	items := ceilDiv(s.K, wgmmaFusedChunk) * rows
	if wgmmaHalfItems(s, sms, rs) {
		items *= 2
	}
	return tiles <= wgmmaFusedWaves[s.Precision]*sms && items < 1<<31
}

// wgmmaHalfItems reports whether a fused product packs items of half a
// chunk of K rather than whole ones: TF32 in one wave is 4% faster with
// them (2048^3), everything else 2-11% faster with whole chunks; with
// op(A) in registers (rs) TF32 is 6% faster with them in one wave and
// level past it (their packers load half items either way: the
// consumers took their registers).
func wgmmaHalfItems(s GemmShape, sms int, rs bool) bool {
	return s.Precision == kernels.TF32 && (rs || wgmmaTiles(s) <= sms)
}

// wgmmaTiles is the count of a product's tiles of C.
func wgmmaTiles(s GemmShape) int {
	return ceilDiv(s.M, kernels.WGMMATileM) * ceilDiv(s.N, kernels.WGMMATileN)
}

// gemmWGMMA queues a kernels.MatmulWGMMA product on st: op(A) and op(B)^T
// packed along K, rounded to s.Precision, into the device's workspace,
// then the multiply, which reads them through TMA descriptors. In TF32 TMA
// reads and rounds operands where they lie: nn, nt and tt products whose
// operands it can read pack nothing (wgmmaDirect); else an operand that
// lies along K is read where it lies and only the other is packed
// (wgmmaRegistersA, wgmmaTransposed). A product
// with too few tiles to fill the GPU is split along K (splitK) and its
// slices, which follow the packed operands in the workspace, added by
// reg128's reduce kernel. A product wgmmaFused picks runs instead as one
// kernel that packs while it multiplies (gemmWGMMAFused). The product
// holds the workspace until its kernels are queued, as a split product
// does. A product of more tiles than SMs may run on a persistent grid
// (wgmmaBlocks). With alpha = 0 or K = 0
// there is nothing to pack: the kernel scales C alone, with no workspace.
// It needs compute capability 9.0 (the kernels are sm_90a code, which no
// other GPU runs) and a driver that makes TMA descriptors (CUDA 12.0).
func gemmWGMMA(d *Device, st *cuda.Stream, t gemmTiling, s GemmShape, alpha float32, a, b uint64, beta float32, c uint64) (*Timing, error) {
	if p := d.Properties; p.ComputeMajor != 9 || p.ComputeMinor != 0 {
		return nil, fmt.Errorf("%w: %s runs on compute capability 9.0 only (Hopper), not %d.%d", kernels.ErrNotFound, kernels.MatmulWGMMA, p.ComputeMajor, p.ComputeMinor)
	}
	if !cuda.HasTMA() {
		return nil, fmt.Errorf("%w: %s: %w", kernels.ErrNotFound, kernels.MatmulWGMMA, cuda.ErrNoTMA)
	}
	if s.M > wgmmaMaxRows || s.N > wgmmaMaxRows {
		return nil, fmt.Errorf("gpu: gemm: %dx%d: %s takes M and N up to %d", s.M, s.N, kernels.MatmulWGMMA, wgmmaMaxRows)
	}
	sym, err := kernels.WGMMASymbol(s.Precision)
	if err != nil {
		return nil, err
	}
	f, err := wgmmaFunction(d, sym, t.shared)
	if err != nil {
		return nil, err
	}
	grid := [3]uint32{uint32(ceilDiv(s.M, t.bm) * ceilDiv(s.N, t.bn)), 1, uint32(s.Batch)}
	block := [3]uint32{uint32(t.threads), 1, 1}
	if alpha == 0 || s.K == 0 {
		// C = beta*C: no step to take, the descriptors never read.
		args, err := cuda.PackArgs(int32(s.M), int32(s.N), int32(0), alpha, cuda.TensorMap{}, cuda.TensorMap{}, beta,
			cuda.DevicePtr(c), int32(s.LDC), int64(s.StrideC), int32(1), cuda.DevicePtr(0))
		if err != nil {
			return nil, err
		}
		return d.Queue(st, func(st *cuda.Stream) error { return f.LaunchArgs(grid, block, t.shared, st, args) })
	}

	// In TF32 nn, nt and tt need no packing where TMA can read both
	// operands where they lie.
	if ks, ka, kb, sym, ok := wgmmaDirect(s, a, b); ok {
		if df, ma, mb, ok := wgmmaDirectReady(d, t, ks, ka, kb, sym); ok {
			return gemmWGMMADirect(d, st, t, df, s, ks, ma, mb, alpha, beta, c)
		}
	}

	// Else, in TF32, an operand lying along K is read where it lies (op(A)
	// of nn and nt; B of tt, whose product runs as C^T = B A, s and the
	// operands swapped from here on, C^T written transposed by the kernel).
	cShape, aIn, bIn := s, a, b // C's own M and N, for the reduce kernel
	rs, tc := wgmmaRegistersA(s, a), false
	if !rs && s.TransA && s.TransB && wgmmaRegistersA(wgmmaTransposed(s), b) {
		s, a, b = wgmmaTransposed(s), b, a
		rs, tc = true, true
	}
	if rs {
		// Kernels that are not as built here, or a descriptor the driver
		// refuses for the caller's operand, leave the product to the
		// kernels that pack both operands.
		rsSym, err1 := kernels.RSSymbol(s.Precision, tc)
		fusedSym, err2 := kernels.FusedRSSymbol(s.Precision, tc, s.TransB || tc)
		if err1 != nil || err2 != nil || !wgmmaRSReady(d, t, s, a, rsSym, fusedSym) {
			s, a, b = cShape, aIn, bIn
			rs, tc = false, false
		} else {
			if f, err = wgmmaFunction(d, rsSym, t.shared); err != nil {
				return nil, err
			}
			grid[0] = uint32(ceilDiv(s.M, t.bm) * ceilDiv(s.N, t.bn))
		}
	}

	typ, size, ld := wgmmaPacked(s.Precision, s.K)
	packedA, packedB := s.M*ld, s.N*ld // elements a product
	if rs {
		packedA = 0
	}
	slices, kSlice := 1, s.K
	if !s.WholeK {
		slices, kSlice = splitK(s, d.Properties.MultiProcessors, t)
	}
	if kSlice > wgmmaMaxSlice || ld > 1<<31-1 {
		return nil, fmt.Errorf("gpu: gemm: K = %d in one slice: %s takes up to %d", kSlice, kernels.MatmulWGMMA, wgmmaMaxSlice)
	}
	grid[1] = uint32(slices)
	if wgmmaFused(s, slices, d.Properties.MultiProcessors, rs) {
		return gemmWGMMAFused(d, st, t, s, alpha, a, b, beta, c, rs, tc)
	}
	grid[0] = uint32(wgmmaBlocks(s.Precision, int(grid[0]), slices, s.Batch, d.Properties.MultiProcessors))
	persistent := int(grid[0]) < wgmmaTiles(s)
	psym, err := kernels.PackSymbol(s.Precision, s.TransA)
	if err != nil {
		return nil, err
	}
	packA, err := functionBySymbol(d, kernels.MatmulWGMMA, psym)
	if err != nil {
		return nil, err
	}
	// op(B)^T is B itself when B is stored N x K (TransB).
	if psym, err = kernels.PackSymbol(s.Precision, !s.TransB); err != nil {
		return nil, err
	}
	packB, err := functionBySymbol(d, kernels.MatmulWGMMA, psym)
	if err != nil {
		return nil, err
	}
	var reduce *cuda.Function
	if slices > 1 {
		if reduce, err = reduceFunction(d, kernels.Float32); err != nil {
			return nil, err
		}
	}

	packedBytes := ceilDiv((packedA+packedB)*s.Batch*size, 256) * 256
	d.work.mu.Lock()
	defer d.work.mu.Unlock()
	if err := d.work.grow(d.Context, packedBytes+slices*s.M*s.N*s.Batch*4); err != nil {
		return nil, err
	}
	if err := st.Follow(d.work.last); err != nil {
		return nil, err
	}
	d.work.last = st
	wa := d.work.ptr
	wb := wa + cuda.DevicePtr(packedA*s.Batch*size)
	var work cuda.DevicePtr
	var rargs *cuda.Args
	if slices > 1 {
		work = wa + cuda.DevicePtr(packedBytes)
		if rargs, err = cuda.PackArgs(int32(cShape.M), int32(cShape.N), int32(slices), work, beta, cuda.DevicePtr(c), int32(s.LDC), int64(s.StrideC)); err != nil {
			return nil, err
		}
	}

	ma, mb, err := wgmmaTensorMaps(d, t, s, typ, size, ld, wa, wb, rs, a)
	if err != nil {
		return nil, err
	}
	args, err := cuda.PackArgs(int32(s.M), int32(s.N), int32(s.K), alpha, ma, mb, beta, cuda.DevicePtr(c), int32(s.LDC), int64(s.StrideC),
		int32(kSlice), work)
	if err != nil {
		return nil, err
	}
	argsA, err := cuda.PackArgs(int32(s.M), int32(s.K), cuda.DevicePtr(a), int32(s.LDA), int64(s.StrideA), wa, int32(ld), int64(packedA))
	if err != nil {
		return nil, err
	}
	argsB, err := cuda.PackArgs(int32(s.N), int32(s.K), cuda.DevicePtr(b), int32(s.LDB), int64(s.StrideB), wb, int32(ld), int64(packedB))
	if err != nil {
		return nil, err
	}
	const tile = kernels.WGMMAPackTile
	packGrid := func(rows int) [3]uint32 {
		return [3]uint32{uint32(ceilDiv(s.K, tile)), uint32(min(ceilDiv(rows, tile), 65535)), uint32(s.Batch)}
	}
	rgrid := [3]uint32{uint32(min(ceilDiv(s.M*s.N, 256), 1024)), uint32(s.Batch), 1} // batch in y, as the reduce kernel reads it
	return d.Queue(st, func(st *cuda.Stream) error {
		if persistent {
			wgmmaPersistRuns.Add(1)
		}
		if rs {
			wgmmaRSRuns.Add(1)
			if tc {
				wgmmaRSTTRuns.Add(1)
			}
		} else if err := packA.LaunchArgs(packGrid(s.M), [3]uint32{tile, 8, 1}, 0, st, argsA); err != nil {
			return err
		}
		if err := packB.LaunchArgs(packGrid(s.N), [3]uint32{tile, 8, 1}, 0, st, argsB); err != nil {
			return err
		}
		if err := f.LaunchArgs(grid, block, t.shared, st, args); err != nil {
			return err
		}
		if slices > 1 {
			return reduce.LaunchArgs(rgrid, [3]uint32{256, 1, 1}, 0, st, rargs)
		}
		return nil
	})
}

// gemmWGMMAFused queues one product (wgmmaFused) on st as
// kernels.FusedSymbol's kernel, which packs op(A) and op(B)^T into the
// device's workspace while it multiplies them, counting what it has packed
// on counters that follow the packed operands there (zeroed on st before
// the launch); with rs (wgmmaRegistersA) as kernels.FusedRSSymbol's, which
// packs op(B)^T alone, and with tc as its tt kernel: s is then C^T's shape
// (wgmmaTransposed), a is B and b is A.
func gemmWGMMAFused(d *Device, st *cuda.Stream, t gemmTiling, s GemmShape, alpha float32, a, b uint64, beta float32, c uint64, rs, tc bool) (*Timing, error) {
	sym, err := kernels.FusedSymbol(s.Precision, s.TransA, s.TransB)
	if rs {
		sym, err = kernels.FusedRSSymbol(s.Precision, tc, s.TransB || tc)
	}
	if err != nil {
		return nil, err
	}
	f, err := wgmmaFunction(d, sym, t.shared)
	if err != nil {
		return nil, err
	}
	typ, size, ld := wgmmaPacked(s.Precision, s.K)
	tilesM, tilesN := ceilDiv(s.M, t.bm), ceilDiv(s.N, t.bn)
	packedA := s.M * ld
	if rs {
		packedA = 0
	}
	packedBytes := ceilDiv((packedA+s.N*ld)*size, 256) * 256
	syncBytes := 4 * (1 + ceilDiv(s.K, wgmmaFusedChunk)*(tilesM+tilesN))

	d.work.mu.Lock()
	defer d.work.mu.Unlock()
	if err := d.work.grow(d.Context, packedBytes+syncBytes); err != nil {
		return nil, err
	}
	if err := st.Follow(d.work.last); err != nil {
		return nil, err
	}
	d.work.last = st
	wa := d.work.ptr
	wb := wa + cuda.DevicePtr(packedA*size)
	sync := wa + cuda.DevicePtr(packedBytes)

	ma, mb, err := wgmmaTensorMaps(d, t, s, typ, size, ld, wa, wb, rs, a)
	if err != nil {
		return nil, err
	}
	// 16-byte loads where the operand's start and rows allow them.
	flags := int32(0)
	if a%16 == 0 && s.LDA%4 == 0 {
		flags |= 1
	}
	if b%16 == 0 && s.LDB%4 == 0 {
		flags |= 2
	}
	if wgmmaHalfItems(s, d.Properties.MultiProcessors, rs) {
		flags |= 4
	}
	args, err := cuda.PackArgs(int32(s.M), int32(s.N), int32(s.K), alpha, ma, mb, beta, cuda.DevicePtr(c), int32(s.LDC),
		cuda.DevicePtr(a), int32(s.LDA), cuda.DevicePtr(b), int32(s.LDB), wa, wb, int32(ld), sync, flags,
		int32(d.Properties.MultiProcessors), int32(wgmmaPackers))
	if err != nil {
		return nil, err
	}
	grid := [3]uint32{uint32(tilesM * tilesN), 1, 1}
	block := [3]uint32{uint32(t.threads), 1, 1}
	return d.Queue(st, func(st *cuda.Stream) error {
		if err := st.Memset(sync, 0, syncBytes); err != nil {
			return err
		}
		if err := f.LaunchArgs(grid, block, t.shared, st, args); err != nil {
			return err
		}
		wgmmaFusedRuns.Add(1)
		if rs {
			wgmmaRSRuns.Add(1)
			if tc {
				wgmmaRSTTRuns.Add(1)
			}
		}
		return nil
	})
}

// wgmmaFunction returns kernels.MatmulWGMMA's kernel sym, allowed shared
// bytes of dynamic shared memory (its ring of stages is past the default
// 48 KiB).
func wgmmaFunction(d *Device, sym string, shared int) (*cuda.Function, error) {
	f, err := functionBySymbol(d, kernels.MatmulWGMMA, sym)
	if err != nil {
		return nil, err
	}
	if err := f.SetMaxDynamicSharedMemory(shared); err != nil {
		return nil, fmt.Errorf("gpu: gemm: %s: %w", sym, err)
	}
	return f, nil
}

// wgmmaRSRegisters is the register count the A-from-registers kernels must
// have at their launch: their setmaxnreg counts (matmul_wgmma.cu's
// RA_*_REGS) share out 384 threads of 168 registers, and with any other
// count a consumer's setmaxnreg.inc could wait forever.
const wgmmaRSRegisters = 168

// wgmmaRSReady reports whether the A-from-registers kernels syms are
// usable for s with op(A) at a: each loads with wgmmaRSRegisters
// registers, and the driver takes a TMA descriptor of op(A) where it lies.
func wgmmaRSReady(d *Device, t gemmTiling, s GemmShape, a uint64, syms ...string) bool {
	for _, sym := range syms {
		f, err := wgmmaFunction(d, sym, t.shared)
		if err != nil {
			return false
		}
		if n, err := f.Attribute(cuda.FuncNumRegs); err != nil || n != wgmmaRSRegisters {
			return false
		}
	}
	_, err := wgmmaRawA(d, t, s, a)
	return err == nil
}

// wgmmaRawA describes op(A) where it lies, at a, for TMA (wgmmaRegistersA's
// products): float32 rows of s.LDA elements, products s.StrideA apart,
// boxes of a step's 128 bytes of K by a tile's rows.
func wgmmaRawA(d *Device, t gemmTiling, s GemmShape, a uint64) (cuda.TensorMap, error) {
	stride := s.StrideA
	if s.Batch == 1 {
		stride = s.M * s.LDA // unused; a multiple of 16 bytes, as TMA asks
	}
	return wgmmaAlongK(d, a, s.M, s.K, s.LDA, stride, s.Batch, t.bm)
}

// wgmmaAlongK describes for TMA, rounding to TF32 as it copies, batch
// float32 matrices of rows x K at addr, rows ld elements apart and
// products stride apart: boxes of a step's 128 bytes of K by box rows, in
// the 128-byte swizzle, as the kernels read an operand that lies along K.
func wgmmaAlongK(d *Device, addr uint64, rows, k, ld, stride, batch, box int) (cuda.TensorMap, error) {
	return d.Context.EncodeTensorMap(cuda.TensorMapTFloat32, cuda.DevicePtr(addr), [3]uint64{uint64(k), uint64(rows), uint64(batch)},
		[2]uint64{uint64(ld * 4), uint64(stride * 4)}, [3]uint32{kernels.WGMMARowBytes / 4, uint32(box), 1})
}

// wgmmaDirectOff packs TF32 operands as before the direct kernels, for
// the benchmark and the tests that compare the paths
// (GOAMP_WGMMA_NO_DIRECT=1).
var wgmmaDirectOff = os.Getenv("GOAMP_WGMMA_NO_DIRECT") == "1"

// wgmmaDirectRuns counts the products queued with nothing packed, for the
// tests that check the path ran.
var wgmmaDirectRuns atomic.Int64

// wgmmaPersist says which precisions' multiplies run on a persistent grid
// (GOAMP_WGMMA_PERSIST): "tf32" (the default), "all", or "0" (or any
// other value) for none, a block a tile, as before the blocks walked
// several; the benchmark and the tests compare them. On the H100 TF32
// gained 0.005 to 0.036 of cuBLAS at 3072 and 4096 (none at 8192) and
// BF16 and FP16 lost up to 0.011 at 4096 and 8192, where the hardware's
// own scheduling of a block a tile balances the SMs a little better
// (docs/PERFORMANCE.md, "Persistent blocks").
var wgmmaPersist = os.Getenv("GOAMP_WGMMA_PERSIST")

// wgmmaPersistRuns counts the products queued with fewer blocks than
// tiles, for the tests that check the path ran.
var wgmmaPersistRuns atomic.Int64

// wgmmaBlocks is the x of a non-fused wgmma multiply's grid for a product
// in precision of tiles tiles of C a batch and slices slices of K on a
// GPU of sms SMs. A block takes a whole SM (its shared memory), so with
// more tiles than SMs the grid may be persistent (wgmmaPersist): one block
// an SM, each walking tiles gridDim.x apart in the grouped order, its ring
// of buffers running on from one tile to the next so that the copies of a
// tile's first steps overlap the epilogue of the tile before. Products
// that fill no more than the SMs, or that are split along K (which
// happens only when they do not fill them), get a block a tile.
func wgmmaBlocks(precision string, tiles, slices, batch, sms int) int {
	on := wgmmaPersist == "all" || (wgmmaPersist == "" || wgmmaPersist == kernels.TF32) && precision == kernels.TF32
	if !on || slices > 1 || sms <= 0 || tiles*batch <= sms {
		return tiles
	}
	return min(tiles, max(1, sms/batch))
}

// wgmmaLies reports whether TMA can read a float32 operand of batch
// products where it lies: its start, its rows (ld elements apart) and its
// products (stride apart) on 16 bytes.
func wgmmaLies(addr uint64, ld, stride, batch int) bool {
	return addr%16 == 0 && ld%4 == 0 && (batch == 1 || (stride > 0 && stride%4 == 0))
}

// wgmmaDirect picks the kernel that multiplies a TF32 product with
// nothing packed, TMA rounding both operands as it copies them where they
// lie (docs/PERFORMANCE.md, "TMA rounds TF32"): tt on kernels.DirectSymbol's
// tt kernel; nn on its nn kernel, as C^T = B^T A^T; nt, both of whose
// operands lie along K, on kernels.RSSymbol's tt kernel, as C^T = B A^T
// with B in registers (on the H100 0.97 of cuBLAS at 4096^3 against 0.95
// with both operands in shared memory on matmul_wgmma_tf32_f32). As C^T,
// ks is wgmmaTransposed(s), ka is b and kb is a. tn, whose operands both
// lie across K, and operands TMA cannot read where they lie have none.
func wgmmaDirect(s GemmShape, a, b uint64) (ks GemmShape, ka, kb uint64, sym string, ok bool) {
	if wgmmaDirectOff || s.Precision != kernels.TF32 || s.K == 0 || (s.TransA && !s.TransB) ||
		!wgmmaLies(a, s.LDA, s.StrideA, s.Batch) || !wgmmaLies(b, s.LDB, s.StrideB, s.Batch) {
		return s, a, b, "", false
	}
	var err error
	switch {
	case !s.TransA && s.TransB:
		sym, err = kernels.RSSymbol(s.Precision, true)
		s, a, b = wgmmaTransposed(s), b, a
	case s.TransA:
		sym, err = kernels.DirectSymbol(s.Precision, true, true)
	default:
		sym, err = kernels.DirectSymbol(s.Precision, false, false)
		s, a, b = wgmmaTransposed(s), b, a
	}
	return s, a, b, sym, err == nil
}

// wgmmaDirectReady returns wgmmaDirect's kernel sym and the TMA
// descriptors of its operands at a and b, for ks as the kernel sees it;
// false when the kernel is not as built here (each takes A from registers
// and must load with wgmmaRSRegisters registers) or the
// driver refuses a descriptor, and the product is left to the kernels
// that pack.
func wgmmaDirectReady(d *Device, t gemmTiling, ks GemmShape, a, b uint64, sym string) (f *cuda.Function, ma, mb cuda.TensorMap, ok bool) {
	f, err := wgmmaFunction(d, sym, t.shared)
	if err != nil {
		return nil, ma, mb, false
	}
	strideA, strideB := ks.StrideA, ks.StrideB
	if ks.Batch == 1 { // unused; multiples of 16 bytes, as TMA asks
		strideA, strideB = ks.LDA*max(ks.M, ks.K), ks.LDB*ks.N
	}
	// Every kernel here takes A from registers.
	if n, err := f.Attribute(cuda.FuncNumRegs); err != nil || n != wgmmaRSRegisters {
		return nil, ma, mb, false
	}
	if ks.TransA { // op(A) stored K x M: boxes of 32 of M by a step's 32 of K, swizzled
		ma, err = d.Context.EncodeTensorMap(cuda.TensorMapTFloat32, cuda.DevicePtr(a),
			[3]uint64{uint64(ks.M), uint64(ks.K), uint64(ks.Batch)}, [2]uint64{uint64(ks.LDA * 4), uint64(strideA * 4)},
			[3]uint32{kernels.WGMMADirectBoxRows, kernels.WGMMARowBytes / 4, 1})
	} else {
		ma, err = wgmmaAlongK(d, a, ks.M, ks.K, ks.LDA, strideA, ks.Batch, t.bm)
	}
	if err != nil {
		return nil, ma, mb, false
	}
	if mb, err = wgmmaAlongK(d, b, ks.N, ks.K, ks.LDB, strideB, ks.Batch, t.bn); err != nil {
		return nil, ma, mb, false
	}
	return f, ma, mb, true
}

// gemmWGMMADirect queues on st a product wgmmaDirect picked: f with the
// descriptors ma and mb for ks (the product as the kernel sees it; C's
// shape is s), split along K when its tiles do not fill the GPU, the
// slices in the device's workspace added by reg128's reduce kernel.
func gemmWGMMADirect(d *Device, st *cuda.Stream, t gemmTiling, f *cuda.Function, s, ks GemmShape, ma, mb cuda.TensorMap, alpha, beta float32, c uint64) (*Timing, error) {
	slices, kSlice := 1, ks.K
	if !ks.WholeK {
		slices, kSlice = splitK(ks, d.Properties.MultiProcessors, t)
	}
	if kSlice > wgmmaMaxSlice {
		return nil, fmt.Errorf("gpu: gemm: K = %d in one slice: %s takes up to %d", kSlice, kernels.MatmulWGMMA, wgmmaMaxSlice)
	}
	tiles := ceilDiv(ks.M, t.bm) * ceilDiv(ks.N, t.bn)
	blocks := wgmmaBlocks(ks.Precision, tiles, slices, ks.Batch, d.Properties.MultiProcessors)
	grid := [3]uint32{uint32(blocks), uint32(slices), uint32(ks.Batch)}
	block := [3]uint32{uint32(t.threads), 1, 1}
	if slices == 1 {
		args, err := cuda.PackArgs(int32(ks.M), int32(ks.N), int32(ks.K), alpha, ma, mb, beta, cuda.DevicePtr(c), int32(ks.LDC),
			int64(ks.StrideC), int32(kSlice), cuda.DevicePtr(0))
		if err != nil {
			return nil, err
		}
		return d.Queue(st, func(st *cuda.Stream) error {
			wgmmaDirectRuns.Add(1)
			if blocks < tiles {
				wgmmaPersistRuns.Add(1)
			}
			return f.LaunchArgs(grid, block, t.shared, st, args)
		})
	}
	reduce, err := reduceFunction(d, kernels.Float32)
	if err != nil {
		return nil, err
	}
	d.work.mu.Lock()
	defer d.work.mu.Unlock()
	if err := d.work.grow(d.Context, slices*s.M*s.N*s.Batch*4); err != nil {
		return nil, err
	}
	if err := st.Follow(d.work.last); err != nil {
		return nil, err
	}
	d.work.last = st
	work := d.work.ptr
	args, err := cuda.PackArgs(int32(ks.M), int32(ks.N), int32(ks.K), alpha, ma, mb, beta, cuda.DevicePtr(c), int32(ks.LDC),
		int64(ks.StrideC), int32(kSlice), work)
	if err != nil {
		return nil, err
	}
	rargs, err := cuda.PackArgs(int32(s.M), int32(s.N), int32(slices), work, beta, cuda.DevicePtr(c), int32(s.LDC), int64(s.StrideC))
	if err != nil {
		return nil, err
	}
	rgrid := [3]uint32{uint32(min(ceilDiv(s.M*s.N, 256), 1024)), uint32(s.Batch), 1} // batch in y, as the reduce kernel reads it
	return d.Queue(st, func(st *cuda.Stream) error {
		wgmmaDirectRuns.Add(1)
		if err := f.LaunchArgs(grid, block, t.shared, st, args); err != nil {
			return err
		}
		return reduce.LaunchArgs(rgrid, [3]uint32{256, 1, 1}, 0, st, rargs)
	})
}

// wgmmaTensorMaps describes the packed op(A) at wa and op(B)^T at wb (rows
// of ld elements of size bytes, s.Batch products one after another) for
// TMA: boxes of a step's 128 bytes of K by a tile's rows. With rs op(A)
// is described where it lies, at a (float32 rows of s.LDA elements,
// products s.StrideA apart).
func wgmmaTensorMaps(d *Device, t gemmTiling, s GemmShape, typ cuda.TensorMapType, size, ld int, wa, wb cuda.DevicePtr, rs bool, a uint64) (ma, mb cuda.TensorMap, err error) {
	box := uint32(kernels.WGMMARowBytes / size)
	if rs {
		ma, err = wgmmaRawA(d, t, s, a)
	} else {
		ma, err = d.Context.EncodeTensorMap(typ, wa, [3]uint64{uint64(s.K), uint64(s.M), uint64(s.Batch)},
			[2]uint64{uint64(ld * size), uint64(s.M * ld * size)}, [3]uint32{box, uint32(t.bm), 1})
	}
	if err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: %w", err)
	}
	mb, err = d.Context.EncodeTensorMap(typ, wb, [3]uint64{uint64(s.K), uint64(s.N), uint64(s.Batch)},
		[2]uint64{uint64(ld * size), uint64(s.N * ld * size)}, [3]uint32{box, uint32(t.bn), 1})
	if err != nil {
		return ma, mb, fmt.Errorf("gpu: gemm: %w", err)
	}
	return ma, mb, nil
}
