package frontend

import (
	"go/types"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// A value is what an SSA value of the kernel compiles to: a scalar
// (*ir.Value) or one of the shapes below, which exist only at compile time.
type value any

// aggVal is a struct or array held by value: its fields or elements.
type aggVal struct{ f []value }

// indexVal is an amp.Index of a rank known at compile time.
type indexVal struct {
	rank int
	c    [ir.MaxRank]*ir.Value // I64 components
}

// extentVal is an amp.Extent of a rank known at compile time.
type extentVal struct {
	rank int
	n    [ir.MaxRank]*ir.Value // I64 dimensions
	// view is the rank parameter (U32) of a view's extent, whose rank is
	// known only when the kernel runs (rank is then MaxRank, n 1 past it).
	view *ir.Value
	arg  *Arg // the view's kernel argument, for MinRank
}

// viewVal is a kernel argument of type *amp.ArrayView[T]: its parameters.
type viewVal struct {
	arg  int // position among the kernel's arguments after the index, from 0
	elem ir.Type
	base *ir.Value                 // U64 address of the first element
	rank *ir.Value                 // U32
	n    [ir.MaxRank]*ir.Value     // I64 extent, 0 beyond the rank
	s    [ir.MaxRank - 1]*ir.Value // I64 strides of dimensions 0 and 1 when not last
}

// staticVal is a slice returned by amp.TileStatic: a shared-memory array.
type staticVal struct {
	arr  int // index into ir.Func.Shared
	elem ir.Type
	n    int64
	call int // which TileStatic call of the kernel, from 1
}

// ptrVal is the address of a value in shared or local memory.
type ptrVal struct {
	space ir.Space
	addr  *ir.Value
	shape layoutShape // what it points to
}

// tiledVal is the kernel's amp.TiledIndex.
type tiledVal struct {
	global, local, tile, origin *indexVal
	ext                         *extentVal
}

// barrierVal is the TiledIndex's Barrier.
type barrierVal struct{}

// layoutShape describes a value stored in memory: a scalar of elem at
// offset 0, or a struct's fields or an array's elements at their offsets.
type layoutShape struct {
	elem   ir.Type // a scalar; Void for an aggregate
	isBool bool    // a bool, stored as a u32
	size   int
	align  int
	fields []layoutField // struct fields, or one entry repeated for arrays
	count  int           // array length (fields has one entry), 0 for structs
}

type layoutField struct {
	off   int
	shape layoutShape
}

// leaves flattens v into its scalar parts, in order.
func leaves(v value) []*ir.Value {
	switch v := v.(type) {
	case *ir.Value:
		return []*ir.Value{v}
	case *aggVal:
		var out []*ir.Value
		for _, f := range v.f {
			out = append(out, leaves(f)...)
		}
		return out
	case *indexVal:
		return append([]*ir.Value(nil), v.c[:v.rank]...)
	case *extentVal:
		return append([]*ir.Value(nil), v.n[:v.rank]...)
	}
	return nil
}

// rebuild makes a value of template's shape from scalar parts, returning
// the parts not used.
func rebuild(template value, parts []*ir.Value) (value, []*ir.Value) {
	switch t := template.(type) {
	case *ir.Value:
		return parts[0], parts[1:]
	case *aggVal:
		out := &aggVal{f: make([]value, len(t.f))}
		for i, f := range t.f {
			out.f[i], parts = rebuild(f, parts)
		}
		return out, parts
	case *indexVal:
		out := &indexVal{rank: t.rank}
		copy(out.c[:t.rank], parts)
		return out, parts[t.rank:]
	case *extentVal:
		out := &extentVal{rank: t.rank}
		copy(out.n[:t.rank], parts)
		return out, parts[t.rank:]
	}
	return template, parts
}

// sameShape reports whether a and b flatten alike (and so can meet at a phi).
func sameShape(a, b value) bool {
	switch a := a.(type) {
	case *ir.Value:
		b, ok := b.(*ir.Value)
		return ok && a.Type == b.Type
	case *aggVal:
		b, ok := b.(*aggVal)
		if !ok || len(a.f) != len(b.f) {
			return false
		}
		for i := range a.f {
			if !sameShape(a.f[i], b.f[i]) {
				return false
			}
		}
		return true
	case *indexVal:
		b, ok := b.(*indexVal)
		return ok && a.rank == b.rank
	case *extentVal:
		b, ok := b.(*extentVal)
		return ok && a.rank == b.rank
	}
	return a == b
}

// isScalarish reports whether v is made of scalars only (can be a phi).
func isScalarish(v value) bool {
	switch v := v.(type) {
	case *ir.Value, *indexVal, *extentVal:
		return true
	case *aggVal:
		for _, f := range v.f {
			if !isScalarish(f) {
				return false
			}
		}
		return true
	}
	return false
}

// cellVal is a variable of one of amp's types (a TiledIndex, an Index)
// that go/ssa keeps in memory because a field of it is addressed (a method
// call on t.Local, say). It holds the one value stored into it.
type cellVal struct {
	v      value
	stored bool
}

// fieldCellVal is the address of field i of a cellVal's value.
type fieldCellVal struct {
	cell *cellVal
	t    types.Type // the cell's type
	i    int
}
