package kv

import (
	"fmt"
	"testing"

	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

func TestEstimateRange(t *testing.T) {
	const n = 20000
	d := readPathDB(t, n, nil)
	key := func(i int) []byte { return fmt.Appendf(nil, "k%08d", i) }
	entryBytes := int64(len(key(0)) + 100)

	within := func(t *testing.T, got RangeEstimate, keys int64, tolerance float64) {
		t.Helper()
		require.InDelta(t, float64(keys), float64(got.Keys), tolerance*float64(keys)+1, "keys")
		require.InDelta(t, float64(keys*entryBytes), float64(got.Bytes), tolerance*float64(keys*entryBytes)+1, "bytes")
	}
	before := d.Stats()
	for _, tc := range []struct {
		name       string
		start, end []byte
		keys       int64
	}{
		{"all", nil, nil, n},
		{"prefix", []byte("k"), []byte("l"), n},
		{"first half", nil, key(n / 2), n / 2},
		{"middle", key(5000), key(15000), 10000},
		{"last quarter", key(3 * n / 4), nil, n / 4},
		{"past the end", []byte("z"), nil, 0},
		{"before the start", []byte("a"), []byte("b"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est, err := d.EstimateRange(tc.start, tc.end)
			require.NoError(t, err)
			// Block granularity: a few blocks of 30-odd entries either way.
			within(t, est, tc.keys, 0.02)
		})
	}
	after := d.Stats()
	require.Equal(t, before.Get(stats.BlockCacheMiss), after.Get(stats.BlockCacheMiss), "estimates read no data block")
	require.Equal(t, before.Get(stats.BlockCacheHit), after.Get(stats.BlockCacheHit), "estimates read no data block")

	// The memtable counts exactly: new keys add, deletions subtract.
	b := d.NewBatch()
	for i := range 1000 {
		require.NoError(t, b.Set(fmt.Appendf(nil, "m%08d", i), make([]byte, 100)))
	}
	for i := range 500 {
		require.NoError(t, b.Delete(key(i)))
	}
	require.NoError(t, b.Commit(NoSync))
	est, err := d.EstimateRange([]byte("m"), []byte("n"))
	require.NoError(t, err)
	require.Equal(t, RangeEstimate{Keys: 1000, Bytes: 1000 * entryBytes}, est)
	est, err = d.EstimateRange(nil, nil)
	require.NoError(t, err)
	within(t, est, n+1000-500, 0.02)

	// Flushed and compacted, the deletions are gone and so are the keys.
	require.NoError(t, d.Compact(nil, nil))
	est, err = d.EstimateRange(key(0), key(1000))
	require.NoError(t, err)
	within(t, est, 500, 0.1)

	require.NoError(t, d.Close())
	_, err = d.EstimateRange(nil, nil)
	require.ErrorIs(t, err, ErrClosed)
}

// TestApproximateSize checks the table bytes of ranges against the data
// size of the database's tables (readPathDB writes uncompressed blocks):
// in proportion, none outside, and nothing for the memtable.
func TestApproximateSize(t *testing.T) {
	const n = 20000
	d := readPathDB(t, n, nil)
	key := func(i int) []byte { return fmt.Appendf(nil, "k%08d", i) }
	all, err := d.ApproximateSize(nil, nil)
	require.NoError(t, err)
	require.Greater(t, all, int64(n*100), "at least the values")
	for _, tc := range []struct {
		name       string
		start, end []byte
		share      float64
	}{
		{"prefix", []byte("k"), []byte("l"), 1},
		{"first half", nil, key(n / 2), 0.5},
		{"middle", key(5000), key(15000), 0.5},
		{"last quarter", key(3 * n / 4), nil, 0.25},
		{"past the end", []byte("z"), nil, 0},
		{"before the start", []byte("a"), []byte("b"), 0},
	} {
		got, err := d.ApproximateSize(tc.start, tc.end)
		require.NoError(t, err, tc.name)
		require.InDelta(t, tc.share*float64(all), float64(got), 0.02*float64(all)+1, tc.name)
	}
	require.NoError(t, d.Set([]byte("m1"), make([]byte, 1000), NoSync))
	got, err := d.ApproximateSize([]byte("m"), []byte("n"))
	require.NoError(t, err)
	require.Zero(t, got, "memtables are not counted")
	require.NoError(t, d.Close())
	_, err = d.ApproximateSize(nil, nil)
	require.ErrorIs(t, err, ErrClosed)
}

// TestEstimateRangeDeletions: keys a range tombstone deletes do not count,
// whether the tombstone is in a memtable or flushed to a table, and keys
// written after it do.
func TestEstimateRangeDeletions(t *testing.T) {
	const n = 20000
	d := readPathDB(t, n, nil)
	key := func(i int) []byte { return fmt.Appendf(nil, "k%08d", i) }
	check := func(what string, keys int64) {
		t.Helper()
		est, err := d.EstimateRange(nil, nil)
		require.NoError(t, err)
		require.InDelta(t, float64(keys), float64(est.Keys), 0.03*n, what)
	}
	check("before", n)
	require.NoError(t, d.DeleteRange(key(0), key(n/2), nil))
	check("tombstone in the memtable", n/2)
	require.NoError(t, d.Set(key(7), []byte("again"), nil))
	est, err := d.EstimateRange(key(0), key(n/2))
	require.NoError(t, err)
	require.EqualValues(t, 1, est.Keys, "the key written after the tombstone")
	require.NoError(t, d.Flush())
	check("tombstone in a table", n/2)
	require.NoError(t, d.Compact(nil, nil))
	check("compacted", n/2)
}
