package prefetch

import (
	"io"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
)

// MaxMappedRead is the largest read ReadAt copies from a file's memory
// mapping. Larger reads are long readahead and coalesced reads, made to
// reach the device in one request each.
const MaxMappedRead = 64 << 10

// epoch anchors the timing of reads. time.Since of a time that carries a
// monotonic reading reads only the monotonic clock, where time.Now reads
// the wall clock too: one clock read fewer per block read, about 25 ns on
// the development VM, where a 4 KiB copy from the page cache takes 500.
var epoch = time.Now()

// ReadAt reads p from f at off and counts the read in sink
// (file.read.count, file.read.bytes, file.read.mapped). It is the one way
// the engine reads a table's bytes, so that one rule decides how:
//
// When f is mapped (vfs.Mapped) and p is small, ReadAt copies from the
// mapping, unless lat says that reads have lately been slow: then the bytes
// are probably not in the page cache, and a fault would read them a page at
// a time where pread reads them in one request. Otherwise it calls
// f.ReadAt. A nil lat counts as fast.
//
// With lat not nil, the read's duration feeds it (Latency.ObserveRead),
// mapped or not, so that a mapped read that had to wait for the device
// turns the next reads to pread.
func ReadAt(f io.ReaderAt, p []byte, off int64, lat *Latency, sink stats.Sink) (int, error) {
	var start time.Duration
	if lat != nil {
		start = time.Since(epoch)
	}
	var n int
	var err error
	if copiesFromMapping(f, len(p), lat) {
		n, err = f.(vfs.Mapped).ReadMapped(p, off)
		sink.Add(stats.FileReadMapped, 1)
	} else {
		n, err = f.ReadAt(p, off)
	}
	if lat != nil {
		lat.ObserveRead(len(p), time.Since(epoch)-start)
	}
	sink.Add(stats.FileReadCount, 1)
	sink.Add(stats.FileReadBytes, int64(n))
	return n, err
}

// AppendPages appends to dst, for vfs.TouchPages, the pages of a read of n
// bytes at off that ReadAt would copy from f's mapping (as ReadAt decides,
// see copiesFromMapping); a read it would make with pread adds nothing.
func AppendPages(dst []*byte, f io.ReaderAt, off int64, n int, lat *Latency) []*byte {
	if copiesFromMapping(f, n, lat) {
		dst = f.(vfs.Mapped).AppendPages(dst, off, int64(n))
	}
	return dst
}

// copiesFromMapping reports whether ReadAt copies a read of n bytes of f
// from its memory mapping.
func copiesFromMapping(f io.ReaderAt, n int, lat *Latency) bool {
	_, ok := f.(vfs.Mapped)
	return ok && n <= MaxMappedRead && !lat.Slow()
}
