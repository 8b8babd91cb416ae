package driver

import (
	"context"
	"database/sql/driver"
)

var _ driver.Tx = (*Tx)(nil)

// Tx is a transaction started by BeginTx.
type Tx struct {
	conn *Conn
}

// Commit implements driver.Tx. A failed commit (MySQL error 1213 on a
// write conflict) leaves nothing applied, and the connection is usable.
func (t *Tx) Commit() error {
	_, err := t.conn.ExecContext(context.Background(), "COMMIT", nil)
	if err != nil {
		_, _ = t.conn.ExecContext(context.Background(), "ROLLBACK", nil)
	}
	return err
}

// Rollback implements driver.Tx.
func (t *Tx) Rollback() error {
	_, err := t.conn.ExecContext(context.Background(), "ROLLBACK", nil)
	return err
}
