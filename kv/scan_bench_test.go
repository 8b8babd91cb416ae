//go:build unix

package kv

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
)

// BenchmarkScanVersions scans keys each of which holds several versions, as
// a row does after a burst of updates: in the memtable, or one version per
// level-0 table (the compaction trigger raised so that they stay there).
// cpu-ns/entry is the process's CPU time per live key the scan returns,
// which the machine's other load moves less than the time per operation.
func BenchmarkScanVersions(b *testing.B) {
	const keys = 10_000
	for _, where := range []string{"memtable", "l0"} {
		for _, versions := range []int{1, 8, 64} {
			if where == "l0" && versions > 8 {
				continue
			}
			b.Run(fmt.Sprintf("%s/versions=%d", where, versions), func(b *testing.B) {
				d, err := Open(b.TempDir(), &Options{FS: vfs.Default, MemtableSize: 256 << 20,
					L0CompactionTrigger: 64, L0SlowdownWritesTrigger: 80, L0StopWritesTrigger: 100})
				if err != nil {
					b.Fatal(err)
				}
				defer d.Close()
				rng := rand.New(rand.NewPCG(1, 2))
				val := benchValue(rng, 100)
				var key []byte
				for v := range versions {
					batch := d.NewBatch()
					for k := range keys {
						key = benchKey(key, uint64(k))
						if err := batch.Set(key, val); err != nil {
							b.Fatal(err)
						}
					}
					if err := batch.Commit(NoSync); err != nil {
						b.Fatal(err)
					}
					batch.Close()
					if where == "l0" || v == 0 && versions == 1 {
						if err := d.Flush(); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportAllocs()
				n := 0
				cpu0 := processCPU()
				for b.Loop() {
					it, err := d.NewIter(nil)
					if err != nil {
						b.Fatal(err)
					}
					for ok := it.First(); ok; ok = it.Next() {
						n++
					}
					if err := it.Close(); err != nil {
						b.Fatal(err)
					}
				}
				if n != b.N*keys {
					b.Fatalf("scanned %d keys, want %d", n, b.N*keys)
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(n), "cpu-ns/entry")
			})
		}
	}
}

// processCPU returns the CPU time the process has used, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkShortRange opens, seeks, reads and closes an iterator bounded
// to 100 consecutive keys of 200-byte values, at random, over a compacted
// database of 100,000 keys in 1 MiB tables: the shape of a SQL range
// statement's read (SUM(k) ... WHERE id BETWEEN ? AND ?+99). The memtable
// holds a few keys outside the ranges, as after writes elsewhere.
// cpu-ns/op is the process's CPU time per range.
func BenchmarkShortRange(b *testing.B) {
	const keys, span = 100_000, 100
	d, err := Open(b.TempDir(), &Options{FS: vfs.Default, TargetFileSize: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	val := benchValue(rng, 200)
	var key []byte
	batch := d.NewBatch()
	for k := range keys {
		key = benchKey(key, uint64(k))
		if err := batch.Set(key, val); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(NoSync); err != nil {
		b.Fatal(err)
	}
	batch.Close()
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	for k := keys; k < keys+10; k++ {
		if err := d.Set(benchKey(nil, uint64(k)), val, NoSync); err != nil {
			b.Fatal(err)
		}
	}
	lower, upper := []byte(nil), []byte(nil)
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		lo := uint64(rng.IntN(keys - span))
		lower, upper = benchKey(lower, lo), benchKey(upper, lo+span)
		it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for ok := it.SeekGE(lower); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
		if n != span {
			b.Fatalf("read %d keys, want %d", n, span)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
