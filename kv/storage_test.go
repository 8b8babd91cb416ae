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
