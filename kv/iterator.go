package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/merging"
	"github.com/strata-db/strata/kv/internal/rangedel"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
)

// Iterator iterates over the live keys of a database, of a snapshot, or of
// an indexed batch seen over the database, in key order, in either
// direction.
//
// Positioning methods (SeekGE, SeekLT, First, Last, Next, Prev) return
// whether the iterator is now on a key. Key and Value stay valid only until
// the next positioning call or Close: copy them to keep them. Forward moves
// stop at the upper bound, backward moves at the lower bound. After an
// iteration stops, check Error: false from a positioning call means either
// the end of the keys or an error. Close releases everything the iterator
// holds (pinned blocks, open tables, the version it reads) and must always
// be called.
//
// An Iterator sees the state of the database (and of its batch) at the
// moment it was made. It is not safe for concurrent use.
type Iterator struct {
	db    *DB
	rs    *readState
	iter  base.InternalIterator
	snap  base.SeqNum
	tombs *rangedel.Set // the visible range tombstones; nil when there are none
	lower []byte
	upper []byte
	st    stats.Sink

	// dir is the direction of the last move: +1 forward, -1 backward, 0 when
	// not positioned.
	dir int8
	// valid reports whether the iterator is on a key.
	valid bool
	// exhausted reports that the internal iterator returned nil in the
	// current direction; it must be reseeked before it moves again.
	exhausted bool
	// iterKV is, when moving backward, the internal entry the internal
	// iterator is on: the newest-so-far entry of the key before the current
	// one, which the next Prev starts from.
	iterKV *base.KV

	key    []byte // the current key: keyBuf
	value  []byte // the current value: aliases the internal iterator going forward, valBuf backward
	keyBuf []byte
	valBuf []byte
	search []byte // scratch for search keys
	err    error
	closed bool

	// sampleLeft is the bytes of entries to return before the next read
	// sample (see sampleRead), drawn uniformly from [0, 2*readSampleBytes)
	// so that the short scans of many iterators sample as one long one.
	sampleLeft int

	// fillBudget caps what the iterator's table iterators insert into the
	// block cache between two seeks (see scanFillShare).
	fillBudget table.FillBudget

	// mem holds iter and the buffers, from iterMemPool until Close.
	mem *iterMem
	// merge is iter when it is the merge of inputs that were given this
	// iterator's bounds (and get them again from setBounds), nil
	// otherwise: then an entry from an input that applies its bounds
	// itself, a table's or a level's, needs no comparison with upper.
	merge *merging.Iter
	// sole: iter is the iterator of the one table the iterator reads
	// (newIterAt), which applies the bounds itself.
	sole bool
}

func (i *Iterator) visibleSeq(seq base.SeqNum) bool {
	// Entries of an indexed batch carry seqBatchBit and are always visible:
	// the batch iterator already hides writes made after the iterator.
	return seq <= i.snap || seq&seqBatchBit != 0
}

func (i *Iterator) covered(ukey []byte, seq base.SeqNum) bool {
	return i.tombs != nil && i.tombs.Covers(ukey, seq, base.SeqNumMax)
}

func (i *Iterator) setErr(err error) bool {
	if err != nil && i.err == nil {
		i.err = err
	}
	i.valid = false
	return false
}

// maxSequentialSkips is how many entries a forward move steps over one by
// one before it moves past the rest of a user key's hidden entries with
// one forward seek (base.ForwardSeeker): the older versions a hot key piles
// up in the memtable and level 0 between compactions, or the versions
// newer than the iterator's snapshot. A step costs one Next of the merge;
// the seek, a few comparisons per level of a memtable's towers and a
// search of a table's block, which pays once the versions run long.
const maxSequentialSkips = 8

// findNextEntry moves forward from kv to the first key whose newest visible
// entry is a live value, skipping the entries of i.keyBuf when skipping.
func (i *Iterator) findNextEntry(kv *base.KV, skipping bool) bool {
	i.dir = +1
	skipped := 0
	for kv != nil {
		ukey := kv.UserKey()
		if i.upper != nil && !i.sole && (i.merge == nil || !i.merge.TopAppliesBounds()) && bytes.Compare(ukey, i.upper) >= 0 {
			break
		}
		seq := kv.Seq()
		if visible := i.visibleSeq(seq); !visible || (skipping && bytes.Equal(ukey, i.keyBuf)) {
			if skipped++; skipped > maxSequentialSkips {
				if fs, ok := i.iter.(base.ForwardSeeker); ok {
					skipped = 0
					if visible {
						// An older version of the key just returned or
						// deleted: what follows the key's last possible
						// entry.
						i.search = base.AppendKey(i.search[:0], i.keyBuf, 0, 0)
					} else {
						// Newer than the snapshot: the key's newest entry
						// the snapshot sees.
						i.search = base.MakeSearchKey(i.search[:0], ukey, i.snap)
					}
					kv = fs.NextGE(i.search)
					continue
				}
			}
			kv = i.iter.Next()
			continue
		}
		// The newest visible entry of ukey.
		skipped = 0
		i.keyBuf = append(i.keyBuf[:0], ukey...)
		skipping = true
		switch kv.Kind() {
		case base.KindSet:
			if !i.covered(ukey, seq) {
				i.key, i.value, i.valid = i.keyBuf, kv.V, true
				if i.sampleLeft -= len(ukey) + len(kv.V); i.sampleLeft < 0 {
					i.sampleRead()
				}
				return true
			}
		case base.KindDelete:
		default:
			return i.setErr(fmt.Errorf("kv: iterator: entry %s has an unknown kind", base.FormatKey(kv.K)))
		}
		kv = i.iter.Next()
	}
	if kv == nil {
		i.exhausted = true
		if err := i.iter.Error(); err != nil {
			return i.setErr(err)
		}
	}
	i.valid = false
	return false
}

// sampleRead checks, about once per readSampleBytes returned, whether a
// level-0 table of the iterator's version spans the current key: then the
// scan is merging it with the levels below, and the database may compact
// level 0 for it (DB.noteLevel0Read).
func (i *Iterator) sampleRead() {
	i.sampleLeft = nextReadSample()
	if i.rs == nil || i.db == nil {
		return
	}
	i.st.Add(stats.IterSamples, 1) // a scan in progress (DB.foregroundReads)
	for _, f := range i.rs.v.Levels[0] {
		if bytes.Compare(base.UserKey(f.Smallest), i.key) <= 0 && bytes.Compare(i.key, base.UserKey(f.Largest)) <= 0 {
			i.db.noteLevel0Read()
			return
		}
	}
}

// findPrevEntry moves backward from kv to the previous key whose newest
// visible entry is a live value. Going backward, the entries of a key come
// oldest first, so a key is decided only when the walk reaches a smaller one.
func (i *Iterator) findPrevEntry(kv *base.KV) bool {
	i.dir = -1
	have, live := false, false
	for kv != nil {
		ukey := kv.UserKey()
		if i.lower != nil && bytes.Compare(ukey, i.lower) < 0 {
			break
		}
		seq := kv.Seq()
		if !i.visibleSeq(seq) {
			kv = i.iter.Prev()
			continue
		}
		if have && !bytes.Equal(ukey, i.keyBuf) {
			if live {
				i.iterKV = kv
				i.key, i.value, i.valid = i.keyBuf, i.valBuf, true
				return true
			}
			have = false
		}
		if !have {
			i.keyBuf = append(i.keyBuf[:0], ukey...)
			have = true
		}
		switch kv.Kind() {
		case base.KindSet:
			live = !i.covered(ukey, seq)
			if live {
				i.valBuf = append(i.valBuf[:0], kv.V...)
			}
		case base.KindDelete:
			live = false
		default:
			return i.setErr(fmt.Errorf("kv: iterator: entry %s has an unknown kind", base.FormatKey(kv.K)))
		}
		kv = i.iter.Prev()
	}
	if kv == nil {
		i.exhausted = true
		if err := i.iter.Error(); err != nil {
			return i.setErr(err)
		}
	}
	i.iterKV = nil
	if have && live {
		i.key, i.value, i.valid = i.keyBuf, i.valBuf, true
		return true
	}
	i.valid = false
	return false
}

func (i *Iterator) startSeek() bool {
	if i.closed {
		i.err = ErrClosed
		return false
	}
	i.st.Add(stats.IterSeeks, 1)
	// Each scan, from its seek, may fill its share of the block cache.
	i.fillBudget.Reset()
	i.exhausted = false
	i.iterKV = nil
	// A previous error stays until a seek succeeds.
	i.err = nil
	return true
}

// SeekGE moves to the first key >= key.
func (i *Iterator) SeekGE(key []byte) bool {
	if !i.startSeek() {
		return false
	}
	if i.lower != nil && bytes.Compare(key, i.lower) < 0 {
		key = i.lower
	}
	if i.upper != nil && bytes.Compare(key, i.upper) >= 0 {
		i.valid, i.dir = false, +1
		return false
	}
	i.search = base.MakeSearchKey(i.search[:0], key, base.SeqNumMax)
	return i.findNextEntry(i.iter.SeekGE(i.search), false)
}

// SeekLT moves to the last key < key.
func (i *Iterator) SeekLT(key []byte) bool {
	if !i.startSeek() {
		return false
	}
	if i.upper != nil && bytes.Compare(key, i.upper) > 0 {
		key = i.upper
	}
	if i.lower != nil && bytes.Compare(key, i.lower) <= 0 {
		i.valid, i.dir = false, -1
		return false
	}
	i.search = base.MakeSearchKey(i.search[:0], key, base.SeqNumMax)
	return i.findPrevEntry(i.iter.SeekLT(i.search))
}

// First moves to the first key.
func (i *Iterator) First() bool {
	if i.lower != nil {
		return i.SeekGE(i.lower)
	}
	if !i.startSeek() {
		return false
	}
	return i.findNextEntry(i.iter.First(), false)
}

// Last moves to the last key.
func (i *Iterator) Last() bool {
	if i.upper != nil {
		return i.SeekLT(i.upper)
	}
	if !i.startSeek() {
		return false
	}
	return i.findPrevEntry(i.iter.Last())
}

// Next moves to the next key.
func (i *Iterator) Next() bool {
	if i.closed || !i.valid {
		return false
	}
	if i.dir < 0 {
		// Switch direction: reposition at the current key's entries, then
		// skip them.
		i.exhausted = false
		i.search = base.MakeSearchKey(i.search[:0], i.key, base.SeqNumMax)
		return i.findNextEntry(i.iter.SeekGE(i.search), true)
	}
	if i.exhausted {
		i.valid = false
		return false
	}
	return i.findNextEntry(i.iter.Next(), true)
}

// Prev moves to the previous key.
func (i *Iterator) Prev() bool {
	if i.closed || !i.valid {
		return false
	}
	if i.dir > 0 {
		// Switch direction: reposition before the current key's entries.
		i.exhausted = false
		i.search = base.MakeSearchKey(i.search[:0], i.key, base.SeqNumMax)
		return i.findPrevEntry(i.iter.SeekLT(i.search))
	}
	if i.exhausted || i.iterKV == nil {
		i.valid = false
		return false
	}
	return i.findPrevEntry(i.iterKV)
}

// setBounds changes the bounds the iterator applies, which must lie within
// the bounds it was made with (its tables were chosen by those), and leaves
// it unpositioned. The level iterators and level-0 table iterators take the
// new bounds too, so that a scan reaching the end of a range stops there
// instead of opening the level's next table and reading its first block,
// and a seek into the same table reuses its iterator; the memtable and
// batch iterators keep their bounds, and this one applies the new ones.
func (i *Iterator) setBounds(lower, upper []byte) {
	i.applyBounds(lower, upper)
	if bs, ok := i.iter.(base.BoundsSetter); ok {
		bs.SetBounds(lower, upper)
	}
}

// applyBounds is setBounds for this iterator alone, for an internal
// iterator that needs no bounds of its own.
func (i *Iterator) applyBounds(lower, upper []byte) {
	i.lower, i.upper = lower, upper
	i.valid = false
	i.dir = 0
}

// Valid reports whether the iterator is on a key.
func (i *Iterator) Valid() bool { return i.valid }

// Key returns the current key, valid until the next positioning call.
func (i *Iterator) Key() []byte { return i.key }

// Value returns the current value, valid until the next positioning call.
func (i *Iterator) Value() []byte { return i.value }

// Error returns the error that stopped the iteration, if any.
func (i *Iterator) Error() error { return i.err }

// Close releases the iterator's resources and returns its error, if any.
func (i *Iterator) Close() error {
	if i.closed {
		return i.err
	}
	i.closed = true
	i.valid = false
	err := i.iter.Close()
	if i.rs != nil {
		i.rs.unref()
		i.rs = nil
	}
	if m := i.mem; m != nil {
		// The merge and the buffers go back to the pool: nothing of the
		// Iterator may point at them any more.
		putIterMem(m, i.keyBuf, i.valBuf, i.search)
		i.mem, i.iter, i.merge, i.sole = nil, closedIter{}, nil, false
		i.key, i.value, i.keyBuf, i.valBuf, i.search, i.iterKV = nil, nil, nil, nil, nil, nil
	}
	if i.err != nil {
		return i.err
	}
	return err
}

// nextReadSample draws the bytes an iterator returns before its next read
// sample: uniform in [0, 2*readSampleBytes), one sample per readSampleBytes
// on average however short the scans.
func nextReadSample() int { return rand.IntN(2 * readSampleBytes) }
