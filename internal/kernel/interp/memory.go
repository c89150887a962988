package interp

import (
	"fmt"
	"sort"
)

// Memory is a kernel's global memory: a flat, little-endian byte space made
// of allocations. It is not safe for concurrent use.
type Memory struct {
	allocs []alloc // by base, ascending
	next   uint64
}

type alloc struct {
	base uint64
	data []byte
}

// firstAddr keeps small integers (an index passed where an address belongs)
// from being valid addresses.
const firstAddr = 1 << 20

// gap separates allocations, so that an access just past the end of one is
// an error rather than a hit in the next.
const gap = 256

// NewMemory returns an empty global memory.
func NewMemory() *Memory { return &Memory{next: firstAddr} }

// Alloc reserves bytes zeroed bytes and returns their address: nonzero,
// 256-byte aligned (as cudaMalloc's are, at least), and never handed out
// again.
func (m *Memory) Alloc(bytes int) uint64 {
	if bytes < 0 {
		panic(fmt.Sprintf("interp: Alloc(%d)", bytes))
	}
	base := m.next
	m.allocs = append(m.allocs, alloc{base: base, data: make([]byte, bytes)})
	m.next = (base + uint64(bytes) + gap + 255) &^ 255
	return base
}

// Bytes returns the n live bytes at addr, for writing a kernel's inputs and
// reading its outputs. It panics unless they lie in one allocation.
func (m *Memory) Bytes(addr uint64, n int) []byte {
	b, ok := m.span(addr, n)
	if !ok {
		panic(fmt.Sprintf("interp: %d bytes at %#x are outside any allocation", n, addr))
	}
	return b
}

// span is Bytes without the panic.
func (m *Memory) span(addr uint64, n int) ([]byte, bool) {
	if n < 0 {
		return nil, false
	}
	i := m.find(addr)
	if i < 0 {
		return nil, false
	}
	a := &m.allocs[i]
	off := addr - a.base
	if off > uint64(len(a.data)) || uint64(n) > uint64(len(a.data))-off {
		return nil, false
	}
	return a.data[off : off+uint64(n) : off+uint64(n)], true
}

// find returns the index of the allocation addr may lie in (the last one
// starting at or below it), or -1.
func (m *Memory) find(addr uint64) int {
	return sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].base > addr }) - 1
}
