package wal

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files and fuzz seeds")

func TestRefCRC32C(t *testing.T) {
	// The check value of CRC-32C.
	require.Equal(t, uint32(0xe3069283), refCRC32C(0, []byte("123456789")))
}

func TestChunkChecksum(t *testing.T) {
	for _, tc := range []struct {
		off int64
		b   []byte
	}{
		{0, nil},
		{0, []byte("hello")},
		{blockSize, bytes.Repeat([]byte{0xff}, 100)},
		{1<<40 + 77, []byte("far")},
	} {
		c := refCRC32C(uint32(tc.off)^uint32(tc.off>>32), tc.b)
		require.Equal(t, (c>>15|c<<17)+0xa282ead8, chunkChecksum(tc.off, tc.b), "off %d", tc.off)
	}
	// The offset takes part: the same bytes at another offset do not verify.
	require.NotEqual(t, chunkChecksum(0, []byte("x")), chunkChecksum(blockSize, []byte("x")))
}

func TestSyncDistance(t *testing.T) {
	for _, tc := range []struct {
		off, synced int64
		want        uint32
	}{
		{0, 0, 0},
		{100, 40, 60},
		{1 << 33, 0, syncUnknown},
		{1<<32 - 2, 0, 1<<32 - 2},
		{1<<32 - 1, 0, syncUnknown},
	} {
		require.Equal(t, tc.want, syncDistance(tc.off, tc.synced), "%+v", tc)
	}
}

// chunkAt describes the chunk at off: type, length, log ID, sync distance.
func chunkAt(data []byte, off int64) (chunkType, int, uint32, uint32) {
	h := data[off:]
	return chunkType(h[offType]), int(binary.LittleEndian.Uint16(h[offLength:])),
		binary.LittleEndian.Uint32(h[offLogID:]), binary.LittleEndian.Uint32(h[offSyncDist:])
}

func TestLayout(t *testing.T) {
	const id = 0x01020304
	// Record sizes that leave exactly 14 bytes (padding) at the end of
	// block 0, then one record spanning three blocks.
	first := blockSize - headerSize - (headerSize - 1) - headerSize
	recs := [][]byte{
		make([]byte, first),
		{}, // 0-byte record: a header alone
		bytes.Repeat([]byte{7}, 2*maxPayload+10),
		[]byte("tail"),
	}
	// Record 0 leaves headerSize+14 bytes in block 0: the empty record takes
	// headerSize of them and 14 bytes of padding follow.
	l := writeLog(t, recs, writeOpts{id: id, syncEach: true})
	d := l.data

	typ, n, gotID, dist := chunkAt(d, 0)
	require.Equal(t, []any{typeFull, first, uint32(id), uint32(0)}, []any{typ, n, gotID, dist})

	off1 := int64(headerSize + first)
	require.Equal(t, off1, l.starts[1])
	typ, n, _, dist = chunkAt(d, off1)
	require.Equal(t, typeFull, typ)
	require.Equal(t, 0, n)
	require.Equal(t, uint32(0), dist, "record 0 was synced before record 1 was framed")

	// 14 bytes of zero padding, then record 2 at block 1.
	pad := d[off1+headerSize : blockSize]
	require.Len(t, pad, headerSize-1)
	require.Equal(t, make([]byte, headerSize-1), pad)
	require.EqualValues(t, blockSize, l.starts[2])
	typ, n, _, dist = chunkAt(d, blockSize)
	require.Equal(t, []any{typeFirst, maxPayload, uint32(blockSize - off1 - headerSize)}, []any{typ, n, dist})
	typ, n, _, _ = chunkAt(d, 2*blockSize)
	require.Equal(t, []any{typeMiddle, maxPayload}, []any{typ, n})
	typ, n, _, _ = chunkAt(d, 3*blockSize)
	require.Equal(t, []any{typeLast, 10}, []any{typ, n})
	require.EqualValues(t, 3*blockSize+headerSize+10, l.starts[3])

	for i, off := range l.starts {
		rec, ok := refRecord(d, off)
		require.True(t, ok, "record %d", i)
		require.Equal(t, recs[i], rec)
	}
}

// hexDump renders data 16 bytes a line with offsets.
func hexDump(data []byte) string {
	var b strings.Builder
	for off := 0; off < len(data); off += 16 {
		end := min(off+16, len(data))
		fmt.Fprintf(&b, "%06x  %s\n", off, hex.EncodeToString(data[off:end]))
	}
	return b.String()
}

// TestGolden freezes the format: the bytes of a small log must never
// change. Regenerate with -rewrite only when deliberately changing the
// format, which breaks every existing log.
func TestGolden(t *testing.T) {
	f := &faultFile{}
	w := NewWriterLogID(f, "golden", 42)
	for i, p := range []string{"strata", "", strings.Repeat("wal ", 10), "last"} {
		_, err := w.WriteRecord([]byte(p))
		require.NoError(t, err)
		if i == 1 {
			require.NoError(t, w.Sync()) // later chunks carry a sync distance
		}
	}
	require.NoError(t, w.Close())
	got := hexDump(f.data)
	path := filepath.Join("testdata", "golden.hex")
	if *rewrite {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}
