package gpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
	"github.com/goamp/goamp/internal/precision"
)

// TestGemmOnDevice checks the GEMM kernels (reg128 in every type, dmma in
// float64, mma in float32's reduced precisions; wgmma has its own test) where linalg's conformance suite
// cannot reach yet: every transpose, batches with strides, padded leading
// dimensions, operands that start off 16-byte alignment, and alpha and beta
// cases, against a float64 reference on the host. Every element of C's
// storage is compared: the ones outside the products must keep their
// poison. It needs a GPU and skips without one.
func TestGemmOnDevice(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 7))
	// A subtest a kernel, so that a slow tool (compute-sanitizer) can take
	// them one at a time.
	t.Run(kernels.MatmulReg128, func(t *testing.T) {
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			reg := kernels.MatmulReg128
			gemmCase[float32](t, d, reg, r, s, pad, off, alpha, beta)
			gemmCase[float64](t, d, reg, r, s, pad, off, alpha, beta)
			gemmCase[int32](t, d, reg, r, s, pad, off, math.Round(alpha*2), math.Round(beta*4))
		})
	})
	// Every float32 nt product on a transposed copy of A or B (see
	// relayoutFor), which only large ones take otherwise: split ones too.
	t.Run(kernels.MatmulReg128+"_relayout", func(t *testing.T) {
		defer func(work, ratio int64) { relayoutMinWork, relayoutMinRatio = work, ratio }(relayoutMinWork, relayoutMinRatio)
		relayoutMinWork, relayoutMinRatio = 0, 0
		before := relayouts.Load()
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			if s.TransB && !s.TransA {
				if alpha == 0 { // no copy then: the subtest above has that case
					alpha = 0.75
				}
				gemmCase[float32](t, d, kernels.MatmulReg128, r, s, pad, off, alpha, beta)
			}
		})
		// One A (or B) for the whole batch: one copy.
		for _, s := range []GemmShape{{TransB: true, M: 65, N: 300, K: 200, Batch: 3, StrideA: -1},
			{TransB: true, M: 300, N: 65, K: 200, Batch: 3, StrideB: -1}} {
			gemmCase[float32](t, d, kernels.MatmulReg128, r, s, 1, 1, 1, 0.5)
		}
		if relayouts.Load() == before {
			t.Error("no product ran on a transposed copy")
		}
	})
	// float32 tn with operands that TMA can read (on 16 bytes, row and
	// batch strides multiples of 4): on Hopper and newer every one of
	// 128x128 tiles runs on the TMA-fed kernel, split ones too; then every
	// layout on the copies that lead to it (see relayoutFor).
	t.Run(kernels.MatmulReg128+"_tma", func(t *testing.T) {
		before, n := reg128TMARuns.Load(), 0
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			if !s.TransA || s.TransB {
				return
			}
			s.StrideA, s.StrideB = 4, 8
			gemmCase[float32](t, d, kernels.MatmulReg128, r, s, -1-pad, 0, alpha, beta)
			if s.M > 64 && s.N > 64 {
				n++
			}
		})
		// Products split along K (few tiles, long K; slices of 16 steps'
		// multiples, the last ending in TMA's zeros), and rings that wrap
		// many times.
		for _, s := range []GemmShape{{TransA: true, M: 256, N: 256, K: 4096, Batch: 1}, {TransA: true, M: 200, N: 300, K: 700, Batch: 2, StrideA: 4, StrideB: 8},
			{TransA: true, M: 130, N: 129, K: 1000, Batch: 1}} {
			gemmCase[float32](t, d, kernels.MatmulReg128, r, s, -1, 0, 0.5, 0.25)
			n++
		}
		if !reg128TMADevice(d) {
			n = 0
		}
		if got := reg128TMARuns.Load() - before; got != int64(n) {
			t.Errorf("%d of %d aligned float32 tn products of 128x128 tiles ran on the TMA-fed kernel, want %d", got, n, n)
		}
		defer func(work, ratio int64) { relayoutMinWork, relayoutTNMinRatio = work, ratio }(relayoutMinWork, relayoutTNMinRatio)
		relayoutMinWork, relayoutTNMinRatio = 0, 0
		before, beforeCopies, n := reg128TMARuns.Load(), relayouts.Load(), 0
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			if s.TransA && !s.TransB {
				return
			}
			if alpha == 0 { // no copy then
				alpha = 0.75
			}
			s.StrideA, s.StrideB = 4, 8
			gemmCase[float32](t, d, kernels.MatmulReg128, r, s, -1-pad, 0, alpha, beta)
			if s.M > 64 && s.N > 64 && s.K > 0 {
				n++
			}
		})
		if !reg128TMADevice(d) {
			n = 0
		}
		if got := reg128TMARuns.Load() - before; got != int64(n) {
			t.Errorf("%d of %d aligned float32 nn, nt and tt products of 128x128 tiles ran on copies and the TMA-fed kernel, want %d", got, n, n)
		}
		if got := relayouts.Load() - beforeCopies; got < int64(n) {
			t.Errorf("%d products ran on copies, want at least %d", got, n)
		}
	})
	t.Run(kernels.MatmulDMMA, func(t *testing.T) {
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			gemmCase[float64](t, d, kernels.MatmulDMMA, r, s, pad, off, alpha, beta)
		})
		// The same shapes with operands that TMA can read (on 16 bytes,
		// even row and batch strides): on Hopper every one of them runs on
		// the TMA-fed kernels (most of the cases above cannot), in both
		// tilings.
		before, before64, n := dmmaTMARuns.Load(), dmmaTMA64Runs.Load(), 0
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			s.StrideA, s.StrideB = 2, 4
			gemmCase[float64](t, d, kernels.MatmulDMMA, r, s, -1-pad, 0, alpha, beta)
			if s.M > 0 && s.N > 0 {
				n++
			}
		})
		want := 0
		if dmmaTMAFor(d, GemmShape{M: 1, Batch: 1}, 0, 0) {
			// A Hopper GPU must load them (the embedded sm_90a image, the
			// 128x64 kernels with the registers setmaxnreg assumes).
			for _, tiling := range []gemmTiling{dmmaTMATiling, dmmaTMA64Tiling} {
				if !dmmaTMAKernelReady(d, tiling) {
					t.Errorf("the TMA-fed kernels (%s, %dx%d tiles) are not usable on %s", kernels.MatmulDMMATMA,
						tiling.bm, tiling.bn, d.Properties.Name)
				}
			}
			want = n
		}
		got, got64 := dmmaTMARuns.Load()-before, dmmaTMA64Runs.Load()-before64
		if got != int64(want) {
			t.Errorf("%d of %d aligned float64 products ran on the TMA-fed kernels, want %d", got, n, want)
		}
		if want > 0 && (got64 == 0 || got64 == got) {
			t.Errorf("%d of the %d products on the TMA-fed kernels had 64x64 tiles: want both tilings", got64, got)
		}
	})
	t.Run(kernels.MatmulMMA, func(t *testing.T) {
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			for _, p := range []string{kernels.TF32, kernels.BF16, kernels.FP16} {
				s.Precision = p
				gemmCase[float32](t, d, kernels.MatmulMMA, r, s, pad, off, alpha, beta)
			}
		})
	})
}

// TestGemmWGMMAOnDevice is TestGemmOnDevice for wgmma, on Hopper (compute
// capability 9.0, the one GPU that runs it); elsewhere it checks that
// wgmma is refused.
func TestGemmWGMMAOnDevice(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	if p := d.Properties; p.ComputeMajor != 9 || p.ComputeMinor != 0 {
		s := GemmShape{M: 2, N: 2, K: 2, LDA: 2, LDB: 2, LDC: 2, Batch: 1, Precision: kernels.BF16}
		if _, err := Gemm[float32](d, kernels.MatmulWGMMA, s, 1, 0, 0, 0, 0); !errors.Is(err, kernels.ErrNotFound) {
			t.Errorf("wgmma on compute capability %d.%d: %v, want kernels.ErrNotFound", p.ComputeMajor, p.ComputeMinor, err)
		}
		t.Skipf("SKIP: wgmma runs on compute capability 9.0 only, this GPU is %d.%d", p.ComputeMajor, p.ComputeMinor)
	}
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 8))
	precisions := []string{kernels.TF32, kernels.BF16, kernels.FP16}
	// As GemmOn picks: products of one batch and one slice of K run as
	// the fused kernels (wgmmaFused), the others pack first.
	t.Run("auto", func(t *testing.T) {
		before, rsBefore, ttBefore := wgmmaFusedRuns.Load(), wgmmaRSRuns.Load(), wgmmaRSTTRuns.Load()
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			for _, p := range precisions {
				s.Precision = p
				gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, pad, off, alpha, beta)
			}
		})
		// Fused products of many blocks, each checked to have run fused:
		// groups of block rows past the first and edges in M, N and K
		// (leading dimensions not multiples of 4: element by element), the
		// same with every leading dimension a multiple of 4 (16-byte loads,
		// transposed ones through the packers' tiles), and in TF32, fused
		// up to 16 waves (here of short K, which wgmmaFused otherwise
		// leaves to the two kernels), rows of op(B)^T past the first
		// wave's (N of 32 block columns, 17 of them in the first wave of
		// 132 SMs) and more blocks than SMs.
		// Aligned TF32 nn, nt and tt products would pack nothing (the
		// "direct" test): the fused and A-from-registers kernels checked
		// here are for the operands TMA cannot read where they lie.
		defer func(off bool) { wgmmaDirectOff = off }(wgmmaDirectOff)
		fused := func(s GemmShape, pad int, alpha, beta float64) {
			t.Helper()
			wgmmaDirectOff = true
			defer func() { wgmmaDirectOff = false }()
			runs := wgmmaFusedRuns.Load()
			gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, pad, 0, alpha, beta)
			if wgmmaFusedRuns.Load() == runs {
				t.Errorf("%dx%dx%d %s trans %v/%v did not run as a fused kernel", s.M, s.N, s.K, s.Precision, s.TransA, s.TransB)
			}
		}
		for _, s := range []GemmShape{{M: 2100, N: 600, K: 300}, {TransA: true, TransB: true, M: 1030, N: 520, K: 161}} {
			for _, p := range precisions {
				s.Batch, s.Precision = 1, p
				fused(s, 1, 1, 0.5)
			}
		}
		// The last with B read where it lies (tt as C^T, fused): many
		// blocks, both chunks, the grouped order.
		for _, s := range []GemmShape{{TransA: true, M: 1032, N: 520, K: 160}, {TransB: true, M: 1032, N: 520, K: 160}, {TransA: true, TransB: true, M: 1032, N: 520, K: 160}} {
			for _, p := range precisions {
				s.Batch, s.Precision = 1, p
				fused(s, 0, 0.5, 0)
			}
		}
		// Batches whose operand along K (A of nn and nt, B of tt) starts on
		// 16 bytes, product after product: read where it lies through the
		// third dimension of its TMA descriptor.
		rs, tt := wgmmaRSRuns.Load(), wgmmaRSTTRuns.Load()
		wgmmaDirectOff = true
		for _, s := range []GemmShape{{M: 130, N: 300, K: 68, Batch: 3, StrideA: 4},
			{TransB: true, M: 257, N: 64, K: 200, Batch: 2, StrideA: 8},
			{TransA: true, TransB: true, M: 100, N: 129, K: 36, Batch: 3, StrideB: 4},
			{TransA: true, TransB: true, M: 300, N: 40, K: 1500, Batch: 2, StrideB: 12}} {
			s.Precision = kernels.TF32
			gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, 0, 0, 0.75, 0.5)
		}
		wgmmaDirectOff = false
		if wgmmaRSRuns.Load()-rs != 4 || wgmmaRSTTRuns.Load()-tt != 2 {
			t.Errorf("aligned TF32 batches: %d read an operand where it lies (%d as C^T), want 4 (2)", wgmmaRSRuns.Load()-rs, wgmmaRSTTRuns.Load()-tt)
		}
		defer func(k int) { wgmmaFusedMinK = k }(wgmmaFusedMinK)
		wgmmaFusedMinK = 0
		fused(GemmShape{M: 1024, N: 8192, K: 64, Batch: 1, Precision: kernels.TF32}, 0, 1, 0)
		fused(GemmShape{TransB: true, M: 2304, N: 160 * d.Properties.MultiProcessors / 8, K: 200, Batch: 1, Precision: kernels.TF32}, 0, -1, 0)
		fused(GemmShape{TransA: true, TransB: true, M: 160 * d.Properties.MultiProcessors / 8, N: 2304, K: 200, Batch: 1, Precision: kernels.TF32}, 0, 1, 0)
		if wgmmaFusedRuns.Load() == before {
			t.Error("no product ran as a fused kernel")
		}
		if wgmmaRSRuns.Load() == rsBefore {
			t.Error("no TF32 product read op(A) where it lies")
		}
		if wgmmaRSTTRuns.Load() == ttBefore {
			t.Error("no TF32 tt product ran as C^T with B read where it lies")
		}
	})
	// TF32 with op(A) packed too, as before A was read where it lies.
	t.Run("packed_a", func(t *testing.T) {
		defer func(off, direct bool) { wgmmaRSOff, wgmmaDirectOff = off, direct }(wgmmaRSOff, wgmmaDirectOff)
		wgmmaRSOff, wgmmaDirectOff = true, true
		before := wgmmaRSRuns.Load()
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			s.Precision = kernels.TF32
			gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, pad, off, alpha, beta)
		})
		s := GemmShape{M: 2100, N: 600, K: 300, Batch: 1, Precision: kernels.TF32}
		gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, 0, 0, 1, 0.5)
		if wgmmaRSRuns.Load() != before {
			t.Error("a product read op(A) where it lies with GOAMP_WGMMA_NO_RS")
		}
	})
	// TF32 products whose operands TMA can read where they lie (on 16
	// bytes, rows and products whole 16 bytes apart): nn, nt and tt pack
	// nothing, TMA rounding the operands as it copies them; tn packs as
	// before. Every shape of TestGemmOnDevice, then many tiles (more than
	// a wave, edge tiles in M, N and K), split K and batches.
	t.Run("direct", func(t *testing.T) {
		defer func(off bool) { wgmmaDirectOff = off }(wgmmaDirectOff)
		wgmmaDirectOff = false
		before, n := wgmmaDirectRuns.Load(), 0
		direct := func(s GemmShape, pad int, alpha, beta float64) {
			t.Helper()
			s.Precision = kernels.TF32
			s.StrideA, s.StrideB = 4, 8
			gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, -1-pad, 0, alpha, beta)
			if s.K > 0 && alpha != 0 && !(s.TransA && !s.TransB) {
				n++
			}
		}
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) { direct(s, pad, alpha, beta) })
		for _, s := range []GemmShape{{M: 1030, N: 2100, K: 161, Batch: 1}, {TransB: true, M: 2100, N: 1030, K: 99, Batch: 1},
			{TransA: true, TransB: true, M: 1031, N: 2049, K: 130, Batch: 1}, {M: 300, N: 40, K: 1500, Batch: 2},
			{TransA: true, TransB: true, M: 40, N: 300, K: 1500, Batch: 2}, {TransB: true, M: 64, N: 600, K: 3000, Batch: 1}} {
			direct(s, 1, 1, 0.5)
		}
		if got := wgmmaDirectRuns.Load() - before; got != int64(n) {
			t.Errorf("%d of %d aligned TF32 nn, nt and tt products packed nothing, want %d", got, n, n)
		}
	})
	// Persistent grids (more tiles than SMs: blocks walking several tiles,
	// the ring running on across them) on every multiply that has one:
	// nothing packed, A from registers with B packed, both packed, in TF32
	// and the 16-bit types, edge tiles in M, N and K, beta reading C, and
	// batches whose blocks take one tile more than others. Each must have
	// run on fewer blocks than tiles.
	t.Run("persistent", func(t *testing.T) {
		defer func(persist string, direct, fuse bool) {
			wgmmaPersist, wgmmaDirectOff, wgmmaFuseOff = persist, direct, fuse
		}(wgmmaPersist, wgmmaDirectOff, wgmmaFuseOff)
		wgmmaPersist, wgmmaFuseOff = "all", true // the 16-bit kernels' tile loop too
		sms := d.Properties.MultiProcessors
		big := 128 * (sms/8 + 2) // block rows: with 9 block columns, more tiles than SMs
		before, n := wgmmaPersistRuns.Load(), 0
		for _, direct := range []bool{true, false} {
			wgmmaDirectOff = !direct
			for _, s := range []GemmShape{{M: big + 5, N: 2100, K: 130, Batch: 1}, {TransB: true, M: 2100, N: big - 3, K: 97, Batch: 1},
				{TransA: true, TransB: true, M: big, N: 2049, K: 64, Batch: 1}, {TransA: true, M: big + 1, N: 2300, K: 33, Batch: 1},
				{M: 1100, N: 1100, K: 70, Batch: 3, StrideA: 4, StrideB: 8}} {
				for _, p := range precisions {
					if direct && p != kernels.TF32 {
						continue
					}
					s.Precision = p
					gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, -1, 0, 0.75, 0.5)
					n++
				}
			}
		}
		if got := wgmmaPersistRuns.Load() - before; got != int64(n) {
			t.Errorf("%d of %d products of more tiles than SMs ran on a persistent grid, want all", got, n)
		}
	})
	// Every product as packing kernels and a multiply.
	t.Run("two_kernels", func(t *testing.T) {
		defer func(off bool) { wgmmaFuseOff = off }(wgmmaFuseOff)
		wgmmaFuseOff = true
		before := wgmmaFusedRuns.Load()
		gemmShapes(func(s GemmShape, pad, off int, alpha, beta float64) {
			for _, p := range precisions {
				s.Precision = p
				gemmCase[float32](t, d, kernels.MatmulWGMMA, r, s, pad, off, alpha, beta)
			}
		})
		if wgmmaFusedRuns.Load() != before {
			t.Error("a product ran as a fused kernel with GOAMP_WGMMA_NO_FUSE")
		}
	})
}

// TestWGMMAFused: which products run as one fused kernel.
func TestWGMMAFused(t *testing.T) {
	defer func(off bool) { wgmmaFuseOff = off }(wgmmaFuseOff)
	wgmmaFuseOff = false // whatever GOAMP_WGMMA_NO_FUSE says
	for _, c := range []struct {
		s      GemmShape
		slices int
		want   bool
	}{
		{GemmShape{M: 2048, N: 2048, K: 2048, Batch: 1, Precision: kernels.BF16}, 1, true},      // 128 tiles: one wave
		{GemmShape{M: 4096, N: 4096, K: 4096, Batch: 1, Precision: kernels.BF16}, 1, true},      // 512 tiles: 4 waves
		{GemmShape{M: 8192, N: 8192, K: 8192, Batch: 1, Precision: kernels.FP16}, 1, false},     // 2048 tiles
		{GemmShape{M: 8192, N: 8192, K: 8192, Batch: 1, Precision: kernels.TF32}, 1, true},      // TF32: 16 waves
		{GemmShape{M: 8192, N: 8192, K: 64, Batch: 1, Precision: kernels.TF32}, 1, false},       // 16 waves of one chunk each
		{GemmShape{M: 4096, N: 4096, K: 2048, Batch: 1, Precision: kernels.TF32}, 1, true},      // 4 waves, 16 chunks
		{GemmShape{M: 2048, N: 2048, K: 64, Batch: 1, Precision: kernels.TF32}, 1, true},        // one wave: any K
		{GemmShape{M: 16384, N: 16384, K: 1024, Batch: 1, Precision: kernels.TF32}, 1, false},   // 8192 tiles
		{GemmShape{M: 1024, N: 1024, K: 1024, Batch: 1, Precision: kernels.FP16}, 4, false},     // split along K
		{GemmShape{M: 256, N: 256, K: 256, Batch: 2, Precision: kernels.FP16}, 1, false},        // a batch
		{GemmShape{M: 64, N: 64, K: 0, Batch: 1, Precision: kernels.FP16}, 1, false},            // nothing to pack
		{GemmShape{M: 67584, N: 256, K: 1 << 26, Batch: 1, Precision: kernels.TF32}, 1, true},   // 528 tiles, 1.1e9 items
		{GemmShape{M: 16896, N: 256, K: 1 << 27, Batch: 1, Precision: kernels.TF32}, 1, true},   // one wave: 1.1e9 half items
		{GemmShape{M: 16896, N: 256, K: 1 << 28, Batch: 1, Precision: kernels.TF32}, 1, false},  // over 2^31 half items
		{GemmShape{M: 16896, N: 256, K: 1 << 28, Batch: 1, Precision: kernels.BF16}, 1, true},   // 1.1e9 whole items
		{GemmShape{M: 270336, N: 256, K: 1 << 25, Batch: 1, Precision: kernels.TF32}, 1, false}, // 2112 tiles, over 2^31 items
	} {
		if got := wgmmaFused(c.s, c.slices, 132, false); got != c.want {
			t.Errorf("wgmmaFused(%dx%dx%d %s, batch %d, %d slices) = %v, want %v", c.s.M, c.s.N, c.s.K, c.s.Precision, c.s.Batch, c.slices, got, c.want)
		}
	}
	// With op(A) in registers only op(B)^T's items count, always halves.
	for _, c := range []struct {
		s    GemmShape
		want bool
	}{
		{GemmShape{M: 8192, N: 8192, K: 8192, Batch: 1, Precision: kernels.TF32}, true},
		{GemmShape{M: 67584, N: 256, K: 1 << 26, Batch: 1, Precision: kernels.TF32}, true},   // 528 tiles, 8.4e6 half items of B
		{GemmShape{M: 256, N: 16896, K: 1 << 27, Batch: 1, Precision: kernels.TF32}, true},   // one wave: 1.1e9 half items of B
		{GemmShape{M: 67584, N: 4096, K: 1 << 23, Batch: 1, Precision: kernels.TF32}, false}, // over 16 waves
		{GemmShape{M: 256, N: 16896, K: 1 << 28, Batch: 1, Precision: kernels.TF32}, false},  // over 2^31 half items
	} {
		if got := wgmmaFused(c.s, 1, 132, true); got != c.want {
			t.Errorf("wgmmaFused(%dx%dx%d %s, A in registers) = %v, want %v", c.s.M, c.s.N, c.s.K, c.s.Precision, got, c.want)
		}
	}
}

// tf32NN is a TF32 nn product's shape for the tests of which products
// read their operands where they lie; tf32NNWith returns it changed by f.
var tf32NN = GemmShape{M: 100, N: 60, K: 40, LDA: 40, LDB: 60, LDC: 60, Batch: 1, Precision: kernels.TF32}

func tf32NNWith(f func(s *GemmShape)) GemmShape {
	s := tf32NN
	f(&s)
	return s
}

// TestWGMMARegistersA: which products read op(A) where it lies.
func TestWGMMARegistersA(t *testing.T) {
	defer func(off bool) { wgmmaRSOff = off }(wgmmaRSOff)
	wgmmaRSOff = false // whatever GOAMP_WGMMA_NO_RS says
	nn, with := tf32NN, tf32NNWith
	for _, c := range []struct {
		name string
		s    GemmShape
		a    uint64
		want bool
	}{
		{"tf32 nn", nn, 1 << 20, true},
		{"tf32 nt", with(func(s *GemmShape) { s.TransB = true }), 1 << 20, true},
		{"tf32 tn", with(func(s *GemmShape) { s.TransA = true; s.LDA = 100 }), 1 << 20, false},
		{"bf16", with(func(s *GemmShape) { s.Precision = kernels.BF16 }), 1 << 20, false},
		{"A off 16 bytes", nn, 1<<20 + 4, false},
		{"rows off 16 bytes", with(func(s *GemmShape) { s.LDA = 41 }), 1 << 20, false},
		{"K = 0", with(func(s *GemmShape) { s.K = 0 }), 1 << 20, false},
		{"batch", with(func(s *GemmShape) { s.Batch, s.StrideA = 3, 4000 }), 1 << 20, true},
		{"batch, odd stride", with(func(s *GemmShape) { s.Batch, s.StrideA = 3, 4001 }), 1 << 20, false},
		{"batch, one A", with(func(s *GemmShape) { s.Batch, s.StrideA = 3, 0 }), 1 << 20, false},
	} {
		if got := wgmmaRegistersA(c.s, c.a); got != c.want {
			t.Errorf("%s: wgmmaRegistersA = %v, want %v", c.name, got, c.want)
		}
	}
	tt := GemmShape{TransA: true, TransB: true, M: 100, N: 60, K: 40, LDA: 100, LDB: 40, LDC: 60, Batch: 2, StrideA: 4000, StrideB: 2400, StrideC: 6000, Precision: kernels.TF32}
	want := GemmShape{M: 60, N: 100, K: 40, LDA: 40, LDB: 100, LDC: 60, Batch: 2, StrideA: 2400, StrideB: 4000, StrideC: 6000, Precision: kernels.TF32}
	if got := wgmmaTransposed(tt); got != want {
		t.Errorf("wgmmaTransposed(tt) = %+v, want %+v", got, want)
	}
	if !wgmmaRegistersA(wgmmaTransposed(tt), 1<<20) {
		t.Error("a tt product's B along K: wgmmaRegistersA of its transpose = false, want true")
	}
	wgmmaRSOff = true
	if wgmmaRegistersA(nn, 1<<20) {
		t.Error("wgmmaRegistersA with GOAMP_WGMMA_NO_RS: true, want false")
	}
}

// TestWGMMADirect: which TF32 products pack nothing, and on which kernel.
func TestWGMMADirect(t *testing.T) {
	defer func(off bool) { wgmmaDirectOff = off }(wgmmaDirectOff)
	wgmmaDirectOff = false // whatever GOAMP_WGMMA_NO_DIRECT says
	nn, with := tf32NN, tf32NNWith
	const a, b = 1 << 20, 1 << 24
	for _, c := range []struct {
		name string
		s    GemmShape
		a, b uint64
		sym  string // "" for none
	}{
		{"nn", nn, a, b, "matmul_wgmma_tf32_direct_nn_f32"},
		{"nt", with(func(s *GemmShape) { s.TransB, s.LDB = true, 40 }), a, b, "matmul_wgmma_tf32_rs_tt_f32"},
		{"tt", with(func(s *GemmShape) { s.TransA, s.TransB, s.LDA, s.LDB = true, true, 100, 40 }), a, b, "matmul_wgmma_tf32_direct_tt_f32"},
		{"tn", with(func(s *GemmShape) { s.TransA, s.LDA = true, 100 }), a, b, ""},
		{"bf16", with(func(s *GemmShape) { s.Precision = kernels.BF16 }), a, b, ""},
		{"A off 16 bytes", nn, a + 4, b, ""},
		{"B off 16 bytes", nn, a, b + 8, ""},
		{"rows of B off 16 bytes", with(func(s *GemmShape) { s.LDB = 61 }), a, b, ""},
		{"K = 0", with(func(s *GemmShape) { s.K = 0 }), a, b, ""},
		{"batch", with(func(s *GemmShape) { s.Batch, s.StrideA, s.StrideB = 3, 4000, 2404 }), a, b, "matmul_wgmma_tf32_direct_nn_f32"},
		{"batch, odd stride", with(func(s *GemmShape) { s.Batch, s.StrideA, s.StrideB = 3, 4000, 2401 }), a, b, ""},
		{"batch, one B", with(func(s *GemmShape) { s.Batch, s.StrideA, s.StrideB = 3, 4000, 0 }), a, b, ""},
	} {
		ks, ka, kb, sym, ok := wgmmaDirect(c.s, c.a, c.b)
		if ok != (c.sym != "") || ok && sym != c.sym {
			t.Errorf("%s: wgmmaDirect = %q, %v; want %q", c.name, sym, ok, c.sym)
			continue
		}
		// nn and nt run as C^T: the shape and operands swapped.
		swapped := ok && !c.s.TransA
		want, wa, wb := c.s, c.a, c.b
		if swapped {
			want, wa, wb = wgmmaTransposed(c.s), c.b, c.a
		}
		if ok && (ks != want || ka != wa || kb != wb) {
			t.Errorf("%s: wgmmaDirect's product %+v at %#x, %#x; want %+v at %#x, %#x", c.name, ks, ka, kb, want, wa, wb)
		}
	}
	wgmmaDirectOff = true
	if _, _, _, _, ok := wgmmaDirect(nn, a, b); ok {
		t.Error("wgmmaDirect with GOAMP_WGMMA_NO_DIRECT: true, want false")
	}
}

// TestWGMMABlocks: the wgmma multiply's grid is persistent (a block an
// SM, fewer blocks than tiles) exactly when the tiles outnumber the SMs,
// K is whole and GOAMP_WGMMA_PERSIST covers the precision.
func TestWGMMABlocks(t *testing.T) {
	defer func(p string) { wgmmaPersist = p }(wgmmaPersist)
	tf32, bf16 := kernels.TF32, kernels.BF16
	for _, c := range []struct {
		persist, precision              string
		tiles, slices, batch, sms, want int
	}{
		{"", tf32, 1, 1, 1, 132, 1},
		{"", tf32, 132, 1, 1, 132, 132},  // one wave: a block a tile
		{"", tf32, 133, 1, 1, 132, 132},  // one block walks two tiles
		{"", tf32, 2048, 1, 1, 132, 132}, // 8192^2: 15 or 16 tiles a block
		{"", tf32, 45, 1, 3, 132, 44},    // 135 tiles in a batch of 3: 44 blocks a product
		{"", tf32, 45, 1, 2, 132, 45},    // 90: fits
		{"", tf32, 10, 1, 200, 132, 1},   // more products than SMs: a block each
		{"", tf32, 20, 6, 1, 132, 20},    // split along K: a block a tile
		{"", tf32, 300, 1, 1, 0, 300},    // SMs unknown
		{"", bf16, 2048, 1, 1, 132, 2048},
		{"tf32", bf16, 2048, 1, 1, 132, 2048},
		{"all", bf16, 2048, 1, 1, 132, 132},
		{"all", tf32, 2048, 1, 1, 132, 132},
		{"0", tf32, 2048, 1, 1, 132, 2048},
	} {
		wgmmaPersist = c.persist
		if got := wgmmaBlocks(c.precision, c.tiles, c.slices, c.batch, c.sms); got != c.want {
			t.Errorf("GOAMP_WGMMA_PERSIST=%q: wgmmaBlocks(%s, %d tiles, %d slices, batch %d, %d SMs) = %d, want %d",
				c.persist, c.precision, c.tiles, c.slices, c.batch, c.sms, got, c.want)
		}
	}
}

// gemmShapes calls f with the shapes, transposes, batches, paddings,
// offsets and alpha and beta cases of TestGemmOnDevice.
func gemmShapes(f func(s GemmShape, pad, off int, alpha, beta float64)) {
	// M or N of 64 or less take the 64x128 and 128x64 tiles in float32;
	// the last three are split along K (few tiles, long K).
	shapes := [][3]int{{1, 1, 1}, {1, 1, 0}, {3, 5, 7}, {17, 1, 33}, {1, 130, 129}, {128, 128, 8}, {129, 127, 9}, {257, 131, 67}, {64, 300, 250},
		{200, 64, 100}, {65, 65, 65}, {64, 300, 2000}, {300, 40, 1500}, {5, 3, 4099}}
	n := 0
	for _, sh := range shapes {
		for trans := range 4 {
			s := GemmShape{TransA: trans&2 != 0, TransB: trans&1 != 0, M: sh[0], N: sh[1], K: sh[2], Batch: 1 + n%3}
			pad, off := n%4, n%3 // pad leading dimensions; start off alignment
			alpha, beta := []float64{1, -0.5, 0}[n%3], []float64{0, 1, 0.25}[(n/3)%3]
			f(s, pad, off, alpha, beta)
			n++
		}
	}
}

// TestDMMATMAOperands: which float64 operands the TMA-fed kernels can
// read (TMA's addresses and strides are multiples of 16 bytes).
func TestDMMATMAOperands(t *testing.T) {
	ok := GemmShape{M: 64, N: 64, K: 64, LDA: 64, LDB: 64, LDC: 64, Batch: 1}
	batch := ok
	batch.Batch, batch.StrideA, batch.StrideB = 3, 64*64, 64*64+2
	for _, c := range []struct {
		name string
		s    GemmShape
		a, b uint64
		want bool
	}{
		{"aligned", ok, 256, 4096, true},
		{"A off 16 bytes", ok, 264, 4096, false},
		{"B off 16 bytes", ok, 256, 4104, false},
		{"odd lda", GemmShape{LDA: 65, LDB: 64, Batch: 1}, 256, 256, false},
		{"odd ldb", GemmShape{LDA: 64, LDB: 63, Batch: 1}, 256, 256, false},
		{"batch, even strides", batch, 256, 256, true},
		{"batch, odd stride of B", GemmShape{LDA: 64, LDB: 64, Batch: 2, StrideA: 4096, StrideB: 4097}, 256, 256, false},
		{"batch, one A for all", GemmShape{LDA: 64, LDB: 64, Batch: 2, StrideA: 0, StrideB: 4096}, 256, 256, false},
		{"one product: its strides unused", GemmShape{LDA: 64, LDB: 64, Batch: 1, StrideA: 3, StrideB: 0}, 256, 256, true},
	} {
		if got := dmmaTMAOperands(c.s, c.a, c.b); got != c.want {
			t.Errorf("%s: dmmaTMAOperands = %v, want %v", c.name, got, c.want)
		}
	}
	if dmmaTMATiling.bm != 128 || dmmaTMATiling.bn != 64 || dmmaTMATiling.kStep%16 != 0 || dmmaTMATiling.threads != 256 {
		t.Errorf("dmmaTMATiling %+v: want 128x64 tiles, steps of 16, 256 threads", dmmaTMATiling)
	}
}

// TestDMMATMATilingFor: the tiling of the TMA-fed float64 kernels each
// product takes on a GPU of 132 multiprocessors (the H100).
func TestDMMATMATilingFor(t *testing.T) {
	for _, c := range []struct {
		m, n, batch int
		want        gemmTiling
	}{
		{1024, 1024, 1, dmmaTMA64Tiling}, // 128 tiles of 128x64, 256 of 64x64
		{2048, 2048, 1, dmmaTMATiling},   // 512 of 128x64
		{1024, 1024, 2, dmmaTMATiling},   // 256 of 128x64 in a batch of two
		{64, 8192, 1, dmmaTMA64Tiling},   // 64 rows
		{1, 300, 7, dmmaTMA64Tiling},     // 1 row
		{65, 64, 1, dmmaTMATiling},       // 1 tile of 128x64, 2 of 64x64: neither fills the GPU
		{8192, 64, 1, dmmaTMATiling},     // 64 of 128x64, 128 of 64x64: neither fills the GPU
		{1100, 1100, 1, dmmaTMATiling},   // 9 x 18 = 162 of 128x64
		{1024, 1100, 1, dmmaTMATiling},   // 8 x 18 = 144 of 128x64
		{1000, 1000, 1, dmmaTMA64Tiling}, // 8 x 16 = 128 of 128x64, 256 of 64x64
	} {
		s := GemmShape{M: c.m, N: c.n, K: 512, Batch: c.batch}
		if got := dmmaTMATilingFor(s, 132); got != c.want {
			t.Errorf("%dx%d (batch %d): %dx%d tiles, want %dx%d", c.m, c.n, c.batch, got.bm, got.bn, c.want.bm, c.want.bn)
		}
	}
	if dmmaTMA64Tiling.bm != 64 || dmmaTMA64Tiling.bn != 64 || dmmaTMA64Tiling.kStep%16 != 0 || dmmaTMA64Tiling.shape != "64x64" {
		t.Errorf("dmmaTMA64Tiling %+v: want 64x64 tiles, steps of 16, symbols named 64x64", dmmaTMA64Tiling)
	}
}

// TestRelayoutFor: which products GemmOn runs on a transposed copy of an
// operand, and of which.
func TestRelayoutFor(t *testing.T) {
	reg, f32, f64 := kernels.MatmulReg128, kernels.Float32, kernels.Float64
	nt := func(m, n, k, batch int) GemmShape {
		return GemmShape{TransB: true, M: m, N: n, K: k, LDA: k, LDB: k, LDC: n, Batch: batch, StrideA: m * k, StrideB: n * k, StrideC: m * n}
	}
	panel := nt(2048, 2048, 2048, 1)
	panel.WholeK = true
	// A of 16384 x 16384 read by 4 products: 1 GiB once, 4 GiB four times.
	broadcastA := nt(16384, 16384, 16384, 4)
	broadcastA.StrideA = 0
	for _, c := range []struct {
		name      string
		technique string
		elem      string
		s         GemmShape
		want      relayout
	}{
		{"nt 2048", reg, f32, nt(2048, 2048, 2048, 1), copyA},
		{"nt 1536", reg, f32, nt(1536, 1536, 1536, 1), copyA},
		{"nt 1280: too small", reg, f32, nt(1280, 1280, 1280, 1), asItIs},
		{"nt 1024x1024x4096: the copy costs too much", reg, f32, nt(1024, 1024, 4096, 1), asItIs},
		{"nt 1024: too small", reg, f32, nt(1024, 1024, 1024, 1), asItIs},
		{"nt 8192x64x8192: B is the smaller", reg, f32, nt(8192, 64, 8192, 1), copyB},
		{"nt 64x8192x8192: A is the smaller", reg, f32, nt(64, 8192, 8192, 1), copyA},
		{"nt 512x512x8192", reg, f32, nt(512, 512, 8192, 1), asItIs},
		{"nt copy over 1 GiB", reg, f32, nt(16384, 16384, 16384, 2), asItIs},
		{"nt one A for a batch of 4 (stride 0): one copy", reg, f32, broadcastA, copyA},
		{"nt K = 0", reg, f32, nt(2048, 2048, 0, 1), asItIs},
		{"nt panel of a larger product", reg, f32, panel, asItIs},
		{"nn", reg, f32, GemmShape{M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 1}, asItIs},
		{"tt", reg, f32, GemmShape{TransA: true, TransB: true, M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 1}, asItIs},
		{"nt float64", reg, f64, nt(2048, 2048, 2048, 1), asItIs},
		{"nt int32", reg, kernels.Int32, nt(2048, 2048, 2048, 1), asItIs},
		{"nt dmma", kernels.MatmulDMMA, f64, nt(2048, 2048, 2048, 1), asItIs},
	} {
		if got := relayoutFor(c.technique, c.elem, c.s, tnReach{}); got != c.want {
			t.Errorf("%s: relayoutFor = %v, want %v", c.name, got, c.want)
		}
	}
	// Where the TMA-fed tn kernel runs, every layout of 128x128 tiles
	// that pays goes to it.
	sq := func(ta, tb bool, n, k int) GemmShape {
		return GemmShape{TransA: ta, TransB: tb, M: n, N: n, K: k, LDA: max(n, k), LDB: max(n, k), LDC: n, Batch: 1}
	}
	all, noA, noB := tnReach{true, true, true}, tnReach{true, false, true}, tnReach{true, true, false}
	for _, c := range []struct {
		name string
		s    GemmShape
		tn   tnReach
		want relayout
	}{
		{"nn 2048", sq(false, false, 2048, 2048), all, copyA},
		{"nn 2048, B off TMA", sq(false, false, 2048, 2048), noB, asItIs},
		{"nn 2048, A off TMA: A is copied", sq(false, false, 2048, 2048), noA, copyA},
		{"tt 2048", sq(true, true, 2048, 2048), all, copyB},
		{"tt 2048, A off TMA", sq(true, true, 2048, 2048), noA, asItIs},
		{"nt 2048: both", sq(false, true, 2048, 2048), all, copyAB},
		{"nt 2048, neither on TMA: both copied anyway", sq(false, true, 2048, 2048), tnReach{device: true}, copyAB},
		{"nt 2048 without the kernel: A", sq(false, true, 2048, 2048), tnReach{a: true, b: true}, copyA},
		{"tn 2048", sq(true, false, 2048, 2048), all, asItIs},
		{"nn 1024: too small", sq(false, false, 1024, 1024), all, asItIs},
		{"nn 4096x512x8192: the copy costs too much", GemmShape{M: 4096, N: 512, K: 8192, LDA: 8192, LDB: 512, LDC: 512, Batch: 1}, all, asItIs},
		{"nt 1536: both copies cost too much, A alone as before", sq(false, true, 1536, 1536), all, copyA},
		{"nt 8192x64x8192: 128x64 tiles, the old rule", nt(8192, 64, 8192, 1), all, copyB},
		{"nn float64", sq(false, false, 2048, 2048), all, asItIs},
		{"nn, one A for a batch: its copy has no tensor map", GemmShape{M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 2, StrideB: 2048 * 2048, StrideC: 2048 * 2048}, all, asItIs},
		{"tt, one B for a batch", GemmShape{TransA: true, TransB: true, M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 2, StrideA: 2048 * 2048, StrideC: 2048 * 2048}, all, asItIs},
		{"nt, one B for a batch: A alone, as before", GemmShape{TransB: true, M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 2, StrideA: 2048 * 2048, StrideC: 2048 * 2048}, all, copyA},
	} {
		elem := f32
		if c.name == "nn float64" {
			elem = f64
		}
		if got := relayoutFor(reg, elem, c.s, c.tn); got != c.want {
			t.Errorf("%s: relayoutFor = %v, want %v", c.name, got, c.want)
		}
	}
	if got := transposedLD(5); got != 8 {
		t.Errorf("transposedLD(5) = %d, want 8", got)
	}
}

func TestSplitK(t *testing.T) {
	f32, f64 := kernels.Float32, kernels.Float64
	for _, c := range []struct {
		m, n, k, batch int
		elem           string
		slices, kSlice int
	}{
		{1024, 1024, 1024, 1, f32, 4, 256},     // 64 tiles: 4 slices of 256
		{4096, 4096, 4096, 1, f32, 1, 4096},    // 1024 tiles fill 132 SMs
		{64, 8192, 8192, 1, f32, 6, 1368},      // 64 tiles of 64x128, three an SM: 6 slices (384 blocks of 396), the last 1352
		{8192, 64, 8192, 1, f64, 2, 4096},      // float64: 128x128 tiles, one an SM: 128 blocks, not 192
		{100, 100, 4096, 1, f32, 16, 256},      // one tile: at most 16 slices
		{1000, 1000, 4096, 1, f32, 4, 1024},    // 64 tiles, two an SM: 4 slices (256 blocks of 264), not 5
		{1024, 1024, 400, 1, f32, 1, 400},      // K too short to split
		{64, 300, 2000, 1, f32, 7, 288},        // 3 tiles; slices of at least 256
		{128, 128, 1 << 20, 1, f32, 16, 65536}, // at most 16
		{1024, 1024, 1024, 4, f32, 1, 1024},    // 4 products of 64 tiles fill the GPU
		{1, 1, 0, 1, f32, 1, 1},
	} {
		s := GemmShape{M: c.m, N: c.n, K: c.k, Batch: c.batch}
		slices, kSlice := splitK(s, 132, tilingFor(c.elem, c.m, c.n))
		if slices != c.slices || kSlice != c.kSlice {
			t.Errorf("splitK(%dx%dx%d %s, batch %d) = %d slices of %d, want %d of %d", c.m, c.n, c.k, c.elem, c.batch, slices, kSlice, c.slices, c.kSlice)
		}
		if kSlice%8 != 0 && slices > 1 {
			t.Errorf("slice %d is not a multiple of the kernels' step", kSlice)
		}
		if slices > 1 && (slices-1)*kSlice >= c.k {
			t.Errorf("%dx%dx%d: slice %d would be empty", c.m, c.n, c.k, slices)
		}
	}
}

// dmma's 64x64 tiles, three an SM, split less than reg128's float64 tiles.
func TestSplitKDMMA(t *testing.T) {
	for _, c := range []struct{ m, n, k, slices, kSlice int }{
		{64, 8192, 8192, 3, 2736},   // 128 tiles: 3 slices fit on 132 SMs three deep (384 blocks of 396)
		{1024, 1024, 1024, 1, 1024}, // 256 tiles fill the GPU
		{128, 128, 4096, 16, 256},   // 4 tiles, at most 16 slices
	} {
		if slices, kSlice := splitK(GemmShape{M: c.m, N: c.n, K: c.k, Batch: 1}, 132, dmmaTiling); slices != c.slices || kSlice != c.kSlice {
			t.Errorf("dmma: splitK(%dx%dx%d) = %d slices of %d, want %d of %d", c.m, c.n, c.k, slices, kSlice, c.slices, c.kSlice)
		}
	}
}

func TestTilingFor(t *testing.T) {
	for _, c := range []struct {
		elem         string
		m, n         int
		shape, whole string
	}{
		{kernels.Float32, 64, 8192, "m64", ""}, {kernels.Float32, 8192, 64, "n64", ""}, {kernels.Float32, 1, 1, "m64", ""},
		{kernels.Float32, 65, 8192, "", "whole"}, {kernels.Float32, 4096, 4096, "", "whole"},
		{kernels.Float64, 64, 8192, "", ""}, {kernels.Int32, 8192, 64, "", ""},
	} {
		got := tilingFor(c.elem, c.m, c.n)
		if got.shape != c.shape || got.whole != c.whole {
			t.Errorf("tilingFor(%s, %d, %d) = shape %q, whole %q; want %q, %q", c.elem, c.m, c.n, got.shape, got.whole, c.shape, c.whole)
		}
		// The kernel without split K that the tiling names is compiled
		// (tn only).
		if got.whole != "" {
			if _, err := kernels.GemmSymbol(kernels.MatmulReg128, got.whole, true, false, c.elem); err != nil {
				t.Errorf("%s: %v", c.elem, err)
			}
		}
	}
}

func gemmCase[T Element](t *testing.T, d *Device, technique string, r *rand.Rand, s GemmShape, pad, off int, alpha, beta float64) {
	t.Helper()
	rowsA, colsA := s.M, s.K
	if s.TransA {
		rowsA, colsA = s.K, s.M
	}
	rowsB, colsB := s.K, s.N
	if s.TransB {
		rowsB, colsB = s.N, s.K
	}
	// A negative StrideA or StrideB asks for one matrix that every product
	// of the batch reads (stride 0); a positive one for that many elements
	// between one product's operand and the next's (1 for A and 2 for B
	// otherwise).
	oneA, oneB := s.StrideA < 0, s.StrideB < 0
	gapA, gapB := 1, 2
	if s.StrideA > 0 {
		gapA = s.StrideA
	}
	if s.StrideB > 0 {
		gapB = s.StrideB
	}
	// A negative pad asks for leading dimensions of the columns plus
	// -pad-1, A's and B's rounded up to a multiple of 16 bytes (for TMA,
	// with off 0 and gaps of whole 16 bytes).
	roundLD := pad < 0
	if roundLD {
		pad = -pad - 1
	}
	s.LDA, s.LDB, s.LDC = max(1, colsA+pad), max(1, colsB+pad), max(1, s.N+pad)
	if roundLD {
		q := 16 / int(unsafe.Sizeof(T(0)))
		s.LDA = ceilDiv(s.LDA, q) * q
		s.LDB = ceilDiv(s.LDB, q) * q
	}
	s.StrideA, s.StrideB, s.StrideC = rowsA*s.LDA+gapA, rowsB*s.LDB+gapB, s.M*s.LDC+3
	if oneA {
		s.StrideA = 0
	}
	if oneB {
		s.StrideB = 0
	}
	random := func(n int) []T {
		out := make([]T, n)
		for i := range out {
			if _, ok := any(T(0)).(int32); ok {
				out[i] = T(r.IntN(19) - 9)
			} else {
				out[i] = T(r.Float64()*2 - 1)
			}
		}
		return out
	}
	a := random(off + max(s.StrideA*s.Batch, rowsA*s.LDA))
	b := random(off + max(s.StrideB*s.Batch, rowsB*s.LDB))
	c := random(off + s.StrideC*s.Batch)
	poison := T(0)
	switch p := any(&poison).(type) {
	case *float32:
		*p = float32(math.NaN())
	case *float64:
		*p = math.NaN()
	case *int32:
		*p = 0x5a5a5a5a
	}
	if beta == 0 {
		for i := range c {
			c[i] = poison // beta == 0 must not read C
		}
	}
	name := fmt.Sprintf("%s%s %T trans %v/%v %dx%dx%d batch %d pad %d off %d alpha %g beta %g", technique, s.Precision, T(0), s.TransA, s.TransB, s.M, s.N, s.K, s.Batch, pad, off, alpha, beta)
	size := int(unsafe.Sizeof(T(0)))
	upload := func(x []T) cuda.DevicePtr {
		p, err := d.Context.Alloc(len(x) * size)
		if err != nil {
			t.Fatal(err)
		}
		if err := cuda.CopySliceHtoD(d.Context, p, x); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pa, pb, pc := upload(a), upload(b), upload(c)
	defer d.Context.Free(pa)
	defer d.Context.Free(pb)
	defer d.Context.Free(pc)
	at := func(p cuda.DevicePtr) uint64 { return uint64(p) + uint64(off*size) }
	if _, err := Gemm(d, technique, s, T(alpha), at(pa), at(pb), T(beta), at(pc)); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := make([]T, len(c))
	if err := cuda.CopySliceDtoH(d.Context, got, pc); err != nil {
		t.Fatal(err)
	}
	// The operands as the reference multiplies them: in a reduced
	// precision, the product the kernel must return is that of the rounded
	// operands, summed in float32. Rounded once here, not in the loop
	// (which made this test take minutes).
	asFloat64 := func(x []T) []float64 {
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = float64(v)
			if s.Precision != "" {
				out[i] = float64(precision.Round(s.Precision, float32(v)))
			}
		}
		return out
	}
	ra, rb := asFloat64(a), asFloat64(b)
	inside := make([]bool, len(c))
	eps := map[int]float64{4: 0x1p-24, 8: 0x1p-53}[size]
	for bi := range s.Batch {
		for i := range s.M {
			for j := range s.N {
				var sum float64
				for k := range s.K {
					ia := off + bi*s.StrideA + i*s.LDA + k
					if s.TransA {
						ia = off + bi*s.StrideA + k*s.LDA + i
					}
					ib := off + bi*s.StrideB + k*s.LDB + j
					if s.TransB {
						ib = off + bi*s.StrideB + j*s.LDB + k
					}
					sum += ra[ia] * rb[ib]
				}
				ic := off + bi*s.StrideC + i*s.LDC + j
				inside[ic] = true
				want := alpha * sum
				if beta != 0 {
					want += beta * float64(c[ic])
				}
				g := float64(got[ic])
				// K products of numbers up to 1 in magnitude, each rounded,
				// and C's term; int32 is exact.
				tol := 4 * eps * (math.Abs(alpha)*float64(s.K+2) + 2*math.Abs(beta))
				if !(math.Abs(g-want) <= tol) {
					t.Fatalf("%s: C[%d][%d][%d] = %v, want %v", name, bi, i, j, g, want)
				}
			}
		}
	}
	for i := range c {
		if inside[i] {
			continue
		}
		if g, w := got[i], c[i]; g != w && !(g != g && w != w) { // NaN poison stays NaN
			t.Fatalf("%s: element %d outside every product changed from %v to %v", name, i, w, g)
		}
	}
}

// matmul_mma and matmul_wgmma take float32 in a reduced precision only;
// the others take no precision.
func TestGemmTechniquePrecision(t *testing.T) {
	f32, f64 := kernels.Float32, kernels.Float64
	for _, c := range []struct {
		technique, elem, precision string
		ok                         bool
	}{
		{kernels.MatmulMMA, f32, kernels.TF32, true},
		{kernels.MatmulMMA, f32, kernels.BF16, true},
		{kernels.MatmulMMA, f32, kernels.FP16, true},
		{kernels.MatmulMMA, f32, "", false},
		{kernels.MatmulMMA, f32, "fp8", false},
		{kernels.MatmulMMA, f64, kernels.TF32, false},
		{kernels.MatmulReg128, f32, "", true},
		{kernels.MatmulReg128, f32, kernels.TF32, false},
		{kernels.MatmulDMMA, f64, kernels.BF16, false},
		{kernels.MatmulWGMMA, f32, kernels.BF16, true},
		{kernels.MatmulWGMMA, f32, "", false},
		{kernels.MatmulWGMMA, f64, kernels.TF32, false},
	} {
		tl, err := gemmTechnique(c.technique, c.elem, GemmShape{M: 100, N: 100, Precision: c.precision})
		if (err == nil) != c.ok {
			t.Errorf("gemmTechnique(%s, %s, %q): %v, want ok %v", c.technique, c.elem, c.precision, err, c.ok)
		}
		if err != nil && !errors.Is(err, kernels.ErrNotFound) {
			t.Errorf("gemmTechnique(%s, %s, %q): %v does not wrap ErrNotFound", c.technique, c.elem, c.precision, err)
		}
		if err == nil && c.technique == kernels.MatmulMMA {
			if sym, err := kernels.GemmSymbol(c.technique, tl.shape, true, false, c.elem); err != nil || sym != "matmul_mma_"+c.precision+"_tn_f32" {
				t.Errorf("%s: symbol %q, %v", c.precision, sym, err)
			}
		}
	}
	// dmma's tn kernel has tiles of its own; the other transposes share one.
	for _, c := range []struct {
		ta, tb bool
		want   gemmTiling
	}{{false, false, dmmaTiling}, {false, true, dmmaTiling}, {true, false, dmmaTilingTN}, {true, true, dmmaTiling}} {
		if tl, err := gemmTechnique(kernels.MatmulDMMA, f64, GemmShape{M: 100, N: 100, TransA: c.ta, TransB: c.tb}); err != nil || tl != c.want {
			t.Errorf("dmma, transposes %v %v: tiling %+v, %v; want %+v", c.ta, c.tb, tl, err, c.want)
		}
	}
	if dmmaTilingTN.bm != 128 || dmmaTilingTN.bn != 64 || dmmaTiling.bm != 64 {
		t.Errorf("dmma tiles %dx%d and tn's %dx%d, want 64x64 and 128x64", dmmaTiling.bm, dmmaTiling.bn, dmmaTilingTN.bm, dmmaTilingTN.bn)
	}
	// 64 tiles of 128x128, two an SM on 132 SMs: 4 slices; a slice is a
	// multiple of mma's step of 16 along K (reg128's is 8: 264 there).
	if slices, kSlice := splitK(GemmShape{M: 1024, N: 1024, K: 1024, Batch: 1}, 132, mmaTiling); slices != 4 || kSlice != 256 {
		t.Errorf("mma: splitK(1024^3) = %d slices of %d, want 4 of 256", slices, kSlice)
	}
	if slices, kSlice := splitK(GemmShape{M: 130, N: 130, K: 1040, Batch: 1}, 132, mmaTiling); slices != 4 || kSlice != 272 {
		t.Errorf("mma: splitK(130x130x1040) = %d slices of %d, want 4 of 272", slices, kSlice)
	}
	// wgmma: 32 tiles of 128x256, one an SM: 4 slices, multiples of 64.
	if slices, kSlice := splitK(GemmShape{M: 64, N: 8192, K: 8192, Batch: 1}, 132, wgmmaTiling); slices != 4 || kSlice != 2048 {
		t.Errorf("wgmma: splitK(64x8192x8192) = %d slices of %d, want 4 of 2048", slices, kSlice)
	}
	if slices, kSlice := splitK(GemmShape{M: 300, N: 300, K: 1000, Batch: 1}, 132, wgmmaTiling); slices != 3 || kSlice != 384 {
		t.Errorf("wgmma: splitK(300x300x1000) = %d slices of %d, want 3 of 384", slices, kSlice)
	}
	if slices, kSlice := splitK(GemmShape{M: 130, N: 130, K: 1040, Batch: 1}, 132, tilingFor(kernels.Float32, 130, 130)); slices != 4 || kSlice != 264 {
		t.Errorf("reg128: splitK(130x130x1040) = %d slices of %d, want 4 of 264", slices, kSlice)
	}
}

// Shapes whose M or N leave the kernels' 32-bit tile arithmetic no room
// are refused before any device work.
func TestGemmShapeBounds(t *testing.T) {
	ok := GemmShape{M: maxGemmDim, N: 1, K: 1, LDA: 1, LDB: 1, LDC: 1, Batch: 1}
	if err := ok.check(); err != nil {
		t.Errorf("M = %d: %v", maxGemmDim, err)
	}
	for _, s := range []GemmShape{
		{M: maxGemmDim + 1, N: 1, K: 1, LDA: 1, LDB: 1, LDC: 1, Batch: 1},
		{M: 1, N: 1<<31 - 1, K: 1, LDA: 1, LDB: 1<<31 - 1, LDC: 1<<31 - 1, Batch: 1},
	} {
		if err := s.check(); err == nil {
			t.Errorf("%dx%d accepted", s.M, s.N)
		}
	}
}
