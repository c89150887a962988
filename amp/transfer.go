package amp

import (
	"fmt"
	"unsafe"

	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/queue"
)

// The row copies of package queue, for products that overlap their copies
// with their kernels (linalg's reg128 on large operands).
func init() {
	queue.RegisterTransfers(queue.Transfers{
		Upload:   func(view, accView any) (*queue.RowCopy, error) { return rowCopy(view, accView, false) },
		Download: func(view, accView any) (*queue.RowCopy, error) { return rowCopy(view, accView, true) },
	})
}

func rowCopy(view, accView any, download bool) (*queue.RowCopy, error) {
	v, ok := accView.(*AcceleratorView)
	if !ok {
		return nil, fmt.Errorf("%w: %T is not an *amp.AcceleratorView", ErrNoAccelerator, accView)
	}
	switch a := view.(type) {
	case *ArrayView[float32]:
		return rowCopyOf(a, v, download)
	case *ArrayView[float64]:
		return rowCopyOf(a, v, download)
	case *ArrayView[int32]:
		return rowCopyOf(a, v, download)
	}
	return nil, fmt.Errorf("%w: %T is not an array view", ErrUnsupported, view)
}

// rowCopyOf returns a's copy on v's GPU as a queue.RowCopy, or nil when a
// does not qualify (see queue.Transfers).
func rowCopyOf[T Element](a *ArrayView[T], v *AcceleratorView, download bool) (*queue.RowCopy, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	m, ok := v.acc.memory.(*cudaMemory)
	if !ok || a.ext.rank != 2 || !a.coversBuffer() {
		return nil, nil
	}
	b := a.buf
	if b.nbytes < pinMinBytes {
		return nil, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !download && (b.is(hostStale) || b.is(discarded)) {
		return nil, nil // the newest data is not the host's, or none is wanted
	}
	if !download {
		if c := b.copies[m]; c != nil && c.valid {
			return nil, nil // current already: the plain path copies nothing
		}
	}
	b.pinLocked(m)
	if b.pin == nil {
		return nil, nil
	}
	dc, err := b.copyLocked(m)
	if err != nil {
		return nil, err
	}
	cc := dc.mem.(*cudaCopy)
	if download {
		// From here on the device copy is the view's contents, as after
		// onDevice with AccessWrite.
		dc.valid = true
		b.set(copiesValid, true)
		b.writtenOnLocked(dc)
	}
	rowBytes := a.stride[0] * int(unsafe.Sizeof(*new(T)))
	rows := a.ext.n[0]
	b.pin.(*cudaPin).queuedBy(m.dev.Context)
	// The rows are written on the device by the first stream, uploads or
	// kernels, that the caller starts with.
	rc := &queue.RowCopy{Addr: uint64(cc.ptr), LD: a.stride[0], Start: func(s *cuda.Stream) error { return cc.useOn(s, true) }}
	rc.Rows = func(s *cuda.Stream, lo, hi int) error {
		if lo < 0 || hi > rows || lo > hi {
			return fmt.Errorf("%w: rows [%d, %d) of a %d-row view", ErrOutOfRange, lo, hi, rows)
		}
		host, dev, n := unsafe.Add(b.ptr, lo*rowBytes), cc.ptr.Offset(lo*rowBytes), (hi-lo)*rowBytes
		if download {
			return s.CopyDtoH(host, dev, n)
		}
		return s.CopyHtoD(dev, host, n)
	}
	size, cols := int(unsafe.Sizeof(*new(T))), a.ext.n[1]
	rc.Block = func(s *cuda.Stream, rlo, rhi, clo, chi int) error {
		if rlo < 0 || rhi > rows || rlo > rhi || clo < 0 || chi > cols || clo > chi {
			return fmt.Errorf("%w: block [%d, %d) x [%d, %d) of a %dx%d view", ErrOutOfRange, rlo, rhi, clo, chi, rows, cols)
		}
		off, width := rlo*rowBytes+clo*size, (chi-clo)*size
		if download {
			return s.Copy2DDtoH(unsafe.Add(b.ptr, off), rowBytes, cc.ptr.Offset(off), rowBytes, width, rhi-rlo)
		}
		return s.Copy2DHtoD(cc.ptr.Offset(off), rowBytes, unsafe.Add(b.ptr, off), rowBytes, width, rhi-rlo)
	}
	rc.Done = func(s *cuda.Stream) error {
		// s covers all the work on the copy: from here on its users
		// follow s alone.
		if err := cc.useOn(s, true); err != nil {
			return err
		}
		if !download {
			if err := cc.hostBusyUntil(s); err != nil {
				return err
			}
			b.mu.Lock()
			dc.valid = true
			b.set(copiesValid, true)
			b.mu.Unlock()
			return nil
		}
		return cc.homewardAt(s)
	}
	return rc, nil
}
