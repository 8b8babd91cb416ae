package sqlstore

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/sqlstore/codec"
	"github.com/strata-db/strata/storage"
)

// Building a secondary index over a table's rows (CREATE INDEX, ALTER
// TABLE ADD INDEX).
//
// The rows are read at the transaction's snapshot, each row's index entry
// is encoded into a sorter (sorted runs spilled to temporary files past a
// memory budget, merged at the end), and the sorted entries are written in
// one pass, which also finds duplicates of a unique index (adjacent equal
// keys). Where the engine is a storage.BulkLoader and the index has more
// than bulkIndexMinEntries entries, that pass feeds a bulk load (the
// embedded engine writes table files and ingests them) instead of the
// transaction: the entries then never go through the transaction's batch,
// the log or the memtable. docs/decisions/2026-12-07-bulk-index-build.md has
// the reasoning.
//
// MVCC: the loaded entries carry a version newer than the transaction's
// snapshot, under an index ID no committed catalog record names, so readers
// that do not know the index never look there; the catalog record naming
// the index commits afterwards, with the transaction. The transaction
// guards the table's rows as before (a write committed to the table after
// the snapshot fails the DDL's commit with a conflict: the entries would
// lack it), but not the new index's range, which the load itself wrote.
//
// An index ID whose build failed (its load landed, its transaction did
// not commit) may hold stale entries; the next build that takes the ID
// deletes them first. Builds in one store take distinct IDs (indexIDs), so
// no two loads share a range and no build deletes another's entries.

// bulkIndexMinEntries is the size from which an index is built by a bulk
// load: below it the entries go through the transaction, which is cheaper
// than a table file per small index.
const bulkIndexMinEntries = 4096

// DefaultIndexBuildMemory is the memory an index build sorts in before it
// spills sorted runs to temporary files.
const DefaultIndexBuildMemory = 64 << 20

// indexIDs hands out the IDs of indexes being built by bulk loads in one
// store, so that two builds of the same table never load the same range.
type indexIDs struct {
	mu   sync.Mutex
	next map[uint64]uint32 // table ID -> lowest ID no build of this process took
}

// take returns an index ID for table at or above min (the record's next
// index ID, as the caller's snapshot and the latest commit see it).
func (a *indexIDs) take(table uint64, min uint32) uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next == nil {
		a.next = map[uint64]uint32{}
	}
	id := max(min, a.next[table])
	a.next[table] = id + 1
	return id
}

// bulkIndexID returns the ID the new index of def takes. With a bulk
// loader it is above every ID the latest committed record, or another
// build in this process, took, and its range is emptied of what a failed
// build left.
func (t *Table) bulkIndexID(tx *txn, def *tableDef) (uint32, error) {
	s := t.store
	if _, ok := s.engine.(storage.BulkLoader); !ok {
		return def.rec.NextIndexID, nil
	}
	min := def.rec.NextIndexID
	if v, err := s.engine.Latest().Get(t.db.tableKey(def.rec.Name), nil); err == nil {
		if latest, err := s.defs.get(t.db.name, v); err == nil && latest.id == def.id {
			min = max(min, latest.rec.NextIndexID)
		}
	} else if !errors.Is(err, storage.ErrNotFound) {
		return 0, err
	}
	id := s.indexIDs.take(def.id, min)
	prefix := appendIndexPrefix(nil, def.id, id)
	end := prefixEnd(prefix)
	it, err := s.engine.Latest().NewIter(&storage.IterOptions{LowerBound: prefix, UpperBound: end})
	if err != nil {
		return 0, err
	}
	stale := it.First()
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return 0, err
	}
	if stale {
		clean, err := s.engine.Begin()
		if err != nil {
			return 0, err
		}
		if err := clean.DeleteRange(prefix, end); err != nil {
			clean.Rollback()
			return 0, err
		}
		if err := clean.Commit(); err != nil {
			return 0, wrapf(err, "sqlstore: removing a failed index build's entries")
		}
	}
	return id, nil
}

// buildIndex writes index ix's entries for every row of the table.
func (t *Table) buildIndex(ctx *sql.Context, tx *txn, def *tableDef, ix *indexDef) error {
	prefix := appendIndexPrefix(nil, def.id, primaryIndexID)
	it, err := tx.newIter(prefix, prefixEnd(prefix))
	if err != nil {
		return err
	}
	srt := newEntrySorter(t.store.opts.IndexBuildMemory)
	defer srt.close()
	var key []byte
	var compact sql.Row
	row := make(sql.Row, len(def.schema))
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return err
		}
		// Only the index's columns are decoded, into a row reused from row
		// to row; the others stay nil.
		compact, err = codec.DecodeRowColumns(it.Value(), def.storage, ix.cols, compact)
		if err != nil {
			it.Close()
			return fmt.Errorf("sqlstore: table %s: %w", def.name, err)
		}
		for j, o := range ix.cols {
			v := compact[j]
			if def.spatial != nil {
				if v, err = def.geometry(o, v); err != nil {
					it.Close()
					return err
				}
			}
			if def.jsonCols != nil && types.IsJSON(def.schema[o].Type) {
				v = jsonFromStorage(v)
			}
			row[o] = v
		}
		var val []byte
		key, val, err = def.indexEntry(key[:0], ix, row, it.Key()[len(prefix):])
		if err != nil {
			it.Close()
			return err
		}
		if err := srt.add(key, val); err != nil {
			it.Close()
			return err
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}

	var bw storage.BulkWriter
	if bl, ok := t.store.engine.(storage.BulkLoader); ok && srt.count >= bulkIndexMinEntries {
		if bw, err = bl.NewBulkWriter(); err != nil {
			return err
		}
	}
	var last []byte
	lastUnique := false
	err = srt.each(func(k, v []byte) error {
		if v != nil && lastUnique && bytes.Equal(k, last) {
			return t.duplicateEntry(ctx, tx, def, ix, v)
		}
		last = append(last[:0], k...)
		lastUnique = v != nil
		if bw != nil {
			return bw.Set(k, v)
		}
		return tx.set(k, v)
	})
	if err == nil && bw != nil {
		// Finish fails with storage.ErrConflict when a concurrent build
		// loaded the same range.
		if err = bw.Finish(); err == nil {
			// The load wrote the index's range after the snapshot: the
			// commit must not take that for another transaction's write.
			ip := appendIndexPrefix(nil, def.id, ix.id)
			tx.mu.Lock()
			tx.loaded = append(tx.loaded, keyRange{start: ip, end: prefixEnd(ip)})
			tx.mu.Unlock()
		}
		bw = nil
	}
	if bw != nil {
		bw.Abort()
	}
	if err != nil {
		return err
	}
	tx.endStatement()
	return nil
}

// duplicateEntry returns the 1062 of a unique index entry met twice; pk is
// the primary key of one of the rows.
func (t *Table) duplicateEntry(ctx *sql.Context, tx *txn, def *tableDef, ix *indexDef, pk []byte) error {
	e := &editor{t: newTable(t.db, def), def: def, tx: tx}
	row, _, err := e.rowByPK(pk)
	if err != nil {
		return err
	}
	return sql.NewUniqueKeyErr(dupEntry(ctx, def, ix, row), false, row)
}

// dropLoaded deletes the entries of the indexes the transaction loaded,
// which no committed catalog record names: the transaction or the
// statement that built them failed. It is best effort: an index ID taken
// again is emptied first (bulkIndexID).
func (t *txn) dropLoaded() {
	t.mu.Lock()
	loaded := t.loaded
	t.loaded = nil
	t.mu.Unlock()
	if len(loaded) == 0 {
		return
	}
	clean, err := t.store.engine.Begin()
	if err != nil {
		return
	}
	for _, r := range loaded {
		if clean.DeleteRange(r.start, r.end) != nil {
			clean.Rollback()
			return
		}
	}
	_ = clean.Commit()
}

// unguardLoaded removes the ranges the transaction's index builds loaded
// from the ranges the commit checks. REQUIRES: t.mu held.
func (t *txn) unguardLoaded() {
	for _, r := range t.loaded {
		t.unguardLocked(r.start, r.end)
	}
}

// unguardLocked removes [start, end) from the ranges the commit checks.
// REQUIRES: t.mu held.
func (t *txn) unguardLocked(start, end []byte) {
	out := t.guards[:0:0]
	for _, g := range t.guards {
		if bytes.Compare(g.end, start) <= 0 || bytes.Compare(g.start, end) >= 0 {
			out = append(out, g)
			continue
		}
		if bytes.Compare(g.start, start) < 0 {
			out = append(out, keyRange{start: g.start, end: bytes.Clone(start)})
		}
		if bytes.Compare(end, g.end) < 0 {
			out = append(out, keyRange{start: bytes.Clone(end), end: g.end})
		}
	}
	t.guards = out
}

// entrySorter sorts key/value pairs in memory up to a budget and in runs
// spilled to temporary files beyond it. A nil value stays nil.
type entrySorter struct {
	budget int
	data   []byte
	ents   []sorterEntry
	count  int64
	runs   []*os.File
	w      *bufio.Writer
}

type sorterEntry struct {
	off        uint32
	klen, vlen uint32
	hasVal     bool
}

func newEntrySorter(budget int) *entrySorter {
	if budget <= 0 {
		budget = DefaultIndexBuildMemory
	}
	return &entrySorter{budget: budget}
}

func (s *entrySorter) key(e sorterEntry) []byte { return s.data[e.off : e.off+e.klen] }

func (s *entrySorter) value(e sorterEntry) []byte {
	if !e.hasVal {
		return nil
	}
	return s.data[e.off+e.klen : e.off+e.klen+e.vlen]
}

func (s *entrySorter) add(k, v []byte) error {
	if len(s.data)+len(k)+len(v) > s.budget && len(s.ents) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.ents = append(s.ents, sorterEntry{off: uint32(len(s.data)), klen: uint32(len(k)), vlen: uint32(len(v)), hasVal: v != nil})
	s.data = append(append(s.data, k...), v...)
	s.count++
	return nil
}

func (s *entrySorter) sort() {
	slices.SortFunc(s.ents, func(a, b sorterEntry) int { return bytes.Compare(s.key(a), s.key(b)) })
}

// spill writes the entries in memory to a new run file, sorted.
func (s *entrySorter) spill() error {
	s.sort()
	f, err := os.CreateTemp("", "strata-index-run-*")
	if err != nil {
		return fmt.Errorf("sqlstore: index build: %w", err)
	}
	os.Remove(f.Name()) // the descriptor keeps it until close
	s.runs = append(s.runs, f)
	if s.w == nil {
		s.w = bufio.NewWriterSize(f, 256<<10)
	} else {
		s.w.Reset(f)
	}
	var hdr [2 * binary.MaxVarintLen32]byte
	for _, e := range s.ents {
		vl := uint64(0)
		if e.hasVal {
			vl = uint64(e.vlen) + 1
		}
		n := binary.PutUvarint(hdr[:], uint64(e.klen))
		n += binary.PutUvarint(hdr[n:], vl)
		s.w.Write(hdr[:n])
		s.w.Write(s.key(e))
		if _, err := s.w.Write(s.value(e)); err != nil {
			return fmt.Errorf("sqlstore: index build: %w", err)
		}
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("sqlstore: index build: %w", err)
	}
	s.data, s.ents = s.data[:0], s.ents[:0]
	return nil
}

// each calls fn with every entry in key order. The slices are valid during
// the call only.
func (s *entrySorter) each(fn func(k, v []byte) error) error {
	if len(s.runs) == 0 {
		s.sort()
		for _, e := range s.ents {
			if err := fn(s.key(e), s.value(e)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.ents) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	var h runHeap
	for _, f := range s.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("sqlstore: index build: %w", err)
		}
		r := &runReader{r: bufio.NewReaderSize(f, 64<<10)}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, r)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		if err := fn(r.key, r.val); err != nil {
			return err
		}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

func (s *entrySorter) close() {
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
}

// runReader reads one spilled run.
type runReader struct {
	r        *bufio.Reader
	buf      []byte
	key, val []byte
}

func (r *runReader) next() (bool, error) {
	kl, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlstore: index build run: %w", err)
	}
	vl, err := binary.ReadUvarint(r.r)
	if err != nil {
		return false, fmt.Errorf("sqlstore: index build run: %w", err)
	}
	n := int(kl)
	if vl > 0 {
		n += int(vl - 1)
	}
	r.buf = slices.Grow(r.buf[:0], n)[:n]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return false, fmt.Errorf("sqlstore: index build run: %w", err)
	}
	r.key = r.buf[:kl]
	r.val = nil
	if vl > 0 {
		r.val = r.buf[kl:n]
	}
	return true, nil
}

type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return bytes.Compare(h[i].key, h[j].key) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
