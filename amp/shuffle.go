package amp

import (
	"fmt"
	"math"
)

// WarpSize is how many threads of a tile form a warp: consecutive threads
// in the tile's row-major order (the last dimension fastest), as on NVIDIA
// GPUs.
const WarpSize = 32

// The shuffles exchange a value among the threads of a warp without
// TileStatic memory or a barrier: each thread gives x and gets the x of
// another thread of its warp (its lane: its place in the warp, 0 to 31).
// Every thread of the warp must make the same shuffle call at the same
// point, as with a barrier (a warp whose threads do not is a
// *DivergenceError on the CPU, and refused by goampgen); a kernel that
// shuffles must have tiles of a multiple of WarpSize threads. A thread
// whose source lane lies outside the warp gets its own x.

// ShuffleDown returns the x of the thread delta lanes above this one.
func ShuffleDown[T Element](t TiledIndex, x T, delta int) T { return shuffle(t, shuffleDown, x, delta) }

// ShuffleUp returns the x of the thread delta lanes below this one.
func ShuffleUp[T Element](t TiledIndex, x T, delta int) T { return shuffle(t, shuffleUp, x, delta) }

// ShuffleXor returns the x of the thread whose lane is this one's xor
// mask (the butterfly of a tree reduction).
func ShuffleXor[T Element](t TiledIndex, x T, mask int) T { return shuffle(t, shuffleXor, x, mask) }

// ShuffleIdx returns the x of the thread of lane lane (modulo WarpSize).
func ShuffleIdx[T Element](t TiledIndex, x T, lane int) T { return shuffle(t, shuffleIdx, x, lane) }

type shuffleMode uint8

const (
	shuffleDown shuffleMode = iota
	shuffleUp
	shuffleXor
	shuffleIdx
)

// shuffleCall is what a thread waiting at a shuffle brings, and takes.
type shuffleCall struct {
	mode   shuffleMode
	arg    int
	value  uint64 // x's bits
	result uint64
}

func shuffle[T Element](t TiledIndex, mode shuffleMode, x T, arg int) T {
	th := t.th
	if th == nil {
		panic("amp: a shuffle outside a tiled kernel")
	}
	th.shfl = shuffleCall{mode: mode, arg: arg, value: toBits(x)}
	if !th.yield(eventShuffle) {
		panic(abortSignal{})
	}
	return fromBits[T](th.shfl.result)
}

func toBits[T Element](x T) uint64 {
	switch v := any(x).(type) {
	case float32:
		return uint64(math.Float32bits(v))
	case float64:
		return math.Float64bits(v)
	case int32:
		return uint64(uint32(v))
	}
	return 0
}

func fromBits[T Element](b uint64) T {
	var x T
	switch any(x).(type) {
	case float32:
		return T(math.Float32frombits(uint32(b)))
	case float64:
		return T(math.Float64frombits(b))
	}
	return T(int32(uint32(b)))
}

// resolveShuffles gives every thread waiting at a shuffle its result. All
// the live threads of a warp with one such thread must be waiting at one.
func (w *tileWorker) resolveShuffles(tile Index) error {
	for base := 0; base < len(w.threads); base += WarpSize {
		warp := w.threads[base:min(base+WarpSize, len(w.threads))]
		var shuffling, other *thread
		for _, th := range warp {
			if th.atShuffle {
				shuffling = th
			} else {
				other = th
			}
		}
		if shuffling == nil {
			continue
		}
		if other != nil {
			what := "waits at a barrier"
			if other.done {
				what = "has returned"
			}
			return fmt.Errorf("%w: in tile %v, thread %v shuffles while thread %v of its warp %s", ErrBarrierDivergence, tile, shuffling.ti.Local, other.ti.Local, what)
		}
		for i, th := range warp {
			j := i
			switch th.shfl.mode {
			case shuffleDown: // the GPU takes the low 5 bits of the delta
				j = i + th.shfl.arg&(WarpSize-1)
			case shuffleUp:
				j = i - th.shfl.arg&(WarpSize-1)
			case shuffleXor:
				j = i ^ (th.shfl.arg & (WarpSize - 1))
			case shuffleIdx:
				j = th.shfl.arg & (WarpSize - 1)
			}
			if j < 0 || j >= len(warp) {
				j = i
			}
			th.shfl.result = warp[j].shfl.value
		}
	}
	return nil
}
