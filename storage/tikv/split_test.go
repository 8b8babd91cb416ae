//go:build !darwin || cgo

package tikv

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/strata-db/strata/storage"
)

func TestMain(m *testing.M) {
	if err := SetLogLevel("fatal"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// TestSplitDuringScan splits the region a scan is reading, several times,
// between its batches, forward and backward, and checks that the scan
// still returns every key once and in order.
func TestSplitDuringScan(t *testing.T) {
	m, err := NewMock()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const n = 2000
	key := func(i int) []byte { return fmt.Appendf(nil, "s%05d", i) }
	tx, err := e.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := tx.Set(key(i), key(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprint("reverse=", reverse), func(t *testing.T) {
			// A small readahead: batches of minBatch keys, many round trips.
			it, err := e.Latest().NewIter(&storage.IterOptions{ReadOptions: storage.ReadOptions{ReadaheadSize: 1}})
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			var prev []byte
			count, splits := 0, 0
			ok := it.First()
			if reverse {
				ok = it.Last()
			}
			for ; ok; count++ {
				if prev != nil && (bytes.Compare(it.Key(), prev) <= 0) != reverse {
					t.Fatalf("key %q after %q", it.Key(), prev)
				}
				prev = append(prev[:0], it.Key()...)
				if count%300 == 150 {
					// Split every region into smaller ones.
					m.Cluster().SplitKeys(key(0), key(n), 4+splits*4)
					splits++
				}
				if reverse {
					ok = it.Prev()
				} else {
					ok = it.Next()
				}
			}
			if err := it.Error(); err != nil {
				t.Fatal(err)
			}
			if count != n || splits == 0 {
				t.Fatalf("scanned %d keys over %d splits, want %d", count, splits, n)
			}
		})
	}
}
