package table

import (
	"bytes"
	"errors"
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

// checkIter drives it and a model of the same entries through the same
// random moves and requires the same answers.
func checkIter(t *testing.T, rng *rand.Rand, it *Iter, m *model, all []entry, steps int) {
	t.Helper()
	var trace []string
	check := func(op string, got *base.KV, want *entry) {
		trace = append(trace, fmt.Sprintf("%s -> %s", op, fmtKV(got)))
		if len(trace) > 12 {
			trace = trace[1:]
		}
		require.NoError(t, it.Error(), "after %v", trace)
		if want == nil {
			require.Nil(t, got, "want nil; trace %v", trace)
			return
		}
		require.NotNil(t, got, "want %s; trace %v", fmtEntry(want), trace)
		require.Equal(t, want.k, got.K, "want %s; trace %v", fmtEntry(want), trace)
		require.True(t, bytes.Equal(want.v, got.V), "want %s; trace %v", fmtEntry(want), trace)
	}
	for range steps {
		switch op := rng.IntN(10); op {
		case 0:
			check("First", it.First(), m.first())
		case 1:
			check("Last", it.Last(), m.last())
		case 2:
			k := randomSearchKey(rng, all)
			check("SeekGE "+base.FormatKey(k), it.SeekGE(k), m.seekGE(k))
		case 3:
			k := randomSearchKey(rng, all)
			check("SeekLT "+base.FormatKey(k), it.SeekLT(k), m.seekLT(k))
		case 4, 5, 6:
			for range 1 + rng.IntN(20) {
				check("Next", it.Next(), m.next())
			}
		default:
			for range 1 + rng.IntN(20) {
				check("Prev", it.Prev(), m.prev())
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	n, steps := 1500, 300
	if raceEnabled {
		n, steps = 400, 100 // the race detector makes every step ~20x slower
	}
	es := randomEntries(rng, n, true)
	for _, bs := range []int{1, 64, 512, 4096, 64 << 10} {
		for _, c := range []Compression{NoCompression, SnappyCompression, ZstdCompression} {
			for _, withCache := range []bool{false, true} {
				t.Run(fmt.Sprintf("block=%d/%s/cache=%t", bs, c, withCache), func(t *testing.T) {
					opts := WriterOptions{BlockSize: bs, Compression: c, RestartInterval: 1 + rng.IntN(20),
						IndexRestartInterval: 1 + rng.IntN(3), FilterPolicy: filter.Policy{Type: filter.Bloom}}
					data := buildTable(t, es, nil, opts)
					var ro ReaderOptions
					if withCache {
						ro = ReaderOptions{Cache: cache.New(32 << 10), CacheNS: 1, FileNum: 9}
					}
					r, err := openBytes(data, ro)
					require.NoError(t, err)
					defer r.Close()
					require.EqualValues(t, len(es), r.Properties().NumEntries)
					if bs == 1 {
						require.Equal(t, len(es), r.NumDataBlocks(), "one entry per block")
					}

					// A full scan in both directions.
					it := r.NewIter(IterOptions{})
					requireScan(t, it, es)
					i := len(es)
					for kv := it.Last(); kv != nil; kv = it.Prev() {
						i--
						require.Equal(t, es[i].k, kv.K)
					}
					require.Equal(t, 0, i)
					require.NoError(t, it.Close())

					// Random moves, unbounded and bounded.
					for range 4 {
						var lower, upper []byte
						if rng.IntN(3) != 0 {
							lower = base.UserKey(randomSearchKey(rng, es))
						}
						if rng.IntN(3) != 0 {
							upper = base.UserKey(randomSearchKey(rng, es))
						}
						if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
							lower, upper = upper, lower
						}
						it := r.NewIter(IterOptions{Lower: lower, Upper: upper})
						checkIter(t, rng, it, newModel(es, lower, upper), es, steps)
						require.NoError(t, it.Close())
					}
					if withCache {
						require.Zero(t, ro.Cache.Pinned(), "iterators released their blocks")
					}
				})
			}
		}
	}
}

func TestEmptyTable(t *testing.T) {
	for _, p := range []filter.Policy{{}, {Type: filter.Ribbon}} {
		data := buildTable(t, nil, nil, WriterOptions{FilterPolicy: p})
		r, err := openBytes(data, ReaderOptions{})
		require.NoError(t, err)
		it := r.NewIter(IterOptions{})
		require.Nil(t, it.First())
		require.Nil(t, it.Last())
		require.Nil(t, it.SeekGE(ikey("a", 1, base.KindSet)))
		require.Nil(t, it.SeekLT(ikey("a", 1, base.KindSet)))
		require.Nil(t, it.Next())
		require.Nil(t, it.Prev())
		require.NoError(t, it.Close())
		_, _, _, found, err := r.Get([]byte("a"), 10, nil, nil)
		require.NoError(t, err)
		require.False(t, found)
		require.False(t, r.MayContain([]byte("a")))
		require.Zero(t, r.DataEnd())
		require.Empty(t, r.BlocksInRange(nil, nil, nil))
		p := r.Properties()
		require.Nil(t, p.Smallest)
		require.Nil(t, p.Largest)
		require.NoError(t, r.Close())
	}
}

func TestGetSnapshots(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	es := randomEntries(rng, 3000, false)
	for _, tc := range []struct {
		bs  int
		pol filter.Policy
	}{{64, filter.Policy{}}, {256, filter.Policy{Type: filter.Bloom}}, {4096, filter.Policy{Type: filter.Ribbon}}} {
		t.Run(fmt.Sprintf("block=%d/%s", tc.bs, tc.pol.Type), func(t *testing.T) {
			data := buildTable(t, es, nil, WriterOptions{BlockSize: tc.bs, FilterPolicy: tc.pol, Compression: SnappyCompression})
			st := &stats.Counters{}
			r, err := openBytes(data, ReaderOptions{Cache: cache.New(64 << 10), Stats: st})
			require.NoError(t, err)
			defer r.Close()
			var ukeys [][]byte
			for _, e := range es {
				ukeys = append(ukeys, base.UserKey(e.k))
			}
			for range 200 {
				ukeys = append(ukeys, base.UserKey(randomSearchKey(rng, nil)))
			}
			for _, u := range ukeys {
				for _, seq := range []base.SeqNum{0, 1, 250, 500, 750, 1000, base.SeqNumMax} {
					want := getTruth(es, u, seq)
					v, kind, _, found, err := r.Get(u, seq, []byte("pre"), nil)
					require.NoError(t, err)
					if want == nil {
						require.False(t, found, "Get(%q, %d)", u, seq)
						require.Equal(t, []byte("pre"), v)
						continue
					}
					require.True(t, found, "Get(%q, %d): want %s", u, seq, fmtEntry(want))
					require.Equal(t, base.KindOfKey(want.k), kind)
					require.True(t, bytes.Equal(append([]byte("pre"), want.v...), v))
				}
			}
			if tc.pol.Type != filter.None {
				require.Positive(t, st.Get(stats.FilterChecked))
				require.Positive(t, st.Get(stats.FilterUseful), "absent keys are filtered out")
				require.Positive(t, st.Get(stats.FilterTruePositive))
			}
		})
	}
}

func TestGetVersionsAcrossBlocks(t *testing.T) {
	// Many versions of one key spill over several one-entry blocks; Get at
	// each snapshot must find the right one, including in a later block.
	var es []entry
	for seq := base.SeqNum(100); seq >= 10; seq -= 10 {
		es = append(es, entry{ikey("k", seq, base.KindSet), []byte(fmt.Sprint("v", seq))})
	}
	es = append(es, entry{ikey("l", 5, base.KindDelete), nil})
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 1})
	r, err := openBytes(data, ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	for seq := base.SeqNum(0); seq <= 110; seq++ {
		want := getTruth(es, []byte("k"), seq)
		v, _, _, found, err := r.Get([]byte("k"), seq, nil, nil)
		require.NoError(t, err)
		require.Equal(t, want != nil, found, "seq %d", seq)
		if want != nil {
			require.Equal(t, want.v, v)
		}
	}
	_, kind, _, found, err := r.Get([]byte("l"), 9, nil, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, base.KindDelete, kind)
}

func TestRangeDeletes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var ts []Tombstone
	for range 50 {
		a, b := []byte{byte('a' + rng.IntN(20))}, []byte{byte('a' + rng.IntN(20)), 'z'}
		if bytes.Compare(a, b) >= 0 {
			a, b = b, a
		}
		if bytes.Equal(a, b) {
			continue
		}
		ts = append(ts, Tombstone{Start: a, End: b, Seq: base.SeqNum(rng.IntN(100))})
	}
	es := []entry{{ikey("m", 7, base.KindSet), []byte("v")}}
	md := writeTable(t, vfs.NewMem(), "x", es, ts, WriterOptions{})
	require.EqualValues(t, len(ts), md.NumRangeDeletions)

	data := buildTable(t, es, ts, WriterOptions{})
	r, err := openBytes(data, ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	want := slices.Clone(ts)
	slices.SortFunc(want, compareTombstones)
	require.Equal(t, want, r.RangeDeletes())

	// Bounds: the smallest start, and the sentinel of the largest end.
	p := r.Properties()
	require.Equal(t, base.AppendKey(nil, want[0].Start, want[0].Seq, base.KindRangeDelete), p.Smallest)
	maxEnd := want[0].End
	for _, tb := range want {
		if bytes.Compare(tb.End, maxEnd) > 0 {
			maxEnd = tb.End
		}
	}
	require.Equal(t, base.MakeRangeDeleteSentinel(nil, maxEnd), p.Largest)
	require.Equal(t, es[0].k, p.SmallestPoint)
	require.Equal(t, es[0].k, p.LargestPoint)

	// A table of tombstones only.
	r2, err := openBytes(buildTable(t, nil, ts[:3], WriterOptions{}), ReaderOptions{})
	require.NoError(t, err)
	require.Len(t, r2.RangeDeletes(), 3)
	require.Nil(t, r2.Properties().SmallestPoint)
	require.NotNil(t, r2.Properties().Smallest)
	require.NoError(t, r2.Close())
}

func TestWriterErrors(t *testing.T) {
	f, err := vfs.NewMem().Create("t")
	require.NoError(t, err)
	w := NewWriter(f, "t", WriterOptions{})
	require.NoError(t, w.Add(ikey("b", 5, base.KindSet), nil))
	for _, k := range [][]byte{
		ikey("b", 5, base.KindSet), // equal
		ikey("b", 6, base.KindSet), // newer version after an older one
		ikey("a", 9, base.KindSet), // smaller user key
	} {
		err := w.Add(k, nil)
		require.ErrorIs(t, err, ErrOutOfOrder)
		require.Contains(t, err.Error(), base.FormatKey(k))
		require.Contains(t, err.Error(), `"b"#5,SET`)
	}
	require.ErrorIs(t, w.Add([]byte("short"), nil), ErrInvalidKey)
	require.ErrorIs(t, w.Add(ikey("c", 1, base.KindRangeDelete), nil), ErrInvalidKey)
	require.ErrorIs(t, w.Add(ikey("c", 1, base.KindMax), nil), ErrInvalidKey)
	require.ErrorIs(t, w.AddRangeDelete([]byte("b"), []byte("a"), 1), ErrInvalidKey)
	require.ErrorIs(t, w.AddRangeDelete([]byte("b"), []byte("b"), 1), ErrInvalidKey)
	// Rejected keys leave the writer usable.
	require.NoError(t, w.Add(ikey("b", 4, base.KindSet), nil))
	_, err = w.Metadata()
	require.ErrorIs(t, err, ErrNotFinished)
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Close(), ErrClosed)
	require.ErrorIs(t, w.Add(ikey("z", 1, base.KindSet), nil), ErrClosed)
	md, err := w.Metadata()
	require.NoError(t, err)
	require.EqualValues(t, 2, md.NumEntries)
}

func TestOptionsValidate(t *testing.T) {
	require.NoError(t, WriterOptions{}.Validate())
	err := WriterOptions{BlockSize: -1, BlockSizeDeviation: 101, RestartInterval: -3, Compression: 9, WriteBufferSize: 10}.Validate()
	require.Error(t, err)
	for _, field := range []string{"BlockSize", "BlockSizeDeviation", "RestartInterval", "Compression", "WriteBufferSize"} {
		require.Contains(t, err.Error(), "WriterOptions."+field+" =")
	}
	d := WriterOptions{}.EnsureDefaults()
	require.Equal(t, DefaultBlockSize, d.BlockSize)
	require.Equal(t, DefaultRestartInterval, d.RestartInterval)

	// Invalid options surface from Add and Close.
	f, _ := vfs.NewMem().Create("t")
	w := NewWriter(f, "t", WriterOptions{BlockSize: -1})
	require.Error(t, w.Add(ikey("a", 1, base.KindSet), nil))
	require.Error(t, w.Close())
}

func TestParseCompression(t *testing.T) {
	for _, c := range []Compression{NoCompression, SnappyCompression, ZstdCompression} {
		got, err := ParseCompression(c.String())
		require.NoError(t, err)
		require.Equal(t, c, got)
	}
	_, err := ParseCompression("lz4")
	require.Error(t, err)
}

func TestProperties(t *testing.T) {
	es := []entry{
		{ikey("a", 3, base.KindSet), []byte("xx")},
		{ikey("a", 2, base.KindDelete), nil},
		{ikey("b", 9, base.KindSet), []byte("yyy")},
	}
	ts := []Tombstone{{Start: []byte("0"), End: []byte("1"), Seq: 1}}
	md := writeTable(t, vfs.NewMem(), "x", es, ts, WriterOptions{Compression: ZstdCompression, FilterPolicy: filter.Policy{Type: filter.Ribbon, BitsPerKey: 12}})
	r, err := openBytes(buildTable(t, es, ts, WriterOptions{Compression: ZstdCompression, FilterPolicy: filter.Policy{Type: filter.Ribbon, BitsPerKey: 12}}), ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	p := r.Properties()
	require.Equal(t, md.Properties, *p)
	require.EqualValues(t, 3, p.NumEntries)
	require.EqualValues(t, 1, p.NumDeletions)
	require.EqualValues(t, 1, p.NumRangeDeletions)
	require.EqualValues(t, 3*9, p.RawKeySize)
	require.EqualValues(t, 5, p.RawValueSize)
	require.EqualValues(t, 1, p.NumDataBlocks)
	require.Equal(t, r.DataEnd(), p.DataSize)
	require.Positive(t, p.IndexSize)
	require.Positive(t, p.FilterSize)
	require.Equal(t, ZstdCompression, p.Compression)
	require.Equal(t, "ribbon(bits=12)", p.FilterPolicy)
	require.Equal(t, FormatVersion, p.FormatVersion)
	require.Equal(t, base.SeqNum(1), p.SmallestSeq)
	require.Equal(t, base.SeqNum(9), p.LargestSeq)
	require.Equal(t, ikey("0", 1, base.KindRangeDelete), p.Smallest)
	require.Equal(t, ikey("b", 9, base.KindSet), p.Largest)
	require.Equal(t, md.Size, r.Size())
}

// TestFileNumber: a table records the file number it was written for, and a
// reader opened for another number refuses it as corrupt; tables without
// one, and readers without one, are not checked.
func TestFileNumber(t *testing.T) {
	es := []entry{{ikey("a", 1, base.KindSet), []byte("x")}}
	numbered := buildTable(t, es, nil, WriterOptions{FileNum: 7})
	plain := buildTable(t, es, nil, WriterOptions{})
	for _, tc := range []struct {
		name    string
		data    []byte
		open    uint64
		want    uint64
		corrupt bool
	}{
		{"same number", numbered, 7, 7, false},
		{"reader without a number", numbered, 0, 7, false},
		{"table without a number", plain, 9, 0, false},
		{"another number", numbered, 8, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := openBytes(tc.data, ReaderOptions{FileNum: tc.open})
			if tc.corrupt {
				require.True(t, base.IsCorruption(err), "%v", err)
				require.Contains(t, err.Error(), "holds table 000007, not table 000008")
				return
			}
			require.NoError(t, err)
			defer r.Close()
			require.Equal(t, tc.want, r.Properties().FileNum)
		})
	}
}

func TestPropertiesDecode(t *testing.T) {
	p := Properties{NumEntries: 1, SmallestPoint: ikey("a", 1, 1), LargestPoint: ikey("a", 1, 1),
		Smallest: ikey("a", 1, 1), Largest: ikey("a", 1, 1), FilterPolicy: "none", FormatVersion: 1, FileNum: 12}
	var bw blockWriter
	bw.init(1)
	block := slices.Clone(p.encode(&bw))
	got, err := decodeProperties(block, "f", 0)
	require.NoError(t, err)
	require.Equal(t, p, *got)

	// Unknown names are skipped; missing required ones are corruption.
	bw.reset()
	var extra blockWriter
	extra.init(1)
	require.NoError(t, walkBlock(block, "f", 0, func(k, v []byte) error {
		if string(k) != propNumEntries {
			extra.add(k, v)
		}
		if string(k) == propLargestPoint {
			extra.add([]byte("strata.m.unknown"), []byte("?"))
		}
		return nil
	}))
	_, err = decodeProperties(extra.finish(), "f", 100)
	require.True(t, base.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), propNumEntries)
	require.Contains(t, err.Error(), "offset 100")
}

func TestStatsAndBlockReuse(t *testing.T) {
	var es []entry
	for i := range 1000 {
		es = append(es, entry{ikey(fmt.Sprintf("key%05d", i), 1, base.KindSet), bytes.Repeat([]byte{'v'}, 50)})
	}
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 1024, FilterPolicy: filter.Policy{Type: filter.Bloom}})
	db := &stats.Counters{}
	c := cache.New(1 << 20)
	r, err := openBytes(data, ReaderOptions{Cache: c, CacheNS: 3, FileNum: 4, Stats: db})
	require.NoError(t, err)
	defer r.Close()
	require.Positive(t, db.Get(stats.FileReadCount), "opening reads the tail")
	require.LessOrEqual(t, db.Get(stats.FileReadCount), int64(2))
	db.Reset()

	// Without readahead every block is one read.
	op := &stats.Counters{}
	it := r.NewIter(IterOptions{Stats: op, MaxAutoReadahead: -1})
	n := 0
	for kv := it.First(); kv != nil; kv = it.Next() {
		n++
	}
	require.Equal(t, 1000, n)
	blocks := int64(r.NumDataBlocks())
	require.Equal(t, blocks, op.Get(stats.BlockCacheMiss))
	require.Equal(t, blocks, op.Get(stats.BlockCacheAdd))
	require.Equal(t, blocks, op.Get(stats.FileReadCount))
	require.Equal(t, int64(r.DataEnd()), op.Get(stats.FileReadBytes))
	require.Equal(t, op.Snapshot(), db.Snapshot(), "per-op and database-wide counters agree")

	// Seeks that land in the block the iterator holds take no cache lookup.
	op.Reset()
	it.SeekGE(ikey("key00100", 1, base.KindSet))
	hits := op.Get(stats.BlockCacheHit)
	require.EqualValues(t, 1, hits)
	for _, k := range []string{"key00101", "key00102", "key00100"} {
		kv := it.SeekGE(ikey(k, 1, base.KindSet))
		require.Equal(t, k, string(kv.UserKey()))
	}
	require.Equal(t, hits, op.Get(stats.BlockCacheHit))
	require.NoError(t, it.Close())
	require.Zero(t, c.Pinned())

	// Get: a cache hit, then a filtered-out miss with no block lookup.
	op.Reset()
	_, _, _, found, err := r.Get([]byte("key00500"), 5, nil, op)
	require.NoError(t, err)
	require.True(t, found)
	require.EqualValues(t, 1, op.Get(stats.BlockCacheHit))
	require.EqualValues(t, 1, op.Get(stats.FilterTruePositive))
	useful := 0
	for i := range 100 {
		_, _, _, found, err := r.Get(fmt.Appendf(nil, "nokey%d", i), 5, nil, op)
		require.NoError(t, err)
		require.False(t, found)
	}
	useful = int(op.Get(stats.FilterUseful))
	require.Greater(t, useful, 90)
	require.EqualValues(t, 101, op.Get(stats.FilterChecked))
	require.Zero(t, op.Get(stats.FileReadCount))

	// DontFillCache reads without inserting.
	c2 := cache.New(1 << 20)
	r2, err := openBytes(data, ReaderOptions{Cache: c2})
	require.NoError(t, err)
	it2 := r2.NewIter(IterOptions{DontFillCache: true})
	for kv := it2.First(); kv != nil; kv = it2.Next() {
	}
	require.NoError(t, it2.Close())
	require.Zero(t, c2.Usage())
	require.NoError(t, r2.Close())
}

func TestBlocksInRangeAndApproximateOffset(t *testing.T) {
	var es []entry
	for i := range 500 {
		es = append(es, entry{ikey(fmt.Sprintf("k%04d", i*2), 1, base.KindSet), bytes.Repeat([]byte{'v'}, 30)})
	}
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 512})
	r, err := openBytes(data, ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	all := r.BlocksInRange(nil, nil, nil)
	require.Len(t, all, r.NumDataBlocks())
	require.Zero(t, all[0].Offset)
	require.Equal(t, r.DataEnd(), all[len(all)-1].End())

	rng := rand.New(rand.NewPCG(4, 4))
	for range 300 {
		a, b := rng.IntN(1100), rng.IntN(1100)
		if a > b {
			a, b = b, a
		}
		lower, upper := fmt.Appendf(nil, "k%04d", a), fmt.Appendf(nil, "k%04d", b)
		got := r.BlocksInRange(lower, upper, []BlockHandle{})
		// The truth: blocks holding a key in [lower, upper), found by a scan.
		want := []BlockHandle{}
		it := r.NewIter(IterOptions{Lower: lower, Upper: upper})
		for kv := it.First(); kv != nil; kv = it.Next() {
			if h := r.index[it.idx].h; len(want) == 0 || want[len(want)-1] != h {
				want = append(want, h)
			}
		}
		require.NoError(t, it.Close())
		// BlocksInRange may add the block a range starts in when the range
		// falls between its last key and the next block's first key.
		if len(got) == len(want)+1 {
			require.Equal(t, want, got[1:], "[%s, %s)", lower, upper)
		} else {
			require.Equal(t, want, got, "[%s, %s)", lower, upper)
		}
		oa, ob := r.ApproximateOffset(lower), r.ApproximateOffset(upper)
		require.LessOrEqual(t, oa, ob)
		require.LessOrEqual(t, ob, r.DataEnd())
	}
	require.Zero(t, r.ApproximateOffset([]byte("a")))
	require.Equal(t, r.DataEnd(), r.ApproximateOffset([]byte("z")))
	// Appends to dst.
	dst := r.BlocksInRange([]byte("k0000"), []byte("k0001"), []BlockHandle{{1, 2}})
	require.Equal(t, []BlockHandle{{1, 2}, all[0]}, dst)
}

func TestReadBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	es := randomEntries(rng, 400, false)
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 256, Compression: SnappyCompression})
	for _, c := range []*cache.Cache{nil, cache.New(1 << 20)} {
		r, err := openBytes(data, ReaderOptions{Cache: c})
		require.NoError(t, err)
		var i int
		var bi BlockIter
		for _, h := range r.BlocksInRange(nil, nil, nil) {
			ref, err := r.ReadBlock(h, nil)
			require.NoError(t, err)
			require.Equal(t, c != nil, ref.Cached())
			require.NoError(t, bi.Init(ref.Data()))
			for kv := bi.First(); kv != nil; kv = bi.Next() {
				require.Equal(t, es[i].k, kv.K)
				i++
			}
			ref.Release()
		}
		require.Equal(t, len(es), i)
		_, err = r.ReadBlock(BlockHandle{Offset: r.Size(), Length: 10}, nil)
		require.Error(t, err)
		require.NoError(t, r.Close())
		_, err = r.ReadBlock(BlockHandle{Length: 10}, nil)
		require.ErrorIs(t, err, ErrClosed)
	}
}

// alignedFile demands aligned reads, as a file opened with O_DIRECT does.
type alignedFile struct {
	vfs.File
	align int
	reads int
}

func (f *alignedFile) Alignment() int { return f.align }

func (f *alignedFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads++
	if off%int64(f.align) != 0 || !vfs.IsAligned(p, f.align) {
		return 0, fmt.Errorf("unaligned read of %d bytes at %d", len(p), off)
	}
	return f.File.ReadAt(p, off)
}

func TestDirectIO(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	es := randomEntries(rng, 2000, true)
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 700, Compression: ZstdCompression})
	fs := vfs.NewMem()
	require.NoError(t, vfs.WriteFileSync(fs, "", "t", data))
	for _, c := range []*cache.Cache{nil, cache.New(64 << 10)} {
		f, err := fs.Open("t")
		require.NoError(t, err)
		af := &alignedFile{File: f, align: 512}
		r, err := NewReader(af, "t", ReaderOptions{Cache: c})
		require.NoError(t, err)
		it := r.NewIter(IterOptions{})
		checkIter(t, rng, it, newModel(es, nil, nil), es, 500)
		require.NoError(t, it.Close())
		for _, e := range es[:200] {
			v, _, _, found, err := r.Get(base.UserKey(e.k), base.SeqNumMax, nil, nil)
			require.NoError(t, err)
			require.True(t, found)
			want := getTruth(es, base.UserKey(e.k), base.SeqNumMax)
			require.True(t, bytes.Equal(want.v, v))
		}
		require.Positive(t, af.reads)
		require.NoError(t, r.Close())
	}
}

func TestClosedReader(t *testing.T) {
	data := buildTable(t, []entry{{ikey("a", 1, base.KindSet), nil}}, nil, WriterOptions{})
	r, err := openBytes(data, ReaderOptions{})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.ErrorIs(t, r.Close(), ErrClosed)
	_, _, _, _, err = r.Get([]byte("a"), 1, nil, nil)
	require.ErrorIs(t, err, ErrClosed)
	it := r.NewIter(IterOptions{})
	require.Nil(t, it.First())
	require.True(t, errors.Is(it.Error(), ErrClosed))
	require.ErrorIs(t, it.Close(), ErrClosed)
}

func TestWriterBuffersWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	es := randomEntries(rng, 5000, false)
	f, err := vfs.NewMem().Create("t")
	require.NoError(t, err)
	cf := &countingFile{File: f}
	w := NewWriter(cf, "t", WriterOptions{BlockSize: 512})
	for _, e := range es {
		require.NoError(t, w.Add(e.k, e.v))
	}
	est := w.EstimatedSize()
	require.NoError(t, w.Close())
	md, _ := w.Metadata()
	require.InDelta(t, float64(md.Size), float64(est), float64(md.Size)/5)
	require.Less(t, cf.writes, int(md.Size/(DefaultWriteBufferSize/2))+3, "few large writes")
	require.Equal(t, 1, cf.syncs)
	require.True(t, cf.closed)
}

type countingFile struct {
	vfs.File
	writes, syncs int
	closed        bool
}

func (f *countingFile) Write(p []byte) (int, error) { f.writes++; return f.File.Write(p) }
func (f *countingFile) Sync() error                 { f.syncs++; return f.File.Sync() }
func (f *countingFile) Close() error                { f.closed = true; return f.File.Close() }

// TestOpenReadsTailByPread: opening a mapped table reads its tail with
// pread, not through the mapping, whose first touches fault page by page;
// its blocks are then copied from the mapping.
func TestOpenReadsTailByPread(t *testing.T) {
	if !vfs.CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	es, _ := scanTable(t, 70) // 2,100 entries
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 4096, FilterPolicy: filter.Policy{Type: filter.Bloom}})
	f, name := openMapped(t, data)
	_, mapped := f.(vfs.Mapped)
	require.True(t, mapped)
	var c stats.Counters
	r, err := NewReader(f, name, ReaderOptions{Stats: &c})
	require.NoError(t, err)
	defer r.Close()
	require.Positive(t, c.Get(stats.FileReadCount))
	require.Zero(t, c.Get(stats.FileReadMapped), "the tail was read with pread")
	_, _, _, _, err = r.Get(base.UserKey(es[500].k), base.SeqNumMax, nil, nil)
	require.NoError(t, err)
	require.EqualValues(t, 1, c.Get(stats.FileReadMapped), "a block is copied from the mapping")
}
