package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/uring"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// readPathDB returns a database on disk holding n keys "k%08d" with
// 100-byte values, compacted into tables, and a block cache too small to
// hold them (unless opts sets CacheSize), so that reads go to the files.
func readPathDB(t *testing.T, n int, opts *Options) *DB {
	if opts == nil {
		opts = &Options{}
	}
	opts.FS = vfs.Default
	if opts.CacheSize == 0 {
		opts.CacheSize = 64 << 10
	}
	opts.Compression = 0 // blocks of a predictable size
	d, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	b := d.NewBatch()
	for i := range n {
		require.NoError(t, b.Set(fmt.Appendf(nil, "k%08d", i), fmt.Appendf(nil, "%0100d", i)))
	}
	require.NoError(t, b.Commit(NoSync))
	require.NoError(t, d.Compact(nil, nil))
	return d
}

func TestMultiGetBatches(t *testing.T) {
	d := readPathDB(t, 20000, nil)
	var keys [][]byte
	for i := range 100 {
		keys = append(keys, fmt.Appendf(nil, "k%08d", (i*37)%20000))
	}
	keys = append(keys, []byte("absent"))
	var op stats.Counters
	vals, err := d.MultiGet(keys, &ReadOptions{Stats: &op}, nil)
	require.NoError(t, err)
	for i, k := range keys[:100] {
		want, err := d.Get(k, nil)
		require.NoError(t, err)
		require.Equal(t, want, vals[i])
	}
	require.Nil(t, vals[100])
	// 101 keys: one MultiGet in four batches of at most 32, not 101 Gets.
	require.EqualValues(t, 4, op.Get(stats.MultiGetBatches))
	require.EqualValues(t, 101, op.Get(stats.MultiGetKeys))
	require.EqualValues(t, 100, op.Get(stats.MultiGetKeysFound))
	require.Zero(t, op.Get(stats.GetCalls))

	// Keys sharing blocks share block-cache lookups.
	var seqKeys [][]byte
	for i := range 64 {
		seqKeys = append(seqKeys, fmt.Appendf(nil, "k%08d", 5000+i))
	}
	var op2 stats.Counters
	_, err = d.MultiGet(seqKeys, &ReadOptions{Stats: &op2}, nil)
	require.NoError(t, err)
	lookups := op2.Get(stats.BlockCacheHit) + op2.Get(stats.BlockCacheMiss)
	require.Less(t, lookups, int64(len(seqKeys)/4), "64 adjacent keys span a few blocks")
}

// TestMultiGetAllocs checks that DB.MultiGet allocates per call, not per
// key: the result's values share one buffer, and the batches' state, block
// iterators and read buffers are reused. Keys come from the tables, the
// memtable and deletions, random and sharing blocks.
func TestMultiGetAllocs(t *testing.T) {
	if underRace {
		t.Skip("the race detector makes sync.Pool drop what it holds")
	}
	d := readPathDB(t, 20000, &Options{CacheSize: 8 << 20})
	require.NoError(t, d.Set([]byte("k00000100"), []byte("new"), NoSync))
	require.NoError(t, d.Delete([]byte("k00000200"), NoSync))
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{8, 32, 128} {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = make([]byte, 0, 16)
		}
		var dst [][]byte
		var err error
		allocs := testing.AllocsPerRun(200, func() {
			r := rng.IntN(20000 - 4*n)
			for i := range keys {
				k := rng.IntN(20000)
				if i%2 == 0 {
					k = r + 4*i // keys sharing blocks
				}
				keys[i] = appendPathKey(keys[i][:0], k)
			}
			keys[0] = append(keys[0][:0], "k00000100"...)
			keys[1] = append(keys[1][:0], "k00000200"...)
			dst, err = d.MultiGet(keys, nil, dst)
		})
		require.NoError(t, err)
		require.Equal(t, []byte("new"), dst[0])
		require.Nil(t, dst[1])
		require.LessOrEqual(t, allocs, 1.0, "%d keys: %.2f allocations per call", n, allocs)
	}
}

// appendPathKey appends readPathDB's key of n, "k%08d", without fmt's
// allocation of the boxed n.
func appendPathKey(b []byte, n int) []byte {
	b = append(b, 'k')
	var tmp [20]byte
	digits := strconv.AppendInt(tmp[:0], int64(n), 10)
	for range 8 - len(digits) {
		b = append(b, '0')
	}
	return append(b, digits...)
}

// TestMultiGetAsyncLoads checks that with AsyncIO a batch's blocks that the
// cache lacks are read at once on the I/O pool when reads are slow, with or
// without direct reads, and in turn when they are fast, and that the values
// are those of Get.
func TestMultiGetAsyncLoads(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			// A cache that holds the batch's blocks but starts empty.
			d := readPathDB(t, 20000, &Options{UseDirectReads: direct, CacheSize: 4 << 20})
			var keys [][]byte
			for i := range 32 {
				keys = append(keys, fmt.Appendf(nil, "k%08d", (i*613)%20000))
			}
			keys = append(keys, []byte("k00000000x")) // absent, between keys
			// Reads that reach the device (the pool's latency says so):
			// the batch's blocks are read at once.
			for range 64 {
				d.ioPool.Latency().Observe(time.Millisecond)
			}
			var op stats.Counters
			vals, err := d.MultiGet(keys, &ReadOptions{Stats: &op, AsyncIO: true}, nil)
			require.NoError(t, err)
			for i, k := range keys {
				want, err := d.Get(k, nil)
				if i == len(keys)-1 {
					require.ErrorIs(t, err, ErrNotFound)
					require.Nil(t, vals[i])
					continue
				}
				require.NoError(t, err)
				require.Equal(t, want, vals[i], "key %q", k)
			}
			// 32 keys 613 apart lie in 32 distinct blocks, which the
			// cache lacks: they are read together, in the background
			// (a level whose tables need only one block reads it
			// inline).
			loaded := op.Get(stats.MultiGetBlocksLoaded)
			require.EqualValues(t, 32, loaded)
			require.EqualValues(t, loaded, op.Get(stats.BlockCacheMiss))
			require.GreaterOrEqual(t, op.Get(stats.AsyncReadCount), loaded-2)
			if ringsAvailable() {
				// Submitted on a ring and collected by the caller; once
				// the ring's first reads show the page cache serving
				// them, the rest of a buffered batch is copied from the
				// mapping on the pool instead.
				ring := op.Get(stats.AsyncReadRing)
				require.Positive(t, ring)
				if direct {
					require.Equal(t, op.Get(stats.AsyncReadCount), ring)
				}
			}
			require.EqualValues(t, loaded, op.Get(stats.FileReadCount), "the lookups read nothing more")

			// Reads from the page cache are fast: AsyncIO asks, but other
			// blocks are read in turn as the lookups meet them.
			for range 64 {
				d.ioPool.Latency().Observe(0)
			}
			var other [][]byte
			for i := range 32 {
				other = append(other, fmt.Appendf(nil, "k%08d", (i*613+300)%20000))
			}
			var fastOp stats.Counters
			_, err = d.MultiGet(other, &ReadOptions{Stats: &fastOp, AsyncIO: true}, nil)
			require.NoError(t, err)
			require.Zero(t, fastOp.Get(stats.AsyncReadCount))
			require.Zero(t, fastOp.Get(stats.MultiGetBlocksLoaded))
			require.EqualValues(t, 32, fastOp.Get(stats.FileReadCount))

			// Without AsyncIO the same batch reads in turn.
			var seqOp stats.Counters
			_, err = d.MultiGet(keys, &ReadOptions{Stats: &seqOp, DontFillCache: true}, nil)
			require.NoError(t, err)
			require.Zero(t, seqOp.Get(stats.AsyncReadCount))
			require.Zero(t, seqOp.Get(stats.MultiGetBlocksLoaded))
		})
	}
}

// asyncModes are the ways a MultiScan's prepare may read: with or without
// AsyncIO, after reads that were fast (the page cache) or slow (a device).
var asyncModes = []struct{ async, slow bool }{{false, false}, {false, true}, {true, false}, {true, true}}

// prepareInMode sets the I/O pool's read latency as mode says, prepares a
// MultiScan of ranges, and checks that its reads went to the pool exactly
// when AsyncIO was asked for and reads were slow. It returns the scan and
// the reads its prepare made.
func prepareInMode(t *testing.T, d *DB, ranges []ScanRange, mode struct{ async, slow bool }, op *stats.Counters) (*MultiScan, int64) {
	t.Helper()
	set := time.Duration(0)
	if mode.slow {
		set = time.Millisecond
	}
	for range 64 { // the moving average converges to set
		d.ioPool.Latency().Observe(set)
	}
	s, err := d.NewMultiScan(context.Background(), ranges, &IterOptions{ReadOptions: ReadOptions{Stats: op, AsyncIO: mode.async}})
	require.NoError(t, err)
	reads := op.Get(stats.FileReadCount)
	require.Greater(t, reads, int64(1))
	if mode.async && mode.slow {
		require.Equal(t, reads, op.Get(stats.AsyncReadCount), "slow reads: all issued on the pool")
		if ringsAvailable() {
			require.Positive(t, op.Get(stats.AsyncReadRing), "on a ring the prepare collects itself")
		}
	} else {
		require.Zero(t, op.Get(stats.AsyncReadCount), "async=%v slow=%v: reads in turn", mode.async, mode.slow)
	}
	return s, reads
}

func TestMultiScanPreparedReadsNothing(t *testing.T) {
	d := readPathDB(t, 50000, nil)
	var ranges []ScanRange
	for i := range 10 {
		start := i * 4000
		ranges = append(ranges, ScanRange{Start: fmt.Appendf(nil, "k%08d", start), End: fmt.Appendf(nil, "k%08d", start+100)})
	}
	for _, tc := range asyncModes {
		var op stats.Counters
		s, afterPrepare := prepareInMode(t, d, ranges, tc, &op)
		require.Positive(t, afterPrepare)
		require.LessOrEqual(t, afterPrepare, int64(len(ranges)), "one coalesced read per range at most")
		n := 0
		for r := range ranges {
			for ok := s.SeekRange(r); ok; ok = s.Next() {
				n++
			}
			require.NoError(t, s.Error())
		}
		require.Equal(t, 1000, n)
		require.Equal(t, afterPrepare, op.Get(stats.FileReadCount), "iteration of a prepared scan reads no file")
		require.EqualValues(t, 1, op.Get(stats.MultiScanPrepares))
		require.NoError(t, s.Close())
	}
}

// TestMultiScanStopsAtRangeEnd: over a level of many tables, iterating a
// prepared range to its end touches no block and opens no table beyond the
// range's own: the level iterator takes each range's bounds, instead of
// moving on to the next table and reading its first block.
func TestMultiScanStopsAtRangeEnd(t *testing.T) {
	d := readPathDB(t, 50000, &Options{TargetFileSize: 256 << 10})
	require.Greater(t, d.Metrics().Levels[manifest.NumLevels-1].NumFiles, 10)
	var ranges []ScanRange
	for i := range 10 {
		start := i*5000 + 17
		ranges = append(ranges, ScanRange{Start: fmt.Appendf(nil, "k%08d", start), End: fmt.Appendf(nil, "k%08d", start+20)})
	}
	var op stats.Counters
	s, err := d.NewMultiScan(context.Background(), ranges, &IterOptions{ReadOptions: ReadOptions{Stats: &op}})
	require.NoError(t, err)
	afterPrepare := op.Snapshot()
	// Each range of 20 keys lies in one table or two: only those are
	// prepared, not every table between the first range and the last.
	require.GreaterOrEqual(t, afterPrepare.Get(stats.MultiScanTablePrepares), int64(len(ranges)))
	require.LessOrEqual(t, afterPrepare.Get(stats.MultiScanTablePrepares), int64(2*len(ranges)))
	n := 0
	for r := range ranges {
		for ok := s.SeekRange(r); ok; ok = s.Next() {
			n++
		}
		require.NoError(t, s.Error())
	}
	require.Equal(t, 200, n)
	for _, c := range []stats.Counter{stats.FileReadCount, stats.BlockCacheHit, stats.BlockCacheMiss} {
		require.Equal(t, afterPrepare.Get(c), op.Get(c), "%s during iteration", c)
	}
	require.NoError(t, s.Close())
}

// TestReadaheadFewerReads: readahead cuts the read calls of a scan. The
// tables are read with pread: on a mapped file whose reads come from the
// page cache, readahead steps aside (prefetch.Buffer).
func TestReadaheadFewerReads(t *testing.T) {
	d := readPathDB(t, 100000, &Options{DisableMmapReads: true}) // ~12 MB of 4 KiB blocks
	scan := func(ro ReadOptions) (reads, n int64) {
		var op stats.Counters
		ro.Stats = &op
		it, err := d.NewIter(&IterOptions{ReadOptions: ro})
		require.NoError(t, err)
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		require.NoError(t, it.Close())
		return op.Get(stats.FileReadCount), n
	}
	off, n := scan(ReadOptions{ReadaheadSize: -1})
	require.EqualValues(t, 100000, n)
	auto, _ := scan(ReadOptions{})
	explicit, _ := scan(ReadOptions{ReadaheadSize: 1 << 20})
	async, _ := scan(ReadOptions{ReadaheadSize: 1 << 20, AsyncIO: true})
	t.Logf("reads: off %d, auto %d, explicit %d, async %d", off, auto, explicit, async)
	require.Greater(t, off, int64(2000))
	require.Less(t, auto*10, off)
	require.Less(t, explicit*50, off)
	require.Less(t, async*50, off)
}

// TestMappedReads: by default a table file on disk is memory-mapped, and
// point reads of its blocks copy from the mapping instead of calling pread;
// DisableMmapReads and direct reads turn that off. The values are the same
// every way.
func TestMappedReads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		mapped bool
	}{
		{"default", Options{}, vfs.CanMap},
		{"disabled", Options{DisableMmapReads: true}, false},
		{"direct", Options{UseDirectReads: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			d := readPathDB(t, 20000, &opts)
			var op stats.Counters
			ro := &ReadOptions{Stats: &op}
			for i := range 500 {
				k := (i * 7919) % 20000
				v, err := d.Get(fmt.Appendf(nil, "k%08d", k), ro)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("%0100d", k), string(v))
			}
			reads, mapped := op.Get(stats.FileReadCount), op.Get(stats.FileReadMapped)
			require.Positive(t, reads)
			if tc.mapped {
				// All of them, unless a busy machine made reads look slow.
				require.Positive(t, mapped)
			} else {
				require.Zero(t, mapped)
			}
		})
	}
}

func TestFileOpensBoundedByTableCache(t *testing.T) {
	d := readPathDB(t, 20000, nil)
	before := d.Stats().Get(stats.FileOpens)
	for i := range 500 {
		it, err := d.NewIter(&IterOptions{ReadOptions: ReadOptions{ReadaheadSize: 1 << 20}})
		require.NoError(t, err)
		it.SeekGE(fmt.Appendf(nil, "k%08d", i*37))
		require.NoError(t, it.Close())
	}
	files := 0
	for _, l := range d.Metrics().Levels {
		files += l.NumFiles
	}
	require.LessOrEqual(t, d.Stats().Get(stats.FileOpens)-before, int64(files), "opens are bounded by the files, not the seeks")
}

// TestMultiScanManyTables prepares a scan over several overlapping level-0
// tables, with reads in turn and (with AsyncIO, once reads are slow) all
// issued at once on the pool: all return every key of the ranges, in
// order, and read no file after Prepare.
func TestMultiScanManyTables(t *testing.T) {
	d, err := Open(t.TempDir(), &Options{FS: vfs.Default, CacheSize: 64 << 10, Compression: 0,
		L0CompactionTrigger: 100, L0SlowdownWritesTrigger: 200, L0StopWritesTrigger: 300})
	require.NoError(t, err)
	defer d.Close()
	const n, tables = 20000, 5
	for f := range tables {
		b := d.NewBatch()
		for i := f; i < n; i += tables {
			require.NoError(t, b.Set(fmt.Appendf(nil, "k%08d", i), fmt.Appendf(nil, "%0100d", i)))
		}
		require.NoError(t, b.Commit(NoSync))
		require.NoError(t, d.Flush())
	}
	require.GreaterOrEqual(t, d.Metrics().Levels[0].NumFiles, tables)
	var ranges []ScanRange
	var want []string
	for r := range 12 {
		start := r*1500 + 7
		ranges = append(ranges, ScanRange{Start: fmt.Appendf(nil, "k%08d", start), End: fmt.Appendf(nil, "k%08d", start+60)})
		for i := start; i < start+60; i++ {
			want = append(want, fmt.Sprintf("k%08d", i))
		}
	}
	for _, tc := range asyncModes {
		var op stats.Counters
		s, afterPrepare := prepareInMode(t, d, ranges, tc, &op)
		var got []string
		for r := range ranges {
			for ok := s.SeekRange(r); ok; ok = s.Next() {
				got = append(got, string(s.Key()))
			}
			require.NoError(t, s.Error())
		}
		require.Equal(t, want, got, "%+v", tc)
		require.Equal(t, afterPrepare, op.Get(stats.FileReadCount), "%+v: iteration read a file", tc)
		require.NoError(t, s.Close())
	}
}

// TestMultiScanCoalesceThreshold: ranges about 40 KB apart share no read
// under the default threshold (16 KiB) and one read when the threshold
// spans the gaps.
func TestMultiScanCoalesceThreshold(t *testing.T) {
	var ranges []ScanRange
	for r := range 8 {
		start := r * 400
		ranges = append(ranges, ScanRange{Start: fmt.Appendf(nil, "k%08d", start), End: fmt.Appendf(nil, "k%08d", start+20)})
	}
	// reads returns the scan's read calls, and how many of them copied
	// from the mapping.
	reads := func(d *DB, threshold int64) (calls, mapped int64) {
		var op stats.Counters
		ro := ReadOptions{Stats: &op, DontFillCache: true}
		s, err := d.NewMultiScan(context.Background(), ranges, &IterOptions{ReadOptions: ro, CoalesceThreshold: threshold})
		require.NoError(t, err)
		n := 0
		for r := range ranges {
			for ok := s.SeekRange(r); ok; ok = s.Next() {
				n++
			}
		}
		require.Equal(t, 160, n)
		require.NoError(t, s.Close())
		return op.Get(stats.FileReadCount), op.Get(stats.FileReadMapped)
	}
	// Reads through the system call: gaps within the threshold are read
	// to save calls.
	d := readPathDB(t, 20000, &Options{DisableMmapReads: true})
	calls, _ := reads(d, 0)
	require.EqualValues(t, len(ranges), calls)
	calls, _ = reads(d, 64<<10)
	require.EqualValues(t, 1, calls)
	if !vfs.CanMap {
		return
	}
	// Copies from the mapping (the page cache holds the file, so reads
	// are fast): gaps are never read, whatever the threshold. A busy
	// machine can make reads look slow, and then they are calls again.
	d = readPathDB(t, 20000, nil)
	if calls, mapped := reads(d, 64<<10); mapped == calls {
		require.EqualValues(t, len(ranges), calls)
	}
}

// TestAsyncScansOnRing: iterators reading ahead in the background over
// tables on disk, buffered and direct, with their reads on an io_uring (or
// the pool's goroutines where there is none, or with DisableIOUring), see
// the same keys as an iterator without readahead, in both directions and
// within bounds.
func TestAsyncScansOnRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"buffered", Options{DisableMmapReads: true}},
		{"direct", Options{UseDirectReads: true}},
		{"direct/pool", Options{UseDirectReads: true, DisableIOUring: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			const n = 30000
			d := readPathDB(t, n, &opts)
			collect := func(ro ReadOptions, lo, hi int, reverse bool) []string {
				it, err := d.NewIter(&IterOptions{ReadOptions: ro,
					LowerBound: fmt.Appendf(nil, "k%08d", lo), UpperBound: fmt.Appendf(nil, "k%08d", hi)})
				require.NoError(t, err)
				var keys []string
				if reverse {
					for ok := it.Last(); ok; ok = it.Prev() {
						keys = append(keys, string(it.Key()))
					}
				} else {
					for ok := it.First(); ok; ok = it.Next() {
						keys = append(keys, string(it.Key()))
						require.Equal(t, fmt.Sprintf("%0100d", len(keys)-1+lo), string(it.Value()))
					}
				}
				require.NoError(t, it.Close())
				return keys
			}
			var op stats.Counters
			for range 20 {
				lo := rng.IntN(n)
				hi := lo + rng.IntN(n-lo) + 1
				reverse := rng.IntN(4) == 0
				want := collect(ReadOptions{ReadaheadSize: -1}, lo, hi, reverse)
				got := collect(ReadOptions{ReadaheadSize: 64 << 10, AsyncIO: true, Stats: &op}, lo, hi, reverse)
				require.Equal(t, want, got, "[%d, %d) reverse=%t", lo, hi, reverse)
			}
			require.Positive(t, op.Get(stats.AsyncReadCount))
			ring := op.Get(stats.AsyncReadRing)
			if tc.opts.DisableIOUring || !ringsAvailable() {
				require.Zero(t, ring)
			} else {
				require.Positive(t, ring)
			}
		})
	}
}

func ringsAvailable() bool {
	r, err := uring.New(2)
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// TestMultiScanSoleTable: ranges that one table alone holds are read
// through that table's iterator, and still see what separate iterators
// see: older versions and deletions in the table, range deletions, a
// snapshot older than the memtable's writes, and memtable writes in some
// ranges (which send those ranges through the merge).
func TestMultiScanSoleTable(t *testing.T) {
	d := readPathDB(t, 20000, &Options{TargetFileSize: 256 << 10})
	key := func(i int) []byte { return fmt.Appendf(nil, "k%08d", i) }
	// Overwrites and deletions, compacted into the same tables.
	for i := 0; i < 20000; i += 7 {
		require.NoError(t, d.Set(key(i), []byte("v2"), nil))
	}
	for i := 3; i < 20000; i += 11 {
		require.NoError(t, d.Delete(key(i), nil))
	}
	require.NoError(t, d.DeleteRange(key(4010), key(4020), nil))
	require.NoError(t, d.Compact(nil, nil))
	snap := d.NewSnapshot()
	defer snap.Close()
	// Writes after the snapshot, in the memtable, in ranges 2 and 5.
	for _, i := range []int{2005, 2013, 5001} {
		require.NoError(t, d.Set(key(i), []byte("new"), nil))
	}
	require.NoError(t, d.Delete(key(5003), nil))

	var ranges []ScanRange
	for r := range 10 {
		ranges = append(ranges, ScanRange{Start: key(r*1000 + 1), End: key(r*1000 + 30)})
	}
	for _, ro := range []*ReadOptions{nil, {Snapshot: snap}} {
		o := &IterOptions{}
		if ro != nil {
			o.ReadOptions = *ro
		}
		s, err := d.NewMultiScan(context.Background(), ranges, o)
		require.NoError(t, err)
		sole := 0
		for r, rg := range ranges {
			if s.sole[r] >= 0 {
				sole++
			}
			if r == 2 || r == 5 {
				require.Negative(t, s.sole[r], "range %d has memtable keys", r)
			}
			want := scanRange(t, d, rg, ro)
			var got []string
			for ok := s.SeekRange(r); ok; ok = s.Next() {
				got = append(got, string(s.Key())+"="+string(s.Value()))
			}
			require.NoError(t, s.Error())
			require.Equal(t, want, got, "range %d, snapshot %t", r, ro != nil)
		}
		require.GreaterOrEqual(t, sole, 6, "most ranges lie in one table")
		// Out of order and again: the sole iterators seek anywhere.
		for _, r := range []int{7, 0, 7} {
			require.True(t, s.SeekRange(r))
			require.Equal(t, string(ranges[r].Start), string(s.Key()), "range %d", r)
		}
		require.NoError(t, s.Close())
	}

	// Ranges the memtable has no key in, each within one table: the scan
	// builds no merge at all, and a range deletion still hides keys.
	calm := []ScanRange{ranges[0], ranges[4], ranges[9]}
	s, err := d.NewMultiScan(context.Background(), calm, nil)
	require.NoError(t, err)
	if !s.needsMerge() {
		for r, rg := range calm {
			var got []string
			for ok := s.SeekRange(r); ok; ok = s.Next() {
				got = append(got, string(s.Key())+"="+string(s.Value()))
			}
			require.NoError(t, s.Error())
			require.Equal(t, scanRange(t, d, rg, nil), got, "range %q", rg.Start)
		}
	} else {
		t.Log("a range of the three straddles two tables")
	}
	require.NoError(t, s.Close())
}

// scanRange returns the keys and values of rg read by a plain iterator.
func scanRange(t *testing.T, d *DB, rg ScanRange, ro *ReadOptions) []string {
	o := &IterOptions{LowerBound: rg.Start, UpperBound: rg.End}
	if ro != nil {
		o.ReadOptions = *ro
	}
	it, err := d.NewIter(o)
	require.NoError(t, err)
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	require.NoError(t, it.Close())
	return out
}

// TestCompactionReadsAhead: a compaction reads its inputs in windows of
// CompactionReadahead even on mapped tables whose reads the gauge says
// come from the page cache (where iterators step aside): it reads whole
// files, and their blocks may be cold whatever the foreground reads say.
func TestCompactionReadsAhead(t *testing.T) {
	d := readPathDB(t, 100000, nil) // ~12 MB of 4 KiB blocks, in mapped tables
	b := d.NewBatch()
	for i := 0; i < 100000; i += 10 {
		require.NoError(t, b.Set(fmt.Appendf(nil, "k%08d", i), []byte("v")))
	}
	require.NoError(t, b.Commit(NoSync))
	// The page cache serves these tables: the gauge says so (unless the
	// compaction's own reads are slow on a busy machine).
	for range 64 {
		d.ioPool.Latency().Observe(0)
	}
	before := d.Stats()
	require.NoError(t, d.Compact(nil, nil))
	st := d.Stats().Sub(before)
	reads, bytes := st.Get(stats.FileReadCount), st.Get(stats.FileReadBytes)
	t.Logf("compaction: %d reads, %d bytes", reads, bytes)
	require.Greater(t, bytes, int64(10<<20))
	require.Less(t, reads*100, bytes/4096, "far fewer reads than blocks")
}
