package amp

import "testing"

// TestAtomicsOnTheCPU: many threads update one element at once; every
// update counts.
func TestAtomicsOnTheCPU(t *testing.T) {
	const n = 20000
	f := []float32{0}
	d := []float64{0}
	i := []int32{0, 1 << 30, -1 << 30, -1}
	fv, _ := NewArrayView(Extent1(1), f)
	dv, _ := NewArrayView(Extent1(1), d)
	iv, _ := NewArrayView(Extent1(4), i)
	err := ParallelForEach(Extent1(n), func(idx Index) {
		k := idx.At(0)
		fv.AtomicAdd(Index1(0), 1)
		dv.AtomicAdd(Index1(0), 0.5)
		iv.AtomicAdd(Index1(0), 2)
		iv.AtomicMin(Index1(1), int32(k))
		iv.AtomicMax(Index1(2), int32(k))
		iv.AtomicCompareExchange(Index1(3), -1, int32(k))
	})
	if err != nil {
		t.Fatal(err)
	}
	if f[0] != n || d[0] != n/2 || i[0] != 2*n || i[1] != 0 || i[2] != n-1 || i[3] < 0 || i[3] >= n {
		t.Errorf("float32 %v, float64 %v, int32 %v; want %d, %d, [%d 0 %d k]", f[0], d[0], i, n, n/2, 2*n, n-1)
	}
	var x float32 = 3
	if old := AtomicExchange(&x, 4); old != 3 || x != 4 {
		t.Errorf("AtomicExchange: old %v, new %v", old, x)
	}
	if old := AtomicCompareExchange(&x, 5, 6); old != 4 || x != 4 {
		t.Errorf("a failed AtomicCompareExchange changed x: old %v, x %v", old, x)
	}
	if old := AtomicMax(&x, 9); old != 4 || x != 9 {
		t.Errorf("AtomicMax: old %v, x %v", old, x)
	}
}
