package gemm

import "unsafe"

// KernelFunc sets the MR x NR block of C at c (row stride ldc elements) to
// alpha*A*B + beta*C, where a points at a packed MR x k panel of A (column
// after column) and b at a packed k x NR panel of B (row after row). It does
// not read C when beta is 0.
type KernelFunc[T Element] func(k int, a, b, c *T, ldc int, alpha, beta T)

// StridedFunc is KernelFunc with B read where it lies: row p of the k x NR
// panel at b + p*ldb elements, not packed.
type StridedFunc[T Element] func(k int, a, b, c *T, ldb, ldc int, alpha, beta T)

// InPlaceFunc is StridedFunc with A read where it lies too: row r of the
// MR x k block at a + r*lda elements, not packed.
type InPlaceFunc[T Element] func(k int, a, b, c *T, lda, ldb, ldc int, alpha, beta T)

// MicroKernel is a register-blocked micro-kernel and its block shape.
type MicroKernel[T Element] struct {
	Name   string
	MR, NR int
	Func   KernelFunc[T]
	// Strided, if not nil, is Func's twin on an unpacked B, for products
	// of a few rows (see problem.directB).
	Strided StridedFunc[T]
	// InPlace, if not nil, is Strided's twin on an unpacked A as well, for
	// small products (see problem.inPlaceA).
	InPlace InPlaceFunc[T]
	// InPlaceT, if not nil, is InPlace for a transposed A: k step p of the
	// MR x k block of op(A) is the MR adjacent elements at a + p*lda.
	InPlaceT InPlaceFunc[T]
	// Edges are the kernel's narrow twins, widest first: a block's last
	// panel of B with fewer than NR columns runs through one or two of them
	// (see edgeSplit) instead of the whole kernel, which would compute NR
	// columns; they read it packed and padded with zeros to NR columns, or
	// where it lies when they cover its columns exactly.
	Edges []EdgeKernel[T]
	// Column and Dot, if not nil, compute the columns that the widest edge
	// kernel leaves (fewer than its Cols), four at a time, without reading
	// or computing a column past them: Column from A's k steps lying
	// together (a packed panel, or A transposed where it lies), Dot from
	// A's rows where they lie, with op(B)'s columns lying along k.
	Column ColumnFunc[T]
	Dot    DotFunc[T]
	// Columns8, if its kernels are not nil, is Column on blocks of eight
	// columns exactly and of at most one ([0]) or two ([1]) vectors of
	// rows (float32 16 or 32, float64 8 or 16): eight broadcasts of B's
	// elements a k step, each into one or two vectors of A's rows, as
	// many multiply-adds a load as the micro-kernels do. It serves
	// products with both operands transposed (see columnsOnly).
	Columns8 [2]Columns8Func[T]
	// Masked, if not nil, is the widest edge kernel (Edges[0]) for fewer
	// columns than it holds: it reads and writes no column past them.
	Masked *MaskedEdge[T]
	// Row, if not nil, computes a block's last rows, fewer than MR, four
	// at a time and up to rowColumns columns a call, reading and computing
	// nothing past them.
	Row RowFunc[T]
	// GatherColumns, if not nil, copies the columns of an untransposed B
	// that Dot reads, transposed: dst[j*ldd+p] = src[p*lds+j] for p < rows
	// and j < cols.
	GatherColumns func(dst *T, ldd int, src *T, lds int, rows, cols int)
}

// ColumnFunc sets the rows x cols block of C at c (rows <= 16, cols <= 4;
// row stride ldc) to alpha*A*B + beta*C, where A's k step p is the rows
// adjacent elements at a + p*lda and B's element (p, j) lies at b + p*ldbk
// + j*ldbj. It reads nothing outside those rows, columns and k steps, and C
// not at all when beta is 0.
type ColumnFunc[T Element] func(k int, a, b, c *T, lda, ldbk, ldbj, ldc, rows, cols int, alpha, beta T)

// Columns8Func is ColumnFunc for a block of eight columns (cols is 8).
type Columns8Func[T Element] func(k int, a, b, c *T, lda, ldbk, ldbj, ldc, rows int, alpha, beta T)

// DotFunc is ColumnFunc for rows, cols <= 4 with row r of A the k adjacent
// elements at a + r*lda and column j of op(B) the k adjacent elements at
// b + j*ldb: each element of C a dot product.
type DotFunc[T Element] func(k int, a, b, c *T, lda, ldb, ldc, rows, cols int, alpha, beta T)

// MaskedEdge is an EdgeKernel that takes a column count: its kernels read
// and write the first cols columns (cols <= Cols) of B and C only.
type MaskedEdge[T Element] struct {
	Cols              int
	Strided           func(k int, a, b, c *T, ldb, ldc, cols int, alpha, beta T)
	InPlace, InPlaceT func(k int, a, b, c *T, lda, ldb, ldc, cols int, alpha, beta T)
}

// RowFunc sets the rows x cols block of C at c (rows <= 4, cols <=
// rowColumns; row stride ldc) to alpha*A*B + beta*C, where A's element
// (r, p) lies at a + r*ldar + p*ldap and B's k step p is the cols adjacent
// elements at b + p*ldb. It reads nothing outside those rows, columns and k
// steps, and C not at all when beta is 0.
type RowFunc[T Element] func(k int, a, b, c *T, ldar, ldap, ldb, ldc, rows, cols int, alpha, beta T)

// rowColumns is how many columns a RowFunc computes at most.
const rowColumns = 16

// columnRows is how many rows a ColumnFunc computes at most.
const columnRows = 16

// fewColumns is how many columns a ColumnFunc or DotFunc computes at most,
// and how many rows a DotFunc does.
const fewColumns = 4

// EdgeKernel is Strided, InPlace and InPlaceT on MR x Cols blocks (Cols
// dividing NR): one vector a row where the whole kernel holds several.
type EdgeKernel[T Element] struct {
	Cols              int
	Strided           StridedFunc[T]
	InPlace, InPlaceT InPlaceFunc[T]
}

// edgeSplit returns the edge kernels that cover a last panel of cols
// columns (0 < cols < NR), left to right: the narrowest one as wide as
// cols, else the widest and then the narrowest that covers the rest, when
// the two together are narrower than NR. first is nil when the whole
// kernel should run, second when one edge kernel is enough.
func (k *MicroKernel[T]) edgeSplit(cols int) (first, second *EdgeKernel[T]) {
	if e := k.narrowestOf(cols); e != nil {
		return e, nil
	}
	if len(k.Edges) == 0 {
		return nil, nil
	}
	w := &k.Edges[0]
	if e := k.narrowestOf(cols - w.Cols); e != nil && w.Cols+e.Cols < k.NR {
		return w, e
	}
	return nil, nil
}

// cols returns e's columns, 0 for no kernel.
func (e *EdgeKernel[T]) cols() int {
	if e == nil {
		return 0
	}
	return e.Cols
}

// narrowestOf returns the narrowest edge kernel of at least cols columns,
// or nil.
func (k *MicroKernel[T]) narrowestOf(cols int) *EdgeKernel[T] {
	var best *EdgeKernel[T]
	for i := range k.Edges {
		if e := &k.Edges[i]; e.Cols >= cols && (best == nil || e.Cols < best.Cols) {
			best = e
		}
	}
	return best
}

// portable returns the pure-Go micro-kernel of an mr x nr block: the engine
// on machines without the assembly ones, and (in tests) the twin that each
// assembly kernel is checked against on the same packed panels.
func portable[T Element](name string, mr, nr int) MicroKernel[T] {
	return MicroKernel[T]{Name: name, MR: mr, NR: nr, Func: portableKernel[T](mr, nr)}
}

// portableKernel returns a pure-Go KernelFunc for an mr x nr block (mr even,
// nr a multiple of 4). Go does not vectorise, so the block is done as 2x4
// sub-blocks whose eight accumulators, two A values and four B values all fit
// in registers; each sub-block makes its own pass over the panels, which sit
// in L1.
func portableKernel[T Element](mr, nr int) KernelFunc[T] {
	if mr%2 != 0 || nr%4 != 0 {
		panic("gemm: portable micro-kernel shape must be even x multiple of 4")
	}
	return func(k int, a, b, c *T, ldc int, alpha, beta T) {
		ap := unsafe.Slice(a, k*mr)
		bp := unsafe.Slice(b, k*nr)
		cs := unsafe.Slice(c, (mr-1)*ldc+nr)
		for i := 0; i < mr; i += 2 {
			for j := 0; j < nr; j += 4 {
				var c00, c01, c02, c03, c10, c11, c12, c13 T
				for p := range k {
					y := bp[p*nr+j : p*nr+j+4]
					a0, a1 := ap[p*mr+i], ap[p*mr+i+1]
					b0, b1, b2, b3 := y[0], y[1], y[2], y[3]
					c00 += a0 * b0
					c01 += a0 * b1
					c02 += a0 * b2
					c03 += a0 * b3
					c10 += a1 * b0
					c11 += a1 * b1
					c12 += a1 * b2
					c13 += a1 * b3
				}
				update(cs[i*ldc+j:i*ldc+j+4], alpha, beta, c00, c01, c02, c03)
				update(cs[(i+1)*ldc+j:(i+1)*ldc+j+4], alpha, beta, c10, c11, c12, c13)
			}
		}
	}
}

// update sets the four elements of d to alpha*x + beta*d, without reading d
// when beta is 0.
func update[T Element](d []T, alpha, beta, x0, x1, x2, x3 T) {
	d = d[:4]
	if beta == 0 {
		d[0], d[1], d[2], d[3] = alpha*x0, alpha*x1, alpha*x2, alpha*x3
		return
	}
	d[0] = alpha*x0 + beta*d[0]
	d[1] = alpha*x1 + beta*d[1]
	d[2] = alpha*x2 + beta*d[2]
	d[3] = alpha*x3 + beta*d[3]
}
