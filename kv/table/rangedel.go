package table

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/strata-db/strata/kv/internal/base"
)

// Range-deletion block format
//
// One entry per tombstone, in the block format above: the key is the
// internal key start#seq,RANGEDEL, the value the exclusive end user key.
// Entries are sorted by key (start ascending, then seq descending), ties
// by end ascending; tombstones may overlap. Durable.

// Tombstone is a range deletion: it deletes every entry of a user key in
// [Start, End) whose sequence number is below Seq.
type Tombstone struct {
	Start, End []byte
	Seq        base.SeqNum
}

// compareTombstones orders tombstones as the range-deletion block stores
// them.
func compareTombstones(a, b Tombstone) int {
	if c := bytes.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Seq, a.Seq); c != 0 {
		return c
	}
	return bytes.Compare(a.End, b.End)
}

// encodeRangeDels sorts ts and builds the range-deletion block in b.
func encodeRangeDels(ts []Tombstone, b *blockWriter) []byte {
	slices.SortFunc(ts, compareTombstones)
	b.reset()
	var key []byte
	for _, t := range ts {
		key = base.AppendKey(key[:0], t.Start, t.Seq, base.KindRangeDelete)
		b.add(key, t.End)
	}
	return b.finish()
}

// decodeRangeDels decodes a range-deletion block read from off, copying
// the tombstones out of the block.
func decodeRangeDels(block []byte, file string, off uint64) ([]Tombstone, error) {
	var ts []Tombstone
	err := walkBlock(block, file, off, func(k, v []byte) error {
		if !base.Valid(k) || base.KindOfKey(k) != base.KindRangeDelete {
			return base.Corruptf(file, int64(off), "range deletion key %q is not a RANGEDEL internal key", k)
		}
		start := base.UserKey(k)
		if bytes.Compare(start, v) >= 0 {
			return base.Corruptf(file, int64(off), "range deletion [%q, %q) is empty or inverted", start, v)
		}
		t := Tombstone{Start: slices.Clone(start), End: slices.Clone(v), Seq: base.Seq(k)}
		if n := len(ts); n > 0 && compareTombstones(ts[n-1], t) > 0 {
			return base.Corruptf(file, int64(off), "range deletions out of order: [%q, %q)#%d after [%q, %q)#%d",
				t.Start, t.End, t.Seq, ts[n-1].Start, ts[n-1].End, ts[n-1].Seq)
		}
		ts = append(ts, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ts, nil
}
