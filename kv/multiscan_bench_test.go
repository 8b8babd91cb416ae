package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMultiScan reads ten ranges of ten keys, 100 keys apart (so a
// few ranges share each 8 MiB table), from the fully cached database of
// the MultiGet benchmarks: one operation is one MultiScan (prepared, then
// iterated), or ten bounded iterators (prepare=false).
//
//	go test ./kv -run '^$' -bench MultiScan -benchmem
func BenchmarkMultiScan(b *testing.B) {
	d := multiGetBenchDB(b)
	const ranges, width, stride = 10, 10, 100
	for _, prepare := range []bool{true, false} {
		b.Run(fmt.Sprintf("prepare=%t", prepare), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			rs := make([]ScanRange, ranges)
			for i := range rs {
				rs[i] = ScanRange{Start: make([]byte, 0, 16), End: make([]byte, 0, 16)}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				first := rng.Uint64N(multiGetBenchKeys - ranges*(width+stride))
				for i := range rs {
					k := first + uint64(i)*(width+stride)
					rs[i].Start, rs[i].End = benchKey(rs[i].Start[:0], k), benchKey(rs[i].End[:0], k+width)
				}
				n := 0
				if prepare {
					s, err := d.NewMultiScan(ctx, rs, nil)
					if err != nil {
						b.Fatal(err)
					}
					for r := range rs {
						for ok := s.SeekRange(r); ok; ok = s.Next() {
							n++
						}
					}
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
				} else {
					for _, r := range rs {
						it, err := d.NewIter(&IterOptions{LowerBound: r.Start, UpperBound: r.End})
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
				}
				if n != ranges*width {
					b.Fatalf("%d keys, want %d", n, ranges*width)
				}
			}
		})
	}
}
