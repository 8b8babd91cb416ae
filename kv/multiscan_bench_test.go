package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMultiScan reads ten ranges of ten keys from the fully cached
// database of the MultiGet benchmarks: 100 keys apart (near: a few ranges
// share each 8 MiB table), or spread over the whole database (spread: as
// SQL's multi_range spreads them). One operation is one MultiScan
// (prepared, then iterated), or ten bounded iterators (prepare=false).
//
//	go test ./kv -run '^$' -bench MultiScan -benchmem
func BenchmarkMultiScan(b *testing.B) {
	d := multiGetBenchDB(b)
	const ranges, width = 10, 10
	for _, shape := range []struct {
		name   string
		stride uint64
	}{{"near", 100}, {"spread", multiGetBenchKeys/ranges - 2*width}} {
		for _, prepare := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/prepare=%t", shape.name, prepare), func(b *testing.B) {
				benchMultiScan(b, d, ranges, width, shape.stride, prepare)
			})
		}
	}
}

func benchMultiScan(b *testing.B, d *DB, ranges int, width, stride uint64, prepare bool) {
	rng := rand.New(rand.NewPCG(5, 6))
	rs := make([]ScanRange, ranges)
	for i := range rs {
		rs[i] = ScanRange{Start: make([]byte, 0, 16), End: make([]byte, 0, 16)}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		first := rng.Uint64N(multiGetBenchKeys - uint64(ranges)*(width+stride))
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
		if n != ranges*int(width) {
			b.Fatalf("%d keys, want %d", n, ranges*int(width))
		}
	}
}
