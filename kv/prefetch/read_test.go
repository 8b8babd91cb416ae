package prefetch

import (
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
)

// mappedFile is a vfs.Mapped over memory that records which way each read
// went.
type mappedFile struct {
	vfs.File // unused; the methods ReadAt needs are below
	data     []byte
	preads   atomic.Int64
	copies   atomic.Int64
	// preadDelay makes each pread take at least this long.
	preadDelay time.Duration
}

func (f *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	f.preads.Add(1)
	time.Sleep(f.preadDelay)
	return copyAt(p, f.data, off)
}

func (f *mappedFile) ReadMapped(p []byte, off int64) (int, error) {
	f.copies.Add(1)
	return copyAt(p, f.data, off)
}

func (f *mappedFile) Alignment() int { return 1 }

// AppendPages gives the address of the range's first byte: the test's
// data has no pages.
func (f *mappedFile) AppendPages(dst []*byte, off, n int64) []*byte {
	if off < 0 || n <= 0 || off >= int64(len(f.data)) {
		return dst
	}
	return append(dst, &f.data[off])
}

func copyAt(p, data []byte, off int64) (int, error) {
	n := copy(p, data[min(off, int64(len(data))):])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestReadAtRoute checks the rule of ReadAt: small reads of a mapped file
// copy from the mapping unless reads have been slow; large reads, and
// files without a mapping, use ReadAt. Every read is counted as a file
// read, the mapped ones as such too.
func TestReadAtRoute(t *testing.T) {
	slow := new(Latency)
	for range 4 {
		slow.Observe(10 * SlowRead)
	}
	for _, tc := range []struct {
		name   string
		mapped bool
		n      int
		lat    *Latency
		copied bool
	}{
		{"small, fast", true, 4096, new(Latency), true},
		{"small, no gauge", true, 4096, nil, true},
		{"largest copied", true, MaxMappedRead, nil, true},
		{"large", true, MaxMappedRead + 1, nil, false},
		{"small, slow", true, 4096, slow, false},
		{"not mapped", false, 4096, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := make([]byte, 2*MaxMappedRead)
			for i := range data {
				data[i] = byte(i)
			}
			mf := &mappedFile{data: data}
			var f interface {
				ReadAt([]byte, int64) (int, error)
			} = mf
			if !tc.mapped {
				f = testReaderAt{mf}
			}
			var c stats.Counters
			p := make([]byte, tc.n)
			n, err := ReadAt(f, p, 3, tc.lat, stats.Sink{DB: &c})
			require.NoError(t, err)
			require.Equal(t, tc.n, n)
			require.Equal(t, data[3:3+tc.n], p)
			require.EqualValues(t, 1, c.Get(stats.FileReadCount))
			require.EqualValues(t, tc.n, c.Get(stats.FileReadBytes))
			// AppendPages follows the same rule: pages only for a copy.
			pages := AppendPages(nil, f, 3, tc.n, tc.lat)
			if tc.copied {
				require.Equal(t, []*byte{&data[3]}, pages)
			} else {
				require.Empty(t, pages)
			}
			if tc.copied {
				require.EqualValues(t, 1, mf.copies.Load())
				require.Zero(t, mf.preads.Load())
				require.EqualValues(t, 1, c.Get(stats.FileReadMapped))
			} else {
				require.Zero(t, mf.copies.Load())
				require.EqualValues(t, 1, mf.preads.Load())
				require.Zero(t, c.Get(stats.FileReadMapped))
			}
		})
	}
}

// testReaderAt hides every method but ReadAt.
type testReaderAt struct{ f *mappedFile }

func (r testReaderAt) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }

// Mapped reads that had to wait for the device must turn the next ones
// to pread: a sample of their durations feeds the gauge as every pread's
// does.
func TestReadAtObservesMappedReads(t *testing.T) {
	var lat Latency
	f := &slowMapped{mappedFile: mappedFile{data: make([]byte, 8192)}, delay: 2 * SlowRead}
	// Read until the first pread: every read before it was a slow copy,
	// and a sample of them alone turned the gauge slow. (Later, the fast
	// preads bring the gauge back, and reads go back to the mapping: where
	// the gauge stands after a fixed number of reads depends on how long
	// each sleep really took.) Three samples turn it; 50*mappedSampleRate
	// copies hold fewer than three with a chance under 1e-18.
	for range 50 * mappedSampleRate {
		_, err := ReadAt(f, make([]byte, 4096), 0, &lat, stats.Sink{})
		require.NoError(t, err)
		if f.preads.Load() > 0 {
			break
		}
	}
	require.Positive(t, f.preads.Load(), "reads turned to pread once the gauge said slow")
	require.Positive(t, f.copies.Load(), "after slow copies from the mapping")
}

type slowMapped struct {
	mappedFile
	delay time.Duration
}

func (f *slowMapped) ReadMapped(p []byte, off int64) (int, error) {
	time.Sleep(f.delay)
	return f.mappedFile.ReadMapped(p, off)
}

// TestBufferAsyncReadsFollowGauge: background readahead reads of a mapped
// file follow the pool's gauge like the others. While preads are slow they
// stay preads; copying them from the mapping would take a fault per page.
func TestBufferAsyncReadsFollowGauge(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	const nBlocks, blockLen = 64, 4096
	f := &mappedFile{data: make([]byte, nBlocks*blockLen), preadDelay: 2 * SlowRead}
	for range 20 {
		pool.Latency().Observe(10 * SlowRead)
	}
	var b Buffer
	b.Init(f, Options{ReadaheadSize: 32 << 10, AsyncIO: true, Pool: pool, Limit: nBlocks * blockLen})
	for i := range nBlocks {
		_, _, err := b.Read(int64(i*blockLen), blockLen, Forward)
		require.NoError(t, err)
	}
	b.Close()
	require.Positive(t, f.preads.Load())
	require.Zero(t, f.copies.Load(), "no read copied from the mapping while reads were slow")
}

// TestBufferStepsAsideForPageCache: a Buffer over a mapped file whose reads
// come from the page cache (the gauge says fast) reads nothing ahead and
// leaves every block to its caller, who copies it from the mapping; when
// reads are slow, with ForceReadahead, and without a gauge, it reads ahead,
// with or without async I/O.
func TestBufferStepsAsideForPageCache(t *testing.T) {
	const nBlocks, blockLen = 64, 4096
	for _, async := range []bool{false, true} {
		for _, tc := range []struct {
			name    string
			slow    bool // reads ahead: the gauge says slow,
			force   bool // or ForceReadahead,
			noGauge bool // or there is no gauge to ask
		}{{name: "fast"}, {name: "slow", slow: true}, {name: "forced", force: true}, {name: "no gauge", noGauge: true}} {
			pool := NewPool(2)
			f := &mappedFile{data: make([]byte, nBlocks*blockLen)}
			if tc.slow {
				f.preadDelay = 2 * SlowRead
				for range 8 {
					pool.Latency().Observe(time.Second)
				}
			}
			var c stats.Counters
			var b Buffer
			opts := Options{ReadaheadSize: 32 << 10, AsyncIO: async, Pool: pool, ForceReadahead: tc.force, Limit: nBlocks * blockLen, Stats: stats.Sink{DB: &c}}
			if tc.noGauge {
				opts.Pool, opts.AsyncIO = nil, false
			}
			b.Init(f, opts)
			served := 0
			for i := range nBlocks {
				_, ok, err := b.Read(int64(i*blockLen), blockLen, Forward)
				require.NoError(t, err)
				if ok {
					served++
				}
			}
			b.Close()
			pool.Close()
			if tc.name != "fast" {
				require.Equal(t, nBlocks, served, "%s, async %v: every block from a window", tc.name, async)
				require.Positive(t, c.Get(stats.PrefetchBytes))
			} else {
				require.Zero(t, served, "async %v: no block from the buffer", async)
				require.Zero(t, c.Get(stats.PrefetchBytes))
				require.Zero(t, f.preads.Load()+f.copies.Load(), "the buffer read nothing")
			}
		}
	}
}

// TestBufferGaugeFlips drives Buffers over a mapped file through forward
// reads (some skipping ahead) and backward reads while the gauge flips
// between fast and slow at random, in both modes: every block a Buffer
// serves holds the file's bytes, and Close leaves no read behind.
func TestBufferGaugeFlips(t *testing.T) {
	const nBlocks, blockLen = 256, 4096
	data := make([]byte, nBlocks*blockLen)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		pool := NewPool(2)
		f := &mappedFile{data: data}
		var b Buffer
		b.Init(f, Options{ReadaheadSize: int64(rng.IntN(64)+1) << 10, AsyncIO: seed%2 == 1, Pool: pool, Limit: nBlocks * blockLen})
		for blk := 0; blk < nBlocks; blk++ {
			switch rng.IntN(4) {
			case 0: // slow
				for range 4 {
					pool.Latency().Observe(time.Second)
				}
			case 1: // fast
				for range 40 {
					pool.Latency().Observe(0)
				}
			}
			a := Forward
			switch r := rng.IntN(10); {
			case r == 0:
				blk += rng.IntN(8) // skip ahead
			case r == 1 && blk > 0:
				blk -= rng.IntN(min(blk, 4)) + 1
				a = Backward
			}
			if blk >= nBlocks {
				break
			}
			off := int64(blk * blockLen)
			p, ok, err := b.Read(off, blockLen, a)
			require.NoError(t, err, "seed %d block %d", seed, blk)
			if ok {
				require.Equal(t, data[off:off+blockLen], p, "seed %d block %d", seed, blk)
			}
		}
		b.Close()
		pool.Close()
	}
}
