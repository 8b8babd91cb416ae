package wal

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

func TestWriterOffsetsAndSize(t *testing.T) {
	f := &faultFile{}
	w := NewWriterLogID(f, "log", 1)
	require.EqualValues(t, 0, w.Size())
	off, err := w.WriteRecord([]byte("abc"))
	require.NoError(t, err)
	require.EqualValues(t, 0, off)
	require.EqualValues(t, headerSize+3, w.Size())
	require.Empty(t, f.data, "WriteRecord only buffers")
	off, err = w.WriteRecord(make([]byte, 2*blockSize))
	require.NoError(t, err)
	require.EqualValues(t, headerSize+3, off)
	require.EqualValues(t, headerSize+3+chunkedLen(headerSize+3, 2*blockSize), w.Size())
	require.NoError(t, w.Flush())
	require.Equal(t, 1, f.writes, "one Write for many records")
	require.EqualValues(t, len(f.data), w.Size())
	require.NoError(t, w.Flush())
	require.Equal(t, 1, f.writes, "nothing to flush")
	require.Zero(t, f.synced)
	require.NoError(t, w.Sync())
	require.Equal(t, len(f.data), f.synced)
	require.NoError(t, w.Close())
	require.True(t, f.closed)
	require.ErrorIs(t, w.Close(), ErrClosed)
	_, err = w.WriteRecord(nil)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, w.Flush(), ErrClosed)
	require.ErrorIs(t, w.Sync(), ErrClosed)
}

func TestChunkedLen(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		f := &discardFile{}
		w := NewWriterLogID(f, "log", 1)
		// Start at a random position, then compare the prediction with what
		// WriteRecord produced.
		_, err := w.WriteRecord(make([]byte, rng.IntN(3*blockSize)))
		require.NoError(t, err)
		n := []int{0, 1, maxPayload - 1, maxPayload, maxPayload + 1, rng.IntN(4 * blockSize)}[rng.IntN(6)]
		before := w.Size()
		off, err := w.WriteRecord(make([]byte, n))
		require.NoError(t, err)
		require.EqualValues(t, w.Size()-off, chunkedLen(off, n), "record of %d bytes at %d (size before %d)", n, off, before)
	}
}

func TestWriterFailureIsSticky(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		setup func(f *faultFile)
		fail  func(w *Writer) error
		want  error
	}{
		{"write", func(f *faultFile) { f.writeErr = boom }, (*Writer).Flush, boom},
		{"short write", func(f *faultFile) { f.short = true }, (*Writer).Flush, io.ErrShortWrite},
		{"write in sync", func(f *faultFile) { f.writeErr = boom }, (*Writer).Sync, boom},
		{"sync", func(f *faultFile) { f.syncErr = boom }, (*Writer).Sync, boom},
		{"sync in close", func(f *faultFile) { f.syncErr = boom }, (*Writer).Close, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &faultFile{}
			w := NewWriterLogID(f, "000007.log", 7)
			_, err := w.WriteRecord([]byte("one"))
			require.NoError(t, err)
			tc.setup(f)
			err = tc.fail(w)
			require.ErrorIs(t, err, tc.want)
			require.Contains(t, err.Error(), "000007.log")

			// The file recovers, but the writer must not pretend it did.
			*f = faultFile{data: f.data, closed: f.closed}
			_, err2 := w.WriteRecord([]byte("two"))
			require.Equal(t, err, err2)
			require.Equal(t, err, w.Flush())
			require.Equal(t, err, w.Sync())
			require.Equal(t, err, w.Close())
			require.True(t, f.closed, "Close closes the file of a failed writer")
			require.Equal(t, err, w.Close())
			require.Zero(t, f.synced, "no Sync after the failure")
		})
	}
}

func TestWriterAllocs(t *testing.T) {
	for _, n := range []int{0, 100, 4 << 10, 3 * blockSize} {
		w := NewWriterLogID(&discardFile{}, "log", 1)
		p := make([]byte, n)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := w.WriteRecord(p); err != nil {
				t.Fatal(err)
			}
			if _, err := w.WriteRecord(p); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "record of %d bytes", n)
	}
}

func TestWriterDropsHugeBuffer(t *testing.T) {
	w := NewWriterLogID(&discardFile{}, "log", 1)
	_, err := w.WriteRecord(make([]byte, 2*maxRetainedBuf))
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	require.Zero(t, cap(w.buf)+cap(w.spare))
	_, err = w.WriteRecord(make([]byte, 100))
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	require.NotZero(t, cap(w.buf)+cap(w.spare), "ordinary buffers are kept")
}

func TestNewWriterRandomID(t *testing.T) {
	fs := vfs.NewMem()
	ids := map[uint32]bool{}
	for i := range 8 {
		f, err := fs.Create("log")
		require.NoError(t, err)
		w := NewWriter(f, "log")
		require.NotZero(t, w.LogID())
		ids[w.LogID()] = true
		_, err = w.WriteRecord([]byte{byte(i)})
		require.NoError(t, err)
		require.NoError(t, w.Close())
		data, err := vfs.ReadFile(fs, "log")
		require.NoError(t, err)
		r := NewReader(&faultFile{data: data}, int64(len(data)), "log")
		rec, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, []byte{byte(i)}, rec)
		id, known := r.LogID()
		require.True(t, known)
		require.Equal(t, w.LogID(), id)
	}
	require.Greater(t, len(ids), 1, "IDs are random")
}

// TestConcurrentAppendAndFlush appends from one goroutine while another
// flushes and syncs (run with -race), then reads every record back in order.
func TestConcurrentAppendAndFlush(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("log")
	require.NoError(t, err)
	w := NewWriterLogID(f, "log", 7)
	const n = 5000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			var err error
			if i%16 == 0 {
				err = w.Sync()
			} else {
				err = w.Flush()
			}
			if err != nil {
				t.Error(err)
				return
			}
			if w.Size() >= int64(n*30) {
				return
			}
		}
	}()
	for i := range n {
		_, err := w.WriteRecord([]byte(fmt.Sprintf("record-%d-%s", i, strings.Repeat("x", i%40))))
		require.NoError(t, err)
	}
	<-done
	require.NoError(t, w.Close())
	r, err := fs.Open("log")
	require.NoError(t, err)
	size, _ := r.Size()
	rd := NewReaderLogID(r, size, "log", 7)
	for i := range n {
		rec, err := rd.Next()
		require.NoError(t, err, "record %d", i)
		require.Equal(t, fmt.Sprintf("record-%d-%s", i, strings.Repeat("x", i%40)), string(rec))
	}
	_, err = rd.Next()
	require.ErrorIs(t, err, io.EOF)
}
