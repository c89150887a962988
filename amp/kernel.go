package amp

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// KernelSpec describes a Go kernel function compiled to PTX by goamp's
// generator (goampgen). Generated code makes one per kernel, in a package
// variable, and passes it to AcceleratorView.Launch or LaunchTiled with the
// Go function itself for the CPU.
//
// A launch on a GPU compiles the PTX for that device the first time and
// keeps the result, keyed by the KernelSpec's address, for the life of the
// process: a KernelSpec must not change after its first launch, and should
// live as long as the program (as package variables do).
//
// # The kernel ABI
//
// The PTX entry for a compute domain of rank r takes, in this order:
//
//	status u64     device address of a zeroed 32-byte status record
//	n0..n(r-1) s64 the compute domain's extent (a tiled launch: the
//	               TiledExtent's extent, padded or truncated)
//	per argument, in the order of Args:
//	  a view:      base u64 (device address of its first element; 0 for
//	               an empty view), rank u32, n0 n1 n2 s64 (its extent, 1
//	               beyond its rank, so that their product is its size), s0 s1 s64 (element strides of
//	               dimensions 0 and 1 where they are not the last; 0
//	               otherwise). The last dimension's stride is 1, so element
//	               (i0, ..., ik) is at base + (sum of id*sd for d < k, + ik)
//	               * the element's size.
//	  a scalar:    u32 for bool (0 or 1), s32 for int32, u32 for uint32,
//	               s64 for int and int64, u64 for uint and uint64, f32, f64
//
// The last dimension of the domain runs along x, the fastest, then y, then
// z; the thread's index along each is ctaid*ntid + tid. A tiled launch runs
// one tile a block; an untiled one uses blocks of the runtime's choosing,
// so a thread outside the domain must return at once. A thread
// that fails records it in the status record and goes on: it claims the u32
// code at offset 0 with a compare-and-swap from 0 (the first failure of the
// launch wins), and its winner writes the u32 detail at 4 and the thread's
// global index as three i64 at 8, 16 and 24. The codes are those of
// KernelFaultError.Code.
type KernelSpec struct {
	// Name is the kernel's Go name, "pkg.Func" or "pkg.Func[float32]".
	Name string
	// Pos is the file:line of the Go function, for errors.
	Pos string
	// Tiled reports whether the kernel takes a TiledIndex (launch it with
	// LaunchTiled) rather than an Index (Launch).
	Tiled bool
	// PTX is one PTX module holding the kernel's entries, written for PTX
	// ISA 7.0 and sm_75 (".version 7.0", ".target sm_75"); a launch
	// retargets it to the device and driver at hand. Empty when the kernel
	// runs on the CPU only.
	PTX string
	// Entries[r] is the name of the .entry that runs the kernel over a
	// compute domain of rank r; "" when it cannot run at rank r. Entries[0]
	// is unused.
	Entries [MaxRank + 1]string
	// SmallEntries[r], if not "", is an entry that does what Entries[r]
	// does, compiled for launches whose compute domain extents and view
	// extents and strides are all below 2^31 and whose grid has at most
	// 2^21 blocks a dimension: most of its index arithmetic is 32-bit, as
	// CUDA C's int indices are. A launch that fits uses it.
	SmallEntries [MaxRank + 1]string
	// Args describes the Go parameters after the index, in order.
	Args []KernelArgSpec
	// Tile, for a tiled kernel compiled for one tile shape (the directive
	// "//goamp:kernel tile=16,16"), is that shape, dimension 0 first;
	// zero for a kernel that takes any. C++ AMP fixed tile sizes when it
	// compiled a kernel too: it lets the compiler know the thread ranges
	// and drop the checks that cannot fail.
	Tile [MaxRank]int
	// Shuffles reports that the kernel exchanges values within warps
	// (ShuffleDown and kin): its tiles must then have a multiple of
	// WarpSize threads, so that every warp is whole.
	Shuffles bool
}

// KernelArgSpec describes one parameter of a kernel after its index.
type KernelArgSpec struct {
	// Name is the parameter's Go name, for errors.
	Name string
	// View reports a *ArrayView[T] parameter; otherwise it is a scalar.
	View bool
	// Read and Write report whether the kernel may read and may write the
	// view's elements. They decide what a launch on a GPU copies: a view
	// that is read or written is made current in the device's memory (see
	// Launch); one that is neither is not copied at all.
	Read, Write bool
	// Ranks[r], for a view, is the rank of the indices that the kernel for
	// a rank-r compute domain uses on it (0: it does not index the view).
	// The compiled code takes it for granted, so every launch checks the
	// view's rank against it first.
	Ranks [MaxRank + 1]int
	// MinRank, for a view, is the least rank it may have: the kernel reads
	// component MinRank-1 of its extent (v.Extent().At(d) with d fixed),
	// which the CPU refuses past the view's rank by a panic and a launch
	// refuses before it runs.
	MinRank int
}

// KernelArg is one argument of a kernel launch, made by ViewArg or
// ScalarArg.
type KernelArg interface {
	// kernelArgType names the argument's Go type, for errors.
	kernelArgType() string
}

// ViewArg makes a view argument of a kernel launch.
func ViewArg[T Element](a *ArrayView[T]) KernelArg { return viewArg[T]{a} }

// Scalar is the set of scalar parameter types a compiled kernel takes.
type Scalar interface {
	~bool | ~int32 | ~uint32 | ~int64 | ~uint64 | ~int | ~uint | ~float32 | ~float64
}

// ScalarArg makes a scalar argument of a kernel launch. On a GPU a bool is
// passed as a 32-bit 0 or 1, and int and uint as 64-bit integers.
func ScalarArg[T Scalar](x T) KernelArg {
	// Reflection sees through defined types (type Celsius float32), which
	// a type switch on x would not.
	rv := reflect.ValueOf(x)
	var p any
	switch rv.Kind() {
	case reflect.Bool:
		p = uint32(0)
		if rv.Bool() {
			p = uint32(1)
		}
	case reflect.Int32:
		p = int32(rv.Int())
	case reflect.Uint32:
		p = uint32(rv.Uint())
	case reflect.Int, reflect.Int64:
		p = rv.Int()
	case reflect.Uint, reflect.Uint64:
		p = rv.Uint()
	case reflect.Float32:
		p = float32(rv.Float())
	case reflect.Float64:
		p = rv.Float()
	}
	return scalarArg{value: p, goType: rv.Type().String()}
}

// scalarArg holds a scalar as the kernel parameter it becomes: int32,
// uint32, int64, uint64, float32 or float64, the types the CUDA binding
// passes at their exact size.
type scalarArg struct {
	value  any
	goType string
}

func (s scalarArg) kernelArgType() string { return s.goType }

// kernelView is what a launch needs of a view argument, whatever its
// element type.
type kernelView interface {
	KernelArg
	isNil() bool
	viewRank() int
	viewBuffer() *buffer
	// bind makes the view usable by a kernel on v's device as acc says (0:
	// the kernel neither reads nor writes it) and returns its parameters.
	bind(v *AcceleratorView, acc Access) (boundArg, error)
}

type viewArg[T Element] struct{ a *ArrayView[T] }

func (x viewArg[T]) kernelArgType() string { return "*amp.ArrayView[" + elementName[T]() + "]" }
func (x viewArg[T]) isNil() bool           { return x.a == nil }
func (x viewArg[T]) viewRank() int         { return x.a.ext.rank }
func (x viewArg[T]) viewBuffer() *buffer   { return x.a.buf }

func (x viewArg[T]) bind(v *AcceleratorView, acc Access) (boundArg, error) {
	a := x.a
	var base uint64
	if acc == 0 {
		base = a.existingDeviceAddress(v)
	} else {
		var err error
		if base, err = a.deviceAddress(v, acc); err != nil {
			return boundArg{}, err
		}
	}
	return bindView(a.ext, a.stride, base)
}

// existingDeviceAddress is where the view's first element is in the copy
// on v's device, or 0 if there is none: for a kernel that neither reads nor
// writes the view, which needs its parameters but not its data.
func (a *ArrayView[T]) existingDeviceAddress(v *AcceleratorView) uint64 {
	if a.ext.Size() == 0 {
		return 0
	}
	b := a.buf
	b.mu.Lock()
	c := b.copies[v.acc.memory]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.mem.address() + uint64(a.offset)*uint64(unsafe.Sizeof(*new(T)))
}

// elementName names T in errors.
func elementName[T Element]() string {
	switch any(*new(T)).(type) {
	case float32:
		return "float32"
	case float64:
		return "float64"
	}
	return "int32"
}

// Launch runs the compiled kernel k once for every point of ext: C++ AMP's
// parallel_for_each, for kernels that goampgen compiled. Generated code
// calls it; args are the kernel's arguments after the index, which must
// match k.Args in number and kind.
//
// A view argument must have the rank at which the kernel indexes it
// (KernelArgSpec.Ranks) on every accelerator; otherwise the error wraps
// ErrInvalidKernel. On the CPU accelerator Launch then runs cpu, the Go
// function, exactly as ParallelForEach does. On a CUDA GPU it runs k's PTX, which the driver
// compiles for the device on the first launch there (an error wrapping
// ErrKernelCompile, with the compiler's log, if it fails; the next launch
// tries again). Views the kernel reads or writes are made current in the
// GPU's memory first, uploaded unless the copy there is current or their
// contents were discarded (DiscardData); views it writes stay on the
// device until Synchronize or the next access from Go, as with linalg's
// kernels. Launch returns when the kernel has finished.
//
// A GPU thread that would have panicked on the CPU (an index outside a
// view, an integer division by zero) records the failure, and Launch
// returns a *KernelFaultError naming the kernel, its source position and
// the thread; the other threads run to completion, and the device stays
// usable. An error from the device itself (a launch it refused, a fault
// that makes it unusable for the rest of the process) wraps
// ErrAcceleratorFailure; a lack of memory wraps ErrOutOfMemory. Every
// error names the kernel.
func (v *AcceleratorView) Launch(k *KernelSpec, ext Extent, cpu func(Index), args ...KernelArg) error {
	if err := v.checkLaunch(k, false, cpu != nil, args); err != nil {
		return err
	}
	if err := checkRanks(k, ext.rank, args); err != nil {
		return err
	}
	if v.acc.kind == KindCPU {
		start := time.Now()
		err := parallelForEach(v.acc.workers(), ext, cpu)
		v.lastKernel.Store(int64(time.Since(start)))
		return err
	}
	if err := ext.Validate(); err != nil {
		return fmt.Errorf("kernel %s: %w", k.label(), err)
	}
	return v.launchOnDevice(k, ext, Extent{}, args)
}

// LaunchTiled runs the compiled tiled kernel k once for every point of te,
// tile by tile: C++ AMP's parallel_for_each over a tiled_extent, for
// kernels that goampgen compiled. On the CPU accelerator it runs cpu as
// ParallelForEachTiled does; elsewhere it is Launch for tiled kernels. It
// is an error wrapping ErrInvalidComputeDomain if te is not valid (see
// TiledExtent.Validate) or does not fit the device. A GPU runs each tile
// as a thread block, which limits tiles further: at most 64 threads along
// dimension 0 of a rank-3 tile, at most as many threads a tile as the
// compiled kernel's registers allow, and at most 65535 tiles along each
// dimension but the last.
func (v *AcceleratorView) LaunchTiled(k *KernelSpec, te TiledExtent, cpu func(TiledIndex), args ...KernelArg) error {
	if err := v.checkLaunch(k, true, cpu != nil, args); err != nil {
		return err
	}
	if err := checkRanks(k, te.ext.rank, args); err != nil {
		return err
	}
	if err := checkTile(k, te); err != nil {
		return err
	}
	if n := te.TileExtent().Size(); k.Shuffles && n%WarpSize != 0 {
		return fmt.Errorf("%w: kernel %s shuffles within warps, so its tiles need a multiple of %d threads; tile %v has %d", ErrInvalidComputeDomain, k.label(), WarpSize, te.TileExtent(), n)
	}
	if v.acc.kind == KindCPU {
		start := time.Now()
		err := parallelForEachTiled(v.acc.workers(), te, cpu)
		v.lastKernel.Store(int64(time.Since(start)))
		return err
	}
	if err := te.Validate(); err != nil {
		return fmt.Errorf("kernel %s: %w", k.label(), err)
	}
	return v.launchOnDevice(k, te.Extent(), te.TileExtent(), args)
}

// checkTile refuses a tile shape other than the one k was compiled for,
// on every accelerator alike.
func checkTile(k *KernelSpec, te TiledExtent) error {
	if k.Tile == [MaxRank]int{} {
		return nil
	}
	rank := 0
	for rank < MaxRank && k.Tile[rank] > 0 {
		rank++
	}
	want := Extent{rank: rank, n: k.Tile}
	if got := te.TileExtent(); got != want {
		return fmt.Errorf("%w: kernel %s was compiled for tiles %v; this launch has tiles %v", ErrInvalidComputeDomain, k.label(), want, got)
	}
	return nil
}

// label names a kernel in errors: its Go name and where it is.
func (k *KernelSpec) label() string {
	name := k.Name
	if name == "" {
		name = "(unnamed)"
	}
	if k.Pos != "" {
		name += " (" + k.Pos + ")"
	}
	return name
}

// argLabel names kernel argument i (0-based) in errors.
func (k *KernelSpec) argLabel(i int) string {
	if i >= 0 && i < len(k.Args) && k.Args[i].Name != "" {
		return fmt.Sprintf("argument %d (%s)", i+1, k.Args[i].Name)
	}
	return fmt.Sprintf("argument %d", i+1)
}

// checkLaunch checks what every accelerator needs checked: a view to run
// on, a kernel launched the way it was written, and arguments that match
// it.
func (v *AcceleratorView) checkLaunch(k *KernelSpec, tiled, haveCPU bool, args []KernelArg) error {
	if err := v.Check(); err != nil {
		return err
	}
	if k == nil {
		return fmt.Errorf("%w: nil *KernelSpec", ErrInvalidKernel)
	}
	switch {
	case k.Tiled && !tiled:
		return fmt.Errorf("%w: kernel %s takes a TiledIndex: launch it over a TiledExtent with LaunchTiled", ErrInvalidKernel, k.label())
	case !k.Tiled && tiled:
		return fmt.Errorf("%w: kernel %s takes an Index: launch it over an Extent with Launch", ErrInvalidKernel, k.label())
	}
	if len(args) != len(k.Args) {
		return fmt.Errorf("%w: kernel %s takes %d arguments after its index, got %d", ErrInvalidKernel, k.label(), len(k.Args), len(args))
	}
	for i, a := range args {
		want := "a scalar (ScalarArg)"
		if k.Args[i].View {
			want = "a view (ViewArg)"
		}
		kv, isView := a.(kernelView)
		switch {
		case a == nil:
			return fmt.Errorf("%w: kernel %s: %s is nil, want %s", ErrInvalidKernel, k.label(), k.argLabel(i), want)
		case isView != k.Args[i].View:
			return fmt.Errorf("%w: kernel %s: %s is %s, want %s", ErrInvalidKernel, k.label(), k.argLabel(i), a.kernelArgType(), want)
		case isView && kv.isNil():
			return fmt.Errorf("%w: kernel %s: %s is a nil %s", ErrInvalidKernel, k.label(), k.argLabel(i), a.kernelArgType())
		}
	}
	if v.acc.kind == KindCPU && !haveCPU {
		return fmt.Errorf("%w: kernel %s has no Go function to run on the cpu accelerator", ErrInvalidKernel, k.label())
	}
	return nil
}

// checkRanks checks each view argument's rank against the rank at which
// k's code for a rank-r domain indexes it (KernelArgSpec.Ranks). The
// compiled code does not check it; the CPU would only panic when a thread
// got there. Checking on every accelerator makes a call fail the same way
// wherever it runs.
func checkRanks(k *KernelSpec, r int, args []KernelArg) error {
	if r < 1 || r > MaxRank {
		return nil // the extent's own check reports it
	}
	for i, a := range args {
		kv, ok := a.(kernelView)
		if want := k.Args[i].Ranks[r]; ok && want != 0 && kv.viewRank() != want {
			return fmt.Errorf("%w: kernel %s over a rank-%d domain indexes %s with rank-%d indices; it is a rank-%d view",
				ErrInvalidKernel, k.label(), r, k.argLabel(i), want, kv.viewRank())
		}
		if least := k.Args[i].MinRank; ok && kv.viewRank() < least {
			return fmt.Errorf("%w: kernel %s reads dimension %d of the extent of %s, a rank-%d view",
				ErrInvalidKernel, k.label(), least-1, k.argLabel(i), kv.viewRank())
		}
	}
	return nil
}

// kernelRunner is implemented by the device memory of accelerators that
// run compiled kernels (cudaMemory): Launch does everything that is the
// same on every such device, they do the driver's part.
type kernelRunner interface {
	// prepareKernel compiles k for the device, once, and returns for each
	// rank the most threads a block of that rank's entry may have.
	prepareKernel(k *KernelSpec) (maxThreads [MaxRank + 1]int, err error)
	// runKernel launches k's entry for rank over grid blocks of block
	// threads, with the parameters params gives for the address of a
	// zeroed status record, waits for it, and returns the record.
	// small picks the rank's SmallEntries entry.
	runKernel(k *KernelSpec, rank int, small bool, grid, block [3]uint32, params func(status uint64) []any) (statusRecord, error)
}

// smallLaunch reports whether a launch keeps within what a SmallEntries
// entry assumes (ir.Func.SmallIndices): every compute domain extent, view
// extent and view stride (the kernel's NonNeg parameters) at most
// ir.MaxSmall, every grid dimension at most ir.MaxSmallGrid blocks.
func smallLaunch(dom Extent, grid [3]uint32, args []boundArg) bool {
	for _, g := range grid {
		if g > ir.MaxSmallGrid {
			return false
		}
	}
	for d := range dom.rank {
		if dom.n[d] > ir.MaxSmall {
			return false
		}
	}
	for _, a := range args {
		if !a.view {
			continue
		}
		for _, n := range a.n {
			if n > ir.MaxSmall {
				return false
			}
		}
		for _, s := range a.s {
			if s > ir.MaxSmall {
				return false
			}
		}
	}
	return true
}

// launchOnDevice runs k over dom (tiled by tile, unless its rank is 0) on
// an accelerator that runs compiled kernels.
func (v *AcceleratorView) launchOnDevice(k *KernelSpec, dom, tile Extent, args []KernelArg) error {
	runner, ok := v.acc.memory.(kernelRunner)
	if !ok {
		return fmt.Errorf("%w: kernel %s: %s does not run compiled kernels", ErrUnsupported, k.label(), v.acc.path)
	}
	r := dom.rank
	if k.PTX == "" {
		return fmt.Errorf("%w: kernel %s has no GPU code (goampgen compiled it for the CPU only); run it on the cpu accelerator", ErrUnsupported, k.label())
	}
	if k.Entries[r] == "" {
		return fmt.Errorf("%w: kernel %s has no GPU code for a rank-%d compute domain", ErrUnsupported, k.label(), r)
	}
	if dom.Size() == 0 {
		return nil
	}
	maxThreads, err := runner.prepareKernel(k)
	if err != nil {
		return fmt.Errorf("kernel %s on %s: %w", k.label(), v.acc.path, err)
	}
	grid, block, err := launchGeometry(dom, tile, maxThreads[r])
	if err != nil {
		return fmt.Errorf("kernel %s on %s: %w", k.label(), v.acc.path, err)
	}
	bound, err := bindArgs(v, k, args)
	if err != nil {
		return err
	}
	small := k.SmallEntries[r] != "" && smallLaunch(dom, grid, bound)
	rec, err := runner.runKernel(k, r, small, grid, block, func(status uint64) []any { return kernelParams(status, dom, bound) })
	// The kernel used the views' device copies by address: the views must
	// outlive it, or a garbage collection meanwhile frees the copies
	// (ArrayView's cleanup) under the running kernel.
	runtime.KeepAlive(args)
	if err != nil {
		return fmt.Errorf("kernel %s on %s: %w", k.label(), v.acc.path, err)
	}
	v.lastKernel.Store(int64(rec.elapsed))
	return faultError(k, v.acc.path, dom, tile, rec)
}

// accessFor is how a launch makes a view current on the device, from what
// the kernel may do with it. A kernel that may write a view is not known to
// write all of it, so its old contents go to the device too, and elements
// the kernel leaves alone keep their values as they do on the CPU; to skip
// that upload for a pure output, call DiscardData first (C++ AMP's
// discard_data), which AccessReadWrite honours.
func accessFor(a KernelArgSpec) Access {
	switch {
	case a.Write:
		return AccessReadWrite
	case a.Read:
		return AccessRead
	}
	return 0
}

// combineAccess is the access that serves two uses of one buffer.
func combineAccess(a, b Access) Access {
	switch {
	case a == 0:
		return b
	case b == 0 || a == b:
		return a
	}
	return AccessReadWrite
}

// bindArgs resolves the arguments for a kernel on v's device, uploading
// views as needed.
func bindArgs(v *AcceleratorView, k *KernelSpec, args []KernelArg) ([]boundArg, error) {
	// Views and their sections share one buffer, with one copy on the
	// device, made current for everything the kernel does through any of
	// them: every argument over it then gets that copy's address, an
	// argument the kernel does not touch included, whatever their order.
	var need map[*buffer]Access
	for i, a := range args {
		if kv, ok := a.(kernelView); ok {
			if need == nil {
				need = make(map[*buffer]Access)
			}
			b := kv.viewBuffer()
			need[b] = combineAccess(need[b], accessFor(k.Args[i]))
		}
	}
	bound := make([]boundArg, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case kernelView:
			b, err := a.bind(v, need[a.viewBuffer()])
			if err != nil {
				return nil, fmt.Errorf("kernel %s on %s: %s: %w", k.label(), v.acc.path, k.argLabel(i), err)
			}
			bound[i] = b
		case scalarArg:
			bound[i] = boundArg{value: a.value}
		}
	}
	return bound, nil
}

// boundArg is one kernel argument as the kernel receives it.
type boundArg struct {
	view bool
	// Views: the device address of the first element (0 for an empty
	// view), the rank, the extent (1 beyond the rank) and the element
	// strides of dimensions 0 and 1 where they are not the last.
	base uint64
	rank int
	n    [MaxRank]int64
	s    [MaxRank - 1]int64
	// Scalars: int32, uint32, int64, uint64, float32 or float64.
	value any
}

// bindView gives the parameters of a view with extent ext and element
// strides stride whose first element is at device address base.
func bindView(ext Extent, stride [MaxRank]int, base uint64) (boundArg, error) {
	r := ext.rank
	// The kernel ABI has no stride for the last dimension: it is 1 for
	// every view goamp makes, and a view that broke that would be read
	// wrongly without a word.
	if r < 1 || stride[r-1] != 1 {
		return boundArg{}, fmt.Errorf("%w: a rank-%d view with element strides %v", ErrUnsupported, r, stride[:max(r, 0)])
	}
	b := boundArg{view: true, base: base, rank: r, n: [MaxRank]int64{1, 1, 1}}
	for d := range r {
		// The compiled kernels assume extents and strides of at most
		// 2^62 (ir.MaxNonNeg), which no view of memory reaches.
		if ext.n[d] > ir.MaxNonNeg || stride[d] > ir.MaxNonNeg || stride[d] < 0 {
			return boundArg{}, fmt.Errorf("%w: a view with extent %v and element strides %v: kernels take extents and strides up to 2^62", ErrUnsupported, ext, stride[:r])
		}
		b.n[d] = int64(ext.n[d])
		if d < r-1 {
			b.s[d] = int64(stride[d])
		}
	}
	return b, nil
}

// kernelParams lists a kernel's parameters, in the order and at the sizes
// its PTX entry declares them (the kernel ABI):
//
//	status  u64   the status record's address
//	n0..    s64   the compute domain's extent, one a dimension
//	then for each argument, in order:
//	  a view: base u64, rank u32, n0 n1 n2 s64, s0 s1 s64
//	  a scalar: u32 (bool, as 0 or 1), s32, u32, s64 (int, int64),
//	            u64 (uint, uint64), f32 or f64
func kernelParams(status uint64, dom Extent, args []boundArg) []any {
	params := make([]any, 0, 1+dom.rank+7*len(args))
	params = append(params, status)
	for d := range dom.rank {
		params = append(params, int64(dom.n[d]))
	}
	for _, a := range args {
		if !a.view {
			params = append(params, a.value)
			continue
		}
		params = append(params, a.base, uint32(a.rank), a.n[0], a.n[1], a.n[2], a.s[0], a.s[1])
	}
	return params
}

// CUDA's limits on a launch's shape.
const (
	maxGridX     = 1<<31 - 1
	maxGridYZ    = 65535
	maxBlockZ    = 64
	maxBlockSize = 1024
)

// launchGeometry maps a compute domain onto CUDA's grid of thread blocks,
// the last dimension on x (the fastest, as in C++ AMP), then y and z. A
// tiled launch (tile of dom's rank) runs each tile as one block; an
// untiled one (tile of rank 0) uses blocks of the runtime's choosing and
// the kernel skips the threads beyond the domain. maxThreads is the most
// threads a block of the compiled kernel may have. An empty domain gives
// an empty grid.
func launchGeometry(dom, tile Extent, maxThreads int) (grid, block [3]uint32, err error) {
	r := dom.rank
	var n [3]int // the domain along x, y, z
	for a := range r {
		n[a] = dom.n[r-1-a]
	}
	if dom.Size() == 0 {
		return grid, block, nil
	}
	maxThreads = min(max(maxThreads, 1), maxBlockSize)
	b := [3]int{1, 1, 1}
	if tile.rank != 0 {
		for a := range r {
			b[a] = tile.n[r-1-a]
		}
		if t := tile.Size(); t > maxThreads {
			return grid, block, fmt.Errorf("%w: tiles of %v are %d threads; the compiled kernel runs at most %d threads a tile on this device (its registers do not allow more)",
				ErrInvalidComputeDomain, tile, t, maxThreads)
		}
		if b[2] > maxBlockZ {
			return grid, block, fmt.Errorf("%w: tiles of %v: a GPU allows at most %d threads along dimension 0 of a rank-3 tile",
				ErrInvalidComputeDomain, tile, maxBlockZ)
		}
	} else {
		b = untiledBlock(r, n, maxThreads)
	}
	var g [3]int
	for a := range 3 {
		g[a] = (n[a] + b[a] - 1) / b[a]
	}
	g[0], g[1], g[2] = max(g[0], 1), max(g[1], 1), max(g[2], 1)
	for a, lim := range [3]int{maxGridX, maxGridYZ, maxGridYZ} {
		if g[a] > lim {
			what := "blocks"
			if tile.rank != 0 {
				what = "tiles"
			}
			return grid, block, fmt.Errorf("%w: %v needs %d %s along dimension %d; a GPU allows at most %d",
				ErrInvalidComputeDomain, dom, g[a], what, r-1-a, lim)
		}
	}
	for a := range 3 {
		grid[a], block[a] = uint32(g[a]), uint32(b[a])
	}
	return grid, block, nil
}

// untiledBlock picks the block for an untiled launch over n (along x, y,
// z) of rank r: 256 threads (fewer if the kernel allows fewer), as
// 256, 32x8 or 32x4x2, so that a warp reads 32 neighbours of the last
// dimension. A domain narrower than 32 gives the idle lanes to y, and one
// too long in y or z for the grid takes longer blocks there.
func untiledBlock(r int, n [3]int, maxThreads int) [3]int {
	limit := 1
	for limit*2 <= maxThreads {
		limit *= 2
	}
	base := min(256, limit)
	b := [3]int{base, 1, 1}
	switch r {
	case 2:
		b[0] = min(32, base)
		b[1] = base / b[0]
	case 3:
		b[0] = min(32, base)
		b[2] = min(2, base/b[0])
		b[1] = base / b[0] / b[2]
	}
	if r == 1 {
		return b
	}
	for b[0] > 1 && b[0]/2 >= n[0] {
		b[0] /= 2
		b[1] *= 2
	}
	threads := func() int { return b[0] * b[1] * b[2] }
	for (n[1]+b[1]-1)/b[1] > maxGridYZ {
		switch {
		case threads()*2 <= limit:
			b[1] *= 2
		case b[0] > 1:
			b[0] /= 2
			b[1] *= 2
		default:
			return b // launchGeometry reports it
		}
	}
	for r == 3 && (n[2]+b[2]-1)/b[2] > maxGridYZ && b[2]*2 <= maxBlockZ {
		switch {
		case threads()*2 <= limit:
			b[2] *= 2
		case b[0] > 1:
			b[0] /= 2
			b[2] *= 2
		default:
			return b
		}
	}
	return b
}

// statusRecord is what a kernel reports after it ran (ir.StatusRecordBytes
// on the device, zeroed before the launch): the first failure of a thread,
// or code ir.StatusOK.
type statusRecord struct {
	code, arg uint32
	where     [MaxRank]int64 // the failing thread's global index
	elapsed   time.Duration  // the kernel's time on the device's clock
}

// decodeStatus reads a status record as the device wrote it: u32 code at
// 0, u32 arg at 4, i64 where[3] at 8, 16, 24, little-endian as on every
// NVIDIA GPU.
func decodeStatus(b []byte) statusRecord {
	le := binary.LittleEndian
	return statusRecord{
		code:  le.Uint32(b[0:]),
		arg:   le.Uint32(b[4:]),
		where: [MaxRank]int64{int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:]))},
	}
}

// KernelFaultError reports a compiled kernel whose thread did, on an
// accelerator, what would have made the Go function panic on the CPU: an
// index outside a view, an integer division by zero, and the like. The
// first such thread of a launch is reported; the others ran to completion.
// It matches ErrKernelPanic, and ErrOutOfRange when an index was out of
// range.
type KernelFaultError struct {
	// Kernel and Pos are the kernel's Go name and file:line (KernelSpec).
	Kernel, Pos string
	// Accelerator is the path of the accelerator it ran on ("cuda:0").
	Accelerator string
	// Global is the index of the thread in the compute domain.
	Global Index
	// Tiled reports whether the kernel was tiled; Tile and Local are set
	// then.
	Tiled       bool
	Tile, Local Index
	// Code is the kernel's status code (1: index out of a view's bounds,
	// 2: out of TileStatic memory, 3: integer division by zero, 4: index
	// component beyond its rank, 5: index of the wrong rank for a view,
	// 6: unreachable code reached, 7: negative shift count) and Arg its
	// detail (a 1-based kernel argument, TileStatic call or component).
	Code, Arg int
	// Reason says what went wrong, in words.
	Reason string
}

func (e *KernelFaultError) Error() string {
	var s strings.Builder
	s.WriteString("amp: kernel ")
	s.WriteString(e.Kernel)
	if e.Pos != "" {
		s.WriteString(" (" + e.Pos + ")")
	}
	fmt.Fprintf(&s, " failed on %s in thread %v", e.Accelerator, e.Global)
	if e.Tiled {
		fmt.Fprintf(&s, " (tile %v, local %v)", e.Tile, e.Local)
	}
	s.WriteString(": " + e.Reason)
	return s.String()
}

// Unwrap returns ErrKernelPanic, and ErrOutOfRange for an index out of
// range.
func (e *KernelFaultError) Unwrap() []error {
	switch e.Code {
	case ir.StatusOutOfBounds, ir.StatusStaticBounds, ir.StatusIndexRank, ir.StatusRankMismatch:
		return []error{ErrKernelPanic, ErrOutOfRange}
	}
	return []error{ErrKernelPanic}
}

// faultError turns a launch's status record into an error naming the
// kernel and the thread, or nil if the kernel reported nothing.
func faultError(k *KernelSpec, accelerator string, dom, tile Extent, rec statusRecord) error {
	if rec.code == ir.StatusOK {
		return nil
	}
	e := &KernelFaultError{Kernel: k.Name, Pos: k.Pos, Accelerator: accelerator,
		Code: int(rec.code), Arg: int(rec.arg), Global: Index{rank: dom.rank}}
	for d := range dom.rank {
		e.Global.v[d] = int(rec.where[d])
	}
	if tile.rank != 0 {
		e.Tiled = true
		e.Tile, e.Local = Index{rank: dom.rank}, Index{rank: dom.rank}
		for d := range dom.rank {
			e.Tile.v[d] = floorDiv(e.Global.v[d], tile.n[d])
			e.Local.v[d] = e.Global.v[d] - e.Tile.v[d]*tile.n[d]
		}
	}
	arg := int(rec.arg)
	switch rec.code {
	case ir.StatusOutOfBounds:
		e.Reason = "index out of range of view " + k.argLabel(arg-1)
	case ir.StatusStaticBounds:
		e.Reason = "index out of range of the memory of TileStatic call " + strconv.Itoa(arg)
	case ir.StatusDivideByZero:
		e.Reason = "integer divide by zero"
	case ir.StatusIndexRank:
		e.Reason = "index component " + strconv.Itoa(arg) + " is beyond the index's rank"
	case ir.StatusRankMismatch:
		e.Reason = "index of the wrong rank for view " + k.argLabel(arg-1)
	case ir.StatusUnreachable:
		e.Reason = "reached code the compiler proved unreachable (a goampgen bug)"
	case ir.StatusNegativeShift:
		e.Reason = "negative shift amount"
	default:
		e.Reason = fmt.Sprintf("unknown status code %d (arg %d)", rec.code, rec.arg)
	}
	return e
}

// LastKernelTime is how long the most recent kernel launched through v
// with Launch or LaunchTiled ran: on a GPU, the time between CUDA events
// recorded around it on the device's own clock (the kernel's time, without
// the uploads before it or the wait after it); on the CPU, the call's wall
// time. When several goroutines launch through one view, it is one of
// theirs: give each its own view (Accelerator.NewView) to time them.
func (v *AcceleratorView) LastKernelTime() time.Duration {
	if v == nil {
		return 0
	}
	return time.Duration(v.lastKernel.Load())
}
