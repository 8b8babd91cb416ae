package sqlstore

import (
	"context"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Stmt is a prepared statement of one connection. It keeps the parsed
// statement; every execution binds the arguments (by position for ?
// placeholders, by name for :name) and plans it, or, for a SELECT of the
// shape PreparedSelect knows, runs the plan kept from an earlier one.
type Stmt struct {
	conn     *Conn
	query    string // the text the engine caches the parsed statement under
	parsed   sqlparser.Statement
	numInput int
	closed   bool
	// sel, for a prepared SELECT of the shape PreparedSelect describes,
	// reuses its plan across executions.
	sel *PreparedSelect
	// wr, for a prepared write of the shape PreparedWrite describes,
	// reuses its plan across executions.
	wr *PreparedWrite
	// sqlMode is the sql_mode a one-shot statement was parsed under.
	sqlMode any
	// fixed is the plan cache's kept plan of a statement without
	// placeholders, found by its last execution: the next one uses it
	// without looking the text up again while it holds (fixedFor).
	fixed *cachedPlan
	// args holds an execution's arguments by name for a kept plan
	// (argValues), one map for all executions: the statement, as its
	// connection, is used by one goroutine at a time, and the kept plan
	// reads the map only while it starts the execution.
	args map[string]any
}

// NumInput returns the number of distinct placeholders, or -1 (unknown)
// for the statements Conn keeps of queries run once with arguments.
func (s *Stmt) NumInput() int { return s.numInput }

// Close drops the statement; the connection's parsed copy goes with the
// last statement of its text.
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

// Exec runs the statement with args and reads its result to the end; an
// autocommit write that loses a write conflict runs again (Conn.Exec).
func (s *Stmt) Exec(ctx context.Context, args ...Arg) (Result, error) {
	res, err := s.exec(ctx, args)
	if err != nil {
		s.conn.failed(err)
	}
	return res, err
}

// exec is Exec without recording its error.
func (s *Stmt) exec(ctx context.Context, args []Arg) (Result, error) {
	res, err := s.conn.runWrite(ctx, s.query, func() (Result, error) {
		sctx, _, iter, err := s.start(ctx, args)
		if err != nil {
			return Result{}, err
		}
		return s.conn.drain(sctx, iter)
	})
	if err != nil {
		return Result{}, err
	}
	res.Warnings = s.conn.sess.WarningCount()
	return res, nil
}

// Query runs the statement with args; its result is read as Rows.Next is
// called (Conn.Query).
func (s *Stmt) Query(ctx context.Context, args ...Arg) (*Rows, error) {
	rows, err := s.rows(ctx, args)
	if err != nil {
		s.conn.failed(err)
	}
	return rows, err
}

// rows is Query without recording its error.
func (s *Stmt) rows(ctx context.Context, args []Arg) (*Rows, error) {
	return s.conn.replanned(ctx, func() (*Rows, error) {
		sctx, schema, iter, err := s.start(ctx, args)
		if err != nil {
			return nil, err
		}
		return s.conn.newRows(sctx, schema, iter), nil
	})
}

// start binds args and starts the statement.
func (s *Stmt) start(ctx context.Context, args []Arg) (*sql.Context, sql.Schema, sql.RowIter, error) {
	if s.closed || s.conn.closed {
		return nil, nil, nil, ErrConnClosed
	}
	if len(args) == 0 && s.numInput == 0 {
		handled := true
		if f := s.fixedFor(); f != nil {
			s.conn.plans.found = resolved{fixed: f}
		} else if handled = s.conn.resolve(ctx, s.query, nil); handled {
			s.fixed = s.conn.plans.found.fixed // nil unless a kept plan
		}
		if handled {
			sctx := s.conn.resolvedContext(ctx, s.query)
			schema, iter, err := s.conn.runResolved(sctx, s.query)
			if err != nil {
				return nil, nil, nil, clientError(err)
			}
			return sctx, schema, iter, nil
		}
	}
	sctx := s.conn.stmtContext(ctx, s.query)
	schema, iter, err := s.startIn(sctx, args)
	if err != nil {
		return nil, nil, nil, err
	}
	return sctx, schema, iter, nil
}

// fixedFor returns the kept plan the statement's last execution ran, if
// the plan cache would still run it: made under the session's variables
// as they are (which also covers SET strata_plan_reuse) and in the
// current database, the checks resolve makes of a kept plan.
func (s *Stmt) fixedFor() *cachedPlan {
	f := s.fixed
	if f == nil {
		return nil
	}
	if f.varsGen != s.conn.sess.varsGen.Load() || f.db != s.conn.sess.GetCurrentDatabase() {
		s.fixed = nil
		return nil
	}
	return f
}

// startIn binds args and starts the statement in sctx, a context of the
// connection's session.
func (s *Stmt) startIn(sctx *sql.Context, args []Arg) (schema sql.Schema, iter sql.RowIter, err error) {
	if s.sel != nil && len(args) > 0 {
		// Bindings are made only if the engine plans this execution.
		var bindErr error
		bindings := func() (map[string]sqlparser.Expr, error) {
			b, err := bind(args)
			bindErr = err
			return b, err
		}
		schema, iter, err = s.sel.Query(sctx, s.conn.eng.gms, s.query, s.parsed, bindings, s.argValues(args))
		if bindErr != nil {
			return nil, nil, bindErr
		}
	} else if s.wr != nil && len(args) > 0 {
		var bindErr error
		bindings := func() (map[string]sqlparser.Expr, error) {
			b, err := bind(args)
			bindErr = err
			return b, err
		}
		schema, iter, err = s.wr.Query(sctx, s.conn.eng.gms, s.query, s.parsed, bindings, args)
		if bindErr != nil {
			return nil, nil, bindErr
		}
	} else {
		bindings, bErr := bind(args)
		if bErr != nil {
			return nil, nil, bErr
		}
		schema, iter, err = Query(sctx, s.conn.eng.gms, s.query, s.parsed, bindings)
	}
	if err != nil {
		return nil, nil, clientError(err)
	}
	return schema, iter, nil
}

// bind turns arguments into the engine's bindings: ? placeholders are named
// v1, v2, ... by position, :name placeholders by name.
func bind(args []Arg) (map[string]sqlparser.Expr, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make(map[string]sqlparser.Expr, len(args))
	for _, a := range args {
		name := a.name()
		e, err := literal(a.Value)
		if err != nil {
			return nil, fmt.Errorf("strata: argument %s: %w", name, err)
		}
		out[name] = e
	}
	return out, nil
}

// argValues returns the arguments' values by the names bind gives them,
// in the statement's map, emptied of the last execution's: valid until the
// next call.
func (s *Stmt) argValues(args []Arg) map[string]any {
	if s.args == nil {
		s.args = make(map[string]any, len(args))
	} else {
		clear(s.args)
	}
	for _, a := range args {
		s.args[a.name()] = a.Value
	}
	return s.args
}
