package table

import (
	"bytes"
	"cmp"
	"encoding/binary"

	"github.com/strata-db/strata/kv/internal/base"
)

// sepSearch finds a key among a table's index separators with few cache
// misses. A binary search over the separators themselves touches, at each
// step, an index entry and the separator's bytes elsewhere in memory: two
// cache misses per step once the index is not in the CPU's caches, which is
// the common case for a random lookup in a large database. The separators
// of a table usually share a long prefix (in a SQL table, the table and
// index identifiers and the high bytes of the key), so sepSearch keeps that
// prefix once and, for each separator, the next 16 bytes of its user key as
// two big-endian integers in one dense array. Most steps then compare
// integers in that array; only separators whose 16 bytes equal the key's
// are compared in full.
//
// Why 16 bytes and not 8: a table whose keys span two indexes of a SQL
// table (a flushed memtable holds rows and index entries alike) shares only
// the table's prefix, and the next 8 bytes would be the index identifier,
// the column's flag byte and the high, mostly zero, bytes of an integer
// key, equal for nearly every separator. 16 bytes reach the bytes that
// differ.
//
// The abbreviation is exact where it decides: zero-padded truncation keeps
// byte order (a < b implies abbrev(a) <= abbrev(b)), so differing
// abbreviations order the user keys, hence the internal keys, as the keys
// themselves would; equal ones fall back to base.Compare.
type sepSearch struct {
	prefix []byte   // shared by every separator's user key
	ents   []sepEnt // one per block, in index order
	// firstsOK: every block's first key has the prefix, so firsts are
	// abbreviated (only block 0's can lack it: every other lies between
	// two separators).
	firstsOK bool
	// tail: the last separator lacks the prefix, which it then sorts
	// above (see newSepSearch); its abbreviation is the greatest.
	tail bool
	// lowest and highest are the high words of the first and last
	// prefixed separators' abbreviations, the ends interpolate starts
	// from, kept here so that starting costs no cache miss.
	lowest, highest uint64
}

// sepEnt is what a search, and a scan deciding which blocks it needs,
// reads of a block, side by side so that the last probes of a search
// bring in the rest: the separator's abbreviation, the first key's (so
// that checking a range's end against the block, cmpFirst, need not read
// the key) and the block's handle. Without them, each of the separator's
// bytes, the index entry and the first key's bytes is a cache miss apiece
// in a cold index.
type sepEnt struct {
	sep, first abbr
	h          BlockHandle
}

// abbr is 16 bytes of a key as two big-endian integers, zero-padded:
// comparing hi, then lo, orders them as the bytes would.
type abbr struct{ hi, lo uint64 }

func newSepSearch(index []indexEntry) sepSearch {
	if len(index) == 0 {
		return sepSearch{}
	}
	// Sorted keys: what the first and the last but one share, all but the
	// last share. The last separator is usually no key of the table but a
	// short key above its largest (the writer's successor: 0x03 for a
	// table of keys that start 0x02), which shares nothing with the
	// others; taking it into the prefix would leave none, and leave
	// interpolate's ends a whole key space apart, so that every guess
	// lands at the start.
	first, ref := base.UserKey(index[0].sep), base.UserKey(index[max(len(index)-2, 0)].sep)
	n := 0
	for n < len(first) && n < len(ref) && first[n] == ref[n] {
		n++
	}
	s := sepSearch{prefix: first[:n:n], ents: make([]sepEnt, len(index)), firstsOK: true}
	s.tail = !bytes.HasPrefix(base.UserKey(index[len(index)-1].sep), s.prefix)
	for i := range index {
		e := &s.ents[i]
		e.h = index[i].h
		if s.tail && i == len(index)-1 {
			// Above every key with the prefix, as the greatest
			// abbreviation is at least any other.
			e.sep = abbr{^uint64(0), ^uint64(0)}
		} else {
			e.sep = abbrev(base.UserKey(index[i].sep)[n:])
		}
		if f := index[i].first; base.Valid(f) && bytes.HasPrefix(base.UserKey(f), s.prefix) {
			e.first = abbrev(base.UserKey(f)[n:])
		} else {
			s.firstsOK = false
		}
	}
	s.lowest, s.highest = s.ents[0].sep.hi, s.ents[s.prefixed()-1].sep.hi
	return s
}

// prefixed returns the number of separators that have the prefix: all
// but the tail.
func (s *sepSearch) prefixed() int {
	if s.tail {
		return len(s.ents) - 1
	}
	return len(s.ents)
}

// cmpFirst compares the user key of block i's first key with ukey, as
// bytes.Compare does, from the abbreviations when they differ: a range's
// end is checked against the blocks it may reach without reading their
// first keys, a cache miss each in a cold index.
func (s *sepSearch) cmpFirst(index []indexEntry, i int, ukey []byte) int {
	p := s.prefix
	if s.firstsOK && len(ukey) >= len(p) && bytes.Equal(ukey[:len(p)], p) {
		a, ka := s.ents[i].first, abbrev(ukey[len(p):])
		switch {
		case a.hi != ka.hi:
			return cmp.Compare(a.hi, ka.hi)
		case a.lo != ka.lo:
			return cmp.Compare(a.lo, ka.lo)
		}
	}
	return bytes.Compare(base.UserKey(index[i].first), ukey)
}

// cmpSep compares the user key of block i's separator with ukey, as
// bytes.Compare does, from the abbreviations when they differ: a scan
// asks it of every block it enters (is all of it below the bound?), and
// the separator's bytes and index entry are a cache miss apiece there.
func (s *sepSearch) cmpSep(index []indexEntry, i int, ukey []byte) int {
	p := s.prefix
	if i < s.prefixed() && len(ukey) >= len(p) && bytes.Equal(ukey[:len(p)], p) {
		a, ka := s.ents[i].sep, abbrev(ukey[len(p):])
		switch {
		case a.hi != ka.hi:
			return cmp.Compare(a.hi, ka.hi)
		case a.lo != ka.lo:
			return cmp.Compare(a.lo, ka.lo)
		}
	}
	return bytes.Compare(base.UserKey(index[i].sep), ukey)
}

// abbrev returns the first 16 bytes of b, b padded with zeros when shorter.
func abbrev(b []byte) abbr {
	if len(b) >= 16 {
		return abbr{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
	}
	var buf [16]byte
	copy(buf[:], b)
	return abbr{binary.BigEndian.Uint64(buf[:]), binary.BigEndian.Uint64(buf[8:])}
}

// search returns the position of the first entry of index (the one s was
// built from) whose separator is >= key, or > key when key has kind
// base.KindMax (see Reader.seekIndex).
func (s *sepSearch) search(index []indexEntry, key []byte) int {
	ukey := base.UserKey(key)
	p := s.prefix
	skipEqual := base.KindOfKey(key) == base.KindMax
	if len(ukey) < len(p) || !bytes.Equal(ukey[:len(p)], p) {
		// key lies before every separator (it sorts below the prefix, or
		// is a proper prefix of it) or after every prefixed one.
		if bytes.Compare(ukey[:min(len(ukey), len(p))], p) <= 0 {
			return 0
		}
		if s.tail && !sepBelow(index[len(index)-1].sep, key, skipEqual) {
			return len(index) - 1
		}
		return len(index)
	}
	ka := abbrev(ukey[len(p):])
	// below reports whether separator m sorts before key.
	below := func(m int) bool {
		switch a := s.ents[m].sep; {
		case a.hi != ka.hi:
			return a.hi < ka.hi
		case a.lo != ka.lo:
			return a.lo < ka.lo
		}
		return sepBelow(index[m].sep, key, skipEqual)
	}
	// Every separator before lo is below key, none from hi on (the tail,
	// if any, is above every key with the prefix).
	lo, hi := 0, s.prefixed()
	lo, hi = s.interpolate(ka, lo, hi, below)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if below(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// interpolationHalf is the number of entries each side of a guess that
// interpolate probes: evenly spread keys land within one, and each entry
// is most of a cache line.
const interpolationHalf = 2

// interpolationGuess returns where in [lo, hi) a key whose abbreviation's
// high word is k lies, if the high words of the window's ends, a and b,
// place it (ok): by its value between them.
func interpolationGuess(k uint64, lo, hi int, a, b uint64) (g int, ok bool) {
	if a >= b || k < a || k > b {
		return 0, false
	}
	return lo + int(float64(k-a)/float64(b-a)*float64(hi-1-lo)), true
}

// appendProbes appends to dst the addresses of the entries that a search
// for ukey reads first (the window of interpolate's first round, or the
// binary search's first probe), for TouchProbes.
func (s *sepSearch) appendProbes(dst []*uint64, ukey []byte) []*uint64 {
	p, n := s.prefix, s.prefixed()
	if n == 0 || len(ukey) < len(p) || !bytes.Equal(ukey[:len(p)], p) {
		return dst // the search reads no entry
	}
	if interpolationRounds > 0 && n > 4*interpolationHalf {
		if g, ok := interpolationGuess(abbrev(ukey[len(p):]).hi, 0, n, s.lowest, s.highest); ok {
			for i := max(g-interpolationHalf, 0); i <= min(g+interpolationHalf, n-1); i++ {
				dst = append(dst, &s.ents[i].sep.hi)
			}
			return dst
		}
	}
	return append(dst, &s.ents[n/2].sep.hi)
}

// interpolationRounds bounds the rounds of interpolate: each costs two
// probes, so a table whose keys defeat it pays at most a few probes more
// than a binary search. A variable so that benchmarks can turn it off.
var interpolationRounds = 2

// interpolate narrows [lo, hi), the positions where a search for a key
// abbreviated ka may end, by guessing the position from the key's value
// between the window's ends, as one looks up a word in a dictionary. Keys
// spread about evenly (integer keys, hashes, random strings) land within a
// few entries of the guess, and a window of two probes around it then
// holds the answer: the binary search that follows stays within a cache
// line or two instead of touching a line per halving of the whole index,
// each one a cache miss in a cold index. A guess that misses still
// narrows the window to one side of it.
func (s *sepSearch) interpolate(ka abbr, lo, hi int, below func(int) bool) (int, int) {
	for range interpolationRounds {
		if hi-lo <= 4*interpolationHalf {
			break
		}
		a, b := s.lowest, s.highest
		if lo > 0 {
			a = s.ents[lo].sep.hi
		}
		if hi < len(s.ents) {
			b = s.ents[hi-1].sep.hi
		}
		g, ok := interpolationGuess(ka.hi, lo, hi, a, b)
		if !ok {
			break
		}
		l, h := max(lo, g-interpolationHalf), min(hi-1, g+interpolationHalf)
		if !below(l) {
			hi = l
			continue
		}
		lo = l + 1
		if below(h) {
			lo = h + 1
			continue
		}
		hi = h
		break
	}
	return lo, hi
}

// above reports whether the user key of separator j, which a search for
// ukey returned (so it is at least ukey), is greater than ukey, as far as
// the prefix and the abbreviations tell: false when they cannot, or when
// there is no separator j.
func (s *sepSearch) above(j int, ukey []byte) bool {
	if j >= len(s.ents) {
		return false
	}
	p := s.prefix
	if len(ukey) < len(p) || !bytes.Equal(ukey[:len(p)], p) {
		// Every separator but the tail has the prefix and ukey has not;
		// the tail may equal ukey.
		return !s.tail || j < len(s.ents)-1
	}
	return s.ents[j].sep != abbrev(ukey[len(p):])
}

// atOrPast reports whether the user key of separator i is at least ukey,
// as far as the prefix and the abbreviations tell: false when they cannot,
// or when it is not. Every key of block i+1 is above separator i, so a
// range ending at ukey needs no block past i when it reports true.
func (s *sepSearch) atOrPast(i int, ukey []byte) bool {
	p := s.prefix
	if len(ukey) < len(p) || !bytes.Equal(ukey[:len(p)], p) {
		// ukey sorts below every separator or above every prefixed one
		// (the tail, if i is it, may or may not be at least ukey).
		return bytes.Compare(ukey[:min(len(ukey), len(p))], p) <= 0
	}
	// abbrev keeps order loosely: a greater abbreviation means a key at
	// least as great.
	a, ka := s.ents[i].sep, abbrev(ukey[len(p):])
	return a.hi > ka.hi || a.hi == ka.hi && a.lo > ka.lo
}

// sepBelow reports whether a search for key (skipEqual: one of kind
// base.KindMax) passes the block whose separator is sep.
func sepBelow(sep, key []byte, skipEqual bool) bool {
	c := base.Compare(sep, key)
	return c < 0 || c == 0 && skipEqual
}

// advance returns the position search would return for key, given a
// position i at or before it: usually i itself or the next one.
func advance(index []indexEntry, i int, key []byte) int {
	skipEqual := base.KindOfKey(key) == base.KindMax
	for i < len(index) && sepBelow(index[i].sep, key, skipEqual) {
		i++
	}
	return i
}
