package table

import (
	"errors"
	"fmt"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
)

// Defaults and bounds of WriterOptions.
const (
	DefaultBlockSize            = 4096
	DefaultBlockSizeDeviation   = 10
	DefaultRestartInterval      = 16
	DefaultIndexRestartInterval = 1
	// MaxBlockSize bounds BlockSize: blocks are restartable at uint32
	// offsets and readers refuse blocks above an internal limit.
	MaxBlockSize = 64 << 20
	// DefaultWriteBufferSize is the size of the writer's buffer: the file
	// sees Write calls of about this size.
	DefaultWriteBufferSize = 256 << 10
	minWriteBufferSize     = 4 << 10
)

// WriterOptions configure a Writer. The zero value is usable: zero fields
// take the defaults (EnsureDefaults).
type WriterOptions struct {
	// BlockSize is the target uncompressed size of a data block, in bytes.
	// A block always holds at least one entry, so an entry larger than
	// BlockSize gets a block of its own. Default 4096; at most MaxBlockSize.
	BlockSize int
	// BlockSizeDeviation, in percent of BlockSize: a block is closed before
	// an entry that would overflow it once it is within this margin of the
	// target, rather than overshooting. Default 10; 1 to 100.
	BlockSizeDeviation int
	// RestartInterval is the number of entries between restart points of a
	// data block. Default 16.
	RestartInterval int
	// IndexRestartInterval is the same for the index block. Default 1.
	IndexRestartInterval int
	// Compression compresses data and index blocks. A block that does not
	// shrink by at least 12.5% is stored raw. Default NoCompression.
	Compression Compression
	// FilterPolicy builds a whole-file filter over the user keys of the
	// point entries. The zero policy (filter.None) writes no filter.
	FilterPolicy filter.Policy
	// WriteBufferSize is the size of the buffer between the writer and the
	// file. Default DefaultWriteBufferSize; at least 4 KiB.
	WriteBufferSize int
	// FileNum, when not 0, is recorded in the properties as the file's
	// identity; a Reader opened with another ReaderOptions.FileNum refuses
	// the file.
	FileNum uint64
}

// EnsureDefaults returns a copy of o with every zero field set to its
// default.
func (o WriterOptions) EnsureDefaults() WriterOptions {
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.BlockSizeDeviation == 0 {
		o.BlockSizeDeviation = DefaultBlockSizeDeviation
	}
	if o.RestartInterval == 0 {
		o.RestartInterval = DefaultRestartInterval
	}
	if o.IndexRestartInterval == 0 {
		o.IndexRestartInterval = DefaultIndexRestartInterval
	}
	if o.WriteBufferSize == 0 {
		o.WriteBufferSize = DefaultWriteBufferSize
	}
	return o
}

// Validate reports every field out of range, one per line, in a single
// error. Zero fields are valid (they mean the default).
func (o WriterOptions) Validate() error {
	var errs []error
	bad := func(field string, v any, want string) {
		errs = append(errs, fmt.Errorf("table: WriterOptions.%s = %v: want %s", field, v, want))
	}
	if o.BlockSize < 0 || o.BlockSize > MaxBlockSize {
		bad("BlockSize", o.BlockSize, fmt.Sprintf("0 (default) or 1 to %d", MaxBlockSize))
	}
	if o.BlockSizeDeviation < 0 || o.BlockSizeDeviation > 100 {
		bad("BlockSizeDeviation", o.BlockSizeDeviation, "0 (default) or 1 to 100")
	}
	if o.RestartInterval < 0 || o.RestartInterval > 1<<16 {
		bad("RestartInterval", o.RestartInterval, "0 (default) or 1 to 65536")
	}
	if o.IndexRestartInterval < 0 || o.IndexRestartInterval > 1<<16 {
		bad("IndexRestartInterval", o.IndexRestartInterval, "0 (default) or 1 to 65536")
	}
	if o.Compression >= numCompressions {
		bad("Compression", o.Compression, "none, snappy or zstd")
	}
	if o.WriteBufferSize != 0 && (o.WriteBufferSize < minWriteBufferSize || o.WriteBufferSize > 1<<30) {
		bad("WriteBufferSize", o.WriteBufferSize, fmt.Sprintf("0 (default) or %d to %d", minWriteBufferSize, 1<<30))
	}
	if err := o.FilterPolicy.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("table: WriterOptions.FilterPolicy: %w", err))
	}
	return errors.Join(errs...)
}

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	// Cache is the block cache for data blocks. Nil means no cache: every
	// block read goes to the file, into buffers owned by the iterator or
	// lookup that asked.
	Cache *cache.Cache
	// CacheNS and FileNum name the file's blocks in the cache:
	// cache.Key{NS: CacheNS, File: FileNum, Offset: block offset}. Two open
	// readers must not share (CacheNS, FileNum) unless they read the same
	// file. A table whose properties record another file number
	// (WriterOptions.FileNum) fails to open as corrupt.
	CacheNS, FileNum uint64
	// Stats receives the database-wide counts of reads, cache lookups and
	// filter probes. Nil counts nothing.
	Stats *stats.Counters
	// Pool runs the background reads of iterators with IterOptions.AsyncIO
	// and of PrepareScan with PrepareOptions.Async. Its owner (the
	// database) closes it after every reader is closed. Nil makes those
	// reads synchronous.
	Pool *prefetch.Pool
}

// FillBudget is how many bytes of blocks a scan may still insert into the
// block cache. A long scan that keeps missing the cache reads data the
// cache does not hold and will evict before it is read again; each block
// it inserts costs an allocation, its garbage, and an insertion that
// evicts another, about half of a warm scan's CPU per entry. Past its
// budget such a scan reads its misses into its own buffers, as
// DontFillCache does; the blocks already cached still serve it.
//
// The iterators sharing a budget must be used by one goroutine at a time.
type FillBudget struct {
	// Limit is the bytes the scan may insert.
	Limit int64
	// used is the bytes inserted so far.
	used int64
}

// Reset makes the whole Limit available again: a new scan begins.
func (b *FillBudget) Reset() { b.used = 0 }

// spent reports whether the budget is used up.
func (b *FillBudget) spent() bool { return b != nil && b.used >= b.Limit }

// IterOptions configure one Iter.
type IterOptions struct {
	// Lower and Upper bound the user keys the iterator returns to
	// [Lower, Upper); nil means unbounded. The iterator stops at Upper going
	// forward and at Lower going backward; it also skips data blocks that
	// lie wholly outside the bounds without reading them.
	Lower, Upper []byte
	// Stats, when not nil, receives the counts of this iterator's reads and
	// cache lookups, in addition to ReaderOptions.Stats.
	Stats *stats.Counters
	// DontFillCache makes the iterator use blocks already in the cache but
	// not insert the blocks it reads (compactions: one pass over the file
	// should not evict the working set).
	DontFillCache bool
	// FillBudget, when not nil, caps the bytes of blocks the iterator
	// inserts into the cache, shared with the other iterators given the same
	// budget (the tables of one scan): once they have inserted Limit bytes,
	// further misses are read as with DontFillCache, until the owner of the
	// budget resets it (FillBudget.Reset).
	FillBudget *FillBudget

	// ReadaheadSize, when positive, is an explicit readahead: every data
	// block the iterator must read from the file is read together with
	// this many bytes after it, from the first read on (clamped to
	// prefetch.MaxReadaheadSize). For scans known to be long. Zero selects
	// automatic readahead.
	//
	// Whatever the mode, readahead never reads past the block holding
	// Upper (found in the index) nor past the data blocks, backward moves
	// never read ahead, and blocks found in the block cache are not read.
	// While the page cache serves a mapped file (ReaderOptions.Pool's
	// latency gauge says its reads are fast), no mode reads ahead: each
	// block is copied from the mapping (see prefetch.Buffer), unless
	// ForceReadahead.
	ReadaheadSize int64
	// InitialAutoReadahead and MaxAutoReadahead tune automatic readahead:
	// after two adjacent block reads (cache hits count), the next block
	// read from the file brings InitialAutoReadahead bytes after it, and
	// each further one twice as many, up to MaxAutoReadahead; a jump starts
	// over. Zero means the defaults, prefetch.DefaultInitialReadahead (8
	// KiB) and prefetch.DefaultMaxReadahead (256 KiB); a negative
	// MaxAutoReadahead turns automatic readahead off (the iterator then
	// reads exactly the blocks it needs, as a point lookup does).
	InitialAutoReadahead int64
	MaxAutoReadahead     int64
	// AsyncIO double-buffers the readahead: while the iterator consumes
	// one region, the next is read in the background on
	// ReaderOptions.Pool. Without a pool it has no effect.
	AsyncIO bool
	// ForceReadahead reads ahead even while the page cache serves a mapped
	// file: for a reader of the whole file (a compaction), whose blocks the
	// pool's gauge, fed by other readers, says nothing of.
	ForceReadahead bool

	// Prepared, when not nil, is a scan prepared on this reader
	// (Reader.PrepareScan): the iterator takes its blocks from it, without
	// a cache lookup or a read, and stops at the end of each prepared range
	// (see PreparedScan). Close the iterator before the PreparedScan.
	Prepared *PreparedScan
}

// prefetchOptions returns the options of the iterator's prefetch buffer.
func (o *IterOptions) prefetchOptions(pool *prefetch.Pool, limit uint64, sink stats.Sink) prefetch.Options {
	return prefetch.Options{
		ReadaheadSize:    o.ReadaheadSize,
		InitialReadahead: o.InitialAutoReadahead,
		MaxReadahead:     o.MaxAutoReadahead,
		AsyncIO:          o.AsyncIO,
		ForceReadahead:   o.ForceReadahead,
		Pool:             pool,
		Limit:            int64(limit),
		Stats:            sink,
	}
}
