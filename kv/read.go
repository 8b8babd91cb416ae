package kv

import (
	"bytes"
	"errors"
	"sync"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/leveliter"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/internal/rangedel"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
)

// readSeq returns the sequence number a read sees.
func (d *DB) readSeq(ro *ReadOptions) base.SeqNum {
	if ro != nil && ro.Snapshot != nil {
		return ro.Snapshot.seq
	}
	return base.SeqNum(d.visibleSeq.Load())
}

func opStats(ro *ReadOptions) *stats.Counters {
	if ro == nil {
		return nil
	}
	return ro.Stats
}

// Get returns a copy of the value of key, or ErrNotFound.
func (d *DB) Get(key []byte, ro *ReadOptions) ([]byte, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	seq := d.readSeq(ro)
	st := opStats(ro)
	d.stats.Add(stats.GetCalls, 1)
	st.Add(stats.GetCalls, 1)
	rs := d.loadReadState()
	defer rs.unref()
	v, found, err := d.get(rs, key, seq, st, nil)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNotFound
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// pointInFile reports whether a file's bounds may hold an entry of ukey.
func pointInFile(f *manifest.FileMetadata, ukey []byte) bool {
	if bytes.Compare(ukey, f.SmallestUserKey()) < 0 {
		return false
	}
	c := bytes.Compare(ukey, f.LargestUserKey())
	return c < 0 || (c == 0 && !base.IsRangeDeleteSentinel(f.Largest))
}

// get looks key up at seq, newest source first, appending a live value to
// dst. A range tombstone seen in a source covers entries with a smaller
// sequence number found there or in any older source.
func (d *DB) get(rs *readState, key []byte, seq base.SeqNum, st *stats.Counters, dst []byte) ([]byte, bool, error) {
	var maxTomb base.SeqNum
	decide := func(value []byte, kind base.Kind, eseq base.SeqNum) ([]byte, bool, error) {
		if kind != base.KindSet || eseq < maxTomb {
			return dst, false, nil
		}
		return value, true, nil
	}
	for i := range rs.numMemtables() {
		m, immutable := rs.memtable(i)
		if m.HasRangeDeletes() {
			maxTomb = max(maxTomb, m.maxCoveringSeq(key, seq, immutable))
		}
		if v, kind, eseq, found := m.Get(key, seq); found {
			return decide(append(dst, v...), kind, eseq)
		}
	}
	lookup := func(f *manifest.FileMetadata) ([]byte, bool, bool, error) {
		e, err := d.tables.get(f.FileNum)
		if err != nil {
			return dst, false, false, err
		}
		defer d.tables.release(e)
		if e.tombs != nil {
			maxTomb = max(maxTomb, e.tombs.MaxCoveringSeq(key, seq))
		}
		v, kind, eseq, found, err := e.reader.Get(key, seq, dst, st)
		if err != nil || !found {
			return dst, false, false, err
		}
		v, ok, err := decide(v, kind, eseq)
		return v, ok, true, err
	}
	l0 := rs.v.Levels[0]
	for i := len(l0) - 1; i >= 0; i-- {
		if !pointInFile(l0[i], key) {
			continue
		}
		if v, ok, done, err := lookup(l0[i]); err != nil || done {
			return v, ok, err
		}
	}
	for level := 1; level < manifest.NumLevels; level++ {
		files := rs.v.Levels[level]
		// The first file whose largest key reaches key.
		i := searchFiles(files, key)
		if i == len(files) || !pointInFile(files[i], key) {
			continue
		}
		if v, ok, done, err := lookup(files[i]); err != nil || done {
			return v, ok, err
		}
	}
	return dst, false, nil
}

// searchFiles returns the index of the first file of a sorted level whose
// largest key holds or passes ukey.
func searchFiles(files []*manifest.FileMetadata, ukey []byte) int {
	lo, hi := 0, len(files)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := bytes.Compare(files[m].LargestUserKey(), ukey)
		if c < 0 || (c == 0 && base.IsRangeDeleteSentinel(files[m].Largest)) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// maxCoveringSeq returns the largest sequence number <= seq of the
// memtable's tombstones covering ukey.
func (m *memTable) maxCoveringSeq(ukey []byte, seq base.SeqNum, immutable bool) base.SeqNum {
	if immutable {
		return m.rangeDels(true).MaxCoveringSeq(ukey, seq)
	}
	// The mutable memtable changes under us: walk its tombstones, sorted by
	// start, until they start past ukey.
	var best base.SeqNum
	var it = m.NewRangeDelIter()
	for kv := it.First(); kv != nil && bytes.Compare(kv.UserKey(), ukey) <= 0; kv = it.Next() {
		if s := kv.Seq(); s <= seq && s > best && bytes.Compare(ukey, kv.V) < 0 {
			best = s
		}
	}
	it.Close()
	return best
}

// noEntryWithin reports whether the memtable it iterates holds no entry
// in [lower, upper) (nil: unbounded), searching with *buf as the search
// key's buffer. It leaves it unpositioned. An error counts as an entry:
// the merge, which will read the memtable, then reports it.
func noEntryWithin(it *memtable.Iter, lower, upper []byte, buf *[]byte) bool {
	var kv *base.KV
	if lower == nil {
		kv = it.First()
	} else {
		*buf = base.MakeSearchKey((*buf)[:0], lower, base.SeqNumMax)
		kv = it.SeekGE(*buf)
	}
	none := it.Error() == nil && (kv == nil || (upper != nil && bytes.Compare(kv.UserKey(), upper) >= 0))
	_ = it.Close()
	return none
}

// NewIter returns an iterator over the database (or a snapshot, with
// o.Snapshot). o may be nil.
func (d *DB) NewIter(o *IterOptions) (*Iterator, error) {
	return d.newIter(nil, o)
}

// tableIter is a table iterator holding its table open. Table iterators
// come and go at every file a level iterator moves to and at every range
// of a MultiScan; a pool keeps them, and the buffers of their table.Iter,
// from one use to the next. Nothing may use a tableIter after its Close.
type tableIter struct {
	table.Iter
	d *DB
	e *tableEntry
	// borrowed: e is a MultiScan's reference, which outlives the
	// iterator, so Close leaves it to the scan.
	borrowed bool
}

var tableIterPool = sync.Pool{New: func() any { return new(tableIter) }}

func (t *tableIter) Close() error {
	if t.e == nil {
		return nil // closed; already pooled, which a second Close would break
	}
	err := t.Iter.Close()
	if !t.borrowed {
		t.d.tables.release(t.e)
	}
	t.d, t.e, t.borrowed = nil, nil, false
	tableIterPool.Put(t)
	return err
}

// scanFillShare is the share of the block cache one scan (an iterator from
// a seek, First or Last on) may fill (a quarter): past it, the blocks it
// misses are read without being inserted (table.FillBudget). A scan that misses that much reads data the cache
// does not hold, which its own insertions would evict again before a
// rescan; inserting costs about half the CPU of such a scan. Scans shorter
// than that, and every scan's cache hits, are unaffected.
const scanFillShare = 4

// tableIterOptions returns the table iterator options of a read.
func (d *DB) tableIterOptions(ro *ReadOptions) table.IterOptions {
	o := table.IterOptions{
		InitialAutoReadahead: d.opts.InitialAutoReadahead,
		MaxAutoReadahead:     d.opts.MaxAutoReadahead,
	}
	if ro != nil {
		o.Stats = ro.Stats
		o.DontFillCache = ro.DontFillCache
		o.AsyncIO = ro.AsyncIO
		switch {
		case ro.ReadaheadSize > 0:
			o.ReadaheadSize = ro.ReadaheadSize
		case ro.ReadaheadSize < 0:
			o.MaxAutoReadahead = -1
		}
	}
	return o
}

// openTableIter opens an iterator over one table with the options of a
// read, bounded by [lower, upper).
func (d *DB) openTableIter(fileNum uint64, lower, upper []byte, o table.IterOptions) (base.InternalIterator, error) {
	e, err := d.tables.get(fileNum)
	if err != nil {
		return nil, err
	}
	o.Lower, o.Upper = lower, upper
	t := tableIterPool.Get().(*tableIter)
	t.d, t.e = d, e
	e.reader.InitIter(&t.Iter, o)
	return t, nil
}

// openPreparedIter opens an iterator over a table of a MultiScan, which
// takes its blocks from the table's prepared scan. The scan holds the table
// open until it closes, after its iterators: the iterator borrows that
// reference instead of taking one from the table cache.
func (d *DB) openPreparedIter(j *prepareJob, lower, upper []byte, o table.IterOptions) *tableIter {
	o.Lower, o.Upper = lower, upper
	t := tableIterPool.Get().(*tableIter)
	t.d, t.e, t.borrowed = d, j.entry, true
	j.scan.InitIter(&t.Iter, o)
	return t
}

func (d *DB) newIter(b *Batch, o *IterOptions) (*Iterator, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	return d.newIterAt(d.loadReadState(), b, o, nil)
}

// newIterAt builds an iterator over a read state it takes ownership of
// (released by the iterator's Close, or here on error). ms, when not nil,
// is the prepared MultiScan the iterator serves: it reads only the tables
// the scan prepared (see MultiScan.appendLevel).
func (d *DB) newIterAt(rs *readState, b *Batch, o *IterOptions, ms *MultiScan) (*Iterator, error) {
	var opts IterOptions
	if o != nil {
		opts = *o
	}
	seq := d.readSeq(&opts.ReadOptions)
	it := &Iterator{
		db: d, rs: rs, snap: seq,
		lower: opts.LowerBound, upper: opts.UpperBound,
		st:         stats.Sink{DB: &d.stats, Op: opts.Stats},
		sampleLeft: nextReadSample(),
	}
	mem := iterMemPool.Get().(*iterMem)
	iters := mem.iters[:0]
	var tombs []rangedel.Tombstone
	fail := func(err error) (*Iterator, error) {
		for _, i := range iters {
			i.Close()
		}
		rs.unref()
		mem.iters = iters
		putIterMem(mem, mem.keyBuf, mem.valBuf, mem.search)
		return nil, err
	}

	if b != nil {
		if b.index == nil {
			return fail(errors.New("kv: reading a batch that is not indexed"))
		}
		iters = append(iters, &batchIter{x: b.index, limit: b.count})
		for _, r := range b.rangeDels {
			start, end := b.rangeDel(r)
			tombs = append(tombs, rangedel.Tombstone{Start: start, End: end, Seq: seqBatchBit | base.SeqNum(r.ord)})
		}
	}
	// A MultiScan whose every range one table alone holds reads them all
	// through those tables' own iterators: its merge needs no inputs, only
	// the range tombstones.
	merge := ms == nil || ms.needsMerge()
	var mems []memtable.Iter
	if merge {
		mems = mem.memIters(rs.numMemtables())
	}
	// memClear: no memtable holds an entry within the bounds. A write made
	// after this point is newer than the iterator's snapshot, so the
	// memtables then have nothing the iterator could return.
	memClear := ms == nil && b == nil
	for i := range rs.numMemtables() {
		m, immutable := rs.memtable(i)
		if immutable {
			tombs = tombstonesOf(m.rangeDels(true), seq, tombs)
		} else if m.HasRangeDeletes() {
			tombs = append(tombs, m.collectTombstones(seq)...)
		}
		if merge {
			m.InitIter(&mems[i])
			if memClear && !m.Empty() {
				memClear = noEntryWithin(&mems[i], opts.LowerBound, opts.UpperBound, &mem.search)
			}
		}
	}
	lower, upper := opts.LowerBound, opts.UpperBound
	tio := &mem.tio // with the iterator's pooled memory: the level iterators keep it
	*tio = d.tableIterOptions(&opts.ReadOptions)
	if ms == nil && !tio.DontFillCache {
		it.fillBudget.Limit = d.cache.Capacity() / scanFillShare
		tio.FillBudget = &it.fillBudget
	}
	var upperIncl []byte // Overlaps takes an inclusive upper bound
	if upper != nil {
		upperIncl = upper
	}
	// The levels' overlapping files, gathered first: an iterator whose
	// bounds one table alone overlaps may read it without the merge.
	var levelFiles [manifest.NumLevels][]*manifest.FileMetadata
	var levelIters [manifest.NumLevels][]leveliter.File
	tables := 0
	for level := 0; level < manifest.NumLevels; level++ {
		if level == 0 {
			mem.l0 = rs.v.AppendOverlaps(mem.l0[:0], 0, lower, upperIncl)
			levelFiles[0] = mem.l0
		} else {
			i, j := rs.v.OverlapIndices(level, lower, upperIncl)
			levelFiles[level], levelIters[level] = rs.v.Levels[level][i:j], rs.files[level][i:j:j]
		}
		tables += len(levelFiles[level])
	}
	// One table and nothing else to read within the bounds (no batch, no
	// memtable entry there, no MultiScan): the iterator reads that table's
	// iterator directly, which applies the bounds itself. A merge of one
	// input and a level iterator over one file would return the same
	// entries through two more calls per entry and per seek (the short
	// ranges of SQL statements mostly lie in one table of the last level).
	// setBounds, which only a MultiScan calls, would pass narrower bounds
	// on to the table iterator as well.
	sole := memClear && tables == 1
	if merge && !sole {
		for i := range mems {
			iters = append(iters, &mems[i])
		}
	}
	for level := 0; level < manifest.NumLevels; level++ {
		files, lf := levelFiles[level], levelIters[level]
		if len(files) == 0 {
			continue
		}
		for _, f := range files {
			if !rs.rangeDels[level] {
				break // no file of the level has range deletions
			}
			if f.NumRangeDeletes == 0 {
				continue
			}
			e, err := d.tables.get(f.FileNum)
			if err != nil {
				return fail(err)
			}
			tombs = tombstonesOf(e.tombs, seq, tombs)
			d.tables.release(e)
		}
		if ms != nil {
			if merge {
				iters = ms.appendLevel(iters, level, lower, upper, *tio)
			}
			continue
		}
		if sole {
			ti, err := d.openTableIter(files[0].FileNum, lower, upper, *tio)
			if err != nil {
				return fail(err)
			}
			iters = append(iters, ti)
			continue
		}
		if level == 0 {
			for i := len(files) - 1; i >= 0; i-- {
				ti, err := d.openTableIter(files[i].FileNum, lower, upper, *tio)
				if err != nil {
					return fail(err)
				}
				iters = append(iters, ti)
			}
			continue
		}
		iters = append(iters, mem.level(level, d, lf, lower, upper))
	}
	if len(tombs) > 0 {
		it.tombs = rangedel.NewSet(tombs)
	}
	if sole {
		it.mem, it.iter, it.sole = mem, iters[0], true
		clear(iters)
		mem.iters = iters[:0]
		it.keyBuf, it.valBuf, it.search = mem.keyBuf, mem.valBuf, mem.search
		return it, nil
	}
	mem.merge.Init(iters...)
	clear(iters) // the merge holds the children now
	mem.iters = iters[:0]
	it.mem, it.iter = mem, &mem.merge
	if ms == nil {
		// A MultiScan swaps the iterator's input and applies bounds its
		// inputs were not given (applyBounds): it compares every entry.
		it.merge = &mem.merge
	}
	it.keyBuf, it.valBuf, it.search = mem.keyBuf, mem.valBuf, mem.search
	return it, nil
}
