package table

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
)

// Parallel block loads for MultiGet
//
// MultiGet reads the blocks it misses in the block cache one after another,
// so a batch whose keys lie in ten uncached blocks waits for ten reads in
// turn. With async I/O the caller first asks every table it is about to
// search at one level which blocks the batch will need that the cache
// lacks (PlanMultiGet), reads them all at once on the pool (BlockLoads.Load)
// and inserts them in the block cache, pinned until Release. The lookups
// that follow find every block cached. This is how RocksDB's MultiGet with
// async I/O overlaps the reads of a batch across the files of a level.
//
// Planning repeats the lookups' filter probes and index searches and looks
// each needed block up in the cache once more: cheap next to a read, and
// paid only when async I/O is asked for.

// BlockLoads is a set of data blocks, possibly of several tables, to read
// at once. The zero value is ready for use; after Release it can be reused,
// keeping its memory.
type BlockLoads struct {
	loads []blockLoad
	reqs  []prefetch.Request
	bufs  [][]byte // read buffers, one per load, reused
	key   []byte   // search-key scratch
	may   []bool   // filter-answer scratch
}

// blockLoad is one block to read: its table, where it is, and, once
// loaded, its pin in the block cache.
type blockLoad struct {
	r  *Reader
	h  BlockHandle
	ch cache.Handle
}

// Len returns the number of blocks planned and not yet released.
func (l *BlockLoads) Len() int { return len(l.loads) }

// PlanMultiGet adds to l the data blocks that MultiGet(keys, hashes, seq,
// res, ...) would have to read from the file: the block each pending key
// (res[i].Done not set) that passes the filter would search first, when
// the block cache lacks it. It reads nothing and changes no counter except
// block.cache.miss for the blocks it adds. A reader without a block cache
// plans nothing (there would be nowhere to keep the blocks).
func (r *Reader) PlanMultiGet(keys [][]byte, hashes []uint64, seq base.SeqNum, res []GetResult, l *BlockLoads, st *stats.Counters) {
	c := r.opts.Cache
	if c == nil || r.closed.Load() || len(r.index) == 0 || len(res) != len(keys) || (hashes != nil && len(hashes) != len(keys)) {
		return
	}
	if cap(l.may) < len(keys) {
		l.may = make([]bool, len(keys))
	}
	may := l.may[:len(keys)]
	switch {
	case !r.hasFilter:
		for i := range may {
			may[i] = true
		}
	case hashes != nil:
		r.filter.MayContainBatch(hashes, may)
	default:
		for i, k := range keys {
			may[i] = r.filter.MayContain(filter.Hash(k))
		}
	}
	sink := stats.Sink{DB: r.opts.Stats, Op: st}
	last := -1 // the index entry of the last block planned or found cached
	for i, ukey := range keys {
		if res[i].Done || !may[i] {
			continue
		}
		l.key = base.MakeSearchKey(l.key[:0], ukey, seq)
		j := r.seekIndex(l.key)
		if j >= len(r.index) || j == last {
			continue
		}
		e := &r.index[j]
		if r.mayStartBefore(j, j) && bytes.Compare(ukey, base.UserKey(e.first)) < 0 {
			continue // between blocks: MultiGet reads nothing for it
		}
		last = j
		if ch, ok := c.Get(cache.Key{NS: r.opts.CacheNS, File: r.opts.FileNum, Offset: e.h.Offset}); ok {
			ch.Release()
			continue
		}
		if n := len(l.loads); n > 0 && l.loads[n-1].r == r && l.loads[n-1].h == e.h {
			continue
		}
		sink.Add(stats.BlockCacheMiss, 1)
		l.loads = append(l.loads, blockLoad{r: r, h: e.h})
	}
}

// Load reads the planned blocks, all at once on pool when it is not nil,
// more than one is planned and reads have lately been slow (the pool's
// prefetch.Latency, which these reads feed); else in turn on the calling
// goroutine. It then verifies and decompresses each, inserts it in its
// table's block cache and pins it there until Release. On error the blocks
// loaded so far stay pinned until Release.
func (l *BlockLoads) Load(pool *prefetch.Pool, st *stats.Counters) error {
	n := len(l.loads)
	if n == 0 {
		return nil
	}
	if cap(l.reqs) < n {
		l.reqs = make([]prefetch.Request, n)
	}
	l.reqs = l.reqs[:n]
	for len(l.bufs) < n {
		l.bufs = append(l.bufs, nil)
	}
	var lat *prefetch.Latency
	if pool != nil {
		lat = pool.Latency()
		if !pool.Overlaps(n) {
			pool = nil
		}
	}
	for k := range l.loads {
		ld := &l.loads[k]
		align := alignmentOf(ld.r.file)
		off := vfs.AlignDown(int64(ld.h.Offset), align)
		end := vfs.AlignUp(int64(ld.h.Offset+ld.h.Length)+TrailerLen, align)
		if int64(cap(l.bufs[k])) < end-off || !vfs.IsAligned(l.bufs[k], align) {
			l.bufs[k] = vfs.Prefault(vfs.AlignedBuffer(int(end-off), align))
		}
		rq := &l.reqs[k]
		rq.File, rq.Buf, rq.Off = ld.r.file, l.bufs[k][:end-off], off
		rq.Sink = stats.Sink{DB: ld.r.opts.Stats, Op: st}
		rq.Latency = lat
	}
	submitted := 0
	if pool != nil {
		g := pool.Ring()
		defer g.Close() // after the loop below has waited for the reads
		for k := range l.reqs {
			if g.Submit(&l.reqs[k]) != nil {
				break // closing: read the rest here
			}
			submitted++
		}
	}
	var err error
	for k := range l.loads {
		rq := &l.reqs[k]
		if k < submitted {
			rq.WaitCounted()
		} else if err == nil {
			rq.Run()
		}
		if err != nil {
			continue // wait for the rest of what was submitted
		}
		err = l.loads[k].materialize(rq)
	}
	return err
}

// materialize verifies and decodes a loaded block and pins it in the block
// cache.
func (ld *blockLoad) materialize(rq *prefetch.Request) error {
	r, h := ld.r, ld.h
	lo := int64(h.Offset) - rq.Off
	hi := lo + int64(h.Length) + TrailerLen
	if hi > int64(rq.N) {
		err := rq.Err
		if err == nil {
			err = fmt.Errorf("short read: %d of %d bytes", rq.N, len(rq.Buf))
		}
		return fmt.Errorf("table: reading %s: block at %d: %w", r.name, h.Offset, err)
	}
	payload, comp, err := verifyBlock(rq.Buf[lo:hi], r.name, r.baseCtx, h.Offset)
	if err != nil {
		return err
	}
	var data []byte
	if comp == NoCompression {
		data = slices.Clone(payload) // the cache owns exactly the block
	} else if data, err = decompressBlock(comp, payload, nil, r.name, h.Offset); err != nil {
		return err
	}
	ld.ch = r.opts.Cache.Set(cache.Key{NS: r.opts.CacheNS, File: r.opts.FileNum, Offset: h.Offset}, data)
	sink := rq.Sink
	sink.Add(stats.BlockCacheAdd, 1)
	sink.Add(stats.MultiGetBlocksLoaded, 1)
	return nil
}

// Release unpins the loaded blocks and empties l for reuse. The readers
// of the planned blocks must stay open until Release.
func (l *BlockLoads) Release() {
	for k := range l.loads {
		l.loads[k].ch.Release()
		l.loads[k] = blockLoad{}
	}
	l.loads = l.loads[:0]
	for k := range l.reqs {
		l.reqs[k].File, l.reqs[k].Buf, l.reqs[k].Err = nil, nil, nil
	}
}
