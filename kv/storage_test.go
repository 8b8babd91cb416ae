package kv

import (
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
		got, exp := &full.(*engineTxn).batch, &want.(*engineTxn).batch
		if got.Mark() != exp.Mark() || string(got.data[batchHeaderLen:]) != string(exp.data[batchHeaderLen:]) {
			t.Fatalf("RollbackTo(%d): mark %+v, want %+v", n, got.Mark(), exp.Mark())
		}
		_ = full.Rollback()
		_ = want.Rollback()
	}
}
