//go:build !darwin || cgo

package tikv

import (
	"testing"

	"github.com/strata-db/strata/storage"
	"github.com/strata-db/strata/storage/storagetest"
)

// openMock returns an engine on a fresh mock cluster split into several
// regions across the keys the conformance suite writes.
func openMock(t *testing.T, splitKeys ...[]byte) storage.Engine {
	t.Helper()
	m, err := NewMock(splitKeys...)
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		return openMock(t, []byte("k0002"), []byte("k0005"), []byte("k0021"), []byte("k0039"))
	})
}

func TestContractOneRegion(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine { return openMock(t) })
}

// TestValues checks the values TiKV cannot store as they are (empty ones,
// and those that begin with the byte that marks an encoded one) through
// every read path.
func TestValues(t *testing.T) {
	e := openMock(t, []byte("b"))
	defer e.Close()
	vals := map[string][]byte{"a": {}, "b": {0}, "c": {0, 0, 1}, "d": {1}}
	tx, err := e.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		if err := tx.Set([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	r := e.Latest()
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}
	got, err := r.(storage.MultiGetter).MultiGet(keys, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := r.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	ok := it.First()
	for i, k := range keys {
		v, err := r.Get(k, nil)
		if err != nil || string(v) != string(vals[string(k)]) || got[i] == nil || string(got[i]) != string(vals[string(k)]) {
			t.Fatalf("%s: Get %x %v, MultiGet %x; want %x", k, v, err, got[i], vals[string(k)])
		}
		if !ok || string(it.Key()) != string(k) || string(it.Value()) != string(vals[string(k)]) {
			t.Fatalf("%s: iterator at %q %x", k, it.Key(), it.Value())
		}
		ok = it.Next()
	}
}
