package kv

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

// Options configure a database. The zero value (or nil) gives sensible
// defaults; Open fills zero fields with them (EnsureDefaults) and rejects
// bad values with one error that lists every problem (Validate). Open works
// on a copy: the caller's Options are never modified, and options cannot
// change while the database is open.
type Options struct {
	// FS is the filesystem. Default: vfs.Default, the operating system's.
	FS vfs.FS

	// ErrorIfNotExist makes Open fail when the directory holds no database,
	// instead of creating one.
	ErrorIfNotExist bool

	// MemtableSize is the size in bytes of a memtable; a full one is
	// flushed to a level-0 table. Default 64 MiB, floor 256 KiB.
	MemtableSize int
	// MemtableStopWritesThreshold is the number of memtables (the mutable
	// one plus those waiting for a flush) at which writes stop until a flush
	// finishes. Default 3 (two can wait), floor 2.
	MemtableStopWritesThreshold int

	// L0CompactionTrigger is the number of level-0 files that triggers a
	// compaction into the base level. Default 4.
	L0CompactionTrigger int
	// L0SlowdownWritesTrigger is the number of level-0 files at which each
	// write group is delayed by a millisecond, letting compactions catch up.
	// Default 12.
	L0SlowdownWritesTrigger int
	// L0StopWritesTrigger is the number of level-0 files at which writes
	// stop until compactions bring it down. Default 20.
	L0StopWritesTrigger int
	// LBaseMaxBytes is the target size of level 1; each further level is
	// LevelMultiplier times larger. Defaults 64 MiB and 10.
	LBaseMaxBytes   uint64
	LevelMultiplier float64
	// TargetFileSize is the size at which compactions cut output tables.
	// Default 8 MiB.
	TargetFileSize uint64
	// MaxManifestFileSize is the size at which the manifest is rewritten.
	// Default 16 MiB.
	MaxManifestFileSize int64

	// BlockSize is the target uncompressed size of data blocks. Default 4096.
	BlockSize int
	// BlockRestartInterval is the number of keys between restart points in
	// data blocks. Default 16.
	BlockRestartInterval int
	// Compression of data blocks. The zero value is NoCompression: blocks
	// stored raw can be read in place from a mapped file (see
	// table.Reader), which the read path is built around; Snappy, Zstd or
	// S2 trade that for space.
	Compression table.Compression
	// FilterPolicy chooses the tables' filters. The zero value means the
	// default, a Bloom filter of 10 bits per key; filter.Policy{Type:
	// filter.None} with DisableFilters turns filters off.
	FilterPolicy filter.Policy
	// DisableFilters writes tables without filters.
	DisableFilters bool

	// Cache is the block cache, which several databases may share. Default:
	// a cache of CacheSize bytes owned by this database.
	Cache *cache.Cache
	// CacheSize is the capacity of the default block cache. Default 8 MiB.
	CacheSize int64
	// MaxOpenFiles bounds the number of table files kept open. Default 1000,
	// floor 16.
	MaxOpenFiles int

	// UseDirectReads opens tables with O_DIRECT: reads bypass the operating
	// system's page cache (all reads are then aligned).
	UseDirectReads bool
	// DisableMmapReads stops mapping table files into memory. With the
	// mapping, a read of up to 64 KiB whose bytes are in the page cache
	// copies them from the mapping instead of calling pread, which costs
	// several times more (see vfs.Mapped), and a table whose blocks are
	// stored raw is read without the block cache; larger reads, and every
	// read while reads are slow (the bytes are probably not in the page
	// cache), use pread and the cache. While the page cache serves a
	// mapped table, iterators read nothing ahead: each block is copied
	// from the mapping. Direct reads never map.
	DisableMmapReads bool
	// DisableIOUring makes background reads (AsyncIO) run on the I/O
	// pool's goroutines. By default an iterator reading ahead submits its
	// reads to an io_uring (Linux) and collects them itself, which on a
	// machine with few CPUs overlaps reading and decoding where a hand-off
	// to another goroutine does not (see kv/uring).
	DisableIOUring bool
	// InitialAutoReadahead and MaxAutoReadahead tune the automatic readahead
	// of iterators: after two adjacent block reads, the next read brings
	// InitialAutoReadahead bytes more, doubling on each further adjacent
	// read up to MaxAutoReadahead. Defaults 8 KiB and 256 KiB; a negative
	// MaxAutoReadahead turns automatic readahead off.
	InitialAutoReadahead int64
	MaxAutoReadahead     int64
	// IOQueueDepth is the number of background reads (async prefetch,
	// prepared scans) in flight at once. Default 32.
	IOQueueDepth int
	// CompactionReadahead is the readahead of compaction inputs. Default
	// 2 MiB. Compactions read ahead even while the page cache serves
	// foreground reads (table.IterOptions.ForceReadahead).
	CompactionReadahead int64
	// CompactionRateLimit, when positive, paces each compaction to read at
	// most this many bytes of entries per second, so that scans sharing
	// the disk and the CPUs with it keep their rate; compactions then take
	// longer, and writes may stall on the work they leave. 0 (the
	// default): no limit.
	CompactionRateLimit int64
	// CompactionPaceReadsOnly applies CompactionRateLimit only while the
	// database serves reads (a lookup, iterator seek, MultiGet or
	// MultiScan in the last 100 ms): compactions run at full speed while
	// nothing reads.
	CompactionPaceReadsOnly bool
	// CompactionPriority is the CPU and I/O priority compactions run at
	// (Linux). Default CompactionPriorityNormal: the process's own.
	// CompactionPriorityIdle lets reads beside a compaction keep most of
	// their rate on a machine whose CPUs the database has to itself.
	CompactionPriority CompactionPriority

	// WALRecovery says what Open does with a corrupt write-ahead log record
	// that is not the torn tail of the last log (a torn tail is always
	// tolerated and reported). Default WALRecoveryStrict: fail.
	WALRecovery WALRecoveryMode
	// DisableWAL writes commits to the memtable only: a crash loses every
	// commit not yet flushed. For bulk loads and benchmarks.
	DisableWAL bool

	// ResumeInterval is how often a database made read-only by a full disk
	// tries to resume (see DB.Resume). Default 1s.
	ResumeInterval time.Duration

	// Logger receives the engine's events (torn WAL tails at recovery,
	// background errors, flushes and compactions). Default: discard.
	Logger Logger
}

// WALRecoveryMode says how Open treats corruption in the write-ahead log.
type WALRecoveryMode int

const (
	// WALRecoveryStrict fails Open on corruption anywhere but the torn tail
	// of the last log.
	WALRecoveryStrict WALRecoveryMode = iota
	// WALRecoverySkipCorrupt drops corrupt records, logs how many bytes were
	// dropped, and recovers everything else. Commits in the dropped bytes are
	// lost: use it to salvage a damaged database, never by default.
	WALRecoverySkipCorrupt
)

// Logger receives the engine's messages. It must be safe for concurrent use.
type Logger interface {
	Infof(format string, args ...any)
	Errorf(format string, args ...any)
}

type discardLogger struct{}

func (discardLogger) Infof(string, ...any)  {}
func (discardLogger) Errorf(string, ...any) {}

// Clone returns a copy of o (nil gives zero Options).
func (o *Options) Clone() *Options {
	if o == nil {
		return &Options{}
	}
	c := *o
	return &c
}

// EnsureDefaults fills every zero field with its default and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MemtableSize == 0 {
		o.MemtableSize = 64 << 20
	}
	if o.MemtableStopWritesThreshold == 0 {
		o.MemtableStopWritesThreshold = 3
	}
	if o.L0CompactionTrigger == 0 {
		o.L0CompactionTrigger = 4
	}
	if o.L0SlowdownWritesTrigger == 0 {
		o.L0SlowdownWritesTrigger = 12
	}
	if o.L0StopWritesTrigger == 0 {
		o.L0StopWritesTrigger = 20
	}
	if o.LBaseMaxBytes == 0 {
		o.LBaseMaxBytes = 64 << 20
	}
	if o.LevelMultiplier == 0 {
		o.LevelMultiplier = 10
	}
	if o.TargetFileSize == 0 {
		o.TargetFileSize = 8 << 20
	}
	if o.MaxManifestFileSize == 0 {
		o.MaxManifestFileSize = 16 << 20
	}
	if o.BlockSize == 0 {
		o.BlockSize = 4096
	}
	if o.BlockRestartInterval == 0 {
		o.BlockRestartInterval = 16
	}
	if o.FilterPolicy == (filter.Policy{}) && !o.DisableFilters {
		o.FilterPolicy = filter.Policy{Type: filter.Bloom, BitsPerKey: 10}
	}
	if o.CacheSize == 0 {
		o.CacheSize = 8 << 20
	}
	if o.MaxOpenFiles == 0 {
		o.MaxOpenFiles = 1000
	}
	if o.IOQueueDepth == 0 {
		o.IOQueueDepth = 32
	}
	if o.CompactionReadahead == 0 {
		o.CompactionReadahead = 2 << 20
	}
	if o.ResumeInterval == 0 {
		o.ResumeInterval = time.Second
	}
	if o.Logger == nil {
		o.Logger = discardLogger{}
	}
	return o
}

// Validate returns an error listing every bad field, or nil.
func (o *Options) Validate() error {
	var bad []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	check(o.MemtableSize >= 256<<10, "MemtableSize %d is below the floor of 256 KiB", o.MemtableSize)
	check(int64(o.MemtableSize) <= 4<<30, "MemtableSize %d is above the limit of 4 GiB", o.MemtableSize)
	check(o.MemtableStopWritesThreshold >= 2, "MemtableStopWritesThreshold %d is below 2", o.MemtableStopWritesThreshold)
	check(o.L0CompactionTrigger >= 1, "L0CompactionTrigger %d is below 1", o.L0CompactionTrigger)
	check(o.L0SlowdownWritesTrigger >= o.L0CompactionTrigger,
		"L0SlowdownWritesTrigger %d is below L0CompactionTrigger %d", o.L0SlowdownWritesTrigger, o.L0CompactionTrigger)
	check(o.L0StopWritesTrigger >= o.L0SlowdownWritesTrigger,
		"L0StopWritesTrigger %d is below L0SlowdownWritesTrigger %d", o.L0StopWritesTrigger, o.L0SlowdownWritesTrigger)
	check(o.LevelMultiplier > 1, "LevelMultiplier %v is not above 1", o.LevelMultiplier)
	check(o.LBaseMaxBytes >= 64<<10, "LBaseMaxBytes %d is below 64 KiB", o.LBaseMaxBytes)
	check(o.TargetFileSize >= 64<<10, "TargetFileSize %d is below 64 KiB", o.TargetFileSize)
	check(o.MaxManifestFileSize >= 64<<10, "MaxManifestFileSize %d is below 64 KiB", o.MaxManifestFileSize)
	check(o.BlockSize >= 256 && o.BlockSize <= 1<<20, "BlockSize %d is outside [256, 1 MiB]", o.BlockSize)
	check(o.BlockRestartInterval >= 1 && o.BlockRestartInterval <= 1024,
		"BlockRestartInterval %d is outside [1, 1024]", o.BlockRestartInterval)
	check(o.Compression <= table.ZstdCompression, "Compression %d is unknown", o.Compression)
	if !o.DisableFilters {
		check(o.FilterPolicy.Type == filter.Bloom || o.FilterPolicy.Type == filter.Ribbon,
			"FilterPolicy.Type %v is not bloom or ribbon (set DisableFilters for none)", o.FilterPolicy.Type)
		check(o.FilterPolicy.BitsPerKey > 0 || o.FilterPolicy.FPRate > 0,
			"FilterPolicy needs BitsPerKey or FPRate above 0")
		check(o.FilterPolicy.FPRate >= 0 && o.FilterPolicy.FPRate < 1, "FilterPolicy.FPRate %v is outside [0, 1)", o.FilterPolicy.FPRate)
	}
	check(o.CacheSize >= 0, "CacheSize %d is negative", o.CacheSize)
	check(o.MaxOpenFiles >= 16, "MaxOpenFiles %d is below 16", o.MaxOpenFiles)
	check(o.IOQueueDepth >= 1 && o.IOQueueDepth <= 1024, "IOQueueDepth %d is outside [1, 1024]", o.IOQueueDepth)
	check(o.InitialAutoReadahead >= 0, "InitialAutoReadahead %d is negative", o.InitialAutoReadahead)
	check(o.ResumeInterval > 0, "ResumeInterval %v is not positive", o.ResumeInterval)
	check(o.CompactionReadahead >= 0, "CompactionReadahead %d is negative", o.CompactionReadahead)
	check(o.CompactionRateLimit >= 0, "CompactionRateLimit %d is negative", o.CompactionRateLimit)
	check(o.CompactionPriority >= CompactionPriorityNormal && o.CompactionPriority <= CompactionPriorityIdle,
		"CompactionPriority %d is unknown", o.CompactionPriority)
	check(o.WALRecovery == WALRecoveryStrict || o.WALRecovery == WALRecoverySkipCorrupt, "WALRecovery %d is unknown", o.WALRecovery)
	if len(bad) == 0 {
		return nil
	}
	return errors.New("kv: invalid options:\n  " + strings.Join(bad, "\n  "))
}

// WriteOptions modify one commit.
type WriteOptions struct {
	// Sync makes the commit return only after the write-ahead log is synced
	// to stable storage: the commit then survives a crash of the machine.
	// Commits waiting at the same time share one sync.
	Sync bool
}

// Sync and NoSync are the two common write options.
var (
	Sync   = &WriteOptions{Sync: true}
	NoSync = &WriteOptions{Sync: false}
)

// ReadOptions modify one read.
type ReadOptions struct {
	// Snapshot reads the database as of the snapshot; nil reads the latest
	// committed state.
	Snapshot *Snapshot
	// Stats, when not nil, also receives the counters of this read (file
	// reads, cache hits, filter probes, ...), in addition to the database's.
	Stats *stats.Counters
	// DontFillCache reads blocks without adding them to the block cache
	// (for one-off scans that would evict hotter blocks).
	DontFillCache bool
	// ReadaheadSize, for iterators, reads that many bytes ahead of every
	// block the iterator must read, from the first read on: for scans known
	// to be long. Zero leaves readahead automatic (see
	// Options.MaxAutoReadahead); negative turns it off. Either way,
	// nothing is read ahead while the page cache serves a mapped table
	// (see Options.DisableMmapReads).
	ReadaheadSize int64
	// AsyncIO, for iterators and prepared scans, reads ahead in the
	// background: while the iterator consumes one region of a table, the
	// next is read into a second buffer; a prepared scan issues all its
	// reads at once; MultiGet reads the blocks a batch misses in the block
	// cache at one level all at once (not with DontFillCache).
	AsyncIO bool
}

// IterOptions modify an iterator.
type IterOptions struct {
	ReadOptions
	// LowerBound, when not nil, is the inclusive lower bound of the keys the
	// iterator returns. UpperBound, when not nil, is the exclusive upper
	// bound. Forward moves check the upper bound, backward moves the lower;
	// tables use the bounds to avoid reading blocks beyond them.
	LowerBound, UpperBound []byte
	// CoalesceThreshold, for a MultiScan only, is the largest gap in bytes
	// between two data blocks that still lets one read fetch both (the gap
	// is read and dropped). Zero means 16 KiB; negative merges nothing,
	// not even adjacent blocks. Raise it when ranges are a few blocks
	// apart: one larger read costs less than several small ones.
	CoalesceThreshold int64
}
