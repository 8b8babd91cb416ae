package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// seekIndexPlain is the binary search sepSearch replaces.
func seekIndexPlain(index []indexEntry, key []byte) int {
	skipEqual := base.KindOfKey(key) == base.KindMax
	return sortSearch(len(index), func(m int) bool {
		c := base.Compare(index[m].sep, key)
		return !(c < 0 || c == 0 && skipEqual)
	})
}

func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// TestSepSearch compares sepSearch with a plain binary search over random
// separators that share prefixes of every length, with user keys that are
// prefixes of one another and bytes 0x00 and 0xff (which zero padding and
// the prefix check must not confuse), and search keys of every kind.
func TestSepSearch(t *testing.T) {
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}
	randomUser := func(rng *rand.Rand, prefix []byte) []byte {
		k := slices.Clone(prefix[:rng.IntN(len(prefix)+1)])
		for range rng.IntN(30) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		return k
	}
	aboves, atOrPasts, unsure := 0, 0, 0
	for seed := range 500 {
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		prefix := make([]byte, rng.IntN(20))
		for i := range prefix {
			prefix[i] = alphabet[rng.IntN(len(alphabet))]
		}
		var keys [][]byte
		for range 1 + rng.IntN(60) {
			uk := randomUser(rng, prefix)
			if rng.IntN(3) > 0 {
				uk = append(slices.Clone(prefix), uk...) // most share the prefix
			}
			keys = append(keys, base.AppendKey(nil, uk, base.SeqNum(rng.IntN(4)), base.KindSet))
		}
		slices.SortFunc(keys, base.Compare)
		keys = slices.CompactFunc(keys, func(a, b []byte) bool { return base.Compare(a, b) == 0 })
		index := make([]indexEntry, len(keys))
		for i, k := range keys {
			index[i].sep = k
			index[i].first = k // a one-entry block, for cmpFirst
		}
		s := newSepSearch(index)
		for range 200 {
			var key []byte
			uk := randomUser(rng, prefix)
			if rng.IntN(2) == 0 {
				uk = append(slices.Clone(prefix), uk...)
			}
			switch rng.IntN(4) {
			case 0:
				key = base.MakeSearchKey(nil, uk, base.SeqNumMax)
			case 1:
				key = slices.Clone(keys[rng.IntN(len(keys))]) // a separator itself
			case 2:
				key = base.AppendKey(nil, base.UserKey(keys[rng.IntN(len(keys))]), base.SeqNum(rng.IntN(5)), base.KindSet)
			default:
				key = base.AppendKey(nil, uk, base.SeqNum(rng.IntN(5)), base.KindDelete)
			}
			require.Equal(t, seekIndexPlain(index, key), s.search(index, key), "seed %d key %s", seed, base.FormatKey(key))

			// above: only ever true when separator j's user key is past
			// uk, so a seek to any version of uk stops at j too.
			uk = base.UserKey(key)
			j := s.search(index, base.MakeSearchKey(nil, uk, base.SeqNumMax))
			if s.above(j, uk) {
				aboves++
				require.Positive(t, bytes.Compare(base.UserKey(index[j].sep), uk), "seed %d key %q", seed, uk)
				for seq := range base.SeqNum(5) {
					require.Equal(t, j, s.search(index, base.AppendKey(nil, uk, seq, base.KindSet)))
				}
			}

			i := rng.IntN(len(index))
			require.Equal(t, bytes.Compare(base.UserKey(index[i].first), uk), s.cmpFirst(index, i, uk), "seed %d block %d key %q", seed, i, uk)
			require.Equal(t, bytes.Compare(base.UserKey(index[i].sep), uk), s.cmpSep(index, i, uk), "seed %d sep %d key %q", seed, i, uk)

			// atOrPast: only ever true when separator i's user key is
			// at least uk.
			if s.atOrPast(i, uk) {
				atOrPasts++
				require.GreaterOrEqual(t, bytes.Compare(base.UserKey(index[i].sep), uk), 0, "seed %d sep %d key %q", seed, i, uk)
			} else if bytes.Compare(base.UserKey(index[i].sep), uk) >= 0 {
				unsure++
			}
		}
	}
	require.Greater(t, aboves, 1000, "above decides most seeks")
	// These keys are made to confuse abbreviations (short, zero bytes,
	// equal to separators), so atOrPast is often unsure; it must still
	// decide a good share.
	require.Greater(t, atOrPasts, unsure/4, "atOrPast decides separators at or past a key")
	var empty sepSearch
	require.Equal(t, 0, empty.search(nil, base.MakeSearchKey(nil, []byte("k"), base.SeqNumMax)))
}

// TestSepSearchCmpSep compares cmpSep with bytes.Compare on indexes of
// blocks of several entries (first keys and separators differ), built by
// the writer's rule, with the last separator past the prefix sometimes.
func TestSepSearchCmpSep(t *testing.T) {
	alphabet := []byte{0x00, 0x01, 'a', 0xff}
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 8))
		prefix := make([]byte, rng.IntN(12))
		for i := range prefix {
			prefix[i] = alphabet[rng.IntN(len(alphabet))]
		}
		randomUser := func() []byte {
			k := slices.Clone(prefix)
			for range rng.IntN(24) {
				k = append(k, alphabet[rng.IntN(len(alphabet))])
			}
			return k
		}
		var users [][]byte
		for range 2 + rng.IntN(80) {
			users = append(users, randomUser())
		}
		slices.SortFunc(users, bytes.Compare)
		users = slices.CompactFunc(users, bytes.Equal)
		var index []indexEntry
		for i := 0; i < len(users); {
			n := min(1+rng.IntN(4), len(users)-i)
			index = append(index, indexEntry{
				first: base.AppendKey(nil, users[i], 1, base.KindSet),
				sep:   base.AppendKey(nil, users[i+n-1], 1, base.KindSet),
			})
			i += n
		}
		if rng.IntN(2) == 0 && (len(prefix) > 0 && prefix[0] != 0xff) {
			// A separator past every key, without the prefix.
			index[len(index)-1].sep = base.AppendKey(nil, []byte{prefix[0] + 1}, 0, base.KindSet)
		}
		s := newSepSearch(index)
		for range 100 {
			uk := randomUser()
			if rng.IntN(4) == 0 {
				uk = slices.Clone(base.UserKey(index[rng.IntN(len(index))].sep))
			}
			i := rng.IntN(len(index))
			require.Equal(t, bytes.Compare(base.UserKey(index[i].sep), uk), s.cmpSep(index, i, uk), "seed %d sep %d key %q", seed, i, uk)
		}
	}
}

// TestReadLimit compares readLimit with its definition, the start of the
// first block whose first user key is at or past upper, on random indexes
// whose blocks split the versions of one user key, too.
func TestReadLimit(t *testing.T) {
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		var keys [][]byte // internal keys, sorted
		for range 2 + rng.IntN(80) {
			uk := []byte{'k', byte('a' + rng.IntN(6)), byte('a' + rng.IntN(6))}
			keys = append(keys, base.AppendKey(nil, uk[:1+rng.IntN(3)], base.SeqNum(rng.IntN(3)), base.KindSet))
		}
		slices.SortFunc(keys, base.Compare)
		keys = slices.CompactFunc(keys, func(a, b []byte) bool { return base.Compare(a, b) == 0 })
		r := &Reader{}
		var off uint64
		for i := 0; i < len(keys); {
			j := min(len(keys), i+1+rng.IntN(4))
			r.index = append(r.index, indexEntry{first: keys[i], sep: keys[j-1], h: BlockHandle{Offset: off, Length: 100}})
			off += 100 + TrailerLen
			i = j
		}
		r.dataEnd = off
		r.seps = newSepSearch(r.index)
		for range 50 {
			upper := []byte{'k', byte('a' - 1 + rng.IntN(8)), byte('a' - 1 + rng.IntN(8))}
			upper = upper[:1+rng.IntN(3)]
			want := r.dataEnd
			for _, e := range r.index {
				if bytes.Compare(base.UserKey(e.first), upper) >= 0 {
					want = e.h.Offset
					break
				}
			}
			require.Equal(t, want, r.readLimit(upper), "seed %d upper %q", seed, upper)
			for i, e := range r.index {
				require.Equal(t, bytes.Compare(base.UserKey(e.first), upper), r.seps.cmpFirst(r.index, i, upper),
					"seed %d block %d upper %q", seed, i, upper)
			}
		}
		require.Equal(t, r.dataEnd, r.readLimit(nil))
	}
}

// BenchmarkSeekIndex searches the indexes of many tables of SQL-like
// integer keys (so that they are not all in the CPU's caches, as in a
// large database), with and without interpolation.
func BenchmarkSeekIndex(b *testing.B) {
	const tables, blocks = 64, 2000
	type tbl struct {
		index []indexEntry
		s     sepSearch
	}
	var ts []tbl
	for t := range tables {
		index := make([]indexEntry, blocks)
		for i := range index {
			uk := binary.BigEndian.AppendUint64([]byte{0x02, byte(t), 0x01, 0x03}, uint64(t*blocks*20+i*20+19))
			index[i].sep = base.AppendKey(nil, uk, 0, base.KindSet)
		}
		// The writer's last separator: a short successor of the largest.
		index[blocks-1].sep = base.AppendKey(nil, []byte{0x03}, 0, base.KindSet)
		ts = append(ts, tbl{index: index, s: newSepSearch(index)})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, 4096)
	for i := range keys {
		t := rng.IntN(tables)
		uk := binary.BigEndian.AppendUint64([]byte{0x02, byte(t), 0x01, 0x03}, uint64(t*blocks*20+rng.IntN(blocks*20)))
		keys[i] = base.MakeSearchKey(append([]byte{byte(t)}, uk...)[:1], uk, base.SeqNumMax)
	}
	for _, rounds := range []int{0, interpolationRounds} {
		b.Run(fmt.Sprintf("interpolation=%d", rounds), func(b *testing.B) {
			defer func(r int) { interpolationRounds = r }(interpolationRounds)
			interpolationRounds = rounds
			for i := 0; b.Loop(); i++ {
				k := keys[i%len(keys)]
				t := &ts[k[0]]
				if t.s.search(t.index, k[1:]) > blocks {
					b.Fatal("out of range")
				}
			}
		})
	}
}

// TestSepSearchInterpolation compares sepSearch with a plain binary search
// over indexes large enough to interpolate in: integer keys spread evenly,
// skewed (squared, so that guesses miss), in two clusters (rows and index
// entries of one SQL table), and with user keys repeated over several
// blocks, searched for keys inside, between, equal to and outside the
// separators.
func TestSepSearchInterpolation(t *testing.T) {
	for _, shape := range []string{"even", "squared", "clusters", "versions", "successor"} {
		for seed := range 20 {
			rng := rand.New(rand.NewPCG(uint64(seed), 9))
			n := 20 + rng.IntN(3000)
			userKey := func(v uint64) []byte {
				return binary.BigEndian.AppendUint64([]byte{0x02, 0x07, 0x01, 0x03}, v)
			}
			var keys [][]byte
			for i := range n {
				v := uint64(i) * 37
				seq := base.SeqNum(0)
				switch shape {
				case "squared":
					v = uint64(i) * uint64(i)
				case "clusters":
					if i > n/2 {
						v += 1 << 50
					}
				case "versions":
					v = uint64(i/4) * 37
					seq = base.SeqNum(10 - i%4)
				}
				keys = append(keys, base.AppendKey(nil, userKey(v), seq, base.KindSet))
			}
			index := make([]indexEntry, len(keys))
			for i, k := range keys {
				index[i].sep = k
			}
			top := base.UserKey(keys[len(keys)-1])
			if shape == "successor" {
				// As the writer ends a table: the last separator is a
				// short key above the largest, sharing no prefix.
				index[len(index)-1].sep = base.AppendKey(nil, []byte{0x03}, 0, base.KindSet)
				top = base.UserKey(keys[len(keys)-2])
			}
			s := newSepSearch(index)
			last := binary.BigEndian.Uint64(top[len(top)-8:])
			for range 300 {
				var key []byte
				switch rng.IntN(3) {
				case 0:
					key = base.MakeSearchKey(nil, userKey(rng.Uint64N(last+100)), base.SeqNumMax)
				case 1:
					key = slices.Clone(index[rng.IntN(len(index))].sep)
				default:
					uk := base.UserKey(index[rng.IntN(len(index))].sep)
					key = base.AppendKey(nil, uk, base.SeqNum(rng.IntN(12)), base.KindMax)
				}
				require.Equal(t, seekIndexPlain(index, key), s.search(index, key), "%s seed %d key %s", shape, seed, base.FormatKey(key))
			}
			if (shape == "even" || shape == "successor") && n > 100 {
				// Evenly spread keys: the first guess leaves a window
				// of a few entries for the binary search.
				key := base.MakeSearchKey(nil, userKey(rng.Uint64N(last)), base.SeqNumMax)
				ka := abbrev(base.UserKey(key)[len(s.prefix):])
				lo, hi := s.interpolate(ka, 0, s.prefixed(), func(m int) bool { return base.Compare(index[m].sep, key) < 0 })
				require.LessOrEqual(t, hi-lo, 4, "seed %d: window [%d, %d) of %d", seed, lo, hi, n)
				// The probes a prepare touches first are the entries
				// around the guess, which hold the answer.
				probes := s.appendProbes(nil, base.UserKey(key))
				require.Len(t, probes, 2*interpolationHalf+1)
				first := probeIndex(t, s, probes[0])
				for k, p := range probes {
					require.Equal(t, first+k, probeIndex(t, s, p), "seed %d: probes not consecutive", seed)
				}
				got := s.search(index, key)
				require.True(t, got >= first && got <= first+len(probes), "seed %d: search found %d outside probes [%d, %d]", seed, got, first, first+len(probes)-1)
			}
			// A key outside the prefix reads no entry.
			require.Empty(t, s.appendProbes(nil, []byte{0x01}))
		}
	}
	// An index of too few entries to interpolate is probed at its middle,
	// where the binary search starts.
	var index []indexEntry
	for i := range 5 {
		index = append(index, indexEntry{sep: base.AppendKey(nil, []byte{0x05, byte(i)}, 1, base.KindSet)})
	}
	s := newSepSearch(index)
	require.Equal(t, []*uint64{&s.ents[2].sep.hi}, s.appendProbes(nil, []byte{0x05, 0x03}))
}

// probeIndex returns the position in s.ents of the entry whose separator's
// high word p addresses.
func probeIndex(t *testing.T, s sepSearch, p *uint64) int {
	t.Helper()
	for i := range s.ents {
		if &s.ents[i].sep.hi == p {
			return i
		}
	}
	t.Fatalf("probe %p is no entry's", p)
	return -1
}

// TestSepSearchWriterTables: on tables the writer makes (its separators,
// shortened, and its last one a successor of the largest key), from SQL-like
// keys (a table and index prefix, then a big-endian integer), searches
// interpolate to a window of a few entries. Synthetic indexes once hid that
// the writer's last separator left no common prefix, which made every
// search a full binary search after two wasted probes.
func TestSepSearchWriterTables(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start uint64
		step  uint64
	}{
		{"ids from 1", 1, 1},
		{"ids in the middle", 1 << 20, 1},
		{"sparse ids", 1000, 37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var es []entry
			for i := range uint64(20000) {
				uk := binary.BigEndian.AppendUint64([]byte{0x02, 0x01, 0x01, 0x08}, (tc.start+i*tc.step)|1<<63)
				es = append(es, entry{base.AppendKey(nil, uk, 5, base.KindSet), bytes.Repeat([]byte{'v'}, 150)})
			}
			r, err := openBytes(buildTable(t, es, nil, WriterOptions{BlockSize: 4096}), ReaderOptions{})
			require.NoError(t, err)
			defer r.Close()
			s := &r.seps
			require.Greater(t, len(r.index), 500)
			narrow := 0
			for i := 0; i < len(es); i += 13 {
				key := base.MakeSearchKey(nil, base.UserKey(es[i].k), base.SeqNumMax)
				require.Equal(t, seekIndexPlain(r.index, key), s.search(r.index, key))
				ka := abbrev(base.UserKey(key)[len(s.prefix):])
				lo, hi := s.interpolate(ka, 0, s.prefixed(), func(m int) bool { return base.Compare(r.index[m].sep, key) < 0 })
				if hi-lo <= 4 {
					narrow++
				}
			}
			searches := (len(es) + 12) / 13
			require.Greater(t, narrow, searches*95/100, "searches that interpolate to a window of at most 4, of %d", searches)
		})
	}
}
