package table

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
)

// blockSource supplies the stored bytes of blocks: the reader's file. An
// iterator's prefetch buffer (readEnv.pf) is consulted first and serves
// the ranges it has read ahead; the file gets the rest.
//
// A source whose reads must be aligned (direct I/O) says so with an
// Alignment() int method, as vfs.File does; without it reads are unaligned.
type blockSource interface {
	ReadAt(p []byte, off int64) (int, error)
}

// alignmentOf returns the read alignment src requires (1 for none).
func alignmentOf(src blockSource) int {
	if a, ok := src.(interface{ Alignment() int }); ok {
		if n := a.Alignment(); n > 1 && n&(n-1) == 0 {
			return n
		}
	}
	return 1
}

// BlockRef is a decoded (checksummed, decompressed) block. It either pins a
// block cache entry or points into a buffer owned by the caller of the read.
// Release it when done; its bytes are invalid afterwards.
type BlockRef struct {
	data []byte
	h    cache.Handle
}

// Data returns the block's bytes. Never modify them.
func (b BlockRef) Data() []byte { return b.data }

// Cached reports whether the block is pinned in the block cache.
func (b BlockRef) Cached() bool { return b.h.Valid() }

// Release drops the cache pin, if any, and empties b.
func (b *BlockRef) Release() {
	b.h.Release()
	*b = BlockRef{}
}

// blockBufs are the reusable buffers of a reader of blocks that are not
// cached: the stored bytes as read, and the decompressed block.
type blockBufs struct {
	raw []byte
	out []byte
}

// readEnv is how one read of a block happens: where the bytes come from,
// where counts go, and whether the block enters the cache.
type readEnv struct {
	src  blockSource
	sink stats.Sink
	// pf, when not nil, is the iterator's prefetch buffer: it sees every
	// block read (cache hits included, for its sequential pattern) and
	// serves or reads ahead the bytes of misses. access says which way the
	// iterator is moving.
	pf     *prefetch.Buffer
	access prefetch.Access
	// fill inserts blocks read on a miss into the cache.
	fill bool
	// budget, when not nil, is charged the length of each block inserted.
	budget *FillBudget
	// viaCache sends every block through the cache, even when a mapped
	// file would serve it (readsMapped): a BlockLoads pinned them there.
	viaCache bool
	// bufs receive blocks that do not go into the cache (no cache, fill
	// false, or read in place from a mapped file): the result aliases them
	// until their next use.
	bufs *blockBufs
}

// ReadBlock returns the block at h, verified and decompressed, through the
// block cache when the reader has one (inserting it on a miss). Counts go to
// the reader's Stats and to st (which may be nil). Without a cache the block
// is in a new buffer. Release the result when done.
func (r *Reader) ReadBlock(h BlockHandle, st *stats.Counters) (BlockRef, error) {
	if r.closed.Load() {
		return BlockRef{}, ErrClosed
	}
	if !handleWithin(h, r.size-FooterLen) || h.Length > maxBlockLen {
		return BlockRef{}, fmt.Errorf("table: %s: block %s lies outside the file's %d bytes of blocks", r.name, h, r.size-FooterLen)
	}
	return r.readBlock(h, readEnv{src: r.file, sink: stats.Sink{DB: r.opts.Stats, Op: st}, fill: true})
}

// readBlock returns the block at h as env says. REQUIRES: h lies inside the
// file (the index was checked at open, and ReadBlock checks its argument).
func (r *Reader) readBlock(h BlockHandle, env readEnv) (BlockRef, error) {
	if env.bufs != nil && !env.viaCache && r.readsMapped(h) {
		data, err := r.loadInto(h, env, env.bufs)
		return BlockRef{data: data}, err
	}
	if c := r.opts.Cache; c != nil {
		k := cache.Key{NS: r.opts.CacheNS, File: r.opts.FileNum, Offset: h.Offset}
		if ch, ok := c.Get(k); ok {
			env.sink.Add(stats.BlockCacheHit, 1)
			if env.pf != nil {
				env.pf.Observe(int64(h.Offset), int(h.Length)+TrailerLen)
			}
			return BlockRef{data: ch.Value(), h: ch}, nil
		}
		if env.fill {
			ch, hit, err := c.GetOrLoad(k, func() ([]byte, error) {
				return r.loadOwned(h, env)
			})
			if err != nil {
				return BlockRef{}, err
			}
			if hit {
				env.sink.Add(stats.BlockCacheHit, 1)
				if env.pf != nil {
					env.pf.Observe(int64(h.Offset), int(h.Length)+TrailerLen)
				}
			} else {
				env.sink.Add(stats.BlockCacheMiss, 1)
				env.sink.Add(stats.BlockCacheAdd, 1)
				if env.budget != nil {
					env.budget.used += int64(len(ch.Value()))
				}
			}
			return BlockRef{data: ch.Value(), h: ch}, nil
		}
		env.sink.Add(stats.BlockCacheMiss, 1)
	}
	if env.bufs == nil {
		data, err := r.loadOwned(h, env)
		return BlockRef{data: data}, err
	}
	data, err := r.loadInto(h, env, env.bufs)
	return BlockRef{data: data}, err
}

// readsMapped reports whether a read of the block at h is served from the
// file's memory mapping, bypassing the block cache: the file is mapped,
// the block small enough to copy (prefetch.MaxMappedRead), reads lately
// fast (the bytes are in the page cache), and the table's blocks stored
// raw (at most one load in eight found a compressed block).
//
// Then the block is copied into the reader's buffer and verified, which
// costs less than a block cache hit (a hash probe that misses the CPU's
// caches, and a pin and unpin) and far less than a miss (an allocation,
// a copy and an insertion that evicts). The cache keeps serving compressed
// tables, whose blocks cost a decompression, and files whose reads reach
// the device; MultiScan's prepare makes the same choice (BeginPrepareScan).
// A reader without a pool has no gauge: its reads count as fast.
func (r *Reader) readsMapped(h BlockHandle) bool {
	return int(h.Length)+TrailerLen <= prefetch.MaxMappedRead && r.mappedFast()
}

// mappedFast reports whether reads of the table's blocks copy from its
// mapping, bypassing the cache, block size aside (see readsMapped).
func (r *Reader) mappedFast() bool {
	if !r.mapped {
		return false
	}
	if r.opts.Pool.Latency().Slow() {
		return false
	}
	raw, compressed := r.rawLoads.Load(), r.compressedLoads.Load()
	return compressed*8 <= raw+compressed
}

// noteLoad counts a loaded block for mappedFast.
func (r *Reader) noteLoad(c Compression) {
	if c == NoCompression {
		r.rawLoads.Add(1)
	} else {
		r.compressedLoads.Add(1)
	}
}

// loadOwned reads the block at h into memory that nobody else uses, as the
// cache requires: the stored bytes go through a pooled buffer, the result
// is a new slice of exactly the block's length.
func (r *Reader) loadOwned(h BlockHandle, env readEnv) ([]byte, error) {
	bb := r.bufPool.Get().(*blockBufs)
	defer r.bufPool.Put(bb)
	raw, err := r.readRaw(env, h.Offset, int(h.Length)+TrailerLen, &bb.raw)
	if err != nil {
		return nil, err
	}
	payload, c, err := verifyBlock(raw, r.name, r.baseCtx, h.Offset)
	if err != nil {
		return nil, err
	}
	r.noteLoad(c)
	if c == NoCompression {
		return slices.Clone(payload), nil
	}
	return decompressBlock(c, payload, nil, r.name, h.Offset)
}

// loadInto reads the block at h into bufs; the result aliases them.
func (r *Reader) loadInto(h BlockHandle, env readEnv, bufs *blockBufs) ([]byte, error) {
	raw, err := r.readRaw(env, h.Offset, int(h.Length)+TrailerLen, &bufs.raw)
	if err != nil {
		return nil, err
	}
	payload, c, err := verifyBlock(raw, r.name, r.baseCtx, h.Offset)
	if err != nil {
		return nil, err
	}
	r.noteLoad(c)
	if c == NoCompression {
		return payload, nil
	}
	out, err := decompressBlock(c, payload, bufs.out, r.name, h.Offset)
	if err != nil {
		return nil, err
	}
	bufs.out = out[:0]
	return out, nil
}

// readRaw reads the n stored bytes at off (a block and its trailer) and
// returns them: from the prefetch buffer when it has them or reads ahead
// for them (the result then aliases the buffer until its next use), else
// from env.src into *buf, growing it as needed. When the source needs
// aligned reads it reads the aligned range around them into an aligned
// buffer and returns the sub-slice.
func (r *Reader) readRaw(env readEnv, off uint64, n int, buf *[]byte) ([]byte, error) {
	if env.pf != nil {
		p, ok, err := env.pf.Read(int64(off), n, env.access)
		if err != nil {
			return nil, fmt.Errorf("table: reading %s: %w", r.name, err)
		}
		if ok {
			return p, nil
		}
	}
	align := alignmentOf(env.src)
	if align <= 1 {
		if cap(*buf) < n {
			*buf = vfs.Prefault(make([]byte, n))
		}
		p := (*buf)[:n]
		if err := r.readAt(env, p, off, n); err != nil {
			return nil, err
		}
		return p, nil
	}
	start := vfs.AlignDown(int64(off), align)
	end := vfs.AlignUp(int64(off)+int64(n), align)
	need := int(end - start)
	if cap(*buf) < need || !vfs.IsAligned((*buf)[:need], align) {
		*buf = vfs.Prefault(vfs.AlignedBuffer(need, align))
	}
	p := (*buf)[:need]
	// The aligned end may lie past the end of the file: only the block's
	// own bytes must arrive.
	if err := r.readAt(env, p, uint64(start), int(int64(off)+int64(n)-start)); err != nil {
		return nil, err
	}
	lo := int(int64(off) - start)
	return p[lo : lo+n], nil
}

// readAt fills p from env.src at off; at least need bytes must arrive.
func (r *Reader) readAt(env readEnv, p []byte, off uint64, need int) error {
	// A block's read tells the pool whether reads reach the device, and
	// the pool whether to copy from a mapping (see prefetch.ReadAt).
	got, err := prefetch.ReadAt(env.src, p, int64(off), r.opts.Pool.Latency(), env.sink)
	if got >= need {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("table: reading %s: %d bytes at offset %d: got %d: %w", r.name, len(p), off, got, err)
}
