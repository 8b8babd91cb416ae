package kv

import (
	"fmt"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// TestScanFillsAQuarterOfTheCache checks that one scan of more data than
// the block cache holds fills at most a quarter of it (scanFillShare), and
// still returns every entry.
func TestScanFillsAQuarterOfTheCache(t *testing.T) {
	o := testOptions(vfs.NewMem())
	d, err := Open("/db", o)
	require.NoError(t, err)
	defer d.Close()
	const n = 20000
	val := make([]byte, 100)
	for i := range n {
		copy(val, fmt.Sprintf("value%08d", i))
		require.NoError(t, d.Set(fmt.Appendf(nil, "key%08d", i), val, NoSync))
	}
	require.NoError(t, d.Compact(nil, nil))
	capacity := d.Metrics().BlockCacheSize
	require.Less(t, capacity, int64(n*100), "the table is larger than the cache")

	it, err := d.NewIter(nil)
	require.NoError(t, err)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		require.Equal(t, fmt.Sprintf("key%08d", i), string(it.Key()))
		require.Equal(t, fmt.Sprintf("value%08d", i), string(it.Value()[:13]))
		i++
	}
	require.Equal(t, n, i)
	used := d.Metrics().BlockCacheUsage
	require.Greater(t, used, int64(0))
	// A quarter, plus the block that crossed it and the entries' overhead.
	require.Less(t, used, capacity/scanFillShare*3/2, "cache usage %d of %d", used, capacity)

	// A seek starts a new scan, which fills the cache again.
	require.True(t, it.SeekGE([]byte("key00015000")))
	for ok := true; ok; ok = it.Next() {
	}
	require.NoError(t, it.Close())
	require.Greater(t, d.Metrics().BlockCacheUsage, used)
}
