package wal

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fixed := func(n ...int) func() [][]byte {
		return func() [][]byte {
			var recs [][]byte
			for _, k := range n {
				recs = append(recs, randRecs(rng, 1, func() int { return k })...)
			}
			return recs
		}
	}
	for _, tc := range []struct {
		name string
		recs func() [][]byte
	}{
		{"none", fixed()},
		{"empty record", fixed(0)},
		{"empty records", fixed(0, 0, 0)},
		{"one byte", fixed(1)},
		{"fills block", fixed(maxPayload, maxPayload, 1)},
		{"one short of block", fixed(maxPayload-1, 5)},
		{"leaves exactly a header", fixed(maxPayload-headerSize, 0, 9)},
		{"leaves exactly a header then long", fixed(maxPayload-headerSize, 40)},
		{"leaves padding", fixed(maxPayload-headerSize-3, 20)},
		{"one over block", fixed(maxPayload+1, 3)},
		{"several blocks", fixed(5*blockSize+123, 7, 3*maxPayload)},
		{"many small", func() [][]byte { return randRecs(rng, 3000, func() int { return rng.IntN(200) }) }},
		{"mixed", func() [][]byte {
			return randRecs(rng, 300, func() int {
				if rng.IntN(10) == 0 {
					return rng.IntN(3 * blockSize)
				}
				return rng.IntN(300)
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := tc.recs()
			for _, syncEach := range []bool{false, true} {
				l := writeLog(t, recs, writeOpts{id: 9, syncEach: syncEach})
				for _, known := range []bool{false, true} {
					res := readLog(l.data, 9, known)
					require.NoError(t, res.err)
					requireRecs(t, recs, res.recs)
					require.Equal(t, l.starts, append([]int64(nil), res.offsets...))
					require.False(t, res.torn, res.reason)
					require.EqualValues(t, len(l.data), res.tailOff)
				}
			}
		})
	}
}

func TestReaderEOFIsSticky(t *testing.T) {
	l := writeLog(t, [][]byte{[]byte("a")}, writeOpts{id: 1})
	r := NewReader(bytes.NewReader(l.data), int64(len(l.data)), "log")
	off, reason, torn := r.TornTail()
	require.Equal(t, []any{int64(0), "", false}, []any{off, reason, torn}, "nothing to report before the end")
	require.EqualValues(t, -1, r.Offset())
	_, err := r.Next()
	require.NoError(t, err)
	for range 3 {
		_, err = r.Next()
		require.Equal(t, io.EOF, err)
	}
	require.Zero(t, r.SkipCorrupt(), "nothing to skip")
	_, err = r.Next()
	require.Equal(t, io.EOF, err)
}

func TestReaderAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{100, 4 << 10, 2 * blockSize} {
		recs := randRecs(rng, 50, func() int { return n })
		l := writeLog(t, recs, writeOpts{id: 3})
		r := NewReader(bytes.NewReader(l.data), int64(len(l.data)), "log")
		_, err := r.Next() // grows the reassembly buffer
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(40, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "records of %d bytes", n)
	}
}

func TestReaderLogID(t *testing.T) {
	a := writeLog(t, [][]byte{[]byte("a1"), []byte("a2")}, writeOpts{id: 0xa})
	res := readLog(a.data, 0xa, true)
	require.NoError(t, res.err)
	require.Len(t, res.recs, 2)

	// A file that is not the expected log ends at once; the reason says why.
	res = readLog(a.data, 0xb, true)
	require.NoError(t, res.err)
	require.Empty(t, res.recs)
	require.True(t, res.torn)
	require.Zero(t, res.tailOff)
	require.Contains(t, res.reason, "expected log ID 0x0000000b, found an intact chunk of log 0x0000000a")

	// Bytes of another log after this one's (stale blocks after a crash)
	// are not read as this log's, even with a valid checksum at the right
	// offset.
	b := writeLog(t, [][]byte{[]byte("b1"), []byte("b2"), []byte("b3"), []byte("b4")}, writeOpts{id: 0xb, syncEach: true})
	require.Equal(t, a.ends[1], b.starts[2], "b's third chunk sits where a ends")
	mixed := append(append([]byte(nil), a.data...), b.data[len(a.data):]...)
	for _, known := range []bool{false, true} {
		res = readLog(mixed, 0xa, known)
		require.NoError(t, res.err)
		requireRecs(t, a.recs, res.recs)
		require.True(t, res.torn)
		require.EqualValues(t, len(a.data), res.tailOff)
		require.Contains(t, res.reason, "expected log ID 0x0000000a, found an intact chunk of log 0x0000000b")
	}
}

func TestReaderIOError(t *testing.T) {
	l := writeLog(t, [][]byte{[]byte("a")}, writeOpts{id: 1})
	boom := errors.New("boom")
	r := NewReader(errReaderAt{boom}, int64(len(l.data)), "x.log")
	_, err := r.Next()
	require.ErrorIs(t, err, boom)
	require.False(t, base.IsCorruption(err))
	require.Contains(t, err.Error(), "x.log")
	_, err2 := r.Next()
	require.Equal(t, err, err2)

	// A file shorter than the size given is an I/O error, not a torn tail.
	r = NewReader(bytes.NewReader(l.data), int64(len(l.data))+10, "x.log")
	_, err = r.Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

type errReaderAt struct{ err error }

func (e errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, e.err }
