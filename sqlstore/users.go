package sqlstore

import (
	"errors"

	"github.com/strata-db/strata/storage"
)

// metaUsers is the meta key of the MySQL server's accounts and grants: the
// bytes GMS's mysql_db serializes (a flatbuffer it versions itself). Only
// the MySQL-protocol server reads and writes it. Part of the on-disk
// format; never change.
const metaUsers = "users"

// Users returns the persisted accounts and grants of the MySQL server, nil
// when none were ever saved.
func (s *Store) Users() ([]byte, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	v, err := s.engine.Latest().Get(metaKey(metaUsers), nil)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapf(err, "sqlstore: reading the users")
	}
	return append([]byte(nil), v...), nil
}

// SetUsers persists the MySQL server's accounts and grants durably (synced
// whatever the engine's options say: a changed password must survive a crash).
func (s *Store) SetUsers(data []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := writeNow(s.engine, metaKey(metaUsers), data, true); err != nil {
		return wrapf(err, "sqlstore: saving the users")
	}
	return nil
}
