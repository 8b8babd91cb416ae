package prefetch

import (
	"io"
	"math/rand/v2"
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

// mappedSampleRate is how many copies from a mapping ReadAt makes per copy
// it times. A copy of a block the page cache holds takes about 500 ns, and
// its two clock reads and the gauge's update some 60 more: a copy in
// sixteen is timed, so that the gauge costs a few nanoseconds per copy.
// What the gauge must see, copies that fault and wait for the device (each
// tens of microseconds or more), it then sees within some fifty of them
// (three samples turn it slow), where a scan that reads from the device
// pays far more for the faults themselves. A pread, a system call of a
// microsecond or more, is always timed.
const mappedSampleRate = 16

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
// With lat not nil, the duration of every pread and of a sample of the
// copies from the mapping (one in mappedSampleRate, drawn at random) feeds
// it (Latency.ObserveRead), so that mapped reads that had to wait for the
// device turn the next reads to pread. The counters count every read,
// when it is made: they are exact whenever they are read.
func ReadAt(f io.ReaderAt, p []byte, off int64, lat *Latency, sink stats.Sink) (int, error) {
	mapped := copiesFromMapping(f, len(p), lat)
	timed := lat != nil && (!mapped || rand.Uint32()%mappedSampleRate == 0)
	var start time.Duration
	if timed {
		start = time.Since(epoch)
	}
	var n int
	var err error
	if mapped {
		n, err = f.(vfs.Mapped).ReadMapped(p, off)
		sink.Add(stats.FileReadMapped, 1)
	} else {
		n, err = f.ReadAt(p, off)
	}
	if timed {
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
