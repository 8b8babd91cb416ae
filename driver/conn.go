package driver

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"

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

// Conn is one connection: one GMS session over the shared store, so one
// transaction at a time. database/sql uses a Conn from one goroutine at a
// time, and so must direct users.
type Conn struct {
	sh    *shared
	sess  *sqlstore.Session
	owned *Connector // set by Driver.Open: released with the connection

	// prepared counts the open statements per prepared query text; the
	// engine caches one parsed statement per session and text.
	prepared map[string]int
	// oneShots are the statements of recent queries run with arguments
	// without Prepare, by text; oneShotOrder their texts, oldest first.
	oneShots     map[string]*Stmt
	oneShotOrder []string
	closed       bool
}

func newConn(sh *shared) *Conn {
	return &Conn{sh: sh, sess: sh.store.NewSession(nil), prepared: make(map[string]int)}
}

// newContext returns the query context of one statement
// (sqlstore.Session.NewStatementContext).
func (c *Conn) newContext(ctx context.Context, query string) *gsql.Context {
	return c.sess.NewStatementContext(ctx, c.sh.engine, query)
}

func (c *Conn) useDB(ctx context.Context, db string) error {
	q := "CREATE DATABASE IF NOT EXISTS " + quoteIdent(db)
	if _, err := c.ExecContext(ctx, q, nil); err != nil {
		return err
	}
	c.sess.SetCurrentDatabase(db)
	c.sess.ClearWarnings() // "database exists" is not the application's
	return nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Prepare implements driver.Conn.
func (c *Conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext implements driver.ConnPrepareContext: the statement is
// parsed and bound once (errors such as an unknown table surface here) and
// its parsed form is kept for every execution, which binds the arguments
// and plans it.
func (c *Conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	key := gsql.RemoveSpaceAndDelimiter(query, ';')
	sctx := c.newContext(ctx, query)
	if err := sqlstore.Prepare(sctx, c.sh.engine, query); err != nil {
		return nil, mysqlErr(err)
	}
	parsed, ok := c.sh.engine.PreparedDataCache.GetCachedStmt(c.sess.ID(), key)
	if !ok {
		return nil, fmt.Errorf("strata: prepare %q: parsed statement not cached", query)
	}
	c.prepared[key]++
	st := &Stmt{conn: c, query: key, parsed: parsed, numInput: countParams(parsed)}
	if st.numInput > 0 {
		st.sel = sqlstore.NewPreparedSelect(parsed)
	}
	return st, nil
}

// oneShotCache is how many statements run with arguments but without
// Prepare (db.Query(q, args...)) a connection keeps parsed, with their
// reused plans, so that running the same text again parses and plans as a
// prepared statement would.
const oneShotCache = 64

// parseOne returns the statement of a one-shot query with arguments:
// the connection's cached one for the same text and sql_mode, or a new one,
// parsed and cached like a prepared statement (the engine binds arguments
// only to cached statements). The least recently made one is dropped when
// the cache is full.
func (c *Conn) parseOne(sctx *gsql.Context, query string) (*Stmt, error) {
	key := gsql.RemoveSpaceAndDelimiter(query, ';')
	mode, _ := sctx.GetSessionVariable(sctx, gsql.SqlModeSessionVar)
	if st, ok := c.oneShots[key]; ok {
		if st.sqlMode == mode {
			return st, nil
		}
		c.forgetOneShot(key)
	}
	parsed, _, err := c.sh.engine.Parser.ParseOneWithOptions(sctx, key, gsql.LoadSqlMode(sctx).ParserOptions())
	if err != nil {
		return nil, mysqlErr(err)
	}
	if c.prepared[key] == 0 {
		c.sh.engine.PreparedDataCache.CacheStmt(c.sess.ID(), key, parsed)
	}
	c.prepared[key]++
	st := &Stmt{conn: c, query: key, parsed: parsed, numInput: -1, sqlMode: mode}
	if countParams(parsed) > 0 {
		st.sel = sqlstore.NewPreparedSelect(parsed)
	}
	if len(c.oneShotOrder) >= oneShotCache {
		c.forgetOneShot(c.oneShotOrder[0])
	}
	if c.oneShots == nil {
		c.oneShots = make(map[string]*Stmt)
	}
	c.oneShots[key] = st
	c.oneShotOrder = append(c.oneShotOrder, key)
	return st, nil
}

// forgetOneShot drops a cached one-shot statement.
func (c *Conn) forgetOneShot(key string) {
	st := c.oneShots[key]
	delete(c.oneShots, key)
	if i := slices.Index(c.oneShotOrder, key); i >= 0 {
		c.oneShotOrder = slices.Delete(c.oneShotOrder, i, i+1)
	}
	if st != nil {
		_ = st.Close()
	}
}

// unprepare drops one reference to a prepared text.
func (c *Conn) unprepare(key string) {
	c.prepared[key]--
	if c.prepared[key] <= 0 {
		delete(c.prepared, key)
		c.sh.engine.PreparedDataCache.UncacheStmt(c.sess.ID(), key)
	}
}

// ExecContext implements driver.ExecerContext. Without arguments the query
// may hold several statements separated by semicolons: they run in order,
// the first error stops them, and the result adds up the affected rows and
// keeps the last insert ID.
func (c *Conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	if len(args) > 0 {
		sctx := c.newContext(ctx, query)
		st, err := c.parseOne(sctx, query)
		if err != nil {
			return nil, err
		}
		return st.ExecContext(ctx, args)
	}
	total := &Result{}
	rest := query
	for {
		sctx := c.newContext(ctx, rest)
		parsed, one, remainder, err := c.sh.engine.Parser.Parse(sctx, rest, true)
		if err != nil {
			return nil, mysqlErr(err)
		}
		if one == "" {
			one = rest
		}
		r, err := c.retryConflicts(ctx, one, func() (*Result, error) {
			sctx := c.newContext(ctx, one)
			_, iter, err := sqlstore.Query(sctx, c.sh.engine, one, parsed, nil)
			if err != nil {
				return nil, mysqlErr(err)
			}
			return c.drain(sctx, iter)
		})
		if err != nil {
			return nil, err
		}
		total.RowCount += r.RowCount
		if r.InsertID != 0 {
			total.InsertID = r.InsertID
		}
		rest = strings.TrimSpace(remainder)
		if rest == "" || strings.Trim(rest, "; \t\r\n") == "" {
			return total, nil
		}
	}
}

// drain reads a statement's result to the end and closes it: a DML
// statement's single OK row becomes the Result; other rows are discarded.
func (c *Conn) drain(sctx *gsql.Context, iter gsql.RowIter) (*Result, error) {
	res := &Result{}
	for {
		row, err := iter.Next(sctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.abortStatement(sctx)
			_ = iter.Close(sctx)
			return nil, mysqlErr(err)
		}
		if len(row) == 1 {
			if ok, isOK := row[0].(types.OkResult); isOK {
				res.RowCount += int64(ok.RowsAffected)
				if ok.InsertID != 0 {
					res.InsertID = int64(ok.InsertID)
				}
			}
		}
	}
	if err := iter.Close(sctx); err != nil {
		return nil, mysqlErr(err)
	}
	return res, nil
}

// abortStatement rolls back the transaction of a failed autocommit
// statement before its iterator is closed (sqlstore.Session.AbortStatement).
func (c *Conn) abortStatement(sctx *gsql.Context) { c.sess.AbortStatement(sctx) }

// QueryContext implements driver.QueryerContext: one statement, whose
// rows are read as Rows.Next is called.
func (c *Conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	if len(args) > 0 {
		sctx := c.newContext(ctx, query)
		st, err := c.parseOne(sctx, query)
		if err != nil {
			return nil, err
		}
		return st.QueryContext(ctx, args)
	}
	sctx := c.newContext(ctx, query)
	schema, iter, err := sqlstore.Query(sctx, c.sh.engine, query, nil, nil)
	if err != nil {
		return nil, mysqlErr(err)
	}
	return newRows(c, sctx, schema, iter), nil
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
// argument types Bind understands beyond database/sql's defaults
// (unsigned integers, decimals, json.RawMessage) and leaves the rest to
// the default conversion.
func (c *Conn) CheckNamedValue(nv *driver.NamedValue) error {
	v, ok := checkArg(nv.Value)
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
	sctx := c.newContext(ctx, "")
	if sctx.GetIgnoreAutoCommit() || sctx.GetTransaction() != nil {
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
	c.sess.SessionEnd()
	c.sh.engine.CloseSession(c.sess.ID())
	err := c.sh.release()
	if c.owned != nil {
		err = errors.Join(err, c.owned.Close())
	}
	return err
}

// countParams returns the number of distinct placeholders of a parsed
// statement.
func countParams(stmt sqlparser.Statement) int {
	names := map[string]bool{}
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if v, ok := node.(*sqlparser.SQLVal); ok && v.Type == sqlparser.ValArg {
			names[string(v.Val)] = true
		}
		return true, nil
	}, stmt)
	return len(names)
}
