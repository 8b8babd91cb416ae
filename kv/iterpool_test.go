package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
)

// TestIteratorPooledMemory: an iterator's merge and buffers come back from
// the pool for the next one, which reads its own keys; a closed iterator
// reads nothing and closes again harmlessly, whatever the iterator that
// took its memory does.
func TestIteratorPooledMemory(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 100 {
		if err := d.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%03d", i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if i%3 == 0 {
			if err := d.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "w%03d", i), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	first, err := d.NewIter(&IterOptions{LowerBound: []byte("k010"), UpperBound: []byte("k020")})
	if err != nil {
		t.Fatal(err)
	}
	if !first.SeekGE([]byte("k015")) || string(first.Value()) != "w015" {
		t.Fatalf("first iterator on %q=%q", first.Key(), first.Value())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		it, err := d.NewIter(&IterOptions{LowerBound: []byte("k050"), UpperBound: []byte("k060")})
		if err != nil {
			t.Fatal(err)
		}
		got := scanAll(t, it)
		if len(got) != 10 || got[0] != "k050=v050" || got[1] != "k051=w051" || got[9] != "k059=v059" {
			t.Fatalf("round %d: %v", round, got)
		}
		// Backward too, which uses the value buffer.
		if !it.Last() || string(it.Key()) != "k059" || !it.Prev() || string(it.Value()) != "v058" {
			t.Fatalf("round %d: backward on %q=%q", round, it.Key(), it.Value())
		}
		// The first iterator, long closed, sees nothing of this one.
		if first.SeekGE([]byte("k050")) || first.First() || first.Next() || first.Valid() {
			t.Fatal("a closed iterator moved")
		}
		if err := first.Close(); !errors.Is(err, ErrClosed) {
			t.Fatalf("closing again: %v, want what the moves after Close met", err)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIteratorOpenAllocs bounds what opening, seeking and closing a short
// iterator allocates once the pool holds an iterator's memory: the
// Iterator and the memtable's iterator (about a dozen before the pool).
func TestIteratorOpenAllocs(t *testing.T) {
	if underRace {
		t.Skip("sync.Pool drops items under the race detector")
	}
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 100 {
		if err := d.Set(fmt.Appendf(nil, "k%03d", i), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	lower, upper := []byte("k010"), []byte("k020")
	n := testing.AllocsPerRun(200, func() {
		it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.SeekGE([]byte("k012")); ok; ok = it.Next() {
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations per iterator", n)
	if n > 2 {
		t.Fatalf("%.0f allocations per iterator, want at most 2", n)
	}
}
