package main

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

// kvHistogram is a log-linear histogram of operation latencies in
// nanoseconds: exact below 64 ns, then 32 buckets per power of two, so a
// percentile is within about 3% of the true value. Each benchmark thread
// records into its own; the runner merges them. The zero value is ready to
// use. Not safe for concurrent use.
type kvHistogram struct {
	buckets  [kvHistBuckets]uint64
	count    uint64
	sum      float64 // ns
	sumSq    float64 // ns^2
	min, max uint64  // ns; valid when count > 0
}

const (
	kvHistSubBits = 5
	kvHistSub     = 1 << kvHistSubBits // buckets per power of two
	kvHistLinear  = 2 * kvHistSub      // values below this have their own bucket
	kvHistBuckets = kvHistLinear + (64-kvHistSubBits-1)*kvHistSub
)

// kvHistBucket returns the bucket of a latency of v ns.
func kvHistBucket(v uint64) int {
	if v < kvHistLinear {
		return int(v)
	}
	e := bits.Len64(v) - kvHistSubBits - 1 // v>>e is in [kvHistSub, 2*kvHistSub)
	return kvHistLinear + (e-1)*kvHistSub + int(v>>e) - kvHistSub
}

// kvHistBucketBounds returns the values [lo, hi) that fall in bucket i.
func kvHistBucketBounds(i int) (lo, hi uint64) {
	if i < kvHistLinear {
		return uint64(i), uint64(i) + 1
	}
	e := (i-kvHistLinear)/kvHistSub + 1
	m := uint64((i-kvHistLinear)%kvHistSub + kvHistSub)
	return m << e, (m + 1) << e
}

// add records one latency.
func (h *kvHistogram) add(d time.Duration) {
	v := uint64(max(d, 0))
	h.buckets[kvHistBucket(v)]++
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.count++
	f := float64(v)
	h.sum += f
	h.sumSq += f * f
}

// merge adds o's samples to h.
func (h *kvHistogram) merge(o *kvHistogram) {
	if o.count == 0 {
		return
	}
	for i, n := range o.buckets {
		h.buckets[i] += n
	}
	if h.count == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.count += o.count
	h.sum += o.sum
	h.sumSq += o.sumSq
}

// percentile returns the latency in ns below which a share p (0 to 100) of
// the samples fall, interpolated within its bucket.
func (h *kvHistogram) percentile(p float64) float64 {
	if h.count == 0 {
		return 0
	}
	want := p / 100 * float64(h.count)
	var cum float64
	for i, n := range h.buckets {
		if n == 0 {
			continue
		}
		if cum+float64(n) >= want {
			lo, hi := kvHistBucketBounds(i)
			lo, hi = max(lo, h.min), min(hi, h.max+1)
			v := float64(lo) + (want-cum)/float64(n)*float64(hi-lo)
			return math.Min(math.Max(v, float64(h.min)), float64(h.max))
		}
		cum += float64(n)
	}
	return float64(h.max)
}

// String renders the histogram in microseconds, in the shape of db_bench's
// "Microseconds per read:" block (without the bucket table).
func (h *kvHistogram) String() string {
	const us = 1e3
	var avg, stddev float64
	if h.count > 0 {
		n := float64(h.count)
		avg = h.sum / n
		stddev = math.Sqrt(math.Max(h.sumSq/n-avg*avg, 0))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Count: %d Average: %.4f  StdDev: %.2f\n", h.count, avg/us, stddev/us)
	fmt.Fprintf(&b, "Min: %.4f  Median: %.4f  Max: %.4f\n", float64(h.min)/us, h.percentile(50)/us, float64(h.max)/us)
	fmt.Fprintf(&b, "Percentiles: P50: %.2f P95: %.2f P99: %.2f P99.9: %.2f\n",
		h.percentile(50)/us, h.percentile(95)/us, h.percentile(99)/us, h.percentile(99.9)/us)
	b.WriteString("------------------------------------------------------\n")
	return b.String()
}
