package kv

import (
	"bytes"
	"slices"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/internal/rangedel"
	"github.com/strata-db/strata/kv/table"
)

// RangeEstimate approximates what a key range holds.
type RangeEstimate struct {
	// Keys estimates the live keys: the point values minus the point
	// deletions, each deletion taken to remove one value written before it.
	// Overwrites of a key that a compaction has not yet merged count once
	// per version.
	Keys int64
	// Bytes estimates the user keys and values of those keys, before
	// compression: the bytes of the values found, scaled down by the share
	// of them the deletions remove.
	Bytes int64
}

// rangeCount is what an estimate adds up: values, deletions, and the bytes
// of the values.
type rangeCount struct {
	sets, dels, bytes float64
}

func (c *rangeCount) add(o rangeCount) {
	c.sets += o.sets
	c.dels += o.dels
	c.bytes += o.bytes
}

// EstimateRange estimates the keys in [start, end) (nil start or end:
// unbounded) without reading a data block. Each table contributes its
// properties' entry counts and raw sizes scaled by the share of its data
// blocks the range spans, found in its index, so a range within one block
// of a table may count nothing there, and a table whose entries differ in
// size from one part to another (rows and the index entries after them,
// say) skews the count toward the smaller ones. The memtables are walked.
// Range deletions count: the parts of a table that a tombstone newer than
// all its entries covers, and the memtable entries a newer tombstone
// covers, are left out. Use it where a scan would cost too much: a
// planner's first guess at a table's size after Open, say.
func (d *DB) EstimateRange(start, end []byte) (RangeEstimate, error) {
	if d.closed.Load() {
		return RangeEstimate{}, ErrClosed
	}
	var sum rangeCount
	rs := d.loadReadState()
	defer rs.unref()
	tombs, err := d.rangeTombstones(rs, start, end)
	if err != nil {
		return RangeEstimate{}, err
	}
	for i := range rs.numMemtables() {
		m, _ := rs.memtable(i)
		sum.add(countMemtable(m, start, end, tombs))
	}
	for level := range manifest.NumLevels {
		for _, f := range rs.v.Overlaps(level, start, end) {
			c, err := d.countTable(f, start, end, tombs)
			if err != nil {
				return RangeEstimate{}, err
			}
			sum.add(c)
		}
	}
	live := sum.sets - sum.dels
	if live <= 0 {
		return RangeEstimate{}, nil
	}
	return RangeEstimate{Keys: int64(live), Bytes: int64(sum.bytes * live / sum.sets)}, nil
}

// ApproximateSize returns the bytes of table data that [start, end) spans
// (nil start or end: unbounded), from the tables' indexes, without reading
// a data block: what a scan of the range would read from files, as
// RocksDB's GetApproximateSizes gives it without the memtables. A range
// within one block of a table counts nothing there. A planner sizes
// readahead with it.
func (d *DB) ApproximateSize(start, end []byte) (int64, error) {
	if d.closed.Load() {
		return 0, ErrClosed
	}
	rs := d.loadReadState()
	defer rs.unref()
	var n int64
	for level := range manifest.NumLevels {
		for _, f := range rs.v.Overlaps(level, start, end) {
			e, err := d.tables.get(f.FileNum)
			if err != nil {
				return 0, err
			}
			lo, hi := tableSpan(e.reader, f, start, end)
			d.tables.release(e)
			n += int64(hi - lo)
		}
	}
	return n, nil
}

// tableSpan returns the offsets in the data of table f, read by r, that
// [start, end) spans, from its index; lo == hi when it spans none.
func tableSpan(r *table.Reader, f *manifest.FileMetadata, start, end []byte) (lo, hi uint64) {
	hi = r.DataEnd()
	if start != nil && bytes.Compare(start, f.SmallestUserKey()) > 0 {
		lo = r.ApproximateOffset(start)
	}
	if end != nil && bytes.Compare(end, f.LargestUserKey()) <= 0 {
		hi = r.ApproximateOffset(end)
	}
	return lo, max(lo, hi)
}

// rangeTombstones returns the range tombstones of rs that overlap [start,
// end), or nil when there are none.
func (d *DB) rangeTombstones(rs *readState, start, end []byte) (*rangedel.Set, error) {
	var ts []rangedel.Tombstone
	for i := range rs.numMemtables() {
		if m, _ := rs.memtable(i); m.HasRangeDeletes() {
			ts = append(ts, m.collectTombstones(base.SeqNumMax)...)
		}
	}
	for level := range manifest.NumLevels {
		for _, f := range rs.v.Overlaps(level, start, end) {
			if f.NumRangeDeletes == 0 {
				continue
			}
			e, err := d.tables.get(f.FileNum)
			if err != nil {
				return nil, err
			}
			ts = tombstonesOf(e.tombs, base.SeqNumMax, ts)
			d.tables.release(e)
		}
	}
	ts = slices.DeleteFunc(ts, func(t rangedel.Tombstone) bool {
		return (end != nil && bytes.Compare(t.Start, end) >= 0) || (start != nil && bytes.Compare(t.End, start) <= 0)
	})
	if len(ts) == 0 {
		return nil, nil
	}
	return rangedel.NewSet(ts), nil
}

// countMemtable counts the entries of m in [start, end) that no newer
// tombstone of tombs covers.
func countMemtable(m *memTable, start, end []byte, tombs *rangedel.Set) rangeCount {
	var c rangeCount
	var cur rangedel.Cursor
	if tombs != nil {
		cur.Init(tombs)
	}
	it := m.NewIter()
	defer it.Close()
	var kv *base.KV
	if start != nil {
		var buf [64]byte
		kv = it.SeekGE(base.MakeSearchKey(buf[:0], start, base.SeqNumMax))
	} else {
		kv = it.First()
	}
	for ; kv != nil; kv = it.Next() {
		uk := kv.UserKey()
		if end != nil && bytes.Compare(uk, end) >= 0 {
			break
		}
		if tombs != nil && cur.Covers(uk, base.SeqOf(base.Trailer(kv.K)), base.SeqNumMax) {
			continue
		}
		if kv.Kind() == base.KindDelete {
			c.dels++
			continue
		}
		c.sets++
		c.bytes += float64(len(uk) + len(kv.V))
	}
	return c
}

// countTable scales table f's properties by the share of its data blocks
// that [start, end) spans, less the spans that tombstones newer than every
// entry of f cover.
func (d *DB) countTable(f *manifest.FileMetadata, start, end []byte, tombs *rangedel.Set) (rangeCount, error) {
	e, err := d.tables.get(f.FileNum)
	if err != nil {
		return rangeCount{}, err
	}
	defer d.tables.release(e)
	r := e.reader
	dataEnd := r.DataEnd()
	if dataEnd == 0 {
		return rangeCount{}, nil
	}
	lo, hi := tableSpan(r, f, start, end)
	if hi <= lo {
		return rangeCount{}, nil
	}
	span := hi - lo
	if tombs != nil {
		for _, fr := range tombs.Fragments() {
			if fr.MaxSeq(base.SeqNumMax) <= f.LargestSeq || !f.Overlaps(fr.Start, fr.End) {
				continue // older than some of f's entries, or not in f
			}
			a, b := r.ApproximateOffset(fr.Start), r.ApproximateOffset(fr.End)
			a, b = max(a, lo), min(b, hi)
			if b > a {
				span -= min(b-a, span)
			}
		}
	}
	share := float64(span) / float64(dataEnd)
	p := r.Properties()
	trailers := p.NumEntries * base.TrailerLen
	raw := p.RawValueSize
	if p.RawKeySize > trailers {
		raw += p.RawKeySize - trailers
	}
	return rangeCount{
		sets:  share * float64(p.NumEntries-p.NumDeletions),
		dels:  share * float64(p.NumDeletions),
		bytes: share * float64(raw),
	}, nil
}
