package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The kernels in this file compute a block of C of at most four columns,
// the last columns of a product whose N is not a multiple of the main
// kernels' NR. The main kernels' narrow twins (one vector a row) compute
// 8 or 16 columns there and are bound by their loads: MR broadcasts of A
// and one row of B for MR multiply-adds of a short vector. These put the
// vectors along the other dimension instead, where there are more
// elements than columns, and mask what lies past the block, so that they
// neither compute nor read a column that is not there:
//
//   - columnKernel: vectors along C's column (A's rows of a k step, which
//     lie together in a packed panel or in a transposed A), each B element
//     broadcast into the multiply-add;
//   - dotKernel: vectors along k (A's rows where they lie, and op(B)'s
//     columns lying along k), each element of C a dot product, the sums
//     folded together at the end.
//
// Both write C through 128- or 256-bit pieces, a row at a time, masked to
// the block's columns.

// columnKernel generates a kernel for a rows x cols block of C (rows <= 16,
// cols <= 4): A's k step p is rows adjacent elements at a + p*lda, B's
// element (p, j) lies at b + p*ldbk + j*ldbj. Each k step loads A's rows
// as one vector (two for float64) and does one multiply-add a column with
// B's element broadcast from memory; four sets of accumulators, one a k
// step of the unrolled loop, keep enough multiply-adds in flight.
func columnKernel(name string, e element) {
	TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, lda, ldbk, ldbj, ldc, rows, cols int, alpha, beta %s)", e.goName, e.goName))
	Doc(fmt.Sprintf("%s (AVX-512) sets the rows x cols block of C at c (row stride ldc", name),
		"elements; rows <= 16, cols <= 4) to alpha*A*B + beta*C, where A's k step p",
		"is the rows adjacent elements at a + p*lda and B's element (p, j) lies at",
		"b + p*ldbk + j*ldbj. It reads nothing past the block's rows and columns,",
		"and C not at all when beta is 0. It needs AVX-512F and BMI2.")
	fewKernel(name, e, fewOperands{"a", "lda", "b", "ldbk", "ldbj", "rows", "cols"}, false)
}

// rowKernel generates columnKernel's transpose, for a rows x cols block of
// C with rows <= 4 and cols <= 16: B's k step p is cols adjacent elements
// (a piece of a row of B) at b + p*ldb, A's element (r, p) lies at a +
// r*ldar + p*ldap, and each accumulator is a piece of a row of C. It serves
// the last rows of a product, fewer than MR, where the micro-kernels would
// compute MR.
func rowKernel(name string, e element) {
	TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, ldar, ldap, ldb, ldc, rows, cols int, alpha, beta %s)", e.goName, e.goName))
	Doc(fmt.Sprintf("%s (AVX-512) sets the rows x cols block of C at c (row stride ldc", name),
		"elements; rows <= 4, cols <= 16) to alpha*A*B + beta*C, where A's element",
		"(r, p) lies at a + r*ldar + p*ldap and B's k step p is the cols adjacent",
		"elements at b + p*ldb. It reads nothing past the block's rows and columns,",
		"and C not at all when beta is 0. It needs AVX-512F and BMI2.")
	fewKernel(name, e, fewOperands{"b", "ldb", "a", "ldap", "ldar", "cols", "rows"}, true)
}

// fewOperands names the parameters of a column or row kernel: the operand
// loaded as vectors (vec, its k steps vecLd apart), the one broadcast
// (scalar, element (p, i) at p*scalarStep + i*scalarLd), and how many
// lanes and broadcasts count.
type fewOperands struct {
	vec, vecLd                   string
	scalar, scalarStep, scalarLd string
	vecCount, scalarCount        string
}

// fewKernel writes the body of columnKernel (rowsOut false: the vectors
// are columns of C) or rowKernel (true: rows of C).
func fewKernel(name string, e element, op fewOperands, rowsOut bool) {
	lanes := 64 / e.size
	nv := 16 / lanes // vectors an accumulator: 1 (float32) or 2 (float64)
	sets := 4 / nv   // accumulator sets: 16 accumulators in all
	const cols = 4

	k := Load(Param("k"), GP64())
	a := Load(Param(op.vec), GP64())
	b := Load(Param(op.scalar), GP64())
	lda := Load(Param(op.vecLd), GP64())
	SHLQ(U8(log2(e.size)), lda)
	ldbk := Load(Param(op.scalarStep), GP64())
	SHLQ(U8(log2(e.size)), ldbk)
	ldbj := Load(Param(op.scalarLd), GP64())
	SHLQ(U8(log2(e.size)), ldbj)
	rows := Load(Param(op.vecCount), GP64())
	ncols := Load(Param(op.scalarCount), GP64())

	Comment("Masks of the vectors' lanes: K1 the first vector's, K2 the second's.")
	rowMasks(rows, lanes, nv)

	Comment("A pointer to each broadcast operand; one past its count points at the",
		"first, so that the loop reads nothing outside it (its sums are not stored).")
	bcol := []Register{b}
	for j := 1; j < cols; j++ {
		p := GP64()
		MOVQ(b, p)
		for range j {
			ADDQ(ldbj, p)
		}
		CMPQ(ncols, U8(j))
		CMOVQLE(b, p)
		bcol = append(bcol, p)
	}
	ldbk3 := GP64()
	LEAQ(Mem{Base: ldbk, Index: ldbk, Scale: 2}, ldbk3)
	lda3 := GP64()
	LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)

	acc := zmms(0, sets*nv*cols) // set s, column j, vector v: acc[(s*cols+j)*nv+v]
	av := zmms(16, 4*nv)         // A's vectors of each k step of a trip
	bb := zmms(24, cols)         // float64: B's broadcasts of a k step
	for _, z := range acc {
		VPXORQ(z, z, z)
	}
	at := func(base Register, step int, ld, ld3 Register) Mem {
		m := Mem{Base: base}
		switch step {
		case 1:
			m.Index, m.Scale = ld, 1
		case 2:
			m.Index, m.Scale = ld, 2
		case 3:
			m.Index, m.Scale = ld3, 1
		}
		return m
	}
	step := func(u, set int) {
		for v := range nv {
			m := at(a, u, lda, lda3)
			m.Disp = v * 64
			e.moveZ(m, maskReg(v), av[u*nv+v])
		}
		for j := range cols {
			if nv == 1 {
				e.fmaBcst(at(bcol[j], u, ldbk, ldbk3), av[u], acc[set*cols+j])
				continue
			}
			// Two vectors a column: one broadcast for both.
			e.broadcast(at(bcol[j], u, ldbk, ldbk3), bb[j])
			for v := range nv {
				e.fma(bb[j], av[u*nv+v], acc[(set*cols+j)*nv+v])
			}
		}
	}
	n := GP64()
	MOVQ(k, n)
	SHRQ(U8(2), n)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	for u := range 4 {
		step(u, u%sets)
	}
	LEAQ(Mem{Base: a, Index: lda, Scale: 4}, a)
	for _, p := range bcol {
		LEAQ(Mem{Base: p, Index: ldbk, Scale: 4}, p)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_tail")
	ANDQ(U8(3), k)
	JZ(LabelRef(name + "_sum"))
	Label(name + "_tailloop")
	step(0, 0)
	ADDQ(lda, a)
	for _, p := range bcol {
		ADDQ(ldbk, p)
	}
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_sum")
	Comment("Add the sets into the first and scale by alpha.")
	for s := 1; s < sets; s++ {
		for i := range cols * nv {
			e.add(acc[s*cols*nv+i], acc[i], acc[i])
		}
	}
	sum := acc[:cols*nv] // column j, vector v: sum[j*nv+v]
	alpha := Z31
	e.broadcast(paramAddr("alpha"), alpha)
	for _, z := range sum {
		e.mul(alpha, z, z)
	}
	if rowsOut {
		storeRowVectors(name, e, sum, nv)
		return
	}

	Comment("Column masks of a row's pieces in K3 (and K4, float64's second piece).")
	colMasks(e)

	// Transpose within 128-bit lanes: rowPiece(r, h) returns the register
	// and lane holding piece h of row r (float32: columns 0-3; float64:
	// columns 2h, 2h+1).
	var rowPiece func(r, h int) (VecPhysical, int)
	t := zmms(16, 16)
	if e.size == 4 {
		VUNPCKLPS(sum[1], sum[0], t[0]) // c0 c1 of rows 0, 1 (each lane)
		VUNPCKHPS(sum[1], sum[0], t[1]) // c0 c1 of rows 2, 3
		VUNPCKLPS(sum[3], sum[2], t[2])
		VUNPCKHPS(sum[3], sum[2], t[3])
		VUNPCKLPD(t[2], t[0], t[4]) // row 4L
		VUNPCKHPD(t[2], t[0], t[5]) // row 4L+1
		VUNPCKLPD(t[3], t[1], t[6]) // row 4L+2
		VUNPCKHPD(t[3], t[1], t[7]) // row 4L+3
		rowPiece = func(r, h int) (VecPhysical, int) { return t[4+r%4], r / 4 }
	} else {
		for v := range nv {
			VUNPCKLPD(sum[1*nv+v], sum[0*nv+v], t[4*v+0]) // c0 c1 of row 2L
			VUNPCKHPD(sum[1*nv+v], sum[0*nv+v], t[4*v+1]) // c0 c1 of row 2L+1
			VUNPCKLPD(sum[3*nv+v], sum[2*nv+v], t[4*v+2]) // c2 c3 of row 2L
			VUNPCKHPD(sum[3*nv+v], sum[2*nv+v], t[4*v+3]) // c2 c3 of row 2L+1
		}
		rowPiece = func(r, h int) (VecPhysical, int) {
			v, rr := r/8, r%8
			return t[4*v+2*h+rr%2], rr / 2
		}
	}
	pieces := 1
	if e.size == 8 {
		pieces = 2
	}
	storeRows(name, e, 16, pieces, rowPiece)
}

// dotKernel generates a kernel for a rows x cols block of C (both <= 4):
// row r of A is k adjacent elements at a + r*lda, column j of op(B) k
// adjacent elements at b + j*ldb. Each of the 16 accumulators gathers one
// element of C's dot product along k, a vector of k at a time (the last
// one masked); the 16 vectors are then folded into C's elements.
func dotKernel(name string, e element) {
	TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, lda, ldb, ldc, rows, cols int, alpha, beta %s)", e.goName, e.goName))
	Doc(fmt.Sprintf("%s (AVX-512) sets the rows x cols block of C at c (row stride ldc", name),
		"elements; rows, cols <= 4) to alpha*A*B + beta*C, where row r of A is the k",
		"adjacent elements at a + r*lda and column j of B the k adjacent elements at",
		"b + j*ldb. It reads nothing past the block's rows, columns and k, and C",
		"not at all when beta is 0. It needs AVX-512F and BMI2.")
	lanes := 64 / e.size
	const dim = 4

	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	lda := Load(Param("lda"), GP64())
	SHLQ(U8(log2(e.size)), lda)
	ldb := Load(Param("ldb"), GP64())
	SHLQ(U8(log2(e.size)), ldb)
	rows := Load(Param("rows"), GP64())
	ncols := Load(Param("cols"), GP64())

	Comment("A pointer to each row of A and column of B; one past rows or cols",
		"points at the first, so that the loop reads nothing outside A or B.")
	pointers := func(base, ld, count Register) []Register {
		ps := []Register{base}
		for i := 1; i < dim; i++ {
			p := GP64()
			MOVQ(ps[i-1], p)
			ADDQ(ld, p)
			ps = append(ps, p)
		}
		for i := 1; i < dim; i++ {
			CMPQ(count, U8(i))
			CMOVQLE(base, ps[i])
		}
		return ps
	}
	ar := pointers(a, lda, rows)
	bc := pointers(b, ldb, ncols)

	acc := zmms(0, dim*dim) // row r, column j: acc[r*dim+j]
	av, bv := zmms(16, dim), zmms(20, dim)
	for _, z := range acc {
		VPXORQ(z, z, z)
	}
	off := GP64() // bytes into every row and column
	XORQ(off, off)
	step := func(masked bool) {
		for i := range dim {
			if masked {
				e.moveZ(Mem{Base: ar[i], Index: off, Scale: 1}, K1, av[i])
				e.moveZ(Mem{Base: bc[i], Index: off, Scale: 1}, K1, bv[i])
			} else {
				e.move(Mem{Base: ar[i], Index: off, Scale: 1}, av[i])
				e.move(Mem{Base: bc[i], Index: off, Scale: 1}, bv[i])
			}
		}
		for r := range dim {
			for j := range dim {
				e.fma(bv[j], av[r], acc[r*dim+j])
			}
		}
	}
	n := GP64()
	MOVQ(k, n)
	SHRQ(U8(log2(lanes)), n)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	step(false)
	ADDQ(U8(64), off)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_tail")
	ANDQ(U8(lanes-1), k)
	JZ(LabelRef(name + "_fold"))
	Comment("The last k%lanes elements, masked.")
	ones := GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(k, ones, ones)
	KMOVW(ones.As32(), K1)
	step(true)

	Label(name + "_fold")
	Comment("Fold each accumulator's lanes into one sum, several accumulators at once:",
		"halves, then quarters of pairs (128-bit lane shuffles), then within lanes.")
	var shuf func(...Op)
	var x func(r, j int) VecPhysical
	if e.size == 4 {
		shuf = VSHUFF32X4
	} else {
		shuf = VSHUFF64X2
	}
	x = func(r, j int) VecPhysical { return acc[r*dim+j] }
	// quads lists, for each register of the third stage, the four
	// accumulators whose sums it gathers, one a 128-bit lane.
	var quads [][4]VecPhysical
	if e.size == 4 {
		// P_j holds column j of rows 0-3, lane r: the 4x4 transpose-add
		// below then leaves row r's four columns in lane r.
		for j := range dim {
			quads = append(quads, [4]VecPhysical{x(0, j), x(1, j), x(2, j), x(3, j)})
		}
	} else {
		// Pairs (P0, P1) and (P2, P3) interleave into one register of two
		// rows each, lane L holding columns 2(L%2), 2(L%2)+1 of row
		// 2q + L/2.
		for q := range 2 {
			r0, r1 := 2*q, 2*q+1
			quads = append(quads,
				[4]VecPhysical{x(r0, 0), x(r0, 2), x(r1, 0), x(r1, 2)},
				[4]VecPhysical{x(r0, 1), x(r0, 3), x(r1, 1), x(r1, 3)})
		}
	}
	tmp := zmms(24, 8)
	p := zmms(16, 4)
	for i, q := range quads {
		// Halves: W01 = (X fold 8 | Y fold 8), W23 likewise.
		w := [2]VecPhysical{tmp[0], tmp[2]}
		for h := range 2 {
			shuf(U8(0x44), q[2*h+1], q[2*h], tmp[4])
			shuf(U8(0xEE), q[2*h+1], q[2*h], tmp[5])
			e.add(tmp[5], tmp[4], w[h])
		}
		// Quarters: P = (X | Y | Z | Q), each folded to one lane.
		shuf(U8(0x88), w[1], w[0], tmp[4])
		shuf(U8(0xDD), w[1], w[0], tmp[5])
		e.add(tmp[5], tmp[4], p[i])
	}
	var out []VecPhysical
	if e.size == 4 {
		VUNPCKLPS(p[1], p[0], tmp[0])
		VUNPCKHPS(p[1], p[0], tmp[1])
		e.add(tmp[1], tmp[0], tmp[0]) // P0, P1 half-summed, interleaved
		VUNPCKLPS(p[3], p[2], tmp[2])
		VUNPCKHPS(p[3], p[2], tmp[3])
		e.add(tmp[3], tmp[2], tmp[2])
		VUNPCKLPD(tmp[2], tmp[0], tmp[4])
		VUNPCKHPD(tmp[2], tmp[0], tmp[5])
		e.add(tmp[5], tmp[4], acc[0]) // lane r: row r, columns 0-3
		out = acc[:1]
	} else {
		for q := range 2 {
			VUNPCKLPD(p[2*q+1], p[2*q], tmp[0])
			VUNPCKHPD(p[2*q+1], p[2*q], tmp[1])
			e.add(tmp[1], tmp[0], acc[q]) // half h: row 2q+h, columns 0-3
		}
		out = acc[:2]
	}
	alpha := Z31
	e.broadcast(paramAddr("alpha"), alpha)
	for _, z := range out {
		e.mul(alpha, z, z)
	}
	colMasks(e)
	var rowPiece func(r, h int) (VecPhysical, int)
	if e.size == 4 {
		rowPiece = func(r, h int) (VecPhysical, int) { return out[0], r }
	} else {
		// Row r is 128-bit lanes 2(r%2)+h of out[r/2].
		rowPiece = func(r, h int) (VecPhysical, int) { return out[r/2], 2*(r%2) + h }
	}
	pieces := 1
	if e.size == 8 {
		pieces = 2
	}
	storeRows(name, e, dim, pieces, rowPiece)
}

// storeRowVectors writes the row kernel's sums: accumulator r (nv
// vectors) is row r of the block, its lanes masked by K1 and K2; rows past
// the parameter rows are not written.
func storeRowVectors(name string, e element, sum []VecPhysical, nv int) {
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(log2(e.size)), ldc)
	rows := Load(Param("rows"), GP64())
	jumpUnlessBetaZero(name, e)
	for _, withBeta := range []bool{false, true} {
		if withBeta {
			Label(name + "_withbeta")
			e.broadcast(paramAddr("beta"), Z30)
		}
		for r := range 4 {
			for v := range nv {
				dst := Mem{Base: c, Disp: 64 * v}
				if withBeta {
					e.moveZ(dst, maskReg(v), Z29)
					e.fma(Z29, Z30, sum[r*nv+v])
				}
				e.move(sum[r*nv+v], maskReg(v), dst)
			}
			if r < 3 {
				CMPQ(rows, U8(r+1))
				JLE(LabelRef(name + "_done"))
				ADDQ(ldc, c)
			}
		}
		if !withBeta {
			JMP(LabelRef(name + "_done"))
		}
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// rowMasks sets K1 (and K2 when nv is 2) to the lanes of rows rows: the
// first vector's min(rows, lanes), the second's the rest.
func rowMasks(rows Register, lanes, nv int) {
	ones, m := GP64(), GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(rows, ones, m)
	KMOVW(m.As32(), K1)
	if nv == 2 {
		SHRQ(U8(lanes), m)
		KMOVW(m.As32(), K2)
	}
}

// colMasks sets K3 to the columns of a row's first 128-bit piece (float32:
// cols of 4; float64: min(cols, 2) of 2) and, for float64, K4 to the
// second piece's.
func colMasks(e element) {
	cols := Load(Param("cols"), GP64())
	ones, m := GP64(), GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(cols, ones, m)
	KMOVW(m.As32(), K3)
	if e.size == 8 {
		SHRQ(U8(2), m)
		KMOVW(m.As32(), K4)
	}
}

// storeRows writes rows rows (at most maxRows, the parameter "rows") of C
// from the pieces rowPiece names (register and 128-bit lane), pieces 128-bit
// pieces a row, masked by K3, K4 (and K5, K6 for four pieces): C = piece
// when beta is 0, else piece + beta*C.
func storeRows(name string, e element, maxRows, pieces int, rowPiece func(r, h int) (VecPhysical, int)) {
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(log2(e.size)), ldc)
	rows := Load(Param("rows"), GP64())
	masks := []Register{K3, K4, K5, K6}
	jumpUnlessBetaZero(name, e)
	for r := range maxRows {
		for h := range pieces {
			z, lane := rowPiece(r, h)
			dst := Mem{Base: c, Disp: 16 * h}
			if lane == 0 {
				e.move(z.AsX(), masks[h], dst)
			} else {
				// Through a register: a masked extract to memory of
				// float64 pieces (VEXTRACTF64X2) needs AVX512DQ.
				VEXTRACTF32X4(U8(lane), z, X29)
				e.move(X29, masks[h], dst)
			}
		}
		if r < maxRows-1 {
			CMPQ(rows, U8(r+1))
			JLE(LabelRef(name + "_done"))
			ADDQ(ldc, c)
		}
	}
	JMP(LabelRef(name + "_done"))

	Label(name + "_withbeta")
	e.broadcast(paramAddr("beta"), Y30) // float64 has no broadcast to XMM
	beta := X30
	for r := range maxRows {
		for h := range pieces {
			z, lane := rowPiece(r, h)
			dst := Mem{Base: c, Disp: 16 * h}
			piece := X29
			if lane == 0 {
				e.move(z.AsX(), piece)
			} else {
				VEXTRACTF32X4(U8(lane), z, piece)
			}
			old := X28
			e.moveZ(dst, masks[h], old)
			e.fma(old, beta, piece)
			e.move(piece, masks[h], dst)
		}
		if r < maxRows-1 {
			CMPQ(rows, U8(r+1))
			JLE(LabelRef(name + "_done"))
			ADDQ(ldc, c)
		}
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// maskReg returns the row mask of vector v (K1, K2).
func maskReg(v int) Register { return []Register{K1, K2}[v] }

// zmms returns n ZMM registers from Z(first) on.
func zmms(first, n int) []VecPhysical {
	z := make([]VecPhysical, n)
	for i := range z {
		z[i] = zmm(first + i)
	}
	return z
}

// gatherColumns generates a routine that copies a rows x cols block of a
// row-major matrix transposed (dst[j*ldd+p] = src[p*lds+j]): the dot
// kernel's columns of B, when B is not transposed. Four columns at a time:
// four rows of them loaded (masked past the last column), transposed in
// registers as a 4 x 4 block and stored as four pieces of four elements of
// a column; a last few rows one at a time, an element at a time. One gather
// a vector of a column's elements, as before, was 10% of a float32
// 68x68x68 product on one thread: a gather of 16 elements from 16 rows
// took about 80 cycles on the development machine (Zen 5).
func gatherColumns(name string, e element) {
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%s, ldd int, src *%s, lds int, rows, cols int)", e.goName, e.goName))
	Doc(fmt.Sprintf("%s (AVX-512) sets dst[j*ldd+p] = src[p*lds+j] for p < rows and", name),
		"j < cols: a block of a row-major matrix, transposed. It reads no element",
		"of a row past its first cols. It needs AVX-512F and BMI2.")
	dst := Load(Param("dst"), GP64())
	ldd := Load(Param("ldd"), GP64())
	SHLQ(U8(log2(e.size)), ldd)
	src := Load(Param("src"), GP64())
	lds := Load(Param("lds"), GP64())
	SHLQ(U8(log2(e.size)), lds)
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	ldd3 := GP64()
	LEAQ(Mem{Base: ldd, Index: ldd, Scale: 2}, ldd3)
	lds3 := GP64()
	LEAQ(Mem{Base: lds, Index: lds, Scale: 2}, lds3)

	// The low 4 lanes of Z0-Z3 (X or Y registers): 4 rows; of V0-V3 after
	// the transpose, 4 columns.
	lo := func(z VecPhysical) VecPhysical {
		if e.size == 8 {
			return z.(Vec).AsY().(VecPhysical)
		}
		return z.(Vec).AsX().(VecPhysical)
	}
	r := []VecPhysical{lo(Z0), lo(Z1), lo(Z2), lo(Z3)}
	t := []VecPhysical{lo(Z4), lo(Z5), lo(Z6), lo(Z7)}

	TESTQ(rows, rows)
	JZ(LabelRef(name + "_done"))
	Label(name + "_group")
	TESTQ(cols, cols)
	JLE(LabelRef(name + "_done"))
	Comment("w: the group's columns, at most 4; K1 their lanes.")
	w := GP64()
	MOVQ(U32(4), w)
	CMPQ(cols, w)
	CMOVQLT(cols, w)
	ones := GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(w, ones, ones)
	KMOVW(ones.As32(), K1)
	s, d, n := GP64(), GP64(), GP64()
	MOVQ(src, s)
	MOVQ(dst, d)
	MOVQ(rows, n)
	SHRQ(U8(2), n)
	JZ(LabelRef(name + "_rest"))
	Label(name + "_block")
	e.moveZ(Mem{Base: s}, K1, Z0)
	e.moveZ(Mem{Base: s, Index: lds, Scale: 1}, K1, Z1)
	e.moveZ(Mem{Base: s, Index: lds, Scale: 2}, K1, Z2)
	e.moveZ(Mem{Base: s, Index: lds3, Scale: 1}, K1, Z3)
	if e.size == 4 {
		VUNPCKLPS(r[1], r[0], t[0]) // a0 b0 a1 b1
		VUNPCKHPS(r[1], r[0], t[1]) // a2 b2 a3 b3
		VUNPCKLPS(r[3], r[2], t[2]) // c0 d0 c1 d1
		VUNPCKHPS(r[3], r[2], t[3]) // c2 d2 c3 d3
		VUNPCKLPD(t[2], t[0], r[0]) // a0 b0 c0 d0
		VUNPCKHPD(t[2], t[0], r[1]) // a1 b1 c1 d1
		VUNPCKLPD(t[3], t[1], r[2]) // a2 b2 c2 d2
		VUNPCKHPD(t[3], t[1], r[3]) // a3 b3 c3 d3
	} else {
		VUNPCKLPD(r[1], r[0], t[0])            // a0 b0 a2 b2
		VUNPCKHPD(r[1], r[0], t[1])            // a1 b1 a3 b3
		VUNPCKLPD(r[3], r[2], t[2])            // c0 d0 c2 d2
		VUNPCKHPD(r[3], r[2], t[3])            // c1 d1 c3 d3
		VPERM2F128(U8(0x20), t[2], t[0], r[0]) // a0 b0 c0 d0
		VPERM2F128(U8(0x20), t[3], t[1], r[1]) // a1 b1 c1 d1
		VPERM2F128(U8(0x31), t[2], t[0], r[2]) // a2 b2 c2 d2
		VPERM2F128(U8(0x31), t[3], t[1], r[3]) // a3 b3 c3 d3
	}
	columnAt := []Mem{{Base: d}, {Base: d, Index: ldd, Scale: 1}, {Base: d, Index: ldd, Scale: 2}, {Base: d, Index: ldd3, Scale: 1}}
	e.move(r[0], columnAt[0])
	for j := 1; j < 4; j++ {
		CMPQ(w, U8(j))
		JE(LabelRef(name + "_stored"))
		e.move(r[j], columnAt[j])
	}
	Label(name + "_stored")
	LEAQ(Mem{Base: s, Index: lds, Scale: 4}, s)
	ADDQ(U8(4*e.size), d)
	DECQ(n)
	JNZ(LabelRef(name + "_block"))

	Label(name + "_rest")
	MOVQ(rows, n)
	ANDQ(U8(3), n)
	JZ(LabelRef(name + "_next"))
	Label(name + "_row")
	e.moveZ(Mem{Base: s}, K1, Z0)
	// Element j of the row to column j.
	store := func(j int) {
		m := columnAt[j]
		switch {
		case e.size == 4 && j == 0:
			VMOVSS(X0, m)
		case e.size == 4:
			VEXTRACTPS(U8(j), X0, m)
		case j == 0:
			VMOVSD(X0, m)
		case j == 1:
			VMOVHPD(X0, m)
		case j == 2:
			VEXTRACTF128(U8(1), Y0, X1)
			VMOVSD(X1, m)
		default:
			VMOVHPD(X1, m)
		}
	}
	store(0)
	for j := 1; j < 4; j++ {
		CMPQ(w, U8(j))
		JE(LabelRef(name + "_rowStored"))
		store(j)
	}
	Label(name + "_rowStored")
	ADDQ(lds, s)
	ADDQ(U8(e.size), d)
	DECQ(n)
	JNZ(LabelRef(name + "_row"))

	Label(name + "_next")
	ADDQ(U8(4*e.size), src)
	LEAQ(Mem{Base: dst, Index: ldd, Scale: 4}, dst)
	SUBQ(U8(4), cols)
	JMP(LabelRef(name + "_group"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
