package prefetch

import (
	"math/bits"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/uring"
)

// Reads on a ring
//
// Background reads go to an io_uring when they can: the goroutine that
// needs the bytes submits the reads and collects their completions itself,
// and no other goroutine takes part. A read handed to a pool goroutine
// must wake that goroutine on another thread; on a machine with two CPUs,
// where the reader decodes on one of them, that hand-off and the
// competition for the CPU ate the overlap async I/O exists for (see
// docs/benchmarks.md).
//
// A Ring is borrowed from the Pool by one goroutine for one job: a Buffer
// for its life, a MultiScan's prepare or a MultiGet's block loads for
// theirs. Rings are set up on demand, reused, and never shared between
// goroutines at once. A read goes to the pool's goroutines instead when
// the Pool has no ring to lend (io_uring unsupported or refused,
// DisableRings, all maxRings lent), when the ring is full, when the file
// has no descriptor (an in-memory file system), and when ReadAt would copy
// it from the file's memory mapping. A read the ring fails or cuts short
// is read again with ReadAt when it is collected, so a ring never reports
// an error that pread would not.

// maxRings bounds the rings a Pool lends at once.
const maxRings = 128

// ringEntries is the number of reads one Ring holds in flight.
const ringEntries = 64

// Ring is a borrowed io_uring with the requests in flight on it. It is not
// safe for concurrent use.
type Ring struct {
	pool *Pool
	u    *uring.Ring // nil: every read goes to the pool
	used uint64      // bit i: reqs[i] is in flight
	reqs [ringEntries]*Request
	// failed is set when a read failed on the ring: the rest of the job's
	// reads go to the pool.
	failed bool
}

// DisableRings makes the pool lend no rings: background reads all run on
// its goroutines. Call it before the pool is used.
func (p *Pool) DisableRings() {
	p.rings.Lock()
	p.rings.off = true
	p.rings.Unlock()
}

// Ring lends a ring for one job; return it with Ring.Close once the job's
// reads were waited for. Without an io_uring to lend, the Ring hands every
// read to the pool's goroutines. A nil Pool lends nil.
func (p *Pool) Ring() *Ring {
	if p == nil {
		return nil
	}
	p.rings.Lock()
	defer p.rings.Unlock()
	if n := len(p.rings.free); n > 0 {
		g := p.rings.free[n-1]
		p.rings.free = p.rings.free[:n-1]
		return g
	}
	if p.rings.off || p.rings.closed || len(p.rings.made) >= maxRings {
		return &p.rings.plain
	}
	u, err := uring.New(ringEntries)
	if err != nil {
		// Unsupported, or refused (a seccomp filter, a limit): stop
		// asking; the pool's goroutines do the reads.
		p.rings.off = true
		return &p.rings.plain
	}
	g := &Ring{pool: p, u: u}
	// The pool keeps every ring it made reachable, and with it the
	// requests and buffers of the reads in flight, even when a borrower
	// never returns its ring.
	p.rings.made[g] = true
	return g
}

// Submit starts r's read on the ring, or on the pool when the ring cannot
// take it (see above). Its error is the pool's: ErrPoolClosed, after which
// the caller may Run r itself. r.Wait reports the completion either way.
// REQUIRES: r is not outstanding.
func (g *Ring) Submit(r *Request) error {
	if g.u == nil || g.failed || g.used == ^uint64(0) || copiesFromMapping(r.File, len(r.Buf), r.Latency) {
		return g.pool.Submit(r)
	}
	f, ok := r.File.(fileDescriptor)
	if !ok || len(r.Buf) == 0 {
		return g.pool.Submit(r)
	}
	i := bits.TrailingZeros64(^g.used)
	start := time.Since(epoch)
	if err := g.u.Read(int(f.Fd()), r.Buf, r.Off, uint64(i)); err != nil {
		return g.pool.Submit(r)
	}
	g.used |= 1 << i
	g.reqs[i] = r
	r.ring, r.ringDone, r.N, r.Err, r.start = g, false, 0, nil, start
	// A read the page cache serves has completed already, during the
	// submission: take it now, so that the latency it reports is the
	// submission's and not the time until someone collects it.
	for g.reap(false) {
	}
	return nil
}

// collect takes finished reads off the ring until want's has finished,
// blocking for it when wait is set.
func (g *Ring) collect(want *Request, wait bool) {
	for !want.ringDone && g.reap(wait) {
	}
}

// reap takes one finished read off the ring, blocking for one when wait is
// set; it reports whether it took one.
func (g *Ring) reap(wait bool) bool {
	for {
		ud, res, ok, err := g.u.Completion(wait)
		if err != nil {
			// Waiting failed (no error is expected here). The read is
			// still the kernel's, and so is its buffer: poll.
			time.Sleep(50 * time.Microsecond)
			continue
		}
		if !ok {
			return false
		}
		r := g.reqs[ud]
		g.reqs[ud] = nil
		g.used &^= 1 << ud
		if res < 0 || int(res) < len(r.Buf) {
			// Failed, or short (the end of the file, or a file system
			// that stops early): pread says which, with its own error.
			g.failed = g.failed || res < 0
			r.run(false) // feeds r.Latency itself
		} else {
			r.N, r.Err = int(res), nil
			r.Sink.Add(stats.FileReadCount, 1)
			r.Sink.Add(stats.FileReadBytes, int64(r.N))
			if r.Latency != nil {
				// Until the completion was seen: the submission itself
				// for a read the page cache served (see Submit), at
				// most the device's time plus the collector's delay
				// otherwise.
				r.Latency.ObserveRead(len(r.Buf), time.Since(epoch)-r.start)
			}
		}
		r.Sink.Add(stats.AsyncReadCount, 1)
		r.Sink.Add(stats.AsyncReadBytes, int64(r.N))
		r.Sink.Add(stats.AsyncReadRing, 1)
		r.ringDone = true
		return true
	}
}

// Close waits for the reads still in flight on the ring and returns it to
// its pool. A nil Ring is ignored.
func (g *Ring) Close() {
	if g == nil || g.u == nil {
		return
	}
	for g.used != 0 {
		g.collect(g.reqs[bits.TrailingZeros64(g.used)], true)
	}
	g.failed = false
	p := g.pool
	p.rings.Lock()
	defer p.rings.Unlock()
	if p.rings.closed {
		delete(p.rings.made, g)
		_ = g.u.Close()
		return
	}
	p.rings.free = append(p.rings.free, g)
}

// closeRings closes the rings not lent; those lent are closed when they
// come back.
func (p *Pool) closeRings() {
	p.rings.Lock()
	defer p.rings.Unlock()
	p.rings.closed = true
	for _, g := range p.rings.free {
		delete(p.rings.made, g)
		_ = g.u.Close()
	}
	p.rings.free = nil
}

// fileDescriptor is implemented by files that reads can address by
// descriptor (*os.File and the vfs files built on it).
type fileDescriptor interface{ Fd() uintptr }

// Wait blocks until the submitted read has completed.
func (r *Request) Wait() {
	if g := r.ring; g != nil {
		g.collect(r, true)
		r.ring = nil
		return
	}
	<-r.done
}

// WaitCounted is Wait for a reader that needs the read now: a read still
// in flight counts one async.wait.count, and the time waited in
// async.wait.micros, in r.Sink.
func (r *Request) WaitCounted() { r.waitCounted(r.Sink, nil) }

// waitCounted is WaitCounted counting in sink, with before (a test's hook)
// called when the read must be waited for.
func (r *Request) waitCounted(sink stats.Sink, before func(*Request)) {
	if r.poll() {
		return
	}
	if before != nil {
		before(r)
	}
	t0 := time.Now()
	r.Wait()
	sink.Add(stats.AsyncWaitCount, 1)
	sink.Add(stats.AsyncWaitMicros, time.Since(t0).Microseconds())
}

// poll reports, without blocking, whether the submitted read has
// completed; when it has, the completion is taken (do not Wait as well).
func (r *Request) poll() bool {
	if g := r.ring; g != nil {
		g.collect(r, false)
		if !r.ringDone {
			return false
		}
		r.ring = nil
		return true
	}
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}
