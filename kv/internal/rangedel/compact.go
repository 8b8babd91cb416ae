package rangedel

import (
	"bytes"
	"slices"

	"github.com/strata-db/strata/kv/internal/base"
)

// Snapshot stripes. The open snapshots s1 < s2 < ... < sk cut sequence
// numbers into k+1 stripes: [0, s1], (s1, s2], ..., (sk, max]. Two sequence
// numbers a < b share a stripe exactly when no snapshot s has a <= s < b,
// that is when no reader sees the write at a without the write at b. The
// stripe of q is the number of snapshots below q; stripe 0 is seen by
// every reader.

// stripe returns the stripe of seq: the number of snapshots < seq.
// REQUIRES: snapshots ascend.
func stripe(seq base.SeqNum, snapshots []base.SeqNum) int {
	lo, hi := 0, len(snapshots)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if snapshots[m] < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Compact returns what a compaction must keep of the fragmented tombstones
// frags (sorted and non-overlapping, as Fragments and Set.Fragments return
// them) given the open snapshots (ascending; they are sorted first if not):
//
//   - Within each fragment only the newest tombstone of each snapshot stripe
//     is kept. Every reader that sees an older tombstone of the stripe also
//     sees the newest, which deletes everything the older one did.
//   - If bottommost (nothing lies below the compaction's output for its key
//     range), the tombstones of stripe 0 are dropped too: every reader sees
//     them, and every point entry they delete is in the compaction and is
//     dropped with them (see ShouldDropPoint), so nothing remains for them
//     to delete.
//   - Adjacent fragments left with identical sequence numbers are merged
//     back into one span.
//
// The result is sorted by Start, then by Seq descending; tombstones with
// the same Seq do not overlap. Keys alias those of frags.
//
// Compact preserves what every reader sees, provided the compaction drops
// exactly the point entries ShouldDropPoint allows it to drop (with the same
// frags and snapshots) and keeps every other.
func Compact(frags []Fragment, snapshots []base.SeqNum, bottommost bool) []Tombstone {
	if !slices.IsSorted(snapshots) {
		snapshots = slices.Sorted(slices.Values(snapshots))
	}
	var (
		out  []Tombstone
		kept []base.SeqNum // the current fragment's survivors
		// The pending span: merged fragments with identical survivors
		// (pendSeqs), not yet written to out.
		pendStart, pendEnd []byte
		pendSeqs           []base.SeqNum
	)
	flush := func() {
		for _, seq := range pendSeqs {
			out = append(out, Tombstone{Start: pendStart, End: pendEnd, Seq: seq})
		}
		pendSeqs = pendSeqs[:0]
	}
	for i := range frags {
		f := &frags[i]
		kept = kept[:0]
		last := -1
		for _, seq := range f.Seqs { // newest first
			st := stripe(seq, snapshots)
			if st == last {
				continue // an older tombstone of a stripe already kept
			}
			last = st
			if bottommost && st == 0 {
				break // stripe 0 comes last
			}
			kept = append(kept, seq)
		}
		if len(kept) == 0 {
			flush()
			continue
		}
		if len(pendSeqs) > 0 && bytes.Equal(pendEnd, f.Start) && slices.Equal(pendSeqs, kept) {
			pendEnd = f.End
			continue
		}
		flush()
		pendStart, pendEnd = f.Start, f.End
		pendSeqs = append(pendSeqs, kept...)
	}
	flush()
	return out
}

// ShouldDropPoint reports whether a compaction may drop the point entry
// (ukey, seq), given f, the fragment of the compaction's tombstones that
// contains ukey (nil when none does; see Set.Covering and Cursor.Covering),
// and the open snapshots in ascending order. It may when a tombstone of f
// with Seq > seq lies in seq's snapshot stripe: no snapshot s has seq <= s <
// Seq, so every reader that sees the point also sees the tombstone and the
// point is deleted for all of them. O(log n) in the fragment's and the
// snapshots' sizes; allocates nothing.
func ShouldDropPoint(f *Fragment, seq base.SeqNum, snapshots []base.SeqNum) bool {
	if f == nil {
		return false
	}
	// The oldest tombstone newer than the point is the one most likely to
	// share its stripe. Seqs descend: find how many are > seq.
	lo, hi := 0, len(f.Seqs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f.Seqs[m] > seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return false
	}
	return stripe(seq, snapshots) == stripe(f.Seqs[lo-1], snapshots)
}
