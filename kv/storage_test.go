package kv

import (
	"strconv"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/storage"
	"github.com/strata-db/strata/storage/storagetest"
)

func TestStorageContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		d, err := Open("/db", testOptions(vfs.NewMem()))
		if err != nil {
			t.Fatal(err)
		}
		return NewEngine(d, NoSync)
	})
}

// TestStorageContractFlushed runs the suite with the data in tables, not
// only in the memtable: every commit is flushed.
func TestStorageContractFlushed(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		d, err := Open("/db", testOptions(vfs.NewMem()))
		if err != nil {
			t.Fatal(err)
		}
		return flushingEngine{NewEngine(d, NoSync)}
	})
}

// flushingEngine flushes the memtable before every transaction begins.
type flushingEngine struct{ *Engine }

func (e flushingEngine) Begin() (storage.Txn, error) {
	if err := e.DB().Flush(); err != nil {
		return nil, err
	}
	return e.Engine.Begin()
}

// TestEngineTxnRollbackMark checks that a rollback to a write count leaves
// the batch as if the undone writes had never been made: the same bytes,
// count, memtable size, user bytes and range deletions.
func TestEngineTxnRollbackMark(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := NewEngine(d, NoSync)
	writes := []func(tx storage.Txn) error{
		func(tx storage.Txn) error { return tx.Set([]byte("a"), []byte("1")) },
		func(tx storage.Txn) error { return tx.DeleteRange([]byte("b"), []byte("c")) },
		func(tx storage.Txn) error { return tx.Delete([]byte("d")) },
		func(tx storage.Txn) error { return tx.Set([]byte("e"), []byte("22")) },
		func(tx storage.Txn) error { return tx.DeleteRange([]byte("f"), []byte("g")) },
		func(tx storage.Txn) error { return tx.Set([]byte("h"), []byte("333")) },
	}
	for n := 0; n <= len(writes); n++ {
		full, err := e.Begin()
		if err != nil {
			t.Fatal(err)
		}
		want, err := e.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range writes {
			if err := w(full); err != nil {
				t.Fatal(err)
			}
			if i < n {
				if err := w(want); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := full.RollbackTo(n); err != nil {
			t.Fatal(err)
		}
		// writes: a transaction that never wrote has no buffer until asked.
		got, exp := full.(*engineTxn).writes(), want.(*engineTxn).writes()
		if got.Mark() != exp.Mark() || string(got.data[batchHeaderLen:]) != string(exp.data[batchHeaderLen:]) {
			t.Fatalf("RollbackTo(%d): mark %+v, want %+v", n, got.Mark(), exp.Mark())
		}
		_ = full.Rollback()
		_ = want.Rollback()
	}
}

// TestEngineTxnReadOnly checks a transaction that never writes: it makes
// no batch buffer or index (TestEngineTxnBeginAllocs), yet every method of
// the contract answers as for an empty batch, and a reader taken before the
// first write (Current) sees the writes made after it.
func TestEngineTxnReadOnly(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := NewEngine(d, NoSync)
	if err := d.Set([]byte("a"), []byte("1"), NoSync); err != nil {
		t.Fatal(err)
	}
	tx, err := e.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if tx.(*engineTxn).batch.index != nil {
		t.Fatal("Begin made the batch's index")
	}
	if v, err := tx.Get([]byte("a"), nil); err != nil || string(v) != "1" {
		t.Fatalf("Get(a) = %q, %v", v, err)
	}
	if tx.Count() != 0 || tx.Len() != batchHeaderLen {
		t.Fatalf("Count, Len = %d, %d; want 0, %d", tx.Count(), tx.Len(), batchHeaderLen)
	}
	if err := tx.RollbackTo(0); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(int) (storage.Reader, error){tx.ViewAt, tx.AdvanceView} {
		r, err := f(0)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := r.Get([]byte("a"), nil); err != nil || string(v) != "1" {
			t.Fatalf("view Get(a) = %q, %v", v, err)
		}
	}
	cur := tx.Current()
	before, err := cur.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("b"), []byte("2"), NoSync); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Get([]byte("b"), nil); err != ErrNotFound {
		t.Fatalf("Get(b) past the snapshot: %v, want ErrNotFound", err)
	}
	if v, err := cur.Get([]byte("b"), nil); err != nil || string(v) != "2" {
		t.Fatalf("Current Get(b) = %q, %v", v, err)
	}
	if err := tx.Set([]byte("c"), []byte("3")); err != nil {
		t.Fatal(err)
	}
	if v, err := cur.Get([]byte("c"), nil); err != nil || string(v) != "3" {
		t.Fatalf("Current Get(c) after the first write = %q, %v", v, err)
	}
	n := 0
	for ok := before.First(); ok; ok = before.Next() {
		n++
	}
	if err := before.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("an iterator opened before the first write saw %d keys, want a: the state it was opened at", n)
	}
	if err := tx.RollbackTo(0); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Get([]byte("c"), nil); err != ErrNotFound {
		t.Fatalf("Get(c) after RollbackTo(0): %v", err)
	}
	tx.Guard([]byte("a"), []byte("z"))
	tx.SetDurable()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestEngineTxnBeginAllocs bounds a read's transaction: the transaction
// itself, no batch buffer or index until a write.
func TestEngineTxnBeginAllocs(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := NewEngine(d, NoSync)
	if err := d.Set([]byte("a"), []byte("1"), NoSync); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(200, func() {
		tx, err := e.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("Begin and Commit of a read: %.1f allocations, want at most 1", allocs)
	}
}

// TestEngineBeginReusing checks a transaction begun in a finished read's
// memory: it allocates nothing, its snapshot is a new one (it sees commits
// made after the old one's, and the old one is no longer registered), and
// that snapshot keeps the versions it sees through flush and compaction.
// A transaction that wrote, or an unfinished one, is not reused.
func TestEngineBeginReusing(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := NewEngine(d, NoSync)
	if err := d.Set([]byte("a"), []byte("1"), NoSync); err != nil {
		t.Fatal(err)
	}
	tx, err := e.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Get([]byte("a"), nil); err != nil {
		t.Fatal(err)
	}
	if got := d.Metrics().NumSnapshots; got != 1 {
		t.Fatalf("%d snapshots, want 1", got)
	}
	if next, err := e.BeginReusing(tx); err != nil || next == tx {
		t.Fatalf("an unfinished transaction was reused (%v)", err)
	} else {
		_ = next.Rollback()
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("a"), []byte("2"), NoSync); err != nil {
		t.Fatal(err)
	}
	old := tx.StartVersion()
	next, err := e.BeginReusing(tx)
	if err != nil {
		t.Fatal(err)
	}
	if next != tx {
		t.Fatal("a finished read's transaction was not reused")
	}
	if next.StartVersion() <= old {
		t.Fatalf("reused transaction starts at %d, the old one at %d", next.StartVersion(), old)
	}
	if got := d.Metrics().NumSnapshots; got != 1 {
		t.Fatalf("%d snapshots, want 1 (the old one released, the new one registered)", got)
	}
	// Later commits, then a flush and a full compaction: the snapshot must
	// still read "2".
	for i := 3; i < 6; i++ {
		if err := d.Set([]byte("a"), []byte(strconv.Itoa(i)), NoSync); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range []storage.Reader{next, next.Snapshot()} {
		if v, err := r.Get([]byte("a"), nil); err != nil || string(v) != "2" {
			t.Fatalf("reused snapshot reads a = %q, %v; want 2", v, err)
		}
	}
	if err := next.Set([]byte("b"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := next.Commit(); err != nil {
		t.Fatal(err)
	}
	if after, err := e.BeginReusing(next); err != nil || after == next {
		t.Fatalf("a transaction that wrote was reused (%v)", err)
	} else {
		_ = after.Rollback()
	}
	if got := d.Metrics().NumSnapshots; got != 0 {
		t.Fatalf("%d snapshots left, want 0", got)
	}

	tx, err = e.Begin()
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(200, func() {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if tx, err = e.BeginReusing(tx); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Commit and BeginReusing of a read: %.1f allocations, want 0", allocs)
	}
	_ = tx.Rollback()
}
