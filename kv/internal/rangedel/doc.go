// Package rangedel implements range tombstones: the arithmetic of which
// point entries a set of range deletions hides from which readers, and what
// a compaction must keep of them.
//
// A [Tombstone] [Start, End) at Seq deletes every point entry whose user key
// lies in [Start, End) and whose sequence number is below Seq, for every
// reader whose snapshot is >= Seq (a snapshot is the sequence number of the
// last write the reader sees). Tombstones written at different times
// overlap arbitrarily; before anything asks questions of them they are cut
// into [Fragment]s: non-overlapping, sorted spans, each with the sequence
// numbers of every tombstone that covers all of it. Any two keys in one
// fragment are covered by exactly the same tombstones, so a question about a
// key is a binary search for its fragment followed by a search of that
// fragment's sequence numbers.
//
//	tombstones        a---------e@5      c------g@9
//	fragments         [a,c){5}  [c,e){9,5}  [e,g){9}
//
// # Reading
//
// A [Set] answers point questions in O(log n) without allocating:
// [Set.MaxCoveringSeq] and [Set.Covers]. A [Cursor] answers the same
// questions for a scan that moves through keys in order, in either
// direction, at amortized constant cost per key: it remembers the fragment
// of the last key and gallops from there.
//
// # Compaction
//
// A compaction keeps, within each fragment, only the newest tombstone of
// each snapshot stripe ([Compact]): readers between two snapshots cannot
// tell the older ones apart from the newest, because a point deleted by an
// older tombstone of the stripe is also deleted by the newest. At the bottom
// of the tree it also drops the stripe every reader sees, since the points
// below it are dropped along with it ([ShouldDropPoint]). [Set.Truncate]
// clips what remains to each output file's key range.
//
// # Ownership and concurrency
//
// Fragments, Sets and the tombstones this package returns alias the key
// slices they were built from; callers must not modify those keys while any
// of them is in use. Fragments, Sets and the slices returned are immutable
// and safe for concurrent use; a Cursor belongs to one goroutine at a time
// (any number of Cursors may share a Set).
//
// # Usage
//
//	s := rangedel.NewSet(tombstones)
//	if s.Covers(ukey, seq, snapshot) { /* the point entry is deleted */ }
//
//	c := rangedel.MakeCursor(s)
//	for kv := it.First(); kv != nil; kv = it.Next() {
//		if c.Covers(kv.UserKey(), kv.Seq(), snapshot) { continue }
//		...
//	}
package rangedel
