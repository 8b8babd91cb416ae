package kv

import (
	"testing"
	"time"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

func TestCompactionPacer(t *testing.T) {
	open := make(chan struct{})
	closed := make(chan struct{})
	close(closed)

	// No limit, or nothing read yet: no wait.
	require.True(t, (&compactionPacer{read: 1 << 40, start: time.Now()}).wait(closed))
	require.True(t, (&compactionPacer{limit: 1, start: time.Now()}).wait(open))
	// Far ahead of the limit: the wait ends when the database closes.
	require.False(t, (&compactionPacer{limit: 1, read: 1 << 40, start: time.Now()}).wait(closed))
	// Behind the limit: no wait.
	require.True(t, (&compactionPacer{limit: 1 << 20, read: 1 << 20, start: time.Now().Add(-time.Hour)}).wait(open))

	o := testOptions(vfs.NewMem())
	o.CompactionRateLimit = -1
	_, err := Open("/db", o)
	require.ErrorContains(t, err, "CompactionRateLimit -1 is negative")
}

// TestCompactionRateLimitKeepsData compacts under a limit the data outruns
// (it waits once per 1,024 entries) and reads everything back.
func TestCompactionRateLimitKeepsData(t *testing.T) {
	o := testOptions(vfs.NewMem())
	o.CompactionRateLimit = 64 << 20
	d, err := Open("/db", o)
	require.NoError(t, err)
	defer d.Close()
	for i := range 5000 {
		require.NoError(t, d.Set(benchKey(nil, uint64(i)), make([]byte, 100), NoSync))
	}
	require.NoError(t, d.Compact(nil, nil))
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	require.NoError(t, it.Close())
	require.Equal(t, 5000, n)
}
