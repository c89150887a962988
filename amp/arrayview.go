package amp

import (
	"fmt"
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
// as with a slice.
type ArrayView[T Element] struct {
	ext    Extent
	offset int          // position of the view's first element in buf.host
	stride [MaxRank]int // elements between neighbours along each dimension
	buf    *buffer[T]
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
	v := &ArrayView[T]{ext: ext, buf: &buffer[T]{host: data}}
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
func (a *ArrayView[T]) At(idx Index) T { return a.buf.hostData()[a.pos(idx)] }

// Set stores x at idx. It panics if idx is outside the view.
func (a *ArrayView[T]) Set(idx Index, x T) { a.buf.hostDataForWrite()[a.pos(idx)] = x }

// At1 is At(Index1(i)) for a rank-1 view, without building the index.
func (a *ArrayView[T]) At1(i int) T { return a.buf.hostData()[a.pos1(i)] }

// Set1 is Set(Index1(i), x) for a rank-1 view.
func (a *ArrayView[T]) Set1(i int, x T) { a.buf.hostDataForWrite()[a.pos1(i)] = x }

// At2 is At(Index2(i, j)) for a rank-2 view, without building the index.
func (a *ArrayView[T]) At2(i, j int) T { return a.buf.hostData()[a.pos2(i, j)] }

// Set2 is Set(Index2(i, j), x) for a rank-2 view.
func (a *ArrayView[T]) Set2(i, j int, x T) { a.buf.hostDataForWrite()[a.pos2(i, j)] = x }

func (a *ArrayView[T]) pos(idx Index) int {
	if !a.ext.Contains(idx) {
		panic(fmt.Sprintf("amp: index %v outside array view of extent %v", idx, a.ext))
	}
	p := a.offset
	for d := 0; d < idx.rank; d++ {
		p += idx.v[d] * a.stride[d]
	}
	return p
}

func (a *ArrayView[T]) pos1(i int) int {
	if a.ext.rank != 1 || uint(i) >= uint(a.ext.n[0]) {
		panic(fmt.Sprintf("amp: index (%d) outside array view of extent %v", i, a.ext))
	}
	return a.offset + i*a.stride[0]
}

func (a *ArrayView[T]) pos2(i, j int) int {
	if a.ext.rank != 2 || uint(i) >= uint(a.ext.n[0]) || uint(j) >= uint(a.ext.n[1]) {
		panic(fmt.Sprintf("amp: index (%d, %d) outside array view of extent %v", i, j, a.ext))
	}
	return a.offset + i*a.stride[0] + j*a.stride[1]
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
		if origin.v[d] < 0 || origin.v[d]+ext.n[d] > a.ext.n[d] {
			return nil, fmt.Errorf("%w: section %v at %v does not fit in %v", ErrOutOfRange, ext, origin, a.ext)
		}
	}
	s := &ArrayView[T]{ext: ext, stride: a.stride, buf: a.buf, offset: a.offset}
	if ext.Size() > 0 {
		s.offset = a.pos(origin)
	}
	return s, nil
}

// CopyTo copies the view's elements into dst in row-major order and returns
// how many it copied: min(len(dst), Extent().Size()).
func (a *ArrayView[T]) CopyTo(dst []T) int {
	n := min(len(dst), a.ext.Size())
	if n == 0 {
		return 0
	}
	host := a.buf.hostData()
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
func (a *ArrayView[T]) DiscardData() { a.buf.discard() }

// buffer is the data a view and its sections share: the host slice and the
// copies accelerators with memory of their own made of it.
type buffer[T Element] struct {
	host []T

	// hostStale is set while a device copy is newer than host; element
	// access tests it so that host reads see the latest data.
	hostStale atomic.Bool
	// copiesValid is set while some device copy matches host; host writes
	// test it so that the next device use uploads again.
	copiesValid atomic.Bool

	// discarded is set by DiscardData until the contents matter again.
	discarded atomic.Bool

	mu     sync.Mutex
	copies map[deviceMemoryOwner]*deviceCopy
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

// deviceMemory is one copy of a buffer in an accelerator's memory.
type deviceMemory interface {
	upload(src unsafe.Pointer, bytes int) error
	download(dst unsafe.Pointer, bytes int) error
	release()
}

// Access says what a kernel does with a view's data.
type Access int

// The ways a kernel may use a view.
const (
	ReadOnly  Access = iota + 1 // reads only: the host copy stays current
	WriteOnly                   // overwrites every element: no upload needed
	ReadWrite                   // reads and writes
)

func (b *buffer[T]) hostData() []T {
	if b.hostStale.Load() {
		b.mustSynchronize()
	}
	return b.host
}

func (b *buffer[T]) hostDataForWrite() []T {
	if b.hostStale.Load() {
		b.mustSynchronize()
	}
	if b.copiesValid.Load() || b.discarded.Load() {
		b.invalidateCopies()
	}
	return b.host
}

func (b *buffer[T]) mustSynchronize() {
	if err := b.synchronize(); err != nil {
		panic(fmt.Sprintf("amp: implicit synchronize of an array view failed: %v", err))
	}
}

func (b *buffer[T]) bytes() int { return len(b.host) * int(unsafe.Sizeof(*new(T))) }

func (b *buffer[T]) hostPtr() unsafe.Pointer {
	if len(b.host) == 0 {
		return nil
	}
	return unsafe.Pointer(&b.host[0])
}

// synchronize downloads the newest device copy into host, if host is stale.
func (b *buffer[T]) synchronize() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.hostStale.Load() {
		return nil
	}
	return b.downloadLocked()
}

func (b *buffer[T]) invalidateCopies() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.copies {
		c.valid = false
	}
	b.copiesValid.Store(false)
	b.discarded.Store(false)
}

func (b *buffer[T]) discard() { b.discarded.Store(true) }

// onDevice returns owner's copy of the buffer, ready for a kernel that uses
// it with the given access: uploaded unless it is current or its contents
// were discarded, and marked as the only current copy if the kernel writes.
func (b *buffer[T]) onDevice(owner deviceMemoryOwner, access Access) (deviceMemory, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.copies[owner]
	if c == nil {
		mem, err := owner.allocate(b.bytes())
		if err != nil {
			return nil, err
		}
		c = &deviceCopy{mem: mem}
		if b.copies == nil {
			b.copies = make(map[deviceMemoryOwner]*deviceCopy)
		}
		b.copies[owner] = c
	}
	if !c.valid && access != WriteOnly && !b.discarded.Load() {
		if b.hostStale.Load() {
			if err := b.downloadLocked(); err != nil {
				return nil, err
			}
		}
		if err := c.mem.upload(b.hostPtr(), b.bytes()); err != nil {
			return nil, fmt.Errorf("amp: upload array view: %w", err)
		}
	}
	c.valid = true
	b.copiesValid.Store(true)
	if access != ReadOnly {
		for _, o := range b.copies {
			o.valid = o == c
		}
		b.hostStale.Store(true)
		b.discarded.Store(false)
	}
	return c.mem, nil
}

func (b *buffer[T]) downloadLocked() error {
	for _, c := range b.copies {
		if c.valid {
			if err := c.mem.download(b.hostPtr(), b.bytes()); err != nil {
				return fmt.Errorf("amp: synchronize array view: %w", err)
			}
			break
		}
	}
	// With no valid copy nothing was written on a device: host is current.
	b.hostStale.Store(false)
	return nil
}

// release frees every device copy, bringing newer data home first.
func (b *buffer[T]) release() error {
	err := b.synchronize()
	b.mu.Lock()
	defer b.mu.Unlock()
	for owner, c := range b.copies {
		c.mem.release()
		delete(b.copies, owner)
	}
	b.copiesValid.Store(false)
	return err
}
