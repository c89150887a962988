package kerneltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"testing"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/kernel/frontend"
	"github.com/goamp/goamp/internal/kernel/gen"
	"github.com/goamp/goamp/internal/kernel/interp"
	"github.com/goamp/goamp/internal/kernel/ir"
)

// TestCompiledKernelsInInterpreter checks goampgen's compiler without a
// GPU: it compiles this package's kernels to IR as goampgen does (the front
// end, then gen.Prepare's software math and optimizations: the IR that
// becomes PTX), runs that IR
// in internal/kernel/interp with the parameters and the launch geometry
// amp gives a GPU (amp.KernelSpec's kernel ABI), and compares the results
// with the same kernels run on the CPU through their generated launchers.
func TestCompiledKernelsInInterpreter(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		// The front end reads the package's source with the go command
		// (a test binary carried to a GPU machine has none).
		t.Skip("SKIP: no go command to load the kernels' source")
	}
	pkg, err := frontend.Load(".", ".")
	if err != nil {
		t.Fatal(err)
	}
	kernels := map[string]*frontend.Kernel{}
	for _, k := range pkg.Kernels {
		kernels[k.Name] = k
	}
	// gen.Prepare (software math, then the optimizations) rewrites a Func
	// in place, as goampgen does before writing PTX: each is prepared
	// once, the first time a subtest asks for it. Each also has its entry
	// for small indices (ir.Func.SmallIndices), compiled from a copy made
	// before: the subtests' extents are small, so both must give the
	// CPU's results.
	type entry struct {
		name  string
		rank  int
		small bool
	}
	prepared := map[entry]*ir.Func{}
	var small bool
	compiled := func(t *testing.T, name string, rank int) *ir.Func {
		t.Helper()
		if f := prepared[entry{name, rank, small}]; f != nil {
			return f
		}
		k := kernels[name]
		if k == nil {
			t.Fatalf("no kernel %s in the package", name)
		}
		f := k.Funcs[rank]
		if f == nil {
			t.Fatalf("kernel %s has no code for rank %d", name, rank)
		}
		if prepared[entry{name, rank, false}] != nil {
			t.Fatalf("%s: asked for after its IR was prepared", f.Name)
		}
		g := f.Clone()
		g.SmallIndices = true
		for _, h := range []*ir.Func{f, g} {
			if err := gen.Prepare(h); err != nil {
				t.Fatalf("%s: %v", h.Name, err)
			}
		}
		prepared[entry{name, rank, false}], prepared[entry{name, rank, true}] = f, g
		return prepared[entry{name, rank, small}]
	}
	cpu := amp.CPU().DefaultView()
	for _, small = range []bool{false, true} {
		name := "general"
		if small {
			name = "small"
		}
		t.Run(name, func(t *testing.T) {

			t.Run("scale", func(t *testing.T) {
				rng := ipRand(1)
				// Untiled blocks that overhang the domain along every dimension.
				for _, c := range []struct {
					dims  []int
					block [3]int
				}{
					{[]int{1001}, [3]int{32, 1, 1}},
					{[]int{7, 13}, [3]int{16, 4, 1}},
					{[]int{3, 5, 7}, [3]int{8, 2, 2}},
				} {
					f := compiled(t, "scale", len(c.dims))
					ext := ipExtent(c.dims)
					data := make([]float32, ext.Size())
					for i := range data {
						data[i] = float32(rng.NormFloat64())
					}
					const s = float32(-1.37)
					want := slices.Clone(data)
					av := view(t, ext, want)
					if err := launchScale(cpu, ext, av, s); err != nil {
						t.Fatalf("%v on the CPU: %v", ext, err)
					}
					if err := av.Synchronize(); err != nil {
						t.Fatal(err)
					}
					m := interp.NewMemory()
					v := ipAlloc(m, c.dims, data)
					st := ipLaunch(t, f, m, c.dims, ipGrid(c.dims, c.block), c.block, v, s)
					ipOK(t, f, st)
					ipSame(t, fmt.Sprint(ext), ipRead[float32](m, v), want)
				}
			})

			t.Run("transpose", func(t *testing.T) {
				rng := ipRand(2)
				const rows, cols = 37, 53
				f := compiled(t, "transpose", 2)
				te := amp.Extent2(rows, cols).Tile(tile, tile).Pad()
				src := make([]float64, rows*cols)
				for i := range src {
					src[i] = rng.NormFloat64()
				}
				want := make([]float64, rows*cols)
				out := view(t, amp.Extent2(cols, rows), want)
				if err := launchTranspose(cpu, te, view(t, amp.Extent2(rows, cols), slices.Clone(src)), out); err != nil {
					t.Fatalf("on the CPU: %v", err)
				}
				if err := out.Synchronize(); err != nil {
					t.Fatal(err)
				}
				m := interp.NewMemory()
				iv := ipAlloc(m, []int{rows, cols}, src)
				ov := ipAlloc(m, []int{cols, rows}, make([]float64, rows*cols))
				dom := te.Extent().Dims()
				grid, block := ipTiled(t, dom, te.TileExtent().Dims())
				st := ipLaunch(t, f, m, dom, grid, block, iv, ov)
				ipOK(t, f, st)
				ipSame(t, fmt.Sprintf("%dx%d", rows, cols), ipRead[float64](m, ov), want)
			})

			t.Run("mathF64", func(t *testing.T) {
				rng := ipRand(3)
				const n = 501
				dom, block := []int{n}, [3]int{32, 1, 1}
				f := compiled(t, "mathF64", 1)
				for fn := range numFns {
					x, y := ipMathInputs(rng, fn, n)
					want := make([]float64, n)
					ov := view(t, amp.Extent1(n), want)
					if err := launchMathF64(cpu, amp.Extent1(n), view(t, amp.Extent1(n), slices.Clone(x)), view(t, amp.Extent1(n), slices.Clone(y)), ov, fn); err != nil {
						t.Fatalf("%s on the CPU: %v", fnNames[fn], err)
					}
					if err := ov.Synchronize(); err != nil {
						t.Fatal(err)
					}
					m := interp.NewMemory()
					xv, yv, outv := ipAlloc(m, dom, x), ipAlloc(m, dom, y), ipAlloc(m, dom, make([]float64, n))
					st := ipLaunch(t, f, m, dom, ipGrid(dom, block), block, xv, yv, outv, fn)
					ipOK(t, f, st)
					got := ipRead[float64](m, outv)
					// TestMathF64's tolerance, 4 ulp, but for pow: Go's math.Pow,
					// the CPU's result, is itself up to 13 ulp off for these
					// arguments (measured over 200,000 of them against 200-bit
					// arithmetic, where goamp's software pow was within 0.6 ulp),
					// so pow is compared within 16.
					tol := 4.0
					if fn == fnPow {
						tol = 16
					}
					worst, at := 0.0, 0
					for i := range n {
						if u := ulps(got[i], ipWantF64(fn, x[i], want[i])); u > worst {
							worst, at = u, i
						}
					}
					if worst > tol {
						t.Errorf("%s: %v ulp at element %d, x=%v y=%v: interpreted %v, want %v (the CPU's %v)", fnNames[fn], worst, at, x[at], y[at], got[at], ipWantF64(fn, x[at], want[at]), want[at])
					}
				}
			})

			t.Run("mathF32", func(t *testing.T) {
				rng := ipRand(4)
				const n = 501
				dom, block := []int{n}, [3]int{32, 1, 1}
				f := compiled(t, "mathF32", 1)
				for _, fast := range []bool{false, true} {
					for fn := range numFns {
						x64, y64 := ipMathInputs(rng, fn, n)
						x, y := make([]float32, n), make([]float32, n)
						for i := range n {
							x[i], y[i] = float32(x64[i]), float32(y64[i])
							if fast {
								// Moderate arguments, as TestMathF32 uses.
								x[i], y[i] = float32(rng.Float64()*8-4), float32(rng.Float64()*4-2)
								if fn == fnLog || fn == fnLog2 || fn == fnSqrt || fn == fnPow {
									x[i] = float32(rng.Float64()*100 + 1e-3)
								}
							}
						}
						want := make([]float32, n)
						ov := view(t, amp.Extent1(n), want)
						if err := launchMathF32(cpu, amp.Extent1(n), view(t, amp.Extent1(n), slices.Clone(x)), view(t, amp.Extent1(n), slices.Clone(y)), ov, fn, fast); err != nil {
							t.Fatalf("%s fast=%v on the CPU: %v", fnNames[fn], fast, err)
						}
						if err := ov.Synchronize(); err != nil {
							t.Fatal(err)
						}
						m := interp.NewMemory()
						xv, yv, outv := ipAlloc(m, dom, x), ipAlloc(m, dom, y), ipAlloc(m, dom, make([]float32, n))
						st := ipLaunch(t, f, m, dom, ipGrid(dom, block), block, xv, yv, outv, fn, fast)
						ipOK(t, f, st)
						got := ipRead[float32](m, outv)
						for i := range n {
							if fast {
								// TestMathF32's tolerance for the hardware
								// approximations, around the CPU's result.
								ref := float64(want[i])
								tol := 1.0 / (1 << 20) * math.Max(1, math.Abs(ref))
								if fn == fnSin || fn == fnCos || fn == fnTanh {
									tol = 1.0 / (1 << 20)
								}
								if !(math.Abs(float64(got[i])-ref) <= tol) && !(math.IsNaN(ref) && math.IsNaN(float64(got[i]))) {
									t.Errorf("fast %s(%v, %v): interpreted %v, the CPU's %v, want within %g", fnNames[fn], x[i], y[i], got[i], want[i], tol)
									break
								}
								continue
							}
							if u := ulps32(got[i], want[i]); u > 2 {
								t.Errorf("precise %s(%v, %v): interpreted %v, the CPU's %v (%v ulp)", fnNames[fn], x[i], y[i], got[i], want[i], u)
								break
							}
						}
					}
				}
			})

			t.Run("integers", func(t *testing.T) {
				rng := ipRand(5)
				for _, c := range []struct {
					dims   []int
					block  [3]int
					shifts []uint32
				}{
					{[]int{1001}, [3]int{32, 1, 1}, []uint32{0, 5, 31, 40, 100}},
					{[]int{19, 27}, [3]int{16, 4, 1}, []uint32{7}},
				} {
					f := compiled(t, "integers", len(c.dims))
					ext := ipExtent(c.dims)
					n := ext.Size()
					a, b := make([]int32, n), make([]int32, n)
					for i := range n {
						a[i], b[i] = rng.Int32N(1<<20)-1<<19, rng.Int32()-1<<30
					}
					for _, shift := range c.shifts {
						want := make([]int32, n)
						ov := view(t, ext, want)
						if err := launchIntegers(cpu, ext, view(t, ext, slices.Clone(a)), view(t, ext, slices.Clone(b)), ov, shift); err != nil {
							t.Fatalf("%v shift %d on the CPU: %v", ext, shift, err)
						}
						if err := ov.Synchronize(); err != nil {
							t.Fatal(err)
						}
						m := interp.NewMemory()
						av, bv, outv := ipAlloc(m, c.dims, a), ipAlloc(m, c.dims, b), ipAlloc(m, c.dims, make([]int32, n))
						st := ipLaunch(t, f, m, c.dims, ipGrid(c.dims, c.block), c.block, av, bv, outv, shift)
						ipOK(t, f, st)
						got := ipRead[int32](m, outv)
						for i := range n {
							if got[i] != want[i] {
								t.Errorf("%v shift %d: element %d (a=%d b=%d): interpreted %d, the CPU's %d", ext, shift, i, a[i], b[i], got[i], want[i])
								break
							}
						}
					}
				}
			})

			t.Run("reduce", func(t *testing.T) {
				ipReduce[float32](t, compiled, ipRand(7))
				ipReduce[float64](t, compiled, ipRand(8))
				ipReduce[int32](t, compiled, ipRand(9))
			})

			t.Run("offByOne", func(t *testing.T) {
				const n = 100
				dom, block := []int{n}, [3]int{32, 1, 1}
				f := compiled(t, "offByOne", 1)
				m := interp.NewMemory()
				v := ipAlloc(m, dom, make([]float32, n))
				st := ipLaunch(t, f, m, dom, ipGrid(dom, block), block, v)
				if st.code != ir.StatusOutOfBounds || st.arg != 1 || st.where[0] != n-1 {
					t.Errorf("status record: code %d, arg %d, where %v; want code %d (out of bounds), arg 1 (the view), where[0] %d",
						st.code, st.arg, st.where, ir.StatusOutOfBounds, n-1)
				}
				// Every other thread went on and wrote its element.
				got := ipRead[float32](m, v)
				for i, x := range got {
					if want := float32(min(i, 1)); x != want {
						t.Errorf("element %d = %v, want %v", i, x, want)
						break
					}
				}
			})

			t.Run("edgeCases", func(t *testing.T) {
				dom, block := []int{6}, [3]int{4, 1, 1}
				f := compiled(t, "edgeCases", 1)
				for _, k := range []uint32{2, 4, 1000} {
					want := make([]float64, 6)
					ov := view(t, amp.Extent1(6), want)
					if err := launchEdgeCases(cpu, amp.Extent1(6), ov, k, 5, math.Inf(1), math.NaN()); err != nil {
						t.Fatalf("on the CPU: %v", err)
					}
					if err := ov.Synchronize(); err != nil {
						t.Fatal(err)
					}
					m := interp.NewMemory()
					outv := ipAlloc(m, dom, make([]float64, 6))
					st := ipLaunch(t, f, m, dom, ipGrid(dom, block), block, outv, k, uint64(5), math.Inf(1), math.NaN())
					ipOK(t, f, st)
					got := ipRead[float64](m, outv)
					for i := range got {
						if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
							t.Errorf("k=%d: element %d = %v, the CPU's %v", k, i, got[i], want[i])
						}
					}
				}
			})

			t.Run("divide", func(t *testing.T) {
				rng := ipRand(6)
				const n = 37
				dom, block := []int{n}, [3]int{32, 1, 1}
				f := compiled(t, "divide", 1)
				a, b := make([]int32, n), make([]int32, n)
				for i := range n {
					a[i], b[i] = rng.Int32()-1<<30, rng.Int32N(2001)-1000
					if b[i] == 0 {
						b[i] = 3
					}
				}
				a[5], b[5] = math.MinInt32, -1 // wraps in Go
				a[6], b[6] = -7, 2             // truncates toward zero

				// Nonzero divisors: the interpreter's quotients are the CPU's.
				want := make([]int32, n)
				ov := view(t, amp.Extent1(n), want)
				if err := launchDivide(cpu, amp.Extent1(n), view(t, amp.Extent1(n), slices.Clone(a)), view(t, amp.Extent1(n), slices.Clone(b)), ov); err != nil {
					t.Fatalf("on the CPU: %v", err)
				}
				if err := ov.Synchronize(); err != nil {
					t.Fatal(err)
				}
				m := interp.NewMemory()
				av, bv, outv := ipAlloc(m, dom, a), ipAlloc(m, dom, b), ipAlloc(m, dom, make([]int32, n))
				st := ipLaunch(t, f, m, dom, ipGrid(dom, block), block, av, bv, outv)
				ipOK(t, f, st)
				ipSame(t, "nonzero divisors", ipRead[int32](m, outv), want)

				// A zero divisor is recorded in the status record; the other
				// threads still divide.
				const zero = 20
				b[zero] = 0
				m = interp.NewMemory()
				av, bv, outv = ipAlloc(m, dom, a), ipAlloc(m, dom, b), ipAlloc(m, dom, make([]int32, n))
				st = ipLaunch(t, f, m, dom, ipGrid(dom, block), block, av, bv, outv)
				if st.code != ir.StatusDivideByZero || st.where[0] != zero {
					t.Errorf("status record: code %d, arg %d, where %v; want code %d (divide by zero), where[0] %d",
						st.code, st.arg, st.where, ir.StatusDivideByZero, zero)
				}
				got := ipRead[int32](m, outv)
				for i := range n {
					if i != zero && got[i] != want[i] {
						t.Errorf("with b[%d] = 0: element %d (%d / %d): interpreted %d, want %d", zero, i, a[i], b[i], got[i], want[i])
						break
					}
				}
			})
		})
	}
}

// ipRand is a generator for a subtest's inputs, the same on every run so
// that a failure can be reproduced.
func ipRand(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(0x676f616d70, stream)) }

// ipWantF64 is the CPU's result cpu of mathF64's function fn at x, but
// right where Go's math is wrong (goamp's software routines are not):
//
//   - On amd64 (and s390x) math.Log takes a subnormal's exponent field at
//     face value (golang/go#56600): Log(1e-310) is -709.09, not -713.80.
//     There the logarithm is taken of x scaled into the normal range, as
//     internal/kernel/interp does.
//   - math.Log2 adds Frexp's exponent to Log of the fraction, which cancels
//     for x just above 1: Log2(1.014427267526382) is 11 ulp off. There
//     Log(x)·log2(e) is within 2 ulp.
func ipWantF64(fn int32, x, cpu float64) float64 {
	switch {
	case fn == fnLog && x > 0 && x < 0x1p-1022:
		return math.Log(x*0x1p54) - 54*math.Ln2
	case fn == fnLog2 && x > 1 && x < 2:
		return math.Log(x) * math.Log2E
	}
	return cpu
}

// ipMathInputs is mathInputs drawing from rng: each function's arguments
// over its interesting range, special values first.
func ipMathInputs(rng *rand.Rand, fn int32, n int) (x, y []float64) {
	x, y = make([]float64, n), make([]float64, n)
	specials := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 700, -745, 1e300}
	for i := range n {
		switch fn {
		case fnLog, fnLog2, fnSqrt:
			x[i] = math.Exp(rng.Float64()*1400 - 700)
		case fnSin, fnCos:
			x[i] = (rng.Float64()*2 - 1) * math.Pow(10, rng.Float64()*6)
		case fnPow:
			x[i] = rng.Float64() * 10
			y[i] = rng.Float64()*40 - 20
		default:
			x[i] = rng.Float64()*80 - 40
		}
		if i < len(specials) {
			x[i] = specials[i]
			y[i] = specials[(i+3)%len(specials)]
		}
	}
	return x, y
}

// ipReduce runs reduce[T] over 37 tiles of reduceTile in the interpreter
// and on the CPU: both sum in the same order, so the sums are equal.
func ipReduce[T amp.Element](t *testing.T, compiled func(*testing.T, string, int) *ir.Func, rng *rand.Rand) {
	name := fmt.Sprintf("reduce[%T]", *new(T))
	t.Run(name, func(t *testing.T) {
		const tiles = 37
		const n = tiles * reduceTile
		f := compiled(t, name, 1)
		x := make([]T, n)
		for i := range x {
			x[i] = T(rng.NormFloat64() * 1e6)
		}
		want := make([]T, tiles)
		sv := view(t, amp.Extent1(tiles), want)
		te := amp.Extent1(n).Tile(reduceTile)
		if err := launchReduce(amp.CPU().DefaultView(), te, view(t, amp.Extent1(n), slices.Clone(x)), sv); err != nil {
			t.Fatalf("on the CPU: %v", err)
		}
		if err := sv.Synchronize(); err != nil {
			t.Fatal(err)
		}
		m := interp.NewMemory()
		xv, sums := ipAlloc(m, []int{n}, x), ipAlloc(m, []int{tiles}, make([]T, tiles))
		dom := te.Extent().Dims()
		grid, block := ipTiled(t, dom, te.TileExtent().Dims())
		st := ipLaunch(t, f, m, dom, grid, block, xv, sums)
		ipOK(t, f, st)
		ipSame(t, "tile sums", ipRead[T](m, sums), want)
	})
}

// ipView is a view in the interpreter's memory, laid out as amp's views
// are: row-major, its last dimension contiguous.
type ipView struct {
	base uint64
	dims []int
}

func (v ipView) size() int {
	n := 1
	for _, d := range v.dims {
		n *= d
	}
	return n
}

func ipExtent(dims []int) amp.Extent {
	switch len(dims) {
	case 1:
		return amp.Extent1(dims[0])
	case 2:
		return amp.Extent2(dims[0], dims[1])
	}
	return amp.Extent3(dims[0], dims[1], dims[2])
}

func ipElemSize[T amp.Element]() int {
	switch any(*new(T)).(type) {
	case float64:
		return 8
	}
	return 4
}

// ipAlloc allocates a view of dims in m and copies data into it.
func ipAlloc[T amp.Element](m *interp.Memory, dims []int, data []T) ipView {
	v := ipView{dims: dims}
	if len(data) != v.size() {
		panic(fmt.Sprintf("ipAlloc: %d elements for %v", len(data), dims))
	}
	sz := ipElemSize[T]()
	v.base = m.Alloc(len(data) * sz)
	b := m.Bytes(v.base, len(data)*sz)
	le := binary.LittleEndian
	switch d := any(data).(type) {
	case []float32:
		for i, x := range d {
			le.PutUint32(b[4*i:], math.Float32bits(x))
		}
	case []float64:
		for i, x := range d {
			le.PutUint64(b[8*i:], math.Float64bits(x))
		}
	case []int32:
		for i, x := range d {
			le.PutUint32(b[4*i:], uint32(x))
		}
	}
	return v
}

// ipRead returns the elements of v.
func ipRead[T amp.Element](m *interp.Memory, v ipView) []T {
	n := v.size()
	sz := ipElemSize[T]()
	b := m.Bytes(v.base, n*sz)
	out := make([]T, n)
	le := binary.LittleEndian
	switch d := any(out).(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
	case []int32:
		for i := range d {
			d[i] = int32(le.Uint32(b[4*i:]))
		}
	}
	return out
}

// ipParams lays out a launch's parameters as amp's kernelParams does for a
// GPU (the kernel ABI of amp.KernelSpec): the status record's address, the
// domain's extent, then per argument a view's base, rank, n0 n1 n2 (1
// beyond its rank) and strides s0 s1 (0 where not below the last
// dimension), or a scalar (bool as a u32 0 or 1, floats as their bits).
// It checks each parameter's type against f's declaration.
func ipParams(t *testing.T, f *ir.Func, status uint64, dom []int, args ...any) []uint64 {
	t.Helper()
	var params []uint64
	var types []ir.Type
	add := func(x uint64, typ ir.Type) {
		params = append(params, x)
		types = append(types, typ)
	}
	add(status, ir.U64)
	for _, n := range dom {
		add(uint64(int64(n)), ir.I64)
	}
	for _, a := range args {
		switch a := a.(type) {
		case ipView:
			r := len(a.dims)
			n := [3]int64{1, 1, 1}
			var s [2]int64
			for d := range r {
				n[d] = int64(a.dims[d])
			}
			stride := int64(1)
			for d := r - 1; d >= 0; d-- {
				if d < r-1 {
					s[d] = stride // d < 2, as r <= 3
				}
				stride *= n[d]
			}
			add(a.base, ir.U64)
			add(uint64(r), ir.U32)
			for _, x := range n {
				add(uint64(x), ir.I64)
			}
			for _, x := range s {
				add(uint64(x), ir.I64)
			}
		case bool:
			var x uint64
			if a {
				x = 1
			}
			add(x, ir.U32)
		case int32:
			add(uint64(uint32(a)), ir.I32)
		case uint32:
			add(uint64(a), ir.U32)
		case int:
			add(uint64(int64(a)), ir.I64)
		case int64:
			add(uint64(a), ir.I64)
		case uint:
			add(uint64(a), ir.U64)
		case uint64:
			add(a, ir.U64)
		case float32:
			add(uint64(math.Float32bits(a)), ir.F32)
		case float64:
			add(math.Float64bits(a), ir.F64)
		default:
			t.Fatalf("ipParams: argument of type %T", a)
		}
	}
	if len(params) != len(f.Params) {
		t.Fatalf("%s: the ABI gives %d parameters, the IR declares %d: %v", f.Name, len(params), len(f.Params), f.Params)
	}
	for i, p := range f.Params {
		if p.Type != types[i] {
			t.Fatalf("%s: parameter %d (%s) is %v in the IR, %v in the ABI", f.Name, i, p.Name, p.Type, types[i])
		}
	}
	return params
}

// ipStatus is the status record a launch left (see amp.KernelSpec).
type ipStatus struct {
	code, arg uint32
	where     [3]int64
}

// ipLaunch runs f in the interpreter over dom with a zeroed status record
// and the parameters ipParams lays out, and returns the record.
func ipLaunch(t *testing.T, f *ir.Func, m *interp.Memory, dom []int, grid, block [3]int, args ...any) ipStatus {
	t.Helper()
	addr := m.Alloc(ir.StatusRecordBytes)
	params := ipParams(t, f, addr, dom, args...)
	if err := interp.Launch(f, grid, block, params, m); err != nil {
		t.Fatalf("%s over %v (grid %v, block %v): %v", f.Name, dom, grid, block, err)
	}
	b := m.Bytes(addr, ir.StatusRecordBytes)
	le := binary.LittleEndian
	return ipStatus{
		code:  le.Uint32(b[0:]),
		arg:   le.Uint32(b[4:]),
		where: [3]int64{int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:]))},
	}
}

func ipOK(t *testing.T, f *ir.Func, st ipStatus) {
	t.Helper()
	if st.code != ir.StatusOK {
		t.Fatalf("%s reported status %d (arg %d) in thread %v", f.Name, st.code, st.arg, st.where)
	}
}

// ipTiled is amp's geometry for a tiled launch: a block a tile, the last
// dimension along x, then y and z, and as many blocks as tiles.
func ipTiled(t *testing.T, dom, tile []int) (grid, block [3]int) {
	t.Helper()
	r := len(dom)
	grid, block = [3]int{1, 1, 1}, [3]int{1, 1, 1}
	for a := range r {
		block[a] = tile[r-1-a]
		if dom[r-1-a]%block[a] != 0 {
			t.Fatalf("tiles of %v do not divide %v", tile, dom)
		}
		grid[a] = dom[r-1-a] / block[a]
	}
	return grid, block
}

// ipGrid is the grid of an untiled launch with blocks of block: enough
// blocks along x, y and z to cover dom's last, middle and first
// dimensions, the kernel skipping the threads beyond it.
func ipGrid(dom []int, block [3]int) [3]int {
	r := len(dom)
	grid := [3]int{1, 1, 1}
	for a := range r {
		grid[a] = (dom[r-1-a] + block[a] - 1) / block[a]
	}
	return grid
}

// ipSame reports the first element where got and want differ (NaNs are
// equal).
func ipSame[T amp.Element](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] && (got[i] == got[i] || want[i] == want[i]) {
			t.Errorf("%s: element %d: interpreted %v, the CPU's %v", what, i, got[i], want[i])
			return
		}
	}
}
