package gpu

import (
	"fmt"
	"time"

	"github.com/goamp/goamp/internal/cuda"
)

// spinPTX is a kernel that does nothing for a given number of nanoseconds
// of the GPU's global timer: hand-written PTX (ISA 7.0 for sm_52, which the
// driver JIT-compiles for any newer GPU), so that it needs no nvcc and no
// change to the kernels package.
//
//	goamp_spin(unsigned long long ns): wait until %globaltimer has advanced ns
const spinPTX = `
.version 7.0
.target sm_52
.address_size 64

.visible .entry goamp_spin(
	.param .u64 goamp_spin_ns
)
{
	.reg .pred %p<2>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [goamp_spin_ns];
	mov.u64 %rd2, %globaltimer;
	add.u64 %rd3, %rd2, %rd1;
SPIN:
	mov.u64 %rd4, %globaltimer;
	setp.lt.u64 %p1, %rd4, %rd3;
	@%p1 bra SPIN;
	ret;
}
`

// Spin queues a kernel on the default stream that keeps the GPU busy for
// d by its own clock, loading it on first use.
//
// Why: a CUDA event is timestamped when the GPU reaches it. On an idle GPU
// the start event is reached at once, and the GPU then waits, clock
// running, while the host finishes the call that queues the kernel: tens
// of microseconds for cuBLAS (argument checks, algorithm lookup, the
// cgo-free call through purego), fewer for a bare launch, and more for a
// Go kernel's arguments than for a CUDA C kernel's. For a kernel of a few
// microseconds that is most of the span, and not the same for every
// library. With the GPU busy spinning, the host queues the start event,
// the launch and the end event meanwhile, and the GPU runs them back to
// back: the span between the events is the kernel's alone.
func (d *Device) Spin(dur time.Duration) error { return d.SpinOn(nil, dur) }

// SpinOn is Spin on stream s (nil: the default stream).
func (d *Device) SpinOn(s *cuda.Stream, dur time.Duration) error {
	d.mu.Lock()
	f := d.spin
	if f == nil {
		m, err := d.Context.LoadModule([]byte(spinPTX))
		if err != nil {
			d.mu.Unlock()
			return fmt.Errorf("gpu: load the spin kernel: %w", err)
		}
		if f, err = m.Function("goamp_spin"); err != nil {
			d.mu.Unlock()
			return err
		}
		d.spin = f
	}
	d.mu.Unlock()
	return f.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, uint64(dur.Nanoseconds()))
}
