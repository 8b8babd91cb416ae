package rangedel

import (
	"bytes"

	"github.com/strata-db/strata/kv/internal/base"
)

// Cursor answers the questions of a Set for a scan: successive keys that
// move in order, forward or backward, with direction changes and jumps
// allowed. It remembers the fragment of the last key asked about. A key in
// that fragment, or in the gap after it, costs two comparisons; a key
// further away costs O(log d) comparisons, d being the number of fragments
// passed over, by galloping from the remembered position. A scan over m
// keys and n fragments therefore costs O(m + n) in all, and a random key
// never more than O(log n). No method allocates.
//
// The zero Cursor is a Cursor over an empty Set. A Cursor is not safe for
// concurrent use; many Cursors may share a Set.
type Cursor struct {
	frags []Fragment
	// i is the index of the last fragment whose Start is <= the last key
	// asked about, -1 if there is none.
	i int
}

// MakeCursor returns a Cursor over s.
func MakeCursor(s *Set) Cursor {
	var c Cursor
	c.Init(s)
	return c
}

// Init points c at s, as if no key had been asked about.
func (c *Cursor) Init(s *Set) {
	*c = Cursor{frags: s.frags, i: -1}
}

// Covering returns the fragment that contains ukey, or nil when no
// tombstone covers ukey.
func (c *Cursor) Covering(ukey []byte) *Fragment {
	c.seek(ukey)
	if c.i >= 0 && bytes.Compare(ukey, c.frags[c.i].End) < 0 {
		return &c.frags[c.i]
	}
	return nil
}

// MaxCoveringSeq is Set.MaxCoveringSeq.
func (c *Cursor) MaxCoveringSeq(ukey []byte, snapshot base.SeqNum) base.SeqNum {
	if f := c.Covering(ukey); f != nil {
		return f.MaxSeq(snapshot)
	}
	return 0
}

// Covers is Set.Covers.
func (c *Cursor) Covers(ukey []byte, seq, snapshot base.SeqNum) bool {
	return c.MaxCoveringSeq(ukey, snapshot) > seq
}

// seek moves c.i to the last fragment whose Start is <= ukey.
func (c *Cursor) seek(ukey []byte) {
	n := len(c.frags)
	if n == 0 {
		c.i = -1 // also makes the zero Cursor work
		return
	}
	i := c.i
	switch {
	case i >= 0 && bytes.Compare(c.frags[i].Start, ukey) > 0:
		// Backward. frags[i].Start > ukey: gallop down to a fragment whose
		// Start is <= ukey (or past the first), then binary-search the
		// stretch in between.
		hi, step := i, 1
		lo := hi - step
		for lo >= 0 && bytes.Compare(c.frags[lo].Start, ukey) > 0 {
			hi, step = lo, step*2
			lo = hi - step
		}
		if lo < 0 {
			lo = -1
		}
		// frags[lo].Start <= ukey (lo = -1 stands for minus infinity) and
		// frags[hi].Start > ukey.
		c.i = lastStartLE(c.frags, lo+1, hi, ukey)
	case i+1 < n && bytes.Compare(c.frags[i+1].Start, ukey) <= 0:
		// Forward. frags[i+1].Start <= ukey: gallop up to a fragment whose
		// Start is > ukey (or past the last).
		lo, step := i+1, 1
		hi := lo + step
		for hi < n && bytes.Compare(c.frags[hi].Start, ukey) <= 0 {
			lo, step = hi, step*2
			hi = lo + step
		}
		if hi > n {
			hi = n
		}
		// frags[lo].Start <= ukey and frags[hi].Start > ukey (hi = n stands
		// for plus infinity).
		c.i = lastStartLE(c.frags, lo+1, hi, ukey)
	}
}
