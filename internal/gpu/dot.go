package gpu

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu/kernels"
)

// dotScratch is the device memory one DotOnePass launch works in: a slot
// for each block's partial, the ticket that finds the last block, and
// the result.
const (
	dotPartialsBytes = kernels.DotOnePassMaxBlocks * 8 // float64 or uint32 accumulators, 8 bytes a slot
	dotTicketOffset  = dotPartialsBytes
	dotResultOffset  = dotPartialsBytes + 8
	dotScratchBytes  = dotPartialsBytes + 16
)

// dotMinPerThread is the fewest elements a thread of DotOnePass sums, so
// that short vectors take few blocks and the last block's sum of the
// partials stays short.
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
// addresses x and y with kernels.DotOnePass: one kernel that sums on the
// device to the final result (float32 accumulated in float64), which is
// then copied back. Its additions happen in an order fixed by n, so the
// result is the same on every run. It also returns the kernel's time on
// the device.
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
	f, err := functionBySymbol(d, kernels.DotOnePass, "dot_onepass_"+elemSuffix[T]())
	if err != nil {
		return 0, 0, err
	}
	scratch, err := d.getDotScratch()
	if err != nil {
		return 0, 0, err
	}
	// A launch that fails before it runs leaves the ticket at 0, and one
	// that faults loses the context: either way the scratch can go back.
	defer d.putDotScratch(scratch)
	result := scratch.Offset(dotResultOffset)
	args, err := cuda.PackArgs(int32(n), cuda.DevicePtr(x), cuda.DevicePtr(y), scratch, scratch.Offset(dotTicketOffset), result)
	if err != nil {
		return 0, 0, err
	}
	blocks := DotOnePassBlocks(n)
	elapsed, err := d.Timed(func(s *cuda.Stream) error {
		return f.LaunchArgs([3]uint32{uint32(blocks), 1, 1}, [3]uint32{kernels.DotOnePassThreads, 1, 1}, 0, s, args)
	})
	if err != nil {
		return 0, 0, err
	}
	var sum T
	if err := d.Context.CopyDtoH(unsafe.Pointer(&sum), result, int(unsafe.Sizeof(sum))); err != nil {
		return 0, 0, err
	}
	return sum, elapsed, nil
}

// getDotScratch hands out a DotOnePass scratch area (ticket at 0), so that
// concurrent dot products never share one; areas are kept for the life of
// the process (a cuMemFree would wait for the whole device).
func (d *Device) getDotScratch() (cuda.DevicePtr, error) {
	d.mu.Lock()
	if n := len(d.dotScratch); n > 0 {
		p := d.dotScratch[n-1]
		d.dotScratch = d.dotScratch[:n-1]
		d.mu.Unlock()
		return p, nil
	}
	d.mu.Unlock()
	p, err := d.Context.Alloc(dotScratchBytes)
	if err != nil {
		return 0, fmt.Errorf("gpu: dot scratch: %w", err)
	}
	if err := d.Context.Memset(p.Offset(dotTicketOffset), 0, 4); err != nil {
		_ = d.Context.Free(p)
		return 0, err
	}
	return p, nil
}

func (d *Device) putDotScratch(p cuda.DevicePtr) {
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
