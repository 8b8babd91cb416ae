package prefetch

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// TestPoolConcurrent submits reads from many goroutines at once, reusing
// each request, and checks every result. Run it with -race.
func TestPoolConcurrent(t *testing.T) {
	p := NewPool(3)
	require.Equal(t, 3, p.QueueDepth())
	f := newTestFile(1<<20, 1)
	st := &stats.Counters{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reqs [4]Request
			for round := range 50 {
				for i := range reqs {
					r := &reqs[i]
					off := int64((g*1000 + round*37 + i*4096) % (1<<20 - 8192))
					r.File, r.Buf, r.Off, r.Sink = f, make([]byte, 8192), off, stats.Sink{DB: st}
					require.NoError(t, p.Submit(r))
				}
				for i := range reqs {
					r := &reqs[i]
					r.Wait()
					require.NoError(t, r.Err)
					require.Equal(t, 8192, r.N)
					require.True(t, bytes.Equal(f.data[r.Off:r.Off+8192], r.Buf))
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, p.Close())
	require.EqualValues(t, 8*50*4, st.Get(stats.AsyncReadCount))
	require.EqualValues(t, 8*50*4*8192, st.Get(stats.AsyncReadBytes))
	require.Equal(t, st.Get(stats.AsyncReadCount), st.Get(stats.FileReadCount))
}

// blockingFile blocks every read until release is closed.
type blockingFile struct {
	started chan struct{}
	release chan struct{}
}

func (f *blockingFile) ReadAt(p []byte, off int64) (int, error) {
	f.started <- struct{}{}
	<-f.release
	return len(p), nil
}

// TestPoolCloseWaits checks that Close returns only after the reads queued
// and running have completed, and that the pool refuses work afterwards.
func TestPoolCloseWaits(t *testing.T) {
	p := NewPool(1)
	f := &blockingFile{started: make(chan struct{}, 2), release: make(chan struct{})}
	var r1, r2 Request
	r1.File, r1.Buf = f, make([]byte, 10)
	r2.File, r2.Buf = f, make([]byte, 20)
	require.NoError(t, p.Submit(&r1))
	require.NoError(t, p.Submit(&r2)) // queued behind r1: one goroutine
	<-f.started
	closed := make(chan error)
	go func() { closed <- p.Close() }()
	close(f.release)
	require.NoError(t, <-closed)
	for _, r := range []*Request{&r1, &r2} {
		select {
		case <-r.Done():
		default:
			t.Fatalf("Close returned before the read of %d bytes completed", len(r.Buf))
		}
		require.Equal(t, len(r.Buf), r.N)
	}
	var r3 Request
	r3.File, r3.Buf = f, nil
	require.ErrorIs(t, p.Submit(&r3), ErrPoolClosed)
	require.ErrorIs(t, p.Close(), ErrPoolClosed)
}

// TestBufferClosedPool checks that a buffer whose pool is closed reads on
// its own goroutine, correctly.
func TestBufferClosedPool(t *testing.T) {
	p := NewPool(2)
	require.NoError(t, p.Close())
	f := newTestFile(1<<20, 1)
	st := &stats.Counters{}
	var b Buffer
	b.Init(f, Options{ReadaheadSize: 64 << 10, AsyncIO: true, Pool: p, Stats: stats.Sink{DB: st}})
	for off := int64(0); off < 512<<10; off += 4096 {
		got, ok, err := b.Read(off, 4096, Forward)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, bytes.Equal(f.data[off:off+4096], got))
	}
	b.Close()
	require.Zero(t, st.Get(stats.AsyncReadCount))
	require.Less(t, st.Get(stats.FileReadCount), int64(20))
}

// TestBufferReadError checks that an error reading a block's own bytes is
// reported, and that a failed background read is not: the block is read
// again on the reader's goroutine.
func TestBufferReadError(t *testing.T) {
	f := &failingFile{testFile: newTestFile(1<<20, 1), failFrom: 100_000}
	pool := NewPool(2)
	defer pool.Close()
	for _, async := range []bool{false, true} {
		var b Buffer
		b.Init(f, Options{ReadaheadSize: 64 << 10, AsyncIO: async, Pool: pool})
		var err error
		off := int64(0)
		for ; off < 200_000 && err == nil; off += 4096 {
			var got []byte
			var ok bool
			got, ok, err = b.Read(off, 4096, Forward)
			if err == nil && ok {
				require.True(t, bytes.Equal(f.data[off:off+4096], got))
			}
		}
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "async=%t", async)
		require.ErrorContains(t, err, "prefetch: reading")
		require.LessOrEqual(t, off-4096, int64(100_000), "the first block past the failure point fails")
		b.Close()
	}
}

// failingFile returns short reads past failFrom.
type failingFile struct {
	*testFile
	failFrom int64
}

func (f *failingFile) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) <= f.failFrom {
		return f.testFile.ReadAt(p, off)
	}
	n := max(0, int(f.failFrom-off))
	copy(p[:n], f.data[off:])
	return n, nil
}

// TestLatency checks the moving average: it starts at zero, a run of slow
// reads makes it slow within three (one, however slow, does not), fast reads bring it back, and reads
// that set Request.Latency feed it.
func TestLatency(t *testing.T) {
	var l Latency
	require.Zero(t, l.Get())
	require.False(t, l.Slow())
	l.Observe(time.Second)
	require.False(t, l.Slow(), "one delayed read is not enough")
	l.Observe(time.Second)
	require.False(t, l.Slow())
	l.Observe(time.Second)
	require.True(t, l.Slow(), "three slow reads in a row")

	// From a page-cache gauge of 5 µs, one delayed read is not enough
	// either; two are.
	var pc Latency
	for range 64 {
		pc.Observe(5 * time.Microsecond)
	}
	pc.Observe(time.Second)
	require.False(t, pc.Slow())
	pc.Observe(time.Second)
	require.True(t, pc.Slow())
	for range 30 {
		l.Observe(time.Microsecond)
	}
	require.False(t, l.Slow())
	require.InDelta(t, float64(time.Microsecond), float64(l.Get()), float64(time.Microsecond))

	var fresh Latency
	r := Request{File: newTestFile(4096, 1), Buf: make([]byte, 100), Latency: &fresh}
	r.Run()
	require.NoError(t, r.Err)
	require.Positive(t, fresh.Get(), "the read was measured")

	// A read counts for its latency: its time less that of a copy from
	// the page cache. A megabyte at 8 GB/s is fast, at 3.5 GB/s slow.
	var big Latency
	big.ObserveRead(1<<20, 128*time.Microsecond)
	require.Zero(t, big.Get())
	require.False(t, big.Slow())
	for range 64 {
		big.ObserveRead(1<<20, 300*time.Microsecond)
	}
	require.True(t, big.Slow())
	// 1 MiB at 4 GiB/s takes 244 µs: the latency is the other 56.
	require.InDelta(t, float64(56*time.Microsecond), float64(big.Get()), float64(2*time.Microsecond))
	var small Latency
	small.ObserveRead(4096, 100*time.Microsecond)
	require.InDelta(t, float64(99*time.Microsecond)/8, float64(small.Get()), float64(time.Microsecond))
}
