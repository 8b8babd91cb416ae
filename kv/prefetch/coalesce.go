package prefetch

import "github.com/strata-db/strata/kv/vfs"

// DefaultCoalesceThreshold is the gap, in bytes, up to which MultiScan
// merges the reads of two blocks into one (RocksDB's
// io_coalesce_threshold): reading and discarding a gap this small costs
// less than a second read call.
const DefaultCoalesceThreshold = 16 << 10

// Extent is a run of bytes of a file: for a table, a block with its
// trailer.
type Extent struct {
	Off, Len int64
}

// End returns the offset just past the extent.
func (e Extent) End() int64 { return e.Off + e.Len }

// IORange is one read that covers a run of extents: [Off, Off+Len) holds
// extents[First : First+Count].
type IORange struct {
	Off, Len     int64
	First, Count int
}

// End returns the offset just past the read.
func (r IORange) End() int64 { return r.Off + r.Len }

// Coalesce plans the reads of extents, which are sorted by offset and do
// not overlap (a table's blocks in file order): consecutive extents go into
// one read when the gap between them is at most gapThreshold bytes (so
// adjacent extents merge for any threshold >= 0, and a negative threshold
// merges nothing), or when, rounded to align, they share an aligned unit.
// With align > 1 (a power of two: direct I/O) every read is rounded out to
// it: offset down, end up. Gap bytes are read and thrown away; that is the
// trade: more bytes, fewer calls.
//
// An extent that starts before its predecessor (unsorted input) starts a
// new read; every extent is covered by exactly one read whatever the input.
// Coalesce allocates only its result.
func Coalesce(extents []Extent, gapThreshold int64, align int) []IORange {
	if align < 1 || align&(align-1) != 0 {
		align = 1
	}
	var out []IORange
	var prev Extent
	for i, e := range extents {
		s, t := vfs.AlignDown(e.Off, align), vfs.AlignUp(e.End(), align)
		if n := len(out); n > 0 && e.Off >= prev.Off {
			c := &out[n-1]
			if e.Off-prev.End() <= gapThreshold || s < c.End() {
				c.Len = max(c.End(), t) - c.Off
				c.Count++
				if e.End() > prev.End() {
					prev = e
				}
				continue
			}
		}
		out = append(out, IORange{Off: s, Len: t - s, First: i, Count: 1})
		prev = e
	}
	return out
}

// CoalesceAdjacent plans the reads of extents, sorted and not overlapping,
// for a file whose reads are copies from its mapping (ReadAt up to
// MaxMappedRead). Such a read costs no system call, so there is nothing to
// save by reading a gap: only extents that touch merge, and only while the
// read stays within maxLen, so that each read is still a copy. An extent
// longer than maxLen is a read of its own. The reads are appended to out.
func CoalesceAdjacent(out []IORange, extents []Extent, maxLen int64) []IORange {
	out = out[:0]
	for i, e := range extents {
		if n := len(out); n > 0 {
			c := &out[n-1]
			if e.Off == c.End() && c.Len+e.Len <= maxLen {
				c.Len += e.Len
				c.Count++
				continue
			}
		}
		out = append(out, IORange{Off: e.Off, Len: e.Len, First: i, Count: 1})
	}
	return out
}
