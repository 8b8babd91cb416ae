package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/strata-db/strata/sqlstore/codec"
)

// The statement lifecycle of the in-process front ends. The database/sql
// driver and the shell run statements through a Conn, and so never touch
// GMS's contexts, rows or types: a Conn builds each statement's context,
// runs it, converts its values, rolls back an autocommit statement that
// failed before its result is closed, and runs again an autocommit write
// that lost a write conflict. The MySQL-protocol server runs statements
// through GMS's protocol handler instead, and shares the pieces it needs of
// the same lifecycle: Session.NewStatementContext, Session.Autocommitting,
// Session.AbortStatement and Store.RunWrite.

// ErrConnClosed is returned by the methods of a closed Conn and of its
// statements.
var ErrConnClosed = errors.New("sqlstore: connection is closed")

// Engine is a GMS engine over a store, for front ends that run statements
// through Conns.
type Engine struct {
	store *Store
	gms   *sqle.Engine
}

// OpenEngine returns a new engine over the store (Store.NewEngine). Close
// stops it and closes the store.
func (s *Store) OpenEngine() *Engine { return &Engine{store: s, gms: s.NewEngine()} }

// WrapEngine returns e, an engine made by s.NewEngine, as an Engine, so
// that a program holding a GMS engine can run statements of its own
// through Conns.
func (s *Store) WrapEngine(e *sqle.Engine) *Engine { return &Engine{store: s, gms: e} }

// Store returns the store the engine runs over.
func (e *Engine) Store() *Store { return e.store }

// Close stops the engine and closes its store (Store.CloseEngine).
func (e *Engine) Close() error { return e.store.CloseEngine(e.gms) }

// NewConn returns a connection with a session of its own, in no database.
func (e *Engine) NewConn() *Conn {
	return &Conn{eng: e, sess: e.store.NewSession(nil), prepared: make(map[string]int)}
}

// AttachConn returns a connection over sess, a session of the engine's
// that another front end made and owns (the MySQL-protocol server's), for
// running its statements through the plan cache (CachedPlan, RunCached).
// The caller drops it with the session and never closes it: closing would
// end the session.
func (e *Engine) AttachConn(sess *Session) *Conn {
	return &Conn{eng: e, sess: sess, prepared: make(map[string]int)}
}

// Conn is one connection: one session over the engine, so one transaction
// at a time. It is used by one goroutine at a time. Its statements and
// results belong to it and end with it.
type Conn struct {
	eng  *Engine
	sess *Session

	// prepared counts the open statements per prepared query text; the
	// engine caches one parsed statement per session and text.
	prepared map[string]int
	// oneShots are the statements of recent queries run with arguments
	// without Prepare, by text; oneShotOrder their texts, oldest first.
	oneShots     map[string]*Stmt
	oneShotOrder []string
	// writes keeps the prepared writes' templates by text
	// (writetemplate.go), for statements prepared again.
	writes map[string]*PreparedWrite
	// kept is what Prepare found of the texts it prepared (keptPrepare),
	// for the same texts prepared again.
	kept map[string]*keptPrepare
	// spare is the last closed Rows, which the next query reuses with its
	// buffers.
	spare *Rows
	// ctxSpare is the context of the last statement that ended (its Rows
	// closed, or its result drained), which the next statement's start
	// reuses (stmtContext).
	ctxSpare *sql.Context
	// ints boxes the integers Rows.Next widens to int64.
	ints codec.Int64s
	// plans is what the connection knows of the texts it ran without
	// arguments (plancache.go).
	plans planCache
	// writeRuns counts runWrite's calls (each asks the session whether it
	// is optimistic and may take the store's turns), for the tests that
	// hold a write to one.
	writeRuns int
	closed    bool
}

// Arg is an argument of a statement: a value bound to the placeholder
// Name (:name) or, when Name is empty, to the Ordinal-th ? (from 1). It
// binds as a SQL literal:
//
//	nil                      NULL
//	int64, uint64, bool      integer (true is 1)
//	float64                  DOUBLE
//	decimal.Decimal          exact DECIMAL (github.com/shopspring/decimal)
//	string                   string in the connection's character set
//	[]byte                   binary string (as the MySQL protocol binds one)
//	time.Time                'YYYY-MM-DD HH:MM:SS.ffffff' in UTC ('0000-00-00' when zero)
//
// Front ends convert other types first (database/sql's default conversion
// does for driver.Valuer, named integer and string types, ...).
type Arg struct {
	Name    string
	Ordinal int
	Value   any
}

// Result is the outcome of a statement that returns no rows.
type Result struct {
	// RowsAffected is the number of rows inserted, updated with a change
	// or deleted (MySQL counts ON DUPLICATE KEY UPDATE rows twice).
	RowsAffected int64
	// LastInsertID is the first AUTO_INCREMENT value the statement
	// generated (MySQL's LAST_INSERT_ID()), 0 when it generated none.
	LastInsertID int64
	// Warnings is the number of warnings the statement left.
	Warnings uint16
	// Info is the statement's information line, as the mysql client
	// prints it ("Rows matched: 1  Changed: 1  Warnings: 0"), or "".
	Info string
}

// newContext returns the context of one statement of the connection.
func (c *Conn) newContext(ctx context.Context, query string) *sql.Context {
	return c.sess.NewStatementContext(ctx, c.eng.gms, query)
}

// stmtContext returns the context of a statement whose end gives it back
// (endContext): the last ended statement's, reset, or a new one.
//
// A context is reused only once the statement it served has ended, its
// iterators closed: GMS's iterators, the process list entry and the
// root span keep it while the statement runs, and a statement left open
// (Rows not closed yet) keeps its own while another one runs on the
// connection. Nothing of the session or the store keeps a statement's
// context past its end (the transaction's commit checks and hooks close
// over keys, not contexts). The reset leaves every field as
// NewStatementContext sets it: a new pid, query and query time, the
// caller's context.Context, and no root span.
func (c *Conn) stmtContext(ctx context.Context, query string) *sql.Context {
	return c.statementContext(ctx, query, true)
}

// resolvedContext returns the context of the statement resolve found
// (stmtContext), without its query time for a constant SELECT: its
// projections (literals and system variables, keptProjection) never read
// the query time, which only the time functions such as NOW() and DDL
// read, and nothing else of its execution does (constSelect.run).
func (c *Conn) resolvedContext(ctx context.Context, query string) *sql.Context {
	f := c.plans.found.fixed
	return c.statementContext(ctx, query, f == nil || f.consts == nil)
}

func (c *Conn) statementContext(ctx context.Context, query string, clock bool) *sql.Context {
	sc := c.ctxSpare
	if sc == nil {
		return c.newContext(ctx, query)
	}
	c.ctxSpare = nil
	c.sess.resetStatementContext(sc, ctx, c.eng.gms, query, clock)
	return sc
}

// endContext takes back the context of a statement that ended.
func (c *Conn) endContext(sc *sql.Context) {
	if sc != nil && !c.closed {
		c.ctxSpare = sc
	}
}

// UseDatabase makes db the connection's current database, creating it
// when it is missing.
func (c *Conn) UseDatabase(ctx context.Context, db string) error {
	q := "CREATE DATABASE IF NOT EXISTS " + QuoteIdent(db)
	if _, err := c.Exec(ctx, q); err != nil {
		return err
	}
	c.sess.SetCurrentDatabase(db)
	c.sess.ClearWarnings() // "database exists" is not the caller's
	return nil
}

// QuoteIdent quotes an identifier with backticks, doubling those in it.
func QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Autocommitting reports whether a statement run now commits on its own
// (Session.Autocommitting).
func (c *Conn) Autocommitting(ctx context.Context) bool {
	return c.sess.Autocommitting(c.askContext(ctx))
}

// Optimistic reports whether a statement run now on the connection runs
// in an optimistic transaction (Session.Optimistic).
func (c *Conn) Optimistic(ctx context.Context) bool {
	return c.sess.Optimistic(c.askContext(ctx))
}

// askContext returns a context for asking the session about its state
// while a statement runs (RunWrite asks between its runs). It starts no
// statement: a statement's context would mark the diagnostics area as the
// previous statement's, and the failure of the statement that asked would
// then drop its own warnings (StatementFailed).
func (c *Conn) askContext(ctx context.Context) *sql.Context {
	own, txn := c.sess.diag.own, c.sess.txnStatement
	sctx := c.newContext(ctx, "")
	c.sess.diag.own, c.sess.txnStatement = own, txn
	return sctx
}

// HoldsTransaction reports whether the connection is inside a transaction
// begun with BEGIN or START TRANSACTION, or holds one a statement left.
func (c *Conn) HoldsTransaction() bool {
	return c.sess.GetIgnoreAutoCommit() || c.sess.GetTransaction() != nil
}

// Exec runs query and reads its result to the end. Without arguments the
// query may hold several statements separated by semicolons: they run in
// order, the first error stops them, and the result adds up the affected
// rows and keeps the last insert ID and information line. An autocommit
// INSERT, UPDATE, DELETE or REPLACE that loses a write conflict runs again
// (Store.RunWrite).
func (c *Conn) Exec(ctx context.Context, query string, args ...Arg) (Result, error) {
	if c.closed {
		return Result{}, ErrConnClosed
	}
	r, err := c.exec(ctx, query, args)
	if err != nil {
		c.failed(err)
	}
	return r, err
}

// exec is Exec on an open connection, without recording its error.
func (c *Conn) exec(ctx context.Context, query string, args []Arg) (Result, error) {
	if len(args) > 0 {
		st, err := c.parseOne(ctx, query)
		if err != nil {
			return Result{}, err
		}
		return st.exec(ctx, args)
	}
	if IsWrite(query) {
		// A write on a kept plan runs again after a lost conflict, as a
		// parsed one does below. The cache is asked once before the first
		// run, so that a write it has nothing for goes straight to the
		// parse below; a rerun asks again, and one it has lost the plan
		// for (the catalog changed) is planned below too.
		handled := c.resolve(ctx, query, nil)
		var r Result
		var err error
		if handled {
			rerun := false
			r, err = c.runWrite(ctx, query, func() (Result, error) {
				if rerun {
					if handled = c.resolve(ctx, query, nil); !handled {
						return Result{}, nil
					}
				}
				rerun = true
				sctx := c.resolvedContext(ctx, query)
				_, iter, err := c.runResolved(sctx, query)
				if err != nil {
					return Result{}, clientError(err)
				}
				return c.drain(sctx, iter)
			})
		}
		if handled {
			if err != nil {
				return Result{}, err
			}
			r.Warnings = c.sess.WarningCount()
			return r, nil
		}
	} else if sctx, _, iter, handled, err := c.cachedQuery(ctx, query); handled {
		if err != nil {
			return Result{}, clientError(err)
		}
		r, err := c.drain(sctx, iter)
		if err != nil {
			return Result{}, err
		}
		r.Warnings = c.sess.WarningCount()
		return r, nil
	}
	var total Result
	rest := query
	for {
		parsed, one, remainder, err := c.eng.gms.Parser.Parse(c.newContext(ctx, rest), rest, true)
		if err != nil {
			return Result{}, clientError(err)
		}
		if one == "" {
			one = rest
		}
		r, err := c.runWrite(ctx, one, func() (Result, error) {
			sctx := c.stmtContext(ctx, one)
			_, iter, err := Query(sctx, c.eng.gms, one, parsed, nil)
			if err != nil {
				return Result{}, clientError(err)
			}
			return c.drain(sctx, iter)
		})
		if err != nil {
			return Result{}, err
		}
		total.RowsAffected += r.RowsAffected
		if r.LastInsertID != 0 {
			total.LastInsertID = r.LastInsertID
		}
		if r.Info != "" {
			total.Info = r.Info
		}
		rest = strings.TrimSpace(remainder)
		if rest == "" || strings.Trim(rest, "; \t\r\n") == "" {
			total.Warnings = c.sess.WarningCount()
			return total, nil
		}
	}
}

// Query runs one statement and returns its result, read as Rows.Next is
// called. Closing the Rows ends the statement (and commits it when it
// autocommits). A statement that returns no rows has no columns; its
// Result is the Rows'.
func (c *Conn) Query(ctx context.Context, query string, args ...Arg) (*Rows, error) {
	if c.closed {
		return nil, ErrConnClosed
	}
	var rows *Rows
	var err error
	if len(args) == 0 {
		rows, err = c.replanned(ctx, func() (*Rows, error) { return c.query(ctx, query) })
	} else {
		rows, err = c.query(ctx, query, args...)
	}
	if err != nil {
		c.failed(err)
	}
	return rows, err
}

// failed records err, the error of the statement the connection ran, in
// the session's diagnostics area (Session.StatementFailed).
func (c *Conn) failed(err error) {
	if !c.closed && !errors.Is(err, ErrConnClosed) {
		c.sess.StatementFailed(err)
	}
}

// query is Query run once.
func (c *Conn) query(ctx context.Context, query string, args ...Arg) (*Rows, error) {
	if len(args) > 0 {
		st, err := c.parseOne(ctx, query)
		if err != nil {
			return nil, err
		}
		return st.rows(ctx, args)
	}
	sctx, schema, iter, handled, err := c.cachedQuery(ctx, query)
	if handled {
		if err != nil {
			return nil, clientError(err)
		}
		return c.newRows(sctx, schema, iter), nil
	}
	if sctx == nil {
		sctx = c.stmtContext(ctx, query)
	}
	schema, iter, err = Query(sctx, c.eng.gms, query, nil, nil)
	if err != nil {
		return nil, clientError(err)
	}
	return c.newRows(sctx, schema, iter), nil
}

// runWrite runs run, and again while it fails with a write conflict when
// query is a write the connection runs in autocommit mode
// (Store.RunWrite).
func (c *Conn) runWrite(ctx context.Context, query string, run func() (Result, error)) (Result, error) {
	c.writeRuns++
	var res Result
	err := c.eng.store.RunWrite(ctx, query, func() bool { return c.Autocommitting(ctx) }, func() bool { return c.Optimistic(ctx) }, func() error {
		var err error
		res, err = run()
		return err
	})
	return res, err
}

// drain reads a statement's result to the end and closes it: a DML
// statement's OK rows make the Result; other rows are discarded.
func (c *Conn) drain(sctx *sql.Context, iter sql.RowIter) (Result, error) {
	var res Result
	for {
		row, err := iter.Next(sctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.sess.AbortStatement(sctx)
			_ = iter.Close(sctx)
			c.endContext(sctx)
			return Result{}, clientError(err)
		}
		if len(row) == 1 {
			if ok, isOK := row[0].(types.OkResult); isOK {
				res.add(ok)
			}
		}
	}
	err := iter.Close(sctx)
	c.endContext(sctx)
	if err != nil {
		return Result{}, clientError(err)
	}
	return res, nil
}

// add counts an OK row of the statement into r.
func (r *Result) add(ok types.OkResult) {
	r.RowsAffected += int64(ok.RowsAffected)
	if ok.InsertID != 0 {
		r.LastInsertID = int64(ok.InsertID)
	}
	if ok.Info != nil {
		r.Info = ok.Info.String()
	}
}

// Close ends the connection: an open transaction is rolled back and the
// session's prepared statements dropped.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.sess.SessionEnd()
	c.eng.gms.CloseSession(c.sess.ID())
	return nil
}

// oneShotCache is how many statements run with arguments but without
// Prepare a connection keeps parsed, with their reused plans, so that
// running the same text again parses and plans as a prepared statement
// would.
const oneShotCache = 64

// parseOne returns the statement of a one-shot query with arguments:
// the connection's cached one for the same text and sql_mode, or a new one,
// parsed and cached like a prepared statement (the engine binds arguments
// only to cached statements). The least recently made one is dropped when
// the cache is full.
func (c *Conn) parseOne(ctx context.Context, query string) (*Stmt, error) {
	key := sql.RemoveSpaceAndDelimiter(query, ';')
	// A statement context is made only when the session's variables
	// changed since they were last read, or the text must be parsed: a
	// cached statement needs neither.
	var sctx *sql.Context
	v := c.sess.currentVars()
	if v == nil {
		sctx = c.newContext(ctx, query)
		v = c.sess.vars(sctx)
	}
	mode := v.sqlMode
	if st, ok := c.oneShots[key]; ok {
		if st.sqlMode == mode {
			return st, nil
		}
		c.forgetOneShot(key)
	}
	if sctx == nil {
		sctx = c.newContext(ctx, query)
	}
	parsed, _, err := c.eng.gms.Parser.ParseOneWithOptions(sctx, key, sql.LoadSqlMode(sctx).ParserOptions())
	if err != nil {
		return nil, clientError(err)
	}
	if c.prepared[key] == 0 {
		c.eng.gms.PreparedDataCache.CacheStmt(c.sess.ID(), key, parsed)
	}
	c.prepared[key]++
	st := &Stmt{conn: c, query: key, parsed: parsed, numInput: -1, sqlMode: mode}
	if countParams(parsed) > 0 {
		st.sel = NewPreparedSelect(parsed)
		st.wr = c.preparedWrite(sctx, key, parsed)
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

// Prepare parses and binds query once (errors such as an unknown table
// surface here) and keeps its parsed form for every execution, which binds
// the arguments and plans it; prepared SELECTs of the shape PreparedSelect
// knows reuse their plan. A text prepared again on the connection reuses
// what the last Prepare of it found (keptPrepare).
func (c *Conn) Prepare(ctx context.Context, query string) (*Stmt, error) {
	if c.closed {
		return nil, ErrConnClosed
	}
	key := sql.RemoveSpaceAndDelimiter(query, ';')
	sctx := c.newContext(ctx, query)
	if k := c.keptFor(sctx, key); k != nil {
		c.sess.StatementPrepared(query, nil)
		if c.prepared[key] == 0 {
			c.eng.gms.PreparedDataCache.CacheStmt(c.sess.ID(), key, k.parsed)
		}
		c.prepared[key]++
		st := &Stmt{conn: c, query: key, parsed: k.parsed, numInput: k.numInput, sel: k.sel}
		if st.numInput > 0 {
			st.wr = c.preparedWrite(sctx, key, k.parsed)
		}
		return st, nil
	}
	version := c.eng.store.catalog.version.Load() // what this Prepare sees, or later
	if err := Prepare(sctx, c.eng.gms, query); err != nil {
		err = clientError(err)
		c.failed(err)
		return nil, err
	}
	c.sess.StatementPrepared(query, nil)
	parsed, ok := c.eng.gms.PreparedDataCache.GetCachedStmt(c.sess.ID(), key)
	if !ok {
		return nil, fmt.Errorf("strata: prepare %q: parsed statement not cached", query)
	}
	c.prepared[key]++
	st := &Stmt{conn: c, query: key, parsed: parsed, numInput: countParams(parsed)}
	if st.numInput > 0 {
		st.sel = NewPreparedSelect(parsed)
		st.wr = c.preparedWrite(sctx, key, parsed)
	}
	c.keep(sctx, key, st, version)
	return st, nil
}

// maxKeptPrepares bounds the prepared texts a connection keeps.
const maxKeptPrepares = 64

// keptPrepare is what Prepare found of a text: its parsed statement, and
// the PreparedSelect that keeps its plan. database/sql prepares a
// statement again on the connection in every transaction that uses it
// (Tx.Stmt), and parsing and binding it again was most of a short
// transaction's cost; kept, the statement's plan template also outlives
// the transaction. It is used while what the Prepare depended on holds:
// the same current database, the session's variables unchanged
// (Session.varsGen: sql_mode decides the parse, the collation the
// binding), and the catalog at the same version. A change the catalog
// version does not see (a temporary table dropped, another process's DDL
// on a shared catalog not yet read) only moves an error from Prepare to
// the first execution, which binds the statement afresh. With the
// privilege system on, every Prepare checks the account's grants in full.
type keptPrepare struct {
	parsed   sqlparser.Statement
	numInput int
	sel      *PreparedSelect
	db       string
	varsGen  uint64
	version  uint64
}

// keptFor returns what a Prepare of key kept that still holds, or nil.
func (c *Conn) keptFor(sctx *sql.Context, key string) *keptPrepare {
	k := c.kept[key]
	if k == nil {
		return nil
	}
	if !planReuse(sctx) || c.eng.gms.Analyzer.Catalog.MySQLDb.Enabled() ||
		k.db != sctx.GetCurrentDatabase() || k.varsGen != c.sess.varsGen.Load() ||
		k.version != c.eng.store.catalog.version.Load() {
		delete(c.kept, key)
		return nil
	}
	return k
}

// keep records what Prepare found of key, for the next Prepare of it.
// version is the catalog version read before that Prepare: a DDL commit
// during it makes the entry stale, never the reverse (a DDL commit in
// progress holds the version at its maximum).
func (c *Conn) keep(sctx *sql.Context, key string, st *Stmt, version uint64) {
	if len(key) > maxCachedText || version == math.MaxUint64 || c.eng.gms.Analyzer.Catalog.MySQLDb.Enabled() {
		return
	}
	if len(c.kept) >= maxKeptPrepares {
		for k := range c.kept {
			delete(c.kept, k)
			break
		}
	}
	if c.kept == nil {
		c.kept = make(map[string]*keptPrepare)
	}
	c.kept[key] = &keptPrepare{parsed: st.parsed, numInput: st.numInput, sel: st.sel,
		db: sctx.GetCurrentDatabase(), varsGen: c.sess.varsGen.Load(), version: version}
}

// unprepare drops one reference to a prepared text.
func (c *Conn) unprepare(key string) {
	c.prepared[key]--
	if c.prepared[key] <= 0 {
		delete(c.prepared, key)
		c.eng.gms.PreparedDataCache.UncacheStmt(c.sess.ID(), key)
	}
}

// countParams returns the number of distinct placeholders of a parsed
// statement.
func countParams(stmt sqlparser.Statement) int {
	if ex, ok := stmt.(*sqlparser.Explain); ok {
		stmt = ex.Statement // vitess's Walk does not enter an EXPLAIN
	}
	names := map[string]bool{}
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if v, ok := node.(*sqlparser.SQLVal); ok && v.Type == sqlparser.ValArg {
			names[string(v.Val)] = true
		}
		return true, nil
	}, stmt)
	return len(names)
}

// clientError returns err as the MySQL error a client would see
// (ServerError), except for context errors, which stay recognisable with
// errors.Is.
func clientError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return ServerError(err)
}
