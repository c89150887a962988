package gemm

import (
	"runtime"
	"sync"
)

// minFlopsPerThread is the least work (2*m*n*k flops) worth a thread of its
// own: below it, handing a piece to a worker costs more than it saves.
var minFlopsPerThread = 1 << 21

// workspace is one thread's packing buffers, for both element types.
type workspace struct {
	f32 packBuffers[float32]
	f64 packBuffers[float64]
}

// job is one piece of C for a pool worker.
type job struct {
	call  *call
	piece int
}

// call is one multiply in flight: its problem (of either type), the split of
// C into pieces, and the count of pieces still running. Calls are recycled.
type call struct {
	f32    problem[float32]
	f64    problem[float64]
	double bool
	split  split
	wg     sync.WaitGroup
}

func (c *call) runPiece(i int, ws *workspace) {
	if c.double {
		p := &c.f64
		m0, m1, n0, n1 := c.split.bounds(i, p.m, p.n, p.eng.kernel.MR, p.eng.kernel.NR)
		p.runPiece(&ws.f64, m0, m1, n0, n1)
		return
	}
	p := &c.f32
	m0, m1, n0, n1 := c.split.bounds(i, p.m, p.n, p.eng.kernel.MR, p.eng.kernel.NR)
	p.runPiece(&ws.f32, m0, m1, n0, n1)
}

// pool is the persistent set of worker goroutines, plus the free lists that
// let a call in steady state allocate nothing.
var pool struct {
	mu         sync.Mutex
	workers    int
	jobs       chan job
	calls      []*call
	workspaces []*workspace
}

// run computes p, on several threads if it is large enough.
func run[T Float](p *problem[T]) {
	mr, nr := p.eng.kernel.MR, p.eng.kernel.NR
	threads := threadsFor(p.m, p.n, p.k, mr, nr)
	if threads == 1 {
		ws := getWorkspace()
		switch q := any(p).(type) {
		case *problem[float32]:
			q.runPiece(&ws.f32, 0, q.m, 0, q.n)
		case *problem[float64]:
			q.runPiece(&ws.f64, 0, q.m, 0, q.n)
		}
		putWorkspace(ws)
		return
	}
	c := getCall()
	switch q := any(p).(type) {
	case *problem[float32]:
		c.f32, c.double = *q, false
	case *problem[float64]:
		c.f64, c.double = *q, true
	}
	c.split = chooseSplit(threads, p.m, p.n, mr, nr)
	pieces := c.split.pm * c.split.pn
	startWorkers(pieces - 1)
	c.wg.Add(pieces - 1)
	for i := 1; i < pieces; i++ {
		pool.jobs <- job{call: c, piece: i}
	}
	ws := getWorkspace()
	c.runPiece(0, ws) // the caller does a share rather than sit idle
	putWorkspace(ws)
	c.wg.Wait()
	c.f32, c.f64 = problem[float32]{}, problem[float64]{} // let go of the caller's slices
	putCall(c)
}

// threadsFor returns how many threads an m x n x k product should use.
func threadsFor(m, n, k, mr, nr int) int {
	t := runtime.GOMAXPROCS(0)
	flops := 2 * float64(m) * float64(n) * float64(k)
	t = min(t, int(flops/float64(minFlopsPerThread)))
	t = min(t, ceilDiv(m, mr)*ceilDiv(n, nr)) // a piece needs a block of its own
	return max(t, 1)
}

// split divides C into pm x pn pieces along micro-kernel block boundaries.
type split struct{ pm, pn int }

// chooseSplit picks the split of an m x n result among t threads: as many
// pieces as threads, each as close to square as the factors allow, which
// keeps the panels each piece packs (its rows of A, its columns of B) small.
func chooseSplit(t, m, n, mr, nr int) split {
	best, bestScore := split{1, 1}, -1.0
	mt, nt := ceilDiv(m, mr), ceilDiv(n, nr)
	for pm := 1; pm <= t; pm++ {
		pn := t / pm
		if pm > mt || pn > nt || pn == 0 {
			continue
		}
		h, w := float64(m)/float64(pm), float64(n)/float64(pn)
		score := float64(pm*pn) * min(h/w, w/h) // more pieces first, then squarer
		if pm*pn > best.pm*best.pn || score > bestScore && pm*pn == best.pm*best.pn {
			best, bestScore = split{pm, pn}, score
		}
	}
	return best
}

// bounds returns the rows m0..m1 and columns n0..n1 of piece i.
func (s split) bounds(i, m, n, mr, nr int) (m0, m1, n0, n1 int) {
	ri, ci := i/s.pn, i%s.pn
	mt, nt := ceilDiv(m, mr), ceilDiv(n, nr)
	m0, m1 = ri*mt/s.pm*mr, min(m, (ri+1)*mt/s.pm*mr)
	n0, n1 = ci*nt/s.pn*nr, min(n, (ci+1)*nt/s.pn*nr)
	return m0, m1, n0, n1
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// startWorkers makes sure at least n workers are running. Workers never
// stop: they hold their packing buffers for the next call.
func startWorkers(n int) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.jobs == nil {
		pool.jobs = make(chan job, 64)
	}
	for ; pool.workers < n; pool.workers++ {
		go worker(pool.jobs)
	}
}

func worker(jobs <-chan job) {
	ws := new(workspace)
	for j := range jobs {
		j.call.runPiece(j.piece, ws)
		j.call.wg.Done()
	}
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
