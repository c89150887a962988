// Package kerneltest holds Go kernels that exercise goampgen's compiler:
// every construct of the kernel subset, run by its tests on every
// accelerator of the machine and compared with the same function's run on
// the CPU. On a machine without a GPU the tests run the CPU path only.
package kerneltest

//go:generate go run github.com/goamp/goamp/cmd/goampgen

import (
	"math"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/amp/fastmath"
	"github.com/goamp/goamp/amp/precisemath"
)

// scale multiplies every element by s, at any rank.
//
//goamp:kernel
func scale(idx amp.Index, v *amp.ArrayView[float32], s float32) {
	v.Set(idx, s*v.At(idx))
}

const tile = 16

// transpose writes in's transpose to out through tile_static memory.
//
//goamp:kernel tile=16,16
func transpose(t amp.TiledIndex, in, out *amp.ArrayView[float64]) {
	block := amp.TileStatic[float64](t, tile*(tile+1))
	rows, cols := in.Extent().At(0), in.Extent().At(1)
	r, c := t.Local.At(0), t.Local.At(1)
	if i, j := t.Global.At(0), t.Global.At(1); i < rows && j < cols {
		block[r*(tile+1)+c] = in.At2(i, j)
	}
	t.Barrier.Wait()
	i, j := t.TileOrigin.At(1)+r, t.TileOrigin.At(0)+c
	if i < cols && j < rows {
		out.Set2(i, j, block[c*(tile+1)+r])
	}
}

// Math function selectors for mathF64 and mathF32.
const (
	fnExp int32 = iota
	fnExp2
	fnLog
	fnLog2
	fnSin
	fnCos
	fnPow
	fnTanh
	fnSqrt
	fnFloor
	fnFma
	numFns
)

// mathF64 applies package math's function fn to x (and y).
//
//goamp:kernel
func mathF64(idx amp.Index, x, y, out *amp.ArrayView[float64], fn int32) {
	a, b := x.At(idx), y.At(idx)
	var r float64
	switch fn {
	case fnExp:
		r = math.Exp(a)
	case fnExp2:
		r = math.Exp2(a)
	case fnLog:
		r = math.Log(a)
	case fnLog2:
		r = math.Log2(a)
	case fnSin:
		r = math.Sin(a)
	case fnCos:
		r = math.Cos(a)
	case fnPow:
		r = math.Pow(a, b)
	case fnTanh:
		r = math.Tanh(a)
	case fnSqrt:
		r = math.Sqrt(a)
	case fnFloor:
		r = math.Floor(a)
	case fnFma:
		r = math.FMA(a, b, a)
	}
	out.Set(idx, r)
}

// mathF32 applies the float32 function fn, precise or fast, to x (and y).
//
//goamp:kernel
func mathF32(idx amp.Index, x, y, out *amp.ArrayView[float32], fn int32, fast bool) {
	a, b := x.At(idx), y.At(idx)
	var r float32
	if fast {
		r = fast32(fn, a, b)
	} else {
		r = precise32(fn, a, b)
	}
	out.Set(idx, r)
}

func precise32(fn int32, a, b float32) float32 {
	switch fn {
	case fnExp:
		return precisemath.Exp(a)
	case fnExp2:
		return precisemath.Exp2(a)
	case fnLog:
		return precisemath.Log(a)
	case fnLog2:
		return precisemath.Log2(a)
	case fnSin:
		return precisemath.Sin(a)
	case fnCos:
		return precisemath.Cos(a)
	case fnPow:
		return precisemath.Pow(a, b)
	case fnTanh:
		return precisemath.Tanh(a)
	case fnSqrt:
		return precisemath.Sqrt(a)
	case fnFloor:
		return precisemath.Floor(a)
	}
	return precisemath.Fma(a, b, a)
}

func fast32(fn int32, a, b float32) float32 {
	switch fn {
	case fnExp:
		return fastmath.Exp(a)
	case fnExp2:
		return fastmath.Exp2(a)
	case fnLog:
		return fastmath.Log(a)
	case fnLog2:
		return fastmath.Log2(a)
	case fnSin:
		return fastmath.Sin(a)
	case fnCos:
		return fastmath.Cos(a)
	case fnPow:
		return fastmath.Pow(a, b)
	case fnTanh:
		return fastmath.Tanh(a)
	case fnSqrt:
		return fastmath.Sqrt(a)
	case fnFloor:
		return fastmath.Floor(a)
	}
	return fastmath.Fma(a, b, a)
}

// pair is a struct of scalars, kept in a local array.
type pair struct {
	lo, hi int32
}

// integers mixes integer operations, conversions, local arrays and
// structs, and a loop whose values swap, for each element.
//
//goamp:kernel
func integers(idx amp.Index, a, b, out *amp.ArrayView[int32], shift uint32) {
	x, y := a.At(idx), b.At(idx)
	var hist [4]pair
	for i := range 4 {
		hist[i] = pair{int32(i) * x, int32(i) ^ y}
	}
	k := int(uint32(x) % 4)
	p, q := x, y
	for i := 0; i < int(uint32(y)%7); i++ {
		p, q = q, p+q // the swap case of phi lowering
	}
	d := y | 1 // never zero
	r := x/d + x%d + int32(int64(x)*int64(y)>>shift) + (x &^ y) + int32(uint32(x)>>(shift%32))
	r += hist[k].lo - hist[k].hi + p - q
	r += int32(float32(x) / 3)
	r += int32(min(x, y)) + int32(max(int64(x), 7))
	out.Set(idx, r)
}

// offByOne writes one element past the end of v from the last thread.
//
//goamp:kernel
func offByOne(idx amp.Index, v *amp.ArrayView[float32]) {
	v.Set1(idx.At(0)+1, 1)
}

// divide divides, with divisors that may be zero.
//
//goamp:kernel
func divide(idx amp.Index, a, b, out *amp.ArrayView[int32]) {
	out.Set(idx, a.At(idx)/b.At(idx))
}

// reduce sums each tile of x in tile_static memory, written as a helper
// that returns its result, generic over the element type.
//
//goamp:kernel tile=128
func reduce[T amp.Element](t amp.TiledIndex, x, sums *amp.ArrayView[T]) {
	s := tileSum(t, x.At(t.Global))
	if t.Local.At(0) == 0 {
		sums.Set1(t.Tile.At(0), s)
	}
}

const reduceTile = 128

func tileSum[T amp.Element](t amp.TiledIndex, v T) T {
	cache := amp.TileStatic[T](t, reduceTile)
	me := t.Local.At(0)
	cache[me] = v
	t.Barrier.Wait()
	for half := reduceTile / 2; half > 0; half /= 2 {
		if me < half {
			cache[me] += cache[me+half]
		}
		t.Barrier.Wait()
	}
	return cache[0]
}

// histTile is the tile of histogram: its bins are counted in tile_static
// memory first, then added to the view's.
const (
	histTile = 64
	histBins = 16
)

// histogram counts the values of x (0 to histBins-1) into bins: each tile
// counts its values with atomics on tile_static memory, then adds its
// counts to the view's bins with atomics on global memory. It also adds
// every value to total[0] (float32: the order of the additions varies)
// and keeps the least and the greatest in extremes[0] and extremes[1].
//
//goamp:kernel tile=64
func histogram(t amp.TiledIndex, x, bins *amp.ArrayView[int32], total *amp.ArrayView[float32], extremes *amp.ArrayView[int32]) {
	local := amp.TileStatic[int32](t, histBins)
	me := t.Local.At(0)
	if me < histBins {
		local[me] = 0
	}
	t.Barrier.Wait()
	if i := t.Global.At(0); i < x.Extent().At(0) {
		v := x.At1(i)
		amp.AtomicAdd(&local[v%histBins], 1)
		total.AtomicAdd(amp.Index1(0), float32(v))
		extremes.AtomicMin(amp.Index1(0), v)
		extremes.AtomicMax(amp.Index1(1), v)
	}
	t.Barrier.Wait()
	if me < histBins {
		bins.AtomicAdd(amp.Index1(me), local[me])
	}
}

// claim lets the threads race to write their index into winner[0], which
// holds -1 at first: exactly one succeeds, and each thread records in won
// whether it did, and in swapped the value it exchanged out of seen[i].
//
//goamp:kernel
func claim(idx amp.Index, winner, won, seen *amp.ArrayView[int32]) {
	i := idx.At(0)
	old := winner.AtomicCompareExchange(amp.Index1(0), -1, int32(i))
	if old == -1 {
		won.Set1(i, 1)
	}
	seen.Set1(i, seen.AtomicExchange(amp.Index1(i), int32(i)))
}

// warpSums sums each warp's 32 elements of x two ways: a shuffle-down
// tree into lane 0 (written to down[warp]) and a butterfly of xor shuffles
// that leaves the sum in every lane (written to all). Generic, so the
// 64-bit float case shuffles in two halves.
//
//goamp:kernel tile=64
func warpSums[T amp.Element](t amp.TiledIndex, x, down, all *amp.ArrayView[T]) {
	g := t.Global.At(0)
	v := x.At1(g)
	s, b := v, v
	for off := amp.WarpSize / 2; off > 0; off /= 2 {
		s += amp.ShuffleDown(t, s, off)
		b += amp.ShuffleXor(t, b, off)
	}
	if g%amp.WarpSize == 0 {
		down.Set1(g/amp.WarpSize, s)
	}
	all.Set1(g, b+amp.ShuffleIdx(t, v, 0)-amp.ShuffleIdx(t, v, 0)+amp.ShuffleUp(t, v, 0)-v)
}

// edgeCases holds constructs a review found miscompiled once, each
// writing one element of out (rank-1 domain of at least 6 points):
// a local array indexed under a guard, max of uint64 with a huge
// constant, a view's extent's rank and Contains, math.Max and math.Min
// with infinities and NaN, and a test of the domain's rank that keeps the
// rank-1 entry.
//
//goamp:kernel
func edgeCases(idx amp.Index, out *amp.ArrayView[float64], k uint32, big uint64, inf, nan float64) {
	i := idx.At(0)
	var arr [4]int32
	arr[0], arr[1], arr[2], arr[3] = 1, 2, 3, 4
	var r float64
	switch i {
	case 0:
		x := int32(0)
		if k < 4 {
			x = arr[k]
		}
		r = float64(x)
	case 1:
		m := max(big&7, math.MaxUint64)
		if m < 100 {
			r = 1
		} else {
			r = 2
		}
	case 2:
		if out.Extent().Contains(idx) {
			r = float64(10 + out.Extent().Rank())
		}
	case 3:
		r = math.Max(inf, nan) + math.Min(-inf, nan)*0
	case 4:
		r = math.Min(-inf, nan)
	case 5:
		if idx.Rank() >= 2 {
			r = float64(idx.At(1))
		} else {
			r = 7
		}
	}
	out.Set(idx, r)
}
