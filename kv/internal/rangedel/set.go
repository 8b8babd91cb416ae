package rangedel

import (
	"bytes"
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
)

// Set is an immutable set of range tombstones, held as fragments, that
// answers which point entries they delete. The zero Set is empty.
type Set struct {
	frags []Fragment
}

// NewSet returns the Set of ts, which may overlap and be in any order. The
// Set aliases the keys of ts.
func NewSet(ts []Tombstone) *Set {
	return &Set{frags: Fragments(ts)}
}

// NewSetFromFragments returns the Set of frags, which are already
// fragmented (read back from a table, for instance). It checks that they
// are: each fragment non-empty with distinct, descending Seqs, and the
// fragments sorted and non-overlapping. The Set keeps frags itself.
func NewSetFromFragments(frags []Fragment) (*Set, error) {
	for i := range frags {
		f := &frags[i]
		if bytes.Compare(f.Start, f.End) >= 0 {
			return nil, fmt.Errorf("rangedel: fragment %d [%q, %q) is empty", i, f.Start, f.End)
		}
		if len(f.Seqs) == 0 {
			return nil, fmt.Errorf("rangedel: fragment %d [%q, %q) has no sequence numbers", i, f.Start, f.End)
		}
		for j := 1; j < len(f.Seqs); j++ {
			if f.Seqs[j-1] <= f.Seqs[j] {
				return nil, fmt.Errorf("rangedel: fragment %d [%q, %q): sequence numbers %v not strictly descending",
					i, f.Start, f.End, f.Seqs)
			}
		}
		if i > 0 && bytes.Compare(frags[i-1].End, f.Start) > 0 {
			return nil, fmt.Errorf("rangedel: fragment %d [%q, %q) overlaps or precedes fragment %d [%q, %q)",
				i, f.Start, f.End, i-1, frags[i-1].Start, frags[i-1].End)
		}
	}
	return &Set{frags: frags}, nil
}

// Fragments returns the Set's fragments in key order. The caller must not
// modify them.
func (s *Set) Fragments() []Fragment { return s.frags }

// Len returns the number of fragments.
func (s *Set) Len() int { return len(s.frags) }

// search returns the index of the last fragment whose Start is <= ukey,
// -1 if there is none.
func (s *Set) search(ukey []byte) int {
	return lastStartLE(s.frags, 0, len(s.frags), ukey)
}

// lastStartLE returns the largest i in [lo, hi) with frags[i].Start <= ukey,
// or lo-1 when there is none. REQUIRES: Starts ascend.
func lastStartLE(frags []Fragment, lo, hi int, ukey []byte) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(frags[m].Start, ukey) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// Covering returns the fragment that contains ukey, or nil when no
// tombstone covers ukey. O(log n); allocates nothing.
func (s *Set) Covering(ukey []byte) *Fragment {
	if i := s.search(ukey); i >= 0 && bytes.Compare(ukey, s.frags[i].End) < 0 {
		return &s.frags[i]
	}
	return nil
}

// MaxCoveringSeq returns the largest Seq <= snapshot of a tombstone that
// covers ukey, or 0 when there is none: a reader at snapshot sees the point
// entries of ukey with sequence numbers >= the result, and no older one.
// O(log n); allocates nothing.
func (s *Set) MaxCoveringSeq(ukey []byte, snapshot base.SeqNum) base.SeqNum {
	if f := s.Covering(ukey); f != nil {
		return f.MaxSeq(snapshot)
	}
	return 0
}

// Covers reports whether the point entry (ukey, seq) is deleted for a
// reader at snapshot: a tombstone with seq < Seq <= snapshot covers ukey.
func (s *Set) Covers(ukey []byte, seq, snapshot base.SeqNum) bool {
	return s.MaxCoveringSeq(ukey, snapshot) > seq
}

// Truncate returns the Set's tombstones clipped to the user keys [lower,
// upper), for a compaction output file whose key range that is; nil lower
// or upper means unbounded. Tombstones are returned fragmented, sorted by
// Start and then by Seq descending, which is the order a table's range
// deletion block stores them in. Their keys alias the Set's, lower and
// upper.
func (s *Set) Truncate(lower, upper []byte) []Tombstone {
	i := 0
	if lower != nil {
		// Skip the fragments that end at or before lower.
		if i = s.search(lower); i < 0 || bytes.Compare(s.frags[i].End, lower) <= 0 {
			i++
		}
	}
	var out []Tombstone
	for ; i < len(s.frags); i++ {
		f := &s.frags[i]
		if upper != nil && bytes.Compare(f.Start, upper) >= 0 {
			break
		}
		start, end := f.Start, f.End
		if lower != nil && bytes.Compare(start, lower) < 0 {
			start = lower
		}
		if upper != nil && bytes.Compare(end, upper) > 0 {
			end = upper
		}
		if bytes.Compare(start, end) >= 0 {
			continue
		}
		for _, seq := range f.Seqs {
			out = append(out, Tombstone{Start: start, End: end, Seq: seq})
		}
	}
	return out
}
