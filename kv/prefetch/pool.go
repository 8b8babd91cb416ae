package prefetch

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/strata-db/strata/kv/stats"
)

// DefaultQueueDepth is the number of reads a Pool runs at once when
// NewPool is given zero.
const DefaultQueueDepth = 32

// maxQueueDepth bounds the queue depth: beyond it more goroutines only add
// contention on the device queue.
const maxQueueDepth = 1024

// Pool runs background reads on a fixed set of goroutines: the queue depth.
// A read blocks its goroutine in pread; the Go runtime parks that thread
// and keeps running others, so a blocking read is all a background read
// needs.
//
// The creator of a Pool owns its goroutines and must Close it, after which
// no goroutine of the pool is left. A database makes one Pool and shares it
// between every iterator and MultiScan.
//
// A Pool is safe for concurrent use.
type Pool struct {
	// mu guards closing against submission: Submit holds it shared while it
	// queues, Close exclusively while it closes the queue.
	mu struct {
		sync.RWMutex
		closed bool
	}
	reqs    chan *Request
	depth   int
	wg      sync.WaitGroup
	latency Latency
	// rings are the io_uring instances the pool lends (see ring.go).
	rings struct {
		sync.Mutex
		free   []*Ring
		made   map[*Ring]bool // made and not closed, free or lent
		plain  Ring           // lent when there is no ring: reads go to the pool
		off    bool
		closed bool
	}
}

// Latency returns the pool's measure of read latency, which the reads that
// set Request.Latency to it feed, on the pool or not; nil for a nil pool,
// which ReadAt takes as reads known to be fast.
func (p *Pool) Latency() *Latency {
	if p == nil {
		return nil
	}
	return &p.latency
}

// Overlaps reports whether n reads are better issued at once on the pool
// than in turn by the caller: there are several, and reads have lately
// been reaching the device. Reads the OS page cache serves take less time
// than a hand-off to the pool and back.
func (p *Pool) Overlaps(n int) bool { return n > 1 && p.latency.Slow() }

// NewPool starts a pool of depth goroutines (DefaultQueueDepth if depth <=
// 0; at most 1024).
func NewPool(depth int) *Pool {
	if depth <= 0 {
		depth = DefaultQueueDepth
	}
	depth = min(depth, maxQueueDepth)
	p := &Pool{reqs: make(chan *Request, depth), depth: depth}
	p.rings.made = make(map[*Ring]bool)
	p.rings.plain.pool = p
	p.wg.Add(depth)
	for range depth {
		go p.worker()
	}
	return p
}

// QueueDepth returns the number of reads the pool runs at once.
func (p *Pool) QueueDepth() int { return p.depth }

func (p *Pool) worker() {
	defer p.wg.Done()
	for r := range p.reqs {
		r.run(true)
		// The send never blocks: done has room for the one completion of
		// the one outstanding submission. r is not touched afterwards.
		r.done <- struct{}{}
	}
}

// Submit queues r, blocking while the queue is full. It returns
// ErrPoolClosed, without queueing, once Close has begun: the caller may
// then call r.Run itself. Wait (or Done) reports the read's completion.
// REQUIRES: r is not outstanding (a previous submission of r was waited
// for).
func (p *Pool) Submit(r *Request) error {
	r.init()
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.mu.closed {
		return ErrPoolClosed
	}
	p.reqs <- r
	return nil
}

// Close stops the pool: it waits for every queued and running read to
// complete and for every goroutine to exit. Submit fails afterwards. A
// second Close returns ErrPoolClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return ErrPoolClosed
	}
	p.mu.closed = true
	close(p.reqs)
	p.mu.Unlock()
	p.wg.Wait()
	p.closeRings()
	return nil
}

// Request is one positional read: Buf is filled from File at Off. Set
// File, Buf, Off and Sink, then Submit it to a Pool (or Run it); after Wait,
// N and Err hold the result. A Request may be reused once waited for; it
// keeps its completion channel, so reuse does not allocate.
type Request struct {
	File io.ReaderAt
	Buf  []byte
	Off  int64
	// Sink receives file.read.count/bytes, and async.read.count/bytes when
	// the read ran on a pool.
	Sink stats.Sink
	// Latency, when not nil, receives the duration of the read (see
	// Latency.ObserveRead).
	Latency *Latency

	// N is the number of bytes read, Err the read's error. A read that
	// reaches the end of the file is short with Err io.EOF.
	N   int
	Err error

	done chan struct{}
	gen  uint64 // the Buffer generation the read belongs to
	// ring is the Ring the read is in flight on, nil when it went to the
	// pool; ringDone is set once the ring's completion was collected.
	ring     *Ring
	ringDone bool
	start    time.Duration // when the ring took it, since epoch
}

func (r *Request) init() {
	if r.done == nil {
		r.done = make(chan struct{}, 1)
	}
	r.ring = nil // a previous read on a ring is over
}

// Run performs the read on the calling goroutine.
func (r *Request) Run() { r.run(false) }

func (r *Request) run(async bool) {
	n, err := ReadAt(r.File, r.Buf, r.Off, r.Latency, r.Sink)
	if n == len(r.Buf) && errors.Is(err, io.EOF) {
		err = nil
	}
	r.N, r.Err = n, err
	if async {
		r.Sink.Add(stats.AsyncReadCount, 1)
		r.Sink.Add(stats.AsyncReadBytes, int64(n))
	}
}

// Done returns a channel that receives once when the read submitted to a
// Pool has completed; receiving from it takes the place of Wait. A read
// started on a Ring has no channel: Wait collects it.
func (r *Request) Done() <-chan struct{} { return r.done }
