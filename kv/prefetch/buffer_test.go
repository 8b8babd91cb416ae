package prefetch

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/uring"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// testFile is an immutable in-memory file that checks every read: aligned
// offset, length and address when align > 1, and never past maxEnd (when
// set). It logs reads when log is set. Safe for concurrent ReadAt.
type testFile struct {
	data   []byte
	align  int
	maxEnd atomic.Int64
	reads  atomic.Int64
	mu     sync.Mutex
	log    *strings.Builder
	errs   []string
}

func newTestFile(size, align int) *testFile {
	f := &testFile{data: make([]byte, size), align: align}
	for i := range f.data {
		f.data[i] = byte(i*131 + i>>9)
	}
	return f
}

func (f *testFile) Alignment() int { return f.align }

func (f *testFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads.Add(1)
	f.mu.Lock()
	if f.log != nil {
		fmt.Fprintf(f.log, "    pread [%d,%d)\n", off, off+int64(len(p)))
	}
	if f.align > 1 && (off%int64(f.align) != 0 || !vfs.IsAligned(p, f.align)) {
		f.errs = append(f.errs, fmt.Sprintf("unaligned read of %d bytes at %d", len(p), off))
	}
	if m := f.maxEnd.Load(); m > 0 && off+int64(len(p)) > m {
		f.errs = append(f.errs, fmt.Sprintf("read [%d,%d) past %d", off, off+int64(len(p)), m))
	}
	f.mu.Unlock()
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// diskFile is a testFile whose bytes are also in a file on disk, which a
// Buffer's ring reads by descriptor: reads through ReadAt are checked, those
// on the ring are not.
type diskFile struct {
	*testFile
	os *os.File
}

func (f diskFile) Fd() uintptr { return f.os.Fd() }

// onDisk writes f's bytes to a temporary file and returns f reading it.
func (f *testFile) onDisk(t *testing.T) diskFile {
	name := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(name, f.data, 0o644))
	osf, err := os.Open(name)
	require.NoError(t, err)
	t.Cleanup(func() { osf.Close() })
	return diskFile{f, osf}
}

// ringsWork reports whether this system has io_uring.
func ringsWork(t *testing.T) bool {
	r, err := uring.New(2)
	if err != nil {
		t.Logf("io_uring unavailable, reads run on the pool: %v", err)
		return false
	}
	r.Close()
	return true
}

// manualPool runs background reads only when told to, or when the buffer
// is about to wait for one: it makes the async state machine deterministic.
type manualPool struct {
	queue []*Request
	log   *strings.Builder
}

func (m *manualPool) submit(r *Request) error {
	r.init()
	fmt.Fprintf(m.log, "    submit [%d,%d)\n", r.Off, r.Off+int64(len(r.Buf)))
	m.queue = append(m.queue, r)
	return nil
}

func (m *manualPool) run(r *Request) {
	i := slices.Index(m.queue, r)
	if i < 0 {
		return
	}
	m.queue = slices.Delete(m.queue, i, i+1)
	r.run(true)
	r.done <- struct{}{}
}

// TestBufferDataDriven runs testdata/buffer, the specification of the
// prefetch buffer in both modes. Commands:
//
//	init size=N [align=N] [limit=N] [explicit=N] [initial=N] [max=N] [async]
//	  a file of N bytes and a new Buffer over it (async uses a pool whose
//	  reads run only on "complete" or when the buffer must wait)
//	read
//	  one operation per line: "fwd OFF LEN", "back OFF LEN" (a Read), "hit
//	  OFF LEN" (Observe: a block-cache hit); each prints how the read was
//	  served, the I/O it caused, and the buffer's state
//	complete
//	  runs every queued background read
//	close
//	  closes the buffer and prints its counters
func TestBufferDataDriven(t *testing.T) {
	var (
		f    *testFile
		b    *Buffer
		pool *manualPool
		log  strings.Builder
		st   *stats.Counters
	)
	datadriven.RunTest(t, "testdata/buffer", func(t *testing.T, d *datadriven.TestData) string {
		log.Reset()
		switch d.Cmd {
		case "init":
			var size, align int = 1 << 20, 1
			var opts Options
			d.MaybeScanArgs(t, "size", &size)
			d.MaybeScanArgs(t, "align", &align)
			d.MaybeScanArgs(t, "limit", &opts.Limit)
			d.MaybeScanArgs(t, "explicit", &opts.ReadaheadSize)
			d.MaybeScanArgs(t, "initial", &opts.InitialReadahead)
			d.MaybeScanArgs(t, "max", &opts.MaxReadahead)
			f = newTestFile(size, align)
			f.log = &log
			st = &stats.Counters{}
			opts.Stats = stats.Sink{DB: st}
			pool = &manualPool{log: &log}
			if d.HasArg("async") {
				opts.AsyncIO = true
				opts.Pool = &Pool{} // never used: the hook takes its place
			}
			b = &Buffer{}
			b.Init(f, opts)
			b.submitHook = pool.submit
			b.beforeWait = func(r *Request) {
				fmt.Fprintf(&log, "    wait [%d,%d)\n", r.Off, r.Off+int64(len(r.Buf)))
				pool.run(r)
			}
			return b.String() + "\n"

		case "read":
			var out strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				fl := strings.Fields(line)
				require.Len(t, fl, 3, "line %q", line)
				off, err := strconv.ParseInt(fl[1], 10, 64)
				require.NoError(t, err)
				n, err := strconv.Atoi(fl[2])
				require.NoError(t, err)
				log.Reset()
				hits := st.Get(stats.PrefetchHits)
				var served string
				switch fl[0] {
				case "hit":
					b.Observe(off, n)
					served = "cache"
				case "fwd", "back":
					a := Forward
					if fl[0] == "back" {
						a = Backward
					}
					p, ok, err := b.Read(off, n, a)
					switch {
					case err != nil:
						served = "error: " + err.Error()
					case !ok:
						served = "caller"
					default:
						require.True(t, bytes.Equal(f.data[off:off+int64(n)], p), "bytes of %s", line)
						served = "buffer"
						if st.Get(stats.PrefetchHits) > hits {
							served = "buffer hit"
						}
					}
				default:
					t.Fatalf("unknown operation %q", fl[0])
				}
				fmt.Fprintf(&out, "%s: %s\n%s    => %s\n", line, served, log.String(), b.String())
			}
			require.Empty(t, f.errs)
			return out.String()

		case "complete":
			for len(pool.queue) > 0 {
				pool.run(pool.queue[0])
			}
			return log.String() + "    => " + b.String() + "\n"

		case "close":
			b.Close()
			require.Empty(t, pool.queue, "close waited for every read")
			var out strings.Builder
			out.WriteString(log.String())
			s := st.Snapshot()
			for c := stats.Counter(0); c < stats.NumCounters; c++ {
				if v := s.Get(c); v != 0 && c != stats.AsyncWaitMicros {
					fmt.Fprintf(&out, "%s: %d\n", c, v)
				}
			}
			require.Equal(t, s.Get(stats.PrefetchBytes), s.Get(stats.PrefetchBytesUsed)+s.Get(stats.PrefetchBytesWasted),
				"every prefetched byte is used or wasted")
			return out.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// blockTiling returns extents that tile [0, end) with random lengths in
// [lo, hi].
func blockTiling(rng *rand.Rand, end int64, lo, hi int) []Extent {
	var bs []Extent
	for off := int64(0); off < end; {
		n := min(int64(lo+rng.IntN(hi-lo+1)), end-off)
		bs = append(bs, Extent{off, n})
		off += n
	}
	return bs
}

// TestBufferRandom drives Buffers in every mode through random schedules of
// forward runs, jumps, backward runs and cache hits over a file of random
// block sizes, and checks every byte served, the alignment of every read,
// that no read passes the limit, and that the counters add up.
func TestBufferRandom(t *testing.T) {
	pool := NewPool(4)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	const size = 1 << 20
	steps := 3000
	if raceEnabled {
		steps = 600
	}
	for _, align := range []int{1, 512} {
		for _, how := range []string{"sync", "pool", "ring"} {
			async := how != "sync"
			for _, mode := range []struct {
				name string
				opts Options
			}{
				{"auto", Options{}},
				{"auto-small", Options{InitialReadahead: 1000, MaxReadahead: 20000}},
				{"explicit-64k", Options{ReadaheadSize: 64 << 10}},
				{"explicit-3000", Options{ReadaheadSize: 3000}},
			} {
				for _, limit := range []int64{size - 4096, 300_000} {
					name := fmt.Sprintf("align=%d/%s/%s/limit=%d", align, how, mode.name, limit)
					t.Run(name, func(t *testing.T) {
						f := newTestFile(size, align)
						var file io.ReaderAt = f
						if how == "ring" {
							file = f.onDisk(t)
						}
						blocks := blockTiling(rng, size-4096, 50, 9000)
						st := &stats.Counters{}
						opts := mode.opts
						opts.AsyncIO, opts.Pool, opts.Limit, opts.Stats = async, pool, limit, stats.Sink{Op: st}
						var b Buffer
						b.Init(file, opts)
						var want int64 // the largest end the current read may reach
						read := func(i int, a Access) {
							e := blocks[i]
							want = max(want, vfs.AlignUp(max(limit, e.End()), align))
							f.maxEnd.Store(want)
							p, ok, err := b.Read(e.Off, int(e.Len), a)
							require.NoError(t, err)
							if ok {
								require.True(t, bytes.Equal(f.data[e.Off:e.End()], p), "block %d %v", i, e)
							}
						}
						i := 0
						for range steps {
							switch r := rng.IntN(10); {
							case r < 5: // a forward run
								for k := 1 + rng.IntN(30); k > 0 && i < len(blocks); k-- {
									if rng.IntN(8) == 0 {
										b.Observe(blocks[i].Off, int(blocks[i].Len))
									} else {
										read(i, Forward)
									}
									i++
								}
							case r < 7: // a jump
								i = rng.IntN(len(blocks))
								read(i, Forward)
							case r < 9: // a backward run
								for k := 1 + rng.IntN(10); k > 0 && i > 0; k-- {
									i--
									read(i, Backward)
								}
							default: // a small jump forward, perhaps inside a buffer
								i = min(i+1+rng.IntN(5), len(blocks)-1)
								read(i, Forward)
							}
							if i >= len(blocks) {
								i = 0
							}
						}
						b.Close()
						f.mu.Lock()
						require.Empty(t, f.errs)
						f.mu.Unlock()
						s := st.Snapshot()
						require.Equal(t, s.Get(stats.PrefetchBytes), s.Get(stats.PrefetchBytesUsed)+s.Get(stats.PrefetchBytesWasted),
							"every prefetched byte is used or wasted, once")
						require.Positive(t, s.Get(stats.PrefetchBytes))
						require.Positive(t, s.Get(stats.PrefetchHits))
						if async {
							require.Positive(t, s.Get(stats.AsyncReadCount))
						} else {
							require.Zero(t, s.Get(stats.AsyncReadCount))
						}
						if how == "ring" && ringsWork(t) {
							require.Positive(t, s.Get(stats.AsyncReadRing))
						} else {
							require.Zero(t, s.Get(stats.AsyncReadRing))
						}
						_, _, err := b.Read(0, 10, Forward)
						require.ErrorIs(t, err, ErrClosed)
					})
				}
			}
		}
	}
}

// TestBufferScanCounters checks what a clean forward scan costs in each
// mode: far fewer reads than blocks, every prefetched byte used, and in
// async mode background reads in flight while the reader works.
func TestBufferScanCounters(t *testing.T) {
	pool := NewPool(4)
	defer pool.Close()
	const nBlocks, blockLen = 1000, 4096
	for _, tc := range []struct {
		name     string
		opts     Options
		maxReads int64
	}{
		{"auto", Options{}, 30},
		{"explicit", Options{ReadaheadSize: 512 << 10}, 10},
		{"auto-async", Options{AsyncIO: true, Pool: pool}, 60},
		{"explicit-async", Options{ReadaheadSize: 512 << 10, AsyncIO: true, Pool: pool}, 20},
		{"off", Options{MaxReadahead: -1}, nBlocks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFile(nBlocks*blockLen+4096, 1)
			st := &stats.Counters{}
			opts := tc.opts
			opts.Limit, opts.Stats = nBlocks*blockLen, stats.Sink{DB: st}
			var b Buffer
			b.Init(f, opts)
			callerReads := int64(0)
			for i := range nBlocks {
				off := int64(i * blockLen)
				p, ok, err := b.Read(off, blockLen, Forward)
				require.NoError(t, err)
				if !ok {
					callerReads++
					continue
				}
				require.True(t, bytes.Equal(f.data[off:off+blockLen], p))
			}
			b.Close()
			s := st.Snapshot()
			reads := s.Get(stats.FileReadCount) + callerReads
			require.LessOrEqual(t, reads, tc.maxReads, "read calls for %d blocks", nBlocks)
			require.Equal(t, f.reads.Load(), s.Get(stats.FileReadCount), "every read counted")
			if tc.name != "off" {
				require.Equal(t, int64(nBlocks*blockLen), s.Get(stats.PrefetchBytes)+callerReads*blockLen, "nothing read twice, nothing past the limit")
				require.Zero(t, s.Get(stats.PrefetchBytesWasted))
				require.Equal(t, s.Get(stats.PrefetchBytes), s.Get(stats.PrefetchBytesUsed))
			}
			if opts.AsyncIO {
				require.Positive(t, s.Get(stats.AsyncReadCount))
				require.Equal(t, s.Get(stats.FileReadBytes), s.Get(stats.PrefetchBytes), "background reads are prefetch reads")
			}
		})
	}
}

// countingLimit is a LimitSource that counts its calls.
type countingLimit struct {
	limit int64
	calls int
}

func (c *countingLimit) ReadLimit() int64 { c.calls++; return c.limit }

// TestLimitSource checks that a LimitSource is asked only when a Read comes
// (Observe does not ask), once per SetLimitSource, and that its limit then
// holds: no read ahead goes past it, with and without a SetLimit before.
func TestLimitSource(t *testing.T) {
	const blockLen = 4096
	f := newTestFile(64*blockLen, 1)
	src := &countingLimit{limit: 8 * blockLen}
	f.maxEnd.Store(src.limit)
	var b Buffer
	b.Init(f, Options{ReadaheadSize: 32 * blockLen})
	defer b.Close()
	b.SetLimitSource(src)
	b.Observe(0, blockLen)
	require.Zero(t, src.calls, "Observe needs no limit")
	for i := range 8 {
		p, ok, err := b.Read(int64(i*blockLen), blockLen, Forward)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, f.data[i*blockLen:(i+1)*blockLen], p)
	}
	require.Equal(t, 1, src.calls, "asked once, at the first read")
	require.Empty(t, f.errs)

	// SetLimit replaces a pending source: it is never asked.
	src2 := &countingLimit{limit: blockLen}
	b.SetLimitSource(src2)
	b.SetLimit(16 * blockLen)
	f.maxEnd.Store(16 * blockLen)
	_, ok, err := b.Read(8*blockLen, blockLen, Forward)
	require.NoError(t, err)
	require.True(t, ok)
	require.Zero(t, src2.calls)
	require.Empty(t, f.errs)
}

// A read the ring fails (here: the descriptor is not open) leaves the
// reader to read the block itself, and the buffer's later background reads
// go to the pool: the bytes are right throughout.
func TestBufferRingReadFails(t *testing.T) {
	if !ringsWork(t) {
		t.Skip("no io_uring")
	}
	pool := NewPool(2)
	defer pool.Close()
	f := newTestFile(1<<20, 1)
	df := f.onDisk(t)
	require.NoError(t, df.os.Close())
	st := &stats.Counters{}
	var b Buffer
	b.Init(df, Options{AsyncIO: true, Pool: pool, ReadaheadSize: 64 << 10, Stats: stats.Sink{Op: st}})
	defer b.Close()
	for off := int64(0); off+4096 <= 1<<20; off += 4096 {
		p, ok, err := b.Read(off, 4096, Forward)
		require.NoError(t, err)
		if ok {
			require.Equal(t, f.data[off:off+4096], p, "block at %d", off)
		}
	}
	s := st.Snapshot()
	require.Positive(t, s.Get(stats.AsyncReadRing))
	require.Greater(t, s.Get(stats.AsyncReadCount), s.Get(stats.AsyncReadRing), "later reads ran on the pool")
}
