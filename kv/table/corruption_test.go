package table

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// checkAgainstTruth opens data and reads everything it can through scans in
// both directions, seeks and Gets, requiring every answer to match es and
// every error to be a corruption error. It returns the first error met.
func checkAgainstTruth(t *testing.T, data []byte, es []entry, ts []Tombstone, ro ReaderOptions) error {
	t.Helper()
	r, err := openBytes(data, ro)
	if err != nil {
		require.True(t, base.IsCorruption(err), "open: %v", err)
		return err
	}
	defer r.Close()
	require.Equal(t, len(ts), len(r.RangeDeletes()))
	var first error
	note := func(err error) {
		if err == nil {
			return
		}
		require.True(t, base.IsCorruption(err), "%v", err)
		if first == nil {
			first = err
		}
	}

	it := r.NewIter(IterOptions{})
	i := 0
	for kv := it.First(); kv != nil; kv = it.Next() {
		require.Equal(t, es[i].k, kv.K)
		require.True(t, bytes.Equal(es[i].v, kv.V))
		i++
	}
	if it.Error() == nil {
		require.Equal(t, len(es), i, "a scan that ends without error saw everything")
	}
	note(it.Error())
	i = len(es)
	for kv := it.Last(); kv != nil; kv = it.Prev() {
		i--
		require.Equal(t, es[i].k, kv.K)
		require.True(t, bytes.Equal(es[i].v, kv.V))
	}
	if it.Error() == nil {
		require.Zero(t, i)
	}
	note(it.Error())
	for j := 0; j < len(es); j += 7 {
		kv := it.SeekGE(es[j].k)
		if kv != nil {
			require.Equal(t, es[j].k, kv.K)
		} else {
			require.Error(t, it.Error())
		}
		note(it.Error())
		kv = it.SeekLT(es[j].k)
		if kv != nil {
			require.Equal(t, es[j-1].k, kv.K)
		} else if j > 0 {
			require.Error(t, it.Error())
		}
		note(it.Error())
	}
	note(it.Close())

	for j := 0; j < len(es); j += 3 {
		u := base.UserKey(es[j].k)
		want := getTruth(es, u, base.SeqNumMax)
		v, kind, _, found, err := r.Get(u, base.SeqNumMax, nil, nil)
		if err != nil {
			note(err)
			continue
		}
		require.True(t, found, "Get(%q)", u)
		require.Equal(t, base.KindOfKey(want.k), kind)
		require.True(t, bytes.Equal(want.v, v))
	}
	return first
}

func corruptionTable(rng *rand.Rand, n int, c Compression, bs int) ([]entry, []Tombstone, WriterOptions) {
	es := randomEntries(rng, n, false)
	ts := []Tombstone{{Start: []byte("b"), End: []byte("d"), Seq: 3}, {Start: []byte("a"), End: []byte("c"), Seq: 7}}
	return es, ts, WriterOptions{BlockSize: bs, Compression: c, RestartInterval: 4, FilterPolicy: filter.Policy{Type: filter.Bloom}}
}

// TestCorruptEveryByte flips every byte of a small file in turn.
func TestCorruptEveryByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 20))
	es, ts, opts := corruptionTable(rng, 40, SnappyCompression, 128)
	data := buildTable(t, es, ts, opts)
	require.NoError(t, checkAgainstTruth(t, data, es, ts, ReaderOptions{}))
	r, err := openBytes(data, ReaderOptions{})
	require.NoError(t, err)
	dataEnd := r.DataEnd()
	r.Close()

	for pos := range data {
		for _, x := range []byte{0xff, 0x01} {
			b := slices.Clone(data)
			b[pos] ^= x
			err := checkAgainstTruth(t, b, es, ts, ReaderOptions{})
			require.Error(t, err, "byte %d ^ %#x went unnoticed", pos, x)
			var ce *base.CorruptionError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, "t.sst", ce.File)
			if uint64(pos) < dataEnd {
				// In a data block: the block's checksum catches it, and the
				// error names the block.
				require.Contains(t, err.Error(), "checksum mismatch", "byte %d", pos)
				require.LessOrEqual(t, ce.Offset, int64(pos))
			}
		}
	}
}

// TestCorruptSampled flips sampled bytes of bigger files, with every
// compression and with a cache.
func TestCorruptSampled(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for _, c := range []Compression{NoCompression, SnappyCompression, ZstdCompression} {
		t.Run(c.String(), func(t *testing.T) {
			es, ts, opts := corruptionTable(rng, 600, c, 512)
			data := buildTable(t, es, ts, opts)
			for range 150 {
				pos := rng.IntN(len(data))
				b := slices.Clone(data)
				b[pos] ^= byte(1 + rng.IntN(255))
				err := checkAgainstTruth(t, b, es, ts, ReaderOptions{Cache: cache.New(16 << 10)})
				require.Error(t, err, "byte %d of %d", pos, len(data))
			}
		})
	}
}

// TestBlockMisplaced moves a block to another offset of its file, and into
// another file holding the same bytes at the same offset: both fail their
// checksums, thanks to the context modifier.
func TestBlockMisplaced(t *testing.T) {
	var es []entry
	for i := range 20 {
		es = append(es, entry{ikey(fmt.Sprintf("k%02d", i), 1, base.KindSet), []byte("value")})
	}
	opts := WriterOptions{BlockSize: 1} // one entry per block, all the same length
	a := buildTable(t, es, nil, opts)
	b := buildTable(t, es, nil, opts)
	require.NotEqual(t, a, b, "files differ in their base context")
	r, err := openBytes(a, ReaderOptions{})
	require.NoError(t, err)
	hs := r.BlocksInRange(nil, nil, nil)
	r.Close()
	h0, h1 := hs[0], hs[1]
	require.Equal(t, h0.Length, h1.Length)

	// Swap blocks 0 and 1 within a.
	swapped := slices.Clone(a)
	copy(swapped[h0.Offset:h0.End()], a[h1.Offset:h1.End()])
	copy(swapped[h1.Offset:h1.End()], a[h0.Offset:h0.End()])
	err = checkAgainstTruth(t, swapped, es, nil, ReaderOptions{})
	require.ErrorContains(t, err, "checksum mismatch")

	// Block 3 of b at the same offset of a.
	h3 := hs[3]
	mixed := slices.Clone(a)
	copy(mixed[h3.Offset:h3.End()], b[h3.Offset:h3.End()])
	require.NotEqual(t, a[h3.Offset:h3.End()], b[h3.Offset:h3.End()], "the trailers differ")
	err = checkAgainstTruth(t, mixed, es, nil, ReaderOptions{})
	require.ErrorContains(t, err, "checksum mismatch")
}

func TestTruncatedFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	es, ts, opts := corruptionTable(rng, 100, NoCompression, 256)
	data := buildTable(t, es, ts, opts)
	for n := 0; n < len(data); n += 1 + n/4 {
		_, err := openBytes(data[:n], ReaderOptions{})
		require.True(t, base.IsCorruption(err), "%d bytes: %v", n, err)
	}
	// Appended garbage moves the footer: also refused.
	_, err := openBytes(append(slices.Clone(data), 0), ReaderOptions{})
	require.True(t, base.IsCorruption(err))
}
