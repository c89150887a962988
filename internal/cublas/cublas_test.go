package cublas

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
)

func TestStatusAndError(t *testing.T) {
	for s, want := range map[Status]string{
		StatusNotInitialized:  "CUBLAS_STATUS_NOT_INITIALIZED",
		StatusAllocFailed:     "CUBLAS_STATUS_ALLOC_FAILED",
		StatusInvalidValue:    "CUBLAS_STATUS_INVALID_VALUE",
		StatusArchMismatch:    "CUBLAS_STATUS_ARCH_MISMATCH",
		StatusExecutionFailed: "CUBLAS_STATUS_EXECUTION_FAILED",
		StatusInternalError:   "CUBLAS_STATUS_INTERNAL_ERROR",
		StatusNotSupported:    "CUBLAS_STATUS_NOT_SUPPORTED",
		Status(42):            "CUBLAS_STATUS(42)",
	} {
		if got := s.String(); got != want {
			t.Errorf("Status(%d) = %q, want %q", int32(s), got, want)
		}
	}
	if check("x", StatusSuccess) != nil {
		t.Error("success is an error")
	}
	err := check("cublasSgemm_v2", StatusInvalidValue)
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidValue ||
		err.Error() != "cublas: cublasSgemm_v2: CUBLAS_STATUS_INVALID_VALUE (an unsupported value or parameter was passed)" {
		t.Errorf("error %v", err)
	}
	if got := check("op", 99).Error(); !strings.Contains(got, "CUBLAS_STATUS(99) (unrecognized status)") {
		t.Errorf("unknown status: %q", got)
	}
	if got := FormatVersion(130002); got != "13.0.2" {
		t.Errorf("FormatVersion = %q", got)
	}
	if got := MathDefault.String(); !strings.Contains(got, "no TF32") {
		t.Errorf("MathDefault = %q", got)
	}
	if got := (MathTF32 | mathDisallowRR).String(); !strings.Contains(got, "TF32_TENSOR_OP") || !strings.Contains(got, "DISALLOW") {
		t.Errorf("TF32|disallow = %q", got)
	}
}

// TestOpen: on a machine without cuBLAS the error wraps ErrUnavailable and
// names the library; with it, the name that opened is one of Libraries.
func TestOpen(t *testing.T) {
	name, err := Open()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "libcublas.so.13") {
			t.Errorf("Open: %v: want an ErrUnavailable naming libcublas.so.13", err)
		}
		t.Logf("no cuBLAS here (as expected without the CUDA toolkit): %v", err)
		return
	}
	t.Logf("cuBLAS opened from %s", name)
}

// gpuContext returns device 0's primary context, or skips (visibly) where
// there is no GPU or no cuBLAS.
func gpuContext(t *testing.T) *cuda.Context {
	t.Helper()
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	if _, err := Open(); err != nil {
		t.Skipf("SKIP: a GPU but no cuBLAS: %v", err)
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Release() })
	return ctx
}

// TestGemmOnGPU checks the row-major mapping on small, odd, padded matrices
// in every transpose, with alpha and beta not 0 or 1, in both types.
func TestGemmOnGPU(t *testing.T) {
	ctx := gpuContext(t)
	h, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	if m, err := h.MathMode(); err != nil || m != MathDefault {
		t.Errorf("math mode %v, %v: want CUBLAS_DEFAULT_MATH", m, err)
	}
	v, err := h.Version()
	if err != nil || v < 10000 {
		t.Errorf("version %d, %v", v, err)
	}
	t.Logf("cuBLAS %s", FormatVersion(v))
	if err := h.SetStream(nil); err != nil {
		t.Error(err)
	}
	testGemm[float32](t, ctx, h, 0)
	testGemm[float64](t, ctx, h, 0)
	// cublasGemmEx in each compute type this package names; in a reduced
	// one the tolerance is the precision's (a few units of its roundoff
	// for these 3 terms of magnitude up to 1).
	for _, c := range []ComputeType{Compute32F, Compute32FFastTF32, Compute32FFastBF16, Compute32FFastFP16} {
		testGemm[float32](t, ctx, h, c)
	}
	if err := h.SgemmIn(Compute32F+1, false, false, 1, 1, 1, 1, 256, 1, 256, 1, 0, 256, 1); err == nil {
		t.Error("SgemmIn took CUBLAS_COMPUTE_32F_PEDANTIC, which it does not name")
	}

	// A leading dimension too small is cuBLAS's INVALID_VALUE, as a Go error.
	err = h.Sgemm(false, false, 4, 4, 4, 1, 256, 2, 256, 4, 0, 256, 4)
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidValue {
		t.Errorf("lda 2 < k 4: %v, want CUBLAS_STATUS_INVALID_VALUE", err)
	}
	if err := h.Sgemm(false, false, -1, 4, 4, 1, 256, 4, 256, 4, 0, 256, 4); err == nil {
		t.Error("m = -1 accepted")
	}
	if err := h.Destroy(); err != nil {
		t.Error(err)
	}
	if err := h.Sgemm(false, false, 1, 1, 1, 1, 256, 1, 256, 1, 0, 256, 1); err == nil {
		t.Error("a destroyed handle multiplied")
	}
}

// testGemm checks Sgemm or Dgemm, or with compute != 0 SgemmIn (float32).
func testGemm[T float32 | float64](t *testing.T, ctx *cuda.Context, h *Handle, compute ComputeType) {
	const m, n, k, pad = 5, 7, 3, 2
	r := rand.New(rand.NewPCG(1, 2))
	random := func(size int) []T {
		s := make([]T, size)
		for i := range s {
			s[i] = T(2*r.Float64() - 1)
		}
		return s
	}
	size := int(unsafe.Sizeof(T(0)))
	alloc := func(x []T) cuda.DevicePtr {
		p, err := ctx.Alloc(len(x) * size)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ctx.Free(p) })
		if err := cuda.CopySliceHtoD(ctx, p, x); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		ta, tb := tr[0], tr[1]
		// Stored shapes: A is m x k (k x m transposed), B k x n (n x k).
		ar, ac := m, k
		if ta {
			ar, ac = k, m
		}
		br, bc := k, n
		if tb {
			br, bc = n, k
		}
		lda, ldb, ldc := ac+pad, bc+pad, n+pad
		a, b, c := random(ar*lda), random(br*ldb), random(m*ldc)
		at := func(i, l int) float64 { // op(A)[i][l]
			if ta {
				return float64(a[l*lda+i])
			}
			return float64(a[i*lda+l])
		}
		bt := func(l, j int) float64 {
			if tb {
				return float64(b[j*ldb+l])
			}
			return float64(b[l*ldb+j])
		}
		const alpha, beta = 1.5, -0.75
		want := make([]float64, len(c))
		for i := range want {
			want[i] = float64(c[i]) // padding stays as it was
		}
		for i := range m {
			for j := range n {
				var s float64
				for l := range k {
					s += at(i, l) * bt(l, j)
				}
				want[i*ldc+j] = alpha*s + beta*float64(c[i*ldc+j])
			}
		}
		da, db, dc := alloc(a), alloc(b), alloc(c)
		var err error
		switch {
		case compute != 0:
			err = h.SgemmIn(compute, ta, tb, m, n, k, alpha, da, lda, db, ldb, beta, dc, ldc)
		case size == 4:
			err = h.Sgemm(ta, tb, m, n, k, alpha, da, lda, db, ldb, beta, dc, ldc)
		default:
			err = h.Dgemm(ta, tb, m, n, k, alpha, da, lda, db, ldb, beta, dc, ldc)
		}
		if err != nil {
			t.Fatalf("%T %v trans %v: %v", T(0), compute, tr, err)
		}
		got := make([]T, len(c))
		if err := cuda.CopySliceDtoH(ctx, got, dc); err != nil {
			t.Fatal(err)
		}
		tol := map[ComputeType]float64{0: 1e-5, Compute32F: 1e-5, Compute32FFastTF32: 0x1p-11 * 12, Compute32FFastFP16: 0x1p-11 * 12, Compute32FFastBF16: 0x1p-8 * 12}[compute]
		if size == 8 {
			tol = 1e-12
		}
		for i := range got {
			if math.Abs(float64(got[i])-want[i]) > tol {
				t.Errorf("%T %v trans %v: C[%d][%d] = %g, want %g", T(0), compute, tr, i/ldc, i%ldc, got[i], want[i])
				break
			}
		}
	}
}

// TestBatchArgs: a strided batch's count and strides are checked before
// cuBLAS is called (on a handle that was never made, which would refuse
// the call itself).
func TestBatchArgs(t *testing.T) {
	var h Handle // destroyed: a call that passes the checks reaches errDestroyed
	for _, c := range []struct {
		m, batch, strideA int
		want              string
	}{
		{4, -1, 16, "batch of -1"},
		{4, 1 << 31, 16, "batch of 2147483648"},
		{4, 2, -16, "negative batch stride -16"},
		{-1, 2, 16, "size -1"},
	} {
		for _, err := range []error{
			h.SgemmStridedBatched(false, false, c.m, 4, 4, 1, 256, 4, c.strideA, 256, 4, 16, 0, 256, 4, 16, c.batch),
			h.DgemmStridedBatched(false, false, c.m, 4, 4, 1, 256, 4, c.strideA, 256, 4, 16, 0, 256, 4, 16, c.batch),
		} {
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "StridedBatched") {
				t.Errorf("%+v: %v, want an error naming the call and saying %q", c, err, c.want)
			}
		}
	}
	if err := h.SgemmStridedBatched(true, true, 4, 4, 4, 1, 256, 4, 16, 256, 4, 16, 0, 256, 4, 16, 3); err != errDestroyed {
		t.Errorf("good arguments on a destroyed handle: %v", err)
	}
}

// TestGemmStridedBatchedOnGPU checks the strided batches as TestGemmOnGPU
// checks one product, three products at strides longer than a matrix: each
// product right, and the gaps between them untouched.
func TestGemmStridedBatchedOnGPU(t *testing.T) {
	ctx := gpuContext(t)
	h, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	testGemmStridedBatched[float32](t, ctx, h)
	testGemmStridedBatched[float64](t, ctx, h)
	if err := h.SgemmStridedBatched(false, false, 4, 4, 4, 1, 256, 2, 16, 256, 4, 16, 0, 256, 4, 16, 2); err == nil {
		t.Error("lda 2 < k 4 accepted")
	}
}

func testGemmStridedBatched[T float32 | float64](t *testing.T, ctx *cuda.Context, h *Handle) {
	const m, n, k, pad, batch, gap = 5, 7, 3, 2, 3, 5
	r := rand.New(rand.NewPCG(3, 4))
	random := func(size int) []T {
		s := make([]T, size)
		for i := range s {
			s[i] = T(2*r.Float64() - 1)
		}
		return s
	}
	size := int(unsafe.Sizeof(T(0)))
	alloc := func(x []T) cuda.DevicePtr {
		p, err := ctx.Alloc(len(x) * size)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ctx.Free(p) })
		if err := cuda.CopySliceHtoD(ctx, p, x); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		ta, tb := tr[0], tr[1]
		ar, ac := m, k
		if ta {
			ar, ac = k, m
		}
		br, bc := k, n
		if tb {
			br, bc = n, k
		}
		lda, ldb, ldc := ac+pad, bc+pad, n+pad
		sa, sb, sc := ar*lda+gap, br*ldb+gap, m*ldc+gap
		a, b, c := random(batch*sa), random(batch*sb), random(batch*sc)
		const alpha, beta = 1.5, -0.75
		want := make([]float64, len(c))
		for i := range want {
			want[i] = float64(c[i]) // padding and gaps stay as they were
		}
		for p := range batch {
			at := func(i, l int) float64 {
				if ta {
					return float64(a[p*sa+l*lda+i])
				}
				return float64(a[p*sa+i*lda+l])
			}
			bt := func(l, j int) float64 {
				if tb {
					return float64(b[p*sb+j*ldb+l])
				}
				return float64(b[p*sb+l*ldb+j])
			}
			for i := range m {
				for j := range n {
					var s float64
					for l := range k {
						s += at(i, l) * bt(l, j)
					}
					e := p*sc + i*ldc + j
					want[e] = alpha*s + beta*float64(c[e])
				}
			}
		}
		da, db, dc := alloc(a), alloc(b), alloc(c)
		var err error
		if size == 4 {
			err = h.SgemmStridedBatched(ta, tb, m, n, k, alpha, da, lda, sa, db, ldb, sb, beta, dc, ldc, sc, batch)
		} else {
			err = h.DgemmStridedBatched(ta, tb, m, n, k, alpha, da, lda, sa, db, ldb, sb, beta, dc, ldc, sc, batch)
		}
		if err != nil {
			t.Fatalf("%T trans %v: %v", T(0), tr, err)
		}
		got := make([]T, len(c))
		if err := cuda.CopySliceDtoH(ctx, got, dc); err != nil {
			t.Fatal(err)
		}
		tol := 1e-5
		if size == 8 {
			tol = 1e-12
		}
		for i := range got {
			if math.Abs(float64(got[i])-want[i]) > tol {
				t.Errorf("%T trans %v: product %d, C[%d][%d] = %g, want %g", T(0), tr, i/sc, i%sc/ldc, i%sc%ldc, got[i], want[i])
				break
			}
		}
	}
}
