package gpu

import (
	"fmt"
	"math"
	"math/big"
	"os"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// dotAccBytes is one DotOnePass accumulator (kernels.DotOnePassAccWords
// words: the limbs of an exact fixed-point sum, a word of flags, and the
// tail kernels' chunk counter); a dotScratch holds two, which launches use
// in turn (see dot_onepass.cu).
const dotAccBytes = kernels.DotOnePassAccWords * 8

// The vectors (bytes each) that DotOnePass gives to the tail kernels,
// whose blocks take the last fifth of the work in chunks as they ask for
// it. From 2^23 float32 elements (32 MiB) to 2^25 (128 MiB) they made
// 0.92-0.96 of the copy's bandwidth where the grid-stride kernel made
// 0.91-0.93; at 256 MiB and over it is the grid-stride kernel that is
// faster (0.975 against 0.967), and below 32 MiB too
// (docs/PERFORMANCE.md, "The dot product on the device").
// GOAMP_DOT_NO_TAIL=1 turns them off.
const (
	dotTailMinBytes = 32 << 20
	dotTailMaxBytes = 128 << 20
)

// dotNoTail reports whether GOAMP_DOT_NO_TAIL=1 turns the tail kernels off.
func dotNoTail() bool { return os.Getenv("GOAMP_DOT_NO_TAIL") == "1" }

// dotOnePassKernel returns the kernel and grid of a DotOnePass of n
// elements of T at device addresses x and y: the tail kernel for aligned
// float vectors of dotTailMinBytes to dotTailMaxBytes, else the
// grid-stride one on DotOnePassBlocks(n) blocks. Both depend on n and the
// vectors' alignment alone.
func dotOnePassKernel[T Element](n int, x, y uint64) (symbol string, blocks int) {
	var zero T
	bytes := n * int(unsafe.Sizeof(zero))
	if _, isInt := any(zero).(int32); !isInt && (x|y)&15 == 0 && bytes >= dotTailMinBytes && bytes <= dotTailMaxBytes && !dotNoTail() {
		return "dot_onepass_tail_" + elemSuffix[T](), kernels.DotOnePassTailBlocks
	}
	return "dot_onepass_" + elemSuffix[T](), DotOnePassBlocks(n)
}

// dotScratch is the device memory of one DotOnePass launch at a time: two
// accumulators, of which the next launch adds into number parity and
// clears the other. An area goes back to the pool even when an error
// came after its launch was queued: every DotOnePass launches on the
// device's default stream, so the next launch on it runs after that
// one. (Launches on streams of their own would have to hold an area
// until their kernel is known to be done.)
type dotScratch struct {
	ptr    cuda.DevicePtr
	parity int
}

// dotMinPerThread is the fewest elements a thread of DotOnePass sums, so
// that short vectors take few blocks, each with enough to read to be
// worth its launch and its atomics.
const dotMinPerThread = 8

// DotOnePassBlocks is the grid DotOnePass launches for n elements: enough
// blocks for dotMinPerThread elements a thread, at most
// kernels.DotOnePassMaxBlocks. It depends on n alone, never on the GPU, so
// that the order of the additions, and so the result, is the same on
// every device.
func DotOnePassBlocks(n int) int {
	per := kernels.DotOnePassThreads * dotMinPerThread
	return max(1, min(ceilDiv(n, per), kernels.DotOnePassMaxBlocks))
}

// DotOnePass returns the dot product of the n-element vectors at device
// addresses x and y with kernels.DotOnePass: one kernel whose blocks add
// their partial sums (float32 accumulated in float64) exactly into a
// fixed-point accumulator on the device, which is then copied back and
// rounded once. The partial sums are fixed by n and their sum is exact, so
// the result is the same on every run. Aligned float vectors of 32 to 128
// MiB run on the tail kernel instead (dotOnePassKernel), whose blocks take
// the last part of the work in chunks from a counter, added as exactly.
// It also returns the kernel's time on the device.
func DotOnePass[T Element](d *Device, n int, x, y uint64) (T, time.Duration, error) {
	if n == 0 {
		return 0, 0, nil
	}
	if n < 0 {
		return 0, 0, fmt.Errorf("gpu: dot of %d elements", n)
	}
	if err := fitsInt32(n); err != nil {
		return 0, 0, err
	}
	symbol, blocks := dotOnePassKernel[T](n, x, y)
	f, err := functionBySymbol(d, kernels.DotOnePass, symbol)
	if err != nil {
		return 0, 0, err
	}
	scratch, err := d.getDotScratch()
	if err != nil {
		return 0, 0, err
	}
	defer d.putDotScratch(scratch)
	acc := scratch.ptr.Offset(scratch.parity * dotAccBytes)
	next := scratch.ptr.Offset((1 - scratch.parity) * dotAccBytes)
	args, err := cuda.PackArgs(int32(n), cuda.DevicePtr(x), cuda.DevicePtr(y), acc, next)
	if err != nil {
		return 0, 0, err
	}
	elapsed, err := d.Timed(func(s *cuda.Stream) error {
		err := f.LaunchArgs([3]uint32{uint32(blocks), 1, 1}, [3]uint32{kernels.DotOnePassThreads, 1, 1}, 0, s, args)
		if err == nil {
			// Queued: it adds into acc and clears next, so the launch
			// after it takes next. (A launch that fails before it runs
			// leaves both as they were; one that faults loses the
			// context.)
			scratch.parity = 1 - scratch.parity
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	var words [kernels.DotOnePassWords]uint64
	if err := d.Context.CopyDtoH(unsafe.Pointer(&words[0]), acc, len(words)*8); err != nil {
		return 0, 0, err
	}
	return dotAccValue[T](words[:]), elapsed, nil
}

// dotAccValue rounds the accumulator words of a DotOnePass launch to T:
// for int32 word 0 modulo 2^32; for float32 and float64 the exact sum of
// limbs kernels.DotOnePassLimbs, limb i a signed 64-bit integer worth
// 2^(32i - 1074), rounded to the nearest T (ties to even), unless the flags
// word says a partial was not finite (1 +Inf, 2 -Inf, 4 NaN).
func dotAccValue[T Element](words []uint64) T {
	var zero T
	switch any(zero).(type) {
	case int32:
		return T(int32(uint32(words[0])))
	}
	switch flags := words[kernels.DotOnePassLimbs]; {
	case flags&4 != 0 || flags&3 == 3:
		return T(math.NaN())
	case flags&1 != 0:
		return T(math.Inf(1))
	case flags&2 != 0:
		return T(math.Inf(-1))
	}
	sum, limb := new(big.Int), new(big.Int)
	for i := kernels.DotOnePassLimbs - 1; i >= 0; i-- {
		sum.Lsh(sum, 32)
		sum.Add(sum, limb.SetInt64(int64(words[i])))
	}
	f := new(big.Float).SetInt(sum) // exact: SetInt takes the precision the integer needs
	f.SetMantExp(f, -1074)
	if _, ok := any(zero).(float32); ok {
		v, _ := f.Float32()
		return T(v)
	}
	v, _ := f.Float64()
	return T(v)
}

// getDotScratch hands out a DotOnePass scratch area (both accumulators
// zero, or the one its parity names zero), so that concurrent dot
// products never share one; areas are kept for the life of the process (a
// cuMemFree would wait for the whole device).
func (d *Device) getDotScratch() (*dotScratch, error) {
	d.mu.Lock()
	if n := len(d.dotScratch); n > 0 {
		p := d.dotScratch[n-1]
		d.dotScratch = d.dotScratch[:n-1]
		d.mu.Unlock()
		return p, nil
	}
	d.mu.Unlock()
	p, err := d.Context.Alloc(2 * dotAccBytes)
	if err != nil {
		return nil, fmt.Errorf("gpu: dot scratch: %w", err)
	}
	if err := d.Context.Memset(p, 0, 2*dotAccBytes); err != nil {
		_ = d.Context.Free(p)
		return nil, err
	}
	return &dotScratch{ptr: p}, nil
}

func (d *Device) putDotScratch(p *dotScratch) {
	d.mu.Lock()
	d.dotScratch = append(d.dotScratch, p)
	d.mu.Unlock()
}

// elemSuffix is the suffix of T's kernels' symbols: f32, f64 or i32.
func elemSuffix[T Element]() string {
	switch any(T(0)).(type) {
	case float32:
		return "f32"
	case float64:
		return "f64"
	}
	return "i32"
}
