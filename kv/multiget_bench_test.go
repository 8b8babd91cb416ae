package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
)

// multiGetBenchKeys is the number of keys of the MultiGet benchmarks'
// database.
const multiGetBenchKeys = 200_000

// multiGetBenchDB returns a database of multiGetBenchKeys keys (benchKey
// format) with 100-byte values, compacted into tables, whose blocks are all
// in the block cache: the fully cached setting of RocksDB's MultiGet
// benchmark, where what is measured is the lookup itself.
func multiGetBenchDB(b *testing.B) *DB {
	d, err := Open(b.TempDir(), &Options{FS: vfs.Default, CacheSize: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	rng := rand.New(rand.NewPCG(1, 2))
	val := benchValue(rng, 100)
	batch := d.NewBatch()
	var key []byte
	for i := range uint64(multiGetBenchKeys) {
		key = benchKey(key, i)
		if err := batch.Set(key, val); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(NoSync); err != nil {
		b.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	// One pass over every key loads every block into the cache.
	it, err := d.NewIter(nil)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil || n != multiGetBenchKeys {
		b.Fatalf("warming the cache: %d keys, %v", n, err)
	}
	return d
}

// BenchmarkMultiGet looks up one batch of keys per operation, so allocs/op
// (-benchmem) is per batch: with DB.MultiGet it should not grow with the
// batch size, while a loop of Get allocates at least once per key. Keys
// are random, or r, r+4, r+8, ... (stride=4, RocksDB's -multiread_stride=4:
// keys share blocks). ns/key is the time per key looked up.
//
//	go test ./kv -run '^$' -bench MultiGet -benchmem
func BenchmarkMultiGet(b *testing.B) {
	d := multiGetBenchDB(b)
	for _, bc := range []struct {
		api    string
		batch  int
		stride uint64 // 0: random keys
	}{
		{"MultiGet", 8, 4},
		{"MultiGet", 32, 4},
		{"MultiGet", 128, 4},
		{"MultiGet", 32, 0},
		{"MultiGet", 2, 0},
		{"Get", 32, 4},
		{"Get", 32, 0},
		{"Get", 2, 0},
	} {
		keysName := "random"
		if bc.stride > 0 {
			keysName = fmt.Sprintf("stride=%d", bc.stride)
		}
		b.Run(fmt.Sprintf("%s/batch=%d/%s", bc.api, bc.batch, keysName), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			keys := make([][]byte, bc.batch)
			for i := range keys {
				keys[i] = make([]byte, 0, 16)
			}
			var dst [][]byte
			var found int
			b.ReportAllocs()
			for b.Loop() {
				if bc.stride > 0 {
					r := rng.Uint64N(multiGetBenchKeys - uint64(bc.batch)*bc.stride)
					for i := range keys {
						keys[i] = benchKey(keys[i], r+uint64(i)*bc.stride)
					}
				} else {
					for i := range keys {
						keys[i] = benchKey(keys[i], rng.Uint64N(multiGetBenchKeys))
					}
				}
				if bc.api == "MultiGet" {
					var err error
					if dst, err = d.MultiGet(keys, nil, dst); err != nil {
						b.Fatal(err)
					}
					for _, v := range dst {
						if v != nil {
							found++
						}
					}
					continue
				}
				for _, k := range keys {
					if _, err := d.Get(k, nil); err != nil {
						b.Fatal(err)
					}
					found++
				}
			}
			if found != b.N*bc.batch {
				b.Fatalf("found %d of %d keys", found, b.N*bc.batch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bc.batch), "ns/key")
		})
	}
}
