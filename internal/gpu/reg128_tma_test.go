package gpu

import (
	"testing"

	"github.com/goamp/goamp/internal/gpu/kernels"
)

// TestTMAOperand: which float32 operands the TMA-fed tn kernel can read
// (TMA's addresses and strides are multiples of 16 bytes).
func TestTMAOperand(t *testing.T) {
	for _, c := range []struct {
		name              string
		copied            bool
		addr              uint64
		ld, stride, batch int
		want              bool
	}{
		{"aligned", false, 256, 64, 0, 1, true},
		{"off 16 bytes", false, 260, 64, 0, 1, false},
		{"row stride not a multiple of 4", false, 256, 66, 0, 1, false},
		{"batch, stride a multiple of 4", false, 256, 64, 4100, 3, true},
		{"batch, stride 4102", false, 256, 64, 4102, 3, false},
		{"batch, one matrix for all", false, 256, 64, 0, 3, false},
		{"one product: its stride unused", false, 256, 64, 3, 1, true},
		{"a copy: where it lies is ours", true, 260, 66, 4096, 2, true},
		{"a copy shared by a batch", true, 0, 64, 0, 2, false},
	} {
		if got := tmaOperand(c.copied, c.addr, c.ld, c.stride, c.batch); got != c.want {
			t.Errorf("%s: tmaOperand = %v, want %v", c.name, got, c.want)
		}
	}
	if reg128TMATiling.kStep != kernels.Reg128TMAStep || reg128TMATiling.bm != 128 || reg128TMATiling.bn != 128 || reg128TMATiling.shape != kernels.Reg128TMAShape {
		t.Errorf("reg128TMATiling %+v: want 128x128 tiles of shape %q, steps of %d", reg128TMATiling, kernels.Reg128TMAShape, kernels.Reg128TMAStep)
	}
}

// TestRelaid: the product the kernel runs on the copies, and where the
// copies lie in the workspace.
func TestRelaid(t *testing.T) {
	// nt, a batch of 2: A 100 x 60 (lda 61), B 70 x 60 (ldb 64), B shared.
	s := GemmShape{TransB: true, M: 100, N: 70, K: 60, LDA: 61, LDB: 64, LDC: 70, Batch: 2, StrideA: 6200, StrideB: 0, StrideC: 7000}
	k, cs := relaid(s, copyAB, 1000, 2000, 4)
	if !k.TransA || k.TransB {
		t.Errorf("nt on both copies runs with TransA %v, TransB %v: want tn", k.TransA, k.TransB)
	}
	if k.LDA != 100 || k.StrideA != 60*100 || k.LDB != 72 || k.StrideB != 0 {
		t.Errorf("copies' strides: lda %d strideA %d ldb %d strideB %d, want 100 6000 72 0", k.LDA, k.StrideA, k.LDB, k.StrideB)
	}
	if len(cs) != 2 {
		t.Fatalf("%d copies, want 2", len(cs))
	}
	a, b := cs[0], cs[1]
	// A's copies: 2 x 60 x 100 floats = 48000 bytes, rounded to 48128.
	if !a.ofA || a.rows != 100 || a.src != 1000 || a.ld != 61 || a.stride != 6200 || a.batch != 2 || a.offset != 0 || a.bytes != 48128 {
		t.Errorf("A's copy %+v", a)
	}
	// B's copy: one for the batch, 60 x 72 floats = 17280 bytes, rounded to 17408.
	if b.ofA || b.rows != 70 || b.src != 2000 || b.batch != 1 || b.offset != 48128 || b.bytes != 17408 {
		t.Errorf("B's copy %+v", b)
	}
	if got := copiesBytes(cs); got != 48128+17408 {
		t.Errorf("copiesBytes = %d, want %d", got, 48128+17408)
	}
	if k2, cs2 := relaid(s, asItIs, 1000, 2000, 4); k2 != s || len(cs2) != 0 {
		t.Errorf("asItIs: %+v, %d copies", k2, len(cs2))
	}
}

// TestReg128TMAProduct: which products, as the kernel runs them (after
// their copies), reg128TMAFor gives the TMA-fed tn kernel.
func TestReg128TMAProduct(t *testing.T) {
	tn := GemmShape{TransA: true, M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 1}
	// nt on copies of both: tn whose operands are the copies.
	ntCopied, _ := relaid(GemmShape{TransB: true, M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 1}, copyAB, 260, 516, 4)
	small := tn
	small.M = 64
	f32 := kernels.Float32
	for _, c := range []struct {
		name string
		elem string
		k    GemmShape
		how  relayout
		a, b uint64
		want bool
	}{
		{"tn, aligned", f32, tn, asItIs, 256, 512, true},
		{"tn, A off 16 bytes", f32, tn, asItIs, 260, 512, false},
		{"tn, B off 16 bytes", f32, tn, asItIs, 256, 516, false},
		{"nt on copies of both, the originals off 16 bytes", f32, ntCopied, copyAB, 260, 516, true},
		{"nn on a copy of A, B off 16 bytes", f32, ntCopied, copyA, 260, 516, false},
		{"tn of 64 rows: 64x128 tiles", f32, small, asItIs, 256, 512, false},
		{"tn float64", kernels.Float64, tn, asItIs, 256, 512, false},
		{"nn", f32, GemmShape{M: 2048, N: 2048, K: 2048, LDA: 2048, LDB: 2048, LDC: 2048, Batch: 1}, asItIs, 256, 512, false},
	} {
		if got := reg128TMAProduct(c.elem, c.k, c.how, c.a, c.b); got != c.want {
			t.Errorf("%s: reg128TMAProduct = %v, want %v", c.name, got, c.want)
		}
	}
}
