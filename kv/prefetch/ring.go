package prefetch

import (
	"io"
	"io/fs"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/uring"
)

// Reads on a ring
//
// A Buffer in async mode starts its background reads on an io_uring when
// it can: the reader's goroutine submits the read and collects its
// completion when it needs the bytes, and no other goroutine takes part.
// A read handed to a pool goroutine must wake that goroutine on another
// thread; on a machine with two CPUs, where the reader decodes on one of
// them, that hand-off and the competition for the CPU ate the overlap
// async I/O exists for (see docs/benchmarks.md). Each Buffer borrows a
// ring from its Pool for its life, so rings are set up once and never
// shared between goroutines.
//
// A read goes to the pool goroutines instead when the Pool has no ring to
// lend (io_uring unsupported or disabled, or all lent), when the file has
// no descriptor (an in-memory file system), and when ReadAt would copy it
// from the file's memory mapping.

// maxRings bounds the rings a Pool lends at once; Buffers beyond it use
// the pool's goroutines.
const maxRings = 128

// ringEntries is the room of each ring: a Buffer has at most two reads in
// flight, one per slot.
const ringEntries = 4

// DisableRings makes the pool lend no rings: async reads all run on its
// goroutines. Call it before the pool is used.
func (p *Pool) DisableRings() {
	p.rings.Lock()
	p.rings.off = true
	p.rings.Unlock()
}

// getRing lends a ring, or returns nil when the pool has none to lend.
func (p *Pool) getRing() *uring.Ring {
	if p == nil {
		return nil
	}
	p.rings.Lock()
	defer p.rings.Unlock()
	if n := len(p.rings.free); n > 0 {
		r := p.rings.free[n-1]
		p.rings.free = p.rings.free[:n-1]
		return r
	}
	if p.rings.off || p.rings.closed || len(p.rings.made) >= maxRings {
		return nil
	}
	r, err := uring.New(ringEntries)
	if err != nil {
		// Unsupported, or refused (a seccomp filter, a limit): stop
		// asking; the pool's goroutines do the reads.
		p.rings.off = true
		return nil
	}
	// The pool keeps every ring it made reachable, and with it the
	// buffers of the reads in flight, even if a Buffer is never closed.
	p.rings.made[r] = true
	return r
}

// putRing takes back a lent ring with no read in flight.
func (p *Pool) putRing(r *uring.Ring) {
	p.rings.Lock()
	defer p.rings.Unlock()
	if p.rings.closed {
		delete(p.rings.made, r)
		_ = r.Close()
		return
	}
	p.rings.free = append(p.rings.free, r)
}

// closeRings closes the rings not lent; those lent are closed when they
// come back.
func (p *Pool) closeRings() {
	p.rings.Lock()
	defer p.rings.Unlock()
	p.rings.closed = true
	for _, r := range p.rings.free {
		delete(p.rings.made, r)
		_ = r.Close()
	}
	p.rings.free = nil
}

// fileDescriptor is implemented by files that reads can address by
// descriptor (*os.File and the vfs files built on it).
type fileDescriptor interface{ Fd() uintptr }

// ringSubmit starts the read of slot i's request on the buffer's ring. It
// returns false when the read should go to the pool instead.
func (b *Buffer) ringSubmit(i int) bool {
	s := &b.slots[i]
	r := &s.req
	if b.noRing || b.submitHook != nil || copiesFromMapping(b.f, len(r.Buf), r.Latency) {
		return false
	}
	if b.ring == nil {
		f, ok := b.f.(fileDescriptor)
		if !ok {
			b.noRing = true
			return false
		}
		if b.ring = b.pool.getRing(); b.ring == nil {
			b.noRing = true
			return false
		}
		b.fd = int(f.Fd())
	}
	if err := b.ring.Read(b.fd, r.Buf, r.Off, uint64(i)); err != nil {
		return false
	}
	s.onRing, s.ringDone = true, false
	return true
}

// ringCollect takes the finished reads off the ring until slot s's has
// finished, blocking for it when wait is set.
func (b *Buffer) ringCollect(s *slot, wait bool) {
	for !s.ringDone {
		ud, res, ok, err := b.ring.Completion(wait)
		if err != nil {
			// Waiting failed (no error is expected here). The read is
			// still the kernel's, and so is its buffer: poll.
			time.Sleep(50 * time.Microsecond)
			continue
		}
		if !ok {
			return
		}
		t := &b.slots[ud&1]
		r := &t.req
		switch {
		case res < 0:
			r.N, r.Err = 0, &fs.PathError{Op: "read", Path: fileName(b.f), Err: uring.ErrnoError(res)}
			// The reader reads the block itself, which reports the error
			// if it persists; reads that a ring refuses for this file
			// (a file system without support) go to the pool from now.
			b.noRing = true
		case int(res) < len(r.Buf):
			r.N, r.Err = int(res), io.EOF
		default:
			r.N, r.Err = int(res), nil
		}
		b.sink.Add(stats.FileReadCount, 1)
		b.sink.Add(stats.FileReadBytes, int64(r.N))
		b.sink.Add(stats.AsyncReadCount, 1)
		b.sink.Add(stats.AsyncReadBytes, int64(r.N))
		b.sink.Add(stats.AsyncReadRing, 1)
		t.ringDone = true
	}
}

// finished reports, without blocking, whether s's read has completed; a
// pool read's completion token is taken when it has.
func (b *Buffer) finished(s *slot) bool {
	if s.onRing {
		b.ringCollect(s, false)
		return s.ringDone
	}
	select {
	case <-s.req.done:
		return true
	default:
		return false
	}
}

// block waits for s's read to complete.
func (b *Buffer) block(s *slot) {
	if s.onRing {
		b.ringCollect(s, true)
		return
	}
	<-s.req.done
}

// returnRing gives the buffer's ring back to the pool once no read of the
// buffer is in flight on it.
func (b *Buffer) returnRing() {
	if b.ring == nil {
		return
	}
	if b.ring.InFlight() == 0 {
		b.pool.putRing(b.ring)
	} else {
		_ = b.ring.Close() // waits for the reads
		b.pool.rings.Lock()
		delete(b.pool.rings.made, b.ring)
		b.pool.rings.Unlock()
	}
	b.ring = nil
}

func fileName(f io.ReaderAt) string {
	if n, ok := f.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "file"
}
