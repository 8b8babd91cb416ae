package table

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// randomRanges returns up to n sorted, non-overlapping ranges over user keys
// near the entries: some adjacent (sharing blocks), some empty of keys, the
// last sometimes without an end.
func randomRanges(rng *rand.Rand, es []entry, n int) []ScanRange {
	var cuts [][]byte
	for range 2 * n {
		cuts = append(cuts, base.UserKey(randomSearchKey(rng, es)))
	}
	slices.SortFunc(cuts, bytes.Compare)
	cuts = slices.CompactFunc(cuts, bytes.Equal)
	var rs []ScanRange
	for i := 0; i+1 < len(cuts); i += 2 {
		r := ScanRange{Start: cuts[i], End: cuts[i+1]}
		if len(rs) > 0 && rng.IntN(3) == 0 {
			r.Start = rs[len(rs)-1].End // adjacent to the previous range
		}
		rs = append(rs, r)
	}
	if len(rs) > 0 && rng.IntN(4) == 0 {
		rs[len(rs)-1].End = nil
	}
	return rs
}

// scanRanges returns the entries a MultiScan of ranges returns, using
// separate plain iterators, one per range.
func scanRanges(t *testing.T, r *Reader, ranges []ScanRange) [][]string {
	out := make([][]string, len(ranges))
	for k, rg := range ranges {
		it := r.NewIter(IterOptions{Lower: rg.Start, Upper: rg.End, MaxAutoReadahead: -1})
		for kv := it.First(); kv != nil; kv = it.Next() {
			out[k] = append(out[k], fmtKV(kv))
		}
		require.NoError(t, it.Close())
	}
	return out
}

// iterPrepared iterates every range of p with one iterator: a seek to each
// Start, then Next to the range's end.
func iterPrepared(t *testing.T, p *PreparedScan, opts IterOptions) [][]string {
	it := p.NewIter(opts)
	out := make([][]string, len(p.Ranges()))
	for k, rg := range p.Ranges() {
		for kv := it.SeekGE(base.MakeSearchKey(nil, rg.Start, base.SeqNumMax)); kv != nil; kv = it.Next() {
			require.True(t, rg.End == nil || bytes.Compare(kv.UserKey(), rg.End) < 0)
			out[k] = append(out[k], fmtKV(kv))
		}
		require.NoError(t, it.Error())
	}
	require.NoError(t, it.Close())
	return out
}

// TestPrepareScanMatchesIters checks that a prepared scan returns what
// separate iterators return, range by range, and that iterating it never
// reads the file: with and without a cache, synchronous and async reads,
// every coalescing threshold, buffered and aligned reads.
func TestPrepareScanMatchesIters(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	n, prepares := 3000, 8
	if raceEnabled {
		n, prepares = 1000, 3
	}
	es := randomEntries(rng, n, true)
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 256, Compression: SnappyCompression})
	pool := prefetch.NewPool(4)
	defer pool.Close()
	for _, align := range []int{1, 512} {
		for _, cacheSize := range []int64{0, 8 << 10, 64 << 20} {
			for _, async := range []bool{false, true} {
				for _, threshold := range []int64{0, -1, 1 << 20} {
					name := fmt.Sprintf("align=%d/cache=%d/async=%t/threshold=%d", align, cacheSize, async, threshold)
					t.Run(name, func(t *testing.T) {
						db := &stats.Counters{}
						ro := ReaderOptions{Pool: pool, Stats: db}
						if cacheSize > 0 {
							ro.Cache = cache.New(cacheSize)
						}
						r, af := openAligned(t, data, align, ro)
						defer r.Close()
						for range prepares {
							ranges := randomRanges(rng, es, 1+rng.IntN(8))
							want := scanRanges(t, r, ranges)
							p, err := r.PrepareScan(context.Background(), ranges, PrepareOptions{
								CoalesceThreshold: threshold, Async: async, DontFillCache: rng.IntN(4) == 0})
							require.NoError(t, err)
							before := db.Snapshot()
							got := iterPrepared(t, p, IterOptions{ReadaheadSize: int64(rng.IntN(2) * 65536)})
							delta := db.Snapshot().Sub(before)
							require.Equal(t, want, got, "ranges %q", ranges)
							require.Zero(t, delta.Get(stats.FileReadCount), "no reads during iteration")
							require.Zero(t, delta.Get(stats.BlockCacheMiss)+delta.Get(stats.BlockCacheHit), "no cache lookups either")
							require.NoError(t, p.Close())
						}
						require.Empty(t, af.errors())
						if ro.Cache != nil {
							require.Zero(t, ro.Cache.Pinned())
						}
					})
				}
			}
		}
	}
}

// rangeModel is the model of an iterator over a prepared scan: forward
// moves after a seek into a range stop at its End.
type rangeModel struct {
	*model
	ranges []ScanRange
	bound  []byte
}

func (m *rangeModel) setBound(ukey []byte) {
	m.bound = nil
	for _, rg := range m.ranges {
		if bytes.Compare(rg.Start, ukey) <= 0 && (rg.End == nil || bytes.Compare(ukey, rg.End) < 0) {
			m.bound = rg.End
		}
	}
}

func (m *rangeModel) check(e *entry) *entry {
	if e != nil && m.bound != nil && bytes.Compare(base.UserKey(e.k), m.bound) >= 0 {
		m.pos = len(m.es)
		return nil
	}
	return e
}

func (m *rangeModel) seekGE(k []byte) *entry {
	m.setBound(base.UserKey(k))
	return m.check(m.model.seekGE(k))
}
func (m *rangeModel) first() *entry          { m.setBound(nil); return m.check(m.model.first()) }
func (m *rangeModel) seekLT(k []byte) *entry { m.bound = nil; return m.model.seekLT(k) }
func (m *rangeModel) last() *entry           { m.bound = nil; return m.model.last() }

func (m *rangeModel) next() *entry {
	if m.pos < 0 {
		return m.first()
	}
	return m.check(m.model.next())
}

func (m *rangeModel) prev() *entry {
	if m.pos >= len(m.es) || m.pos == -2 {
		return m.last()
	}
	return m.model.prev()
}

// TestPreparedIterAnyMove drives an iterator over a prepared scan with
// random seeks inside and outside the ranges, backward moves, First and
// Last, against the model: moves the scan did not prepare read the file and
// are still right.
func TestPreparedIterAnyMove(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 32))
	es := randomEntries(rng, 2000, false)
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 200})
	for _, withCache := range []bool{false, true} {
		var ro ReaderOptions
		if withCache {
			ro.Cache = cache.New(16 << 10)
		}
		r, err := openBytes(data, ro)
		require.NoError(t, err)
		for range 20 {
			ranges := randomRanges(rng, es, 1+rng.IntN(6))
			p, err := r.PrepareScan(context.Background(), ranges, PrepareOptions{})
			require.NoError(t, err)
			it := p.NewIter(IterOptions{})
			m := &rangeModel{model: &model{es: es, pos: -2}, ranges: ranges}
			for step := range 300 {
				var got *base.KV
				var want *entry
				var op string
				switch x := rng.IntN(12); {
				case x == 0:
					got, want, op = it.First(), m.first(), "First"
				case x == 1:
					got, want, op = it.Last(), m.last(), "Last"
				case x < 4:
					var k []byte
					switch start := ranges[rng.IntN(len(ranges))].Start; rng.IntN(3) {
					case 0:
						k = base.MakeSearchKey(nil, start, base.SeqNumMax)
					case 1:
						// A range's Start at an older version: the
						// prepared position lies before the answer's
						// block when versions span blocks.
						k = base.MakeSearchKey(nil, start, base.SeqNum(rng.IntN(1000)))
					default:
						k = randomSearchKey(rng, es)
					}
					got, want, op = it.SeekGE(k), m.seekGE(k), "SeekGE "+base.FormatKey(k)
				case x == 4:
					k := randomSearchKey(rng, es)
					got, want, op = it.SeekLT(k), m.seekLT(k), "SeekLT "+base.FormatKey(k)
				case x < 7:
					got, want, op = it.Prev(), m.prev(), "Prev"
				default:
					got, want, op = it.Next(), m.next(), "Next"
				}
				require.NoError(t, it.Error())
				require.Equal(t, fmtEntry(want), fmtKV(got), "step %d: %s; ranges %q", step, op, ranges)
			}
			require.NoError(t, it.Close())
			require.NoError(t, p.Close())
		}
		if ro.Cache != nil {
			require.Zero(t, ro.Cache.Pinned())
		}
		require.NoError(t, r.Close())
	}
}

// TestPrepareScanCounters checks the counters of Prepare: blocks found in
// the cache or read, coalesced reads, and the effect of the threshold.
func TestPrepareScanCounters(t *testing.T) {
	var es []entry
	for i := range 10_000 {
		es = append(es, entry{ikey(fmt.Sprintf("key%05d", i), 1, base.KindSet), bytes.Repeat([]byte{'v'}, 100)})
	}
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 1024})
	key := func(i int) []byte { return fmt.Appendf(nil, "key%05d", i) }
	// Ten ranges of 100 keys, 100 keys apart: about 12 blocks each, gaps of
	// about 12 blocks (~13 KiB) between them.
	var ranges []ScanRange
	for i := range 10 {
		ranges = append(ranges, ScanRange{Start: key(1000 + 200*i), End: key(1100 + 200*i)})
	}
	for _, tc := range []struct {
		name      string
		threshold int64
		maxReads  int64
		minReads  int64
	}{
		{"no-gaps", -1, 1000, 100}, // every block its own read
		{"adjacent", 1, 10, 10},    // one read per range
		{"default", 0, 1, 1},       // 16 KiB bridges the gaps: one read
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cache.New(64 << 20)
			r, err := openBytes(data, ReaderOptions{Cache: c})
			require.NoError(t, err)
			defer r.Close()
			op := &stats.Counters{}
			p, err := r.PrepareScan(context.Background(), ranges, PrepareOptions{CoalesceThreshold: tc.threshold, Stats: op})
			require.NoError(t, err)
			blocks := op.Get(stats.MultiScanBlocksPrefetched)
			require.EqualValues(t, p.NumBlocks(), blocks)
			require.Greater(t, blocks, int64(100))
			reads := op.Get(stats.MultiScanCoalescedReads)
			require.Equal(t, reads, op.Get(stats.FileReadCount))
			require.LessOrEqual(t, reads, tc.maxReads)
			require.GreaterOrEqual(t, reads, tc.minReads)
			require.Equal(t, op.Get(stats.FileReadBytes), op.Get(stats.MultiScanPrefetchBytes))
			require.EqualValues(t, 1, op.Get(stats.MultiScanTablePrepares))
			require.Zero(t, op.Get(stats.MultiScanBlocksFromCache))
			require.EqualValues(t, p.NumBlocks(), c.Pinned())
			for k := range ranges {
				require.Positive(t, p.RangeBlocks(k))
			}

			// Prepared again: everything from the cache, nothing read.
			op.Reset()
			p2, err := r.PrepareScan(context.Background(), ranges, PrepareOptions{CoalesceThreshold: tc.threshold, Stats: op})
			require.NoError(t, err)
			require.EqualValues(t, p.NumBlocks(), op.Get(stats.MultiScanBlocksFromCache))
			require.Zero(t, op.Get(stats.FileReadCount))
			require.NoError(t, p2.Close())

			// Iteration reads nothing and returns every key of the ranges.
			op.Reset()
			got := iterPrepared(t, p, IterOptions{Stats: op})
			n := 0
			for _, g := range got {
				n += len(g)
			}
			require.Equal(t, 1000, n)
			require.Zero(t, op.Get(stats.FileReadCount))
			require.NoError(t, p.Close())
			require.Zero(t, c.Pinned())
		})
	}
}

func TestPrepareScanErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 33))
	es := randomEntries(rng, 1000, false)
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 256})
	c := cache.New(1 << 20)
	pool := prefetch.NewPool(2)
	defer pool.Close()
	r, err := openBytes(data, ReaderOptions{Cache: c, Pool: pool})
	require.NoError(t, err)
	ctx := context.Background()
	for _, bad := range [][]ScanRange{
		{{Start: nil, End: []byte("b")}},
		{{Start: []byte("b"), End: []byte("a")}},
		{{Start: []byte("b"), End: []byte("b")}},
		{{Start: []byte("a"), End: nil}, {Start: []byte("b"), End: []byte("c")}},
		{{Start: []byte("a"), End: []byte("c")}, {Start: []byte("b"), End: []byte("d")}},
	} {
		_, err := r.PrepareScan(ctx, bad, PrepareOptions{})
		require.ErrorIs(t, err, ErrInvalidRanges, "%q", bad)
	}

	// Nothing to prepare is fine.
	p, err := r.PrepareScan(ctx, nil, PrepareOptions{})
	require.NoError(t, err)
	require.Zero(t, p.NumBlocks())
	require.NoError(t, p.Close())

	// A cancelled context stops Prepare, which releases what it pinned.
	all := []ScanRange{{Start: []byte{0}, End: nil}}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, async := range []bool{false, true} {
		_, err = r.PrepareScan(cctx, all, PrepareOptions{Async: async})
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, c.Pinned())
	}

	// A scan begun and submitted but closed before Finish waits for its
	// reads and releases its pins; one finished after Submit holds every
	// block without another read.
	for _, finish := range []bool{false, true} {
		var st stats.Counters
		c := cache.New(1 << 20)
		r, err := openBytes(data, ReaderOptions{Cache: c, Pool: pool})
		require.NoError(t, err)
		p, err := r.BeginPrepareScan([]ScanRange{{Start: []byte{0}, End: []byte("x")}}, PrepareOptions{Stats: &st})
		require.NoError(t, err)
		require.Positive(t, p.Reads(), "nothing cached yet")
		g := pool.Ring()
		p.Submit(ctx, g)
		if finish {
			require.NoError(t, p.Finish(ctx))
			require.Zero(t, p.Reads())
			reads := st.Get(stats.FileReadCount)
			it := p.NewIter(IterOptions{})
			for kv := it.SeekGE(base.MakeSearchKey(nil, []byte{0}, base.SeqNumMax)); kv != nil; kv = it.Next() {
			}
			require.NoError(t, it.Close())
			require.Equal(t, reads, st.Get(stats.FileReadCount), "no read after Finish")
		}
		require.NoError(t, p.Close())
		g.Close()
		require.Zero(t, c.Pinned())
		require.NoError(t, r.Close())
	}

	// Close fails while an iterator is open.
	p, err = r.PrepareScan(ctx, all, PrepareOptions{})
	require.NoError(t, err)
	require.Positive(t, c.Pinned())
	it := p.NewIter(IterOptions{})
	require.NotNil(t, it.First())
	require.Error(t, p.Close())
	require.NoError(t, it.Close())
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "idempotent")
	require.Zero(t, c.Pinned())
	it = p.NewIter(IterOptions{})
	require.Nil(t, it.First())
	require.ErrorContains(t, it.Error(), "closed")
	require.Error(t, it.Close())

	// A scan prepared on another reader is refused.
	r2, err := openBytes(data, ReaderOptions{})
	require.NoError(t, err)
	p, err = r.PrepareScan(ctx, all, PrepareOptions{})
	require.NoError(t, err)
	it = r2.NewIter(IterOptions{Prepared: p})
	require.Nil(t, it.First())
	require.ErrorContains(t, it.Error(), "prepared on")
	it.Close()
	require.NoError(t, p.Close())
	require.NoError(t, r2.Close())

	// A corrupt block fails Prepare.
	bad := slices.Clone(data)
	bad[100] ^= 0xff
	c3 := cache.New(1 << 20)
	r3, err := openBytes(bad, ReaderOptions{Cache: c3})
	require.NoError(t, err)
	_, err = r3.PrepareScan(ctx, all, PrepareOptions{})
	require.True(t, base.IsCorruption(err), "%v", err)
	require.Zero(t, c3.Pinned())
	require.NoError(t, r3.Close())
	require.NoError(t, r.Close())
	_, err = r.PrepareScan(ctx, all, PrepareOptions{})
	require.ErrorIs(t, err, ErrClosed)
}

// TestPreparedSeekVersions seeks each version of prepared ranges' Start
// keys, in tables where those versions fill several blocks (the index
// position the prepare found is not the block of an older version) and
// where each key lies in one block (the position is exact): every seek
// returns what a plain iterator returns, without reading the file.
func TestPreparedSeekVersions(t *testing.T) {
	for _, versions := range []int{1, 3, 40} {
		t.Run(fmt.Sprintf("versions=%d", versions), func(t *testing.T) {
			var es []entry
			for _, uk := range []string{"a", "ka", "kb", "m", "z"} {
				for seq := versions; seq >= 1; seq-- {
					es = append(es, entry{k: ikey(uk, base.SeqNum(seq), base.KindSet), v: []byte(fmt.Sprintf("%s@%03d", uk, seq))})
				}
			}
			data := buildTable(t, es, nil, WriterOptions{BlockSize: 64})
			db := &stats.Counters{}
			r, err := openBytes(data, ReaderOptions{Stats: db})
			require.NoError(t, err)
			defer r.Close()
			ranges := []ScanRange{{Start: []byte("ka"), End: []byte("kb")}, {Start: []byte("kb"), End: []byte("m")}, {Start: []byte("z")}}
			p, err := r.PrepareScan(context.Background(), ranges, PrepareOptions{})
			require.NoError(t, err)
			defer func() { require.NoError(t, p.Close()) }()
			it := p.NewIter(IterOptions{})
			defer func() { require.NoError(t, it.Close()) }()
			for _, rg := range ranges {
				for seq := base.SeqNum(versions + 1); seq >= 1; seq-- {
					key := ikey(string(rg.Start), seq, base.KindMax)
					plain := r.NewIter(IterOptions{Upper: rg.End})
					want := plain.SeekGE(key)
					before := db.Snapshot()
					got := it.SeekGE(key)
					require.Zero(t, db.Snapshot().Sub(before).Get(stats.FileReadCount), "seek to %s read the file", base.FormatKey(key))
					require.NotNil(t, got, "seek to %s", base.FormatKey(key))
					require.Equal(t, fmtKV(want), fmtKV(got), "seek to %s", base.FormatKey(key))
					require.NoError(t, plain.Close())
				}
			}
		})
	}
}
