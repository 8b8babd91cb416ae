package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// diskReader writes es to a real file and opens it with vfs.Default (with
// direct I/O when direct is set; the benchmark is skipped if the
// filesystem refuses it).
func diskReader(b *testing.B, es []entry, wo WriterOptions, ro ReaderOptions, direct bool) (*Reader, vfs.File) {
	name := filepath.Join(b.TempDir(), "000001.sst")
	require.NoError(b, os.WriteFile(name, buildTable(b, es, nil, wo), 0o644))
	opts := []vfs.OpenOption{vfs.RandomAccess}
	if direct {
		opts = append(opts, vfs.DirectIO)
	}
	f, err := vfs.Default.Open(name, opts...)
	if err != nil {
		b.Skipf("cannot open %s: %v", name, err)
	}
	r, err := NewReader(f, name, ro)
	require.NoError(b, err)
	b.Cleanup(func() { r.Close() })
	return r, f
}

// BenchmarkTableScan scans a table of about 12 MiB from a real file,
// without a block cache, with each readahead mode: "warm" reads from the
// page cache (the cost is the read calls), "cold" drops the file's pages
// before every scan, "direct" bypasses the page cache.
func BenchmarkTableScan(b *testing.B) {
	es := benchEntries(100_000)
	pool := prefetch.NewPool(8)
	defer pool.Close()
	modes := []struct {
		name string
		opts IterOptions
	}{
		{"off", IterOptions{MaxAutoReadahead: -1}},
		{"auto", IterOptions{}},
		{"explicit-1m", IterOptions{ReadaheadSize: 1 << 20}},
		{"auto-async", IterOptions{AsyncIO: true}},
		{"explicit-1m-async", IterOptions{ReadaheadSize: 1 << 20, AsyncIO: true}},
	}
	for _, where := range []string{"warm", "cold", "direct"} {
		for _, m := range modes {
			b.Run(where+"/"+m.name, func(b *testing.B) {
				st := &stats.Counters{}
				r, f := diskReader(b, es, WriterOptions{Compression: SnappyCompression},
					ReaderOptions{Pool: pool, Stats: st}, where == "direct")
				b.SetBytes(int64(r.DataEnd()))
				b.ReportAllocs()
				st.Reset()
				scans := 0
				for b.Loop() {
					if where == "cold" {
						b.StopTimer()
						require.NoError(b, f.Evict())
						b.StartTimer()
					}
					it := r.NewIter(m.opts)
					n := 0
					for kv := it.First(); kv != nil; kv = it.Next() {
						n++
					}
					if err := it.Close(); err != nil || n != len(es) {
						b.Fatal(err, n)
					}
					scans++
				}
				b.ReportMetric(float64(st.Get(stats.FileReadCount))/float64(scans), "reads/scan")
			})
		}
	}
}

// BenchmarkMultiGet compares a batch of 32 keys with a stride of 4 (keys
// share blocks), all cached, looked up with MultiGet and with 32 Gets.
func BenchmarkMultiGet(b *testing.B) {
	es := benchEntries(100_000)
	data := buildTable(b, es, nil, WriterOptions{Compression: SnappyCompression, FilterPolicy: filter.Policy{Type: filter.Bloom}})
	r, err := openBytes(data, ReaderOptions{Cache: cache.New(64 << 20)})
	require.NoError(b, err)
	defer r.Close()
	it := r.NewIter(IterOptions{})
	for kv := it.First(); kv != nil; kv = it.Next() {
	}
	require.NoError(b, it.Close())
	const batch, stride = 32, 4
	keys := make([][]byte, batch)
	hashes := make([]uint64, batch)
	res := make([]GetResult, batch)
	rng := rand.New(rand.NewPCG(40, 40))
	pick := func() {
		start := rng.IntN(len(es) - batch*stride)
		for i := range keys {
			keys[i] = base.UserKey(es[start+i*stride].k)
			hashes[i] = filter.Hash(keys[i])
		}
	}
	b.Run("MultiGet", func(b *testing.B) {
		arena := make([]byte, 0, 8<<10)
		b.ReportAllocs()
		for b.Loop() {
			pick()
			clear(res)
			var err error
			if arena, err = r.MultiGet(keys, hashes, base.SeqNumMax, res, arena[:0], nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/key")
	})
	b.Run("Gets", func(b *testing.B) {
		var dst []byte
		b.ReportAllocs()
		for b.Loop() {
			pick()
			for _, k := range keys {
				v, _, _, found, err := r.Get(k, base.SeqNumMax, dst[:0], nil)
				if err != nil || !found {
					b.Fatal(err, found)
				}
				dst = v
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/key")
	})
}

// BenchmarkMultiScan reads 10 ranges of 100 keys, 100 keys apart, from a
// real file with a cold block cache: prepared (synchronous and async
// reads), and with one plain iterator per range.
func BenchmarkMultiScan(b *testing.B) {
	es := benchEntries(100_000)
	pool := prefetch.NewPool(8)
	defer pool.Close()
	key := func(i int) []byte { return base.UserKey(es[i].k) }
	rng := rand.New(rand.NewPCG(41, 41))
	ranges := func() []ScanRange {
		start := rng.IntN(len(es) - 2100)
		rs := make([]ScanRange, 10)
		for i := range rs {
			rs[i] = ScanRange{Start: key(start + 200*i), End: key(start + 200*i + 100)}
		}
		return rs
	}
	for _, mode := range []string{"iterators", "prepare", "prepare-async"} {
		b.Run(mode, func(b *testing.B) {
			st := &stats.Counters{}
			r, _ := diskReader(b, es, WriterOptions{Compression: SnappyCompression}, ReaderOptions{Pool: pool, Stats: st}, false)
			b.ReportAllocs()
			ops := 0
			for b.Loop() {
				rs := ranges()
				n := 0
				if mode == "iterators" {
					for _, rg := range rs {
						it := r.NewIter(IterOptions{Lower: rg.Start, Upper: rg.End})
						for kv := it.First(); kv != nil; kv = it.Next() {
							n++
						}
						it.Close()
					}
				} else {
					p, err := r.PrepareScan(context.Background(), rs, PrepareOptions{Async: mode == "prepare-async"})
					if err != nil {
						b.Fatal(err)
					}
					it := p.NewIter(IterOptions{})
					for _, rg := range rs {
						for kv := it.SeekGE(base.MakeSearchKey(nil, rg.Start, base.SeqNumMax)); kv != nil; kv = it.Next() {
							n++
						}
					}
					it.Close()
					p.Close()
				}
				if n != 1000 {
					b.Fatal(fmt.Sprint("got ", n, " keys"))
				}
				ops++
			}
			b.ReportMetric(float64(st.Get(stats.FileReadCount))/float64(ops), "reads/op")
		})
	}
}

// BenchmarkRangeScan reads short ranges (100 entries of about 220 bytes,
// some 6 blocks) at random places of a mapped, uncompressed table of 200,000
// entries in the page cache, each with a fresh iterator bounded above, as
// a SQL range read does (without readahead): the cost of its block copies
// from the mapping,
// their checksums and the iteration.
func BenchmarkRangeScan(b *testing.B) {
	const n, span = 200_000, 100
	es := make([]entry, n)
	v := make([]byte, 200)
	for i := range es {
		es[i] = entry{ikey(fmt.Sprintf("key%013d", i), base.SeqNum(i+1), base.KindSet), v}
	}
	pool := prefetch.NewPool(8)
	defer pool.Close()
	name := filepath.Join(b.TempDir(), "000001.sst")
	require.NoError(b, os.WriteFile(name, buildTable(b, es, nil, WriterOptions{Compression: NoCompression}), 0o644))
	f, err := vfs.Default.Open(name, vfs.RandomAccess, vfs.MemoryMap)
	require.NoError(b, err)
	if _, ok := f.(vfs.Mapped); !ok {
		b.Skip("the file is not mapped")
	}
	r, err := NewReader(f, name, ReaderOptions{Pool: pool})
	require.NoError(b, err)
	defer r.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	var it Iter
	var lo, hi, search []byte
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		i := rng.IntN(n - span)
		lo, hi = appendBenchKey(lo[:0], i), appendBenchKey(hi[:0], i+span)
		search = base.MakeSearchKey(search[:0], lo, base.SeqNumMax)
		r.InitIter(&it, IterOptions{Upper: hi, MaxAutoReadahead: -1})
		got := 0
		for kv := it.SeekGE(search); kv != nil; kv = it.Next() {
			got++
		}
		if err := it.Close(); err != nil || got != span {
			b.Fatal(err, got)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// appendBenchKey appends the user key of benchEntries' entry i,
// "key%013d", without fmt's boxing of i.
func appendBenchKey(dst []byte, i int) []byte {
	dst = append(dst, "key0000000000000"...)
	for j := len(dst) - 1; i > 0; j-- {
		dst[j] = byte('0' + i%10)
		i /= 10
	}
	return dst
}

// processCPU returns the CPU time the process has used, in nanoseconds: on
// a shared machine, a benchmark's time per operation measures the
// neighbours as much as the code.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestRangeScanKeys checks appendBenchKey against the format it replaces.
func TestRangeScanKeys(t *testing.T) {
	for _, i := range []int{0, 7, 10, 99_999, 199_999, 1_234_567_890_123} {
		require.Equal(t, fmt.Sprintf("key%013d", i), string(appendBenchKey(nil, i)))
	}
}

// TestBoundedMappedScanAllocs pins down what BenchmarkRangeScan shows: a
// short bounded scan of a mapped, uncompressed table, its iterator reused
// (InitIter), allocates nothing once its buffers have grown.
func TestBoundedMappedScanAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers under the race detector")
	}
	const n, span = 20_000, 100
	es := make([]entry, n)
	v := make([]byte, 200)
	for i := range es {
		es[i] = entry{ikey(string(appendBenchKey(nil, i)), base.SeqNum(i+1), base.KindSet), v}
	}
	name := filepath.Join(t.TempDir(), "000001.sst")
	require.NoError(t, os.WriteFile(name, buildTable(t, es, nil, WriterOptions{Compression: NoCompression}), 0o644))
	f, err := vfs.Default.Open(name, vfs.RandomAccess, vfs.MemoryMap)
	require.NoError(t, err)
	r, err := NewReader(f, name, ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	var it Iter
	var lo, hi, search []byte
	i := 0
	scan := func() {
		i = (i + 7919) % (n - span)
		lo, hi = appendBenchKey(lo[:0], i), appendBenchKey(hi[:0], i+span)
		search = base.MakeSearchKey(search[:0], lo, base.SeqNumMax)
		r.InitIter(&it, IterOptions{Upper: hi, MaxAutoReadahead: -1})
		got := 0
		for kv := it.SeekGE(search); kv != nil; kv = it.Next() {
			got++
		}
		require.NoError(t, it.Close())
		require.Equal(t, span, got)
	}
	scan()
	require.Zero(t, testing.AllocsPerRun(500, scan))
}
