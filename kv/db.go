package kv

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/leveliter"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/internal/rangedel"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/wal"
)

// DB is an open database: an LSM tree of memtables and leveled tables in
// one directory.
//
// A DB is safe for concurrent use by many goroutines.
//
// Locks, in the order they may be taken:
//
//	commit.mu   the commit queue; never held while taking another lock
//	mu          the database state: memtables, the version set, snapshots,
//	            background work; held during manifest writes (rare) and
//	            memtable rotation, never during reads of tables
//	rsMu        the current read state pointer; a leaf, taken briefly by
//	            every read to reference the read state
//
// Readers never take mu: they reference the current read state (memtables
// plus version) under rsMu and read lock-free from there, so flushes and
// compactions never block them.
type DB struct {
	dirname string
	opts    *Options
	fs      vfs.FS
	lock    io.Closer

	cache   *cache.Cache
	cacheNS uint64
	stats   stats.Counters
	tables  *tableCache
	// ioPool runs background reads (async prefetch, prepared scans); closed
	// after the table cache.
	ioPool *prefetch.Pool

	// visibleSeq is the sequence number of the last commit readers see.
	visibleSeq atomic.Uint64

	commit commitPipeline

	rsMu      sync.Mutex
	readState *readState // guarded by rsMu; replaced under mu too

	mu struct {
		sync.Mutex
		// cond is broadcast when a flush or compaction finishes, a background
		// error occurs or the database closes: stalled writers wait on it.
		cond   sync.Cond
		closed bool

		versions *manifest.VersionSet
		mem      *memTable
		imms     []*memTable // waiting for a flush, oldest first
		log      struct {
			w   *wal.Writer // nil with DisableWAL
			num uint64
		}
		snapshots snapshotList

		// writeErr is set when a WAL write or sync failed; bgErr when a
		// flush or compaction failed. Either makes the database read-only.
		writeErr error
		bgErr    error

		flushing   bool
		compacting int
		// pendingOutputs are table numbers being written: never obsolete.
		pendingOutputs map[uint64]bool
	}

	// l0Files mirrors the number of level-0 files of the current version for
	// the commit leader's fast path.
	l0Files atomic.Int32
	// readOnly mirrors mu.writeErr != nil || mu.bgErr != nil, and closed
	// mu.closed, for the commit leader's fast path.
	readOnly atomic.Bool
	closed   atomic.Bool

	// mgValueSize is the average value size the last MultiGet found, to
	// size the next one's arena.
	mgValueSize atomic.Int64

	// arenas holds a retired memtable arena for the next memtable.
	arenas chan []uint64

	// logW is the current log writer (nil with DisableWAL), for the log
	// flusher, which must not take mu.
	logW atomic.Pointer[wal.Writer]

	// l0Reads counts the read samples that found level-0 tables over the
	// scanned key; readCompaction asks the compaction goroutine to compact
	// level 0 (see noteLevel0Read).
	l0Reads        atomic.Int64
	readCompaction atomic.Bool

	bg struct {
		walFlushCh chan struct{}
		flushCh    chan struct{}
		compactCh  chan struct{}
		closing    chan struct{}
		wg         sync.WaitGroup
	}
}

// memTable is a memtable with the number of the WAL that holds its writes.
//
// It is reference counted: one reference while the database holds it (as
// the mutable memtable or waiting for a flush), one per read state that
// includes it. When the last goes, its arena is recycled for a new
// memtable, so no key or value it handed out may outlive the read state it
// was read through.
type memTable struct {
	*memtable.Memtable
	logNum uint64
	db     *DB
	refs   atomic.Int32

	// tombs caches the range tombstones of an immutable memtable.
	tombsOnce sync.Once
	tombs     *rangedel.Set
}

// newMemTable returns a memtable holding one reference, built on a
// recycled arena when one of the right size is at hand.
func (d *DB) newMemTable(size int, logNum uint64) *memTable {
	m := &memTable{logNum: logNum, db: d}
	select {
	case a := <-d.arenas:
		if len(a)*8 == size {
			m.Memtable = memtable.NewFromArena(a)
		}
	default:
	}
	if m.Memtable == nil {
		m.Memtable = memtable.New(size)
	}
	m.refs.Store(1)
	return m
}

func (m *memTable) ref() { m.refs.Add(1) }

func (m *memTable) unref() {
	if m.refs.Add(-1) != 0 {
		return
	}
	d := m.db
	if m.Capacity() != d.opts.MemtableSize&^7 {
		return // an oversized memtable for a huge batch: let it go
	}
	a := m.TakeArena()
	m.Memtable = nil
	select {
	case d.arenas <- a:
	default:
	}
}

// rangeDels returns the memtable's range tombstones visible at seq (all of
// them for an immutable memtable, whose set is cached), or nil.
func (m *memTable) rangeDels(immutable bool) *rangedel.Set {
	if !m.HasRangeDeletes() {
		return nil
	}
	if immutable {
		m.tombsOnce.Do(func() { m.tombs = rangedel.NewSet(m.collectTombstones(base.SeqNumMax)) })
		return m.tombs
	}
	return rangedel.NewSet(m.collectTombstones(base.SeqNumMax))
}

// collectTombstones returns the memtable's range tombstones with a sequence
// number <= seq. The keys alias the arena.
func (m *memTable) collectTombstones(seq base.SeqNum) []rangedel.Tombstone {
	var ts []rangedel.Tombstone
	it := m.NewRangeDelIter()
	for kv := it.First(); kv != nil; kv = it.Next() {
		if kv.Seq() <= seq {
			ts = append(ts, rangedel.Tombstone{Start: kv.UserKey(), End: kv.V, Seq: kv.Seq()})
		}
	}
	it.Close()
	return ts
}

// readState is what a reader needs: the memtables and the version, fixed
// for the read's life. It is reference counted; the last unref releases the
// version (which may make table files obsolete).
type readState struct {
	db   *DB
	refs atomic.Int32
	mem  *memTable
	imms []*memTable // oldest first
	v    *manifest.Version
	// files holds, for L1 and below, the level's files as a level
	// iterator takes them, and rangeDels whether any file of the level has
	// range deletions. Built once per state, so that making an iterator
	// costs nothing per file of the tree.
	files     [manifest.NumLevels][]leveliter.File
	rangeDels [manifest.NumLevels]bool
}

// initLevels fills rs.files and rs.rangeDels from rs.v.
func (rs *readState) initLevels() {
	for level := range manifest.NumLevels {
		files := rs.v.Levels[level]
		if level > 0 {
			lf := make([]leveliter.File, len(files))
			for i, f := range files {
				lf[i] = leveliter.File{Smallest: f.Smallest, Largest: f.Largest, Data: f}
			}
			rs.files[level] = lf
		}
		for _, f := range files {
			if f.NumRangeDeletes > 0 {
				rs.rangeDels[level] = true
				break
			}
		}
	}
}

// numMemtables returns the number of memtables rs reads: the mutable one
// and the immutable ones.
func (rs *readState) numMemtables() int { return len(rs.imms) + 1 }

// memtable returns the i-th memtable of rs, newest first (0 is the mutable
// one), and whether it is immutable.
func (rs *readState) memtable(i int) (m *memTable, immutable bool) {
	if i == 0 {
		return rs.mem, false
	}
	return rs.imms[len(rs.imms)-i], true
}

func (rs *readState) unref() {
	if rs.refs.Add(-1) == 0 {
		rs.mem.unref()
		for _, m := range rs.imms {
			m.unref()
		}
		rs.v.Unref()
		rs.db.deleteObsoleteFiles()
	}
}

// tryLoadReadState is loadReadState for a caller that may run after
// Close (the commit pipeline): false when the database is closed.
func (d *DB) tryLoadReadState() (*readState, bool) {
	d.rsMu.Lock()
	rs := d.readState
	if rs != nil {
		rs.refs.Add(1)
	}
	d.rsMu.Unlock()
	return rs, rs != nil
}

// loadReadState returns the current read state, referenced.
func (d *DB) loadReadState() *readState {
	d.rsMu.Lock()
	rs := d.readState
	rs.refs.Add(1)
	d.rsMu.Unlock()
	return rs
}

// updateReadStateLocked installs a new read state from the current
// memtables and version. REQUIRES: d.mu held.
func (d *DB) updateReadStateLocked() {
	v := d.mu.versions.Current()
	v.Ref()
	rs := &readState{db: d, mem: d.mu.mem, imms: append([]*memTable(nil), d.mu.imms...), v: v}
	d.rsMu.Lock()
	old := d.readState
	d.rsMu.Unlock()
	if old != nil && old.v == v {
		// Only the memtables changed: the level lists still hold.
		rs.files, rs.rangeDels = old.files, old.rangeDels
	} else {
		rs.initLevels()
	}
	rs.refs.Store(1)
	rs.mem.ref()
	for _, m := range rs.imms {
		m.ref()
	}
	d.l0Files.Store(int32(v.NumFiles(0)))
	d.rsMu.Lock()
	d.readState = rs
	d.rsMu.Unlock()
	if old != nil {
		old.unref()
	}
}

// Stats returns the database's counters.
func (d *DB) Stats() stats.Snapshot { return d.stats.Snapshot() }

// Counters returns the database's live counters (for callers that record
// deltas around an operation).
func (d *DB) Counters() *stats.Counters { return &d.stats }

// LastSeq returns the sequence number of the last visible commit.
func (d *DB) LastSeq() uint64 { return d.visibleSeq.Load() }
