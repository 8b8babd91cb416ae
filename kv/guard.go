package kv

import (
	"bytes"
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/table"
)

// Guarded ranges
//
// CommitIfNoConflict checks the keys a batch writes. A transaction may also
// depend on keys it only read: the rows a DELETE of a whole table removes
// with one range deletion, the rows an index build copied, the parent row a
// foreign key needs. Guard names such a range; the commit then fails with
// ErrConflict if any key in it has a committed version (a value, a
// deletion, or a range deletion overlapping it) newer than the snapshot,
// as if the batch had written every key of the range. It is the read side
// of optimistic concurrency control, for the reads that matter.
//
// The check walks the range's entries in the memtables and in the tables
// whose newest entry is newer than the snapshot: the tables written before
// the snapshot are skipped whole by their sequence numbers.

// keyRange is a range of user keys [start, end).
type keyRange struct{ start, end []byte }

// Guard makes CommitIfNoConflict fail when a key in [start, end) was
// written after the commit's snapshot (see above). Guard copies the keys.
// Commit and Apply ignore guards.
func (b *Batch) Guard(start, end []byte) {
	buf := make([]byte, len(start)+len(end))
	n := copy(buf, start)
	copy(buf[n:], end)
	b.guards = append(b.guards, keyRange{start: buf[:n:n], end: buf[n:]})
}

// writtenSince reports whether a key in [start, end) has a committed entry
// newer than snap.
func (d *DB) writtenSince(start, end []byte, snap base.SeqNum) (bool, error) {
	rs, ok := d.tryLoadReadState()
	if !ok {
		return false, ErrClosed
	}
	defer rs.unref()
	var searchBuf [64]byte
	search := base.MakeSearchKey(searchBuf[:0], start, base.SeqNumMax)
	var it memtable.Iter
	var skipBuf [64]byte
	for i := range rs.numMemtables() {
		m, _ := rs.memtable(i)
		m.InitIter(&it)
		newer := false
		// A key's versions follow each other newest first: when the newest
		// is not newer than snap, neither is the rest, which a hot key may
		// hold by the hundred thousand. They are skipped with one seek.
		for kv := it.SeekGE(search); kv != nil && bytes.Compare(kv.UserKey(), end) < 0; {
			if kv.Seq() > snap {
				newer = true
				break
			}
			// The iterator reuses kv: keep the key past the seek's end.
			skip := base.AppendKey(skipBuf[:0], kv.UserKey(), 0, 0)
			next := it.Next()
			if next != nil && bytes.Equal(next.UserKey(), skip[:len(skip)-base.TrailerLen]) {
				next = it.SeekGE(skip)
			}
			kv = next
		}
		it.Close()
		if newer {
			return true, nil
		}
		if m.HasRangeDeletes() {
			m.InitRangeDelIter(&it)
			for t := it.First(); t != nil && bytes.Compare(t.UserKey(), end) < 0; t = it.Next() {
				if t.Seq() > snap && bytes.Compare(t.V, start) > 0 {
					newer = true
					break
				}
			}
			it.Close()
			if newer {
				return true, nil
			}
		}
	}
	check := func(f *manifest.FileMetadata) (bool, error) {
		if f.LargestSeq <= snap || !f.Overlaps(start, end) {
			return false, nil
		}
		return d.tableWrittenSince(f.FileNum, start, end, snap)
	}
	for _, f := range rs.v.Levels[0] {
		if newer, err := check(f); err != nil || newer {
			return newer, err
		}
	}
	for level := 1; level < manifest.NumLevels; level++ {
		i, j := rs.v.OverlapIndices(level, start, end)
		for _, f := range rs.v.Levels[level][i:j] {
			if newer, err := check(f); err != nil || newer {
				return newer, err
			}
		}
	}
	return false, nil
}

// tableWrittenSince reports whether table fileNum holds an entry newer than
// snap in [start, end).
func (d *DB) tableWrittenSince(fileNum uint64, start, end []byte, snap base.SeqNum) (bool, error) {
	e, err := d.tables.get(fileNum)
	if err != nil {
		return false, err
	}
	defer d.tables.release(e)
	if e.tombs != nil {
		for _, f := range e.tombs.Fragments() {
			if bytes.Compare(f.Start, end) < 0 && bytes.Compare(start, f.End) < 0 && f.Seqs[0] > snap {
				return true, nil
			}
		}
	}
	it := e.reader.NewIter(table.IterOptions{Lower: start, Upper: end, DontFillCache: true})
	defer it.Close()
	for kv := it.SeekGE(base.MakeSearchKey(nil, start, base.SeqNumMax)); kv != nil; kv = it.Next() {
		if kv.Seq() > snap {
			return true, nil
		}
	}
	if err := it.Error(); err != nil {
		return false, fmt.Errorf("kv: checking table %06d for writes since the snapshot: %w", fileNum, err)
	}
	return false, nil
}
