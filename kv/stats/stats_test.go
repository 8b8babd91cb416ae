package stats

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for c := Counter(0); c < NumCounters; c++ {
		n := c.String()
		require.NotEmpty(t, n, "counter %d has no name", c)
		require.False(t, seen[n], "duplicate name %s", n)
		seen[n] = true
		got, ok := Lookup(n)
		require.True(t, ok)
		require.Equal(t, c, got)
	}
	// The names tools depend on.
	for _, n := range []string{"file.read.count", "file.read.bytes", "file.opens", "block.cache.hit",
		"block.cache.miss", "prefetch.bytes.used", "prefetch.bytes.wasted", "async.read.count",
		"multiget.keys", "multiget.batches", "multiscan.coalesced.reads"} {
		require.True(t, seen[n], n)
	}
}

func TestSinkAndSnapshot(t *testing.T) {
	var db, op Counters
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := Sink{DB: &db, Op: &op}
			for range 1000 {
				s.Add(FileReadCount, 1)
			}
			Sink{DB: &db}.Add(FileReadBytes, 10)
		}()
	}
	wg.Wait()
	require.EqualValues(t, 4000, db.Get(FileReadCount))
	require.EqualValues(t, 4000, op.Get(FileReadCount))
	require.EqualValues(t, 40, db.Get(FileReadBytes))
	require.EqualValues(t, 0, op.Get(FileReadBytes))

	before := db.Snapshot()
	db.Add(FileOpens, 3)
	d := db.Snapshot().Sub(before)
	require.EqualValues(t, 3, d.Get(FileOpens))
	require.EqualValues(t, 0, d.Get(FileReadCount))

	var b strings.Builder
	require.NoError(t, d.WriteTo(&b, "kv."))
	require.Contains(t, b.String(), "kv.file.opens COUNT : 3\n")

	var nilSet *Counters
	nilSet.Add(FileOpens, 1) // no panic
	require.Zero(t, nilSet.Get(FileOpens))
}

// TestReset: Reset zeroes every counter, those that moved and those that
// did not, and a later Add counts from zero.
func TestReset(t *testing.T) {
	var c Counters
	c.Add(FileReadCount, 3)
	c.Add(NumCounters-1, 2)
	c.Reset()
	require.Equal(t, Snapshot{}, c.Snapshot())
	c.Add(FileReadCount, 1)
	c.Reset()
	c.Reset()
	c.Add(FileReadBytes, 5)
	require.Equal(t, int64(0), c.Get(FileReadCount))
	require.Equal(t, int64(5), c.Get(FileReadBytes))
}
