package table

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// readaheadModes are the readahead settings every correctness test runs.
var readaheadModes = []struct {
	name string
	opts IterOptions
}{
	{"off", IterOptions{MaxAutoReadahead: -1}},
	{"auto", IterOptions{}},
	{"auto-tiny", IterOptions{InitialAutoReadahead: 100, MaxAutoReadahead: 1000}},
	{"explicit-3000", IterOptions{ReadaheadSize: 3000}},
	{"explicit-64k", IterOptions{ReadaheadSize: 64 << 10}},
	{"auto-async", IterOptions{AsyncIO: true}},
	{"explicit-async", IterOptions{ReadaheadSize: 20 << 10, AsyncIO: true}},
	{"tiny-async", IterOptions{InitialAutoReadahead: 100, MaxAutoReadahead: 1000, AsyncIO: true}},
}

// randomBound returns nil or a user key near the entries.
func randomBound(rng *rand.Rand, es []entry) []byte {
	if rng.IntN(3) == 0 {
		return nil
	}
	return base.UserKey(randomSearchKey(rng, es))
}

// TestIterReadahead checks iterators with every readahead mode, with and
// without a cache, buffered and with aligned (direct) reads, against the
// model: random bounds, random seeks and moves in both directions. Without
// async reads (an earlier iterator's may still be landing) and alignment,
// no read passes the block that holds the upper bound.
func TestIterReadahead(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	n, steps, boundsPerCase := 3000, 300, 4
	if raceEnabled {
		n, steps, boundsPerCase = 800, 80, 2
	}
	es := randomEntries(rng, n, true)
	eachReadaheadCase(t, es, func(t *testing.T, r *Reader, cf *checkedFile, mode IterOptions) {
		for range boundsPerCase {
			lower, upper := randomBounds(rng, es)
			opts := mode
			opts.Lower, opts.Upper = lower, upper
			if !mode.AsyncIO && cf.align == 1 {
				cf.mu.Lock()
				cf.maxEnd = int64(r.readLimit(upper))
				cf.mu.Unlock()
			}
			it := r.NewIter(opts)
			checkIter(t, rng, it, newModel(es, lower, upper), es, steps)
			require.NoError(t, it.Close())
		}
	})
}

// eachReadaheadCase runs f on a table of es in every readahead mode, with
// aligned (direct) reads and without, with a block cache far smaller than
// the table and without; afterwards the file saw no misuse and the cache
// holds no pin.
func eachReadaheadCase(t *testing.T, es []entry, f func(t *testing.T, r *Reader, cf *checkedFile, mode IterOptions)) {
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 300, Compression: SnappyCompression})
	pool := prefetch.NewPool(4)
	defer pool.Close()
	for _, align := range []int{1, 512} {
		for _, withCache := range []bool{false, true} {
			for _, mode := range readaheadModes {
				t.Run(fmt.Sprintf("align=%d/cache=%t/%s", align, withCache, mode.name), func(t *testing.T) {
					ro := ReaderOptions{Pool: pool}
					if withCache {
						ro.Cache = cache.New(16 << 10)
					}
					r, cf := openAligned(t, data, align, ro)
					defer r.Close()
					f(t, r, cf, mode.opts)
					require.Empty(t, cf.errors())
					if withCache {
						require.Zero(t, ro.Cache.Pinned())
					}
				})
			}
		}
	}
}

// randomBounds returns random bounds near es, lower <= upper.
func randomBounds(rng *rand.Rand, es []entry) (lower, upper []byte) {
	lower, upper = randomBound(rng, es), randomBound(rng, es)
	if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
		lower, upper = upper, lower
	}
	return lower, upper
}

// checkedFile is a file that records misuse: unaligned reads when align >
// 1, and reads past maxEnd when set. Safe for concurrent ReadAt.
type checkedFile struct {
	vfs.File
	align  int
	mu     sync.Mutex
	maxEnd int64
	errs   []string
	reads  int
}

func (f *checkedFile) Alignment() int { return f.align }

func (f *checkedFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	f.reads++
	if f.align > 1 && (off%int64(f.align) != 0 || !vfs.IsAligned(p, f.align)) {
		f.errs = append(f.errs, fmt.Sprintf("unaligned read of %d bytes at %d", len(p), off))
	}
	if f.maxEnd > 0 && off+int64(len(p)) > f.maxEnd {
		f.errs = append(f.errs, fmt.Sprintf("read [%d, %d) past %d", off, off+int64(len(p)), f.maxEnd))
	}
	f.mu.Unlock()
	return f.File.ReadAt(p, off)
}

func (f *checkedFile) errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errs
}

// openAligned opens data through a checkedFile that demands alignment
// align.
func openAligned(t testing.TB, data []byte, align int, ro ReaderOptions) (*Reader, *checkedFile) {
	t.Helper()
	fs := vfs.NewMem()
	require.NoError(t, vfs.WriteFileSync(fs, "", "t.sst", data))
	f, err := fs.Open("t.sst")
	require.NoError(t, err)
	cf := &checkedFile{File: f, align: align}
	r, err := NewReader(cf, "t.sst", ro)
	require.NoError(t, err)
	return r, cf
}

// TestIterReadaheadDiskFiles runs the readahead modes on a real file opened
// with O_DIRECT, and on one that is memory-mapped: the same entries, and
// each mode's reads take the way the file offers (aligned, or copied from
// the mapping).
func TestIterReadaheadDiskFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	es := randomEntries(rng, 2000, true)
	zstd := filepath.Join(t.TempDir(), "000001.sst")
	require.NoError(t, os.WriteFile(zstd, buildTable(t, es, nil, WriterOptions{BlockSize: 700, Compression: ZstdCompression}), 0o644))
	raw := filepath.Join(t.TempDir(), "000002.sst")
	require.NoError(t, os.WriteFile(raw, buildTable(t, es, nil, WriterOptions{BlockSize: 700, Compression: NoCompression}), 0o644))
	for _, file := range []struct {
		name string
		path string
		open vfs.OpenOption
	}{
		{"direct", zstd, vfs.DirectIO},
		{"mapped", zstd, vfs.MemoryMap},
		{"mapped-raw", raw, vfs.MemoryMap}, // blocks read in place, bypassing the cache
	} {
		name := file.path
		for _, mode := range readaheadModes {
			t.Run(file.name+"/"+mode.name, func(t *testing.T) {
				f, err := vfs.Default.Open(name, file.open)
				if err != nil {
					t.Skipf("the filesystem refuses O_DIRECT: %v", err)
				}
				_, mapped := f.(vfs.Mapped)
				switch file.open {
				case vfs.DirectIO:
					if f.Alignment() <= 1 {
						t.Fatalf("a file opened with DirectIO reports alignment %d", f.Alignment())
					}
				case vfs.MemoryMap:
					require.Equal(t, vfs.CanMap, mapped)
				}
				// A pool of its own: its latency gauge starts fast, so the
				// first reads of a mapped file are copies whatever the
				// reads of the subtests before took on a busy machine.
				pool := prefetch.NewPool(4)
				defer pool.Close()
				st := &stats.Counters{}
				// With a cache, which a mapped file's reads bypass.
				r, err := NewReader(f, name, ReaderOptions{Pool: pool, Stats: st, Cache: cache.New(1 << 20)})
				require.NoError(t, err)
				defer r.Close()
				opts := mode.opts
				it := r.NewIter(opts)
				requireScan(t, it, es)
				m := newModel(es, nil, nil)
				m.pos = len(m.es) // where the scan left the iterator
				checkIter(t, rng, it, m, es, 200)
				require.NoError(t, it.Close())
				for _, e := range es[:200] {
					v, _, _, found, err := r.Get(base.UserKey(e.k), base.SeqNumMax, nil, nil)
					require.NoError(t, err)
					require.True(t, found)
					require.True(t, bytes.Equal(getTruth(es, base.UserKey(e.k), base.SeqNumMax).v, v))
				}
				if mode.name != "off" && !mapped {
					require.Positive(t, st.Get(stats.PrefetchBytesUsed))
				}
				// A mapped file whose reads come from the page cache is
				// read block by block from the mapping: readahead steps
				// aside (prefetch.Buffer's pageCached; its tests cover a
				// mapped file whose reads are slow).
				if mapped {
					require.Positive(t, st.Get(stats.FileReadMapped))
				} else {
					require.Zero(t, st.Get(stats.FileReadMapped))
				}
			})
		}
	}
}

// scanTable writes a table of about nBlocks data blocks of 4 KiB.
func scanTable(t testing.TB, nBlocks int) ([]entry, []byte) {
	var es []entry
	for i := range nBlocks * 30 {
		es = append(es, entry{ikey(fmt.Sprintf("key%08d", i), 1, base.KindSet), bytes.Repeat([]byte{byte(i)}, 120)})
	}
	return es, buildTable(t, es, nil, WriterOptions{BlockSize: 4096})
}

// TestIterReadaheadCounters checks with counters that readahead ran: a
// scan of 1,000 blocks makes far fewer read calls than blocks, reads each
// byte once, uses what it prefetched, and stays inside the upper bound.
func TestIterReadaheadCounters(t *testing.T) {
	es, data := scanTable(t, 1000)
	pool := prefetch.NewPool(4)
	defer pool.Close()
	for _, tc := range []struct {
		name     string
		opts     IterOptions
		maxReads int64
	}{
		{"off", IterOptions{MaxAutoReadahead: -1}, 1 << 30},
		{"auto", IterOptions{}, 40},
		{"explicit-1m", IterOptions{ReadaheadSize: 1 << 20}, 10},
		{"auto-async", IterOptions{AsyncIO: true}, 60},
		{"explicit-async", IterOptions{ReadaheadSize: 1 << 20, AsyncIO: true}, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, cf := openAligned(t, data, 1, ReaderOptions{Pool: pool})
			defer r.Close()
			blocks := int64(r.NumDataBlocks())
			require.Greater(t, blocks, int64(900))
			op := &stats.Counters{}
			opts := tc.opts
			opts.Stats = op
			it := r.NewIter(opts)
			n := 0
			for kv := it.First(); kv != nil; kv = it.Next() {
				n++
			}
			require.NoError(t, it.Close())
			require.Equal(t, len(es), n)
			reads := op.Get(stats.FileReadCount)
			if tc.name == "off" {
				require.Equal(t, blocks, reads)
				require.Zero(t, op.Get(stats.PrefetchBytes))
				return
			}
			require.LessOrEqual(t, reads, tc.maxReads, "read calls for %d blocks", blocks)
			require.Equal(t, int64(r.DataEnd()), op.Get(stats.FileReadBytes), "every byte read once, none past the data")
			require.Zero(t, op.Get(stats.PrefetchBytesWasted))
			require.Equal(t, op.Get(stats.PrefetchBytes), op.Get(stats.PrefetchBytesUsed))
			require.Greater(t, op.Get(stats.PrefetchHits), blocks/2)
			if tc.opts.AsyncIO {
				require.Positive(t, op.Get(stats.AsyncReadCount))
				require.Less(t, op.Get(stats.AsyncWaitCount), op.Get(stats.AsyncReadCount)+1)
			}

			// With an upper bound no read passes the block holding it.
			upper := []byte("key00015000")
			limit := r.readLimit(upper)
			require.Less(t, limit, r.DataEnd())
			cf.mu.Lock()
			cf.maxEnd = int64(limit)
			cf.mu.Unlock()
			opts.Lower, opts.Upper = []byte("key00003000"), upper
			it = r.NewIter(opts)
			n = 0
			for kv := it.First(); kv != nil; kv = it.Next() {
				n++
			}
			require.NoError(t, it.Close())
			require.Equal(t, 12000, n)
			require.Empty(t, cf.errors())
		})
	}
}

// TestIterReadaheadCacheHits checks that readahead and the block cache work
// together: a second scan is served by the cache without reads, and a scan
// whose first blocks are cached reads ahead from its first miss.
func TestIterReadaheadCacheHits(t *testing.T) {
	_, data := scanTable(t, 300)
	c := cache.New(64 << 20)
	r, _ := openAligned(t, data, 1, ReaderOptions{Cache: c})
	defer r.Close()
	// Cache the first 10 blocks.
	it := r.NewIter(IterOptions{Upper: []byte("key00000300"), MaxAutoReadahead: -1})
	for kv := it.First(); kv != nil; kv = it.Next() {
	}
	require.NoError(t, it.Close())
	op := &stats.Counters{}
	it = r.NewIter(IterOptions{Stats: op})
	for kv := it.First(); kv != nil; kv = it.Next() {
	}
	require.NoError(t, it.Close())
	require.Equal(t, int64(10), op.Get(stats.BlockCacheHit))
	require.Less(t, op.Get(stats.FileReadCount), int64(10), "the cached run counted as sequential")
	require.Equal(t, op.Get(stats.PrefetchBytes), op.Get(stats.PrefetchBytesUsed))
	op.Reset()
	it = r.NewIter(IterOptions{Stats: op, ReadaheadSize: 1 << 20, AsyncIO: true})
	for kv := it.First(); kv != nil; kv = it.Next() {
	}
	require.NoError(t, it.Close())
	require.Zero(t, op.Get(stats.FileReadCount), "everything cached")
	require.Zero(t, c.Pinned())
}

// TestAsyncIterConcurrent runs goroutines with async iterators over one
// reader and one pool, each on a random schedule of seeks and moves in both
// directions, against the model. Run it with -race.
func TestAsyncIterConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	es := randomEntries(rng, 3000, true)
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 256, Compression: SnappyCompression})
	pool := prefetch.NewPool(3)
	defer pool.Close()
	for _, withCache := range []bool{false, true} {
		var c *cache.Cache
		if withCache {
			c = cache.New(32 << 10)
		}
		r, af := openAligned(t, data, 512, ReaderOptions{Pool: pool, Cache: c})
		workers, ops := 6, 60
		if raceEnabled {
			ops = 25
		}
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 14))
				opts := IterOptions{AsyncIO: true}
				if w%2 == 0 {
					opts.ReadaheadSize = int64(1000 + rng.IntN(30000))
				}
				errs <- asyncWorker(r, es, rng, opts, ops)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Empty(t, af.errors())
		if c != nil {
			require.Zero(t, c.Pinned())
		}
		require.NoError(t, r.Close())
	}
}

func asyncWorker(r *Reader, es []entry, rng *rand.Rand, opts IterOptions, ops int) error {
	for range ops {
		it := r.NewIter(opts)
		m := &model{es: es, pos: -2}
		var got *base.KV
		var want *entry
		var what string
		switch rng.IntN(4) {
		case 0:
			got, want, what = it.First(), m.first(), "First"
		case 1:
			got, want, what = it.Last(), m.last(), "Last"
		default:
			k := randomSearchKey(rng, es)
			got, want, what = it.SeekGE(k), m.seekGE(k), "SeekGE "+base.FormatKey(k)
		}
		for n := 0; ; n++ {
			if (got == nil) != (want == nil) || got != nil && (!bytes.Equal(got.K, want.k) || !bytes.Equal(got.V, want.v)) {
				it.Close()
				return fmt.Errorf("after %s and %d moves: got %s, want %s (err %v)", what, n, fmtKV(got), fmtEntry(want), it.Error())
			}
			if n == 150 {
				break
			}
			switch x := rng.IntN(20); {
			case x == 0:
				k := randomSearchKey(rng, es)
				got, want = it.SeekGE(k), m.seekGE(k)
			case x == 1:
				k := randomSearchKey(rng, es)
				got, want = it.SeekLT(k), m.seekLT(k)
			case x < 5:
				got, want = it.Prev(), m.prev()
			default:
				got, want = it.Next(), m.next()
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return nil
}

// TestIterNoFileOpens checks that iterators read through the reader's one
// file: a thousand concurrent readahead iterators open nothing.
func TestIterNoFileOpens(t *testing.T) {
	_, data := scanTable(t, 50)
	fs := &countingFS{FS: vfs.NewMem()}
	require.NoError(t, vfs.WriteFileSync(fs, "", "t.sst", data))
	f, err := fs.Open("t.sst")
	require.NoError(t, err)
	r, err := NewReader(f, "t.sst", ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	opens := fs.opens
	var its []*Iter
	for i := range 1000 {
		it := r.NewIter(IterOptions{ReadaheadSize: 64 << 10, AsyncIO: i%2 == 0})
		require.NotNil(t, it.SeekGE(base.MakeSearchKey(nil, fmt.Appendf(nil, "key%08d", i), base.SeqNumMax)))
		its = append(its, it)
	}
	for _, it := range its {
		require.NoError(t, it.Close())
	}
	require.Equal(t, opens, fs.opens)
}

type countingFS struct {
	vfs.FS
	opens int
}

func (fs *countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	fs.opens++
	return fs.FS.Open(name, opts...)
}

// TestIterReadError checks that a read error met while reading ahead
// surfaces as the iterator's error, naming the file.
func TestIterReadError(t *testing.T) {
	_, data := scanTable(t, 100)
	fs := vfs.NewMem()
	require.NoError(t, vfs.WriteFileSync(fs, "", "t.sst", data))
	f, err := fs.Open("t.sst")
	require.NoError(t, err)
	ff := &failAfterFile{File: f}
	r, err := NewReader(ff, "t.sst", ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	ff.failFrom = int64(r.DataEnd() / 2)
	for _, opts := range []IterOptions{{}, {ReadaheadSize: 32 << 10}} {
		it := r.NewIter(opts)
		for kv := it.First(); kv != nil; kv = it.Next() {
		}
		require.ErrorIs(t, it.Error(), errInjected)
		require.ErrorContains(t, it.Error(), "t.sst")
		require.ErrorIs(t, it.Close(), errInjected)
	}
}

var errInjected = errors.New("injected read error")

type failAfterFile struct {
	vfs.File
	failFrom int64
}

func (f *failAfterFile) ReadAt(p []byte, off int64) (int, error) {
	if f.failFrom > 0 && off+int64(len(p)) > f.failFrom {
		return 0, errInjected
	}
	return f.File.ReadAt(p, off)
}

// TestReadaheadAllocs checks that iterating with readahead, synchronous or
// async, allocates nothing per block once the iterator's buffers exist.
func TestReadaheadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	_, data := scanTable(t, 300)
	pool := prefetch.NewPool(2)
	defer pool.Close()
	for _, mode := range readaheadModes {
		r, _ := openAligned(t, data, 512, ReaderOptions{Pool: pool})
		it := r.NewIter(mode.opts)
		for kv := it.First(); kv != nil; kv = it.Next() {
		}
		it.First()
		next := func() {
			if it.Next() == nil {
				it.First()
			}
		}
		require.Zero(t, testing.AllocsPerRun(20_000, next), "Next, %s", mode.name)
		require.NoError(t, it.Close())
		require.NoError(t, r.Close())
	}
}

// TestIterSetBounds moves one iterator from bounds to bounds and checks it
// against the model of each, in every readahead mode, with and without a
// cache and alignment; without async reads (whose reads in flight were
// issued under the old bounds) no read passes the new upper bound's block.
func TestIterSetBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	n, steps, rounds := 3000, 100, 6
	if raceEnabled {
		n, steps, rounds = 800, 40, 3
	}
	es := randomEntries(rng, n, true)
	eachReadaheadCase(t, es, func(t *testing.T, r *Reader, cf *checkedFile, mode IterOptions) {
		it := r.NewIter(mode)
		for range rounds {
			lower, upper := randomBounds(rng, es)
			it.SetBounds(lower, upper)
			if !mode.AsyncIO && cf.align == 1 {
				cf.mu.Lock()
				cf.maxEnd = int64(r.readLimit(upper))
				cf.mu.Unlock()
			}
			checkIter(t, rng, it, newModel(es, lower, upper), es, steps)
		}
		require.NoError(t, it.Close())
	})
}

// TestMappedReadsBypassCache: blocks of a mapped file whose reads are fast
// are copied from the mapping into the reader's buffers, bypassing the
// block cache, while the table's blocks are stored raw; a compressed table,
// and reads that have been slow, go through the cache. Every way returns
// the same values.
func TestMappedReadsBypassCache(t *testing.T) {
	if !vfs.CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	es, _ := scanTable(t, 100)
	for _, tc := range []struct {
		name        string
		compression Compression
		slow        bool
		bypass      bool
	}{
		{"raw", NoCompression, false, true},
		{"compressed", ZstdCompression, false, false},
		{"raw, slow reads", NoCompression, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Values that compress, so that zstd blocks are stored
			// compressed.
			data := buildTable(t, es[:3000], nil, WriterOptions{BlockSize: 4096, Compression: tc.compression})
			f, name := openMapped(t, data)
			// Only the slow case has a pool, whose latency gauge it sets.
			// Without one a reader counts every read as fast, so that the
			// other cases do not depend on how fast this machine's reads
			// are while the test runs (a busy machine can make copies from
			// the page cache look slow, and the cache is then used).
			var pool *prefetch.Pool
			if tc.slow {
				pool = prefetch.NewPool(2)
				defer pool.Close()
			}
			st := &stats.Counters{}
			r, err := NewReader(f, name, ReaderOptions{Pool: pool, Stats: st, Cache: cache.New(16 << 20)})
			require.NoError(t, err)
			defer r.Close()
			before := st.Snapshot()
			for round := range 2 {
				for i := 0; i < 3000; i += 7 {
					if tc.slow {
						// Each read is fast here; the device is not.
						for range 4 {
							pool.Latency().Observe(time.Second)
						}
					}
					v, _, _, found, err := r.Get(base.UserKey(es[i].k), base.SeqNumMax, nil, nil)
					require.NoError(t, err)
					require.True(t, found)
					require.Equal(t, es[i].v, v, "round %d key %d", round, i)
				}
			}
			if tc.slow {
				// The reads were slow (the gauge says so): none was
				// copied from the mapping. The scan below turns the
				// gauge fast with its own reads.
				require.Zero(t, st.Get(stats.FileReadMapped)-before.Get(stats.FileReadMapped))
			}
			it := r.NewIter(IterOptions{})
			n := 0
			for kv := it.First(); kv != nil; kv = it.Next() {
				require.Equal(t, es[n].v, kv.V)
				n++
			}
			require.NoError(t, it.Close())
			require.Equal(t, 3000, n)
			added := st.Get(stats.BlockCacheAdd) - before.Get(stats.BlockCacheAdd)
			mapped := st.Get(stats.FileReadMapped) - before.Get(stats.FileReadMapped)
			if tc.bypass {
				require.Zero(t, added, "the cache was bypassed")
				require.Zero(t, st.Get(stats.BlockCacheHit)-before.Get(stats.BlockCacheHit))
				require.Positive(t, mapped)
			} else {
				require.Positive(t, added, "blocks went into the cache")
				require.Positive(t, st.Get(stats.BlockCacheHit)-before.Get(stats.BlockCacheHit), "and were found there")
			}
		})
	}
}
