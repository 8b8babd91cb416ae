package table

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// TestMultiGetMatchesGet checks MultiGet against a loop of Get on random
// tables with several versions per key and deletions, at several sequence
// numbers, with keys present, absent, duplicated and pre-resolved.
func TestMultiGetMatchesGet(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	n, batches := 2000, 200
	if raceEnabled {
		n, batches = 600, 50
	}
	es := randomEntries(rng, n, true)
	for _, ft := range []filter.Type{filter.None, filter.Bloom, filter.Ribbon} {
		for _, bs := range []int{64, 1024} {
			for _, withCache := range []bool{false, true} {
				t.Run(fmt.Sprintf("filter=%s/block=%d/cache=%t", ft, bs, withCache), func(t *testing.T) {
					data := buildTable(t, es, nil, WriterOptions{BlockSize: bs, Compression: SnappyCompression,
						FilterPolicy: filter.Policy{Type: ft}})
					var ro ReaderOptions
					if withCache {
						ro.Cache = cache.New(32 << 10)
					}
					r, err := openBytes(data, ro)
					require.NoError(t, err)
					defer r.Close()
					var arena []byte
					for range batches {
						keys := randomBatch(rng, es, 1+rng.IntN(40))
						seq := base.SeqNum(rng.IntN(1100))
						res := make([]GetResult, len(keys))
						for i := range res {
							if rng.IntN(10) == 0 {
								res[i] = GetResult{Done: true, Kind: base.KindMax, Seq: 7}
							}
						}
						var hashes []uint64
						if rng.IntN(2) == 0 {
							for _, k := range keys {
								hashes = append(hashes, filter.Hash(k))
							}
						}
						arena, err = r.MultiGet(keys, hashes, seq, res, arena[:0], nil)
						require.NoError(t, err)
						for i, k := range keys {
							if res[i].Done && res[i].Kind == base.KindMax {
								require.EqualValues(t, 7, res[i].Seq, "a pre-resolved key is left alone")
								continue
							}
							v, kind, eseq, found, err := r.Get(k, seq, nil, nil)
							require.NoError(t, err)
							require.Equal(t, found, res[i].Done, "key %q at %d", k, seq)
							if found {
								require.Equal(t, kind, res[i].Kind)
								require.Equal(t, eseq, res[i].Seq)
								require.True(t, bytes.Equal(v, res[i].Value(arena)), "key %q at %d", k, seq)
							}
						}
					}
					if withCache {
						require.Zero(t, ro.Cache.Pinned())
					}
				})
			}
		}
	}
}

// randomBatch returns n user keys near the entries, sorted, with
// duplicates; one batch in four is left unsorted.
func randomBatch(rng *rand.Rand, es []entry, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = base.UserKey(randomSearchKey(rng, es))
		if i > 0 && rng.IntN(8) == 0 {
			keys[i] = keys[i-1]
		}
	}
	if rng.IntN(4) != 0 {
		slices.SortFunc(keys, bytes.Compare)
	}
	return keys
}

// TestMultiGetBlockLookups checks that keys sharing blocks cost one cache
// lookup per distinct block, and that the filter is probed once per key.
func TestMultiGetBlockLookups(t *testing.T) {
	var es []entry
	for i := range 2000 {
		es = append(es, entry{ikey(fmt.Sprintf("key%05d", i), 1, base.KindSet), bytes.Repeat([]byte{'v'}, 40)})
	}
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 1024, FilterPolicy: filter.Policy{Type: filter.Bloom}})
	c := cache.New(1 << 20)
	r, err := openBytes(data, ReaderOptions{Cache: c})
	require.NoError(t, err)
	defer r.Close()
	for _, stride := range []int{1, 4, 16, 100} {
		var keys [][]byte
		for i := 300; i < 2000 && len(keys) < 32; i += stride {
			keys = append(keys, fmt.Appendf(nil, "key%05d", i))
		}
		keys = append(keys, []byte("key00299x")) // absent, between keys
		slices.SortFunc(keys, bytes.Compare)
		distinct := map[uint64]bool{}
		for _, k := range keys {
			if i := r.seekIndexUser(k); i < len(r.index) {
				distinct[r.index[i].h.Offset] = true
			}
		}
		for pass := range 2 { // cold, then warm
			op := &stats.Counters{}
			res := make([]GetResult, len(keys))
			arena, err := r.MultiGet(keys, nil, base.SeqNumMax, res, nil, op)
			require.NoError(t, err)
			lookups := op.Get(stats.BlockCacheHit) + op.Get(stats.BlockCacheMiss)
			require.LessOrEqual(t, lookups, int64(len(distinct)), "stride %d pass %d", stride, pass)
			require.GreaterOrEqual(t, lookups, int64(len(distinct))-1, "stride %d pass %d", stride, pass)
			if pass == 1 {
				require.Zero(t, op.Get(stats.BlockCacheMiss))
			}
			require.EqualValues(t, len(keys), op.Get(stats.FilterChecked))
			found := 0
			for i := range res {
				if res[i].Done {
					found++
					require.Equal(t, bytes.Repeat([]byte{'v'}, 40), res[i].Value(arena))
				}
			}
			require.Equal(t, len(keys)-1, found)
		}
	}
	require.Zero(t, c.Pinned())
}

// TestMultiGetAllocs checks that a warm MultiGet allocates nothing per key.
func TestMultiGetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	es := benchEntries(20_000)
	data := buildTable(t, es, nil, WriterOptions{Compression: SnappyCompression, FilterPolicy: filter.Policy{Type: filter.Bloom}})
	for _, withCache := range []bool{false, true} {
		var ro ReaderOptions
		if withCache {
			ro.Cache = cache.New(64 << 20)
		}
		r, err := openBytes(data, ro)
		require.NoError(t, err)
		it := r.NewIter(IterOptions{}) // warm the cache
		for kv := it.First(); kv != nil; kv = it.Next() {
		}
		require.NoError(t, it.Close())
		rng := rand.New(rand.NewPCG(22, 22))
		keys := make([][]byte, 32)
		hashes := make([]uint64, 32)
		res := make([]GetResult, 32)
		arena := make([]byte, 0, 64<<10)
		batch := func() {
			start := rng.IntN(len(es) - 200)
			for i := range keys {
				keys[i] = base.UserKey(es[start+i*4].k)
				hashes[i] = filter.Hash(keys[i])
			}
			clear(res)
			var err error
			arena, err = r.MultiGet(keys, hashes, base.SeqNumMax, res, arena[:0], nil)
			if err != nil || !res[31].Done {
				t.Fatal(err, res[31])
			}
		}
		for range 100 {
			batch()
		}
		require.Zero(t, testing.AllocsPerRun(200, batch), "MultiGet, cache=%t", withCache)
		require.NoError(t, r.Close())
	}
}

func TestMultiGetErrors(t *testing.T) {
	data := buildTable(t, []entry{{ikey("a", 1, base.KindSet), []byte("x")}}, nil, WriterOptions{})
	r, err := openBytes(data, ReaderOptions{})
	require.NoError(t, err)
	_, err = r.MultiGet([][]byte{[]byte("a")}, nil, 1, nil, nil, nil)
	require.ErrorIs(t, err, ErrBatchMismatch)
	_, err = r.MultiGet([][]byte{[]byte("a")}, []uint64{1, 2}, 1, make([]GetResult, 1), nil, nil)
	require.ErrorIs(t, err, ErrBatchMismatch)
	res := make([]GetResult, 1)
	arena, err := r.MultiGet([][]byte{[]byte("a")}, nil, 1, res, []byte("prefix"), nil)
	require.NoError(t, err)
	require.Equal(t, "x", string(res[0].Value(arena)))
	require.Equal(t, "prefix", string(arena[:6]), "values are appended")
	require.NoError(t, r.Close())
	_, err = r.MultiGet([][]byte{[]byte("a")}, nil, 1, res, nil, nil)
	require.ErrorIs(t, err, ErrClosed)
}

// TestLookupsBetweenBlocks looks up absent keys that fall between blocks
// (above one block's last key, below the next one's first) through a
// filter that lets many of them through: Get and MultiGet read the block
// the index search found without first checking its first key (see
// mayStartBefore), and must still find nothing.
func TestLookupsBetweenBlocks(t *testing.T) {
	var es []entry
	for i := 0; i < 2000; i += 2 {
		es = append(es, entry{k: ikey(fmt.Sprintf("k%05d", i), 1, base.KindSet), v: []byte("v")})
	}
	for _, ft := range []filter.Type{filter.None, filter.Bloom} {
		t.Run(ft.String(), func(t *testing.T) {
			data := buildTable(t, es, nil, WriterOptions{BlockSize: 64, FilterPolicy: filter.Policy{Type: ft, BitsPerKey: 1}})
			st := &stats.Counters{}
			r, err := openBytes(data, ReaderOptions{Stats: st})
			require.NoError(t, err)
			defer r.Close()
			var keys [][]byte
			for i := 1; i < 2000; i += 2 {
				keys = append(keys, fmt.Appendf(nil, "k%05d", i))
			}
			for _, k := range keys {
				_, _, _, found, err := r.Get(k, base.SeqNumMax, nil, nil)
				require.NoError(t, err)
				require.False(t, found, "%s", k)
			}
			res := make([]GetResult, len(keys))
			_, err = r.MultiGet(keys, nil, base.SeqNumMax, res, nil, nil)
			require.NoError(t, err)
			for i := range res {
				require.False(t, res[i].Done, "%s", keys[i])
			}
			if ft != filter.None {
				// The filter let keys through: the lookups read blocks.
				passed := st.Get(stats.FilterChecked) - st.Get(stats.FilterUseful)
				require.Positive(t, passed)
				require.Positive(t, st.Get(stats.BlockCacheMiss)+st.Get(stats.FileReadCount))
			}
		})
	}
}

// TestAppendGetPages: the pages given for a key are those of the block a
// lookup of it copies from the mapping (one or two, its first byte
// first); a key the filter rules out, a key past the table and a table
// whose blocks come through the cache give none.
func TestAppendGetPages(t *testing.T) {
	if !vfs.CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	es, _ := scanTable(t, 100) // 3,000 entries
	open := func(t *testing.T, c Compression) *Reader {
		data := buildTable(t, es, nil, WriterOptions{BlockSize: 4096, Compression: c, FilterPolicy: filter.Policy{Type: filter.Bloom}})
		f, name := openMapped(t, data)
		r, err := NewReader(f, name, ReaderOptions{Cache: cache.New(1 << 20)})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}
	r := open(t, NoCompression)
	for i := 0; i < len(es); i += 37 {
		ukey := base.UserKey(es[i].k)
		pages := r.AppendGetPages(nil, ukey, filter.Hash(ukey), base.SeqNumMax)
		j := r.seekIndex(base.MakeSearchKey(nil, ukey, base.SeqNumMax))
		h := r.index[j].h
		require.NotEmpty(t, pages, "key %d", i)
		require.LessOrEqual(t, len(pages), 2, "a 4 KiB block spans at most two pages")
		// The first address is the block's first byte: it holds the
		// block's first stored byte.
		raw := make([]byte, h.Length+TrailerLen)
		_, err := r.file.ReadAt(raw, int64(h.Offset))
		require.NoError(t, err)
		require.Equal(t, raw[0], *pages[0], "key %d", i)
	}
	require.Empty(t, r.AppendGetPages(nil, []byte("nokey"), filter.Hash([]byte("nokey")), base.SeqNumMax), "the filter rules it out")
	// Blocks stored compressed come through the cache: nothing to touch.
	rc := open(t, ZstdCompression)
	for range 8 { // the reader learns that its blocks are compressed
		_, _, _, _, err := rc.Get(base.UserKey(es[0].k), base.SeqNumMax, nil, nil)
		require.NoError(t, err)
	}
	ukey := base.UserKey(es[100].k)
	require.Empty(t, rc.AppendGetPages(nil, ukey, filter.Hash(ukey), base.SeqNumMax))
}
