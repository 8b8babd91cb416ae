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
// changes within a few reads: a slow read weighs an eighth.
//
// A Latency is safe for concurrent use; concurrent updates may lose one
// another's samples, which a moving average can afford.
type Latency struct {
	ns atomic.Int64
}

// maxSampledRead is the largest read Latency samples: a block or a few.
// A read of megabytes takes longer than SlowRead from the page cache too.
const maxSampledRead = 64 << 10

// ObserveRead adds the duration of a read of n bytes, if it is small
// enough to tell the page cache from the device.
func (l *Latency) ObserveRead(n int, d time.Duration) {
	if n <= maxSampledRead {
		l.Observe(d)
	}
}

// Observe adds the duration of one read.
func (l *Latency) Observe(d time.Duration) {
	old := l.ns.Load()
	l.ns.Store(old + (int64(d)-old)/8)
}

// Get returns the average: zero before the first read.
func (l *Latency) Get() time.Duration { return time.Duration(l.ns.Load()) }

// Slow reports whether reads take SlowRead or longer. A nil Latency (no
// pool, see Pool.Latency) knows of no slow read.
func (l *Latency) Slow() bool { return l != nil && l.Get() >= SlowRead }
