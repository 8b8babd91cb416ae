package kv

import (
	"bytes"
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
// Iterator alone (about a dozen before the pool).
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
	if n > 1 {
		t.Fatalf("%.0f allocations per iterator, want at most 1", n)
	}
}

// TestIteratorOpenAllocsLevels is TestIteratorOpenAllocs over a tree with
// a memtable, an L0 table and tables in a lower level, the shape a
// database's short scans read: the level iterators, their table openers
// and the memtable's iterator come from the pool too, so only the Iterator
// is allocated.
func TestIteratorOpenAllocsLevels(t *testing.T) {
	if underRace {
		t.Skip("sync.Pool drops items under the race detector")
	}
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 2000 {
		if err := d.Set(fmt.Appendf(nil, "k%05d", i), make([]byte, 100), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i += 7 {
		if err := d.Set(fmt.Appendf(nil, "k%05d", i), []byte("l0"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i += 5 {
		if err := d.Set(fmt.Appendf(nil, "k%05d", i), []byte("mem"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	m := d.Metrics()
	if m.Levels[0].NumFiles == 0 || m.Levels[NumLevels-1].NumFiles == 0 {
		t.Fatalf("want files in L0 and L%d: %+v", NumLevels-1, m.Levels)
	}
	lower, upper := []byte("k01000"), []byte("k01100")
	n := testing.AllocsPerRun(200, func() {
		it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for ok := it.SeekGE(lower); ok; ok = it.Next() {
			rows++
		}
		if err := it.Close(); err != nil || rows != 100 {
			t.Fatalf("%d rows, %v", rows, err)
		}
	})
	t.Logf("%.0f allocations per iterator", n)
	if n > 1 {
		t.Fatalf("%.0f allocations per iterator, want at most 1 (the Iterator)", n)
	}
}

// TestIteratorPoolConcurrent opens, reads and closes iterators from several
// goroutines while a writer rewrites the keys and flushes and compacts, so
// that the pooled memtable and level iterators pass between readers of
// read states with different memtables and levels: every scan sees each
// of its keys once, in order, with a value written for that key, and
// closed iterators stay closed (run it with -race).
func TestIteratorPoolConcurrent(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const keys = 500
	for i := range keys {
		if err := d.Set(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "k%04d-0", i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	// The writer runs a fixed number of rounds; the readers read until it
	// has finished, so that their scans span its flushes and compactions.
	writerErr := make(chan error, 1)
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for round := 1; round <= 12; round++ {
			for i := round % 3; i < keys; i += 3 {
				if err := d.Set(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "k%04d-%d", i, round), NoSync); err != nil {
					writerErr <- err
					return
				}
			}
			var err error
			if round%4 == 0 {
				err = d.Compact(nil, nil)
			} else {
				err = d.Flush()
			}
			if err != nil {
				writerErr <- err
				return
			}
		}
	}()
	readers, rounds := 4, 100
	errs := make(chan error, readers)
	for r := range readers {
		go func() {
			errs <- func() error {
				for n := 0; ; n++ {
					if n >= rounds {
						select {
						case <-writing:
							return nil
						default:
						}
					}
					lo := (r*37 + n*13) % (keys - 20)
					lower, upper := fmt.Appendf(nil, "k%04d", lo), fmt.Appendf(nil, "k%04d", lo+20)
					it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
					if err != nil {
						return err
					}
					want := lo
					for ok := it.SeekGE(lower); ok; ok = it.Next() {
						k := fmt.Sprintf("k%04d", want)
						if string(it.Key()) != k || !bytes.HasPrefix(it.Value(), []byte(k+"-")) {
							it.Close()
							return fmt.Errorf("round %d: %q=%q, want key %s", n, it.Key(), it.Value(), k)
						}
						want++
					}
					if err := it.Close(); err != nil {
						return err
					}
					if want != lo+20 {
						return fmt.Errorf("round %d: scan from %d ended at %d", n, lo, want)
					}
					if it.First() || it.Valid() {
						return fmt.Errorf("round %d: a closed iterator moved", n)
					}
				}
			}()
		}()
	}
	for range readers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	<-writing
	select {
	case err := <-writerErr:
		t.Fatal(err)
	default:
	}
}
