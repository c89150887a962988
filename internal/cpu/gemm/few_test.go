package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFewColumnKernels checks the column, dot and row kernels on every block
// they take (rows and columns up to their limits) against a float64
// product, with A, B and C each ending where an inaccessible page begins
// (on Linux), NaN in the elements they must not read and in C when beta
// is 0, and C's elements past the block left alone.
func TestFewColumnKernels(t *testing.T) {
	ran := 0
	for _, e := range enginesF32 {
		ran += testFewColumns(t, &e.kernel)
	}
	for _, e := range enginesF64 {
		ran += testFewColumns(t, &e.kernel)
	}
	if ran == 0 {
		t.Skip("SKIP: no column or dot kernels on this machine")
	}
}

func testFewColumns[T float](t *testing.T, k *MicroKernel[T]) int {
	if k.Column == nil || k.Dot == nil || k.Row == nil {
		return 0
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 7))
	depths := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 68}
	for _, depth := range depths {
		// A subtest a depth, so that its guarded pages go back when it
		// ends, not when the test does (a process has a few tens of
		// thousands of mappings).
		t.Run(fmt.Sprintf("%T/k%d", T(0), depth), func(t *testing.T) { testFewColumnsAt(t, k, r, depth) })
	}
	return 1
}

func testFewColumnsAt[T float](t *testing.T, k *MicroKernel[T], r *rand.Rand, depth int) {
	const ldc = rowColumns + 3
	for cols := 1; cols <= rowColumns; cols++ {
		for rows := 1; rows <= 16; rows++ {
			if cols > fewColumns && rows > fewColumns {
				continue // no kernel takes the block
			}
			for _, beta := range []T{0, 1, T(-3) / 4} {
				fc := newBlockCase(r, rows, cols, depth, ldc, T(3)/2, beta)
				opA, opB, alpha := fc.opA, fc.opB, fc.alpha
				run := func(name string, call func(c *T)) { fc.check(t, name, call) }
				if rows <= fewColumns {
					// Row: A's rows where they lie (k adjacent) or
					// transposed (rows adjacent), B by rows.
					ldb, ldr, ldt := cols+2, depth+1, rows+1
					bRows := layOut[T](t, opB, depth, cols, false, ldb)
					aRows := layOut[T](t, opA, rows, depth, false, ldr)
					aCols := layOut[T](t, opA, rows, depth, true, ldt)
					run("Row, A by rows", func(c *T) {
						k.Row(depth, &aRows[0], &bRows[0], c, ldr, 1, ldb, ldc, rows, cols, alpha, beta)
					})
					run("Row, A transposed", func(c *T) {
						k.Row(depth, &aCols[0], &bRows[0], c, 1, ldt, ldb, ldc, rows, cols, alpha, beta)
					})
				}
				if cols > fewColumns {
					continue
				}
				// Column: A's k steps lda apart (rows adjacent), B row
				// after row or transposed (column after column).
				lda, ldb, ldbt := rows+2, cols+1, depth+1
				a := layOut[T](t, opA, rows, depth, true, lda)
				bRows := layOut[T](t, opB, depth, cols, false, ldb)
				bCols := layOut[T](t, opB, depth, cols, true, ldbt)
				run("Column, B by rows", func(c *T) {
					k.Column(depth, &a[0], &bRows[0], c, lda, ldb, 1, ldc, rows, cols, alpha, beta)
				})
				run("Column, B by columns", func(c *T) {
					k.Column(depth, &a[0], &bCols[0], c, lda, 1, ldbt, ldc, rows, cols, alpha, beta)
				})
				if rows > fewColumns {
					continue
				}
				// Dot: A's rows lda apart (k adjacent), op(B)'s columns
				// ldbt apart.
				ldar := depth + 3
				ar := layOut[T](t, opA, rows, depth, false, ldar)
				run("Dot", func(c *T) {
					k.Dot(depth, &ar[0], &bCols[0], c, ldar, ldbt, ldc, rows, cols, alpha, beta)
				})
			}
		}
	}
}

// TestColumns8Kernels checks the eight-column kernels on every row count
// they take, B by rows and by columns, as TestFewColumnKernels checks the
// column kernel.
func TestColumns8Kernels(t *testing.T) {
	ran := testColumns8(t, &engineF32.kernel)
	ran += testColumns8(t, &engineF64.kernel)
	if ran == 0 {
		t.Skip("SKIP: no eight-column kernels on this machine")
	}
}

func testColumns8[T float](t *testing.T, k *MicroKernel[T]) int {
	if k.Columns8[0] == nil {
		return 0
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 8))
	for _, depth := range []int{1, 2, 3, 4, 5, 8, 17, 68} {
		t.Run(fmt.Sprintf("%T/k%d", T(0), depth), func(t *testing.T) { testColumns8At(t, k, r, depth) })
	}
	return 1
}

func testColumns8At[T float](t *testing.T, k *MicroKernel[T], r *rand.Rand, depth int) {
	const cols = 8
	lanes := vectorLanes[T]()
	for rows := 1; rows <= 2*lanes; rows++ {
		for _, beta := range []T{0, 1, -0.75} {
			fc := newBlockCase(r, rows, cols, depth, cols+3, T(1.5), beta)
			opA, opB, alpha := fc.opA, fc.opB, fc.alpha
			lda, ldb, ldbt := rows+2, cols+1, depth+1
			a := layOut[T](t, opA, rows, depth, true, lda)
			bRows := layOut[T](t, opB, depth, cols, false, ldb)
			bCols := layOut[T](t, opB, depth, cols, true, ldbt)
			for v, kern := range k.Columns8 {
				if rows > lanes*(v+1) {
					continue
				}
				name := fmt.Sprintf("Columns8[%d]", v)
				fc.check(t, name+", B by rows", func(c *T) {
					kern(depth, &a[0], &bRows[0], c, lda, ldb, 1, fc.ldc, rows, alpha, beta)
				})
				fc.check(t, name+", B by columns", func(c *T) {
					kern(depth, &a[0], &bCols[0], c, lda, 1, ldbt, fc.ldc, rows, alpha, beta)
				})
			}
		}
	}
}

// blockCase is one block for the edge kernels' tests: op(A) (rows x
// depth) and op(B) (depth x cols) drawn as T's values and held in float64,
// C's values before the call (row stride ldc), and C = alpha*A*B + beta*C
// computed in float64.
type blockCase[T float] struct {
	rows, cols, depth, ldc int
	alpha, beta            T
	opA, opB               []float64
	c0                     []T
	want                   []float64
}

func newBlockCase[T float](r *rand.Rand, rows, cols, depth, ldc int, alpha, beta T) blockCase[T] {
	fc := blockCase[T]{rows: rows, cols: cols, depth: depth, ldc: ldc, alpha: alpha, beta: beta,
		opA: make([]float64, rows*depth), opB: make([]float64, depth*cols),
		c0: make([]T, rows*ldc), want: make([]float64, rows*cols)}
	for i := range fc.opA {
		fc.opA[i] = float64(T(2*r.Float64() - 1))
	}
	for i := range fc.opB {
		fc.opB[i] = float64(T(2*r.Float64() - 1))
	}
	for i := range fc.c0 {
		fc.c0[i] = T(2*r.Float64() - 1)
	}
	for i := range rows {
		for j := range cols {
			s := 0.0
			for p := range depth {
				s += fc.opA[i*depth+p] * fc.opB[p*cols+j]
			}
			fc.want[i*cols+j] = float64(alpha)*s + float64(beta)*float64(fc.c0[i*ldc+j])
		}
	}
	return fc
}

// check runs call on a copy of C that ends where an inaccessible page
// begins (on Linux), NaN past the block's columns and, when beta is 0, in
// the block itself (it must not be read), and fails unless the block
// holds the product and nothing past it was written.
func (fc blockCase[T]) check(t *testing.T, name string, call func(c *T)) {
	t.Helper()
	nan := T(math.NaN())
	c := guarded[T](t, (fc.rows-1)*fc.ldc+fc.cols)
	copy(c, fc.c0)
	for i := range c {
		if i%fc.ldc >= fc.cols || fc.beta == 0 {
			c[i] = nan
		}
	}
	call(&c[0])
	for i := range c {
		row, col := i/fc.ldc, i%fc.ldc
		if col >= fc.cols {
			if !math.IsNaN(float64(c[i])) {
				t.Fatalf("%s %T %dx%d k=%d: wrote C past the block at (%d, %d)", name, c[i], fc.rows, fc.cols, fc.depth, row, col)
			}
			continue
		}
		if w := T(fc.want[row*fc.cols+col]); !agree(w, c[i], fc.depth) {
			t.Fatalf("%s %T %dx%d k=%d beta=%v: C(%d, %d) is %v, want %v", name, c[i], fc.rows, fc.cols, fc.depth, fc.beta, row, col, c[i], w)
		}
	}
}

// TestGatherColumns checks the copy that feeds the dot kernel against
// interleave, whose job it does for a few columns, with the source ending
// where an inaccessible page begins (on Linux).
func TestGatherColumns(t *testing.T) {
	ran := 0
	for _, e := range enginesF32 {
		ran += testGatherColumns(t, &e.kernel)
	}
	for _, e := range enginesF64 {
		ran += testGatherColumns(t, &e.kernel)
	}
	if ran == 0 {
		t.Skip("SKIP: no gathering copy on this machine")
	}
}

func testGatherColumns[T float](t *testing.T, k *MicroKernel[T]) int {
	if k.GatherColumns == nil {
		return 0
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 9))
	for _, rows := range []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 68, 100} {
		for cols := 1; cols <= 8; cols++ {
			lds := cols + r.IntN(5)
			src := guarded[T](t, (rows-1)*lds+cols)
			for i := range src {
				src[i] = T(r.Float64())
			}
			ldd := rows + 2
			got := make([]T, cols*ldd)
			want := make([]T, cols*ldd)
			for i := range got {
				got[i], want[i] = -1, -1
			}
			k.GatherColumns(&got[0], ldd, &src[0], lds, rows, cols)
			for j := range cols {
				for p := range rows {
					want[j*ldd+p] = src[p*lds+j]
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%T rows=%d cols=%d lds=%d: element %d (column %d, row %d) is %v, want %v", got[i], rows, cols, lds, i, i/ldd, i%ldd, got[i], want[i])
				}
			}
		}
	}
	return 1
}

// TestMaskedEdgeKernels checks the masked edge kernels, in each of their
// layouts, on every column count against a float64 product, with B and C
// ending where an inaccessible page begins (on Linux), NaN in B's and C's
// elements past the columns (and in C when beta is 0), and C's columns
// past the block left alone.
func TestMaskedEdgeKernels(t *testing.T) {
	ran := 0
	for _, e := range enginesF32 {
		for _, k := range []MicroKernel[float32]{e.kernel, narrowKernel(e)} {
			ran += testMaskedEdge(t, &k)
		}
	}
	for _, e := range enginesF64 {
		for _, k := range []MicroKernel[float64]{e.kernel, narrowKernel(e)} {
			ran += testMaskedEdge(t, &k)
		}
	}
	if ran == 0 {
		t.Skip("SKIP: no masked edge kernels on this machine")
	}
}

func testMaskedEdge[T float](t *testing.T, k *MicroKernel[T]) int {
	m := k.Masked
	if m == nil {
		return 0
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 11))
	nan := T(math.NaN())
	mr := k.MR
	for _, depth := range []int{1, 3, 4, 5, 9, 68} {
		t.Run(fmt.Sprintf("%s/k%d", k.Name, depth), func(t *testing.T) {
			for cols := 1; cols <= m.Cols; cols++ {
				for _, beta := range []T{0, T(-3) / 4} {
					alpha := T(3) / 2
					opA := make([]float64, mr*depth)
					for i := range opA {
						opA[i] = float64(T(2*r.Float64() - 1))
					}
					ldb := cols + r.IntN(3)
					b := guarded[T](t, (depth-1)*ldb+cols)
					for i := range b {
						if i%ldb < cols {
							b[i] = T(2*r.Float64() - 1)
						} else {
							b[i] = nan
						}
					}
					packed := make([]T, depth*mr) // column after column
					const lda = 70
					rows := make([]T, mr*lda)       // A's rows lda apart
					columns := make([]T, depth*lda) // A's k steps lda apart
					for i := range mr {
						for p := range depth {
							x := T(opA[i*depth+p])
							packed[p*mr+i], rows[i*lda+p], columns[p*lda+i] = x, x, x
						}
					}
					ldc := cols + 2
					c0 := make([]T, mr*ldc)
					for i := range c0 {
						c0[i] = T(2*r.Float64() - 1)
					}
					for _, v := range []struct {
						name string
						run  func(c *T)
					}{
						{"Strided", func(c *T) { m.Strided(depth, &packed[0], &b[0], c, ldb, ldc, cols, alpha, beta) }},
						{"InPlace", func(c *T) { m.InPlace(depth, &rows[0], &b[0], c, lda, ldb, ldc, cols, alpha, beta) }},
						{"InPlaceT", func(c *T) { m.InPlaceT(depth, &columns[0], &b[0], c, lda, ldb, ldc, cols, alpha, beta) }},
					} {
						c := guarded[T](t, (mr-1)*ldc+cols)
						copy(c, c0)
						for i := range c {
							if i%ldc >= cols || beta == 0 {
								c[i] = nan
							}
						}
						v.run(&c[0])
						for i := range c {
							row, col := i/ldc, i%ldc
							if col >= cols {
								if !math.IsNaN(float64(c[i])) {
									t.Fatalf("%s %d columns: wrote C past them at (%d, %d)", v.name, cols, row, col)
								}
								continue
							}
							s := 0.0
							for p := range depth {
								s += opA[row*depth+p] * float64(b[p*ldb+col])
							}
							want := T(float64(alpha)*s + float64(beta)*float64(c0[i]))
							if !agree(want, c[i], depth) {
								t.Fatalf("%s %d columns, beta %v: C(%d, %d) is %v, want %v", v.name, cols, beta, row, col, c[i], want)
							}
						}
					}
				}
			}
		})
	}
	return 1
}

// layOut stores the rows x cols row-major matrix x (or, if trans, its
// transpose) with row stride ld in guarded memory (see guarded), NaN in
// each row's padding: what a kernel must not read.
func layOut[T float](t *testing.T, x []float64, rows, cols int, trans bool, ld int) []T {
	r, c := rows, cols
	if trans {
		r, c = cols, rows
	}
	out := guarded[T](t, (r-1)*ld+c)
	for i := range out {
		row, col := i/ld, i%ld
		switch {
		case col >= c:
			out[i] = T(math.NaN())
		case trans:
			out[i] = T(x[col*cols+row])
		default:
			out[i] = T(x[row*cols+col])
		}
	}
	return out
}
