package amp

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Element is the set of element types goamp's views and kernels handle.
type Element interface {
	float32 | float64 | int32
}

// ArrayView is a rank 1 to 3 view of a Go slice: the C++ AMP array_view.
// The slice stays the home of the data: an accelerator with memory of its own
// gets a copy when a kernel there first uses the view, and the host sees the
// results after Synchronize (or on its next element access). Views made by
// Section share their parent's data.
//
// An ArrayView may be read from many goroutines at once; writes to the same
// element from different goroutines need the caller's own synchronisation,
// as with a slice. Work queued on a GPU (linalg.MatMul returns before it is
// done) may still be copying a view's slice: write the slice through the
// view (Set, HostMatrix), which waits for it, or directly only after the
// accelerator view's Wait or the array view's Synchronize.
type ArrayView[T Element] struct {
	ext    Extent
	offset int          // position of the view's first element in host
	stride [MaxRank]int // elements between neighbours along each dimension
	host   []T          // the whole slice the view and its sections share
	buf    *buffer      // its copies on accelerators

	// Slices of empty structs as long as the view's dimensions, set only for
	// the rank that the fast accessors (At1, At2, ...) serve: indexing them is
	// the bounds check, done by the Go runtime, and costs no memory.
	dim1, rows2, cols2 []struct{}
}

// NewArrayView returns a row-major view with extent ext over data. It is an
// error (wrapping ErrInvalidExtent or ErrShortData) if ext is invalid or data
// holds fewer than ext.Size() elements.
func NewArrayView[T Element](ext Extent, data []T) (*ArrayView[T], error) {
	if err := ext.Validate(); err != nil {
		return nil, err
	}
	if len(data) < ext.Size() {
		return nil, fmt.Errorf("%w: extent %v needs %d elements, slice has %d", ErrShortData, ext, ext.Size(), len(data))
	}
	v := &ArrayView[T]{ext: ext, host: data, buf: &buffer{nbytes: len(data) * int(unsafe.Sizeof(*new(T)))}}
	if len(data) > 0 {
		v.buf.ptr = unsafe.Pointer(&data[0])
	}
	v.initAccessors()
	s := 1
	for d := ext.rank - 1; d >= 0; d-- {
		v.stride[d] = s
		s *= ext.n[d]
	}
	return v, nil
}

// Extent is the shape of the view.
func (a *ArrayView[T]) Extent() Extent { return a.ext }

// At returns the element at idx. It panics if idx is outside the view, like
// indexing a slice out of range.
func (a *ArrayView[T]) At(idx Index) T { return a.hostData()[a.pos(idx)] }

// Set stores x at idx. It panics if idx is outside the view.
func (a *ArrayView[T]) Set(idx Index, x T) { a.hostDataForWrite()[a.pos(idx)] = x }

// At1 is At(Index1(i)) for a rank-1 view, without building the index.
// It panics if the view is not rank 1 or i is out of range.
func (a *ArrayView[T]) At1(i int) T {
	_ = a.dim1[i] // the bounds check, by the Go runtime
	return a.hostData()[a.offset+i*a.stride[0]]
}

// Set1 is Set(Index1(i), x) for a rank-1 view.
func (a *ArrayView[T]) Set1(i int, x T) {
	_ = a.dim1[i]
	a.hostDataForWrite()[a.offset+i*a.stride[0]] = x
}

// At2 is At(Index2(i, j)) for a rank-2 view, without building the index.
// It panics if the view is not rank 2 or (i, j) is out of range.
func (a *ArrayView[T]) At2(i, j int) T {
	_, _ = a.rows2[i], a.cols2[j]
	return a.hostData()[a.offset+i*a.stride[0]+j*a.stride[1]]
}

// Set2 is Set(Index2(i, j), x) for a rank-2 view.
func (a *ArrayView[T]) Set2(i, j int, x T) {
	_, _ = a.rows2[i], a.cols2[j]
	a.hostDataForWrite()[a.offset+i*a.stride[0]+j*a.stride[1]] = x
}

// initAccessors sizes the bounds-check slices of the fast accessors.
// Slices of empty structs allocate nothing.
func (a *ArrayView[T]) initAccessors() {
	switch a.ext.rank {
	case 1:
		a.dim1 = make([]struct{}, a.ext.n[0])
	case 2:
		a.rows2, a.cols2 = make([]struct{}, a.ext.n[0]), make([]struct{}, a.ext.n[1])
	}
}

func (a *ArrayView[T]) pos(idx Index) int {
	if !a.ext.Contains(idx) {
		panicOutOfRange(a.ext, idx.v[:idx.rank])
	}
	p := a.offset
	for d := 0; d < idx.rank; d++ {
		p += idx.v[d] * a.stride[d]
	}
	return p
}

func panicOutOfRange(ext Extent, idx []int) {
	panic(fmt.Sprintf("amp: index %s outside array view of extent %v", formatTuple(idx), ext))
}

// hostData returns the host slice, first bringing newer device data home.
func (a *ArrayView[T]) hostData() []T {
	if a.buf.flags.Load()&hostStale != 0 {
		a.buf.mustSynchronize()
	}
	return a.host
}

// hostDataForWrite returns the host slice for writing: newer device data
// comes home first and device copies become stale.
func (a *ArrayView[T]) hostDataForWrite() []T {
	if a.buf.flags.Load() != 0 {
		a.buf.prepareHostWrite()
	}
	return a.host
}

// HostMatrix gives code that works on host memory directly (the CPU's
// packed matrix multiply) a rank-2 view's elements: data starts at the
// view's first element and row i is data[i*ld : i*ld+cols]. Newer data on an
// accelerator comes home first; with forWrite, copies on accelerators
// become stale, as after Set. It is an error wrapping ErrInvalidExtent if
// the view is not rank 2. data is nil for an empty view.
func (a *ArrayView[T]) HostMatrix(forWrite bool) (data []T, ld int, err error) {
	if a.ext.rank != 2 {
		return nil, 0, fmt.Errorf("%w: HostMatrix of a rank-%d view", ErrInvalidExtent, a.ext.rank)
	}
	host := a.hostData()
	if forWrite {
		host = a.hostDataForWrite()
	}
	ld = a.stride[0]
	if a.ext.Size() == 0 {
		return nil, ld, nil
	}
	return host[a.offset:], ld, nil
}

// HostVector gives code that works on host memory directly a rank-1 view's
// elements, contiguous, as HostMatrix does for matrices. It is an error
// wrapping ErrInvalidExtent if the view is not rank 1.
func (a *ArrayView[T]) HostVector(forWrite bool) ([]T, error) {
	if a.ext.rank != 1 {
		return nil, fmt.Errorf("%w: HostVector of a rank-%d view", ErrInvalidExtent, a.ext.rank)
	}
	host := a.hostData()
	if forWrite {
		host = a.hostDataForWrite()
	}
	return host[a.offset : a.offset+a.ext.n[0]], nil
}

// DeviceMatrix is HostMatrix for kernels on an accelerator with memory of
// its own: it makes the rank-2 view's data current in the memory of v's
// accelerator for a kernel that uses it as acc says (uploading only if the
// copy there is stale and the kernel reads it), and returns the device
// address of the view's first element and the row stride in elements. After
// a kernel that writes, the host sees the result on Synchronize or its next
// access. It is an error wrapping ErrUnsupported on an accelerator without
// memory of its own (the CPU: use HostMatrix) and ErrInvalidExtent if the
// view is not rank 2. The address is 0 for an empty view. The copy belongs
// to the view: keep the view reachable (runtime.KeepAlive) until the kernel
// that uses the address has finished, or a garbage collection may free it.
func (a *ArrayView[T]) DeviceMatrix(v *AcceleratorView, acc Access) (addr uint64, ld int, err error) {
	if a.ext.rank != 2 {
		return 0, 0, fmt.Errorf("%w: DeviceMatrix of a rank-%d view", ErrInvalidExtent, a.ext.rank)
	}
	addr, err = a.deviceAddress(v, acc)
	return addr, a.stride[0], err
}

// DeviceAddress is DeviceMatrix for a view of any rank: the device address
// of its first element, the others at the offsets Strides gives.
func (a *ArrayView[T]) DeviceAddress(v *AcceleratorView, acc Access) (uint64, error) {
	return a.deviceAddress(v, acc)
}

// DeviceVector is DeviceMatrix for a rank-1 view: the device address of its
// first element (its elements are contiguous).
func (a *ArrayView[T]) DeviceVector(v *AcceleratorView, acc Access) (addr uint64, err error) {
	if a.ext.rank != 1 {
		return 0, fmt.Errorf("%w: DeviceVector of a rank-%d view", ErrInvalidExtent, a.ext.rank)
	}
	return a.deviceAddress(v, acc)
}

func (a *ArrayView[T]) deviceAddress(v *AcceleratorView, acc Access) (uint64, error) {
	if err := v.Check(); err != nil {
		return 0, err
	}
	owner := v.acc.memory
	if owner == nil {
		return 0, fmt.Errorf("%w: %s has no memory of its own", ErrUnsupported, v.acc.path)
	}
	if a.ext.Size() == 0 {
		return 0, nil
	}
	mem, err := a.onDevice(owner, acc)
	if err != nil {
		return 0, err
	}
	if c, ok := mem.(*cudaCopy); ok {
		s, err := v.cudaStream()
		if err != nil {
			return 0, err
		}
		if err := c.useOn(s, acc != AccessRead); err != nil {
			return 0, cudaFailure(v.acc, err)
		}
	}
	return mem.address() + uint64(a.offset)*uint64(unsafe.Sizeof(*new(T))), nil
}

// Section returns the view of the part of a that starts at origin and has
// extent ext (C++ AMP's array_view::section). It shares a's data. It is an
// error wrapping ErrOutOfRange if the section does not fit inside a.
func (a *ArrayView[T]) Section(origin Index, ext Extent) (*ArrayView[T], error) {
	if err := ext.Validate(); err != nil {
		return nil, err
	}
	if origin.rank != a.ext.rank || ext.rank != a.ext.rank {
		return nil, fmt.Errorf("%w: section %v at %v of a rank-%d view", ErrOutOfRange, ext, origin, a.ext.rank)
	}
	for d := 0; d < a.ext.rank; d++ {
		if origin.v[d] < 0 || origin.v[d] > a.ext.n[d]-ext.n[d] { // no overflow: both are at most a.ext.n[d]
			return nil, fmt.Errorf("%w: section %v at %v does not fit in %v", ErrOutOfRange, ext, origin, a.ext)
		}
	}
	s := &ArrayView[T]{ext: ext, stride: a.stride, host: a.host, buf: a.buf, offset: a.offset}
	s.initAccessors()
	if ext.Size() > 0 {
		s.offset = a.pos(origin)
	}
	return s, nil
}

// Projection returns the rank-(N-1) view of the elements of a rank-N view
// whose first index is i (C++ AMP's array_view::operator[] on a view of
// rank 2 or 3): row i of a matrix, matrix i of a rank-3 view. It shares a's
// data. It is an error wrapping ErrOutOfRange if i is not in
// [0, Extent().At(0)), and ErrInvalidExtent for a rank-1 view (whose
// projection would be one element: use At1).
func (a *ArrayView[T]) Projection(i int) (*ArrayView[T], error) {
	r := a.ext.rank
	if r < 2 {
		return nil, fmt.Errorf("%w: projection of a rank-%d view", ErrInvalidExtent, r)
	}
	if i < 0 || i >= a.ext.n[0] {
		return nil, fmt.Errorf("%w: projection %d of a view of extent %v", ErrOutOfRange, i, a.ext)
	}
	p := &ArrayView[T]{ext: Extent{rank: r - 1}, host: a.host, buf: a.buf, offset: a.offset + i*a.stride[0]}
	copy(p.ext.n[:], a.ext.n[1:r])
	copy(p.stride[:], a.stride[1:r])
	p.initAccessors()
	if p.ext.Size() == 0 {
		p.offset = a.offset
	}
	return p, nil
}

// Strides returns the elements between neighbours along each dimension of
// the view as it lies in its slice: for a matrix, the row stride and 1.
// With HostMatrix, DeviceAddress and their kin it lets code that works on
// memory directly walk a view of any rank.
func (a *ArrayView[T]) Strides() []int { return append([]int(nil), a.stride[:a.ext.rank]...) }

// Offset returns the position of the view's first element in the slice
// it was made over (0 for a whole view; where a section or projection
// starts). Device copies keep that layout, so with Strides it tells how
// the view's elements are aligned in memory.
func (a *ArrayView[T]) Offset() int { return a.offset }

// Overlaps reports whether a and o share an element: whether some element
// of one view is stored in the same place as an element of the other. Views
// of one slice that lie side by side (two column blocks of a matrix, say)
// do not overlap, though the slice spans both. Element ranges are compared
// exactly for views laid out as sections of row-major data, as every view
// is; the cost is at most a few operations a row of the smaller view.
func (a *ArrayView[T]) Overlaps(o *ArrayView[T]) bool {
	if a.ext.Size() == 0 || o.ext.Size() == 0 {
		return false
	}
	// Place both views in one numbering of elements, from a's slice.
	size := int64(unsafe.Sizeof(*new(T)))
	if size == 0 {
		return false
	}
	gap := int64(uintptr(unsafe.Pointer(unsafe.SliceData(o.host)))) - int64(uintptr(unsafe.Pointer(unsafe.SliceData(a.host))))
	if gap%size != 0 {
		return true // not one array of T: cannot tell, so say they may
	}
	la, lo := a.layout(0), o.layout(int(gap/size))
	if la.last() < lo.first() || lo.last() < la.first() {
		return false
	}
	if la.runs() > lo.runs() {
		la, lo = lo, la
	}
	return la.anyRun(func(start, length int) bool { return lo.meets(start, start+length) })
}

// layout is where a view's elements are, as positions in its slice: at
// off + sum of i[d]*stride[d] for 0 <= i[d] < n[d].
type layout struct {
	rank      int
	off       int
	n, stride [MaxRank]int
}

func (a *ArrayView[T]) layout(base int) layout {
	return layout{rank: a.ext.rank, off: base + a.offset, n: a.ext.n, stride: a.stride}
}

func (l layout) first() int { return l.off }

func (l layout) last() int { return l.off + l.spanFrom(0) - 1 }

// spanFrom is the length of the stretch that the elements of one block at
// dimension d (the dimensions from d on) cover, first to last.
func (l layout) spanFrom(d int) int {
	s := 1
	for e := d; e < l.rank; e++ {
		s += (l.n[e] - 1) * l.stride[e]
	}
	return s
}

// runs is how many contiguous runs of elements anyRun visits.
func (l layout) runs() int {
	r := 1
	for d := 0; d < l.rank-1; d++ {
		r *= l.n[d]
	}
	if l.stride[l.rank-1] != 1 {
		r *= l.n[l.rank-1]
	}
	return r
}

// anyRun calls f for each contiguous run of the view's elements until f
// returns true, and reports whether one did.
func (l layout) anyRun(f func(start, length int) bool) bool {
	last := l.rank - 1
	length, step, count := l.n[last], 1, 1
	if l.stride[last] != 1 {
		length, step, count = 1, l.stride[last], l.n[last]
	}
	var walk func(d, off int) bool
	walk = func(d, off int) bool {
		if d == last {
			for i := range count {
				if f(off+i*step, length) {
					return true
				}
			}
			return false
		}
		for i := range l.n[d] {
			if walk(d+1, off+i*l.stride[d]) {
				return true
			}
		}
		return false
	}
	return walk(0, l.off)
}

// meets reports whether an element of the view lies in [lo, hi).
func (l layout) meets(lo, hi int) bool { return l.meetsFrom(0, l.off, lo, hi) }

// meetsFrom reports whether an element of the block at dimension d that
// starts at off lies in [lo, hi). Along d the block is n[d] sub-blocks, each
// covering spanFrom(d+1) positions, stride[d] apart. When they do not
// interleave, the sub-blocks that can meet [lo, hi) are consecutive, and all
// but the first and last of them lie wholly inside it, so only those two
// need a closer look.
func (l layout) meetsFrom(d, off, lo, hi int) bool {
	if d == l.rank {
		return lo <= off && off < hi
	}
	step, sub, n := l.stride[d], l.spanFrom(d+1), l.n[d]
	if n == 1 {
		return l.meetsFrom(d+1, off, lo, hi)
	}
	if step < sub {
		// Interleaved sub-blocks (no view is laid out so): say they may meet.
		return off < hi && lo < off+(n-1)*step+sub
	}
	// Sub-block i covers [off+i*step, off+i*step+sub).
	first := max(0, floorDiv(lo-off-sub, step)+1) // the first that ends after lo
	last := min(n-1, floorDiv(hi-1-off, step))    // the last that starts before hi
	switch {
	case first > last:
		return false
	case last-first >= 2:
		return true
	}
	return l.meetsFrom(d+1, off+first*step, lo, hi) || (last != first && l.meetsFrom(d+1, off+last*step, lo, hi))
}

// floorDiv is a/b rounded down, for b > 0.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// CopyTo copies the view's elements into dst in row-major order and returns
// how many it copied: min(len(dst), Extent().Size()).
func (a *ArrayView[T]) CopyTo(dst []T) int {
	n := min(len(dst), a.ext.Size())
	if n == 0 {
		return 0
	}
	host := a.hostData()
	idx := Index{rank: a.ext.rank}
	for i := range n {
		dst[i] = host[a.pos(idx)]
		a.ext.increment(&idx)
	}
	return n
}

// Synchronize copies the view's data back to its Go slice if an accelerator
// holds a newer copy (C++ AMP's array_view::synchronize). After it, the
// slice holds the view's current contents.
func (a *ArrayView[T]) Synchronize() error { return a.buf.synchronize() }

// Refresh tells the view that its Go slice was changed directly, not through
// Set: copies on accelerators are stale and will be uploaded again when next
// used (C++ AMP's array_view::refresh).
func (a *ArrayView[T]) Refresh() { a.buf.invalidateCopies() }

// Release frees the view's copies on accelerators, first bringing newer
// data home as Synchronize does. Sections share one set of copies, so
// releasing any of them releases all. A later kernel makes new copies.
func (a *ArrayView[T]) Release() error { return a.buf.release() }

// DiscardData tells the view that its current contents are not needed: the
// next kernel on an accelerator with its own memory gets an uninitialised
// copy instead of an upload (C++ AMP's array_view::discard_data). Use it for
// outputs. On the CPU accelerator the slice keeps what it held.
//
// Device copies are of the whole slice a view and its sections share, so on
// a view that does not cover all of it DiscardData does nothing: discarding
// would lose the data around the view.
func (a *ArrayView[T]) DiscardData() {
	if a.coversBuffer() {
		a.buf.discard()
	}
}

// coversBuffer reports whether the view spans its whole slice, row-major, so
// that what is true of the view's contents is true of the buffer's.
func (a *ArrayView[T]) coversBuffer() bool {
	if a.offset != 0 || a.ext.Size() != len(a.host) {
		return false
	}
	s := 1
	for d := a.ext.rank - 1; d >= 0; d-- {
		if a.stride[d] != s && a.ext.n[d] > 1 {
			return false
		}
		s *= a.ext.n[d]
	}
	return true
}

// onDevice returns owner's copy of the view's buffer for a kernel that uses
// the view with access acc (see buffer.onDevice). A kernel that writes all
// of a view that is only part of the buffer still needs the rest uploaded.
func (a *ArrayView[T]) onDevice(owner deviceMemoryOwner, acc Access) (deviceMemory, error) {
	if acc == AccessWrite && !a.coversBuffer() {
		acc = AccessReadWrite
	}
	return a.buf.onDevice(owner, acc)
}

// buffer tracks the copies of the host slice that a view and its sections
// share on accelerators with memory of their own. It sees the slice as raw
// bytes, so that none of this is generic.
type buffer struct {
	ptr    unsafe.Pointer // the host slice's first element; nil if empty
	nbytes int

	// flags holds the bits below. Element access reads it with one atomic
	// load and takes a slow path only when a bit is set.
	flags atomic.Uint32

	mu     sync.Mutex
	copies map[deviceMemoryOwner]*deviceCopy

	// The host memory page-locked for fast copies (see pinLocked), and the
	// cleanup that unlocks it if the buffer is dropped without Release.
	pin        hostPin
	pinCleanup runtime.Cleanup
	pinTried   bool // pinLocked asked once; a failure is not retried
}

const (
	// hostStale: a device copy is newer than host; host reads synchronize.
	hostStale uint32 = 1 << iota
	// copiesValid: some device copy matches host; host writes invalidate it.
	copiesValid
	// discarded: DiscardData was called and the contents do not matter.
	discarded
)

func (b *buffer) is(flag uint32) bool { return b.flags.Load()&flag != 0 }

func (b *buffer) set(flag uint32, on bool) {
	if on {
		b.flags.Or(flag)
	} else {
		b.flags.And(^flag)
	}
}

type deviceCopy struct {
	mem   deviceMemory
	valid bool // holds the buffer's current contents
}

// deviceMemoryOwner is implemented by accelerators with memory of their
// own: they make the device copies of array views.
type deviceMemoryOwner interface {
	allocate(bytes int) (deviceMemory, error)
}

// hostPinner is implemented by accelerators whose copies to and from host
// memory run faster when that memory is page-locked (CUDA GPUs).
type hostPinner interface {
	// pinHost page-locks the n bytes at p until the hostPin's unpin. It
	// fails when the process's budget of locked memory is spent or the
	// memory cannot be locked (already locked by another view of the same
	// slice, say): copies then go through pageable memory, as before.
	pinHost(p unsafe.Pointer, n int) (hostPin, error)
}

// hostPin is page-locked host memory; unpin unlocks it (a second call
// does nothing). It keeps the memory reachable until then.
type hostPin interface{ unpin() }

// pinMinBytes is the smallest buffer pinLocked locks. Locking costs about
// what a copy through pageable memory does (the OS pins every page), so it
// pays from the second copy of a buffer on, and for large buffers from the
// first: measured on the H100 host (docs/PERFORMANCE.md, "Transfers"),
// 64 MiB locks at 36 GB/s and then copies at 55 GB/s, against 8 to 14 GB/s
// through pageable memory.
const pinMinBytes = 8 << 20

// pinLocked page-locks the buffer's host memory before its first copy to
// or from owner, when owner copies faster from locked memory and the
// buffer is large. The lock lasts until Release or until the buffer is
// collected. b.mu is held.
func (b *buffer) pinLocked(owner deviceMemoryOwner) {
	if b.pin != nil || b.pinTried || b.nbytes < pinMinBytes {
		return
	}
	p, ok := owner.(hostPinner)
	if !ok {
		return
	}
	b.pinTried = true
	pin, err := p.pinHost(b.ptr, b.nbytes)
	if err != nil {
		return // copies go through pageable memory
	}
	b.pin = pin
	b.pinCleanup = runtime.AddCleanup(b, func(p hostPin) { p.unpin() }, pin)
}

// unpinLocked undoes pinLocked. b.mu is held, and no copy is running.
func (b *buffer) unpinLocked() {
	if b.pin != nil {
		b.pinCleanup.Stop()
		b.pin.unpin()
		b.pin = nil
	}
	b.pinTried = false
}

// deviceMemory is one copy of a buffer in an accelerator's memory.
type deviceMemory interface {
	upload(src unsafe.Pointer, bytes int) error
	download(dst unsafe.Pointer, bytes int) error
	release()
	address() uint64 // where the copy starts in the device's address space
}

// Access says what a kernel on an accelerator does with a view's data, so
// that only the copies that are needed are made.
type Access int

// The ways a kernel on an accelerator may use a view.
const (
	AccessRead      Access = iota + 1 // reads only: the host copy stays current
	AccessWrite                       // overwrites every element: no upload needed
	AccessReadWrite                   // reads and writes
)

// prepareHostWrite brings newer device data home and marks the device
// copies stale, before the host writes.
func (b *buffer) prepareHostWrite() {
	b.mustSynchronize()
	if b.is(copiesValid | discarded) {
		b.invalidateCopies()
	}
}

func (b *buffer) mustSynchronize() {
	if err := b.synchronize(); err != nil {
		panic(fmt.Sprintf("amp: implicit synchronize of an array view failed: %v", err))
	}
}

// synchronize downloads the newest device copy into host, if host is stale.
func (b *buffer) synchronize() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.is(hostStale) {
		return nil
	}
	return b.downloadLocked()
}

func (b *buffer) invalidateCopies() {
	b.mu.Lock()
	defer b.mu.Unlock()
	// The host's memory is about to change (Refresh says it has): no row
	// copy may still be reading or writing it.
	b.waitHostDMALocked()
	for _, c := range b.copies {
		c.valid = false
	}
	b.set(copiesValid, false)
	b.set(discarded, false)
}

func (b *buffer) discard() { b.set(discarded, true) }

// onDevice returns owner's copy of the buffer, ready for a kernel that uses
// it with the given access: uploaded unless it is current or its contents
// were discarded, and marked as the only current copy if the kernel writes.
func (b *buffer) onDevice(owner deviceMemoryOwner, acc Access) (deviceMemory, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, err := b.copyLocked(owner)
	if err != nil {
		return nil, err
	}
	if !c.valid && acc != AccessWrite && !b.is(discarded) {
		if b.is(hostStale) {
			if err := b.downloadLocked(); err != nil {
				return nil, err
			}
		}
		b.pinLocked(owner)
		if err := c.mem.upload(b.ptr, b.nbytes); err != nil {
			return nil, fmt.Errorf("amp: upload array view: %w", err)
		}
	}
	c.valid = true
	b.set(copiesValid, true)
	if acc != AccessRead {
		b.writtenOnLocked(c)
	}
	return c.mem, nil
}

// copyLocked returns owner's copy of the buffer, allocating it (not
// uploaded, not valid) if there is none. b.mu is held.
func (b *buffer) copyLocked(owner deviceMemoryOwner) (*deviceCopy, error) {
	c := b.copies[owner]
	if c != nil {
		return c, nil
	}
	mem, err := owner.allocate(b.nbytes)
	if err != nil {
		return nil, err
	}
	c = &deviceCopy{mem: mem}
	if b.copies == nil {
		b.copies = make(map[deviceMemoryOwner]*deviceCopy)
		// The safety net for views nobody released: once no view
		// reaches the buffer, free its device copies. The map is not
		// the buffer, so it does not keep the buffer alive.
		runtime.AddCleanup(b, releaseCopies, b.copies)
	}
	b.copies[owner] = c
	return c, nil
}

// writtenOnLocked records that a kernel is about to write copy c: c is
// the only current copy, the host is stale, and a download of c's older
// contents that is still on its way home no longer brings the host up to
// date. b.mu is held.
func (b *buffer) writtenOnLocked(c *deviceCopy) {
	for _, o := range b.copies {
		o.valid = o == c
		h, ok := o.mem.(hostDMA)
		switch {
		case !ok:
		case o == c:
			h.dropHomeward() // lands before c's next writer, on the same device
		default:
			// Another GPU's streams are not ordered with this one's: its
			// download must land before this device's data can follow.
			_, _ = h.waitHostDMA()
		}
	}
	b.set(hostStale, true)
	b.set(discarded, false)
}

// hostDMA is a device copy that may have row copies to or from the host's
// memory still queued (a product that overlapped its copies with its
// kernels, package queue): waitHostDMA waits for them and reports whether
// a download was among them (the host then holds the copy's contents);
// dropHomeward forgets a queued download whose contents are about to be
// replaced.
type hostDMA interface {
	waitHostDMA() (downloaded bool, err error)
	dropHomeward()
}

// waitHostDMALocked waits for every copy's queued row copies, before the
// host's memory is written or handed back. b.mu is held.
func (b *buffer) waitHostDMALocked() {
	for _, c := range b.copies {
		if h, ok := c.mem.(hostDMA); ok {
			// An error is the context's, lost to a fault: the next use of
			// the copy reports it.
			_, _ = h.waitHostDMA()
		}
	}
}

func (b *buffer) downloadLocked() error {
	for owner, c := range b.copies {
		if c.valid {
			if h, ok := c.mem.(hostDMA); ok {
				if downloaded, err := h.waitHostDMA(); err != nil {
					return fmt.Errorf("amp: synchronize array view: %w", err)
				} else if downloaded {
					break // the host has the copy's contents
				}
			}
			b.pinLocked(owner)
			if err := c.mem.download(b.ptr, b.nbytes); err != nil {
				return fmt.Errorf("amp: synchronize array view: %w", err)
			}
			break
		}
	}
	// With no valid copy nothing was written on a device: host is current.
	b.set(hostStale, false)
	return nil
}

// release frees every device copy, bringing newer data home first.
// releaseCopies frees device copies; it is the cleanup of a buffer that
// became unreachable with copies still on devices.
func releaseCopies(copies map[deviceMemoryOwner]*deviceCopy) {
	for _, c := range copies {
		c.mem.release()
	}
}

func (b *buffer) release() error {
	err := b.synchronize()
	b.mu.Lock()
	defer b.mu.Unlock()
	for owner, c := range b.copies {
		c.mem.release()
		delete(b.copies, owner)
	}
	b.unpinLocked()
	b.set(copiesValid, false)
	return err
}
