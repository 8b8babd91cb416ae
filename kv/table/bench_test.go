package table

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// benchEntries returns n entries with 16-byte user keys "key%013d" and
// 100-byte values, as db_bench writes them.
func benchEntries(n int) []entry {
	es := make([]entry, n)
	rng := rand.New(rand.NewPCG(50, 50))
	for i := range es {
		v := make([]byte, 100)
		for j := range v[:50] {
			v[j] = byte(rng.IntN(256)) // half random: compresses to about 0.5
		}
		es[i] = entry{ikey(fmt.Sprintf("key%013d", i), base.SeqNum(i+1), base.KindSet), v}
	}
	return es
}

func BenchmarkBlockIter(b *testing.B) {
	es := benchEntries(4096 / 130)
	block := buildBlock(es, 16)
	var keys [][]byte
	for _, e := range es {
		keys = append(keys, base.MakeSearchKey(nil, base.UserKey(e.k), base.SeqNumMax))
	}
	var it BlockIter
	require.NoError(b, it.Init(block))
	b.Run("SeekGE", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if it.SeekGE(keys[i%len(keys)]) == nil {
				b.Fatal("not found")
			}
		}
	})
	b.Run("Next", func(b *testing.B) {
		b.ReportAllocs()
		it.First()
		for b.Loop() {
			if it.Next() == nil {
				it.First()
			}
		}
	})
	b.Run("Prev", func(b *testing.B) {
		b.ReportAllocs()
		it.Last()
		for b.Loop() {
			if it.Prev() == nil {
				it.Last()
			}
		}
	})
}

func benchReader(b *testing.B, es []entry, opts WriterOptions, ro ReaderOptions) *Reader {
	fs := vfs.NewMem()
	writeTable(b, fs, "t", es, nil, opts)
	f, err := fs.Open("t")
	require.NoError(b, err)
	r, err := NewReader(f, "t", ro)
	require.NoError(b, err)
	b.Cleanup(func() { r.Close() })
	return r
}

func BenchmarkIterScan(b *testing.B) {
	es := benchEntries(100_000)
	for _, c := range []Compression{NoCompression, SnappyCompression} {
		for _, withCache := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/cache=%t", c, withCache), func(b *testing.B) {
				var ro ReaderOptions
				if withCache {
					ro.Cache = cache.New(64 << 20)
				}
				r := benchReader(b, es, WriterOptions{Compression: c}, ro)
				it := r.NewIter(IterOptions{})
				defer it.Close()
				for kv := it.First(); kv != nil; kv = it.Next() {
				}
				b.SetBytes(int64(r.Properties().RawKeySize+r.Properties().RawValueSize) / int64(len(es)))
				b.ReportAllocs()
				kv := it.First()
				for b.Loop() {
					if kv = it.Next(); kv == nil {
						kv = it.First()
					}
				}
			})
		}
	}
}

func BenchmarkGetCacheHit(b *testing.B) {
	es := benchEntries(100_000)
	r := benchReader(b, es, WriterOptions{Compression: SnappyCompression, FilterPolicy: filter.Policy{Type: filter.Bloom}},
		ReaderOptions{Cache: cache.New(64 << 20)})
	for _, e := range es {
		r.Get(base.UserKey(e.k), base.SeqNumMax, nil, nil)
	}
	rng := rand.New(rand.NewPCG(51, 51))
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		e := &es[rng.IntN(len(es))]
		v, _, _, found, err := r.Get(base.UserKey(e.k), base.SeqNumMax, dst[:0], nil)
		if err != nil || !found {
			b.Fatal(err, found)
		}
		dst = v
	}
}

func BenchmarkWriter(b *testing.B) {
	es := benchEntries(100_000)
	var raw int64
	for _, e := range es {
		raw += int64(len(e.k) + len(e.v))
	}
	for _, c := range []Compression{NoCompression, SnappyCompression, ZstdCompression} {
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(raw)
			b.ReportAllocs()
			for b.Loop() {
				w := NewWriter(discardFile{}, "t", WriterOptions{Compression: c, FilterPolicy: filter.Policy{Type: filter.Bloom}})
				for _, e := range es {
					if err := w.Add(e.k, e.v); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHotPathAllocs pins down what the benchmarks show: block moves, table
// iteration over cached blocks and Gets that hit the cache allocate nothing.
func TestHotPathAllocs(t *testing.T) {
	es := benchEntries(20_000)
	fs := vfs.NewMem()
	writeTable(t, fs, "t", es, nil, WriterOptions{Compression: SnappyCompression, FilterPolicy: filter.Policy{Type: filter.Bloom}})
	for _, withCache := range []bool{false, true} {
		f, err := fs.Open("t")
		require.NoError(t, err)
		var ro ReaderOptions
		if withCache {
			ro.Cache = cache.New(64 << 20)
		}
		r, err := NewReader(f, "t", ro)
		require.NoError(t, err)
		it := r.NewIter(IterOptions{})
		for kv := it.First(); kv != nil; kv = it.Next() {
		}
		it.First()
		next := func() {
			if it.Next() == nil {
				it.First()
			}
		}
		require.Zero(t, testing.AllocsPerRun(5000, next), "Iter.Next, cache=%t", withCache)
		i := 0
		seek := func() {
			it.SeekGE(es[(i*7919)%len(es)].k)
			i++
		}
		require.Zero(t, testing.AllocsPerRun(2000, seek), "Iter.SeekGE, cache=%t", withCache)
		require.NoError(t, it.Close())
		if withCache && !raceEnabled {
			var dst []byte
			get := func() {
				dst, _, _, _, _ = r.Get(base.UserKey(es[(i*7919)%len(es)].k), base.SeqNumMax, dst[:0], nil)
				i++
			}
			get()
			require.Zero(t, testing.AllocsPerRun(2000, get), "Get with a cache hit")
		}
		require.NoError(t, r.Close())
	}
}

// discardFile is a vfs.File that drops what is written to it, so that
// writer benchmarks measure the writer, not a filesystem.
type discardFile struct{ vfs.File }

func (discardFile) Write(p []byte) (int, error) { return len(p), nil }
func (discardFile) Sync() error                 { return nil }
func (discardFile) Close() error                { return nil }
