package table

import (
	"bytes"
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
	prefix []byte // shared by every separator's user key
	abbr   []abbr // abbr[i]: 16 bytes of separator i's user key after prefix
}

// abbr is 16 bytes of a key as two big-endian integers, zero-padded:
// comparing hi, then lo, orders them as the bytes would.
type abbr struct{ hi, lo uint64 }

func newSepSearch(index []indexEntry) sepSearch {
	if len(index) == 0 {
		return sepSearch{}
	}
	// Sorted keys: what the first and last share, all share.
	first, last := base.UserKey(index[0].sep), base.UserKey(index[len(index)-1].sep)
	n := 0
	for n < len(first) && n < len(last) && first[n] == last[n] {
		n++
	}
	s := sepSearch{prefix: first[:n:n], abbr: make([]abbr, len(index))}
	for i := range index {
		s.abbr[i] = abbrev(base.UserKey(index[i].sep)[n:])
	}
	return s
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
	if len(ukey) < len(p) || !bytes.Equal(ukey[:len(p)], p) {
		// key lies before every separator (it sorts below the prefix, or
		// is a proper prefix of it) or after every one.
		if bytes.Compare(ukey[:min(len(ukey), len(p))], p) <= 0 {
			return 0
		}
		return len(index)
	}
	skipEqual := base.KindOfKey(key) == base.KindMax
	ka := abbrev(ukey[len(p):])
	lo, hi := 0, len(index)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		var below bool // separator m sorts before key
		switch a := s.abbr[m]; {
		case a.hi != ka.hi:
			below = a.hi < ka.hi
		case a.lo != ka.lo:
			below = a.lo < ka.lo
		default:
			below = sepBelow(index[m].sep, key, skipEqual)
		}
		if below {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// above reports whether the user key of separator j, which a search for
// ukey returned (so it is at least ukey), is greater than ukey, as far as
// the prefix and the abbreviations tell: false when they cannot, or when
// there is no separator j.
func (s *sepSearch) above(j int, ukey []byte) bool {
	if j >= len(s.abbr) {
		return false
	}
	p := s.prefix
	if len(ukey) < len(p) || !bytes.Equal(ukey[:len(p)], p) {
		return true // every separator has the prefix and ukey has not
	}
	return s.abbr[j] != abbrev(ukey[len(p):])
}

// atOrPast reports whether the user key of separator i is at least ukey,
// as far as the prefix and the abbreviations tell: false when they cannot,
// or when it is not. Every key of block i+1 is above separator i, so a
// range ending at ukey needs no block past i when it reports true.
func (s *sepSearch) atOrPast(i int, ukey []byte) bool {
	p := s.prefix
	if len(ukey) < len(p) || !bytes.Equal(ukey[:len(p)], p) {
		// ukey sorts below every separator or above every one.
		return bytes.Compare(ukey[:min(len(ukey), len(p))], p) <= 0
	}
	// abbrev keeps order loosely: a greater abbreviation means a key at
	// least as great.
	a, ka := s.abbr[i], abbrev(ukey[len(p):])
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
