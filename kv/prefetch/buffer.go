package prefetch

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
)

// Access says which way the reader of a Buffer is moving.
type Access uint8

const (
	// Forward reads come from seeks and forward iteration: they drive
	// readahead.
	Forward Access = iota
	// Backward reads come from reverse iteration: they are served from
	// buffered bytes when possible and never read ahead (as in RocksDB,
	// reverse scans do not prefetch).
	Backward
)

// Options configure a Buffer.
type Options struct {
	// ReadaheadSize, when positive, is an explicit readahead: every read
	// that misses the buffer reads this many bytes past the block, from the
	// first read on (clamped to MaxReadaheadSize). Zero selects automatic
	// readahead. Neither reads anything while the page cache serves a
	// mapped file (see pageCached), unless ForceReadahead.
	ReadaheadSize int64
	// InitialReadahead and MaxReadahead size automatic readahead: the first
	// window and the largest. Zero means DefaultInitialReadahead and
	// DefaultMaxReadahead; a negative MaxReadahead disables automatic
	// readahead (RocksDB spells that max_auto_readahead_size = 0; here the
	// zero value means the defaults).
	InitialReadahead int64
	MaxReadahead     int64
	// AsyncIO double-buffers: one region is read in the background on Pool
	// while the other is consumed. Without a Pool it has no effect.
	AsyncIO bool
	Pool    *Pool
	// ForceReadahead reads ahead even while the page cache serves the
	// file's reads (see pageCached): for a reader of a whole file, such as
	// a compaction, whose blocks the shared gauge, fed by other readers,
	// says nothing of, and which would fault a cold file's mapping in a
	// page at a time.
	ForceReadahead bool
	// Limit is the offset no read goes past (the end of the data blocks, or
	// of the block holding the reader's upper bound), but for the rounding of
	// direct I/O. Zero or less means no limit.
	Limit int64
	// Stats receives the buffer's counts (see the package comment).
	Stats stats.Sink
}

// Enabled reports whether a Buffer with these options ever reads ahead.
func (o Options) Enabled() bool { return o.ReadaheadSize > 0 || o.MaxReadahead >= 0 }

func (o Options) readahead() Readahead {
	switch {
	case o.ReadaheadSize > 0:
		return MakeExplicitReadahead(o.ReadaheadSize)
	case o.MaxReadahead < 0:
		return MakeReadahead(0, 0)
	}
	initial, maxSize := o.InitialReadahead, o.MaxReadahead
	if initial <= 0 {
		initial = DefaultInitialReadahead
	}
	if maxSize == 0 {
		maxSize = DefaultMaxReadahead
	}
	return MakeReadahead(initial, maxSize)
}

// Buffer is one reader's prefetch buffer over one immutable file: it
// serves block reads from regions of the file it read ahead, and tells the
// caller when it has nothing to offer (the caller then reads the block
// itself). See the package comment for the two modes.
//
// Bytes returned by Read are valid until the next call of Read, Observe or
// Close on the Buffer.
//
// A Buffer is not safe for concurrent use. The zero Buffer must be Init'ed
// before use; Close it before closing the file.
type Buffer struct {
	f     io.ReaderAt
	align int
	limit int64
	// limitSrc, when not nil, replaces limit before the next read.
	limitSrc LimitSource
	sink     stats.Sink
	ra       Readahead
	async    bool
	force    bool // Options.ForceReadahead
	pool     *Pool
	// ring is the ring borrowed from pool for the buffer's life, at its
	// first background read (see ring.go).
	ring *Ring

	// slots hold the buffered regions. Synchronous mode uses slots[0] only.
	// In async mode slots[head] is the region at the lower offset and,
	// when both are live, slots[head^1] starts at its requested end.
	slots   [2]slot
	head    int
	overlap *memBuf // a block straddling both slots is assembled here
	closed  bool

	// Test hooks: submitHook replaces Pool.Submit, beforeWait runs before
	// the buffer blocks on a read in flight.
	submitHook func(*Request) error
	beforeWait func(*Request)
}

// slotState is the state of one buffered region. Transitions happen only
// on the Buffer's goroutine:
//
//	free      -> inFlight  (read submitted)         -> filled (read done, checked)
//	inFlight  -> abandoned (reader moved away)      -> free   (read done, bytes dropped)
//	filled    -> free      (consumed or outdated)
//	free      -> filled    (read on the Buffer's own goroutine)
type slotState uint8

const (
	slotFree slotState = iota
	slotInFlight
	slotFilled
	slotAbandoned
)

var slotStateNames = [...]string{"free", "inFlight", "filled", "abandoned"}

type slot struct {
	state slotState
	mem   *memBuf
	// off is the file offset of mem.b[0]. n is the number of valid bytes
	// when filled, the requested length when inFlight or abandoned.
	off int64
	n   int
	// fetched counts the bytes read into the region since it was last free
	// and still held, used the parts of them handed out (each byte once,
	// however often): fetched - used.total() is wasted if dropped now.
	fetched int64
	used    spans
	// gen is the generation of the region's current read: bumped at every
	// submission and when the read is abandoned, so that a completion is
	// accepted only by the assignment that issued it.
	gen uint64
	req Request
}

func (s *slot) end() int64 { return s.off + int64(s.n) }
func (s *slot) live() bool { return s.state == slotInFlight || s.state == slotFilled }

// alignmentOf returns the read alignment f requires (1 for none).
func alignmentOf(f io.ReaderAt) int {
	if a, ok := f.(interface{ Alignment() int }); ok {
		if n := a.Alignment(); n > 1 && n&(n-1) == 0 {
			return n
		}
	}
	return 1
}

// Init prepares a zero (or closed) Buffer to read f.
func (b *Buffer) Init(f io.ReaderAt, opts Options) {
	*b = Buffer{
		f:     f,
		align: alignmentOf(f),
		limit: opts.Limit,
		sink:  opts.Stats,
		ra:    opts.readahead(),
		async: opts.AsyncIO && opts.Pool != nil,
		pool:  opts.Pool,
		force: opts.ForceReadahead,
	}
	if b.limit <= 0 {
		b.limit = math.MaxInt64
	}
}

// SetLimit changes the offset no read goes past (zero or less: none), for
// an iterator whose bounds changed. What was read before stays buffered.
func (b *Buffer) SetLimit(limit int64) {
	b.limitSrc = nil
	if limit <= 0 {
		limit = math.MaxInt64
	}
	b.limit = limit
}

// LimitSource supplies a Buffer's limit when the buffer first needs it.
type LimitSource interface {
	// ReadLimit returns the limit, as Options.Limit.
	ReadLimit() int64
}

// SetLimitSource changes the limit as SetLimit does, but asks src for it
// only before the next Read. Working out a limit may cost a search (of a
// table's index, for an iterator's upper bound); an iterator whose blocks
// all come from a cache never reads and never pays it.
func (b *Buffer) SetLimitSource(src LimitSource) { b.limitSrc = src }

// Enabled reports whether the buffer ever reads ahead; when false, Read
// always leaves the read to the caller.
func (b *Buffer) Enabled() bool { return b.ra.Enabled() }

// Observe tells the buffer that the block at [off, off+n) was read from
// elsewhere (a block-cache hit): it counts for the sequential pattern.
func (b *Buffer) Observe(off int64, n int) {
	if b.ra.Enabled() {
		b.ra.Record(off, int64(n))
	}
}

// Read returns the n bytes at off, a block the reader needs. ok is false
// when the buffer neither holds them nor reads ahead for this read (the
// caller reads the block itself); when ok is true the bytes are valid until
// the next call on b. A Forward read that misses may read the block and a
// window past it, on this goroutine, with another region in the background
// in async mode. An error is an error reading the block's own bytes.
func (b *Buffer) Read(off int64, n int, a Access) (p []byte, ok bool, err error) {
	switch {
	case b.closed:
		return nil, false, ErrClosed
	case !b.ra.Enabled() || n <= 0 || off < 0:
		return nil, false, nil
	}
	if b.limitSrc != nil {
		b.SetLimit(b.limitSrc.ReadLimit())
		b.limitSrc = nil
	}
	b.ra.Record(off, int64(n))
	switch {
	case a == Backward:
		return b.readBackward(off, n)
	case b.async:
		return b.readAsync(off, n)
	}
	return b.readSync(off, n)
}

// readSync serves a forward read from the one region, or refills it.
func (b *Buffer) readSync(off int64, n int) ([]byte, bool, error) {
	s := &b.slots[0]
	end := off + int64(n)
	if s.state == slotFilled && s.off <= off && end <= s.end() {
		return b.serve(s, off, n, true), true, nil
	}
	if !b.ra.Eligible() || b.pageCached(n) {
		return nil, false, nil
	}
	ahead := b.ra.Take()
	start := b.alignDown(off)
	stop := b.alignUp(b.clamp(end, end+ahead))
	// Refit: when the region still holds the start of the new one, move
	// those bytes to the front and read only the rest.
	var keep int64
	if s.state == slotFilled && s.off <= start && start < s.end() && s.end() < stop && b.aligned(s.end()) {
		keep = s.end() - start
	} else if s.state == slotFilled {
		b.drop(s)
	}
	if err := b.fill(s, start, stop, end, keep); err != nil {
		return nil, false, err
	}
	return b.serve(s, off, n, false), true, nil
}

// pageCached reports whether the buffer leaves a block of n bytes (0: a
// block of any size ReadAt copies) to its caller instead of reading ahead:
// the file is mapped and its reads lately came from the page cache, so
// the caller copies the block from the mapping (ReadAt). Readahead pays
// for a device's latency, which the page cache does not have: there a
// window read costs more than the copies it replaces (a system call, or a
// ring submission and the kernel's copy on a worker thread, for bytes the
// reader may not reach), and a warm SQL range of 10,000 rows ran 15%
// slower with it. When the copies turn slow (the pages left the page
// cache) the gauge says so and readahead resumes. Without a gauge (no
// Pool), or with ForceReadahead, the buffer reads ahead as asked.
func (b *Buffer) pageCached(n int) bool {
	lat := b.pool.Latency()
	return !b.force && lat != nil && copiesFromMapping(b.f, n, lat)
}

// readBackward serves a read from a buffered region that holds all of it,
// waiting for a region in flight, and never reads ahead.
func (b *Buffer) readBackward(off int64, n int) ([]byte, bool, error) {
	end := off + int64(n)
	for _, i := range [2]int{b.head, b.head ^ 1} {
		s := &b.slots[i]
		if !s.live() || off < s.off || end > s.end() {
			continue
		}
		if s.state == slotInFlight {
			b.wait(s)
			if s.state != slotFilled || end > s.end() {
				continue
			}
		}
		return b.serve(s, off, n, true), true, nil
	}
	return nil, false, nil
}

// fill makes s hold [start, stop) by reading on this goroutine, keeping the
// first keep bytes of the new region from s's current bytes. At least the
// bytes up to need must arrive.
func (b *Buffer) fill(s *slot, start, stop, need, keep int64) error {
	size := int(stop - start)
	if s.mem == nil || len(s.mem.b) < size {
		m := getMem(size, b.align)
		if keep > 0 {
			copy(m.b, s.mem.b[start-s.off:s.end()-s.off])
		}
		putMem(s.mem)
		s.mem = m
	} else if keep > 0 {
		copy(s.mem.b, s.mem.b[start-s.off:s.end()-s.off])
	}
	if keep > 0 {
		// The bytes before start leave the region: count those never used.
		dropped := start - s.off
		if w := dropped - s.used.trimBelow(start); w > 0 {
			b.sink.Add(stats.PrefetchBytesWasted, w)
		}
		s.fetched -= dropped
	} else {
		s.fetched = 0
		s.used.reset()
	}
	p := s.mem.b[keep:size]
	got, err := b.readAt(p, start+keep)
	s.fetched += int64(got)
	b.sink.Add(stats.PrefetchBytes, int64(got))
	s.off, s.n, s.state = start, int(keep)+got, slotFilled
	if start+keep+int64(got) >= need {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("prefetch: reading %d bytes at offset %d: got %d: %w", len(p), start+keep, got, err)
}

// readAt reads p at off on this goroutine and counts it.
func (b *Buffer) readAt(p []byte, off int64) (int, error) {
	return ReadAt(b.f, p, off, b.pool.Latency(), b.sink)
}

// serve hands out [off, off+n) of the filled region s.
func (b *Buffer) serve(s *slot, off int64, n int, hit bool) []byte {
	if hit {
		b.sink.Add(stats.PrefetchHits, 1)
	}
	b.sink.Add(stats.PrefetchBytesUsed, s.used.add(off, int64(n)))
	i := int(off - s.off)
	return s.mem.b[i : i+n : i+n]
}

// drop frees a filled region, counting the bytes it never handed out.
func (b *Buffer) drop(s *slot) {
	if w := s.fetched - s.used.total(); w > 0 {
		b.sink.Add(stats.PrefetchBytesWasted, w)
	}
	s.state, s.fetched = slotFree, 0
	s.used.reset()
}

// clamp returns want limited to the buffer's limit, but never below end
// (the end of the block asked for).
func (b *Buffer) clamp(end, want int64) int64 { return max(end, min(want, b.limit)) }

func (b *Buffer) alignDown(off int64) int64 { return vfs.AlignDown(off, b.align) }
func (b *Buffer) alignUp(off int64) int64   { return vfs.AlignUp(off, b.align) }
func (b *Buffer) aligned(off int64) bool    { return off&int64(b.align-1) == 0 }

// Close waits for the buffer's reads in flight, counts the bytes it read
// ahead and never handed out as wasted, and returns its memory. Read fails
// afterwards; Close is idempotent.
func (b *Buffer) Close() {
	if b.closed {
		return
	}
	b.closed = true
	for i := range b.slots {
		s := &b.slots[i]
		switch s.state {
		case slotInFlight:
			b.release(s)
			b.reap(s, true)
		case slotAbandoned:
			b.reap(s, true)
		case slotFilled:
			b.drop(s)
		}
		putMem(s.mem)
		s.mem = nil
		s.req.Buf, s.req.File = nil, nil
	}
	putMem(b.overlap)
	b.overlap = nil
	b.ring.Close()
	b.ring = nil
}

// String describes the buffered regions and the readahead state.
func (b *Buffer) String() string {
	var sb strings.Builder
	for k, i := range [2]int{b.head, b.head ^ 1} {
		s := &b.slots[i]
		if k == 1 && !b.async {
			break
		}
		if k > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "%s", slotStateNames[s.state])
		if s.state != slotFree {
			fmt.Fprintf(&sb, " [%d,%d)", s.off, s.end())
		}
		if s.state == slotFilled {
			fmt.Fprintf(&sb, " used=%d", s.used.total())
		}
	}
	fmt.Fprintf(&sb, "; %s", b.ra.String())
	return sb.String()
}
