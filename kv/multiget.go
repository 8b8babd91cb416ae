package kv

import (
	"bytes"
	"slices"
	"sync"

	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

// MultiGetMaxBatch is the number of keys a MultiGet looks up per pass
// through the tree: filter probes are batched and blocks shared, at most
// this many keys at a time, as RocksDB does.
const MultiGetMaxBatch = 32

// MultiGet looks up many keys at one snapshot and returns their values in
// the order of keys: values[i] is the value of keys[i], or nil when it has
// none. Values are slices of one buffer allocated for the call (an empty
// value is a non-nil empty slice). dst, when large enough, is reused for the
// result.
//
// The keys are sorted and looked up in batches of MultiGetMaxBatch through
// the memtables and then the tables level by level; in each table the
// filter is probed for the whole batch first, and keys that fall in the
// same data block share one block-cache lookup and one block iterator.
func (d *DB) MultiGet(keys [][]byte, ro *ReadOptions, dst [][]byte) ([][]byte, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	values := slices.Grow(dst[:0], len(keys))[:len(keys)]
	clear(values)
	if len(keys) == 0 {
		return values, nil
	}
	seq := d.readSeq(ro)
	st := opStats(ro)
	// Blocks read at once go through the cache, so not with DontFillCache;
	// and only when reads have lately been reaching the device: blocks in
	// the OS page cache are read faster in turn, as the lookups meet them,
	// than planned, handed to the pool and looked up again.
	async := ro != nil && ro.AsyncIO && !ro.DontFillCache && d.ioPool.Latency().Slow()
	sink := stats.Sink{DB: &d.stats, Op: st}
	rs := d.loadReadState()
	defer rs.unref()

	m := multiGetPool.Get().(*multiGet)
	defer m.release()
	m.init(keys)
	// One arena per call, sized from the values earlier calls found, so
	// that it rarely grows (and is not cleared and copied by doubling).
	avg := d.mgValueSize.Load()
	if avg <= 0 {
		avg = 128
	}
	m.arena = make([]byte, 0, int64(len(keys))*avg*5/4+64)
	for start := 0; start < len(keys); start += MultiGetMaxBatch {
		end := min(start+MultiGetMaxBatch, len(keys))
		sink.Add(stats.MultiGetBatches, 1)
		sink.Add(stats.MultiGetKeys, int64(end-start))
		if err := m.run(d, rs, seq, st, async, m.order[start:end]); err != nil {
			return nil, err
		}
	}
	found := 0
	for i, r := range m.res {
		if r.live {
			values[i] = m.arena[r.start:r.end:r.end]
			found++
		}
	}
	sink.Add(stats.MultiGetKeysFound, int64(found))
	if found > 0 {
		d.mgValueSize.Store(int64(len(m.arena)/found) + 1)
	}
	return values, nil
}

// multiGet is the scratch state of one MultiGet call, pooled.
type multiGet struct {
	keys   [][]byte
	order  []int // key indexes sorted by key
	hashes []uint64
	res    []mgResult
	arena  []byte

	// Per-table scratch: the keys of one batch that a table may hold.
	sub    [][]byte
	subH   []uint64
	subIdx []int
	subRes []table.GetResult

	// Per-level scratch: the tables to search and, with async I/O, the
	// blocks to read at once.
	groups []mgGroup
	loads  table.BlockLoads
	// probes and pages are what searchGroups touches before the lookups
	// (see touch); touched keeps what the loads returned.
	probes  []*uint64
	pages   []*byte
	touched uint64
}

// mgResult is the state of one key.
type mgResult struct {
	done       bool        // a newer source decided the key
	live       bool        // ... and it has a value
	tomb       base.SeqNum // newest range tombstone seen covering the key
	start, end int         // the value in arena
}

var multiGetPool = sync.Pool{New: func() any { return &multiGet{} }}

func (m *multiGet) init(keys [][]byte) {
	m.keys = keys
	n := len(keys)
	m.order = slices.Grow(m.order[:0], n)[:n]
	m.hashes = slices.Grow(m.hashes[:0], n)[:n]
	m.res = slices.Grow(m.res[:0], n)[:n]
	for i := range keys {
		m.order[i] = i
		m.hashes[i] = filter.Hash(keys[i])
		m.res[i] = mgResult{}
	}
	slices.SortFunc(m.order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	// The arena outlives the call (the values point into it), so it is not
	// pooled: MultiGet allocates a new one for every call.
}

func (m *multiGet) release() {
	m.keys, m.arena = nil, nil
	clear(m.sub)
	m.sub = m.sub[:0]
	if cap(m.order) <= 4096 {
		multiGetPool.Put(m)
	}
}

// decide settles key i on an entry found in a source, whose value is
// arena[start:end].
func (m *multiGet) decide(i int, kind base.Kind, seq base.SeqNum, start, end int) {
	r := &m.res[i]
	r.done = true
	if kind == base.KindSet && seq >= r.tomb {
		r.live, r.start, r.end = true, start, end
	}
}

// run looks up one batch of keys (indexes into keys, sorted by key).
func (m *multiGet) run(d *DB, rs *readState, seq base.SeqNum, st *stats.Counters, async bool, batch []int) error {
	// Memtables, newest first.
	for j := len(rs.imms); j >= 0; j-- {
		mem, immutable := rs.mem, false
		if j < len(rs.imms) {
			mem, immutable = rs.imms[j], true
		}
		hasTombs := mem.HasRangeDeletes()
		// The batch's keys are sorted: each is searched for from the last.
		var g memtable.Getter
		g.Init(mem.Memtable)
		for _, i := range batch {
			r := &m.res[i]
			if r.done {
				continue
			}
			if hasTombs {
				r.tomb = max(r.tomb, mem.maxCoveringSeq(m.keys[i], seq, immutable))
			}
			if v, kind, eseq, found := g.Get(m.keys[i], seq); found {
				start := len(m.arena)
				m.arena = append(m.arena, v...)
				m.decide(i, kind, eseq, start, len(m.arena))
			}
		}
	}
	// Level 0, newest first: every table whose bounds hold a pending key.
	l0 := rs.v.Levels[0]
	for j := len(l0) - 1; j >= 0; j-- {
		m.groups = append(m.groups[:0], mgGroup{f: l0[j], keys: batch})
		if err := m.searchGroups(d, seq, st, async); err != nil {
			return err
		}
	}
	// Deeper levels: walk the sorted keys and the sorted files together.
	for level := 1; level < manifest.NumLevels; level++ {
		files := rs.v.Levels[level]
		if len(files) == 0 {
			continue
		}
		m.groups = m.groups[:0]
		for k := 0; k < len(batch); {
			if m.res[batch[k]].done {
				k++
				continue
			}
			fi := searchFiles(files, m.keys[batch[k]])
			if fi == len(files) {
				break
			}
			// The run of keys this file may hold.
			f := files[fi]
			end := k
			for end < len(batch) && (bytes.Compare(m.keys[batch[end]], f.LargestUserKey()) < 0 ||
				(bytes.Equal(m.keys[batch[end]], f.LargestUserKey()) && !base.IsRangeDeleteSentinel(f.Largest))) {
				end++
			}
			if end == k {
				k++
				continue
			}
			m.groups = append(m.groups, mgGroup{f: f, keys: batch[k:end]})
			k = end
		}
		if err := m.searchGroups(d, seq, st, async); err != nil {
			return err
		}
	}
	return nil
}

// mgGroup is a table and the run of a batch's keys its bounds may hold.
type mgGroup struct {
	f    *manifest.FileMetadata
	keys []int
	e    *tableEntry // while searchGroups holds it
	// loaded: the table's lookups have blocks that a BlockLoads pinned in
	// the block cache.
	loaded bool
}

// searchGroups looks up each group's keys in its table. With async, it
// first has every table name the blocks it will miss in the block cache
// and reads them all at once on the I/O pool (table.BlockLoads), so that
// the lookups wait for one round of reads instead of one read after
// another.
func (m *multiGet) searchGroups(d *DB, seq base.SeqNum, st *stats.Counters, async bool) error {
	if len(m.groups) == 0 {
		return nil
	}
	defer func() {
		for k := range m.groups {
			if m.groups[k].e != nil {
				d.tables.release(m.groups[k].e)
			}
			m.groups[k] = mgGroup{}
		}
		m.groups = m.groups[:0]
		m.loads.Release()
	}()
	for k := range m.groups {
		g := &m.groups[k]
		if !m.collect(g.f, g.keys) {
			continue
		}
		e, err := d.tables.get(g.f.FileNum)
		if err != nil {
			return err
		}
		g.e = e
		if async {
			before := m.loads.Len()
			e.reader.PlanMultiGet(m.sub, m.subH, seq, m.subRes, &m.loads, st)
			g.loaded = m.loads.Len() > before
		}
	}
	if m.loads.Len() > 0 {
		if err := m.loads.Load(d.ioPool, st); err != nil {
			return err
		}
	}
	m.touch(seq)
	for k := range m.groups {
		g := &m.groups[k]
		if g.e == nil || !m.collect(g.f, g.keys) {
			continue
		}
		if err := m.lookupTable(g.e, seq, st, g.loaded); err != nil {
			return err
		}
	}
	return nil
}

// touch loads what the groups' lookups will read in memory, all at once,
// as a MultiScan's prepare does: first each key's filter line and where
// its index search begins in its table, then (the probes and searches
// made, their lines now cached) a byte of each page of the blocks the
// lookups will copy from mappings (table.Reader.AppendGetPages,
// vfs.TouchPages). The lookups that follow, one table after another, find
// their filter and index lines, page translations and first block lines
// cached instead of waiting for each in turn. Groups whose blocks a
// BlockLoads pinned in the cache are left out, and a single key, with
// nothing to overlap, is not touched.
func (m *multiGet) touch(seq base.SeqNum) {
	keys := 0
	for k := range m.groups {
		g := &m.groups[k]
		if g.e == nil || g.loaded || !m.collect(g.f, g.keys) {
			continue
		}
		keys += len(m.sub)
		for s, key := range m.sub {
			m.probes = g.e.reader.AppendIndexProbes(m.probes, key)
			m.pages = g.e.reader.AppendFilterProbe(m.pages, m.subH[s])
		}
	}
	if keys >= 2 {
		m.touched ^= table.TouchProbes(m.probes) ^ uint64(table.TouchProbes(m.pages))
	}
	clear(m.probes)
	clear(m.pages)
	m.probes, m.pages = m.probes[:0], m.pages[:0]
	if keys < 2 {
		return
	}
	for k := range m.groups {
		g := &m.groups[k]
		if g.e == nil || g.loaded || !m.collect(g.f, g.keys) {
			continue
		}
		for s, key := range m.sub {
			m.pages = g.e.reader.AppendGetPages(m.pages, key, m.subH[s], seq)
		}
	}
	m.touched ^= uint64(vfs.TouchPages(m.pages))
	clear(m.pages)
	m.pages = m.pages[:0]
}

// collect gathers into the per-table scratch the pending keys of batch
// that f's bounds may hold, and reports whether there are any.
func (m *multiGet) collect(f *manifest.FileMetadata, batch []int) bool {
	m.sub, m.subH, m.subIdx, m.subRes = m.sub[:0], m.subH[:0], m.subIdx[:0], m.subRes[:0]
	for _, i := range batch {
		if !m.res[i].done && pointInFile(f, m.keys[i]) {
			m.sub = append(m.sub, m.keys[i])
			m.subH = append(m.subH, m.hashes[i])
			m.subIdx = append(m.subIdx, i)
			m.subRes = append(m.subRes, table.GetResult{})
		}
	}
	return len(m.sub) > 0
}

// lookupTable looks up, in the table of e, the keys collect gathered;
// loaded says that a BlockLoads pinned blocks for them in the cache, where
// the lookups must find them.
func (m *multiGet) lookupTable(e *tableEntry, seq base.SeqNum, st *stats.Counters, loaded bool) error {
	if e.tombs != nil {
		for _, i := range m.subIdx {
			m.res[i].tomb = max(m.res[i].tomb, e.tombs.MaxCoveringSeq(m.keys[i], seq))
		}
	}
	// The table appends the values it finds to the arena; a value a range
	// tombstone hides stays there unused.
	var err error
	if loaded {
		m.arena, err = e.reader.MultiGetLoaded(m.sub, m.subH, seq, m.subRes, m.arena, st)
	} else {
		m.arena, err = e.reader.MultiGet(m.sub, m.subH, seq, m.subRes, m.arena, st)
	}
	if err != nil {
		return err
	}
	for k, r := range m.subRes {
		if r.Done {
			m.decide(m.subIdx[k], r.Kind, r.Seq, r.ValueStart, r.ValueEnd)
		}
	}
	return nil
}
