package sqlstore

import (
	"context"
	"fmt"
	"io"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS panics on some inputs (v0.20.0, for example, on EXECUTE of a
// statement whose PREPARE failed). The server survives them, since the
// protocol layer recovers per connection, but an embedded caller would
// lose its whole process. Query, Prepare and the iterators Query returns
// turn such a panic into an error for the statement alone.

// NewStatementContext returns the context of one statement of the session
// run on e: ctx's deadline and cancellation, the statement's text, a
// process ID unique in the store, and e's memory manager and process list.
// Conn builds every statement's context with it.
func (s *Session) NewStatementContext(ctx context.Context, e *sqle.Engine, query string) *sql.Context {
	c := new(sql.Context)
	s.resetStatementContext(c, ctx, e, query, true)
	return c
}

// resetStatementContext makes c the context of a new statement, as
// sql.NewContext makes one with these options (the engine's memory
// manager and process list are never nil): a new context, or that of a
// statement of the session that ended (Conn.stmtContext says when that
// is safe). Without clock the query time is left zero, for a statement
// that never reads it (Conn.resolvedContext): the clock is read under
// GMS's lock of its test clock, a noticeable part of the shortest
// statements.
func (s *Session) resetStatementContext(c *sql.Context, ctx context.Context, e *sqle.Engine, query string, clock bool) {
	*c = sql.Context{Context: ctx}
	c.ApplyOpts(
		sql.WithSession(s),
		sql.WithQuery(query),
		sql.WithPid(s.store.pids.Add(1)),
		sql.WithMemoryManager(e.MemoryManager),
		sql.WithProcessList(e.ProcessList),
		sql.WithTracer(sql.NoopTracer))
	if clock {
		c.SetQueryTime(sql.Now())
	}
	s.statementStarted()
}

// Query runs a statement through e, as e.QueryWithBindings does, and
// returns a panic inside the engine as MySQL error 1105.
func Query(ctx *sql.Context, e *sqle.Engine, query string, parsed sqlparser.Statement, bindings map[string]sqlparser.Expr) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	schema, iter, _, err = e.QueryWithBindings(ctx, query, parsed, bindings, nil)
	if err != nil {
		return nil, nil, StatementError(query, wordForeignKeyError(ctx, err))
	}
	return schema, &recoveringIter{RowIter: iter, query: query}, nil
}

// Prepare parses and caches a statement for execution with bindings, as
// e.PrepareQuery does, and returns a panic inside the engine as an error.
func Prepare(ctx *sql.Context, e *sqle.Engine, query string) (err error) {
	defer recoverInto(&err, query)
	_, err = e.PrepareQuery(ctx, query)
	return err
}

// recoveringIter returns a panic of Next or Close as an error.
type recoveringIter struct {
	sql.RowIter
	query string
}

// Next returns errors as StatementError does: DDL such as ALTER TABLE
// does its work, and fails, while its result is read.
func (g *recoveringIter) Next(ctx *sql.Context) (row sql.Row, err error) {
	defer recoverInto(&err, g.query)
	row, err = g.RowIter.Next(ctx)
	if err != nil && err != io.EOF {
		err = StatementError(g.query, wordForeignKeyError(ctx, err))
	}
	return row, err
}

// Close closes the result and takes up the transaction a PREPARE kept
// out of its commit (nestedtxn.go) at once: a caller of Query may look at
// the session's transaction before its next statement.
func (g *recoveringIter) Close(ctx *sql.Context) (err error) {
	defer recoverInto(&err, g.query)
	err = g.RowIter.Close(ctx)
	if s, ok := ctx.Session.(*Session); ok {
		s.takeUp(ctx)
	}
	return err
}

// recoverInto turns a panic in progress into *err.
func recoverInto(err *error, query string) {
	if r := recover(); r != nil {
		*err = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState,
			"internal error in the SQL engine running %q: %v", truncate(query, 200), r)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s...", s[:n])
}
