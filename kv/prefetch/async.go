package prefetch

import (
	"errors"
	"io"

	"github.com/strata-db/strata/kv/stats"
)

// Async double buffering
//
// The two slots hold the head region, which the reader is consuming, and
// the tail region, which starts where the head's read ends and is read in
// the background. A seek splits one readahead window between them (step 4);
// from then on each refill reads a whole window, so that async I/O makes no
// more read calls than synchronous readahead: a read call costs CPU of its
// own (about 120 us for a 1 MiB direct read on the VM the benchmarks ran
// on), and refills of half a window made twice as many, which ate the
// overlap.
// A forward read:
//
//  1. Drops regions that end at or before it (the reader moved past them,
//     perhaps served by the block cache): a filled one is freed, one in
//     flight is abandoned. The tail becomes the head.
//  2. Served from the head when the head holds it. A free tail is
//     refilled first, before any waiting for the head's read ("a buffer
//     that empties is refilled at once": the slot the reader just left is
//     the one refilled, while the reader waits for or consumes the other),
//     unless the page cache serves the file (pageCached).
//  3. A block that begins in the head and ends in the tail is copied into
//     the overlap buffer: the head's part first, then the head is freed and
//     its refill submitted, and only then does the buffer wait for the
//     tail, so the device never idles while the reader waits.
//  4. Anything else is a miss: every region is released and, if readahead
//     is due, the tail's read is submitted first and the head's (the block
//     plus half the window) is done on the reader's goroutine while the tail
//     is in flight. With an explicit window this is what a seek does: two
//     reads at once, the needed length plus half the window, then the other
//     half.
//
// The reader's goroutine owns every state change; a pool goroutine (or the
// kernel, for a read on the buffer's ring) only fills a request's bytes
// and signals its completion. A region abandoned in
// flight is reused only after its read completes (Go cannot cancel a
// pread), and a completion is accepted only when its generation is the
// slot's current one.

// readAsync serves a forward read in async mode.
func (b *Buffer) readAsync(off int64, n int) ([]byte, bool, error) {
	end := off + int64(n)
	b.dropBefore(off)
	h := &b.slots[b.head]
	if h.live() && h.off <= off && off < h.end() {
		// Refill the slot the reader just left before waiting for this one.
		b.topUp()
		if h.state == slotInFlight {
			b.wait(h)
		}
		if h.state == slotFilled && off < h.end() {
			if end <= h.end() {
				p := b.serve(h, off, n, true)
				b.topUp()
				return p, true, nil
			}
			if t := &b.slots[b.head^1]; t.live() && t.off == h.end() {
				if p, ok := b.straddle(off, n); ok {
					return p, true, nil
				}
			}
		}
	}
	b.releaseAll()
	if !b.ra.Eligible() || b.pageCached(n) {
		return nil, false, nil
	}
	return b.fillAsync(off, n, b.ra.Take())
}

// dropBefore releases the regions that end at or before off and makes the
// lowest live region the head.
func (b *Buffer) dropBefore(off int64) {
	for range 2 {
		h, t := &b.slots[b.head], &b.slots[b.head^1]
		if h.live() && h.end() <= off {
			b.release(h)
		}
		if h.live() || !t.live() {
			return
		}
		b.head ^= 1
	}
}

// straddle assembles the block at [off, off+n), which begins in the head
// and continues in the tail, in the overlap buffer.
func (b *Buffer) straddle(off int64, n int) ([]byte, bool) {
	h, t := &b.slots[b.head], &b.slots[b.head^1]
	if b.overlap == nil || len(b.overlap.b) < n {
		putMem(b.overlap)
		b.overlap = getMem(n, 1)
	}
	ov := b.overlap.b[:n:n]
	part := copy(ov, h.mem.b[off-h.off:h.n])
	b.sink.Add(stats.PrefetchBytesUsed, h.used.add(off, int64(part)))
	b.drop(h)
	b.head ^= 1
	b.topUp() // refill the drained slot before waiting for the tail
	if t.state == slotInFlight {
		b.wait(t)
	}
	rest := n - part
	if t.state != slotFilled || t.off != off+int64(part) || t.n < rest {
		return nil, false
	}
	copy(ov[part:], t.mem.b[:rest])
	b.sink.Add(stats.PrefetchBytesUsed, t.used.add(t.off, int64(rest)))
	b.sink.Add(stats.PrefetchHits, 1)
	return ov, true
}

// topUp submits the tail's read, a whole window, when the tail is free, the
// head is live, the head stops short of the limit, readahead is due, and
// the page cache does not serve the file (pageCached).
func (b *Buffer) topUp() {
	h, t := &b.slots[b.head], &b.slots[b.head^1]
	if !h.live() {
		return
	}
	start := h.end()
	if start >= b.limit || !b.aligned(start) {
		return
	}
	if t.state == slotAbandoned {
		b.reap(t, false)
	}
	if t.state != slotFree || !b.ra.Eligible() || b.pageCached(0) {
		return
	}
	size := max(b.ra.Take(), 1)
	stop := b.alignUp(min(start+size, b.limit))
	b.submit(t, start, int(stop-start))
}

// fillAsync handles a miss with a window of size: the tail's read of the
// window's second half is submitted, then the head's read of the block and
// the first half is done on this goroutine.
func (b *Buffer) fillAsync(off int64, n int, size int64) ([]byte, bool, error) {
	end := off + int64(n)
	half := max(size/2, 1)
	hs := b.alignDown(off)
	he := b.alignUp(b.clamp(end, end+half))

	// The head needs a free slot; a slot still abandoned is reused only
	// after its read completes, so wait for one only when both are.
	b.reap(&b.slots[0], false)
	b.reap(&b.slots[1], false)
	hi := 0
	if b.slots[0].state != slotFree {
		hi = 1
	}
	if b.slots[hi].state != slotFree {
		b.reap(&b.slots[hi], true)
	}
	b.head = hi
	h, t := &b.slots[hi], &b.slots[hi^1]
	if t.state == slotFree && he < b.limit && b.aligned(he) {
		te := b.alignUp(min(he+half, b.limit))
		b.submit(t, he, int(te-he))
	}
	if err := b.fill(h, hs, he, end, 0); err != nil {
		return nil, false, err
	}
	return b.serve(h, off, n, false), true, nil
}

// submit starts the background read of [start, start+length) into s.
// REQUIRES: s is free.
func (b *Buffer) submit(s *slot, start int64, length int) {
	if s.mem == nil || len(s.mem.b) < length {
		putMem(s.mem)
		s.mem = getMem(length, b.align)
	}
	s.gen++
	r := &s.req
	r.File, r.Buf, r.Off, r.Sink, r.N, r.Err, r.gen = b.f, s.mem.b[:length:length], start, b.sink, 0, nil, s.gen
	// The gauge decides whether the read copies from a mapping, and learns
	// how long it took (see ReadAt).
	r.Latency = b.pool.Latency()
	s.state, s.off, s.n, s.fetched = slotInFlight, start, length, 0
	s.used.reset()
	var err error
	if b.submitHook != nil {
		err = b.submitHook(r)
	} else {
		if b.ring == nil {
			b.ring = b.pool.Ring()
		}
		err = b.ring.Submit(r)
	}
	if err != nil {
		// The pool is closed: read here, and complete as the pool would.
		r.init()
		r.run(false)
		r.done <- struct{}{}
	}
}

// wait blocks until the read of the in-flight region s completes, then
// accepts it.
func (b *Buffer) wait(s *slot) {
	s.req.waitCounted(b.sink, b.beforeWait)
	b.complete(s)
}

// reap collects the completion of the abandoned region s, blocking for it
// when block is set; s is free afterwards unless it is still in flight.
func (b *Buffer) reap(s *slot, block bool) {
	if s.state != slotAbandoned {
		return
	}
	if block {
		if b.beforeWait != nil {
			b.beforeWait(&s.req)
		}
		s.req.Wait()
	} else if !s.req.poll() {
		return
	}
	b.complete(s)
}

// complete accepts the finished read of s, whose completion token was
// received: a current, successful read fills s; an abandoned, stale or
// failed one frees it, its bytes counted as wasted. A failed read is not
// reported: the reader falls back to reading the block itself, which
// reports the error if it persists.
func (b *Buffer) complete(s *slot) {
	r := &s.req
	got := int64(r.N)
	b.sink.Add(stats.PrefetchBytes, got)
	if s.state != slotInFlight || r.gen != s.gen || r.N == 0 || (r.Err != nil && !errors.Is(r.Err, io.EOF)) {
		if got > 0 {
			b.sink.Add(stats.PrefetchBytesWasted, got)
		}
		s.state, s.fetched = slotFree, 0
		s.used.reset()
		return
	}
	s.state, s.n, s.fetched = slotFilled, r.N, got
	s.used.reset()
}

// release drops a live region: a filled one is freed, one in flight is
// abandoned (its read keeps running; reap collects it).
func (b *Buffer) release(s *slot) {
	switch s.state {
	case slotFilled:
		b.drop(s)
	case slotInFlight:
		s.state = slotAbandoned
		s.gen++
		b.sink.Add(stats.AsyncReadAbandoned, 1)
	}
}

// releaseAll releases both regions.
func (b *Buffer) releaseAll() {
	b.release(&b.slots[0])
	b.release(&b.slots[1])
	b.head = 0
}
