package driver

import (
	"context"
	"database/sql/driver"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/strata-db/strata/sqlstore"
)

var (
	_ driver.Stmt             = (*Stmt)(nil)
	_ driver.StmtExecContext  = (*Stmt)(nil)
	_ driver.StmtQueryContext = (*Stmt)(nil)
)

// Stmt is a prepared statement of one connection. It keeps the parsed
// statement; every execution binds the arguments (by position for ?
// placeholders, by name for :name) and plans it.
type Stmt struct {
	conn     *Conn
	query    string // the text the engine caches the parsed statement under
	parsed   sqlparser.Statement
	numInput int
	closed   bool
	// sel, for a prepared SELECT of the shape sqlstore.PreparedSelect
	// describes, reuses its plan across executions.
	sel *sqlstore.PreparedSelect
	// sqlMode is the sql_mode a one-shot statement was parsed under.
	sqlMode any
}

// NumInput implements driver.Stmt: the number of distinct placeholders, or
// -1 (unknown) for statements run once with arguments.
func (s *Stmt) NumInput() int { return s.numInput }

// Close implements driver.Stmt.
func (s *Stmt) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.conn.closed {
		s.conn.unprepare(s.query)
	}
	return nil
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
	res, err := s.conn.retryConflicts(ctx, s.query, func() (*Result, error) {
		sctx, _, iter, err := s.start(ctx, args)
		if err != nil {
			return nil, err
		}
		return s.conn.drain(sctx, iter)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// QueryContext implements driver.StmtQueryContext.
func (s *Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	sctx, schema, iter, err := s.start(ctx, args)
	if err != nil {
		return nil, err
	}
	return newRows(s.conn, sctx, schema, iter), nil
}

// start binds args and starts the statement.
func (s *Stmt) start(ctx context.Context, args []driver.NamedValue) (*gsql.Context, gsql.Schema, gsql.RowIter, error) {
	if s.closed || s.conn.closed {
		return nil, nil, nil, ErrClosed
	}
	sctx := s.conn.newContext(ctx, s.query)
	var schema gsql.Schema
	var iter gsql.RowIter
	var err error
	if s.sel != nil && len(args) > 0 {
		// Bindings are made only if the engine plans this execution.
		var bindErr error
		bindings := func() (map[string]sqlparser.Expr, error) {
			b, err := bind(args)
			bindErr = err
			return b, err
		}
		schema, iter, err = s.sel.Query(sctx, s.conn.sh.engine, s.query, s.parsed, bindings, argValues(args))
		if bindErr != nil {
			return nil, nil, nil, bindErr
		}
	} else {
		bindings, bErr := bind(args)
		if bErr != nil {
			return nil, nil, nil, bErr
		}
		schema, iter, err = sqlstore.Query(sctx, s.conn.sh.engine, s.query, s.parsed, bindings)
	}
	if err != nil {
		return nil, nil, nil, mysqlErr(err)
	}
	return sctx, schema, iter, nil
}
