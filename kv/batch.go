package kv

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/memtable"
)

// The batch representation. A committed batch is written to the write-ahead
// log exactly as it is held in memory: one WAL record per batch. Part of the
// on-disk format; never change it.
//
//	+--------------+------------+-------------------------------------+
//	| seq (8, LE)  | count (4,LE)| entry | entry | ...                 |
//	+--------------+------------+-------------------------------------+
//
//	entry:  kind (1) | uvarint len(key) | key | [uvarint len(value) | value]
//
// Set entries carry a value, Delete entries none, RangeDelete entries carry
// the exclusive end key as their value. The i-th entry (from 0) gets the
// sequence number seq+i when the batch commits.
const batchHeaderLen = 12

// maxBatchCount bounds the entries of one batch so that seq+count never
// overflows the sequence space in practice and the count field fits.
const maxBatchCount = 1<<32 - 1

// Batch is a set of writes committed atomically: after a crash either every
// write of a committed batch is visible or none is.
//
// A batch made with DB.NewIndexedBatch also answers reads (Get, NewIter) that
// see its own writes over the database; the SQL layer's transactions are
// such batches. Rollback to a mark (Mark, RollbackTo) undoes the writes made
// since, for statement-level rollback.
//
// A Batch is not safe for concurrent use.
type Batch struct {
	db    *DB
	data  []byte // header + entries; the header's seq is filled at commit
	count uint32
	// memSize is the arena space the batch's entries take in a memtable
	// (the sum of memtable.EntrySize), reserved at commit.
	memSize int
	// userBytes counts key and value bytes, for statistics.
	userBytes int64

	committed bool
	closed    bool

	// index, for an indexed batch, orders the batch's entries by internal
	// key with batch-local sequence numbers (seqBatchBit|ordinal), so that a
	// later write of a key sorts before an earlier one.
	index     *batchIndex
	rangeDels []batchRangeDel
	// guards are the ranges CommitIfNoConflict checks besides the keys
	// written (Guard).
	guards []keyRange

	// Commit pipeline state; guarded by DB.commit.mu.
	sync      bool
	done      bool
	commitErr error
	seq       base.SeqNum
	// precondition, if set, runs in the commit pipeline before the batch
	// gets its sequence numbers, with no commit in between: a transaction's
	// conflict check. earlier are the batches of the batch's commit group
	// that come before it and are to be committed: logged and applied with
	// it, after the check, and so not yet visible to it.
	precondition func(earlier []*Batch) error
	// groupable says that precondition checks the earlier batches of its
	// group too, as if they were committed, so that the batch may join a
	// group behind others instead of leading one of its own.
	groupable bool
	// rotate marks a flush request (DB.Flush): the leader rotates the
	// memtable and records in rotated the memtable that became immutable.
	rotate  bool
	rotated *memTable
	// resume marks a DB.Resume request, run by the leader.
	resume bool
}

// batchRangeDel is a range tombstone of an indexed batch: the offset of its
// entry in Batch.data and its ordinal.
type batchRangeDel struct {
	off int
	ord uint32
}

// seqBatchBit marks the sequence numbers of entries read from an indexed
// batch: they are newer than every committed entry. Committed sequence
// numbers never reach it.
const seqBatchBit base.SeqNum = 1 << 55

// NewBatch returns an empty batch for writes to d.
func (d *DB) NewBatch() *Batch {
	return &Batch{db: d, data: make([]byte, batchHeaderLen, 256)}
}

// NewIndexedBatch returns an empty batch that can also be read from, seeing
// its own writes over the database.
func (d *DB) NewIndexedBatch() *Batch {
	b := d.NewBatch()
	b.index = newBatchIndex(b)
	return b
}

func (b *Batch) usable() error {
	switch {
	case b.closed:
		return ErrClosed
	case b.committed:
		return ErrBatchCommitted
	case b.count == maxBatchCount:
		return errors.New("kv: batch has too many entries")
	}
	return nil
}

func (b *Batch) appendEntry(kind base.Kind, key, value []byte, hasValue bool) {
	off := len(b.data)
	b.data = append(b.data, byte(kind))
	b.data = binary.AppendUvarint(b.data, uint64(len(key)))
	b.data = append(b.data, key...)
	if hasValue {
		b.data = binary.AppendUvarint(b.data, uint64(len(value)))
		b.data = append(b.data, value...)
	}
	ord := b.count
	b.count++
	b.memSize += memtable.EntrySize(len(key), len(value))
	b.userBytes += int64(len(key) + len(value))
	if b.index != nil {
		if kind == base.KindRangeDelete {
			b.rangeDels = append(b.rangeDels, batchRangeDel{off: off, ord: ord})
		} else {
			b.index.add(off, ord)
		}
	}
}

// rangeDel returns the bounds of an indexed batch's range tombstone; they
// alias the batch's buffer.
func (b *Batch) rangeDel(r batchRangeDel) (start, end []byte) {
	_, start, end, _, _ = decodeEntry(b.data[r.off:])
	return start, end
}

// Set adds a write of value under key.
func (b *Batch) Set(key, value []byte) error {
	if err := b.usable(); err != nil {
		return err
	}
	b.appendEntry(base.KindSet, key, value, true)
	return nil
}

// Delete adds a deletion of key.
func (b *Batch) Delete(key []byte) error {
	if err := b.usable(); err != nil {
		return err
	}
	b.appendEntry(base.KindDelete, key, nil, false)
	return nil
}

// DeleteRange adds a deletion of every key in [start, end).
func (b *Batch) DeleteRange(start, end []byte) error {
	if err := b.usable(); err != nil {
		return err
	}
	if string(start) >= string(end) {
		return fmt.Errorf("kv: DeleteRange: start %q is not below end %q", start, end)
	}
	b.appendEntry(base.KindRangeDelete, start, end, true)
	return nil
}

// CopyEntry adds to dst the write of b whose entry starts at off: the
// value Len returned just before the write was made. It lets a caller
// keep a log of b's writes as offsets instead of copies of their keys and
// values. off must name a write still in b (not rolled back, b not reset).
func (b *Batch) CopyEntry(dst *Batch, off int) error {
	if off < batchHeaderLen || off >= len(b.data) {
		return fmt.Errorf("kv: CopyEntry: offset %d outside the batch's %d bytes", off, len(b.data))
	}
	kind, key, value, _, err := decodeEntry(b.data[off:])
	if err != nil {
		return fmt.Errorf("kv: CopyEntry at %d: %w", off, err)
	}
	switch kind {
	case base.KindSet:
		return dst.Set(key, value)
	case base.KindDelete:
		return dst.Delete(key)
	case base.KindRangeDelete:
		return dst.DeleteRange(key, value)
	default:
		return fmt.Errorf("kv: CopyEntry at %d: entry kind %d", off, kind)
	}
}

// Count returns the number of writes in the batch.
func (b *Batch) Count() int { return int(b.count) }

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.count == 0 }

// Len returns the size of the batch's representation in bytes.
func (b *Batch) Len() int { return len(b.data) }

// Commit applies the batch to the database atomically.
func (b *Batch) Commit(wo *WriteOptions) error {
	if b.db == nil {
		return errors.New("kv: batch has no database")
	}
	return b.db.Apply(b, wo)
}

// BatchMark is a position in a batch to roll back to.
type BatchMark struct {
	len, count, memSize int
	userBytes           int64
	rangeDels           int
}

// Mark returns the batch's current position.
func (b *Batch) Mark() BatchMark {
	return BatchMark{len: len(b.data), count: int(b.count), memSize: b.memSize, userBytes: b.userBytes, rangeDels: len(b.rangeDels)}
}

// RollbackTo undoes every write made since m was taken.
func (b *Batch) RollbackTo(m BatchMark) error {
	if err := b.usable(); err != nil && !errors.Is(err, ErrBatchCommitted) {
		return err
	}
	if b.committed {
		return ErrBatchCommitted
	}
	if m.len > len(b.data) || m.count > int(b.count) || m.len < batchHeaderLen {
		return errors.New("kv: RollbackTo: mark is not from this batch or was rolled back already")
	}
	if b.index != nil {
		// A fresh buffer: iterators made before the rollback still read the
		// old one, whose bytes past the mark must not be overwritten.
		b.data = append(make([]byte, 0, cap(b.data)), b.data[:m.len]...)
	} else {
		b.data = b.data[:m.len]
	}
	b.count = uint32(m.count)
	b.memSize = m.memSize
	b.userBytes = m.userBytes
	if b.index != nil {
		b.rangeDels = b.rangeDels[:m.rangeDels]
		// Rebuild the index: rollbacks are rare (a failed statement), and
		// rebuilding keeps the index free of entries from undone writes.
		b.index = newBatchIndex(b)
		var ord uint32
		err := forEachEntryOffset(b.data, func(kind base.Kind, off int) {
			if kind != base.KindRangeDelete {
				b.index.add(off, ord)
			}
			ord++
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Reset empties the batch so that it can be reused, including after a
// commit.
func (b *Batch) Reset() {
	b.data = b.data[:batchHeaderLen]
	clear(b.data)
	b.count = 0
	b.memSize = 0
	b.userBytes = 0
	b.committed = false
	b.done = false
	b.commitErr = nil
	b.sync = false
	b.seq = 0
	b.precondition = nil
	b.groupable = false
	b.guards = b.guards[:0]
	if b.index != nil {
		b.index = newBatchIndex(b)
		b.rangeDels = b.rangeDels[:0]
	}
}

// Close releases the batch. A closed batch cannot be used.
func (b *Batch) Close() error {
	b.closed = true
	b.index = nil
	b.data = nil
	return nil
}

// setSeq writes the batch's first sequence number into its header.
func (b *Batch) setSeq(seq base.SeqNum) {
	b.seq = seq
	binary.LittleEndian.PutUint64(b.data[0:8], uint64(seq))
	binary.LittleEndian.PutUint32(b.data[8:12], b.count)
}

// decodeBatchHeader returns the sequence number and count of a batch
// representation read from a WAL.
func decodeBatchHeader(repr []byte) (base.SeqNum, uint32, error) {
	if len(repr) < batchHeaderLen {
		return 0, 0, fmt.Errorf("batch of %d bytes is shorter than its %d-byte header", len(repr), batchHeaderLen)
	}
	return base.SeqNum(binary.LittleEndian.Uint64(repr[0:8])), binary.LittleEndian.Uint32(repr[8:12]), nil
}

// forEachEntry decodes the entries of a batch body (after the header).
func forEachEntry(body []byte, fn func(kind base.Kind, key, value []byte) error) error {
	for off := 0; off < len(body); {
		kind, key, value, n, err := decodeEntry(body[off:])
		if err != nil {
			return fmt.Errorf("entry at byte %d: %w", off+batchHeaderLen, err)
		}
		if err := fn(kind, key, value); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// forEachEntryOffset calls fn with the kind and offset (in data, which
// includes the header) of every entry.
func forEachEntryOffset(data []byte, fn func(kind base.Kind, off int)) error {
	for off := batchHeaderLen; off < len(data); {
		kind, _, _, n, err := decodeEntry(data[off:])
		if err != nil {
			return fmt.Errorf("entry at byte %d: %w", off, err)
		}
		fn(kind, off)
		off += n
	}
	return nil
}

// decodeEntry decodes one entry at the start of b and returns its length.
func decodeEntry(b []byte) (kind base.Kind, key, value []byte, n int, err error) {
	if len(b) == 0 {
		return 0, nil, nil, 0, errors.New("empty entry")
	}
	kind = base.Kind(b[0])
	n = 1
	readBytes := func(what string) ([]byte, error) {
		l, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return nil, fmt.Errorf("bad %s length", what)
		}
		n += m
		if l > uint64(len(b)-n) {
			return nil, fmt.Errorf("%s length %d overruns the batch (%d bytes left)", what, l, len(b)-n)
		}
		s := b[n : n+int(l) : n+int(l)]
		n += int(l)
		return s, nil
	}
	switch kind {
	case base.KindSet, base.KindRangeDelete:
		if key, err = readBytes("key"); err != nil {
			return
		}
		if value, err = readBytes("value"); err != nil {
			return
		}
	case base.KindDelete:
		if key, err = readBytes("key"); err != nil {
			return
		}
	default:
		return 0, nil, nil, 0, fmt.Errorf("unknown entry kind %d", kind)
	}
	return kind, key, value, n, nil
}

// validateBatch checks a batch representation read from a WAL: header,
// every entry decodable, and the count matching.
func validateBatch(repr []byte) (base.SeqNum, uint32, error) {
	seq, count, err := decodeBatchHeader(repr)
	if err != nil {
		return 0, 0, err
	}
	var n uint32
	err = forEachEntry(repr[batchHeaderLen:], func(kind base.Kind, key, value []byte) error {
		n++
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if n != count {
		return 0, 0, fmt.Errorf("batch header says %d entries, body holds %d", count, n)
	}
	if count > 0 && (seq == 0 || seq+base.SeqNum(count) >= seqBatchBit) {
		return 0, 0, fmt.Errorf("batch sequence number %d (count %d) is out of range", seq, count)
	}
	return seq, count, nil
}
