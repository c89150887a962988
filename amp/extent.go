package amp

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxRank is the highest rank an Extent or Index may have.
const MaxRank = 3

// Index is a point in a rank 1 to 3 space: the C++ AMP index<N>. Component 0
// is the slowest-varying (the row of a matrix), as in C++ AMP.
type Index struct {
	rank int
	v    [MaxRank]int
}

// Index1 returns the rank-1 index (i0).
func Index1(i0 int) Index { return Index{rank: 1, v: [MaxRank]int{i0}} }

// Index2 returns the rank-2 index (i0, i1): row i0, column i1.
func Index2(i0, i1 int) Index { return Index{rank: 2, v: [MaxRank]int{i0, i1}} }

// Index3 returns the rank-3 index (i0, i1, i2).
func Index3(i0, i1, i2 int) Index { return Index{rank: 3, v: [MaxRank]int{i0, i1, i2}} }

// Rank is the number of components of i.
func (i Index) Rank() int { return i.rank }

// At returns component d of i. It panics if d is not below i.Rank(), like
// indexing a Go array out of range.
func (i Index) At(d int) int {
	if d < 0 || d >= i.rank {
		panic(fmt.Sprintf("amp: component %d of a rank-%d index", d, i.rank))
	}
	return i.v[d]
}

// Add returns the component-wise sum of i and o, which must have the same rank.
func (i Index) Add(o Index) Index {
	if i.rank != o.rank {
		panic(fmt.Sprintf("amp: adding a rank-%d index to a rank-%d index", o.rank, i.rank))
	}
	for d := 0; d < i.rank; d++ {
		i.v[d] += o.v[d]
	}
	return i
}

// String formats i as "(i0, i1)".
func (i Index) String() string { return formatTuple(i.v[:i.rank]) }

// Extent is the shape of a rank 1 to 3 compute domain or array: the C++ AMP
// extent<N>. Its zero value has rank 0 and is invalid everywhere.
type Extent struct {
	rank int
	n    [MaxRank]int
}

// Extent1 returns the rank-1 extent of n0 elements.
func Extent1(n0 int) Extent { return Extent{rank: 1, n: [MaxRank]int{n0}} }

// Extent2 returns the rank-2 extent of n0 rows and n1 columns.
func Extent2(n0, n1 int) Extent { return Extent{rank: 2, n: [MaxRank]int{n0, n1}} }

// Extent3 returns the rank-3 extent n0 x n1 x n2.
func Extent3(n0, n1, n2 int) Extent { return Extent{rank: 3, n: [MaxRank]int{n0, n1, n2}} }

// NewExtent returns the extent with the given dimensions, or an error wrapping
// ErrInvalidExtent when there are not 1 to 3 of them or one is negative.
func NewExtent(dims ...int) (Extent, error) {
	if len(dims) < 1 || len(dims) > MaxRank {
		return Extent{}, fmt.Errorf("%w: rank %d, want 1 to %d", ErrInvalidExtent, len(dims), MaxRank)
	}
	e := Extent{rank: len(dims)}
	copy(e.n[:], dims)
	return e, e.Validate()
}

// Rank is the number of dimensions of e.
func (e Extent) Rank() int { return e.rank }

// At returns dimension d of e. It panics if d is not below e.Rank().
func (e Extent) At(d int) int {
	if d < 0 || d >= e.rank {
		panic(fmt.Sprintf("amp: dimension %d of a rank-%d extent", d, e.rank))
	}
	return e.n[d]
}

// Dims returns a copy of the dimensions of e.
func (e Extent) Dims() []int { return append([]int(nil), e.n[:e.rank]...) }

// Size is the number of points in e: the product of its dimensions.
func (e Extent) Size() int {
	if e.rank == 0 {
		return 0
	}
	s := 1
	for d := 0; d < e.rank; d++ {
		s *= e.n[d]
	}
	return s
}

// Contains reports whether idx has e's rank and lies inside e.
func (e Extent) Contains(idx Index) bool {
	if idx.rank != e.rank {
		return false
	}
	for d := 0; d < e.rank; d++ {
		if idx.v[d] < 0 || idx.v[d] >= e.n[d] {
			return false
		}
	}
	return true
}

// Validate returns an error wrapping ErrInvalidExtent unless e has rank 1 to
// 3, no negative dimension, and a size that fits in an int.
func (e Extent) Validate() error {
	if e.rank < 1 || e.rank > MaxRank {
		return fmt.Errorf("%w: rank %d, want 1 to %d", ErrInvalidExtent, e.rank, MaxRank)
	}
	size := 1
	for d := 0; d < e.rank; d++ {
		n := e.n[d]
		if n < 0 {
			return fmt.Errorf("%w: %v has a negative dimension", ErrInvalidExtent, e)
		}
		if n != 0 && size > (1<<62)/n {
			return fmt.Errorf("%w: %v has too many points", ErrInvalidExtent, e)
		}
		size *= n
	}
	return nil
}

// String formats e as "[n0 x n1]".
func (e Extent) String() string {
	parts := make([]string, e.rank)
	for d := range parts {
		parts[d] = strconv.Itoa(e.n[d])
	}
	return "[" + strings.Join(parts, " x ") + "]"
}

// indexAt returns the index of e whose row-major linear position is lin.
func (e Extent) indexAt(lin int) Index {
	idx := Index{rank: e.rank}
	for d := e.rank - 1; d >= 0; d-- {
		idx.v[d] = lin % e.n[d]
		lin /= e.n[d]
	}
	return idx
}

func formatTuple(v []int) string {
	parts := make([]string, len(v))
	for d, x := range v {
		parts[d] = strconv.Itoa(x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
