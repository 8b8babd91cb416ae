// Package storagetest is the conformance suite of the storage contract: what
// every engine behind package storage must do, run by the engine's own
// tests:
//
//	func TestContract(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Engine { ... })
//	}
//
// The suite uses only the contract, so that any engine (the embedded one,
// a distributed transactional KV) runs it unchanged.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-db/strata/storage"
)

// Run runs the suite. open returns a fresh, empty engine; Run closes it.
func Run(t *testing.T, open func(t *testing.T) storage.Engine) {
	cases := []struct {
		name string
		fn   func(t *testing.T, e storage.Engine)
	}{
		{"ReadsAndOwnWrites", testReadsAndOwnWrites},
		{"Snapshot", testSnapshot},
		{"Iterators", testIterators},
		{"RollbackTo", testRollbackTo},
		{"Views", testViews},
		{"Conflicts", testConflicts},
		{"Guard", testGuard},
		{"Current", testCurrent},
		{"BatchedReads", testBatchedReads},
		{"Sizes", testSizes},
		{"Versions", testVersions},
		{"Locks", testLocks},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := open(t)
			defer func() {
				if err := e.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			c.fn(t, e)
		})
	}
}

func key(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
func val(i int) []byte { return fmt.Appendf(nil, "v%d", i) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func begin(t *testing.T, e storage.Engine) storage.Txn {
	t.Helper()
	tx, err := e.Begin()
	must(t, err)
	return tx
}

// commitKeys commits keys lo..hi-1 with their values in one transaction.
func commitKeys(t *testing.T, e storage.Engine, lo, hi int) {
	t.Helper()
	tx := begin(t, e)
	for i := lo; i < hi; i++ {
		must(t, tx.Set(key(i), val(i)))
	}
	must(t, tx.Commit())
}

// wantGet checks r's value of k: want nil means absent.
func wantGet(t *testing.T, r storage.Reader, k, want []byte) {
	t.Helper()
	v, err := r.Get(k, nil)
	switch {
	case want == nil && !errors.Is(err, storage.ErrNotFound):
		t.Fatalf("Get(%s) = %q, %v; want ErrNotFound", k, v, err)
	case want != nil && err != nil:
		t.Fatalf("Get(%s): %v", k, err)
	case want != nil && !bytes.Equal(v, want):
		t.Fatalf("Get(%s) = %q, want %q", k, v, want)
	}
}

// scan returns the keys and values of r in [lo, hi), forward.
func scan(t *testing.T, r storage.Reader, lo, hi []byte) []string {
	t.Helper()
	it, err := r.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: hi})
	must(t, err)
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	must(t, it.Error())
	return out
}

func wantScan(t *testing.T, r storage.Reader, want ...string) {
	t.Helper()
	got := scan(t, r, nil, nil)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("scan = %v, want %v", got, want)
	}
}

func kv(i int) string { return string(key(i)) + "=" + string(val(i)) }

func testReadsAndOwnWrites(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 3)
	tx := begin(t, e)
	defer tx.Rollback()
	wantGet(t, tx, key(1), val(1))
	wantGet(t, tx, key(9), nil)
	must(t, tx.Set(key(9), []byte("new")))
	must(t, tx.Delete(key(0)))
	must(t, tx.Set(key(1), []byte("over")))
	wantGet(t, tx, key(9), []byte("new"))
	wantGet(t, tx, key(0), nil)
	wantGet(t, tx, key(1), []byte("over"))
	if tx.Count() != 3 {
		t.Fatalf("Count = %d, want 3", tx.Count())
	}
	if tx.Len() <= 0 {
		t.Fatalf("Len = %d after writes", tx.Len())
	}
	wantScan(t, tx, string(key(1))+"=over", kv(2), string(key(9))+"=new")
	// The snapshot alone and the latest state do not see the writes.
	wantScan(t, tx.Snapshot(), kv(0), kv(1), kv(2))
	wantScan(t, e.Latest(), kv(0), kv(1), kv(2))
	must(t, tx.DeleteRange(key(0), key(5)))
	wantScan(t, tx, string(key(9))+"=new")
	must(t, tx.Commit())
	wantScan(t, e.Latest(), string(key(9))+"=new")
	// A value returned by Get is the caller's.
	v, err := e.Latest().Get(key(9), nil)
	must(t, err)
	v[0] = 'X'
	wantGet(t, e.Latest(), key(9), []byte("new"))
}

func testSnapshot(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 2)
	tx := begin(t, e)
	commitKeys(t, e, 2, 4)
	tx2 := begin(t, e)
	must(t, tx2.Delete(key(0)))
	must(t, tx2.Commit())
	// tx reads as of its start, through itself and its snapshot.
	wantScan(t, tx, kv(0), kv(1))
	wantScan(t, tx.Snapshot(), kv(0), kv(1))
	wantGet(t, tx, key(3), nil)
	wantScan(t, e.Latest(), kv(1), kv(2), kv(3))
	snap := tx.Snapshot()
	must(t, tx.Rollback())
	// The snapshot reader outlives the transaction.
	wantGet(t, snap, key(0), val(0))
	must(t, tx.Rollback()) // harmless
}

func testIterators(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 10)
	tx := begin(t, e)
	defer tx.Rollback()
	must(t, tx.Set(key(4), []byte("x")))
	it, err := tx.NewIter(&storage.IterOptions{LowerBound: key(2), UpperBound: key(6)})
	must(t, err)
	// Writes after the iterator opened are not seen by it.
	must(t, tx.Set(key(5), []byte("later")))
	if !it.SeekGE(key(4)) || !bytes.Equal(it.Key(), key(4)) || string(it.Value()) != "x" {
		t.Fatalf("SeekGE(k0004) = %q %q", it.Key(), it.Value())
	}
	if !it.Next() || string(it.Value()) != string(val(5)) {
		t.Fatalf("Next = %q %q, want the committed k0005", it.Key(), it.Value())
	}
	if it.Next() {
		t.Fatalf("Next past the upper bound: %q", it.Key())
	}
	if !it.Last() || !bytes.Equal(it.Key(), key(5)) {
		t.Fatalf("Last = %q", it.Key())
	}
	if !it.Prev() || !bytes.Equal(it.Key(), key(4)) {
		t.Fatalf("Prev = %q", it.Key())
	}
	if !it.SeekLT(key(3)) || !bytes.Equal(it.Key(), key(2)) || !it.Valid() {
		t.Fatalf("SeekLT(k0003) = %q", it.Key())
	}
	if it.Prev() || it.Valid() {
		t.Fatalf("Prev past the lower bound: %q", it.Key())
	}
	if !it.First() || !bytes.Equal(it.Key(), key(2)) {
		t.Fatalf("First = %q", it.Key())
	}
	must(t, it.Error())
	must(t, it.Close())
}

func testRollbackTo(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 3)
	tx := begin(t, e)
	defer tx.Rollback()
	must(t, tx.Set(key(1), []byte("a")))
	m := tx.Count()
	len1 := tx.Len()
	before, err := tx.NewIter(nil)
	must(t, err)
	defer before.Close()
	must(t, tx.Set(key(1), []byte("b")))
	must(t, tx.Delete(key(2)))
	must(t, tx.DeleteRange(key(0), key(1)))
	must(t, tx.RollbackTo(m))
	if tx.Count() != m || tx.Len() != len1 {
		t.Fatalf("after RollbackTo(%d): Count %d Len %d, want %d %d", m, tx.Count(), tx.Len(), m, len1)
	}
	wantScan(t, tx, kv(0), string(key(1))+"=a", kv(2))
	// An iterator that saw only writes before the mark is unaffected.
	var got []string
	for ok := before.First(); ok; ok = before.Next() {
		got = append(got, string(before.Key())+"="+string(before.Value()))
	}
	if want := []string{kv(0), string(key(1)) + "=a", kv(2)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("iterator from before the mark: %v, want %v", got, want)
	}
	// Writes after a rollback, then a rollback to the start.
	must(t, tx.Set(key(7), val(7)))
	wantGet(t, tx, key(7), val(7))
	must(t, tx.RollbackTo(0))
	if tx.Count() != 0 {
		t.Fatalf("Count after RollbackTo(0) = %d", tx.Count())
	}
	wantScan(t, tx, kv(0), kv(1), kv(2))
	must(t, tx.Commit())
	wantScan(t, e.Latest(), kv(0), kv(1), kv(2))
}

func testViews(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 2)
	tx := begin(t, e)
	defer tx.Rollback()
	v0, err := tx.AdvanceView(0)
	must(t, err)
	wantScan(t, v0, kv(0), kv(1))
	must(t, tx.Set(key(5), val(5)))
	must(t, tx.Delete(key(0)))
	b1 := tx.Count()
	must(t, tx.Set(key(6), val(6)))
	v, err := tx.AdvanceView(b1)
	must(t, err)
	wantScan(t, v, kv(1), kv(5))
	wantGet(t, v, key(6), nil)
	it, err := v.NewIter(nil)
	must(t, err)
	defer it.Close()
	// The view moves forward; an iterator made before sees what it saw.
	v, err = tx.AdvanceView(tx.Count())
	must(t, err)
	wantScan(t, v, kv(1), kv(5), kv(6))
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if n != 2 {
		t.Fatalf("iterator made before AdvanceView saw %d keys, want 2", n)
	}
	// A private view at an earlier position never changes.
	old, err := tx.ViewAt(b1 - 1)
	must(t, err)
	wantScan(t, old, kv(0), kv(1), kv(5))
	must(t, tx.RollbackTo(1))
	must(t, tx.Set(key(8), val(8)))
	wantScan(t, old, kv(0), kv(1), kv(5))
	// The shared view moved back with the rollback.
	v, err = tx.AdvanceView(1)
	must(t, err)
	wantScan(t, v, kv(0), kv(1), kv(5))
	v, err = tx.AdvanceView(2)
	must(t, err)
	wantScan(t, v, kv(0), kv(1), kv(5), kv(8))
	at, err := tx.ViewAt(2)
	must(t, err)
	wantScan(t, at, kv(0), kv(1), kv(5), kv(8))
}

func testConflicts(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 2)
	a, b := begin(t, e), begin(t, e)
	must(t, a.Set(key(0), []byte("a")))
	must(t, b.Set(key(0), []byte("b")))
	must(t, b.Set(key(1), []byte("b")))
	must(t, a.Commit())
	err := b.Commit()
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("second committer: %v, want ErrConflict", err)
	}
	// Nothing of the loser applied.
	wantScan(t, e.Latest(), string(key(0))+"=a", kv(1))
	// Disjoint writes both commit; a read-only transaction commits.
	c, d := begin(t, e), begin(t, e)
	must(t, c.Set(key(2), val(2)))
	must(t, d.Set(key(3), val(3)))
	must(t, c.Commit())
	must(t, d.Commit())
	r := begin(t, e)
	must(t, r.Commit())
	// A rolled-back write does not conflict.
	f, g := begin(t, e), begin(t, e)
	must(t, f.Set(key(2), []byte("f")))
	must(t, f.RollbackTo(0))
	must(t, f.Set(key(9), val(9)))
	must(t, g.Set(key(2), []byte("g")))
	must(t, g.Commit())
	must(t, f.Commit())
	// A durable commit is a commit.
	h := begin(t, e)
	h.SetDurable()
	must(t, h.Set(key(4), val(4)))
	must(t, h.Commit())
	wantGet(t, e.Latest(), key(4), val(4))
}

func testGuard(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 5)
	a := begin(t, e)
	a.Guard(key(2), key(4))
	must(t, a.Set(key(9), val(9)))
	commitKeys(t, e, 3, 4) // writes inside the guarded range
	if err := a.Commit(); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("guarded commit after a write in the range: %v, want ErrConflict", err)
	}
	wantGet(t, e.Latest(), key(9), nil)
	b := begin(t, e)
	b.Guard(key(2), key(4))
	must(t, b.Set(key(9), val(9)))
	commitKeys(t, e, 4, 5) // outside: the end is exclusive
	must(t, b.Commit())
	wantGet(t, e.Latest(), key(9), val(9))
}

func testCurrent(t *testing.T, e storage.Engine) {
	tx := begin(t, e)
	defer tx.Rollback()
	must(t, tx.Set(key(1), val(1)))
	commitKeys(t, e, 2, 3)
	wantScan(t, tx, kv(1))
	wantScan(t, tx.Current(), kv(1), kv(2))
}

func testBatchedReads(t *testing.T, e storage.Engine) {
	commitKeys(t, e, 0, 40)
	tx := begin(t, e)
	defer tx.Rollback()
	must(t, tx.Set(key(3), []byte("own")))
	must(t, tx.Delete(key(4)))
	must(t, tx.DeleteRange(key(20), key(25)))
	v, err := tx.AdvanceView(tx.Count())
	must(t, err)
	readers := map[string]storage.Reader{"txn": tx, "snapshot": tx.Snapshot(), "latest": e.Latest(), "view": v}
	for name, r := range readers {
		keys := [][]byte{key(1), key(3), key(4), key(22), key(39), key(50)}
		if mg, ok := r.(storage.MultiGetter); ok {
			got, err := mg.MultiGet(keys, nil, nil)
			must(t, err)
			if len(got) != len(keys) {
				t.Fatalf("%s: MultiGet returned %d values for %d keys", name, len(got), len(keys))
			}
			for i, k := range keys {
				want, err := r.Get(k, nil)
				if errors.Is(err, storage.ErrNotFound) {
					want = nil
				} else {
					must(t, err)
				}
				if !bytes.Equal(got[i], want) || (got[i] == nil) != (want == nil) {
					t.Fatalf("%s: MultiGet(%s) = %q, Get = %q", name, k, got[i], want)
				}
			}
		}
		ranges := []storage.Range{{Start: key(0), End: key(5)}, {Start: key(18), End: key(27)}, {Start: key(38), End: key(41)}}
		if ms, ok := r.(storage.MultiScanner); ok {
			s, err := ms.NewMultiScan(context.Background(), ranges, nil)
			must(t, err)
			for i, rg := range ranges {
				var got []string
				for ok := s.SeekRange(i); ok; ok = s.Next() {
					got = append(got, string(s.Key())+"="+string(s.Value()))
				}
				must(t, s.Error())
				want := scan(t, r, rg.Start, rg.End)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: MultiScan range %d = %v, NewIter = %v", name, i, got, want)
				}
			}
			must(t, s.Close())
		}
	}
}

func testSizes(t *testing.T, e storage.Engine) {
	se, ok := e.(storage.SizeEstimator)
	if !ok {
		t.Skip("the engine estimates no sizes")
	}
	commitKeys(t, e, 0, 100)
	n, err := se.ApproximateSize(key(0), key(100))
	if errors.Is(err, storage.ErrNoEstimate) {
		// Allowed: the caller plans without.
		t.Skipf("the engine has no estimate: %v", err)
	}
	must(t, err)
	if n < 0 {
		t.Fatalf("ApproximateSize = %d", n)
	}
	keys, bytes, err := se.EstimateRange(key(0), key(100))
	must(t, err)
	if keys < 0 || bytes < 0 || (keys == 0) != (bytes == 0) {
		t.Fatalf("EstimateRange = %d keys, %d bytes", keys, bytes)
	}
	keys, _, err = se.EstimateRange(key(200), key(300))
	if errors.Is(err, storage.ErrNoEstimate) {
		return
	}
	must(t, err)
	if keys != 0 {
		t.Fatalf("EstimateRange of an empty range = %d keys", keys)
	}
}

func testVersions(t *testing.T, e storage.Engine) {
	v0 := e.LastVersion()
	commitKeys(t, e, 0, 1)
	v1 := e.LastVersion()
	if v1 <= v0 {
		t.Fatalf("LastVersion %d after a commit, %d before", v1, v0)
	}
	tx := begin(t, e)
	defer tx.Rollback()
	if tx.StartVersion() < v1 {
		t.Fatalf("StartVersion %d below the LastVersion %d of a commit before Begin", tx.StartVersion(), v1)
	}
	commitKeys(t, e, 1, 2)
	if tx.StartVersion() >= e.LastVersion() {
		t.Fatalf("StartVersion %d not below LastVersion %d after a later commit", tx.StartVersion(), e.LastVersion())
	}
}

// testLocks checks storage.Locker, when the engine's transactions have it:
// lock then read the latest, the commit rules of both modes, the errors,
// and the release at the end.
func testLocks(t *testing.T, e storage.Engine) {
	ctx := context.Background()
	locker := func(tx storage.Txn) storage.Locker {
		l, ok := tx.(storage.Locker)
		if !ok {
			t.Skip("the engine's transactions are not storage.Locker")
		}
		return l
	}
	x := storage.LockOptions{Mode: storage.LockExclusive, Wait: 5 * time.Second}
	commitKeys(t, e, 0, 3)

	// A pessimistic transaction whose snapshot is older than a commit to a
	// key locks it, reads the commit at the latest and writes over it.
	p := begin(t, e)
	lp := locker(p)
	lp.SetPessimistic()
	other := begin(t, e)
	must(t, other.Set(key(0), []byte("other")))
	must(t, other.Commit())
	must(t, lp.LockKeys(ctx, x, key(0)))
	wantGet(t, p.Current(), key(0), []byte("other"))
	wantGet(t, lp.LatestView(), key(0), []byte("other"))
	wantGet(t, p, key(0), val(0)) // the snapshot is unchanged
	must(t, p.Set(key(0), []byte("p")))
	wantGet(t, lp.LatestView(), key(0), []byte("other")) // the view has no writes yet

	// An optimistic commit of a key p holds fails and applies nothing.
	o := begin(t, e)
	must(t, o.Set(key(0), []byte("o")))
	must(t, o.Set(key(1), []byte("o")))
	if err := o.Commit(); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("optimistic commit of a locked key: %v, want ErrConflict", err)
	}
	wantGet(t, e.Latest(), key(1), val(1))

	// Another transaction cannot have the lock: NOWAIT, a bound, a context.
	q := begin(t, e)
	lq := locker(q)
	if err := lq.LockKeys(ctx, storage.LockOptions{Mode: storage.LockShared, NoWait: true}, key(0)); !errors.Is(err, storage.ErrLockNotAvailable) {
		t.Fatalf("NoWait on a held key: %v, want ErrLockNotAvailable", err)
	}
	if err := lq.LockKeys(ctx, storage.LockOptions{Wait: 10 * time.Millisecond}, key(0)); !errors.Is(err, storage.ErrLockWaitTimeout) {
		t.Fatalf("bounded wait on a held key: %v, want ErrLockWaitTimeout", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := lq.LockKeys(cctx, x, key(0)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v, want context.Canceled", err)
	}

	// q holds key 1 and waits for key 0; p asking for key 1 closes a cycle.
	must(t, lq.LockKeys(ctx, x, key(1)))
	waited := make(chan error, 1)
	go func() { waited <- lq.LockKeys(ctx, x, key(0)) }()
	// Let q's wait begin first (the requester closing a cycle is the
	// victim).
	if li, ok := e.(storage.LockInspector); ok {
		for i := 0; i < 1000 && len(li.LockWaits()) == 0; i++ {
			time.Sleep(time.Millisecond)
		}
	} else {
		time.Sleep(100 * time.Millisecond)
	}
	err := lp.LockKeys(ctx, x, key(1))
	if !errors.Is(err, storage.ErrDeadlock) {
		t.Fatalf("closing a cycle: %v, want ErrDeadlock", err)
	}
	// p commits (its write over the other commit is no conflict) and
	// releases key 0: q is granted it and reads p's commit.
	must(t, p.Commit())
	must(t, <-waited)
	wantGet(t, q.Current(), key(0), []byte("p"))
	must(t, q.Rollback())

	// Rolled back, q released its locks.
	r := begin(t, e)
	must(t, locker(r).LockKeys(ctx, storage.LockOptions{Mode: storage.LockExclusive, NoWait: true}, key(0), key(1)))
	must(t, r.Rollback())
}
