package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minFlopsPerThread is the least work (2*m*n*k flops) worth a thread of its
// own: below it, starting a worker and the barriers cost more than they save.
// A variable so that tests can make small products use many threads.
var minFlopsPerThread = 1 << 21

// workspace is one thread's packing buffers, for both element types.
type workspace struct {
	f32 packBuffers[float32]
	f64 packBuffers[float64]
	i32 packBuffers[int32]
}

// team is the threads working on one call, and how they divide it.
type team struct {
	size      int
	splitRows bool // each thread a band of C's rows (else of its columns)
	barrier   spinBarrier
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
	helpers []*worker // reused for the next call
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

// A worker is a pool goroutine with its own packing buffers. It runs one
// thread's share of a call at a time.
type worker struct {
	jobs chan job
	ws   workspace
}

type job struct {
	call *call
	id   int
}

func (w *worker) loop() {
	for j := range w.jobs {
		c := j.call
		c.work(j.id, &w.ws)
		putWorker(w) // idle again before the caller can return and ask for it
		c.done.Done()
	}
}

// pool is the persistent set of workers, plus free lists that let a call in
// steady state allocate nothing. A call takes idle workers for itself, so a
// thread never waits at a barrier for a member that is queued behind another
// call: with several calls at once, each gets fewer threads, never a
// deadlock.
var pool struct {
	mu         sync.Mutex
	started    int // workers ever started; never more than GOMAXPROCS-1
	idle       []*worker
	calls      []*call
	workspaces []*workspace
}

// run computes p on as many threads as it is worth and the pool can give.
func run[T Element](p *problem[T]) {
	mr, nr := p.eng.kernel.MR, p.eng.kernel.NR
	want := threadsFor(p.m, p.n, p.k, mr, nr)
	c := getCall()
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
	// Rows when there are enough of them for every thread to have a few
	// blocks: each thread then packs only its own A. Otherwise columns.
	splitRows := ceilDiv(p.m, mr) >= 4*size || p.m >= p.n
	c.team.size, c.team.splitRows = size, splitRows
	c.team.barrier.reset(size)
	sa, sb := p.sharedSizes(splitRows)
	shared := buffersOf[T](&c.shared)
	shared.a.get(sa)
	shared.b.get(sb)

	c.done.Add(len(helpers))
	for i, w := range helpers {
		w.jobs <- job{call: c, id: i + 1}
	}
	ws := getWorkspace()
	c.work(0, ws) // the caller is thread 0
	putWorkspace(ws)
	c.done.Wait()

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

// threadsFor returns how many threads an m x n x k product is worth.
func threadsFor(m, n, k, mr, nr int) int {
	t := runtime.GOMAXPROCS(0)
	flops := 2 * float64(m) * float64(n) * float64(k)
	t = min(t, int(flops/float64(minFlopsPerThread)))
	t = min(t, max(ceilDiv(m, mr), ceilDiv(n, nr))) // every thread needs a block
	return max(t, 1)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// takeWorkers appends up to n idle workers to dst, starting new ones while
// fewer than GOMAXPROCS-1 exist.
func takeWorkers(n int, dst []*worker) []*worker {
	if n <= 0 {
		return dst
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	for ; n > 0 && len(pool.idle) > 0; n-- {
		last := len(pool.idle) - 1
		dst = append(dst, pool.idle[last])
		pool.idle = pool.idle[:last]
	}
	for ; n > 0 && pool.started < runtime.GOMAXPROCS(0)-1; n-- {
		w := &worker{jobs: make(chan job, 1)}
		pool.started++
		go w.loop()
		dst = append(dst, w)
	}
	return dst
}

func putWorker(w *worker) {
	pool.mu.Lock()
	pool.idle = append(pool.idle, w)
	pool.mu.Unlock()
}

func getCall() *call {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if n := len(pool.calls); n > 0 {
		c := pool.calls[n-1]
		pool.calls = pool.calls[:n-1]
		return c
	}
	return new(call)
}

func putCall(c *call) {
	pool.mu.Lock()
	pool.calls = append(pool.calls, c)
	pool.mu.Unlock()
}

func getWorkspace() *workspace {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if n := len(pool.workspaces); n > 0 {
		ws := pool.workspaces[n-1]
		pool.workspaces = pool.workspaces[:n-1]
		return ws
	}
	return new(workspace)
}

func putWorkspace(ws *workspace) {
	pool.mu.Lock()
	pool.workspaces = append(pool.workspaces, ws)
	pool.mu.Unlock()
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

// spinLimit is how many times a waiting thread checks the barrier before it
// sleeps: a few microseconds.
const spinLimit = 4000

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
	for range spinLimit {
		if b.phase.Load() != phase {
			return
		}
	}
	b.mu.Lock()
	for b.phase.Load() == phase {
		b.wake.Wait()
	}
	b.mu.Unlock()
}
