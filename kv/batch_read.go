package kv

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/strata-db/strata/kv/internal/base"
)

var errNotIndexed = errors.New("kv: reading a batch that is not indexed")

// Get returns a copy of the value of key as the batch sees it: its own
// writes over the database as of ro.Snapshot (the latest state when nil).
func (b *Batch) Get(key []byte, ro *ReadOptions) ([]byte, error) {
	if b.closed {
		return nil, ErrClosed
	}
	if b.index == nil {
		return nil, errNotIndexed
	}
	if v, live, decided := b.batchLookup(key); decided {
		if !live {
			return nil, ErrNotFound
		}
		return append([]byte{}, v...), nil
	}
	return b.db.Get(key, ro)
}

// NewIter returns an iterator over the batch's writes seen over the
// database as of o.Snapshot (the latest state when nil). It sees the batch
// as it is now: later writes to the batch are not visible to it.
func (b *Batch) NewIter(o *IterOptions) (*Iterator, error) {
	if b.closed {
		return nil, ErrClosed
	}
	if b.index == nil {
		return nil, errNotIndexed
	}
	return b.db.newIter(b, o)
}

// batchLookup returns what the batch itself says about key: decided reports
// whether a write of the batch settles it (a Set, a Delete, or a range
// deletion newer than any write of key), and value is the Set's value,
// aliasing the batch.
func (b *Batch) batchLookup(key []byte) (value []byte, live, decided bool) {
	n := b.index.seekGE(key, base.MakeTrailer(base.SeqNumMax, base.KindMax))
	var entryOrd int64 = -1
	var kind base.Kind
	if n != nil {
		k, nkey, v, _, _ := decodeEntry(b.data[n.off:])
		if bytes.Equal(nkey, key) {
			entryOrd, kind, value = int64(n.ord), k, v
		}
	}
	for _, r := range b.rangeDels {
		start, end := b.rangeDel(r)
		if int64(r.ord) > entryOrd && bytes.Compare(start, key) <= 0 && bytes.Compare(key, end) < 0 {
			return nil, false, true
		}
	}
	if entryOrd >= 0 {
		return value, kind == base.KindSet, true
	}
	return nil, false, false
}

// MultiGet is DB.MultiGet seen through the batch: keys the batch writes
// are answered from it, the others from the database as of ro.Snapshot,
// with one DB.MultiGet.
func (b *Batch) MultiGet(keys [][]byte, ro *ReadOptions, dst [][]byte) ([][]byte, error) {
	if b.closed {
		return nil, ErrClosed
	}
	if b.index == nil {
		return nil, errNotIndexed
	}
	values := slices.Grow(dst[:0], len(keys))[:len(keys)]
	clear(values)
	var rest [][]byte
	var restIdx []int
	var arena []byte
	type hit struct{ i, start, end int }
	var hits []hit
	for i, k := range keys {
		v, live, decided := b.batchLookup(k)
		switch {
		case !decided:
			rest = append(rest, k)
			restIdx = append(restIdx, i)
		case live:
			start := len(arena)
			arena = append(arena, v...)
			hits = append(hits, hit{i, start, len(arena)})
		}
	}
	for _, h := range hits {
		values[h.i] = arena[h.start:h.end:h.end]
	}
	if len(rest) == 0 {
		return values, nil
	}
	got, err := b.db.MultiGet(rest, ro, nil)
	if err != nil {
		return nil, err
	}
	for j, i := range restIdx {
		values[i] = got[j]
	}
	return values, nil
}

// NewMultiScan is DB.NewMultiScan seen through the batch: the batch's
// writes (as they are now) over the database as of o.Snapshot.
func (b *Batch) NewMultiScan(ctx context.Context, ranges []ScanRange, o *IterOptions) (*MultiScan, error) {
	if b.closed {
		return nil, ErrClosed
	}
	if b.index == nil {
		return nil, errNotIndexed
	}
	return b.db.newMultiScan(ctx, b, ranges, o)
}
