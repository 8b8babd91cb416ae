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

// TestCompactionPacerReadsOnly paces only while the read count moves, and
// owes nothing for what ran unpaced before.
func TestCompactionPacerReadsOnly(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	reads := int64(0)
	p := compactionPacer{limit: 1, start: time.Now(), reads: func() int64 { return reads }}

	// Far ahead of the limit, but nothing reads: no wait.
	p.read = 1 << 40
	require.True(t, p.wait(closed))
	require.False(t, p.paced)

	// A read: the limit starts from here, with nothing owed.
	reads++
	require.True(t, p.wait(closed))
	require.True(t, p.paced)
	require.Zero(t, p.read)

	// Reads go on and the compaction runs ahead: it waits (until closing).
	reads++
	p.read = 1 << 40
	require.False(t, p.wait(closed))

	// The reads stop: once they have been quiet long enough, full speed.
	p.lastRead = time.Now().Add(-2 * readsQuiet)
	require.True(t, p.wait(closed))
	require.False(t, p.paced)

	// Reads counted before the compaction began are not fresh.
	r := compactionPacer{limit: 1, start: time.Now(), read: 1 << 40}
	r.watchReads(func() int64 { return 7 })
	require.True(t, r.wait(closed))
	require.False(t, r.paced)

	// Without a limit the reads change nothing.
	q := compactionPacer{start: time.Now(), read: 1 << 40, reads: func() int64 { reads++; return reads }}
	require.True(t, q.wait(closed))
}

// TestCompactionPaceReadsOnlyKeepsData compacts with a limit the data
// outruns while an iterator keeps seeking, and reads everything back.
func TestCompactionPaceReadsOnlyKeepsData(t *testing.T) {
	o := testOptions(vfs.NewMem())
	o.CompactionRateLimit = 64 << 20
	o.CompactionPaceReadsOnly = true
	d, err := Open("/db", o)
	require.NoError(t, err)
	defer d.Close()
	for i := range 5000 {
		require.NoError(t, d.Set(benchKey(nil, uint64(i)), make([]byte, 100), NoSync))
	}
	before := d.foregroundReads()
	_, err = d.Get(benchKey(nil, 1), nil)
	require.NoError(t, err)
	require.Greater(t, d.foregroundReads(), before)
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

// TestLongScanMovesForegroundReads checks that a scan counts as reading
// while it runs, not only at its seek: CompactionPaceReadsOnly keeps
// pacing beside one long scan.
func TestLongScanMovesForegroundReads(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	value := make([]byte, 100)
	for i := range 40000 { // 4.6 MB of entries: at least two read samples
		require.NoError(t, d.Set(benchKey(nil, uint64(i)), value, NoSync))
	}
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	defer it.Close()
	require.True(t, it.First())
	afterSeek := d.foregroundReads()
	for it.Next() {
	}
	require.Greater(t, d.foregroundReads(), afterSeek)
}
