package prefetch

import (
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
	preads   int
	copies   int
}

func (f *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	f.preads++
	return copy(p, f.data[off:]), nil
}

func (f *mappedFile) ReadMapped(p []byte, off int64) (int, error) {
	f.copies++
	return copy(p, f.data[off:]), nil
}

// TestReadAtRoute checks the rule of ReadAt: small reads of a mapped file
// copy from the mapping unless reads have been slow; large reads, and
// files without a mapping, use ReadAt. Every read is counted as a file
// read, the mapped ones as such too.
func TestReadAtRoute(t *testing.T) {
	slow := new(Latency)
	slow.Observe(10 * SlowRead)
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
			if tc.copied {
				require.Equal(t, 1, mf.copies)
				require.Zero(t, mf.preads)
				require.EqualValues(t, 1, c.Get(stats.FileReadMapped))
			} else {
				require.Zero(t, mf.copies)
				require.Equal(t, 1, mf.preads)
				require.Zero(t, c.Get(stats.FileReadMapped))
			}
		})
	}
}

// testReaderAt hides every method but ReadAt.
type testReaderAt struct{ f *mappedFile }

func (r testReaderAt) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }

// A mapped read that had to wait for the device must turn the next ones
// to pread: its duration feeds the gauge like any other read's.
func TestReadAtObservesMappedReads(t *testing.T) {
	var lat Latency
	f := &slowMapped{mappedFile: mappedFile{data: make([]byte, 8192)}, delay: 2 * SlowRead}
	for range 20 {
		_, err := ReadAt(f, make([]byte, 4096), 0, &lat, stats.Sink{})
		require.NoError(t, err)
	}
	require.True(t, lat.Slow())
	require.Positive(t, f.preads, "reads turned to pread once the gauge said slow")
}

type slowMapped struct {
	mappedFile
	delay time.Duration
}

func (f *slowMapped) ReadMapped(p []byte, off int64) (int, error) {
	time.Sleep(f.delay)
	return f.mappedFile.ReadMapped(p, off)
}
