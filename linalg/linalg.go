package linalg

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
)

// Sentinel errors; every error from this package wraps one of them or an
// error from package amp.
var (
	// ErrShape: operands whose shapes do not agree, of the wrong rank, or nil.
	ErrShape = errors.New("linalg: shapes do not agree")
	// ErrUnknownKernel: no kernel of that name for the operation and accelerator.
	ErrUnknownKernel = errors.New("linalg: unknown kernel")
	// ErrTileSize: a tile size the kernel cannot use.
	ErrTileSize = errors.New("linalg: bad tile size")
	// ErrOverlap: an output that shares memory with an input.
	ErrOverlap = errors.New("linalg: output overlaps an input")
	// ErrPrecision: a precision that is none of Exact, TF32, BF16 and FP16,
	// one asked of operands other than float32, or a kernel that
	// multiplies in reduced precisions asked for Exact.
	ErrPrecision = errors.New("linalg: bad precision")
)

// Precision is how MatMul may multiply float32 operands (Options.Precision),
// as cuBLAS's compute types and PyTorch's allow_tf32 choose it.
type Precision string

// The precisions. Each reduced one rounds every element of op(A) and op(B)
// to its format, to nearest with ties to even (as cuBLAS's TF32 kernels and
// Hopper's TMA do), and sums the products in float32; an element of C is then
// off by about u*sqrt(K) (at worst u*K) times the magnitude of its terms,
// with u the format's unit roundoff: 2^-11 for TF32 and FP16, 2^-8 for
// BF16, against float32's 2^-24. FP16 also turns magnitudes over 65504
// into infinities (those of 65520 and more). The tensor cores' adders may
// truncate where float32 arithmetic rounds, so the sums can be off by a
// little more than float32's. On an H100 (wgmma, n = 4096) TF32 runs at
// about 8 times float32's speed and BF16 and FP16 at about 10
// (docs/PERFORMANCE.md).
const (
	Exact Precision = "exact" // float32 arithmetic: the default
	TF32  Precision = "tf32"  // 10 bits of mantissa, float32's range
	BF16  Precision = "bf16"  // 7 bits of mantissa, float32's range
	FP16  Precision = "fp16"  // 10 bits of mantissa, magnitudes up to 65504
)

// Precisions lists the precisions, Exact first.
func Precisions() []Precision { return []Precision{Exact, TF32, BF16, FP16} }

// Options choose where and how an operation runs. The zero value (or a nil
// *Options) runs the best kernel on the default accelerator.
type Options struct {
	// Kernel names the kernel, or is "auto" (or "") for the fastest one on
	// the view's accelerator. On the CPU, MatMul has "packed" (the blocked
	// engine, auto's choice), "simple", "tiled" and "naive", and Dot has
	// "vector" (auto's choice), "naive" and "tiled"; on a CUDA GPU, MatMul
	// has "dmma" (float64 only, on the FP64 tensor cores: auto's choice for
	// float64), "mma" (float32 in a reduced Precision only, on the tensor
	// cores: auto's choice then), "reg128" (auto's choice for float32 and
	// int32), "tiled" and
	// "naive" (and the Go kernels, go-*), and Dot has "onepass" (auto's
	// choice), "warp" and "tiled".
	// Kernels lists them all with their descriptions.
	Kernel string
	// Tile is the tile size of tiled kernels: the side of a square tile for
	// MatMul (1 to 32 on the CPU; 8, 16 or 32 on a GPU), the threads of a
	// tile for Dot (1 to 1024; a power of two on a GPU). 0 picks the
	// kernel's default. A non-zero Tile for a kernel without tiles (auto's
	// choices on the CPU among them) is an error wrapping ErrTileSize, as
	// the CLI's --tile is.
	Tile int
	// View is the accelerator queue to run on; nil means the default view of
	// amp.DefaultAccelerator(). A view that belongs to no accelerator (the
	// zero AcceleratorView) is an error wrapping amp.ErrNoAccelerator.
	View *amp.AcceleratorView
	// KernelTime, if not nil, receives how long the kernel itself ran: on a
	// GPU the time between CUDA events around the launch, without the
	// copies to and from the device; on the CPU the call's wall time. For a
	// batch that the kernel runs a product at a time, the sum. On a GPU,
	// asking for it makes a MatMul that would return once its work is
	// queued (reg128, dmma) wait for the work instead.
	KernelTime *time.Duration
	// TransA and TransB make MatMul multiply by the transpose of A or B:
	// C = alpha*op(A)*op(B) + beta*C with op(A) = A^T, A stored K x M, when
	// TransA is set (as BLAS's transa), and op(B) = B^T, B stored N x K,
	// when TransB is. The kernels that take them (KernelInfo.Transposes:
	// auto's choices, packed on the CPU and reg128 and dmma on a GPU) read the
	// transposed operand where it lies; the others refuse them with an
	// error wrapping amp.ErrUnsupported.
	TransA, TransB bool
	// Precision says how MatMul may multiply float32 operands: Exact (or
	// "") in float32 arithmetic; TF32, BF16 or FP16 lets it round them to
	// that format and run on a GPU's tensor cores (the mma kernel, auto's
	// choice for them on a GPU). A reduced precision is a permission, not
	// an order: the kernels that have none (every CPU kernel, reg128)
	// compute exactly, within every precision's error. A reduced precision
	// for float64 or int32 operands is an error wrapping ErrPrecision, as
	// is Exact for a kernel that has only reduced ones (mma). Dot ignores it.
	Precision Precision
}

// Operation names what a kernel computes.
type Operation string

// The operations kernels implement.
const (
	OpMatMul Operation = "matmul"
	OpDot    Operation = "dot"
)

// KernelInfo describes a registered kernel.
type KernelInfo struct {
	// Name is what Options.Kernel selects it by.
	Name string
	// Op is the operation it computes.
	Op Operation
	// Accelerator is the kind of accelerator it runs on.
	Accelerator amp.Kind
	// DefaultTile is the tile size used when Options.Tile is 0; 0 for
	// kernels without tiles.
	DefaultTile int
	// MaxTile is the largest tile size it accepts; 0 for kernels without tiles.
	MaxTile int
	// Tiles, if not empty, lists the only tile sizes it accepts (kernels
	// compiled for fixed tiles); otherwise any from 1 to MaxTile.
	Tiles []int
	// ExactTiles reports that it takes only products whose M, N and K are
	// multiples of its tile size (others are refused with ErrShape), as
	// the textbook kernels without boundary checks do.
	ExactTiles bool
	// Transposes reports that it takes Options.TransA and TransB.
	Transposes bool
	// Batches reports that it runs a batch of products (rank-3 views) in
	// one call; MatMul runs the others once a product of the batch.
	Batches bool
	// MinCompute is the least CUDA compute capability it runs on, as
	// major*10 + minor (80: Ampere, for the tensor-core kernels' mma.sync
	// and cp.async); 0 for any. auto passes it over on an older GPU, and
	// naming it there is an error wrapping amp.ErrUnsupported.
	MinCompute int
	// MaxCompute is the newest CUDA compute capability it runs on (90 for
	// wgmma: sm_90a code runs on Hopper only); 0 for any. auto passes it
	// over on another GPU, and naming it there is an error wrapping
	// amp.ErrUnsupported.
	MaxCompute int
	// NeedsTMA reports that it needs a driver that makes TMA descriptors
	// (CUDA 12.0 or newer; wgmma): auto passes it over under an older
	// one, and naming it there is an error wrapping amp.ErrUnsupported.
	NeedsTMA bool
	// Precisions lists the reduced precisions it multiplies float32
	// operands in, when it has them (then it takes only those: see
	// Options.Precision); empty for exact arithmetic.
	Precisions []Precision
	// Elements lists the element types it takes ("float32", "float64",
	// "int32"), when not all three: MatMul and Dot refuse the others with
	// an error wrapping amp.ErrUnsupported, and auto passes it over for
	// them.
	Elements []string
	// Description says what technique it uses.
	Description string
}

func (o *Options) view() (*amp.AcceleratorView, error) {
	if o != nil && o.View != nil {
		if err := o.View.Check(); err != nil {
			return nil, fmt.Errorf("linalg: Options.View: %w", err)
		}
		return o.View, nil
	}
	acc, err := amp.DefaultAccelerator()
	if err != nil {
		return nil, err
	}
	return acc.DefaultView(), nil
}

// precision returns the precision opt asks for elements of type elem
// ("" for any type), checked.
func (o *Options) precision(elem string) (Precision, error) {
	if o == nil || o.Precision == "" {
		return Exact, nil
	}
	p := Precision(strings.ToLower(string(o.Precision)))
	if !slices.Contains(Precisions(), p) {
		return "", fmt.Errorf("%w: %q, want exact, tf32, bf16 or fp16", ErrPrecision, o.Precision)
	}
	if p != Exact && elem != "" && elem != "float32" {
		return "", fmt.Errorf("%w: %s rounds float32 operands; %s ones multiply exactly (leave Options.Precision empty)", ErrPrecision, p, elem)
	}
	return p, nil
}

func (o *Options) kernelName() string {
	if o == nil || o.Kernel == "" {
		return "auto"
	}
	return strings.ToLower(o.Kernel)
}

// tileFor returns the tile size to use with kernel k.
func (o *Options) tileFor(k KernelInfo) (int, error) {
	t := 0
	if o != nil {
		t = o.Tile
	}
	if t == 0 {
		return k.DefaultTile, nil
	}
	if k.MaxTile == 0 {
		return 0, fmt.Errorf("%w: %d for the %s %s kernel, which has no tiles (leave Tile 0, or choose a tiled kernel)", ErrTileSize, t, k.Name, k.Op)
	}
	if t < 1 || t > k.MaxTile {
		return 0, fmt.Errorf("%w: %d for the %s %s kernel, want 1 to %d", ErrTileSize, t, k.Name, k.Op, k.MaxTile)
	}
	if len(k.Tiles) > 0 && !slices.Contains(k.Tiles, t) {
		return 0, fmt.Errorf("%w: %d for the %s %s kernel on %s, want one of %v", ErrTileSize, t, k.Name, k.Op, k.Accelerator, k.Tiles)
	}
	return t, nil
}

// tileError turns a kernel's own complaint about its tile into ErrTileSize.
func tileError(err error) error {
	if errors.Is(err, gpu.ErrTile) {
		return fmt.Errorf("%w: %w", ErrTileSize, err)
	}
	return err
}

// matmulFunc is a matrix multiply kernel for one element type; shapes and
// tile size are already checked.
type matmulFunc[T amp.Element] func(v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], tile int) error

// dotFunc is a dot product kernel for one element type.
type dotFunc[T amp.Element] func(v *amp.AcceleratorView, x, y *amp.ArrayView[T], tile int) (T, error)

// timedMatMulFunc and timedDotFunc are kernels that measure their own
// running time (GPU kernels, between CUDA events), for Options.KernelTime.
type (
	timedMatMulFunc[T amp.Element] func(v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], tile int) (time.Duration, error)
	timedDotFunc[T amp.Element]    func(v *amp.AcceleratorView, x, y *amp.ArrayView[T], tile int) (T, time.Duration, error)
)

// product is one call of MatMul, checked: C = alpha*op(A)*op(B) + beta*C
// for rank-2 views, or for each of batch products when they are rank 3
// (batch x rows x columns); op(A) is m x k, op(B) k x n.
type product[T amp.Element] struct {
	transA, transB bool
	alpha, beta    T
	a, b, c        *amp.ArrayView[T]
	m, n, k        int
	batched        bool // rank-3 views: batch products
	batch          int
	// precision is the reduced precision a kernel that has them (mma)
	// multiplies in; "" for the others.
	precision Precision
	// timed asks a kernel that queues its work (reg128, dmma on a GPU) to wait
	// for it and return its time (Options.KernelTime); otherwise it
	// returns once the work is queued.
	timed bool
}

// productFunc is a matrix multiply kernel that takes a whole product:
// transposes, and a batch in one call. It returns the kernel time when it
// measures it itself (selfTimed).
type productFunc[T amp.Element] func(v *amp.AcceleratorView, p product[T]) (time.Duration, error)

// kernel is a registered kernel: its description and one function per
// element type (matmul or dot, as Op says).
type kernel struct {
	KernelInfo
	f32, f64, i32 any
	selfTimed     bool // a productFunc that returns its kernel time
}

var registry []kernel

// registerMatMul adds a matrix multiply kernel. Adding a kernel is this one
// call; the conformance tests and benchmarks walk the registry.
func registerMatMul(info KernelInfo, f32 matmulFunc[float32], f64 matmulFunc[float64], i32 matmulFunc[int32]) {
	info.Op = OpMatMul
	registry = append(registry, kernel{KernelInfo: info, f32: f32, f64: f64, i32: i32})
}

// registerTimedMatMul adds a matrix multiply kernel that times itself.
func registerTimedMatMul(info KernelInfo, f32 timedMatMulFunc[float32], f64 timedMatMulFunc[float64], i32 timedMatMulFunc[int32]) {
	info.Op = OpMatMul
	registry = append(registry, kernel{KernelInfo: info, f32: f32, f64: f64, i32: i32})
}

// registerProduct adds a matrix multiply kernel that takes transposes and
// batches (info.Transposes and info.Batches say which); selfTimed: it
// returns its kernel time, as GPU kernels do.
// A nil function is an element type it does not take (see
// KernelInfo.Elements, which this sets).
func registerProduct(info KernelInfo, selfTimed bool, f32 productFunc[float32], f64 productFunc[float64], i32 productFunc[int32]) {
	info.Op = OpMatMul
	k := kernel{KernelInfo: info, selfTimed: selfTimed}
	if f32 != nil {
		k.f32 = f32
	}
	if f64 != nil {
		k.f64 = f64
	}
	if i32 != nil {
		k.i32 = i32
	}
	if k.f32 == nil || k.f64 == nil || k.i32 == nil {
		k.Elements = nil
		for _, e := range []struct {
			name string
			f    any
		}{{"float32", k.f32}, {"float64", k.f64}, {"int32", k.i32}} {
			if e.f != nil {
				k.Elements = append(k.Elements, e.name)
			}
		}
	}
	registry = append(registry, k)
}

// takes reports whether k has a version for element type elem.
func (k KernelInfo) takes(elem string) bool {
	return len(k.Elements) == 0 || slices.Contains(k.Elements, elem)
}

// elementName is T's name: "float32", "float64" or "int32".
func elementName[T amp.Element]() string { return fmt.Sprintf("%T", *new(T)) }

// registerTimedDot adds a dot product kernel that times itself.
func registerTimedDot(info KernelInfo, f32 timedDotFunc[float32], f64 timedDotFunc[float64], i32 timedDotFunc[int32]) {
	info.Op = OpDot
	registry = append(registry, kernel{KernelInfo: info, f32: f32, f64: f64, i32: i32})
}

// registerDot adds a dot product kernel.
func registerDot(info KernelInfo, f32 dotFunc[float32], f64 dotFunc[float64], i32 dotFunc[int32]) {
	info.Op = OpDot
	registry = append(registry, kernel{KernelInfo: info, f32: f32, f64: f64, i32: i32})
}

// autoChoice lists, for each operation and accelerator kind, the kernels
// "auto" tries in order, the first that takes the element type winning:
// the fastest first, as measured in docs/PERFORMANCE.md. On the CPU the
// packed engine is 100x and more as fast as simple, which beat tiled and
// naive; for dot the vector routine beats the sequential loop, which beat
// the tiled reduction. On a GPU dmma (float64 only, on the tensor cores)
// runs at twice reg128's speed.
var autoChoice = map[Operation]map[amp.Kind][]string{
	OpMatMul: {amp.KindCPU: {"packed", "simple", "tiled", "naive"}, amp.KindCUDA: {"dmma", "reg128", "tiled", "naive"}},
	OpDot:    {amp.KindCPU: {"vector", "naive", "tiled"}, amp.KindCUDA: {"onepass", "warp", "tiled"}},
}

// Kernels lists the registered kernels of op (all of them if op is "").
func Kernels(op Operation) []KernelInfo {
	var out []KernelInfo
	for _, k := range registry {
		if op == "" || k.Op == op {
			out = append(out, k.KernelInfo)
		}
	}
	return out
}

// findKernel returns the kernel named name for op on accelerators of kind
// and elements of type elem ("" for any type): auto's first choice that
// takes elem, or the kernel named, which must take it.
func findKernel(op Operation, name string, kind amp.Kind, elem string) (kernel, error) {
	return findKernelIn(op, name, kind, elem, Exact, 0)
}

// findKernelIn is findKernel for matrix products in precision prec on a
// device of compute capability cc (major*10 + minor; 0: not known, or not
// a GPU): auto tries the kernels that multiply in prec first (a reduced
// precision is asked for speed), a kernel that has only reduced precisions
// must have prec among them, and one that needs a newer GPU than cc is
// passed over by auto and refused by name.
func findKernelIn(op Operation, name string, kind amp.Kind, elem string, prec Precision, cc int) (kernel, error) {
	names := []string{name}
	auto := name == "auto"
	if auto {
		names = nil
		for _, k := range registry {
			if k.Op == op && k.Accelerator == kind && slices.Contains(k.Precisions, prec) {
				names = append(names, k.Name)
			}
		}
		names = append(names, autoChoice[op][kind]...)
	}
	for _, n := range names {
		for _, k := range registry {
			if k.Op != op || k.Name != n || k.Accelerator != kind {
				continue
			}
			if elem != "" && !k.takes(elem) {
				if auto {
					continue
				}
				return kernel{}, fmt.Errorf("%w: the %s %s kernel takes %s only, not %s", amp.ErrUnsupported, n, op, strings.Join(k.Elements, " and "), elem)
			}
			if k.MinCompute > 0 && cc > 0 && cc < k.MinCompute && k.MaxCompute == 0 {
				if auto {
					continue
				}
				return kernel{}, fmt.Errorf("%w: the %s %s kernel needs a GPU of compute capability %d.%d or newer; this one is %d.%d",
					amp.ErrUnsupported, n, op, k.MinCompute/10, k.MinCompute%10, cc/10, cc%10)
			}
			if k.MaxCompute > 0 && cc > 0 && (cc < k.MinCompute || cc > k.MaxCompute) {
				if auto {
					continue
				}
				return kernel{}, fmt.Errorf("%w: the %s %s kernel runs on GPUs of compute capability %s only; this one is %d.%d",
					amp.ErrUnsupported, n, op, computeRange(k.MinCompute, k.MaxCompute), cc/10, cc%10)
			}
			if k.NeedsTMA && cc > 0 && !haveTMA() {
				if auto {
					continue
				}
				return kernel{}, fmt.Errorf("%w: the %s %s kernel needs a driver for CUDA 12.0 or newer (TMA descriptors)", amp.ErrUnsupported, n, op)
			}
			if len(k.Precisions) > 0 && !slices.Contains(k.Precisions, prec) {
				if auto {
					continue
				}
				var have []string
				for _, p := range k.Precisions {
					have = append(have, string(p))
				}
				return kernel{}, fmt.Errorf("%w: the %s %s kernel multiplies in %s only, not %s (set Options.Precision)", ErrPrecision, n, op, strings.Join(have, ", "), prec)
			}
			return k, nil
		}
	}
	var have []string
	for _, k := range registry {
		if k.Op == op && k.Accelerator == kind {
			have = append(have, k.Name)
		}
	}
	if len(have) == 0 {
		return kernel{}, fmt.Errorf("%w: no %s kernel runs on %s accelerators: %w", ErrUnknownKernel, op, kind, amp.ErrUnsupported)
	}
	return kernel{}, fmt.Errorf("%w: %q for %s on %s (have: auto, %s)", ErrUnknownKernel, name, op, kind, strings.Join(have, ", "))
}

// computeRange names the compute capabilities from lo to hi (major*10 +
// minor): "9.0" when they are one.
func computeRange(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%d.%d", lo/10, lo%10)
	}
	return fmt.Sprintf("%d.%d to %d.%d", lo/10, lo%10, hi/10, hi%10)
}

// haveTMA reports whether the CUDA driver makes TMA descriptors (a
// variable, so that tests of the choice need no driver).
var haveTMA = cuda.HasTMA

// typed returns k's function for element type T.
func typed[T amp.Element](k kernel) any {
	switch any(*new(T)).(type) {
	case float32:
		return k.f32
	case float64:
		return k.f64
	default:
		return k.i32
	}
}

// Choose returns the kernel op runs with opt (resolving "auto" as for
// float32 elements) and the tile size it will use, or the error MatMul or
// Dot would return for them: ErrUnknownKernel, ErrTileSize, or
// amp.ErrNoAccelerator. A kernel named in opt is returned whatever element
// types it takes; ChooseFor checks them.
func Choose(op Operation, opt *Options) (KernelInfo, int, error) {
	elem := ""
	if opt.kernelName() == "auto" {
		elem = "float32"
	}
	k, tile, _, err := choose(op, elem, opt)
	return k.KernelInfo, tile, err
}

// ChooseFor is Choose for elements of type T: auto's choice for T (on a
// GPU, float64 products go to the FP64 tensor cores' dmma kernel), and an
// error wrapping amp.ErrUnsupported for a kernel named in opt that does
// not take T.
func ChooseFor[T amp.Element](op Operation, opt *Options) (KernelInfo, int, error) {
	k, tile, _, err := choose(op, elementName[T](), opt)
	return k.KernelInfo, tile, err
}

// ChooseForShape is ChooseFor for an m x n x k matrix product (op(A) m x
// k, op(B) k x n) of whole matrices (rows as long as they are wide): auto's
// choice may depend on the shape, as MatMul makes it (wgmma passes thin
// products that it would have to pack to mma).
func ChooseForShape[T amp.Element](opt *Options, m, n, k int) (KernelInfo, int, error) {
	kern, tile, _, err := choose(OpMatMul, elementName[T](), opt)
	if err == nil && opt.kernelName() == "auto" {
		var ta, tb bool
		if opt != nil {
			ta, tb = opt.TransA, opt.TransB
		}
		// A's rows are k long (m with TransA), B's n (k with TransB).
		a, b := operandLayout{ld: k}, operandLayout{ld: n}
		if ta {
			a.ld = m
		}
		if tb {
			b.ld = k
		}
		prec, _ := opt.precision(elementName[T]()) // choose checked it
		kern = autoForShape(kern, m, n, tf32InPlace(prec, ta, tb, a, b))
	}
	return kern.KernelInfo, tile, err
}

func choose(op Operation, elem string, opt *Options) (kernel, int, *amp.AcceleratorView, error) {
	v, err := opt.view()
	if err != nil {
		return kernel{}, 0, nil, err
	}
	prec := Exact
	if op == OpMatMul {
		if prec, err = opt.precision(elem); err != nil {
			return kernel{}, 0, nil, err
		}
	}
	cc := 0
	if v.Accelerator().Kind() == amp.KindCUDA {
		d, err := gpu.Open(v.Accelerator().Ordinal())
		if err != nil {
			return kernel{}, 0, nil, err
		}
		cc = d.Properties.ComputeMajor*10 + d.Properties.ComputeMinor
	}
	k, err := findKernelIn(op, opt.kernelName(), v.Accelerator().Kind(), elem, prec, cc)
	if err != nil {
		return kernel{}, 0, nil, err
	}
	tile, err := opt.tileFor(k.KernelInfo)
	if err != nil {
		return kernel{}, 0, nil, err
	}
	return k, tile, v, nil
}

// On a GPU, MatMul with the reg128 and dmma kernels (auto's choices) queues the
// product on the accelerator view (Options.View) and returns before it is
// done: C's Synchronize or element access, or the view's Wait, waits for
// it, and an error the kernel raises on the device comes back there.
//
// MatMul computes C = alpha*op(A)*op(B) + beta*C, where op(A) is A (or
// A^T with Options.TransA), M x K, op(B) is B (or B^T with TransB), K x N,
// and C is M x N, all rank-2 views; or, with rank-3 views (batch x rows x
// columns, the same batch for all three), each of the batch's products. With
// beta == 0, C is only written, never read (as in BLAS), so whatever C held
// (NaN included) does not show through. C must not share memory with A or B
// (ErrOverlap). int32 arithmetic wraps around on overflow.
func MatMul[T amp.Element](alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], opt *Options) error {
	if a == nil || b == nil || c == nil {
		return fmt.Errorf("%w: nil array view", ErrShape)
	}
	p := product[T]{alpha: alpha, beta: beta, a: a, b: b, c: c}
	if opt != nil {
		p.transA, p.transB = opt.TransA, opt.TransB
		p.timed = opt.KernelTime != nil
	}
	var err error
	if p.m, p.n, p.k, p.batch, err = checkMatMulShapes(p.transA, p.transB, a.Extent(), b.Extent(), c.Extent()); err != nil {
		return err
	}
	p.batched = a.Extent().Rank() == 3
	if c.Overlaps(a) || c.Overlaps(b) {
		return fmt.Errorf("%w: C shares memory with A or B; threads would read elements of C that others have written", ErrOverlap)
	}
	k, tile, v, err := choose(OpMatMul, elementName[T](), opt)
	if err != nil {
		return err
	}
	if opt.kernelName() == "auto" {
		prec, _ := opt.precision(elementName[T]()) // choose checked it
		k = autoForShape(k, p.m, p.n, tf32InPlace(prec, p.transA, p.transB, layoutOf(p.a, p.batched), layoutOf(p.b, p.batched)))
	}
	if len(k.Precisions) > 0 {
		p.precision, _ = opt.precision(elementName[T]()) // choose checked it
	}
	var elapsed time.Duration
	if !p.batched || p.batch > 0 { // an empty batch has nothing to do
		elapsed, err = runMatMul(k, v, p, tile)
	}
	if err != nil {
		return fmt.Errorf("linalg: %s matmul: %w", k.Name, err)
	}
	if opt != nil && opt.KernelTime != nil {
		*opt.KernelTime = elapsed
	}
	return nil
}

// autoForShape revises auto's choice k for an m x n product: wgmma packs
// both operands before it multiplies, which costs (m+n)*K element copies
// against m*n*K multiply-adds, so a product with m or n small (1/m + 1/n
// over 1/wgmmaMinDim: 64 x 8192, or 400 x 400) goes to mma, which reads
// the operands where they lie; unless inPlace (tf32InPlace): then wgmma
// packs nothing either. Measured on the H100: 64 x 8192 x 8192 in TF32
// ran at 0.34 of cuBLAS on wgmma when it packed (its packing alone twice
// cuBLAS's whole time) and 0.61 on mma; 1024^3 at 0.56-0.71 on wgmma,
// 0.47-0.54 on mma. With nothing packed (2026-11-25, docs/PERFORMANCE.md,
// "Thin products in TF32") wgmma beat mma in every thin shape tried, in
// nn, nt and tt: 0.66-1.17 of cuBLAS against 0.56-0.77.
func autoForShape(k kernel, m, n int, inPlace bool) kernel {
	if k.Name != "wgmma" || inPlace || m <= 0 || n <= 0 || (m+n)*wgmmaMinDim <= m*n {
		return k
	}
	for _, r := range registry {
		if r.Op == OpMatMul && r.Name == "mma" && r.Accelerator == k.Accelerator {
			return r
		}
	}
	return k
}

// operandLayout is how an operand lies in memory, in elements: where it
// starts in its buffer, its row stride, and, when it holds several
// matrices (many), the stride between them.
type operandLayout struct {
	offset, ld, stride int
	many               bool
}

// layoutOf is v's operandLayout; batched: v is a batch (rank 3).
func layoutOf[T amp.Element](v *amp.ArrayView[T], batched bool) operandLayout {
	st := v.Strides()
	l := operandLayout{offset: v.Offset()}
	if len(st) >= 2 {
		l.ld = st[len(st)-2]
	}
	if batched && len(st) == 3 && v.Extent().At(0) > 1 {
		l.stride, l.many = st[0], true
	}
	return l
}

// tf32InPlace reports whether wgmma multiplies a product in precision prec
// with nothing packed, TMA reading both float32 operands where they lie
// and rounding them (gpu's wgmmaDirect): TF32, any transposes but tn
// (whose operands both lie across K), and each operand's start, rows and
// matrices on 16 bytes (4 elements; a device copy starts on 256 bytes).
func tf32InPlace(prec Precision, transA, transB bool, a, b operandLayout) bool {
	if prec != TF32 || (transA && !transB) {
		return false
	}
	for _, l := range []operandLayout{a, b} {
		if l.offset%4 != 0 || l.ld%4 != 0 || l.many && (l.stride <= 0 || l.stride%4 != 0) {
			return false
		}
	}
	return true
}

// wgmmaMinDim: see autoForShape.
const wgmmaMinDim = 220

// runMatMul runs p with kernel k: whole, if it takes products; else a
// product of the batch at a time, with no transposes.
func runMatMul[T amp.Element](k kernel, v *amp.AcceleratorView, p product[T], tile int) (time.Duration, error) {
	if f, ok := typed[T](k).(productFunc[T]); ok {
		start := time.Now()
		elapsed, err := f(v, p)
		if !k.selfTimed {
			elapsed = time.Since(start)
		}
		return elapsed, err
	}
	if p.transA || p.transB {
		return 0, fmt.Errorf("%w: the %s kernel takes no transposes (Options.TransA, TransB); auto takes them, as do the kernels whose KernelInfo.Transposes is set", amp.ErrUnsupported, k.Name)
	}
	if !p.batched {
		return runOne(k, v, p.alpha, p.a, p.b, p.beta, p.c, tile)
	}
	var total time.Duration
	for i := range p.batch {
		a, err := p.a.Projection(i)
		if err != nil {
			return total, err
		}
		b, err := p.b.Projection(i)
		if err != nil {
			return total, err
		}
		c, err := p.c.Projection(i)
		if err != nil {
			return total, err
		}
		elapsed, err := runOne(k, v, p.alpha, a, b, p.beta, c, tile)
		total += elapsed
		if err != nil {
			return total, fmt.Errorf("product %d of the batch: %w", i, err)
		}
	}
	return total, nil
}

// runOne runs one product without transposes with a kernel that takes
// rank-2 views.
func runOne[T amp.Element](k kernel, v *amp.AcceleratorView, alpha T, a, b *amp.ArrayView[T], beta T, c *amp.ArrayView[T], tile int) (time.Duration, error) {
	start := time.Now()
	switch f := typed[T](k).(type) {
	case matmulFunc[T]:
		err := f(v, alpha, a, b, beta, c, tile)
		return time.Since(start), err
	case timedMatMulFunc[T]:
		return f(v, alpha, a, b, beta, c, tile)
	}
	return 0, fmt.Errorf("%w: the %s kernel has no %T version", ErrUnknownKernel, k.Name, *new(T))
}

// checkMatMulShapes checks that op(A), op(B) and C agree, as rank-2 views
// or as rank-3 batches of the same length, and returns op(A)'s M x K, op(B)'s
// N and the batch's length (0 for rank 2, and for an empty batch).
func checkMatMulShapes(transA, transB bool, a, b, c amp.Extent) (m, n, k, batch int, err error) {
	r := a.Rank()
	for _, x := range []struct {
		name string
		e    amp.Extent
	}{{"A", a}, {"B", b}, {"C", c}} {
		if x.e.Rank() != 2 && x.e.Rank() != 3 {
			return 0, 0, 0, 0, fmt.Errorf("%w: %s must be a matrix (rank 2) or a batch of them (rank 3), is rank %d", ErrShape, x.name, x.e.Rank())
		}
		if x.e.Rank() != r {
			return 0, 0, 0, 0, fmt.Errorf("%w: A is rank %d but %s is rank %d: all matrices, or all batches", ErrShape, r, x.name, x.e.Rank())
		}
	}
	d := r - 2 // the first of the matrix dimensions
	if r == 3 {
		batch = a.At(0)
		if b.At(0) != batch || c.At(0) != batch {
			return 0, 0, 0, 0, fmt.Errorf("%w: batches of %d, %d and %d products (A, B, C): they must be the same", ErrShape, batch, b.At(0), c.At(0))
		}
	}
	// op(X)'s rows and columns, and how to name it in a message.
	op := func(name string, e amp.Extent, trans bool) (rows, cols int, label string) {
		if trans {
			return e.At(d + 1), e.At(d), name + "^T"
		}
		return e.At(d), e.At(d + 1), name
	}
	am, ak, an := op("A", a, transA)
	bk, bn, bl := op("B", b, transB)
	switch {
	case ak != bk:
		return 0, 0, 0, 0, fmt.Errorf("%w: %s is %dx%d but %s is %dx%d: %s's columns must equal %s's rows", ErrShape, an, am, ak, bl, bk, bn, an, bl)
	case c.At(d) != am || c.At(d+1) != bn:
		return 0, 0, 0, 0, fmt.Errorf("%w: %s*%s is %dx%d but C is %dx%d", ErrShape, an, bl, am, bn, c.At(d), c.At(d+1))
	}
	return am, bn, ak, batch, nil
}

// Dot returns the dot product of the rank-1 views x and y, which must have
// the same length. float32 sums are accumulated in float32, except by the
// GPU's onepass kernel (auto's choice there), which accumulates them in
// float64 and rounds once.
func Dot[T amp.Element](x, y *amp.ArrayView[T], opt *Options) (T, error) {
	if x == nil || y == nil {
		return 0, fmt.Errorf("%w: nil array view", ErrShape)
	}
	xe, ye := x.Extent(), y.Extent()
	if xe.Rank() != 1 || ye.Rank() != 1 {
		return 0, fmt.Errorf("%w: dot takes vectors (rank 1), got rank %d and %d", ErrShape, xe.Rank(), ye.Rank())
	}
	if xe.At(0) != ye.At(0) {
		return 0, fmt.Errorf("%w: vectors of length %d and %d", ErrShape, xe.At(0), ye.At(0))
	}
	k, tile, v, err := choose(OpDot, elementName[T](), opt)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var d T
	var elapsed time.Duration
	switch f := typed[T](k).(type) {
	case dotFunc[T]:
		d, err = f(v, x, y, tile)
		elapsed = time.Since(start)
	case timedDotFunc[T]:
		d, elapsed, err = f(v, x, y, tile)
	}
	if err != nil {
		return 0, fmt.Errorf("linalg: %s dot: %w", k.Name, err)
	}
	if opt != nil && opt.KernelTime != nil {
		*opt.KernelTime = elapsed
	}
	return d, nil
}
