package main

import (
	"bytes"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFormatKVResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    kvResult
		want string
	}{
		{
			name: "bytes and message",
			r: kvResult{name: "readrandom", ops: 1000000, bytes: 116 * 1000000, busy: 3 * time.Second,
				elapsed: 3 * time.Second, msg: "(1000000 of 1000000 found)\n"},
			want: "readrandom   :       3.000 micros/op 333333 ops/sec 3.000 seconds 1000000 operations;   36.9 MB/s (1000000 of 1000000 found)\n\n",
		},
		{
			name: "bytes only",
			r:    kvResult{name: "fillseq", ops: 500000, bytes: 58000000, busy: 1250 * time.Millisecond, elapsed: 1250 * time.Millisecond},
			want: "fillseq      :       2.500 micros/op 400000 ops/sec 1.250 seconds 500000 operations;   44.3 MB/s\n",
		},
		{
			name: "message only",
			r:    kvResult{name: "seekrandom", ops: 10, busy: 20 * time.Millisecond, elapsed: 10 * time.Millisecond, msg: "(7 of 10 found)\n"},
			want: "seekrandom   :    2000.000 micros/op 1000 ops/sec 0.010 seconds 10 operations; (7 of 10 found)\n\n",
		},
		{
			name: "two threads: micros/op is per thread",
			r:    kvResult{name: "readrandom", ops: 2000, busy: 4 * time.Millisecond, elapsed: 2 * time.Millisecond},
			want: "readrandom   :       2.000 micros/op 1000000 ops/sec 0.002 seconds 2000 operations;\n",
		},
		{
			name: "no operations counts one",
			r:    kvResult{name: "compact", busy: 1500 * time.Millisecond, elapsed: 1500 * time.Millisecond},
			want: "compact      : 1500000.000 micros/op 0 ops/sec 1.500 seconds 1 operations;\n",
		},
		{
			name: "long name",
			r:    kvResult{name: "multireadrandom", ops: 1, busy: time.Microsecond, elapsed: time.Microsecond},
			want: "multireadrandom :       1.000 micros/op 1000000 ops/sec 0.000 seconds 1 operations;\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, formatKVResult(&tc.r))
		})
	}
}

func TestFormatKVHeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    kvConfig
		want string
	}{
		{
			// The figures db_bench printed for the async-prefetch runs.
			name: "50M keys of 32+512 bytes",
			c:    kvConfig{keySize: 32, valueSize: 512, compressionRatio: 0.5, num: 50_000_000, compression: "snappy"},
			want: "Keys:       32 bytes each (+ 0 bytes user-defined timestamp)\n" +
				"Values:     512 bytes each (256 bytes after compression)\n" +
				"Entries:    50000000\n" +
				"RawSize:    25939.9 MB (estimated)\n" +
				"FileSize:   13732.9 MB (estimated)\n" +
				"Compression: Snappy\n" +
				"------------------------------------------------\n",
		},
		{
			name: "defaults, no compression",
			c:    kvConfig{keySize: 16, valueSize: 100, compressionRatio: 0.5, num: 1_000_000, compression: "none"},
			want: "Keys:       16 bytes each (+ 0 bytes user-defined timestamp)\n" +
				"Values:     100 bytes each (50 bytes after compression)\n" +
				"Entries:    1000000\n" +
				"RawSize:    110.6 MB (estimated)\n" +
				"FileSize:   62.9 MB (estimated)\n" +
				"Compression: NoCompression\n" +
				"------------------------------------------------\n",
		},
		{
			name: "rounding of the compressed value size",
			c:    kvConfig{keySize: 8, valueSize: 3, compressionRatio: 0.5, num: 1, compression: "zstd"},
			want: "Keys:       8 bytes each (+ 0 bytes user-defined timestamp)\n" +
				"Values:     3 bytes each (2 bytes after compression)\n" +
				"Entries:    1\n" +
				"RawSize:    0.0 MB (estimated)\n" +
				"FileSize:   0.0 MB (estimated)\n" +
				"Compression: ZSTD\n" +
				"------------------------------------------------\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, formatKVHeader(&tc.c))
		})
	}
}

func TestPrintKVStatistics(t *testing.T) {
	var out bytes.Buffer
	printKVStatistics(&out, []kvCounter{{"file.read.count", 12}, {"block.cache.hit", 0}})
	require.Equal(t, "STATISTICS:\nfile.read.count COUNT : 12\nblock.cache.hit COUNT : 0\n\n", out.String())

	sum := addKVCounters(nil, []kvCounter{{"a", 1}, {"b", 2}})
	sum = addKVCounters(sum, []kvCounter{{"a", 10}, {"b", 20}})
	require.Equal(t, []kvCounter{{"a", 11}, {"b", 22}}, sum)
}

func TestKVHistogram(t *testing.T) {
	// Every bucket's bounds contain exactly the values mapped to it.
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 1000, 123456789, 1 << 40, math.MaxUint64} {
		lo, hi := kvHistBucketBounds(kvHistBucket(v))
		require.True(t, lo <= v && (v < hi || hi == 0), "%d in [%d, %d)", v, lo, hi)
	}
	for i := 1; i < kvHistBuckets; i++ {
		_, prevHi := kvHistBucketBounds(i - 1)
		lo, _ := kvHistBucketBounds(i)
		require.Equal(t, prevHi, lo, "bucket %d follows bucket %d", i, i-1)
	}

	// Uniform latencies of 1 to 10000 us: percentiles within 3%.
	var a, b kvHistogram
	for v := 1; v <= 10000; v++ {
		h := &a
		if v%2 == 0 {
			h = &b
		}
		h.add(time.Duration(v) * time.Microsecond)
	}
	a.merge(&b)
	require.Equal(t, uint64(10000), a.count)
	for _, p := range []float64{50, 95, 99, 99.9} {
		want := p / 100 * 10000e3
		require.InEpsilon(t, want, a.percentile(p), 0.03, "P%v", p)
	}
	require.Equal(t, uint64(1000), a.min)
	require.Equal(t, uint64(10000000), a.max)
	s := a.String()
	require.Contains(t, s, "Count: 10000 Average: 5000.5000  StdDev: 2886.75\n")
	require.Contains(t, s, "Min: 1.0000  Median: ")
	require.Contains(t, s, "Max: 10000.0000\n")
	require.Regexp(t, `Percentiles: P50: [\d.]+ P95: [\d.]+ P99: [\d.]+ P99.9: [\d.]+\n`, s)

	var empty kvHistogram
	require.Zero(t, empty.percentile(50))
	require.Contains(t, empty.String(), "Count: 0 Average: 0.0000")
}

func TestKVThreadNext(t *testing.T) {
	var failed, interrupted atomic.Bool
	newThread := func(maxOps int64, maxTime time.Duration) *kvThread {
		return &kvThread{maxOps: maxOps, maxTime: maxTime, checkOps: 1000,
			failed: &failed, interrupted: &interrupted, start: time.Now()}
	}

	// By count: batches, then the remainder, then nothing.
	th := newThread(10, 0)
	var got []int64
	for n := th.next(4); n > 0; n = th.next(4) {
		got = append(got, n)
	}
	require.Equal(t, []int64{4, 4, 2}, got)

	// By time: the clock is read only when a multiple of checkOps is passed.
	th = newThread(1, time.Nanosecond)
	time.Sleep(time.Millisecond)
	ops := int64(0)
	for th.next(1) > 0 {
		ops++
	}
	require.Equal(t, int64(999), ops, "the count bound is ignored; the deadline is noticed at op 1000")

	// Another thread's failure stops this one.
	th = newThread(100, 0)
	require.Equal(t, int64(1), th.next(1))
	failed.Store(true)
	require.Zero(t, th.next(1))
}

func TestMergeKVThreads(t *testing.T) {
	t0 := time.Now()
	w := &kvWorkload{name: "readrandom", op: "read"}
	threads := []*kvThread{
		{start: t0.Add(time.Millisecond), finish: t0.Add(5 * time.Millisecond), done: 10, bytes: 100},
		{start: t0, finish: t0.Add(4 * time.Millisecond), done: 20, bytes: 200, msg: "(1 of 2 found)\n",
			hist: &kvHistogram{}},
		{start: t0.Add(2 * time.Millisecond), finish: t0.Add(3 * time.Millisecond), done: 30, msg: "(other)", entries: 7},
	}
	threads[1].hist.add(time.Microsecond)
	res := mergeKVThreads(kvRun{w: w, name: "readrandom"}, threads)
	require.Equal(t, int64(60), res.ops)
	require.Equal(t, int64(300), res.bytes)
	require.Equal(t, int64(7), res.entries)
	require.Equal(t, 9*time.Millisecond, res.busy)
	require.Equal(t, 5*time.Millisecond, res.elapsed)
	require.Equal(t, "(1 of 2 found)\n", res.msg)
	require.Equal(t, uint64(1), res.hist.count)
	require.Equal(t, "read", res.op)
	require.InDelta(t, 12000, res.opsPerSec(), 1)
}

func TestFormatKVCPU(t *testing.T) {
	r := &kvResult{entries: 4_000_000, cpu: 1500 * time.Millisecond}
	require.Equal(t, "cpu/entry    :     375.0 ns (1.500 s of process CPU for 4000000 entries)\n", formatKVCPU(r))
	require.Empty(t, formatKVCPU(&kvResult{cpu: time.Second}), "no entries, no line")
	require.Empty(t, formatKVCPU(&kvResult{entries: 10}), "no CPU time read, no line")
}
