package rangedel

import (
	"bytes"
	"slices"

	"github.com/strata-db/strata/kv/internal/base"
)

// Tombstone is a range deletion: it deletes the point entries with user keys
// in [Start, End) and sequence numbers below Seq. A tombstone with Start >=
// End is empty and deletes nothing.
type Tombstone struct {
	Start, End []byte
	Seq        base.SeqNum
}

// Fragment is a span [Start, End) of user keys that the same tombstones
// cover in full: it stands for one tombstone [Start, End) at each of Seqs,
// which are distinct and in descending order.
type Fragment struct {
	Start, End []byte
	Seqs       []base.SeqNum
}

// Contains reports whether ukey lies within f.
func (f *Fragment) Contains(ukey []byte) bool {
	return bytes.Compare(f.Start, ukey) <= 0 && bytes.Compare(ukey, f.End) < 0
}

// MaxSeq returns the largest of f's sequence numbers that is <= snapshot,
// or 0 when there is none. O(log len(Seqs)); allocates nothing.
func (f *Fragment) MaxSeq(snapshot base.SeqNum) base.SeqNum {
	// Seqs descend: the answer is the first one <= snapshot.
	lo, hi := 0, len(f.Seqs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f.Seqs[m] > snapshot {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(f.Seqs) {
		return 0
	}
	return f.Seqs[lo]
}

// Fragments cuts ts into fragments: sorted by Start, non-overlapping, each
// covered in full by the tombstones listed in its Seqs, and together
// covering exactly the union of ts. Empty tombstones are ignored; a
// sequence number given twice for overlapping keys is listed once. ts may
// be in any order and is not modified. The fragments' keys alias those of
// ts.
//
// n tombstones make at most 2n-1 fragments; the Seqs lists total O(n^2) in
// the worst case (every tombstone nested in the previous one) and O(n) when
// few tombstones overlap. Cost: O(n log n) plus the size of the output.
func Fragments(ts []Tombstone) []Fragment {
	sorted := make([]Tombstone, 0, len(ts))
	bounds := make([][]byte, 0, 2*len(ts))
	for _, t := range ts {
		if bytes.Compare(t.Start, t.End) < 0 {
			sorted = append(sorted, t)
			bounds = append(bounds, t.Start, t.End)
		}
	}
	if len(sorted) == 0 {
		return nil
	}
	slices.SortFunc(sorted, func(a, b Tombstone) int { return bytes.Compare(a.Start, b.Start) })
	slices.SortFunc(bounds, bytes.Compare)
	bounds = slices.CompactFunc(bounds, bytes.Equal)

	// Sweep the boundaries left to right. Every Start and End is a boundary,
	// so a tombstone that covers any part of [bounds[i], bounds[i+1]) covers
	// all of it: exactly the tombstones active at bounds[i].
	var (
		frags  []Fragment
		active []Tombstone
		seqs   []base.SeqNum // backing store for every fragment's Seqs
		next   int           // the first tombstone of sorted not yet active
	)
	for i := 0; i+1 < len(bounds); i++ {
		b := bounds[i]
		active = slices.DeleteFunc(active, func(t Tombstone) bool { return bytes.Compare(t.End, b) <= 0 })
		for next < len(sorted) && bytes.Equal(sorted[next].Start, b) {
			active = append(active, sorted[next])
			next++
		}
		if len(active) == 0 {
			continue
		}
		from := len(seqs)
		for _, t := range active {
			seqs = append(seqs, t.Seq)
		}
		fs := seqs[from:]
		slices.SortFunc(fs, func(a, b base.SeqNum) int {
			switch {
			case a > b:
				return -1
			case a < b:
				return 1
			}
			return 0
		})
		fs = slices.Compact(fs)
		seqs = seqs[:from+len(fs)]
		frags = append(frags, Fragment{Start: b, End: bounds[i+1], Seqs: fs[:len(fs):len(fs)]})
	}
	return frags
}
