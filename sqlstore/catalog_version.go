package sqlstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/strata-db/strata/storage"
)

// The schema version: several processes may serve one shared engine (the
// TiKV backend), each with its own catalog cache and set of live tables
// (catalog_cache.go, Store.live), which only its own DDL commits
// invalidate. So every DDL commit also increments a counter kept in the
// engine (meta key "schemaver"), in a transaction of its own after the DDL
// commit, and a process that opened the store with Options.SharedCatalog
// reads it at the start of each transaction. When it moved since the process last looked, another process
// changed the catalog: the process drops its cached entries and reloads
// its live tables before the transaction reads the catalog. A write to a
// table whose definition changed after the transaction began is caught at
// commit by the guard on the table's catalog record (txn.go), as within
// one process.

const metaSchemaVersion = "schemaver" // 8-byte big-endian count of DDL commits

// readSchemaVersion reads the schema version r sees (0: none yet).
func readSchemaVersion(r storage.Reader) (uint64, error) {
	v, err := r.Get(metaKey(metaSchemaVersion), nil)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, wrapf(err, "sqlstore: reading the schema version")
	case len(v) != 8:
		return 0, fmt.Errorf("%w: schema version holds %d bytes", ErrCorruptCatalog, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// bumpSchemaVersion increments the schema version after a DDL commit, in
// a transaction of its own (retried on a conflict with another process's),
// for a store whose engine others share. It runs after the DDL commit is
// visible, so that a process that sees the new version sees the change.
// The store's DDL lock is held: no other DDL of this process runs. When
// another process bumped the version since this one last looked, the
// store keeps its old version, so that its next transaction reloads.
func (s *Store) bumpSchemaVersion() error {
	if !s.opts.SharedCatalog {
		return nil
	}
	for attempt := 0; ; attempt++ {
		tx, err := s.engine.Begin()
		if err != nil {
			return wrapf(err, "sqlstore: schema version")
		}
		v, err := readSchemaVersion(tx)
		if err == nil {
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], v+1)
			if err = tx.Set(metaKey(metaSchemaVersion), b[:]); err == nil {
				err = tx.Commit()
			}
		}
		if err == nil {
			s.schemaSeen.CompareAndSwap(v, v+1)
			return nil
		}
		_ = tx.Rollback()
		if !errors.Is(err, storage.ErrConflict) || attempt == 100 {
			return wrapf(err, "sqlstore: writing the schema version")
		}
	}
}

// syncCatalog, for a store whose engine other processes share, checks the
// schema version tx sees against the one the store last saw, and when it
// moved drops the cached catalog and reloads the live tables. A reload
// that cannot have the DDL lock at once (a commit holds it) is left to the
// next transaction; the cache is dropped either way.
func (s *Store) syncCatalog(tx storage.Txn) error {
	if !s.opts.SharedCatalog {
		return nil
	}
	v, err := readSchemaVersion(tx)
	if err != nil {
		return err
	}
	if v == s.schemaSeen.Load() {
		return nil
	}
	// Readers at snapshots before tx's may not use what readers at tx's
	// snapshot or later cache from now on.
	s.catalog.invalidate(tx.StartVersion())
	if !s.ddlMu.TryLock() {
		return nil
	}
	defer s.ddlMu.Unlock()
	live, _, err := s.readLive(tx)
	if err != nil {
		return err
	}
	s.live = live
	s.schemaSeen.Store(v)
	return nil
}

// readLive returns the IDs of the tables r's catalog names, and the
// largest.
func (s *Store) readLive(r storage.Reader) (map[uint64]bool, uint64, error) {
	live := make(map[uint64]bool)
	lower := []byte{prefixCatalog, kindTable}
	it, err := r.NewIter(&storage.IterOptions{LowerBound: lower, UpperBound: prefixEnd(lower)})
	if err != nil {
		return nil, 0, wrapf(err, "sqlstore: reading the catalog")
	}
	defer it.Close()
	var maxID uint64
	for ok := it.First(); ok; ok = it.Next() {
		var rec tableRecord
		if err := decodeRecord(it.Value(), &rec, fmt.Sprintf("table key %x", it.Key())); err != nil {
			return nil, 0, err
		}
		live[rec.ID] = true
		maxID = max(maxID, rec.ID)
	}
	if err := it.Error(); err != nil {
		return nil, 0, wrapf(err, "sqlstore: reading the catalog")
	}
	return live, maxID, nil
}
