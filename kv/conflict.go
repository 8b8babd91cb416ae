package kv

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/storage"
)

// ErrConflict is returned by CommitIfNoConflict when another commit wrote
// one of the batch's keys after the batch's snapshot: committing would
// overwrite a write the batch's reads never saw. It satisfies
// errors.Is(err, storage.ErrConflict).
var ErrConflict error = &contractError{msg: "kv: write conflict", target: storage.ErrConflict}

// CommitIfNoConflict commits the batch unless a key it writes (Set or
// Delete) has a committed version newer than snap: optimistic concurrency
// control, giving snapshot isolation to transactions that read at snap and
// write through the batch. The ranges given to Guard are checked too; a
// range deletion is not, unless its range is guarded. The check and the
// commit are atomic with respect to every other commit. On conflict
// nothing of the batch is applied and the error wraps ErrConflict.
func (b *Batch) CommitIfNoConflict(snap *Snapshot, wo *WriteOptions) error {
	if snap == nil {
		return errors.New("kv: CommitIfNoConflict needs a snapshot")
	}
	return b.commitChecked(snap, snap.seq, nil, wo)
}

// commitChecked is CommitIfNoConflict checking the written keys for
// versions newer than keysAfter instead of the snapshot's sequence; guarded
// ranges are checked against the snapshot. A pessimistic transaction checks
// its written keys after the version it last took a lock at.
func (b *Batch) commitChecked(snap *Snapshot, keysAfter base.SeqNum, unchecked func(key []byte) bool, wo *WriteOptions) error {
	d := b.db
	b.groupable = true
	b.precondition = func(earlier []*Batch) error {
		if d.closed.Load() {
			return ErrClosed
		}
		if err := b.checkGroup(earlier, keysAfter, unchecked); err != nil {
			return err
		}
		// Every committed entry is at or below the visible sequence number
		// (the leader runs this, so every commit before it is published):
		// when nothing was committed after both versions, nothing can
		// conflict, and a lone writer's commits skip a lookup per key.
		if visible := base.SeqNum(d.visibleSeq.Load()); visible <= keysAfter && visible <= snap.seq {
			return nil
		}
		for _, g := range b.guards {
			newer, err := d.writtenSince(g.start, g.end, snap.seq)
			if err != nil {
				return err
			}
			if newer {
				return &storage.ConflictError{Key: g.start, End: g.end,
					Err: fmt.Errorf("%w: a key in [%q, %q) was written after the snapshot at %d", ErrConflict, g.start, g.end, snap.seq)}
			}
		}
		return forEachEntry(b.data[batchHeaderLen:], func(kind base.Kind, key, value []byte) error {
			if kind == base.KindRangeDelete {
				return nil
			}
			// A key the caller says nobody else wrote (one it holds a lock
			// on) is still checked for range deletions, which take no
			// locks.
			seq, err := d.newestSeq(key, keysAfter, unchecked != nil && unchecked(key))
			if err != nil {
				return err
			}
			if seq > keysAfter {
				return &storage.ConflictError{Key: bytes.Clone(key),
					Err: fmt.Errorf("%w: key %q was written at %d, after version %d", ErrConflict, key, seq, keysAfter)}
			}
			return nil
		})
	}
	defer func() { b.precondition, b.groupable = nil, false }()
	return d.Apply(b, wo)
}

// checkGroup is the part of a conflict check that concerns the batches of
// b's commit group that come before it (earlier): they will be committed
// before b, after b's snapshot, but are not yet visible to the lookups of
// the rest of the check. Every key they write is newer than any snapshot
// b can have, so b conflicts with them exactly when one of its checked
// keys, or one of its guarded ranges, is among the keys they write (a set,
// a deletion, or a range deletion over it). A key unchecked reports is
// checked against range deletions only, as newestSeq does. The commit
// pipeline keeps earlier and b small (maxCheckedGroupEntries), so each pair
// is simply compared. It allocates nothing unless it finds a conflict.
func (b *Batch) checkGroup(earlier []*Batch, keysAfter base.SeqNum, unchecked func(key []byte) bool) error {
	if len(earlier) == 0 {
		return nil
	}
	for _, g := range b.guards {
		for _, e := range earlier {
			if e.writesIn(g.start, g.end) {
				return &storage.ConflictError{Key: g.start, End: g.end,
					Err: fmt.Errorf("%w: a key in [%q, %q) is written by a commit before this one", ErrConflict, g.start, g.end)}
			}
		}
	}
	body := b.data[batchHeaderLen:]
	for off := 0; off < len(body); {
		kind, key, _, n, err := decodeEntry(body[off:])
		if err != nil {
			return fmt.Errorf("entry at byte %d: %w", off+batchHeaderLen, err)
		}
		off += n
		if kind == base.KindRangeDelete {
			continue
		}
		rangeOnly := unchecked != nil && unchecked(key)
		for _, e := range earlier {
			if e.writesKey(key, rangeOnly) {
				return &storage.ConflictError{Key: bytes.Clone(key),
					Err: fmt.Errorf("%w: key %q is written by a commit before this one, after version %d", ErrConflict, key, keysAfter)}
			}
		}
	}
	return nil
}

// writesKey reports whether b writes key: sets or deletes it, or deletes a
// range that holds it; with rangeOnly, only the last.
func (b *Batch) writesKey(key []byte, rangeOnly bool) bool {
	body := b.data[batchHeaderLen:]
	for off := 0; off < len(body); {
		kind, k, v, n, err := decodeEntry(body[off:])
		if err != nil {
			return true // unreadable: assume the worst; the commit is retried
		}
		off += n
		if kind == base.KindRangeDelete {
			if bytes.Compare(k, key) <= 0 && bytes.Compare(key, v) < 0 {
				return true
			}
		} else if !rangeOnly && bytes.Equal(k, key) {
			return true
		}
	}
	return false
}

// writesIn reports whether b writes a key in [start, end): sets or deletes
// one, or deletes a range that overlaps it.
func (b *Batch) writesIn(start, end []byte) bool {
	body := b.data[batchHeaderLen:]
	for off := 0; off < len(body); {
		kind, k, v, n, err := decodeEntry(body[off:])
		if err != nil {
			return true
		}
		off += n
		if kind == base.KindRangeDelete {
			if bytes.Compare(k, end) < 0 && bytes.Compare(start, v) < 0 {
				return true
			}
		} else if bytes.Compare(start, k) <= 0 && bytes.Compare(k, end) < 0 {
			return true
		}
	}
	return false
}

// newestSeq returns the sequence number of the newest committed entry of
// key (a value, a deletion, or a range deletion covering it), 0 if none,
// or a smaller number when that entry is at or below after: tables whose
// entries are all at or below after are not searched (older versions of
// a key lie in older tables), which spares a commit of a transaction
// newer than the last flush every table lookup. With rangeOnly only range
// deletions are looked at.
func (d *DB) newestSeq(key []byte, after base.SeqNum, rangeOnly bool) (base.SeqNum, error) {
	rs, ok := d.tryLoadReadState()
	if !ok {
		return 0, ErrClosed
	}
	defer rs.unref()
	var newest base.SeqNum
	seq := base.SeqNum(d.visibleSeq.Load())
	for i := range rs.numMemtables() {
		m, immutable := rs.memtable(i)
		if m.HasRangeDeletes() {
			newest = max(newest, m.maxCoveringSeq(key, seq, immutable))
		}
		if !rangeOnly {
			if _, _, eseq, found := m.Get(key, seq); found {
				return max(newest, eseq), nil
			}
		}
		if newest > 0 {
			return newest, nil
		}
	}
	// Tables hold only entries older than every memtable entry; the newest
	// table entry of key decides.
	var err error
	found := false
	check := func(fileNum uint64) {
		e, gerr := d.tables.get(fileNum)
		if gerr != nil {
			err = gerr
			return
		}
		defer d.tables.release(e)
		if e.tombs != nil {
			newest = max(newest, e.tombs.MaxCoveringSeq(key, seq))
		}
		if rangeOnly {
			return
		}
		_, _, eseq, ok, gerr := e.reader.Get(key, seq, nil, nil)
		if gerr != nil {
			err = gerr
			return
		}
		if ok {
			newest = max(newest, eseq)
			found = true
		}
	}
	l0 := rs.v.Levels[0]
	for i := len(l0) - 1; i >= 0 && !found && err == nil && newest == 0; i-- {
		if l0[i].LargestSeq > after && pointInFile(l0[i], key) {
			check(l0[i].FileNum)
		}
	}
	for level := 1; level < NumLevels && !found && err == nil && newest == 0; level++ {
		files := rs.v.Levels[level]
		if i := searchFiles(files, key); i < len(files) && files[i].LargestSeq > after && pointInFile(files[i], key) {
			check(files[i].FileNum)
		}
	}
	return newest, err
}
