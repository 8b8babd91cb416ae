// Package stats counts what the engine does: reads and their bytes, cache
// hits, filter outcomes, prefetching, MultiGet and MultiScan work, writes,
// flushes, compactions and stalls. Counter names follow RocksDB's tickers
// (see the table in docs/architecture.md) so that figures can be compared.
//
// Every counter is recorded in the database-wide [Counters] and, when the
// caller of an operation passes its own [Counters] (kv.ReadOptions.Stats),
// there too: that is how the SQL layer reports what one statement cost.
//
// # Concurrency
//
// Counters are atomic: safe for concurrent Add and Get. A Snapshot is a plain
// value.
package stats

import (
	"fmt"
	"io"
	"sync/atomic"
)

// Counter names one statistic.
type Counter int

// The counters. Names (String) are stable: tools parse them.
const (
	FileReadCount  Counter = iota // file.read.count: read calls issued to table files
	FileReadBytes                 // file.read.bytes: bytes read from table files
	FileOpens                     // file.opens: table files opened (table-cache misses)
	BlockCacheHit                 // block.cache.hit: block lookups served by the block cache
	BlockCacheMiss                // block.cache.miss: block lookups that had to read
	BlockCacheAdd                 // block.cache.add: blocks inserted into the block cache

	FilterChecked      // filter.checked: filter probes
	FilterUseful       // filter.useful: probes that answered "absent" and saved a read
	FilterTruePositive // filter.true.positive: probes that answered "present" and the key was there

	PrefetchBytes       // prefetch.bytes: bytes read by readahead
	PrefetchBytesUsed   // prefetch.bytes.used: prefetched bytes handed to a reader
	PrefetchBytesWasted // prefetch.bytes.wasted: prefetched bytes never used
	PrefetchHits        // prefetch.hits: block reads served from a prefetch buffer
	AsyncReadCount      // async.read.count: reads issued in the background
	AsyncReadBytes      // async.read.bytes: bytes of those reads
	AsyncWaitCount      // async.wait.count: times a reader waited for a background read
	AsyncWaitMicros     // async.wait.micros: time spent waiting for background reads

	GetCalls             // get.calls: point lookups
	IterSeeks            // iter.seeks: iterator seeks (SeekGE, SeekLT, First, Last)
	MultiGetBatches      // multiget.batches: MultiGet batches
	MultiGetKeys         // multiget.keys: keys looked up by MultiGet
	MultiGetKeysFound    // multiget.keys.found: keys MultiGet found
	MultiGetBlocksLoaded // multiget.blocks.loaded: blocks MultiGet read at once with async I/O

	MultiScanPrepares         // multiscan.prepares: MultiScan Prepare calls
	MultiScanRanges           // multiscan.ranges: ranges prepared
	MultiScanBlocksPrefetched // multiscan.blocks.prefetched: blocks Prepare read
	MultiScanBlocksFromCache  // multiscan.blocks.from.cache: blocks Prepare found cached
	MultiScanCoalescedReads   // multiscan.coalesced.reads: read calls Prepare issued after coalescing
	MultiScanPrefetchBytes    // multiscan.prefetch.bytes: bytes those reads fetched

	Commits           // commits: batches committed
	BytesWritten      // bytes.written: user key and value bytes committed
	WALBytes          // wal.bytes: bytes appended to the write-ahead log
	WALSyncs          // wal.syncs: write-ahead log syncs (one per commit group)
	Flushes           // flush.count: memtables flushed
	FlushBytes        // flush.bytes: bytes of the tables flushes wrote
	Compactions       // compaction.count: compactions run
	CompactionRead    // compaction.bytes.read: bytes compactions read
	CompactionWritten // compaction.bytes.written: bytes compactions wrote
	Stalls            // stall.count: writes delayed or stopped for flushes or compactions
	StallMicros       // stall.micros: time writes spent stalled
	BackgroundErrs    // background.errors: flushes or compactions that failed

	AsyncReadAbandoned // async.read.abandoned: background reads dropped unused because the reader moved away or closed

	MultiScanTablePrepares // multiscan.table.prepares: tables a MultiScan prepared

	FileReadMapped // file.read.mapped: of file.read.count, reads copied from a memory mapping of the file

	AsyncReadRing // async.read.ring: of async.read.count, reads the reader submitted to an io_uring itself

	IterSamples // iter.samples: read samples iterators took, one per MiB of entries returned on average

	NumCounters // the number of counters; not a counter
)

var names = [NumCounters]string{
	FileReadCount:             "file.read.count",
	FileReadBytes:             "file.read.bytes",
	FileOpens:                 "file.opens",
	BlockCacheHit:             "block.cache.hit",
	BlockCacheMiss:            "block.cache.miss",
	BlockCacheAdd:             "block.cache.add",
	FilterChecked:             "filter.checked",
	FilterUseful:              "filter.useful",
	FilterTruePositive:        "filter.true.positive",
	PrefetchBytes:             "prefetch.bytes",
	PrefetchBytesUsed:         "prefetch.bytes.used",
	PrefetchBytesWasted:       "prefetch.bytes.wasted",
	PrefetchHits:              "prefetch.hits",
	AsyncReadCount:            "async.read.count",
	AsyncReadBytes:            "async.read.bytes",
	AsyncWaitCount:            "async.wait.count",
	AsyncWaitMicros:           "async.wait.micros",
	GetCalls:                  "get.calls",
	IterSeeks:                 "iter.seeks",
	MultiGetBatches:           "multiget.batches",
	MultiGetKeys:              "multiget.keys",
	MultiGetKeysFound:         "multiget.keys.found",
	MultiGetBlocksLoaded:      "multiget.blocks.loaded",
	MultiScanPrepares:         "multiscan.prepares",
	MultiScanRanges:           "multiscan.ranges",
	MultiScanBlocksPrefetched: "multiscan.blocks.prefetched",
	MultiScanBlocksFromCache:  "multiscan.blocks.from.cache",
	MultiScanCoalescedReads:   "multiscan.coalesced.reads",
	MultiScanPrefetchBytes:    "multiscan.prefetch.bytes",
	Commits:                   "commits",
	BytesWritten:              "bytes.written",
	WALBytes:                  "wal.bytes",
	WALSyncs:                  "wal.syncs",
	Flushes:                   "flush.count",
	FlushBytes:                "flush.bytes",
	Compactions:               "compaction.count",
	CompactionRead:            "compaction.bytes.read",
	CompactionWritten:         "compaction.bytes.written",
	Stalls:                    "stall.count",
	StallMicros:               "stall.micros",
	BackgroundErrs:            "background.errors",
	AsyncReadAbandoned:        "async.read.abandoned",
	MultiScanTablePrepares:    "multiscan.table.prepares",
	FileReadMapped:            "file.read.mapped",
	AsyncReadRing:             "async.read.ring",
	IterSamples:               "iter.samples",
}

// String returns the counter's stable name, e.g. "file.read.count".
func (c Counter) String() string {
	if c >= 0 && c < NumCounters {
		return names[c]
	}
	return fmt.Sprintf("counter(%d)", int(c))
}

// Lookup returns the counter with the given name.
func Lookup(name string) (Counter, bool) {
	for i, n := range names {
		if n == name {
			return Counter(i), true
		}
	}
	return 0, false
}

// Counters is a set of atomic counters. The zero value is ready to use, and
// a nil *Counters ignores Add, which lets hot paths record into an optional
// per-operation set without a branch at every call site.
type Counters struct {
	v [NumCounters]atomic.Int64
}

// Add adds n to counter c.
func (s *Counters) Add(c Counter, n int64) {
	if s != nil {
		s.v[c].Add(n)
	}
}

// Get returns the value of counter c.
func (s *Counters) Get(c Counter) int64 {
	if s == nil {
		return 0
	}
	return s.v[c].Load()
}

// Reset sets every counter to zero. It stores only into counters that are
// not zero already: an atomic store is an exchange on amd64, and a
// statement's set is reset at every statement while most of its counters
// stay zero (a point read touches a handful of the NumCounters).
func (s *Counters) Reset() {
	for i := range s.v {
		if s.v[i].Load() != 0 {
			s.v[i].Store(0)
		}
	}
}

// Snapshot returns the current values. Counters move independently, so a
// snapshot taken during activity is not a single instant.
func (s *Counters) Snapshot() Snapshot {
	var out Snapshot
	if s == nil {
		return out
	}
	for i := range s.v {
		out[i] = s.v[i].Load()
	}
	return out
}

// Snapshot is a copy of a set of counters, indexed by Counter.
type Snapshot [NumCounters]int64

// Get returns the value of counter c.
func (s Snapshot) Get(c Counter) int64 { return s[c] }

// Sub returns s - o, counter by counter: what happened between two
// snapshots.
func (s Snapshot) Sub(o Snapshot) Snapshot {
	for i := range s {
		s[i] -= o[i]
	}
	return s
}

// WriteTo writes one line per counter in RocksDB's --statistics shape,
// "file.read.count COUNT : 12", each name with the given prefix.
func (s Snapshot) WriteTo(w io.Writer, prefix string) error {
	for i, v := range s {
		if _, err := fmt.Fprintf(w, "%s%s COUNT : %d\n", prefix, names[i], v); err != nil {
			return err
		}
	}
	return nil
}

// Sink records into the database-wide counters and, when Op is not nil, into
// the counters of one operation.
type Sink struct {
	DB *Counters
	Op *Counters
}

// Add adds n to counter c of both sets.
func (s Sink) Add(c Counter, n int64) {
	s.DB.Add(c, n)
	s.Op.Add(c, n)
}
