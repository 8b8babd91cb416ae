package table

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
)

// MultiScan with Prepare
//
// A MultiScan reads many key ranges of one table in order. PrepareScan
// loads every data block the ranges need before the first is iterated:
//
//  1. Collect: for each range, the index gives the blocks from the one that
//     can hold Start up to the last whose first key is below End (first
//     keys prune the rest). A block shared by adjacent ranges is taken
//     once; a range no block covers costs nothing.
//  2. Cache: every block is looked up in the block cache; hits are pinned.
//     A mapped file whose blocks are read in place (readsMapped) skips
//     this: every block is read, into the scan's own buffers.
//  3. Coalesce: the misses, in file order, merge into one read each when
//     adjacent or within CoalesceThreshold bytes (prefetch.Coalesce), with
//     direct-I/O rounding. Gap bytes are read and dropped: more bytes for
//     far fewer read calls. Blocks read in place from a mapping merge only
//     when adjacent, up to prefetch.MaxMappedRead: such reads are copies
//     without a system call, so gap bytes would save nothing.
//  4. Read: the reads are issued in turn, or all at once on the reader's
//     pool with Async; each block is verified, decompressed, and inserted
//     into the block cache and pinned, or kept in the scan's buffers.
//
// The pins are held until the PreparedScan is closed, so iterating the
// prepared ranges (IterOptions.Prepared) never reads the file.

// ScanRange is one range of a MultiScan: the user keys [Start, End). End
// nil means no end, which only the last range may have.
type ScanRange struct {
	Start, End []byte
}

// PrepareOptions configure PrepareScan. The zero value is usable.
type PrepareOptions struct {
	// CoalesceThreshold is the largest gap, in bytes, between two blocks
	// to read that still lets them share one read. Zero means
	// prefetch.DefaultCoalesceThreshold (16 KiB); a negative value merges
	// nothing, not even adjacent blocks.
	CoalesceThreshold int64
	// Async issues all the reads at once on ReaderOptions.Pool instead of
	// one after another (no effect without a pool).
	Async bool
	// DontFillCache keeps the blocks read in the PreparedScan's own memory
	// instead of inserting them into the block cache.
	DontFillCache bool
	// Stats, when not nil, receives the counts of this scan, in addition
	// to ReaderOptions.Stats.
	Stats *stats.Counters
}

// PreparedScan holds the data blocks of a prepared MultiScan: pinned in the
// block cache, or in its own memory (without a cache, with DontFillCache,
// or read in place from a mapped file). Iterate it with
// NewIter (or IterOptions.Prepared): seek to each range's Start in order
// and move forward with Next. An iterator positioned by a seek (or First)
// into a prepared range stops at that range's End, as if End were its upper
// bound, so that moving past a range's last entry does not read the blocks
// between ranges; iterate each range to its End and seek to the next range
// (keys at or past End are not returned, even if the table has them).
// Seeks outside every range, SeekLT, Last and backward moves behave as in a
// normal iterator, reading what they need: they are correct, only not
// prepared.
//
// A PreparedScan may be shared by several iterators; it is safe for
// concurrent use. Close it after them.
type PreparedScan struct {
	r      *Reader
	ranges []ScanRange
	// blocks are the prepared blocks in file order, spans[k] range k's.
	blocks []preparedBlock
	spans  []rangeSpan
	// pending are the reads planned by BeginPrepareScan, until Finish.
	pending *pendingReads
	// mems hold the reads' bytes: until Finish when the blocks are copied
	// into the cache, else until the scan is released, since the blocks
	// are read where they lie.
	mems []*prefetch.Mem
	// iters counts the open iterators; -1 once the scan is closed. One
	// word for both, so that an iterator cannot start while Close
	// returns the scan's memory.
	iters atomic.Int32

	// Room for the common scan of a table, one range of a few blocks
	// read at once (SQL's multi_range prepares ten tables of one range
	// each), so that the slices above need no allocations of their own.
	spansBuf  [1]rangeSpan
	blocksBuf [4]preparedBlock
	memsBuf   [2]*prefetch.Mem
	reads     pendingReads
}

// rangeSpan is what the collect step found for one range.
type rangeSpan struct {
	// lo and hi delimit the range's blocks in PreparedScan.blocks.
	lo, hi int
	// start is the index position of the range's Start: a seek to exactly
	// Start goes there without searching the index again. exact: the
	// separator there has a greater user key, so a seek to any version of
	// Start stops there too; otherwise the seek checks the separators from
	// start on (versions of Start may span blocks).
	start int
	exact bool
}

type preparedBlock struct {
	idx  int // position in the reader's index
	data []byte
	h    cache.Handle // zero when data is the scan's own memory
}

// PrepareScan loads the data blocks of ranges, which are sorted, do not
// overlap (ranges[k].Start >= ranges[k-1].End) and have Start < End, and
// holds them until the returned scan is closed. It checks ctx between reads;
// a cancelled Prepare waits for the reads it issued, releases what it
// pinned and returns ctx's error.
//
// Counts: multiscan.prepares, multiscan.ranges, multiscan.blocks.from.cache,
// multiscan.blocks.prefetched, multiscan.coalesced.reads,
// multiscan.prefetch.bytes, plus the usual block-cache and file-read
// counters, in ReaderOptions.Stats and opts.Stats.
//
// PrepareScan is BeginPrepareScan, then Submit when opts.Async, then
// Finish. A caller preparing several tables at once calls the steps
// itself, so that the reads of all the tables are in flight together.
func (r *Reader) PrepareScan(ctx context.Context, ranges []ScanRange, opts PrepareOptions) (*PreparedScan, error) {
	p, err := r.BeginPrepareScan(ranges, opts)
	if err != nil {
		return nil, err
	}
	if opts.Async {
		g := r.opts.Pool.Ring()
		defer g.Close() // after Finish has waited for the reads
		p.Submit(ctx, g)
	}
	if err := p.Finish(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// AppendIndexProbes appends to dst the addresses of the parts of the index
// that a prepare of ranges starting at start reads first, for
// TouchProbes. A caller preparing several tables touches every
// table's first probes before it prepares any: in a cold index each probe
// is a cache miss, and the misses of separate tables, loaded together,
// overlap instead of following one another.
func (r *Reader) AppendIndexProbes(dst []*uint64, start []byte) []*uint64 {
	return r.seps.appendProbes(dst, start)
}

// TouchProbes loads the values at addrs, which AppendIndexProbes or
// AppendFilterProbe gave, in one loop of independent loads, and returns
// their XOR (meaningless, but it keeps the loads).
func TouchProbes[T byte | uint64](addrs []*T) (x T) {
	for _, p := range addrs {
		x ^= *p
	}
	return x
}

// AppendPages appends to dst the pages of the reads that Finish will copy
// from a mapped file (prefetch.AppendPages), for vfs.TouchPages. A caller
// preparing several tables touches all their pages before it finishes
// any.
func (p *PreparedScan) AppendPages(dst []*byte) []*byte {
	pr := p.pending
	if pr == nil {
		return dst
	}
	for k := range pr.reqs {
		if rq := &pr.reqs[k]; !pr.submitted[k] {
			dst = prefetch.AppendPages(dst, rq.File, rq.Off, len(rq.Buf), rq.Latency)
		}
	}
	return dst
}

// BeginPrepareScan does the first steps of PrepareScan: it collects the
// blocks of ranges, pins those the block cache holds and plans the reads of
// the others, without issuing them. Submit issues them in the background;
// Finish reads what was not submitted and waits for the rest. Call Finish
// (or Close, which releases the pins of an unfinished scan) exactly once.
func (r *Reader) BeginPrepareScan(ranges []ScanRange, opts PrepareOptions) (*PreparedScan, error) {
	p := new(PreparedScan)
	if err := r.InitPrepareScan(p, ranges, opts); err != nil {
		return nil, err
	}
	return p, nil
}

// InitPrepareScan is BeginPrepareScan into p, which must be a zero
// PreparedScan or one that was closed, and which nothing may use under its
// former identity: an owner that prepares many tables at a time keeps
// their scans in one array, reused from one MultiScan to the next.
func (r *Reader) InitPrepareScan(p *PreparedScan, ranges []ScanRange, opts PrepareOptions) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if err := r.checkRanges(ranges); err != nil {
		return err
	}
	sink := stats.Sink{DB: r.opts.Stats, Op: opts.Stats}
	// The caller counts its MultiScan (multiscan.prepares, .ranges); a
	// table counts the tables it prepares.
	sink.Add(stats.MultiScanTablePrepares, 1)
	*p = PreparedScan{r: r, ranges: ranges}
	p.spans = growZeroed(p.spansBuf[:0], len(ranges))
	p.blocks = p.blocksBuf[:0]

	// Collect the blocks, each once.
	for k, rg := range ranges {
		lo := len(p.blocks)
		j := r.seekIndexUser(rg.Start)
		p.spans[k].start, p.spans[k].exact = j, r.seps.above(j, rg.Start)
		if lo > 0 && p.blocks[lo-1].idx == j {
			lo-- // the range starts in the previous range's last block
			j++
		}
		for ; j < len(r.index); j++ {
			if rg.End != nil {
				// The separator before the block, when the abbreviations
				// show it at or past End, saves reading the block's first
				// key (a cache miss into the index).
				if j > p.spans[k].start && r.seps.atOrPast(j-1, rg.End) {
					break
				}
				if r.seps.cmpFirst(r.index, j, rg.End) >= 0 {
					break
				}
			}
			p.blocks = append(p.blocks, preparedBlock{idx: j})
		}
		p.spans[k].lo, p.spans[k].hi = lo, len(p.blocks)
	}

	// Pin the cached ones; plan the reads of the others. From a mapped
	// file whose reads are fast every block is read and kept in the scan's
	// buffers, bypassing the cache, as single block reads are (see
	// readsMapped; blocks over its 64 KiB too, since they are read anyway).
	c := r.opts.Cache
	inPlace := r.mappedFast()
	if inPlace {
		c = nil
	}
	pr := &p.reads
	misses := pr.missesBuf[:0]
	var extentsBuf [4]prefetch.Extent
	extents := extentsBuf[:0]
	for b := range p.blocks {
		pb := &p.blocks[b]
		h := r.seps.ents[pb.idx].h // beside the abbreviations the collect step read
		if c != nil {
			if ch, ok := c.Get(cache.Key{NS: r.opts.CacheNS, File: r.opts.FileNum, Offset: h.Offset}); ok {
				pb.h, pb.data = ch, ch.Value()
				sink.Add(stats.BlockCacheHit, 1)
				sink.Add(stats.MultiScanBlocksFromCache, 1)
				continue
			}
			sink.Add(stats.BlockCacheMiss, 1)
		}
		misses = append(misses, b)
		extents = append(extents, prefetch.Extent{Off: int64(h.Offset), Len: int64(h.Length) + TrailerLen})
	}
	if len(misses) == 0 {
		return nil
	}
	align := alignmentOf(r.file)
	var ios []prefetch.IORange
	if inPlace {
		// Copies from the mapping: no call to save, so no gap to read.
		ios = prefetch.CoalesceAdjacent(pr.iosBuf[:0], extents, prefetch.MaxMappedRead)
	} else {
		threshold := opts.CoalesceThreshold
		if threshold == 0 {
			threshold = prefetch.DefaultCoalesceThreshold
		}
		ios = prefetch.Coalesce(extents, threshold, align)
	}
	pr.misses, pr.ios, pr.sink = misses, ios, sink
	pr.fill = r.opts.Cache != nil && !opts.DontFillCache && !inPlace
	pr.reqs = growZeroed(pr.reqsBuf[:0], len(ios))
	pr.submitted = growZeroed(pr.submittedBuf[:0], len(ios))
	lat := r.opts.Pool.Latency()
	p.mems = slices.Grow(p.memsBuf[:0], len(ios))
	for k, io := range ios {
		m := prefetch.GetMem(int(io.Len), align)
		p.mems = append(p.mems, m)
		pr.reqs[k] = prefetch.Request{File: r.file, Buf: m.Bytes()[:io.Len], Off: io.Off, Sink: sink, Latency: lat}
	}
	p.pending = pr
	return nil
}

// pendingReads are the reads of a PreparedScan between BeginPrepareScan
// and Finish.
type pendingReads struct {
	misses []int // positions in blocks of the blocks to read
	ios    []prefetch.IORange
	reqs   []prefetch.Request
	// submitted[k]: reqs[k] runs on the pool and must be waited for.
	submitted []bool
	fill      bool
	sink      stats.Sink

	// Room for a few reads (see PreparedScan.spansBuf).
	missesBuf    [4]int
	iosBuf       [2]prefetch.IORange
	reqsBuf      [2]prefetch.Request
	submittedBuf [2]bool
}

// Reads returns the number of reads Finish has yet to issue or wait for.
func (p *PreparedScan) Reads() int {
	if p.pending == nil {
		return 0
	}
	return len(p.pending.reqs)
}

// Submit issues the planned reads on g, a ring borrowed from the reader's
// pool (ReaderOptions.Pool) by the goroutine that will call Finish; g
// must stay borrowed until Finish returns. Without a ring, or once ctx is
// done, Finish issues the reads itself.
func (p *PreparedScan) Submit(ctx context.Context, g *prefetch.Ring) {
	pr := p.pending
	if pr == nil || g == nil {
		return
	}
	for k := range pr.reqs {
		if pr.submitted[k] || ctx.Err() != nil {
			continue
		}
		pr.submitted[k] = g.Submit(&pr.reqs[k]) == nil
	}
}

// Finish reads the blocks that were not submitted, waits for those that
// were, and materializes them all. On an error (ctx's, a read's or a
// block's) it waits for every submitted read, releases everything the scan
// pinned and returns the error; the scan must not be used, but Close may
// still be called.
func (p *PreparedScan) Finish(ctx context.Context) error {
	pr := p.pending
	if pr == nil {
		return nil
	}
	p.pending = nil
	if err := p.r.readPrepared(ctx, p, pr); err != nil {
		p.release()
		return err
	}
	if pr.fill {
		p.putMems() // every block is a copy in the cache
	}
	return nil
}

// putMems returns the reads' memory to its pool.
func (p *PreparedScan) putMems() {
	for k, m := range p.mems {
		prefetch.PutMem(m)
		p.mems[k] = nil
	}
	p.mems = p.mems[:0]
}

// checkRanges validates the ranges of a MultiScan.
func (r *Reader) checkRanges(ranges []ScanRange) error {
	for k, rg := range ranges {
		var why string
		switch {
		case rg.Start == nil:
			why = "has no start"
		case rg.End == nil && k != len(ranges)-1:
			why = "has no end but is not the last"
		case rg.End != nil && bytes.Compare(rg.Start, rg.End) >= 0:
			why = fmt.Sprintf("is empty or inverted: [%q, %q)", rg.Start, rg.End)
		case k > 0 && bytes.Compare(rg.Start, ranges[k-1].End) < 0:
			why = fmt.Sprintf("starts at %q, before the previous range ends at %q", rg.Start, ranges[k-1].End)
		default:
			continue
		}
		return fmt.Errorf("%w: %s: range %d %s", ErrInvalidRanges, r.name, k, why)
	}
	return nil
}

// readPrepared runs the reads of pr that were not submitted, waits for
// those that were, and materializes the blocks p.blocks[pr.misses[...]].
func (r *Reader) readPrepared(ctx context.Context, p *PreparedScan, pr *pendingReads) error {
	var err error
	for k, io := range pr.ios {
		rq := &pr.reqs[k]
		if pr.submitted[k] {
			rq.WaitCounted()
		} else if err == nil {
			if err = ctx.Err(); err == nil {
				rq.Run()
			}
		}
		if err != nil {
			continue // wait for the rest of what was submitted
		}
		pr.sink.Add(stats.MultiScanCoalescedReads, 1)
		pr.sink.Add(stats.MultiScanPrefetchBytes, int64(rq.N))
		err = r.materialize(p, pr.misses[io.First:io.First+io.Count], rq, pr.fill, pr.sink)
	}
	return err
}

// materialize verifies and decodes the blocks of one completed read and
// pins them (in the cache when fill) in p.
func (r *Reader) materialize(p *PreparedScan, blocks []int, rq *prefetch.Request, fill bool, sink stats.Sink) error {
	for _, b := range blocks {
		pb := &p.blocks[b]
		h := r.seps.ents[pb.idx].h // beside the abbreviations the collect step read
		lo := int64(h.Offset) - rq.Off
		hi := lo + int64(h.Length) + TrailerLen
		if hi > int64(rq.N) {
			err := rq.Err
			if err == nil {
				err = fmt.Errorf("short read: %d of %d bytes", rq.N, len(rq.Buf))
			}
			return fmt.Errorf("table: reading %s: %d bytes at offset %d: %w", r.name, len(rq.Buf), rq.Off, err)
		}
		payload, comp, err := verifyBlock(rq.Buf[lo:hi], r.name, r.baseCtx, h.Offset)
		if err != nil {
			return err
		}
		r.noteLoad(comp)
		data := payload
		switch {
		case comp != NoCompression:
			if data, err = decompressBlock(comp, payload, nil, r.name, h.Offset); err != nil {
				return err
			}
		case fill:
			data = slices.Clone(payload) // the cache owns exactly the block
		}
		sink.Add(stats.MultiScanBlocksPrefetched, 1)
		if fill {
			pb.h = r.opts.Cache.Set(cache.Key{NS: r.opts.CacheNS, File: r.opts.FileNum, Offset: h.Offset}, data)
			data = pb.h.Value()
			sink.Add(stats.BlockCacheAdd, 1)
		}
		pb.data = data
	}
	return nil
}

// NewIter returns an iterator over the scan's reader with opts.Prepared set
// to p.
func (p *PreparedScan) NewIter(opts IterOptions) *Iter {
	opts.Prepared = p
	return p.r.NewIter(opts)
}

// InitIter is Reader.InitIter with opts.Prepared set to p.
func (p *PreparedScan) InitIter(it *Iter, opts IterOptions) {
	opts.Prepared = p
	p.r.InitIter(it, opts)
}

// Ranges returns the ranges the scan was prepared for. Do not modify them.
func (p *PreparedScan) Ranges() []ScanRange { return p.ranges }

// NumBlocks returns the number of data blocks the scan holds.
func (p *PreparedScan) NumBlocks() int { return len(p.blocks) }

// RangeBlocks returns the number of prepared blocks range k covers (a block
// shared with the range before counts for both).
func (p *PreparedScan) RangeBlocks(k int) int { return p.spans[k].hi - p.spans[k].lo }

// rangeOf returns the position of the range holding ukey, and whether one
// does.
func (p *PreparedScan) rangeOf(ukey []byte) (int, bool) {
	// The last range starting at or before ukey.
	lo, hi := 0, len(p.ranges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(p.ranges[m].Start, ukey) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, false
	}
	if end := p.ranges[lo-1].End; end != nil && bytes.Compare(ukey, end) >= 0 {
		return 0, false
	}
	return lo - 1, true
}

// block returns the prepared data of the block at index position i.
// *hint is where the last lookup succeeded: iteration moves forward, so the
// next lookup is usually there or just after.
func (p *PreparedScan) block(i int, hint *int) ([]byte, bool) {
	if p == nil || len(p.blocks) == 0 {
		return nil, false
	}
	for _, b := range [2]int{*hint, *hint + 1} {
		if b < len(p.blocks) && p.blocks[b].idx == i {
			*hint = b
			return p.blocks[b].data, p.blocks[b].data != nil
		}
	}
	b, ok := slices.BinarySearchFunc(p.blocks, i, func(pb preparedBlock, i int) int { return pb.idx - i })
	if !ok {
		return nil, false
	}
	*hint = b
	return p.blocks[b].data, p.blocks[b].data != nil
}

// Close releases the scan's blocks. It fails, releasing nothing, while an
// iterator over the scan is open; a second Close does nothing.
func (p *PreparedScan) Close() error {
	for {
		switch n := p.iters.Load(); {
		case n < 0:
			return nil
		case n > 0:
			return fmt.Errorf("table: %s: closing a prepared scan with %d iterators open", p.r.name, n)
		case p.iters.CompareAndSwap(0, -1):
			p.release()
			return nil
		}
	}
}

// acquire registers an iterator over the scan; false when it is closed.
func (p *PreparedScan) acquire() bool {
	for {
		n := p.iters.Load()
		if n < 0 {
			return false
		}
		if p.iters.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (p *PreparedScan) release() {
	if pr := p.pending; pr != nil {
		// Closed before Finish: wait for the submitted reads, which write
		// into the scan's buffers.
		for k := range pr.reqs {
			if pr.submitted[k] {
				pr.reqs[k].Wait()
			}
		}
		p.pending = nil
	}
	for b := range p.blocks {
		p.blocks[b].h.Release()
		p.blocks[b] = preparedBlock{idx: p.blocks[b].idx}
	}
	p.putMems()
}

// growZeroed returns s resliced to n zero elements, in s's array when it
// has room (s is empty: a fixed buffer of the caller's).
func growZeroed[T any](s []T, n int) []T {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}
