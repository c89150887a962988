package linalg

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goamp/goamp/amp"
	"github.com/goamp/goamp/internal/cuda"
	"github.com/goamp/goamp/internal/gpu"
	"github.com/goamp/goamp/internal/queue"
)

// How overlappedGemm cuts a product (BenchmarkOverlap measures the
// choices on the H100, docs/PERFORMANCE.md "Transfers"). By default the
// phased schedule (phasedGemm in overlappedGemm) runs it:
//
//   - overlapPhaseOne: the percentage of K that it computes over all of C,
//     in slices, before it finishes C panel by panel (0: the pieces
//     below instead);
//   - overlapPhaseFirst and overlapPhaseSlice: the length of phase one's
//     first slice of K, and of the others (overlapPhaseSlice 0: each twice
//     the one before);
//   - overlapPhaseRows and overlapPhaseStreams: phase two's panels of C,
//     and how many streams their kernels take turns on.
//
// Products with K too short for phases (under 4*overlapMinChunk), or with
// overlapPhaseOne 0, are cut into pieces of C, each computed over all of
// K once its operands are up:
//
//   - overlapPanelRows: the height of a panel of C, the rows of A that go
//     up, and come home as C, together;
//   - overlapColBlocks: how many column blocks of B (and C) a product of
//     N >= overlapMinSplitN is cut into, so that the first kernels start
//     once the first block of B is up instead of all of it;
//   - overlapStreams: how many streams the kernels take turns on (the
//     view's and up to three more): a piece of 1024 x 2048 is 128 tiles,
//     half of what an H100 holds at once, so several run side by side;
//   - overlapOrderKind: the upload order (see overlapOrder);
//   - overlapFirstChunks: how many slices of K the first piece's operands
//     go up in, each followed by its kernel, so that the GPU starts on the
//     first slice instead of waiting for the whole first block of B and
//     panel of A (slices of at least overlapMinChunk).
//
// The panels of A of both (overlapPanelRows high) bound which products
// overlap at all: M of two panels or more.
var (
	overlapPhaseOne     = phaseFromEnv(50)
	overlapPhaseFirst   = overlapMinChunk
	overlapPhaseSlice   = 512
	overlapPhaseRows    = 512
	overlapPhaseStreams = 2

	overlapPanelRows   = 1024
	overlapColBlocks   = 2
	overlapStreams     = 4
	overlapOrderKind   = blocksFirst
	overlapFirstChunks = 4
)

// phaseFromEnv is overlapPhaseOne's default: def, or GOAMP_OVERLAP_PHASE
// (a percentage of K, 0 to 99; 0 for the pieces) for the benchmarks that
// compare schedules across processes (internal/gpubench's EndToEnd).
func phaseFromEnv(def int) int {
	if v, err := strconv.Atoi(os.Getenv("GOAMP_OVERLAP_PHASE")); err == nil && v >= 0 && v < 100 {
		return v
	}
	return def
}

// overlapMinChunk is the shortest slice of K that overlapFirstChunks cuts.
const overlapMinChunk = 256

// overlapMinSplitN is the narrowest product whose B is cut into column
// blocks.
const overlapMinSplitN = 2048

// overlapped counts the products overlappedGemm ran, for the tests.
var overlapped atomic.Int64

// overlapTrace, when not nil (BenchmarkOverlapTimeline sets it), is called
// by overlappedGemm right after it queues each copy and kernel, with the
// stream and a label, and once before anything with the streams' first
// mark ("start"): the benchmark records an event there and prints the
// product's timeline.
var overlapTrace func(st *cuda.Stream, label string)

func traceOverlap(st *cuda.Stream, format string, args ...any) {
	if overlapTrace != nil {
		overlapTrace(st, fmt.Sprintf(format, args...))
	}
}

// overlappedGemm runs a large product whose operands must be copied to the
// GPU, and whose result is wanted at home, with the copies and the kernels
// overlapped, in one of two schedules. By default (overlapPhaseOne) in two
// phases (see phasedGemm below): slices of K of all of A and B go up, each
// followed by its kernel over all of C, then the rest of K panel by panel
// of C, each panel going home as soon as it is done. Otherwise, and for K
// too short for phases, by pieces: on the upload stream go the first
// column block of B and the first panel of rows of A, together in slices
// of K (see overlapFirstChunks), then the rest of B and the other panels
// of A in the order of overlapOrder; each piece of C (a panel's rows of a
// column block) is computed as soon as its rows of A and its columns of B
// are up, on one of several kernel streams, and goes home on the download
// stream as soon as it is done. Either way the view's stream then waits
// for the last download, so that the view's Wait covers everything, and
// C's Synchronize only waits for the download to land.
//
// It takes products without transposes of A (whose rows are then
// contiguous) or batches, with beta = 0 (C only written), M of at least
// two panels and N of at least 1024, no kernel time asked for, and
// operands that amp can page-lock
// and copy by rows and blocks (queue.Transfers); it reports ok = false,
// having done nothing, for the others, which run the plain way.
func overlappedGemm[T amp.Element](d *gpu.Device, v *amp.AcceleratorView, technique string, p product[T]) (elapsed time.Duration, ok bool, err error) {
	// A product whose kernel time is asked for runs the plain way: its
	// pieces here overlap one another, and their times would not add up
	// to the product's.
	if p.timed || p.batched || p.transA || p.alpha == 0 || p.beta != 0 || p.m < 2*overlapPanelRows || p.n < 1024 {
		return 0, false, nil
	}
	if p.a.Overlaps(p.b) {
		return 0, false, nil // one matrix twice (C = A*A^T): it would go up twice
	}
	up, err := queue.Upload(p.a, v)
	if up == nil || err != nil {
		return 0, false, err
	}
	home, err := queue.Download(p.c, v)
	if home == nil || err != nil {
		return 0, false, err
	}
	// From here on, C's device copy is the view's contents: the product
	// must be computed, so no more falling back. A failure part way
	// leaves work queued on streams that the view's does not cover: wait
	// for all of it, so that nothing runs behind the error.
	defer func() {
		if err != nil {
			_ = d.Context.Synchronize()
		}
	}()
	sc, err := queue.Of(v)
	if err != nil {
		return 0, true, err
	}
	in, out, aux, err := d.AuxStreams()
	if err != nil {
		return 0, true, err
	}
	compute := append([]*cuda.Stream{sc}, aux...)[:max(1, min(overlapStreams, 1+len(aux)))]

	// B: by blocks on the upload stream when amp can, else the plain way
	// (a synchronous copy, before anything is queued).
	var bAddr uint64
	bUp, err := queue.Upload(p.b, v)
	if err != nil {
		return 0, true, err
	}
	traceOverlap(in, "start")
	if bUp != nil {
		if err := bUp.Start(in); err != nil {
			return 0, true, err
		}
		bAddr = bUp.Addr
	} else if bAddr, err = p.b.DeviceAddress(v, amp.AccessRead); err != nil {
		return 0, true, err
	}
	if err := up.Start(in); err != nil {
		return 0, true, err
	}
	if err := home.Start(sc); err != nil {
		return 0, true, err
	}
	for _, st := range compute[1:] {
		if err := st.Follow(sc); err != nil { // C's earlier users, and B's plain upload
			return 0, true, err
		}
	}

	// The column blocks of op(B) and C: widths a multiple of the tiles'.
	blocks := 1
	if p.n >= overlapMinSplitN {
		blocks = max(1, overlapColBlocks)
	}
	width := (ceilDiv(p.n, blocks) + 127) / 128 * 128
	uploadB := func(lo, hi int) error {
		switch {
		case bUp == nil:
			return nil
		case p.transB: // op(B)'s columns are B's rows
			return bUp.Rows(in, lo, hi)
		}
		return bUp.Block(in, 0, p.k, lo, hi)
	}

	sb, sa := p.b.Strides(), p.a.Strides()
	s := gpu.GemmShape{TransB: p.transB, K: p.k, Batch: 1, WholeK: true, Precision: string(p.precision),
		LDA: max(1, sa[0], p.k), LDB: max(1, sb[0], p.n), LDC: max(1, home.LD, p.n)}
	if p.transB {
		s.LDB = max(1, sb[0], p.k)
	}
	size := uint64(unsafe.Sizeof(*new(T)))
	var timings []*gpu.Timing
	defer func() {
		for _, t := range timings {
			t.Drop()
		}
	}()
	next := 0 // the kernel stream whose turn it is
	// piece computes the piece of C at (panel, col) once its operands are
	// up; with chunks > 1 it also queues their uploads, a slice of K at a
	// time (the block of B's rows and the panel of A's columns), each
	// followed by the kernel for that slice, adding to what the slices
	// before it left in C.
	piece := func(panel, col, chunks int) error {
		lo, hi := panel*overlapPanelRows, min((panel+1)*overlapPanelRows, p.m)
		cLo, cHi := col*width, min((col+1)*width, p.n)
		st := compute[next%len(compute)]
		next++
		bOff := cLo // op(B)'s columns: B's columns, or its rows when transposed
		if p.transB {
			bOff = cLo * s.LDB
		}
		step := ceilDiv(p.k, chunks)
		for kLo := 0; kLo < p.k; kLo += step {
			kHi := min(kLo+step, p.k)
			if chunks > 1 {
				if bUp != nil {
					var err error
					if p.transB { // op(B)'s rows are B's columns
						err = bUp.Block(in, cLo, cHi, kLo, kHi)
					} else {
						err = bUp.Block(in, kLo, kHi, cLo, cHi)
					}
					if err != nil {
						return err
					}
				}
				if err := up.Block(in, lo, hi, kLo, kHi); err != nil {
					return err
				}
				traceOverlap(in, "up A%d+B%d k %d-%d", panel, col, kLo, kHi)
			}
			if err := st.Follow(in); err != nil { // the piece's rows of A and columns of B
				return err
			}
			traceOverlap(st, "ready (%d,%d) k %d-%d", panel, col, kLo, kHi)
			kOffB := kLo * s.LDB // op(B)'s row kLo
			if p.transB {
				kOffB = kLo
			}
			var beta T // 0: C is only written
			if kLo > 0 {
				beta = 1
			}
			s.M, s.N, s.K = hi-lo, cHi-cLo, kHi-kLo
			t, err := gpu.GemmOn(d, st, technique, s, p.alpha, up.Addr+uint64(lo*s.LDA+kLo)*size, bAddr+uint64(bOff+kOffB)*size, beta,
				home.Addr+uint64(lo*s.LDC+cLo)*size)
			if err != nil {
				return err
			}
			if t != nil {
				timings = append(timings, t)
			}
			traceOverlap(st, "kernel (%d,%d) k %d-%d", panel, col, kLo, kHi)
		}
		// The piece goes home as soon as it is done: the last one's
		// download is all that is left after the last kernel.
		if err := out.Follow(st); err != nil {
			return err
		}
		var err error
		if blocks == 1 {
			err = home.Rows(out, lo, hi)
		} else {
			err = home.Block(out, lo, hi, cLo, cHi)
		}
		traceOverlap(out, "down (%d,%d)", panel, col)
		return err
	}
	// Each upload is followed by the pieces it completes: a panel of A
	// pairs with every block of B already up, a block of B with every
	// panel of A.
	panels, cols := ceilDiv(p.m, overlapPanelRows), ceilDiv(p.n, width)
	// uploadBRows queues op(B)'s rows [kLo, kHi), every column.
	uploadBRows := func(kLo, kHi int) error {
		switch {
		case bUp == nil:
			return nil
		case p.transB: // op(B)'s rows are B's columns
			return bUp.Block(in, 0, p.n, kLo, kHi)
		}
		return bUp.Rows(in, kLo, kHi)
	}
	// bRow is the offset in B of op(B)'s row k.
	bRow := func(k int) int {
		if p.transB {
			return k
		}
		return k * s.LDB
	}
	// phasedGemm is the schedule of overlapPhaseOne: in phase one, slices
	// of K (overlapPhaseFirst long, then overlapPhaseSlice long) of every
	// row of A and column of B go up, each followed by its kernel over all
	// of C on the view's stream (the first writes C, the others add to
	// it); in phase two the rest of B goes up, then each panel's rest of
	// A (overlapPhaseRows high), followed by its kernel adding to the
	// panel's rows of C and by their download. The GPU starts after the
	// first slice (a few MiB) instead of a first block of B and panel of
	// A, every kernel of phase one covers all of C, which keeps the GPU
	// full, and C's panels still come home one by one while the others
	// are computed. The sums over K are those of split K: C holds each
	// slice's partial sum, rounded, before the next is added.
	phasedGemm := func() error {
		// Phase one's end, a multiple of overlapMinChunk: phase two's
		// operands then start where 16-byte loads apply.
		k1 := max(overlapMinChunk, min(p.k-overlapMinChunk, p.k*overlapPhaseOne/100)/overlapMinChunk*overlapMinChunk)
		s.M, s.N = p.m, p.n
		for kLo, step := 0, max(1, overlapPhaseFirst); kLo < k1; kLo += step {
			switch {
			case kLo == 0:
			case overlapPhaseSlice > 0:
				step = overlapPhaseSlice
			default:
				step *= 2
			}
			kHi := min(kLo+step, k1)
			if err := uploadBRows(kLo, kHi); err != nil {
				return err
			}
			if err := up.Block(in, 0, p.m, kLo, kHi); err != nil {
				return err
			}
			traceOverlap(in, "up k %d-%d", kLo, kHi)
			if err := sc.Follow(in); err != nil {
				return err
			}
			var beta T // 0: C is only written
			if kLo > 0 {
				beta = 1
			}
			s.K = kHi - kLo
			t, err := gpu.GemmOn(d, sc, technique, s, p.alpha, up.Addr+uint64(kLo)*size, bAddr+uint64(bRow(kLo))*size, beta, home.Addr)
			if err != nil {
				return err
			}
			if t != nil {
				timings = append(timings, t)
			}
			traceOverlap(sc, "kernel C k %d-%d", kLo, kHi)
		}
		if err := uploadBRows(k1, p.k); err != nil {
			return err
		}
		if bUp != nil {
			traceOverlap(in, "up B k %d-%d", k1, p.k)
		}
		streams := compute[:max(1, min(overlapPhaseStreams, len(compute)))]
		for _, st := range streams[1:] {
			if err := st.Follow(sc); err != nil { // phase one's kernels wrote C
				return err
			}
		}
		s.N, s.K = p.n, p.k-k1
		rows := overlapPhaseRows
		if rows <= 0 {
			rows = overlapPanelRows
		}
		for panel := range ceilDiv(p.m, rows) {
			lo, hi := panel*rows, min((panel+1)*rows, p.m)
			if err := up.Block(in, lo, hi, k1, p.k); err != nil {
				return err
			}
			traceOverlap(in, "up A%d k %d-%d", panel, k1, p.k)
			st := streams[panel%len(streams)]
			if err := st.Follow(in); err != nil {
				return err
			}
			s.M = hi - lo
			t, err := gpu.GemmOn(d, st, technique, s, p.alpha, up.Addr+uint64(lo*s.LDA+k1)*size, bAddr+uint64(bRow(k1))*size, 1,
				home.Addr+uint64(lo*s.LDC)*size)
			if err != nil {
				return err
			}
			if t != nil {
				timings = append(timings, t)
			}
			traceOverlap(st, "kernel (%d) k %d-%d", panel, k1, p.k)
			if err := out.Follow(st); err != nil {
				return err
			}
			if err := home.Rows(out, lo, hi); err != nil {
				return err
			}
			traceOverlap(out, "down (%d)", panel)
		}
		return nil
	}
	// The first piece, split along K (overlapFirstChunks), goes up with its
	// kernels when A's first panel's turn comes, B's first block with it.
	first := max(1, min(overlapFirstChunks, p.k/overlapMinChunk))
	if phased := overlapPhaseOne > 0 && p.k >= 4*overlapMinChunk; phased {
		if err := phasedGemm(); err != nil {
			return 0, true, err
		}
	} else {
		for _, u := range overlapOrder(panels, cols, overlapOrderKind) {
			if u.panel {
				if u.index == 0 && first > 1 {
					// overlapOrder puts A's first panel right behind B's first
					// block: its one partner, the first piece.
					if err := piece(0, 0, first); err != nil {
						return 0, true, err
					}
					continue
				}
				lo, hi := u.index*overlapPanelRows, min((u.index+1)*overlapPanelRows, p.m)
				if err := up.Rows(in, lo, hi); err != nil {
					return 0, true, err
				}
				traceOverlap(in, "up A%d", u.index)
				for col := range u.partners {
					if err := piece(u.index, col, 1); err != nil {
						return 0, true, err
					}
				}
				continue
			}
			if u.index == 0 && first > 1 {
				continue // goes up with the first piece
			}
			if err := uploadB(u.index*width, min((u.index+1)*width, p.n)); err != nil {
				return 0, true, err
			}
			traceOverlap(in, "up B%d", u.index)
			for panel := range u.partners {
				if err := piece(panel, u.index, 1); err != nil {
					return 0, true, err
				}
			}
		}
	}
	if err := sc.Follow(out); err != nil { // the view's stream covers the downloads, and so every kernel
		return 0, true, err
	}
	if bUp != nil {
		if err := bUp.Done(sc); err != nil {
			return 0, true, err
		}
	}
	if err := up.Done(sc); err != nil {
		return 0, true, err
	}
	if err := home.Done(sc); err != nil {
		return 0, true, err
	}
	overlapped.Add(1)
	return 0, true, nil
}

// overlapUpload is one upload of overlappedGemm: panel index of A's rows
// (panel) or block index of op(B)'s columns, and how many of the other
// operand's pieces are up before it (its partners: the pieces of C it
// completes are those with the first partners panels or blocks).
type overlapUpload struct {
	panel    bool
	index    int
	partners int
}

// uploadOrder names an order of overlappedGemm's uploads after B's first
// block and A's first panel (see overlapOrder).
type uploadOrder int

const (
	// blocksFirst: every other block of B, then every other panel of A.
	blocksFirst uploadOrder = iota
	// interleaved: a block of B and a panel of A in turn, so that the
	// pieces of C that are ready grow as the square of what is up.
	interleaved
	// panelsFirst: every other panel of A, then every other block of B;
	// with two blocks, the GPU gets a piece of C a panel while the second
	// block of B goes up last.
	panelsFirst
)

// overlapOrder returns the order in which overlappedGemm uploads panels of
// A and blocks of B: B's first block, A's first panel, then the others as
// kind says.
func overlapOrder(panels, blocks int, kind uploadOrder) []overlapUpload {
	var order []overlapUpload
	a, b := 0, 0 // panels and blocks up
	upA := func() {
		order = append(order, overlapUpload{panel: true, index: a, partners: b})
		a++
	}
	upB := func() {
		order = append(order, overlapUpload{index: b, partners: a})
		b++
	}
	upB()
	upA()
	for a < panels || b < blocks {
		var block bool
		switch kind {
		case interleaved:
			block = b < blocks && (b <= a || a == panels)
		case panelsFirst:
			block = a == panels
		default:
			block = b < blocks
		}
		if block {
			upB()
		} else {
			upA()
		}
	}
	return order
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
