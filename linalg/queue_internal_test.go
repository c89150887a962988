package linalg

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/queue"
	"github.com/goamp/goamp/internal/reference"
)

// spinOn keeps view's stream busy for d, so that work queued behind it
// is still waiting when the test looks.
func spinOn(t *testing.T, v *amp.AcceleratorView, d time.Duration) {
	t.Helper()
	dev, err := gpu.Open(v.Accelerator().Ordinal())
	if err != nil {
		t.Fatal(err)
	}
	s, err := queue.Of(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.SpinOn(s, d); err != nil {
		t.Fatal(err)
	}
}

// TestMatMulQueuedOnView: on a GPU, MatMul with reg128 returns once the
// product is queued on the view; C's Synchronize waits for it; a product
// on a second view that reads the first one's C waits, on the device, for
// the first to write it.
func TestMatMulQueuedOnView(t *testing.T) {
	if err := amp.CUDAUnavailable(); err != nil {
		t.Skipf("SKIP: no CUDA accelerator: %v", err)
	}
	acc, err := amp.Find("cuda")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 3))
	const n = 384
	rnd := func() []float32 {
		x := make([]float32, n*n)
		for i := range x {
			x[i] = float32(r.Float64()*2 - 1)
		}
		return x
	}
	a, b, c, d := rnd(), rnd(), make([]float32, n*n), make([]float32, n*n)
	ext := amp.Extent2(n, n)
	av, _ := amp.NewArrayView(ext, a)
	bv, _ := amp.NewArrayView(ext, b)
	cv, _ := amp.NewArrayView(ext, c)
	dv, _ := amp.NewArrayView(ext, d)
	v1, v2 := acc.NewView(), acc.NewView()
	opt1 := &Options{View: v1, Kernel: "reg128"}
	opt2 := &Options{View: v2, Kernel: "reg128"}

	// C = 0 on the device, A and B uploaded, and D's copy allocated
	// before the timed part: an allocation may wait for the device.
	if err := MatMul(0, av, bv, 0, cv, opt1); err != nil {
		t.Fatal(err)
	}
	if err := MatMul(0, av, bv, 0, dv, opt2); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*amp.AcceleratorView{v1, v2} {
		if err := v.Wait(); err != nil {
			t.Fatal(err)
		}
	}

	spinOn(t, v1, 0) // loads the spin kernel: the first JIT of a process loads the compiler
	const spin = 100 * time.Millisecond
	start := time.Now()
	spinOn(t, v1, spin)
	if err := MatMul(1, av, bv, 0, cv, opt1); err != nil { // C = A*B, behind the spin
		t.Fatal(err)
	}
	if err := MatMul(1, cv, bv, 0, dv, opt2); err != nil { // D = C*B, on the other view
		t.Fatal(err)
	}
	if queued := time.Since(start); queued > spin/2 && !underSanitizer() {
		t.Errorf("the two MatMuls took %v to return behind a %v spin: they waited for the GPU", queued, spin)
	}
	if err := dv.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if done := time.Since(start); done < spin*9/10 {
		t.Errorf("D was home %v after the start, before the %v spin ahead of it was over", done, spin)
	}
	if err := cv.Synchronize(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*amp.AcceleratorView{v1, v2} {
		if err := v.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if ch := reference.CheckMatMul(n, n, n, 1, a, b, 0, nil, c, r); !ch.OK() {
		t.Errorf("C = A*B: %v", ch.Err())
	}
	// D was computed from the device's C: had the second view not waited
	// for the first, it would have read the zeros.
	if ch := reference.CheckMatMul(n, n, n, 1, c, b, 0, nil, d, r); !ch.OK() {
		t.Errorf("D = C*B on the second view: %v", ch.Err())
	}
}

// TestMatMulOverlapped: products large enough for overlappedGemm (operands
// of 8 MiB and more, M of several panels, one ragged) give the reference's
// result at home, and their C serves a later product on another view and
// takes a write from the host.
func TestMatMulOverlapped(t *testing.T) {
	if err := amp.CUDAUnavailable(); err != nil {
		t.Skipf("SKIP: no CUDA accelerator: %v", err)
	}
	acc, err := amp.Find("cuda")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 5))
	// Panels of 512 rows: several, the last one ragged, in operands of a
	// few tens of MiB.
	defer saveOverlapKnobs()()
	overlapPanelRows = 512
	// The pieces in every upload order (interleaved with three column
	// blocks, so that panels and blocks take turns over a 3 x 3 grid of
	// pieces), their first one whole and in slices of K (three: K of 1000
	// to 2048); and the phased schedule with the defaults, slices that
	// double, a third of K first, and ragged panels of 300 rows on one
	// stream (K of 1000 is too short for phases and takes the pieces).
	for _, order := range []struct {
		kind                                       uploadOrder
		blocks, first                              int
		phase, phaseSlice, phaseRows, phaseStreams int
	}{{blocksFirst, 2, 1, 0, 0, 0, 0}, {interleaved, 3, 1, 0, 0, 0, 0}, {panelsFirst, 2, 1, 0, 0, 0, 0}, {blocksFirst, 2, 3, 0, 0, 0, 0},
		{interleaved, 3, 3, 0, 0, 0, 0}, {panelsFirst, 3, 3, 0, 0, 0, 0},
		{blocksFirst, 2, 1, overlapPhaseOne, overlapPhaseSlice, overlapPhaseRows, overlapPhaseStreams},
		{blocksFirst, 2, 1, 50, 0, 512, 2}, {blocksFirst, 2, 1, 33, 512, 300, 1}} {
		overlapOrderKind, overlapColBlocks, overlapFirstChunks = order.kind, order.blocks, order.first
		overlapPhaseOne, overlapPhaseSlice, overlapPhaseRows, overlapPhaseStreams = order.phase, order.phaseSlice, order.phaseRows, order.phaseStreams
		overlappedCase[float32](t, acc, r, 1500, 1500, 1400, false)
		overlappedCase[float32](t, acc, r, 1100, 2100, 2048, true)  // column blocks, B's by rows
		overlappedCase[float32](t, acc, r, 1100, 2100, 2000, false) // column blocks, B's by pitched copies
		overlappedCase[float64](t, acc, r, 1100, 1050, 1000, false)
		overlappedCase[int32](t, acc, r, 1500, 1500, 1400, true)
	}
}

func overlappedCase[T amp.Element](t *testing.T, acc *amp.Accelerator, r *rand.Rand, m, n, k int, transB bool) {
	t.Helper()
	rnd := func(size int) []T {
		x := make([]T, size)
		for i := range x {
			if _, ok := any(x[0]).(int32); ok {
				x[i] = T(r.IntN(17) - 8)
			} else {
				x[i] = T(r.Float64()*2 - 1)
			}
		}
		return x
	}
	a, b, c := rnd(m*k), rnd(k*n), rnd(m*n) // C's old contents must not show
	av, _ := amp.NewArrayView(amp.Extent2(m, k), a)
	bExt := amp.Extent2(k, n)
	if transB {
		bExt = amp.Extent2(n, k)
	}
	bv, _ := amp.NewArrayView(bExt, b)
	cv, _ := amp.NewArrayView(amp.Extent2(m, n), c)
	defer av.Release()
	defer bv.Release()
	defer cv.Release()
	v := acc.NewView()
	dev, err := gpu.Open(acc.Ordinal())
	if err != nil {
		t.Fatal(err)
	}
	in, _, _, err := dev.AuxStreams()
	if err != nil {
		t.Fatal(err)
	}
	a0 := slices.Clone(a)
	// The device copies allocated (an allocation may wait for the device)
	// but stale, so that the product uploads A and B again.
	for _, x := range []*amp.ArrayView[T]{av, bv} {
		if _, _, err := x.DeviceMatrix(v, amp.AccessRead); err != nil {
			t.Fatal(err)
		}
		x.Refresh()
	}
	if _, _, err := cv.DeviceMatrix(v, amp.AccessWrite); err != nil {
		t.Fatal(err)
	}
	// A kernel's first launch loads it, which waits for the device: a
	// small product of the same type and transposes (128 x 128 x 128: the
	// same kernels, one slice of K) loads them before the spin. Run alone,
	// the test otherwise waited for the spin in its first product.
	sa, sb, sc := make([]T, 128*128), make([]T, 128*128), make([]T, 128*128)
	sav, _ := amp.NewArrayView(amp.Extent2(128, 128), sa)
	sbv, _ := amp.NewArrayView(amp.Extent2(128, 128), sb)
	scv, _ := amp.NewArrayView(amp.Extent2(128, 128), sc)
	defer sav.Release()
	defer sbv.Release()
	defer scv.Release()
	if err := MatMul(1, sav, sbv, 0, scv, &Options{View: v, Kernel: "reg128", TransB: transB}); err != nil {
		t.Fatal(err)
	}
	if err := v.Wait(); err != nil {
		t.Fatal(err)
	}
	// Hold the uploads back: MatMul must return with them queued, a
	// write to A through its view must wait for them to have read A,
	// and C's Synchronize must wait for C to have come home.
	const spin = 100 * time.Millisecond
	if err := dev.SpinOn(in, 0); err != nil { // loads the spin kernel
		t.Fatal(err)
	}
	if err := dev.SpinOn(in, spin); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	before := overlapped.Load()
	if err := MatMul(1, av, bv, 0, cv, &Options{View: v, Kernel: "reg128", TransB: transB}); err != nil {
		t.Fatal(err)
	}
	if overlapped.Load() != before+1 {
		t.Fatalf("%T %dx%dx%d: the product did not take the overlapped path", *new(T), m, n, k)
	}
	if took := time.Since(start); took > spin/2 && !underSanitizer() {
		t.Errorf("%T: MatMul took %v behind a %v spin of the upload stream: it waited", *new(T), took, spin)
	}
	av.Set2(0, 0, 100) // waits for the upload of A; the product uses the old A
	if err := cv.Synchronize(); err != nil {
		t.Fatal(err)
	}
	ch := reference.NewMatMulChecker(false, transB, m, n, k, 1, a0, b, 0, nil, r)
	if res := ch.Check(c); !res.OK() {
		t.Fatalf("%T %dx%dx%d transB=%v: %v", *new(T), m, n, k, transB, res.Err())
	}
	if err := v.Wait(); err != nil {
		t.Fatal(err)
	}
	// C, now current on both sides, as A of a product on another view:
	// E = C * C^T (m x m).
	e := make([]T, m*m)
	ev, _ := amp.NewArrayView(amp.Extent2(m, m), e)
	defer ev.Release()
	v2 := acc.NewView()
	if err := MatMul(1, cv, cv, 0, ev, &Options{View: v2, Kernel: "reg128", TransB: true}); err != nil {
		t.Fatal(err)
	}
	if err := ev.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if res := reference.CheckMatMul(m, m, n, 1, c, transposed(c, m, n), 0, nil, e, r); !res.OK() {
		t.Errorf("E = C*C^T after the overlapped product: %v", res.Err())
	}
	// A write from the host reaches the device on the next use.
	cv.Set2(0, 0, 0)
	c2 := slices.Clone(c)
	if err := MatMul(1, cv, cv, 0, ev, &Options{View: v2, Kernel: "reg128", TransB: true}); err != nil {
		t.Fatal(err)
	}
	if err := ev.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if res := reference.CheckMatMul(m, m, n, 1, c2, transposed(c2, m, n), 0, nil, e, r); !res.OK() {
		t.Errorf("E = C*C^T after a host write to C: %v", res.Err())
	}
}

// transposed returns the n x m transpose of the m x n row-major x.
func transposed[T amp.Element](x []T, m, n int) []T {
	y := make([]T, len(x))
	for i := range m {
		for j := range n {
			y[j*m+i] = x[i*n+j]
		}
	}
	return y
}

// underSanitizer reports whether scripts/gpu-check.sh runs the test under
// compute-sanitizer, which instruments each kernel at its first launch and
// waits for the device to do it: the checks that calls return before the
// GPU is done do not hold there.
func underSanitizer() bool { return os.Getenv("GOAMP_SANITIZER") != "" }
