// Package queue hands the CUDA stream behind an accelerator view
// (amp.AcceleratorView) to the packages of this module that queue their
// own kernels on it (linalg), without making CUDA's types part of amp's
// API. amp registers the lookup when it loads; the view is passed as any
// because this package cannot import amp (amp imports it).
package queue

import (
	"errors"

	"github.com/goamp/goamp/internal/cuda"
)

var streamOf func(view any) (*cuda.Stream, error)

// Register installs the lookup; amp calls it from an init function.
func Register(f func(view any) (*cuda.Stream, error)) { streamOf = f }

// ErrNoLookup is returned by Of when amp has not registered its lookup
// (amp is not linked in: no view can exist then).
var ErrNoLookup = errors.New("queue: no accelerator views in this program")

// Of returns the stream that work queued on view (an
// *amp.AcceleratorView of a CUDA accelerator) goes to, creating it on
// first use. The stream belongs to the view: do not destroy it.
func Of(view any) (*cuda.Stream, error) {
	if streamOf == nil {
		return nil, ErrNoLookup
	}
	return streamOf(view)
}

// RowCopy is a rank-2 view's copy on a GPU that moves between the host
// and the device by rows, so that a product can overlap its copies with
// its kernels.
type RowCopy struct {
	Addr uint64 // the copy's first element, on the device
	LD   int    // elements from one row to the next
	// Start is called with the stream the first rows will be queued on,
	// before them: that stream then waits for the work of the view that
	// used the copy last.
	Start func(s *cuda.Stream) error
	// Rows queues the copy of rows [lo, hi) on stream s: host to device
	// for an upload, device to host for a download.
	Rows func(s *cuda.Stream, lo, hi int) error
	// Block queues the copy of the block of rows [rowLo, rowHi) and
	// columns [colLo, colHi) on stream s, in one pitched DMA.
	Block func(s *cuda.Stream, rowLo, rowHi, colLo, colHi int) error
	// Done is called once every row is queued, with a stream whose work,
	// when the device reaches this point, includes them all: an upload
	// makes the device copy current; a download makes the host current
	// from the moment the device gets there (the view's Synchronize waits
	// for that moment instead of copying).
	Done func(s *cuda.Stream) error
}

// Transfers is what amp offers for products that overlap their copies
// with their kernels.
type Transfers struct {
	// Upload returns the row copy of view (an *amp.ArrayView of a rank-2
	// matrix) on the GPU of accView (an *amp.AcceleratorView), to be
	// filled from the host, or nil when there is nothing to gain: the
	// copy is current already, the host's data is not the newest, the
	// view is not the whole of its slice, or the slice is small or
	// cannot be page-locked (copies from pageable memory do not overlap).
	Upload func(view, accView any) (*RowCopy, error)
	// Download returns the row copy of view on the GPU of accView, to be
	// written in full by kernels and brought home by rows, or nil as for
	// Upload. From the call on, the device copy is the view's current
	// contents.
	Download func(view, accView any) (*RowCopy, error)
}

var transfers Transfers

// RegisterTransfers installs amp's Transfers; amp calls it from an init
// function.
func RegisterTransfers(t Transfers) { transfers = t }

// Upload is Transfers.Upload (nil, nil without amp).
func Upload(view, accView any) (*RowCopy, error) {
	if transfers.Upload == nil {
		return nil, nil
	}
	return transfers.Upload(view, accView)
}

// Download is Transfers.Download (nil, nil without amp).
func Download(view, accView any) (*RowCopy, error) {
	if transfers.Download == nil {
		return nil, nil
	}
	return transfers.Download(view, accView)
}
