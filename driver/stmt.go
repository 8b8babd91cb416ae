package driver

import (
	"context"
	"database/sql/driver"

	"github.com/strata-db/strata/sqlstore"
)

var (
	_ driver.Stmt             = (*Stmt)(nil)
	_ driver.StmtExecContext  = (*Stmt)(nil)
	_ driver.StmtQueryContext = (*Stmt)(nil)
)

// Stmt is a prepared statement of one connection (sqlstore.Stmt): the
// statement is parsed once; every execution binds the arguments (by
// position for ? placeholders, by name for :name).
type Stmt struct {
	conn *Conn
	stmt *sqlstore.Stmt
	// args holds an execution's arguments, reused.
	args   []sqlstore.Arg
	closed bool
}

// NumInput implements driver.Stmt: the number of distinct placeholders.
func (s *Stmt) NumInput() int { return s.stmt.NumInput() }

// Close implements driver.Stmt.
func (s *Stmt) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.stmt.Close()
}

// Exec implements driver.Stmt.
func (s *Stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

// Query implements driver.Stmt.
func (s *Stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// ExecContext implements driver.StmtExecContext.
func (s *Stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if s.closed || s.conn.closed {
		return nil, ErrClosed
	}
	s.args = appendArgs(s.args[:0], args)
	r, err := s.stmt.Exec(ctx, s.args...)
	clear(s.args) // the values are the caller's
	if err != nil {
		return nil, err
	}
	return &Result{RowCount: r.RowsAffected, InsertID: r.LastInsertID}, nil
}

// QueryContext implements driver.StmtQueryContext.
func (s *Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if s.closed || s.conn.closed {
		return nil, ErrClosed
	}
	s.args = appendArgs(s.args[:0], args)
	rows, err := s.stmt.Query(ctx, s.args...)
	clear(s.args) // the values are the caller's
	if err != nil {
		return nil, err
	}
	return s.conn.newRows(rows), nil
}
