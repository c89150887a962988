package amp

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"

	"github.com/goamp/goamp/internal/cuda"
)

// DeviceEnv is the environment variable that names the default accelerator,
// as CPPAMP_DEFAULT_ACCELERATOR did for C++ AMP: "cpu", "auto", or a device
// path such as "cuda:0".
const DeviceEnv = "GOAMP_DEVICE"

// Kind is the family an accelerator belongs to.
type Kind int

// The kinds of accelerator.
const (
	KindCPU  Kind = iota + 1 // the host's cores; always present
	KindCUDA                 // an NVIDIA GPU through the CUDA driver
)

func (k Kind) String() string {
	switch k {
	case KindCPU:
		return "cpu"
	case KindCUDA:
		return "cuda"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Property is one named fact about an accelerator, for display.
type Property struct {
	Name, Value string
}

// Accelerator is a device that runs kernels: the C++ AMP accelerator. The
// CPU accelerator is always present; GPUs join the list when a driver and a
// device are found.
type Accelerator struct {
	path        string
	kind        Kind
	description string
	props       []Property
	ordinal     int               // GPUs: the device's number in its driver
	workers     func() int        // CPU: goroutines a kernel runs on
	memory      deviceMemoryOwner // GPUs: makes the device copies of views
	defaultView *AcceleratorView
}

// Path names the accelerator, as C++ AMP's device_path: "cpu", "cuda:0".
// Find and GOAMP_DEVICE accept it.
func (a *Accelerator) Path() string { return a.path }

// Kind is the accelerator's family.
func (a *Accelerator) Kind() Kind { return a.kind }

// Ordinal is the device's number among its kind's devices in its driver:
// N of "cuda:N". It is 0 for the CPU.
func (a *Accelerator) Ordinal() int { return a.ordinal }

// Description is a human-readable name, such as the processor's model.
func (a *Accelerator) Description() string { return a.description }

// Properties lists facts about the accelerator (cores, memory, features).
func (a *Accelerator) Properties() []Property { return append([]Property(nil), a.props...) }

// DefaultView is the accelerator's default queue.
func (a *Accelerator) DefaultView() *AcceleratorView { return a.defaultView }

// NewView returns a new queue on the accelerator (C++ AMP's create_view).
func (a *Accelerator) NewView() *AcceleratorView { return &AcceleratorView{acc: a} }

func (a *Accelerator) String() string { return a.path }

// AcceleratorView is a queue of work on one accelerator: the C++ AMP
// accelerator_view. On the CPU, work runs when it is submitted and the calls
// return when it is done. On a CUDA GPU a view is a CUDA stream: work that
// does not hand a result back to the caller (linalg.MatMul with the reg128
// kernel, auto's choice) is queued on it and the call returns before it is
// done; Wait waits for it, and an array view's Synchronize (or element
// access) waits for the work that wrote it. Work queued on two views of
// one GPU may run at the same time; an array view used through two views
// is handed from one to the other in order. Work that returns a result or
// a status (Dot, the Go kernels of Launch, the textbook kernels) still
// waits for itself before returning.
type AcceleratorView struct {
	acc        *Accelerator
	lastKernel atomic.Int64 // LastKernelTime, in nanoseconds

	streamMu sync.Mutex
	stream   *cuda.Stream // a CUDA view's queue, made on first use
}

// Accelerator is the device the view's work runs on; nil for a view that
// belongs to none (a nil or zero AcceleratorView).
func (v *AcceleratorView) Accelerator() *Accelerator {
	if v == nil {
		return nil
	}
	return v.acc
}

// Check returns nil if the view belongs to an accelerator, and otherwise an
// error wrapping ErrNoAccelerator: a nil or zero AcceleratorView, or one of
// an Accelerator not made by this package, has nowhere to run. Views come
// from Accelerator.DefaultView and Accelerator.NewView.
func (v *AcceleratorView) Check() error {
	if v == nil || v.acc == nil || v.acc.path == "" {
		return fmt.Errorf("%w: the accelerator view belongs to no accelerator (a zero AcceleratorView?); use Accelerator.DefaultView or NewView", ErrNoAccelerator)
	}
	return nil
}

// Wait returns when all work submitted to the view has finished (C++
// AMP's accelerator_view::wait). On a GPU its error is the first that the
// view's work raised on the device, wrapping ErrAcceleratorFailure (a
// kernel's fault, which also makes the device unusable for the rest of
// the process).
func (v *AcceleratorView) Wait() error {
	if err := v.Check(); err != nil {
		return err
	}
	v.streamMu.Lock()
	s := v.stream
	v.streamMu.Unlock()
	if s == nil {
		return nil // nothing was ever queued
	}
	if err := s.Synchronize(); err != nil {
		return fmt.Errorf("waiting for %s: %w", v.acc.path, cudaFailure(v.acc, err))
	}
	return nil
}

// ParallelForEach runs kernel once for every point of ext, in parallel and in
// no particular order: C++ AMP's parallel_for_each over an extent. It returns
// when every call has returned. A panic in the kernel stops the remaining
// work and comes back as a *KernelPanicError naming the point.
//
// A Go closure runs only on the CPU accelerator; on another it is an error
// wrapping ErrUnsupported. To run a kernel on a GPU, write it as a
// top-level function and compile it with goampgen, whose generated Launch
// function runs it on any accelerator (see Launch).
func (v *AcceleratorView) ParallelForEach(ext Extent, kernel func(Index)) error {
	if err := v.Check(); err != nil {
		return err
	}
	if v.acc.kind != KindCPU {
		return fmt.Errorf("%w: a Go closure runs on the cpu accelerator, not %s: compile the kernel with goampgen and call its Launch function", ErrUnsupported, v.acc.path)
	}
	return parallelForEach(v.acc.workers(), ext, kernel)
}

// ParallelForEachTiled runs kernel once for every point of te, tile by tile:
// C++ AMP's parallel_for_each over a tiled_extent. The threads of a tile are
// alive together and may share TileStatic memory and wait at their Barrier;
// tiles run in parallel. It is an error wrapping ErrInvalidComputeDomain if
// te is not valid (see TiledExtent.Validate), a *DivergenceError if a tile's
// threads do not all wait at the same barriers, and a *KernelPanicError if
// the kernel panics. No goroutine outlives the call. Like ParallelForEach,
// it runs on the CPU accelerator only; see LaunchTiled for GPUs.
func (v *AcceleratorView) ParallelForEachTiled(te TiledExtent, kernel func(TiledIndex)) error {
	if err := v.Check(); err != nil {
		return err
	}
	if v.acc.kind != KindCPU {
		return fmt.Errorf("%w: a Go closure runs on the cpu accelerator, not %s: compile the kernel with goampgen and call its Launch function", ErrUnsupported, v.acc.path)
	}
	return parallelForEachTiled(v.acc.workers(), te, kernel)
}

// ParallelForEach runs kernel over ext on the CPU accelerator; see
// AcceleratorView.ParallelForEach.
func ParallelForEach(ext Extent, kernel func(Index)) error {
	return CPU().DefaultView().ParallelForEach(ext, kernel)
}

// ParallelForEachTiled runs kernel over te on the CPU accelerator; see
// AcceleratorView.ParallelForEachTiled.
func ParallelForEachTiled(te TiledExtent, kernel func(TiledIndex)) error {
	return CPU().DefaultView().ParallelForEachTiled(te, kernel)
}

var (
	discoverOnce sync.Once
	accelerators []*Accelerator
)

// Accelerators lists the accelerators found on this machine, the CPU first.
func Accelerators() []*Accelerator {
	discoverOnce.Do(func() {
		accelerators = []*Accelerator{newCPUAccelerator()}
		gpus, err := discoverCUDA()
		accelerators = append(accelerators, gpus...)
		cudaMissing = err
	})
	return append([]*Accelerator(nil), accelerators...)
}

// CPU returns the CPU accelerator.
func CPU() *Accelerator { return Accelerators()[0] }

// Find returns the accelerator named by path: "cpu", a device path such as
// "cuda:0", "cuda" for the first CUDA device, or "auto" (or "") for the best
// one present: a GPU when there is one, else the CPU. It is an error wrapping
// ErrNoAccelerator when nothing matches.
func Find(path string) (*Accelerator, error) {
	accs := Accelerators()
	path = strings.ToLower(strings.TrimSpace(path))
	switch path {
	case "", "auto":
		for _, a := range accs {
			if a.kind != KindCPU {
				return a, nil
			}
		}
		return accs[0], nil
	}
	for _, a := range accs {
		if a.path == path || (path == a.kind.String() && a.kind != KindCPU && strings.HasSuffix(a.path, ":0")) {
			return a, nil
		}
	}
	names := make([]string, len(accs))
	for i, a := range accs {
		names[i] = a.path
	}
	why := ""
	if err := CUDAUnavailable(); err != nil && strings.HasPrefix(path, "cuda") {
		why = "; no CUDA accelerator: " + err.Error()
	}
	return nil, fmt.Errorf("%w: %q (present: %s%s)", ErrNoAccelerator, path, strings.Join(names, ", "), why)
}

// DefaultAccelerator returns the accelerator named by the GOAMP_DEVICE
// environment variable, or Find("auto") when it is unset.
func DefaultAccelerator() (*Accelerator, error) {
	a, err := Find(os.Getenv(DeviceEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", DeviceEnv, err)
	}
	return a, nil
}

func newCPUAccelerator() *Accelerator {
	a := &Accelerator{
		path:        "cpu",
		kind:        KindCPU,
		description: cpuModel(),
		workers:     func() int { return runtime.GOMAXPROCS(0) },
	}
	a.props = []Property{
		{"architecture", runtime.GOARCH},
		{"cores", strconv.Itoa(runtime.NumCPU())},
		{"GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0))},
	}
	if mem := totalMemory(); mem > 0 {
		a.props = append(a.props, Property{"memory", formatBytes(mem)})
	}
	if f := cpuFeatures(); f != "" {
		a.props = append(a.props, Property{"features", f})
	}
	a.defaultView = a.NewView()
	return a
}

func cpuFeatures() string {
	var f []string
	switch runtime.GOARCH {
	case "amd64":
		for _, x := range []struct {
			name string
			has  bool
		}{{"SSE4.2", cpu.X86.HasSSE42}, {"AVX", cpu.X86.HasAVX}, {"AVX2", cpu.X86.HasAVX2}, {"FMA", cpu.X86.HasFMA}, {"AVX-512F", cpu.X86.HasAVX512F}} {
			if x.has {
				f = append(f, x.name)
			}
		}
	case "arm64":
		if cpu.ARM64.HasASIMD {
			f = append(f, "ASIMD")
		}
		if cpu.ARM64.HasSVE {
			f = append(f, "SVE")
		}
	}
	return strings.Join(f, " ")
}

// cpuModel reads the processor's name from /proc/cpuinfo where there is one.
func cpuModel() string {
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		return v
	}
	return runtime.GOARCH + " processor"
}

// totalMemory reads MemTotal from /proc/meminfo, in bytes; 0 if unknown.
func totalMemory() int64 {
	v := procField("/proc/meminfo", "MemTotal")
	kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}

// procField returns the value of the first "name : value" line of a /proc file.
func procField(file, name string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func formatBytes(n int64) string {
	const gib = 1 << 30
	if n >= gib {
		return strconv.FormatFloat(float64(n)/gib, 'f', 1, 64) + " GiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
