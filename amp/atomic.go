package amp

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// Atomic operations: C++ AMP's atomic_fetch_add, atomic_fetch_min,
// atomic_fetch_max, atomic_exchange and atomic_compare_exchange. Each reads,
// changes and writes one element as a single step that no other thread's
// access to that element can split, on the CPU (with sync/atomic) and in a
// kernel compiled for a GPU (with the GPU's atom instructions). Each
// returns the element's value from before.
//
// The methods of ArrayView act on an element of a view; the functions act
// on an element of TileStatic memory, or a local variable, through a
// pointer (amp.AtomicAdd(&hist[i], 1)). On the CPU a tile's threads take
// turns, so TileStatic elements need no atomics there; on a GPU they do.
//
// Min and max are for integer elements: a GPU has no float atomic min or
// max (goampgen refuses them in kernels; on the CPU they work).

// AtomicAdd adds x to the element at idx and returns its old value. It
// panics if idx is outside the view, like Set.
func (a *ArrayView[T]) AtomicAdd(idx Index, x T) T {
	return atomicAdd(&a.hostDataForWrite()[a.pos(idx)], x)
}

// AtomicMin sets the element at idx to the lesser of it and x and returns
// its old value.
func (a *ArrayView[T]) AtomicMin(idx Index, x T) T {
	return atomicUpdate(&a.hostDataForWrite()[a.pos(idx)], func(old T) T { return min(old, x) })
}

// AtomicMax sets the element at idx to the greater of it and x and returns
// its old value.
func (a *ArrayView[T]) AtomicMax(idx Index, x T) T {
	return atomicUpdate(&a.hostDataForWrite()[a.pos(idx)], func(old T) T { return max(old, x) })
}

// AtomicExchange stores x in the element at idx and returns its old value.
func (a *ArrayView[T]) AtomicExchange(idx Index, x T) T {
	return atomicUpdate(&a.hostDataForWrite()[a.pos(idx)], func(T) T { return x })
}

// AtomicCompareExchange stores x in the element at idx if it equals
// expected (bit for bit, for floats) and returns its old value: the
// exchange happened if that equals expected.
func (a *ArrayView[T]) AtomicCompareExchange(idx Index, expected, x T) T {
	return atomicCAS(&a.hostDataForWrite()[a.pos(idx)], expected, x)
}

// AtomicAdd adds x to *p and returns the old value.
func AtomicAdd[T Element](p *T, x T) T { return atomicAdd(p, x) }

// AtomicMin sets *p to the lesser of it and x and returns the old value.
func AtomicMin[T Element](p *T, x T) T {
	return atomicUpdate(p, func(old T) T { return min(old, x) })
}

// AtomicMax sets *p to the greater of it and x and returns the old value.
func AtomicMax[T Element](p *T, x T) T {
	return atomicUpdate(p, func(old T) T { return max(old, x) })
}

// AtomicExchange stores x in *p and returns the old value.
func AtomicExchange[T Element](p *T, x T) T { return atomicUpdate(p, func(T) T { return x }) }

// AtomicCompareExchange stores x in *p if *p equals expected and returns
// the old value.
func AtomicCompareExchange[T Element](p *T, expected, x T) T { return atomicCAS(p, expected, x) }

func atomicAdd[T Element](p *T, x T) T {
	if q, ok := any(p).(*int32); ok {
		return T(atomic.AddInt32(q, int32(x)) - int32(x))
	}
	return atomicUpdate(p, func(old T) T { return old + x })
}

// atomicUpdate applies f to *p as one step: a compare-and-swap loop on the
// element's bits.
func atomicUpdate[T Element](p *T, f func(T) T) T {
	switch q := any(p).(type) {
	case *int32:
		for {
			old := atomic.LoadInt32(q)
			if atomic.CompareAndSwapInt32(q, old, int32(f(T(old)))) {
				return T(old)
			}
		}
	case *float32:
		u := (*uint32)(unsafe.Pointer(q))
		for {
			bits := atomic.LoadUint32(u)
			old := math.Float32frombits(bits)
			if atomic.CompareAndSwapUint32(u, bits, math.Float32bits(float32(f(T(old))))) {
				return T(old)
			}
		}
	case *float64:
		u := (*uint64)(unsafe.Pointer(q))
		for {
			bits := atomic.LoadUint64(u)
			old := math.Float64frombits(bits)
			if atomic.CompareAndSwapUint64(u, bits, math.Float64bits(float64(f(T(old))))) {
				return T(old)
			}
		}
	}
	panic("amp: atomic on an unknown element type")
}

func atomicCAS[T Element](p *T, expected, x T) T {
	switch q := any(p).(type) {
	case *int32:
		for {
			old := atomic.LoadInt32(q)
			if old != int32(expected) || atomic.CompareAndSwapInt32(q, old, int32(x)) {
				return T(old)
			}
		}
	case *float32:
		u := (*uint32)(unsafe.Pointer(q))
		want := math.Float32bits(float32(expected))
		for {
			bits := atomic.LoadUint32(u)
			if bits != want || atomic.CompareAndSwapUint32(u, bits, math.Float32bits(float32(x))) {
				return T(math.Float32frombits(bits))
			}
		}
	case *float64:
		u := (*uint64)(unsafe.Pointer(q))
		want := math.Float64bits(float64(expected))
		for {
			bits := atomic.LoadUint64(u)
			if bits != want || atomic.CompareAndSwapUint64(u, bits, math.Float64bits(float64(x))) {
				return T(math.Float64frombits(bits))
			}
		}
	}
	panic("amp: atomic on an unknown element type")
}
