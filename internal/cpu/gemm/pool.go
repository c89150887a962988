package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// minFlopsPerThread is the least work (2*m*n*k flops) worth a thread of its
// own: below it, starting a worker and the barriers cost more than they save.
// 2^19 beat it on an idle development machine at n = 96 (1.36x OpenBLAS
// against 0.88 in float32: two threads instead of one), but on a loaded one
// (go test running other packages on the other core) a 96^3 product on two
// threads took 2.5 ms, 0.005x OpenBLAS: a thread waiting at a barrier for a
// partner the machine has descheduled waits for the scheduler. Until
// products this small can split without barriers, they stay on one
// thread. A variable so that tests can make small products use many threads.
var minFlopsPerThread = 1 << 21

// privateBTotal is the most memory that a team's private copies of a B
// block may take together: below it, each thread of a team that splits C's
// rows packs all of the B block for itself rather than the team packing one
// copy together. Sharing halves the packing, but each thread then writes
// lines that the others read in the previous call, and reads lines the
// others just wrote. On the development machine (2 cores) those cross-core
// transfers cost more than packing B twice: private copies ran 8-15% faster
// at n = 128 and 256 (BenchmarkPrivateB), level at 512. Two 8 MiB copies
// (float32, n >= 2048) ran 5% slower than a shared one, in goamp bench
// against OpenBLAS, whose buffers compete for the same L3; hence the cap,
// which also keeps many-core machines, where the copies would multiply,
// sharing. A variable for the tests.
var privateBTotal = 8 << 20

// privateBMax is the largest B block that a thread packs a copy of for
// itself (see privateBTotal), whatever the total. Two threads sharing
// float32 blocks of 2.25-4 MiB (n = 768 and 1024 on 2 cores, Zen 5)
// ran 2-5% faster than with a copy each in 13 of 15 interleaved runs
// (BenchmarkThreadsVsOpenBLAS, 2026-11-25), float64 1024 0-3%; at 512 and
// 640 (1-2.5 MiB) the two swapped places from run to run. The copies of
// bigger blocks stream from L3 as the shared one does, and take twice
// its room there, beside A and C.
var privateBMax = 2 << 20

// groupThreads is how many threads of a team that splits C's rows share one
// group of the B block's columns (see team.groups): on many cores every
// thread streaming all of a 4-8 MiB B block out of L3 for each band of 24
// rows asks more of L3 than it gives. Teams smaller than 2*groupThreads
// stay one group. A variable for the tests.
var groupThreads = 4

// maxGroups bounds team.groups (the counters are an array).
const maxGroups = 8

// groupsMinBlock is the smallest B block, in bytes, and groupsMinRows the
// fewest rows of C, with which a team splits into column groups: a smaller
// block stays in each core's L2, and with fewer rows each group's threads
// get too few bands to even out, while each group packs A again. On 16
// cores n = 256 went from 0.94-1.20 of OpenBLAS to 0.67-0.97 with groups
// (B blocks of 256-512 KiB), n = 512 (a B block of 1-2 MiB) from
// 1.00-1.08 to 1.25-1.36; float64 n = 384 (1.1 MiB) from 261-308 GFLOP/s
// to 341-379 with groups of 256 rows or more, interleaved. Variables for
// the tests.
var (
	groupsMinBlock = 1 << 20
	groupsMinRows  = 256
)

// groupsFor returns how many column groups a team of size threads that
// splits C's rows takes for B blocks of nc columns in panels of nr: a
// divisor of size, with groupThreads threads or more a group and 4 panels
// or more a group's share.
func groupsFor(size, nc, nr int) int {
	g := min(size/groupThreads, ceilDiv(nc, nr)/4, maxGroups)
	for g > 1 && size%g != 0 {
		g--
	}
	return max(g, 1)
}

// workspace is one thread's packing buffers, for both element types.
type workspace struct {
	f32 packBuffers[float32]
	f64 packBuffers[float64]
	i32 packBuffers[int32]
}

// team is the threads working on one call, and how they divide it.
type team struct {
	size      int
	splitRows bool // threads take bands of C's rows (else each a share of its columns)
	privateB  bool // each thread packs all of the B block for itself (splitRows only)
	rows      int  // the height of a band, when splitRows
	loose     bool // the threads never wait for each other (see problem.looseOK)
	// groups: when splitRows, thread id works on group id%groups of the B
	// block's columns (share(nc, nr, groups, g)), taking bands of rows
	// from its group's counter: each thread reads a groups-th of B for a
	// band, at the cost of each group packing its own A.
	groups  int
	claims  [2][maxGroups]paddedCounter // a counter a group, for alternate passes
	barrier spinBarrier
	// groupBarriers: when splitRows with groups, group g's threads meet at
	// groupBarriers[g] only (see teamBarrier).
	groupBarriers [maxGroups]spinBarrier
	// onePass: the team makes one pass over k and n (splitRows, not
	// loose), so it meets at no barrier: a thread that finds a share of
	// the shared B block unpacked late packs all of B for itself
	// (awaitShares), and none waits for the others at the end.
	onePass bool
	// doubleB: the team splits C's rows and shares B over several passes
	// (not privateB, not onePass). Its shared B buffer holds two blocks,
	// and passes alternate between them (sharedBlock), so that a pass
	// ends at no barrier: a thread packs its share of the next block while
	// others still read this one, and the barrier after that packing is
	// where every thread of the group has finished the pass before (its
	// bands, which the next pass's bands add to, and its reads of the
	// block that the pass after next packs over). A pass thus costs one
	// barrier, not two.
	doubleB bool
	// ready[s] is stamp once share s of the shared B block (share(nc, nr,
	// size, s)) is packed in this call (onePass teams); packClaims counts
	// the shares taken. Threads take shares as they take bands: a thread
	// that has not started, its core taken by another program, takes none,
	// and the others pack its share instead of waiting for it (on the
	// 16-core host with a busy loop on one core, 2026-11-25, float32 n =
	// 512 ran at 0.52-0.67 of OpenBLAS with a share fixed to each thread).
	ready      []atomic.Uint32
	stamp      uint32
	packClaims paddedCounter
}

// awaitShares reports whether every share of the shared B block is
// packed, waiting up to limit for it.
func (t *team) awaitShares(limit time.Duration) bool {
	return spinUntil(limit, func() bool {
		for i := range t.size {
			if t.ready[i].Load() != t.stamp {
				return false
			}
		}
		return true
	})
}

// bandsLeft reports whether the column group of thread id has bands of
// C's m rows not yet taken in the team's first pass (the only pass of a
// onePass team; a loose team has one group, the caller's).
func (t *team) bandsLeft(id, m int) bool {
	g := id % max(t.groups, 1)
	return int(t.claims[0][g].Load())*t.rows < m
}

// teamBarrier returns the barrier thread id meets at between the passes of
// a team that splits C's rows: its column group's, when the team has
// groups. Each group packs and reads only its own columns of the shared
// B block, and writes only its own columns of C, so groups need not wait
// for each other: a thread whose core the machine takes away for a while
// holds up its group alone, and the others go on. (The whole team at one
// barrier held all 16 threads for every such pause; on the 16-core host
// float64 2048 and 4096 then read 0.67-0.95 of OpenBLAS, 2026-11-25.)
func (t *team) teamBarrier(id int) *spinBarrier {
	if t.splitRows && t.groups > 1 {
		return &t.groupBarriers[id%t.groups]
	}
	return &t.barrier
}

// packShare returns the columns j0..j1 of an nc-column B block that thread
// id packs into the shared block: its share of its column group's, when
// the team splits C's rows in groups, else its share of all of them.
func (t *team) packShare(nc, nr, id int) (j0, j1 int) {
	if !t.splitRows || t.groups <= 1 {
		return share(nc, nr, t.size, id)
	}
	g0, g1 := share(nc, nr, t.groups, id%t.groups)
	j0, j1 = share(g1-g0, nr, t.size/t.groups, id/t.groups)
	return g0 + j0, g0 + j1
}

// resetClaims sets the band counters of t's first pass back to zero, for
// a new call: one a column group (t.groups set first). Each later pass's
// counters are reset by work, in the pass before; resetting all
// 2*maxGroups of them, an atomic store and a cache line each, took 95ns
// of a 566ns 24x24x24 product on one thread.
func (t *team) resetClaims() {
	for g := range max(t.groups, 1) {
		t.claims[0][g].Store(0)
	}
}

// paddedCounter is a band counter alone on its cache line, so that groups
// claiming bands do not contend for one line.
type paddedCounter struct {
	atomic.Int64
	_ [56]byte
}

// call is one multiply in flight: its problem (of either type), its team and
// the buffers the team shares. Calls are recycled with their buffers.
type call struct {
	f32     problem[float32]
	f64     problem[float64]
	i32     problem[int32]
	elem    elemKind
	team    team
	shared  workspace
	done    sync.WaitGroup
	running atomic.Int32 // helpers not finished: spun on before done.Wait sleeps
	helpers []*worker    // reused for the next call
	// callerCPU is the CPU the caller ran on when it handed out the call
	// (-1: unknown), for waking helpers elsewhere (see sleeper).
	callerCPU int
	// job, when not nil, is what each helper runs instead of a share of a
	// product (a batch's claiming loop; see runJob).
	job func()
}

// work runs thread id's share of c, packing into ws.
func (c *call) work(id int, ws *workspace) {
	switch c.elem {
	case elemF32:
		c.f32.work(&c.team, id, &ws.f32, &c.shared.f32)
	case elemF64:
		c.f64.work(&c.team, id, &ws.f64, &c.shared.f64)
	case elemI32:
		c.i32.work(&c.team, id, &ws.i32, &c.shared.i32)
	}
}

// elemKind says which of a call's problems is live.
type elemKind int

const (
	elemF32 elemKind = iota
	elemF64
	elemI32
)

// A worker is a pool goroutine. It runs one thread's share of a call at a
// time, packing into the buffers of the CPU it finds itself on (see
// teamWorkspace). Between calls it spins for a while
// (idleSpinFor) before it sleeps: on the development machine (a VM) a thread
// that has slept takes hundreds of microseconds to wake, longer than a whole
// 256x256 product, and a 256x256 product right after the worker fell asleep
// ran at 0.4x the speed of one while it spun. Programs that multiply matrices
// tend to do it again soon; OpenBLAS's threads spin far longer (0.1 s).
// How it sleeps and is woken is its sleeper's: on Linux with few cores,
// kept off the caller's CPU.
type worker struct {
	busy    atomic.Bool          // taken by a call; cleared when its share is done
	next    atomic.Pointer[call] // the call to join; set by the caller
	id      int                  // its thread number in that call; set before next
	sleeper sleeper              // how it sleeps between calls and is woken
}

// How long a waiting thread spins before it sleeps: a worker between calls,
// and a thread of a running call at a barrier or waiting for its helpers to
// finish (there the others are working and will be done soon, unless the
// machine has fewer free cores than the team has threads).
const (
	idleSpin    = 5 * time.Millisecond
	maxIdleSpin = 50 * time.Millisecond
	busySpin    = 1 * time.Millisecond
)

// idleSpinFor returns how long a worker spins between calls when the last
// gap between two team calls was gap (0: none yet): twice that gap, within
// idleSpin and maxIdleSpin, so that a program calling again after the
// same pause finds its workers awake; idleSpin when the gap was longer
// than maxIdleSpin, as the next one likely is too. On the 16-core host
// (2026-11-25) the bench's check of each product (5-35 ms at n = 1024 to
// 2048) outlasted a spin of 5 ms, and waking 15 workers for every product
// held float32 and float64 1024 at 0.89-1.05 of OpenBLAS; spinning 50 ms,
// 1.24-1.38.
func idleSpinFor(gap time.Duration) time.Duration {
	if gap <= 0 || gap > maxIdleSpin {
		return idleSpin
	}
	return min(max(2*gap, idleSpin), maxIdleSpin)
}

// The pool's clock for idleSpinFor: when the last team call ended, and the
// gap between the end of one team call and the start of the next, in
// nanoseconds since clockStart (monotonic).
var (
	clockStart  = time.Now()
	lastCallEnd atomic.Int64
	callGap     atomic.Int64
)

// lastCallerCPU is the CPU of the last caller that handed out a team call
// (-1: unknown): a worker going to sleep keeps off it (see sleeper).
var lastCallerCPU atomic.Int32

func init() { lastCallerCPU.Store(-1) }

// teamCallStarts and teamCallEnds keep the pool's clock (callGap) for a
// call that hands work to workers.
func teamCallStarts() {
	if last := lastCallEnd.Load(); last > 0 {
		callGap.Store(int64(time.Since(clockStart)) - last)
	}
}

func teamCallEnds() { lastCallEnd.Store(int64(time.Since(clockStart))) }

// handOut gives c to helpers, as threads 1, 2, ... of its team, noting the
// caller's CPU for waking them off it.
func (c *call) handOut(helpers []*worker) {
	c.callerCPU = -1
	if len(helpers) > 0 {
		c.callerCPU = currentCPU()
		lastCallerCPU.Store(int32(c.callerCPU))
	}
	c.done.Add(len(helpers))
	c.running.Store(int32(len(helpers)))
	for i, w := range helpers {
		w.give(c, i+1)
	}
}

// await waits for every helper c was handed out to to finish: spinning
// first, as they are working and will be done soon, then asleep.
func (c *call) await() {
	spinUntil(busySpin, func() bool { return c.running.Load() == 0 })
	c.done.Wait()
}

// runJob runs job on the calling goroutine and on up to helpers of the
// pool's idle workers at once, and returns when every run has returned;
// workers that have not started it by the time the caller's run returns
// do not run it.
// Workers, unlike goroutines started for the purpose, may be spinning
// still from the last call, and are woken off the caller's CPU (see
// sleeper): on 2 cores a batch of 64 float32 products of 128x128 (1.3 ms
// a batch) ran its second goroutine on the caller's CPU and the batch at
// one thread's rate. job must share out its work itself (a counter) so
// that it gets done however many workers the pool can give.
func runJob(helpers int, job func()) {
	c := getCall()
	c.job = job
	workers := takeWorkers(helpers, c.helpers[:0])
	if len(workers) > 0 {
		teamCallStarts()
		defer teamCallEnds()
	}
	c.handOut(workers)
	job()
	// The job is all shared out: a worker that has not yet taken it
	// (still waking, or its thread not running) would find nothing left,
	// so it is taken back rather than waited for. In one run on the
	// 16-core host batches of 1024 float32 products of 16x16 (0.4 ms of
	// work on 16 threads) took 3.5 ms each, 0.86x a loop of OpenBLAS calls.
	for _, w := range workers {
		c.takeBack(w)
	}
	c.await()
	clear(workers)
	c.helpers = workers[:0]
	c.job = nil
	putCall(c)
}

// takeBack takes c back from w if w has not yet taken it (see await), as
// if w had run it and found nothing to do.
func (c *call) takeBack(w *worker) {
	if w.next.CompareAndSwap(c, nil) {
		w.busy.Store(false)
		c.running.Add(-1)
		c.done.Done()
	}
}

// give hands c to the worker as thread id of its team.
func (w *worker) give(c *call, id int) {
	w.id = id
	w.next.Store(c)
	w.sleeper.wake(c.callerCPU)
}

// await returns the next call given to the worker. A call can be taken
// back (see run) between the look that sees it and the swap that takes
// it: then the worker waits on. A worker woken from its sleep spins again
// before it sleeps again, even when the call that woke it was taken back:
// waking it costs the caller 15-20us (a futex wake of an idle thread, on
// a VM an interrupt to a halted CPU), more than a whole 96x96 product
// takes, so the caller finishes first and takes the call back; a worker
// that went straight back to sleep was then woken, for nothing, on every
// call after (on 2 cores float32 96x96 took 25us a product in such runs
// against 8.5us alone).
func (w *worker) await() *call {
	for {
		spin := idleSpinFor(time.Duration(callGap.Load()))
		for spinUntil(spin, func() bool { return w.next.Load() != nil }) {
			if lag := testHelperLag.Load(); lag > 0 {
				time.Sleep(time.Duration(lag)) // a thread the machine stops
			}
			if c := w.next.Swap(nil); c != nil {
				return c
			}
		}
		if c := w.sleeper.sleep(&w.next); c != nil {
			return c
		}
	}
}

func (w *worker) loop() {
	for {
		c := w.await()
		if c.job != nil {
			c.job()
		} else {
			ws, slot := teamWorkspace()
			c.work(w.id, ws)
			releaseTeamWorkspace(ws, slot)
		}
		w.busy.Store(false) // idle again before the caller can return and ask for it
		c.running.Add(-1)
		c.done.Done() // the worker's last touch of c
	}
}

// testHelperLag, when the tests set it (nanoseconds), holds a worker that
// has seen a call for that long before it takes it, as a machine that
// takes the worker's core away would.
var testHelperLag atomic.Int64

// spinUntil calls cond until it is true or limit has passed, and reports
// whether it became true. Every yieldEvery it lets the Go scheduler run
// something else on its P: a goroutine readied on this P (a worker woken
// for a call, one that lost a race for a lock) waits for the P's goroutine
// to stop, and when every P is busy, as in a team of GOMAXPROCS threads,
// nothing else would run it until a spinner gave up. On a 16-core machine
// such waits held whole calls for the length of a spin (1 to 5ms) before
// the spinners yielded.
func spinUntil(limit time.Duration, cond func() bool) bool {
	var start, yielded time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if i%256 == 255 { // reading the clock costs more than a look
			now := time.Now()
			switch {
			case start.IsZero():
				start, yielded = now, now
			case now.Sub(start) > limit:
				return false
			case now.Sub(yielded) > yieldEvery:
				runtime.Gosched()
				yielded = now
			}
		}
	}
}

// yieldEvery is how often a spinning thread yields its P (see spinUntil):
// seldom enough that the scheduler's lock, which each yield takes, stays
// cold with 16 spinners, often enough that a goroutine waiting for the P
// waits a few percent of a small product at most.
const yieldEvery = 20 * time.Microsecond

// pool is the persistent set of workers, plus free lists that let a call in
// steady state allocate nothing. A call takes idle workers for itself, so a
// thread never waits at a barrier for a member that is queued behind another
// call: with several calls at once, each gets fewer threads, never a
// deadlock. Taking and returning a worker takes no lock (a flag a worker):
// 15 workers that finish at once and queue for a mutex are parked, and a
// parked goroutine waits for a free P (see spinUntil).
var pool struct {
	mu         sync.Mutex                // guards starting workers and the free lists
	workers    atomic.Pointer[[]*worker] // every worker started, never more than GOMAXPROCS-1
	calls      freeList[call]
	workspaces freeList[workspace]
}

// run computes p on as many threads as it is worth and the pool can give.
func run[T Element](p *problem[T]) {
	mr, nr := p.eng.kernel.MR, p.eng.kernel.NR
	c := getCall()
	loose := p.looseOK()
	// runtime.GOMAXPROCS takes the scheduler's lock: once a call.
	procs := runtime.GOMAXPROCS(0)
	want := threadsFor(procs, p.m, p.n, p.k, mr, nr)
	if loose {
		want = threadsForLoose(procs, p.m, p.n, p.k, mr, isFloat32(p.alpha))
		if !p.directSmall() {
			want = min(want, loosePackMaxThreads)
		}
	}
	switch q := any(p).(type) {
	case *problem[float32]:
		c.f32, c.elem = *q, elemF32
	case *problem[float64]:
		c.f64, c.elem = *q, elemF64
	case *problem[int32]:
		c.i32, c.elem = *q, elemI32
	}
	helpers := takeWorkers(want-1, c.helpers[:0])
	size := len(helpers) + 1
	if size > 1 {
		teamCallStarts()
		defer teamCallEnds()
	}
	// Rows when there are enough of them for every thread to have a few
	// blocks: each thread then packs only its own A. Otherwise columns.
	// A product of few rows with B read where it lies (directB) splits the
	// columns: each thread then reads its own part of B, once.
	splitRows := loose || (ceilDiv(p.m, mr) >= 4*size || p.m >= p.n) && !p.directOK()
	c.team.size, c.team.splitRows, c.team.loose = size, splitRows, loose && size > 1
	c.team.privateB = false
	if size > 1 && splitRows && !loose {
		kc, nc := min(p.eng.kc, p.k), roundUp(min(p.eng.nc, p.n), nr)
		block := kc * nc * int(unsafe.Sizeof(p.alpha))
		c.team.privateB = size*block <= privateBTotal && block <= privateBMax
	}
	if loose && !p.directSmall() {
		c.team.privateB = true // each thread packs all of B for itself
	}
	c.team.groups = 1
	if kc, nc := min(p.eng.kc, p.k), min(p.eng.nc, p.n); splitRows && !loose && p.m >= groupsMinRows && kc*nc*int(unsafe.Sizeof(p.alpha)) >= groupsMinBlock {
		c.team.groups = groupsFor(size, nc, nr)
	}
	// About four bands a thread, so that the counter can even out a slow
	// thread, but no taller than mc, the A block that fits in L2.
	c.team.rows = p.eng.mc
	if size > 1 {
		perGroup := size / c.team.groups
		c.team.rows = min(p.eng.mc, max(mr, roundUp(ceilDiv(p.m, 4*perGroup), mr)))
	}
	if p.columnsOnly(&c.team) {
		// The column kernels take two vectors of rows a call: bands of 24
		// left them half a vector short every other call.
		c.team.rows = roundUp(c.team.rows, 2*vectorLanes[T]())
	}
	c.team.onePass = size > 1 && splitRows && !c.team.loose && p.n <= p.eng.nc && p.k <= p.eng.kc
	if c.team.onePass {
		if len(c.team.ready) < size {
			c.team.ready = make([]atomic.Uint32, size)
		}
		c.team.stamp++ // every flag of an earlier call is stale
		c.team.packClaims.Store(0)
	}
	c.team.resetClaims()
	c.team.barrier.reset(size)
	for g := range c.team.groups {
		c.team.groupBarriers[g].reset(size / c.team.groups)
	}
	c.team.doubleB = size > 1 && splitRows && !loose && !c.team.privateB && !c.team.onePass
	if !loose { // a loose team shares nothing
		sa, sb := p.sharedSizes(splitRows, c.team.privateB, c.team.doubleB, c.team.groups)
		shared := buffersOf[T](&c.shared)
		shared.a.get(sa)
		shared.b.get(sb)
	}

	c.handOut(helpers)
	if size > 1 {
		ws, slot := teamWorkspace()
		c.work(0, ws) // the caller is thread 0
		releaseTeamWorkspace(ws, slot)
	} else {
		// Alone, the caller stays where it was; the free list hands it the
		// buffers it had last time, without asking the system for its CPU.
		ws := getWorkspace()
		c.work(0, ws)
		putWorkspace(ws)
	}
	if c.team.loose || c.team.onePass {
		// Every band of the caller's group is taken: a helper of that
		// group, or of another whose bands are all taken too, that has
		// not started would find none, so it need not start at all (nor
		// any share of a onePass team's B: the caller took every share
		// left before its bands). A helper whose group still has bands
		// must run them: no one else will.
		for i, w := range helpers {
			if c.team.bandsLeft(i+1, p.m) {
				continue
			}
			c.takeBack(w)
		}
	}
	c.await()

	clear(helpers)
	c.helpers = helpers[:0]
	// Let go of the caller's slices.
	c.f32, c.f64, c.i32 = problem[float32]{}, problem[float64]{}, problem[int32]{}
	putCall(c)
}

func buffersOf[T Element](ws *workspace) *packBuffers[T] {
	switch b := any(&ws.f32).(type) {
	case *packBuffers[T]:
		return b
	}
	if b, ok := any(&ws.f64).(*packBuffers[T]); ok {
		return b
	}
	return any(&ws.i32).(*packBuffers[T])
}

// threadsFor returns how many of procs threads an m x n x k product is
// worth.
func threadsFor(procs, m, n, k, mr, nr int) int {
	t := procs
	flops := 2 * float64(m) * float64(n) * float64(k)
	t = min(t, int(flops/float64(minFlopsPerThread)))
	t = min(t, max(ceilDiv(m, mr), ceilDiv(n, nr))) // every thread needs a block
	return max(t, 1)
}

// minFlopsPerLooseThread is minFlopsPerThread for a loose team (see
// problem.looseOK), whose threads never wait for each other: a thread
// costs the wake-up of a worker and a pass over B. On few cores a helper
// pays off less than on many: on 2 (interleaved with OpenBLAS, 2026-11-24) a
// second thread made n = 64 float32 up to 1.7x slower, and n = 72 float64
// 1.15x and n = 80 1.2-1.3x faster; this bound gives n = 64 (2^19 flops)
// one thread and n = 72 (1.4 times that) two.
var minFlopsPerLooseThread = 5 << 16

// minFlopsPerLooseThread32 is minFlopsPerLooseThread for float32, whose
// kernels do twice the flops a cycle, so a helper pays for itself only on
// more of them (int32, whose multiplies run at about half float32's FMA
// rate, keeps minFlopsPerLooseThread): on 2 cores (interleaved with
// OpenBLAS, 2026-11-24) float32 n = 72 ran at 0.82 of OpenBLAS on one
// thread and 0.72-0.77 on two, n = 80 at 0.85 on one and 0.89-0.90 on two.
// This bound gives n = 72 one thread and n = 80 two.
var minFlopsPerLooseThread32 = 3 << 17

// minFlopsPerLooseThreadMany is minFlopsPerLooseThread where GOMAXPROCS
// is manyCores or more, where helpers spin on cores of their own. On 16
// cores (same day, 2^17 to 2^19 taking turns) 2^18 put n = 64 at 1.15-1.72
// of OpenBLAS in all eight cases (two threads) where 2^19 (one) gave
// 0.98-1.49, and n = 80 and 96 at 0.88-2.2 against 0.64-1.97; 2^17 was no
// better and less steady.
var minFlopsPerLooseThreadMany = 1 << 18

// manyCores is the GOMAXPROCS from which loose teams take
// minFlopsPerLooseThreadMany.
const manyCores = 8

// loosePackMaxThreads is the most threads of a loose team that packs B
// (see problem.looseOK): every one of them packs all of it. On 16 cores
// (interleaved, B transposed, n = 96 to 256) 8 beat 4 by up to 1.5x and
// the old two-thread team with a barrier by up to 2.8x; on 2 cores n = 96
// ran 1.4-1.5x faster than on the one thread it had before. 16 then beat
// 8 by 3-20% at n = 256 (NT and TT, both types, 16 cores, interleaved);
// below about n = 160 threadsForLoose gives fewer anyway.
var loosePackMaxThreads = 16

// threadsForLoose is threadsFor for a loose team: threads that take bands
// of at least MR rows, of float32 elements if f32.
func threadsForLoose(procs, m, n, k, mr int, f32 bool) int {
	t := procs
	per := minFlopsPerLooseThread
	if f32 {
		per = minFlopsPerLooseThread32
	}
	if t >= manyCores {
		per = minFlopsPerLooseThreadMany
	}
	flops := 2 * float64(m) * float64(n) * float64(k)
	t = min(t, int(flops/float64(per)), ceilDiv(m, mr))
	return max(t, 1)
}

// isFloat64 reports whether x is a float64.
func isFloat64[T Element](x T) bool {
	_, ok := any(x).(float64)
	return ok
}

// isFloat32 reports whether x is a float32.
func isFloat32[T Element](x T) bool {
	_, ok := any(x).(float32)
	return ok
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// takeWorkers appends up to n idle workers to dst, starting new ones while
// fewer than GOMAXPROCS-1 exist. The first ones started are taken first, so
// that a call's helpers tend to be the ones still spinning from the last.
func takeWorkers(n int, dst []*worker) []*worker {
	if n <= 0 {
		return dst
	}
	if all := pool.workers.Load(); all != nil {
		for _, w := range *all {
			if n == 0 {
				return dst
			}
			if !w.busy.Load() && w.busy.CompareAndSwap(false, true) {
				dst = append(dst, w)
				n--
			}
		}
	}
	started := func() []*worker {
		if p := pool.workers.Load(); p != nil {
			return *p
		}
		return nil
	}
	if len(started()) >= runtime.GOMAXPROCS(0)-1 {
		return dst // all started, all busy: fewer threads for this call
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	all := started()
	grown := false
	for ; n > 0 && len(all) < runtime.GOMAXPROCS(0)-1; n-- {
		w := new(worker)
		w.sleeper.init()
		w.busy.Store(true)
		// A new slice, so that readers of the old one are safe.
		all = append(all[:len(all):len(all)], w)
		grown = true
		go w.loop()
		dst = append(dst, w)
	}
	if grown {
		pool.workers.Store(&all)
	}
	return dst
}

// freeList is a stack of recycled objects; its methods need pool.mu held.
type freeList[T any] struct{ items []*T }

func (f *freeList[T]) get() *T {
	n := len(f.items)
	if n == 0 {
		return new(T)
	}
	x := f.items[n-1]
	f.items = f.items[:n-1]
	return x
}

func (f *freeList[T]) put(x *T) { f.items = append(f.items, x) }

func getCall() *call {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return pool.calls.get()
}

func putCall(c *call) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.calls.put(c)
}

func getWorkspace() *workspace {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return pool.workspaces.get()
}

func putWorkspace(ws *workspace) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.workspaces.put(ws)
}

// A cpuWorkspace is the packing buffers last used on one CPU.
type cpuWorkspace struct {
	busy atomic.Bool // held by a thread of a team
	ws   workspace
}

// cpuWorkspaces holds a workspace for each CPU that threads of a team have
// run on, up to GOMAXPROCS of them (a process with fewer Ps than the
// machine has CPUs may visit them all; their buffers are megabytes).
var cpuWorkspaces struct {
	slots [maxCPUWorkspaces]atomic.Pointer[cpuWorkspace]
	made  atomic.Int32
}

// maxCPUWorkspaces bounds the CPU numbers that get a workspace of their own.
const maxCPUWorkspaces = 1024

// teamWorkspace returns packing buffers for a thread of a team: those last
// used on the CPU the thread runs on, so that the blocks it packs, written
// anew each call (all of B, when each thread packs it for itself: 512 KiB
// at float64 n = 256), are written where their lines already lie. A worker
// that spins between calls yields its P now and then, and the Go scheduler
// then often resumes it on another thread, on another core: on the GPU
// machine's 16-core host 91% of the workers' shares after a 40us gap
// between calls ran on another CPU than the share before, and float64
// 256x256 TT took 133-175us (median) against 75-107us with no gap; with
// buffers kept by CPU, 96us against 91us (docs/PERFORMANCE.md, "Packing
// buffers by CPU"). When those buffers are taken (the thread moved
// mid-call and another came), the system cannot say which CPU, or
// GOMAXPROCS CPUs have buffers already, the buffers come from the free
// list, and slot is nil.
func teamWorkspace() (ws *workspace, slot *cpuWorkspace) {
	if cpu := currentCPU(); cpu >= 0 && cpu < maxCPUWorkspaces {
		slot = cpuWorkspaces.slots[cpu].Load()
		if slot == nil {
			slot = makeCPUWorkspace(cpu)
		}
		if slot != nil && !slot.busy.Load() && slot.busy.CompareAndSwap(false, true) {
			return &slot.ws, slot
		}
	}
	return getWorkspace(), nil
}

// makeCPUWorkspace makes CPU cpu's workspace, unless GOMAXPROCS of them
// exist already (then it returns nil), and returns it.
func makeCPUWorkspace(cpu int) *cpuWorkspace {
	if int(cpuWorkspaces.made.Add(1)) > runtime.GOMAXPROCS(0) {
		cpuWorkspaces.made.Add(-1)
		return nil
	}
	if !cpuWorkspaces.slots[cpu].CompareAndSwap(nil, new(cpuWorkspace)) {
		cpuWorkspaces.made.Add(-1) // another thread made it first
	}
	return cpuWorkspaces.slots[cpu].Load()
}

// releaseTeamWorkspace gives back what teamWorkspace returned.
func releaseTeamWorkspace(ws *workspace, slot *cpuWorkspace) {
	if slot != nil {
		slot.busy.Store(false)
		return
	}
	putWorkspace(ws)
}

// spinBarrier holds each of n threads until all n have arrived. The waits
// between a team's barriers are short, so a thread spins first; but the
// machine may have fewer free cores than the team has threads (other
// programs, other calls), and a thread spinning for a descheduled partner
// would only slow it down, so after a short spin it sleeps on a condition
// variable.
type spinBarrier struct {
	n       int32
	arrived atomic.Int32
	phase   atomic.Uint32
	mu      sync.Mutex
	wake    sync.Cond
}

func (b *spinBarrier) reset(n int) {
	b.n = int32(n)
	b.arrived.Store(0)
	b.wake.L = &b.mu
}

func (b *spinBarrier) wait() {
	if b.n == 1 {
		return
	}
	phase := b.phase.Load()
	if b.arrived.Add(1) == b.n {
		b.arrived.Store(0) // before the phase moves on, so that the next wait counts from zero
		b.mu.Lock()
		b.phase.Add(1)
		b.wake.Broadcast()
		b.mu.Unlock()
		return
	}
	if spinUntil(busySpin, func() bool { return b.phase.Load() != phase }) {
		return
	}
	b.mu.Lock()
	for b.phase.Load() == phase {
		b.wake.Wait()
	}
	b.mu.Unlock()
}
