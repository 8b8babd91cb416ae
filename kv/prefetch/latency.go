package prefetch

import (
	"sync/atomic"
	"time"
)

// SlowRead is the read latency from which issuing several reads at once in
// the background pays: a read the OS page cache serves takes a few
// microseconds, less than handing it to another goroutine and waking the
// caller again; a read from a device takes tens to hundreds, and reads
// issued together overlap.
const SlowRead = 40 * time.Microsecond

// Latency is a moving average of how long reads take, so that a reader can
// tell reads the OS page cache serves from reads that reach the device,
// and choose to issue several at once only for the latter. It follows
// changes within a few reads: a read weighs an eighth, and counts for at
// most maxSample.
//
// A Latency is safe for concurrent use; concurrent updates may lose one
// another's samples, which a moving average can afford.
type Latency struct {
	ns atomic.Int64
}

// copyRate is how fast, at the least, a read copies bytes the OS page cache
// holds, in bytes per second: 8-16 GB/s on the development VM, by pread or
// from a mapping. A device read of a megabyte is slower by its latency and
// by the device's rate, which is lower on all but the fastest disks.
const copyRate = 4 << 30

// ObserveRead adds the duration of a read of n bytes, less the time a copy
// of n bytes from the page cache may take (n at copyRate). What remains is
// the read's latency, which tells the page cache from the device whatever
// the size: without the deduction a read of a megabyte would look slow
// when it came from the page cache; without large reads, a scan with a
// fixed readahead, all of whose reads are large, would leave the gauge to
// what a few small reads last said (table opens, the ends of files), and
// one of those delayed by the scheduler would send every block through the
// block cache.
func (l *Latency) ObserveRead(n int, d time.Duration) {
	l.Observe(max(0, d-time.Duration(int64(n)*int64(time.Second)/copyRate)))
}

// maxSample caps what one read adds to the average. A read the scheduler
// delayed (the thread preempted mid-copy by a neighbour, for a time slice
// of milliseconds) would otherwise turn a gauge of page-cache reads slow
// on its own, and with it route the next blocks through the block cache
// and start readahead windows nobody needs. At the cap, one read never
// turns a gauge under 22 us slow; two or three in a row do (three from
// zero), as a device gives and the page cache does not.
const maxSample = 4 * SlowRead

// Observe adds the duration of one read.
func (l *Latency) Observe(d time.Duration) {
	d = min(d, maxSample)
	old := l.ns.Load()
	l.ns.Store(old + (int64(d)-old)/8)
}

// Get returns the average: zero before the first read.
func (l *Latency) Get() time.Duration { return time.Duration(l.ns.Load()) }

// Slow reports whether reads take SlowRead or longer. A nil Latency (no
// pool, see Pool.Latency) knows of no slow read.
func (l *Latency) Slow() bool { return l != nil && l.Get() >= SlowRead }
