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
