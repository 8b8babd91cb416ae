package kv

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/vfs"
)

// TestIteratorSoleTable: an iterator whose bounds one table alone
// overlaps, with no memtable entry, reads that table's iterator without
// the merge (Iterator.sole), and returns what the merge returned: the
// newest visible version, no deleted key, no key under a range tombstone,
// the versions a snapshot sees, forward and backward and from seeks. A
// memtable entry within the bounds puts the merge back.
func TestIteratorSoleTable(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }
	old, latest := map[string]string{}, map[string]string{}
	for i := range 200 {
		require.NoError(t, d.Set(key(i), fmt.Appendf(nil, "v%03d", i), NoSync))
		old[string(key(i))] = fmt.Sprintf("v%03d", i)
		latest[string(key(i))] = fmt.Sprintf("v%03d", i)
	}
	require.NoError(t, d.Flush())
	snap := d.NewSnapshot()
	defer snap.Close()
	for i := range 200 {
		switch {
		case i%7 == 0:
			require.NoError(t, d.Delete(key(i), NoSync))
			delete(latest, string(key(i)))
		case i%5 == 0:
			require.NoError(t, d.Set(key(i), fmt.Appendf(nil, "w%03d", i), NoSync))
			latest[string(key(i))] = fmt.Sprintf("w%03d", i)
		}
	}
	require.NoError(t, d.DeleteRange(key(100), key(110), NoSync))
	for i := 100; i < 110; i++ {
		delete(latest, string(key(i)))
	}
	require.NoError(t, d.Flush())
	// One table holding both versions (the snapshot keeps the old ones)
	// and the range tombstone.
	require.NoError(t, d.Compact(nil, nil))

	want := func(m map[string]string, lo, hi int) []string {
		var out []string
		for i := lo; i < hi; i++ {
			if v, ok := m[string(key(i))]; ok {
				out = append(out, string(key(i))+"="+v)
			}
		}
		return out
	}
	check := func(o *IterOptions, m map[string]string, lo, hi int, sole bool) {
		t.Helper()
		it, err := d.NewIter(o)
		require.NoError(t, err)
		defer func() { require.NoError(t, it.Close()) }()
		require.Equal(t, sole, it.sole, "bounds [%s, %s)", o.LowerBound, o.UpperBound)
		w := want(m, lo, hi)
		require.Equal(t, w, scanAll(t, it))
		var back []string
		for ok := it.Last(); ok; ok = it.Prev() {
			back = append(back, string(it.Key())+"="+string(it.Value()))
		}
		require.NoError(t, it.Error())
		slices.Reverse(back)
		require.Equal(t, w, back)
		// From a seek into the middle, and a change of direction there.
		mid := (lo + hi) / 2
		var from []string
		for ok := it.SeekGE(key(mid)); ok; ok = it.Next() {
			from = append(from, string(it.Key())+"="+string(it.Value()))
		}
		require.Equal(t, want(m, mid, hi), from)
		if it.SeekGE(key(mid)) && it.Prev() {
			prev := want(m, lo, mid)
			require.Equal(t, prev[len(prev)-1], string(it.Key())+"="+string(it.Value()))
		}
	}
	bounds := func(lo, hi int) *IterOptions {
		return &IterOptions{LowerBound: key(lo), UpperBound: key(hi)}
	}
	check(bounds(10, 60), latest, 10, 60, true)
	check(bounds(95, 115), latest, 95, 115, true)
	check(&IterOptions{}, latest, 0, 200, true)
	o := bounds(95, 115)
	o.Snapshot = snap
	check(o, old, 95, 115, true)

	// A memtable entry outside the bounds leaves the table alone to read;
	// not for an iterator without bounds.
	require.NoError(t, d.Set(key(300), []byte("x300"), NoSync))
	check(bounds(10, 60), latest, 10, 60, true)
	check(bounds(60, 200), latest, 60, 200, true)
	latest[string(key(300))] = "x300"
	check(&IterOptions{}, latest, 0, 301, false)
	// One inside them puts the merge back, and is returned (or hides the
	// key, when it is a deletion), except to an older snapshot.
	require.NoError(t, d.Set(key(20), []byte("x020"), NoSync))
	latest[string(key(20))] = "x020"
	check(bounds(10, 60), latest, 10, 60, false)
	require.NoError(t, d.Delete(key(61), NoSync))
	delete(latest, string(key(61)))
	check(bounds(60, 200), latest, 60, 200, false)
	o = bounds(10, 60)
	o.Snapshot = snap
	check(o, old, 10, 60, false)
	// The upper bound is exclusive: an entry there is outside.
	check(bounds(62, 200), latest, 62, 200, true)
	check(bounds(0, 20), latest, 0, 20, true)
}
