package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// testLog is a log written by a test and what it holds.
type testLog struct {
	data   []byte
	recs   [][]byte
	starts []int64 // offset of each record's first chunk
	ends   []int64 // offset just past each record's last chunk
}

// writeOpts says how writeLog writes.
type writeOpts struct {
	id       uint32
	syncEach bool // Sync after every record (else Flush)
}

// writeLog writes recs through a Writer into a MemFS file and returns the
// file's bytes.
func writeLog(t testing.TB, recs [][]byte, o writeOpts) testLog {
	t.Helper()
	fs := vfs.NewMem()
	f, err := fs.Create("log")
	require.NoError(t, err)
	w := NewWriterLogID(f, "log", o.id)
	l := testLog{recs: recs}
	for _, p := range recs {
		off, err := w.WriteRecord(p)
		require.NoError(t, err)
		l.starts = append(l.starts, off)
		l.ends = append(l.ends, w.Size())
		if o.syncEach {
			require.NoError(t, w.Sync())
		} else {
			require.NoError(t, w.Flush())
		}
	}
	require.NoError(t, w.Close())
	l.data, err = vfs.ReadFile(fs, "log")
	require.NoError(t, err)
	require.EqualValues(t, len(l.data), w.Size())
	return l
}

// readResult is everything a Reader said about a log.
type readResult struct {
	recs    [][]byte
	offsets []int64
	err     error // nil after io.EOF
	tailOff int64
	reason  string
	torn    bool
}

// readLog reads data to the end or to the first error.
func readLog(data []byte, id uint32, known bool) readResult {
	var r *Reader
	if known {
		r = NewReaderLogID(bytes.NewReader(data), int64(len(data)), "log", id)
	} else {
		r = NewReader(bytes.NewReader(data), int64(len(data)), "log")
	}
	return drain(r)
}

func drain(r *Reader) readResult {
	var res readResult
	for {
		rec, err := r.Next()
		if err == io.EOF {
			res.tailOff, res.reason, res.torn = r.TornTail()
			return res
		}
		if err != nil {
			res.err = err
			return res
		}
		res.recs = append(res.recs, bytes.Clone(rec))
		res.offsets = append(res.offsets, r.Offset())
	}
}

// randRecs returns n records with lengths drawn from sizes, filled with
// printable bytes so that fuzz seeds stay readable.
func randRecs(rng *rand.Rand, n int, size func() int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		p := make([]byte, size())
		for j := range p {
			p[j] = 'a' + byte(rng.IntN(26))
		}
		recs[i] = p
	}
	return recs
}

// refCRC32C is a bitwise CRC-32C, independent of hash/crc32, starting from
// the given value as hash/crc32.Update does.
func refCRC32C(crc uint32, b []byte) uint32 {
	crc = ^crc
	for _, c := range b {
		crc ^= uint32(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82f63b78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// refRecord decodes the record starting at off in data the slow way, from
// the format description alone, and reports whether every chunk of it is
// intact and in sequence.
func refRecord(data []byte, off int64) ([]byte, bool) {
	rec := []byte{}
	for first := true; ; first = false {
		if off%blockSize > blockSize-headerSize || off+headerSize > int64(len(data)) {
			return nil, false
		}
		h := data[off:]
		n := int64(binary.LittleEndian.Uint16(h[4:]))
		t := h[6]
		if off%blockSize+headerSize+n > blockSize || off+headerSize+n > int64(len(data)) {
			return nil, false
		}
		seed := uint32(off) ^ uint32(off>>32)
		c := refCRC32C(seed, h[4:headerSize+n])
		if binary.LittleEndian.Uint32(h) != (c>>15|c<<17)+0xa282ead8 {
			return nil, false
		}
		rec = append(rec, h[headerSize:headerSize+n]...)
		switch {
		case first && t == 1, !first && t == 4:
			return rec, true
		case first && t == 2, !first && t == 3:
		default:
			return nil, false
		}
		off += headerSize + n
		if off%blockSize > blockSize-headerSize {
			off = off - off%blockSize + blockSize
		}
	}
}

// faultFile is a vfs.File whose Write and Sync fail on demand.
type faultFile struct {
	data     []byte
	synced   int
	writeErr error
	short    bool // write half the bytes and report no error
	syncErr  error
	closed   bool
	writes   int
}

var _ vfs.File = (*faultFile)(nil)

func (f *faultFile) Write(p []byte) (int, error) {
	f.writes++
	if f.writeErr != nil {
		return 0, f.writeErr
	}
	if f.short {
		f.data = append(f.data, p[:len(p)/2]...)
		return len(p) / 2, nil
	}
	f.data = append(f.data, p...)
	return len(p), nil
}

func (f *faultFile) Sync() error {
	if f.syncErr != nil {
		return f.syncErr
	}
	f.synced = len(f.data)
	return nil
}

func (f *faultFile) Close() error {
	if f.closed {
		return errors.New("closed twice")
	}
	f.closed = true
	return nil
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(f.data).ReadAt(p, off)
}
func (f *faultFile) Size() (int64, error)        { return int64(len(f.data)), nil }
func (f *faultFile) Prefetch(off, n int64) error { return nil }
func (f *faultFile) Evict() error                { return nil }
func (f *faultFile) Alignment() int              { return 1 }

// discardFile is a vfs.File that drops what is written, for benchmarks.
type discardFile struct{ faultFile }

func (f *discardFile) Write(p []byte) (int, error) { return len(p), nil }

// requireRecs checks that got holds the records of want, in order; nil and
// empty records are equal.
func requireRecs(t testing.TB, want, got [][]byte, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got), msgAndArgs...)
	for i := range want {
		if !bytes.Equal(want[i], got[i]) {
			require.Equal(t, want[i], got[i], append([]any{"record %d"}, i)...)
		}
	}
}

// readPrefix reads data with r, reset, checking as it goes that the records
// are a prefix of want. It returns what the reader said, with recs left nil
// and n the number of records read. It allocates little, for tests that read
// a log thousands of times.
func readPrefix(t testing.TB, r *Reader, data []byte, want [][]byte, msgAndArgs ...any) (n int, res readResult) {
	t.Helper()
	r.Reset(bytes.NewReader(data), int64(len(data)), "log")
	for {
		rec, err := r.Next()
		if err == io.EOF {
			res.tailOff, res.reason, res.torn = r.TornTail()
			return n, res
		}
		if err != nil {
			res.err = err
			return n, res
		}
		if n >= len(want) || !bytes.Equal(rec, want[n]) {
			require.Fail(t, "record differs from what was written", append([]any{"record %d"}, n, msgAndArgs)...)
		}
		n++
	}
}
