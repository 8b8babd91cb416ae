package sqlstore

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/strata-db/strata/mysqlcompat"
)

// BEGIN (START TRANSACTION, with READ ONLY, READ WRITE or WITH CONSISTENT
// SNAPSHOT), COMMIT and ROLLBACK are kept by the plan cache with their
// analyzed plan, one node. Building GMS's iterators for it at every
// execution (the node's, then the commit, process-list and
// expression-closer wrappers, and the walks of the plan they make) cost
// about twice what the transaction's own work does, and the planned path
// begins a transaction for the statement before it runs, which BEGIN then
// commits, empty, and COMMIT or ROLLBACK ends at once. A txnStmt does the
// node's work itself.
//
// What the planned path does that a reader could see is done here too, in
// its order: Questions counted, the session validated (a parked or idle
// transaction taken up or rolled back), the warnings cleared; BEGIN
// commits the open transaction and begins one that autocommit leaves
// open; COMMIT and ROLLBACK end the open one and leave the session in
// autocommit mode; at Close ROW_COUNT is set to 0 (MySQL's; GMS sets a
// SELECT's -1, which the session turns into 0 for these statements:
// Session.txnStatement) and FOUND_ROWS to 0, the statement is
// ended in the process list. The one thing skipped is the statement's own
// transaction, begun when none is open and ended, with nothing read or
// written in it, by the statement itself. Com_begin, Com_commit and
// Com_rollback, which GMS does not count, are counted for both paths by
// the session's validation (countTxnStatement).
// TestTxnStmtMatchesPlanned compares the two.

// txnOp is what a transaction statement does.
type txnOp uint8

const (
	txnBegin txnOp = iota + 1
	txnCommit
	txnRollback
)

// txnStmt is the kept plan of BEGIN, COMMIT or ROLLBACK. It belongs to one
// connection's plan cache: not safe for concurrent use.
type txnStmt struct {
	op   txnOp
	char sql.TransactionCharacteristic // BEGIN's
	iter *txnStmtIter                  // the last execution's, when closed
	// check is what the engine's exec builder checks before building
	// START TRANSACTION READ WRITE (the server's read_only:
	// StartsReadWrite), found at the first execution (checked).
	check   func(*sql.Context) error
	checked bool
}

// StartsReadWrite reports whether n is START TRANSACTION READ WRITE, the
// statement of ctx, which MySQL refuses under read_only (1290) to an
// account without CONNECTION_ADMIN or SUPER, as it refuses a write; GMS
// counts the node as read-only, and builds BEGIN and START TRANSACTION
// alike, so the statement's text tells (with ctx nil, whether n may be
// one). Exec builders that check writes check it too, and a kept one is
// checked as they would (txnStmt.run).
func StartsReadWrite(ctx *sql.Context, n sql.Node) bool {
	st, ok := n.(*plan.StartTransaction)
	if !ok || st.TransChar != sql.ReadWrite {
		return false
	}
	return ctx == nil || saysReadWrite(ctx.Query())
}

// saysReadWrite reports whether the first statement of query is START
// TRANSACTION with READ WRITE among its characteristics (startOptions).
// Run only for a START TRANSACTION node READ WRITE, under read_only or
// once per kept text.
func saysReadWrite(query string) bool {
	readWrite, _ := startOptions(query)
	return readWrite
}

// startOptions reads the characteristics of query's first statement when
// it is START TRANSACTION: READ WRITE, and WITH CONSISTENT SNAPSHOT, in
// any order, comma-separated. The parser's own tokenizer reads them, so
// that what it skips (comments, any white space between the words) and
// what it reads (a /*! ... */ comment's text) are as the parser saw them,
// and only the first statement counts: in a multi-statement text GMS gives
// the context the whole rest of the text (BEGIN; SELECT 'read write').
func startOptions(query string) (readWrite, snapshot bool) {
	tkn := ast.NewStringTokenizer(query)
	next := func() int {
		for {
			if typ, _ := tkn.Scan(); typ != ast.COMMENT {
				return typ
			}
		}
	}
	if next() != ast.START || next() != ast.TRANSACTION {
		return false, false
	}
	for {
		switch next() {
		case ast.READ:
			switch next() {
			case ast.WRITE:
				readWrite = true
			case ast.ONLY:
			default:
				return readWrite, snapshot
			}
		case ast.WITH:
			if next() != ast.CONSISTENT || next() != ast.SNAPSHOT {
				return readWrite, snapshot
			}
			snapshot = true
		default:
			return readWrite, snapshot
		}
		if next() != ',' {
			return readWrite, snapshot
		}
	}
}

// prechecks returns the checks the builders of chain b make before
// building n (mysqlcompat.Prechecker), outermost first; nil when none.
// Builders that wrap others (Unwrap) are looked through.
func prechecks(b sql.NodeExecBuilder, n sql.Node) func(*sql.Context) error {
	var checks []func(*sql.Context) error
	for x := b; x != nil; {
		if pc, ok := x.(mysqlcompat.Prechecker); ok {
			if c, ok := pc.Precheck(n); ok && c != nil {
				checks = append(checks, c)
			}
		}
		u, ok := x.(interface{ Unwrap() sql.NodeExecBuilder })
		if !ok {
			break
		}
		x = u.Unwrap()
	}
	if len(checks) == 0 {
		return nil
	}
	return func(ctx *sql.Context) error {
		for _, c := range checks {
			if err := c(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// newTxnStmt returns the txnStmt of an analyzed plan that is a
// StartTransaction, Commit or Rollback node, or nil.
func newTxnStmt(n sql.Node) *txnStmt {
	switch n := n.(type) {
	case *plan.StartTransaction:
		return &txnStmt{op: txnBegin, char: n.TransChar}
	case *plan.Commit:
		return &txnStmt{op: txnCommit}
	case *plan.Rollback:
		return &txnStmt{op: txnRollback}
	}
	return nil
}

// run executes the statement, as runPlan would execute the kept plan;
// reused counts it in Strata_plans_reused. The work is done here; the
// iterator returns no rows and ends the statement at Close.
func (ts *txnStmt) run(ctx *sql.Context, c *Conn, query string, reused bool) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	countStatus(ctx, statusQuestions)
	if err := ctx.Session.ValidateSession(ctx); err != nil {
		return nil, nil, StatementError(query, err)
	}
	ctx.ClearWarnings()
	if ts.op == txnBegin && ts.char == sql.ReadWrite {
		if !ts.checked {
			// A txnStmt is kept per text: BEGIN's has nothing to check.
			if saysReadWrite(query) {
				ts.check = prechecks(c.eng.gms.Analyzer.ExecBuilder, plan.NewStartTransaction(sql.ReadWrite))
			}
			ts.checked = true
		}
		if ts.check != nil {
			if err := ts.check(ctx); err != nil {
				return nil, nil, StatementError(query, err)
			}
		}
	}
	if err := ts.apply(ctx); err != nil {
		clearAutocommit(ctx)
		return nil, nil, StatementError(query, err)
	}
	ti := ts.iter
	if ti == nil || !ti.closed {
		ti = &txnStmtIter{} // the kept one is still open
	}
	ts.iter = nil
	*ti = txnStmtIter{owner: ts, query: query}
	if reused {
		c.sess.plansReused.Add(1)
	}
	return nil, ti, nil
}

// apply does the statement's work on the session's transaction, as GMS's
// iterators of StartTransaction, Commit and Rollback do. Where the
// context holds no transaction, the planned path begins one for the
// statement first; BEGIN commits it, COMMIT and ROLLBACK end it, with
// nothing in it, so here it is not begun.
func (ts *txnStmt) apply(ctx *sql.Context) error {
	tsess, ok := ctx.Session.(sql.TransactionSession)
	if !ok {
		return nil
	}
	cur := ctx.GetTransaction()
	switch ts.op {
	case txnBegin:
		if cur != nil {
			if err := tsess.CommitTransaction(ctx, cur); err != nil {
				return err
			}
		}
		tx, err := tsess.StartTransaction(ctx, ts.char)
		if err != nil {
			return err
		}
		ctx.SetTransaction(tx)
		ctx.SetIgnoreAutoCommit(true)
		return nil
	case txnCommit:
		if cur != nil {
			if err := tsess.CommitTransaction(ctx, cur); err != nil {
				return err
			}
		}
	case txnRollback:
		if cur != nil {
			if err := tsess.Rollback(ctx, cur); err != nil {
				return err
			}
		}
	}
	ctx.SetIgnoreAutoCommit(false)
	ctx.SetTransaction(nil)
	return nil
}

// txnStmtIter is the result of a transaction statement: no rows.
type txnStmtIter struct {
	owner  *txnStmt // gets the iterator back at Close
	query  string
	closed bool
}

var _ sql.RowIter = (*txnStmtIter)(nil)

// Next implements sql.RowIter.
func (ti *txnStmtIter) Next(*sql.Context) (sql.Row, error) { return nil, io.EOF }

// Close implements sql.RowIter: what GMS's wrappers do at the end of the
// statement (its transaction is neither committed nor begun there).
func (ti *txnStmtIter) Close(ctx *sql.Context) (err error) {
	if ti.closed {
		return nil
	}
	defer recoverInto(&err, ti.query)
	defer ti.release()
	err = endReadStatement(ctx, false, 0, nil)
	setQueryInfo(ctx, sql.RowCount, 0) // MySQL's, not a SELECT's -1
	return err
}

// release marks the iterator closed and gives it back to its txnStmt.
func (ti *txnStmtIter) release() {
	ts := ti.owner
	*ti = txnStmtIter{owner: ts, closed: true}
	if ts != nil && ts.iter == nil {
		ts.iter = ti
	}
}
