package wal

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// BenchmarkWriteRecord frames one record and flushes it, per operation.
func BenchmarkWriteRecord(b *testing.B) {
	for _, size := range []int{100, 4 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			w := NewWriterLogID(&discardFile{}, "bench", 1)
			p := bytes.Repeat([]byte{'x'}, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.WriteRecord(p); err != nil {
					b.Fatal(err)
				}
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReader reads a log of 1 MiB of records.
func BenchmarkReader(b *testing.B) {
	for _, size := range []int{100, 4 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			recs := make([][]byte, (1<<20)/size)
			for i := range recs {
				recs[i] = bytes.Repeat([]byte{'x'}, size)
			}
			l := writeLog(b, recs, writeOpts{id: 1})
			r := NewReader(nil, 0, "")
			b.SetBytes(int64(len(l.data)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(bytes.NewReader(l.data), int64(len(l.data)), "bench")
				for {
					if _, err := r.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
