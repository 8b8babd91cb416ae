package driver

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/strata-db/strata/sqlstore"
)

var (
	_ driver.Conn               = (*Conn)(nil)
	_ driver.ConnBeginTx        = (*Conn)(nil)
	_ driver.ConnPrepareContext = (*Conn)(nil)
	_ driver.ExecerContext      = (*Conn)(nil)
	_ driver.QueryerContext     = (*Conn)(nil)
	_ driver.NamedValueChecker  = (*Conn)(nil)
	_ driver.SessionResetter    = (*Conn)(nil)
	_ driver.Validator          = (*Conn)(nil)
)

// Conn is one connection: a sqlstore.Conn, one session over the shared
// store, so one transaction at a time. database/sql uses a Conn from one
// goroutine at a time, and so must direct users.
type Conn struct {
	sh    *shared
	conn  *sqlstore.Conn
	owned *Connector // set by Driver.Open: released with the connection

	// args holds the arguments of a query run without Prepare, reused.
	args []sqlstore.Arg
	// spare is the last closed Rows, which the next query reuses.
	spare *Rows
	// names is the last column list Rows.Columns returned, given again
	// while the names are the same: database/sql asks for it at every
	// query that reads a row.
	names  []string
	closed bool
}

func newConn(sh *shared) *Conn {
	return &Conn{sh: sh, conn: sh.engine.NewConn()}
}

// Prepare implements driver.Conn.
func (c *Conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext implements driver.ConnPrepareContext (sqlstore.Conn.Prepare).
func (c *Conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	st, err := c.conn.Prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return &Stmt{conn: c, stmt: st}, nil
}

// ExecContext implements driver.ExecerContext (sqlstore.Conn.Exec). Without
// arguments the query may hold several statements separated by
// semicolons: they run in order, the first error stops them, and the
// result adds up the affected rows and keeps the last insert ID.
func (c *Conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	c.args = appendArgs(c.args[:0], args)
	r, err := c.conn.Exec(ctx, query, c.args...)
	clear(c.args) // the values are the caller's
	if err != nil {
		return nil, err
	}
	return &Result{RowCount: r.RowsAffected, InsertID: r.LastInsertID}, nil
}

// QueryContext implements driver.QueryerContext (sqlstore.Conn.Query): one
// statement, whose rows are read as Rows.Next is called.
func (c *Conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	c.args = appendArgs(c.args[:0], args)
	rows, err := c.conn.Query(ctx, query, c.args...)
	clear(c.args) // the values are the caller's
	if err != nil {
		return nil, err
	}
	return c.newRows(rows), nil
}

// appendArgs appends database/sql's arguments to buf as sqlstore's.
func appendArgs(buf []sqlstore.Arg, args []driver.NamedValue) []sqlstore.Arg {
	for _, a := range args {
		buf = append(buf, sqlstore.Arg{Name: a.Name, Ordinal: a.Ordinal, Value: a.Value})
	}
	return buf
}

// Begin implements driver.Conn.
func (c *Conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx implements driver.ConnBeginTx with START TRANSACTION: a real
// transaction on the connection's session that reads one snapshot and
// commits atomically, failing with MySQL error 1213 when a concurrent
// transaction committed a write to the same rows first.
func (c *Conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	switch isolationLevel(opts.Isolation) {
	case isoDefault, isoRepeatableRead, isoSnapshot:
	default:
		return nil, fmt.Errorf("%w: %d", ErrIsolation, opts.Isolation)
	}
	q := "START TRANSACTION"
	if opts.ReadOnly {
		q += " READ ONLY"
	}
	if _, err := c.ExecContext(ctx, q, nil); err != nil {
		return nil, err
	}
	return &Tx{conn: c}, nil
}

// The database/sql isolation levels this driver accepts (sql.IsolationLevel
// values, repeated to avoid importing database/sql here).
type isolationLevel int

const (
	isoDefault        isolationLevel = 0
	isoRepeatableRead isolationLevel = 4
	isoSnapshot       isolationLevel = 5
)

// CheckNamedValue implements driver.NamedValueChecker: it accepts the
// argument types a binding takes beyond database/sql's defaults
// (sqlstore.ArgValue: unsigned integers, decimals) and leaves the rest to
// the default conversion. The commonest driver.Value types are accepted
// as they are, as the default conversion would, without its second
// round of type checks at every argument of every execution.
func (c *Conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch nv.Value.(type) {
	case int64, string, []byte, float64, bool, nil:
		return nil
	}
	v, ok := sqlstore.ArgValue(nv.Value)
	if !ok {
		return driver.ErrSkip
	}
	nv.Value = v
	return nil
}

// ResetSession implements driver.SessionResetter: a connection going back
// to the pool must not carry an open transaction (a Tx is always ended by
// database/sql, but a pinned *sql.Conn may run START TRANSACTION itself).
func (c *Conn) ResetSession(ctx context.Context) error {
	if c.closed {
		return driver.ErrBadConn
	}
	if c.conn.HoldsTransaction() {
		if _, err := c.ExecContext(ctx, "ROLLBACK", nil); err != nil {
			return driver.ErrBadConn
		}
	}
	return nil
}

// IsValid implements driver.Validator.
func (c *Conn) IsValid() bool { return !c.closed }

// Close implements driver.Conn: open transactions are rolled back and the
// session's prepared statements dropped.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.conn.Close()
	err = errors.Join(err, c.sh.release())
	if c.owned != nil {
		err = errors.Join(err, c.owned.Close())
	}
	return err
}
