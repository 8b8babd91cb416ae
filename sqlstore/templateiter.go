package sqlstore

import (
	"io"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// A template whose plan is its table access alone (a point select, an IN
// list, a secondary-index lookup, after trimProject) runs without GMS's
// executor: GMS would build, at every execution, an IndexedTableAccess
// around the new lookup, the table's indexed view and partition iterator,
// a TableRowIter, and the wrappers FinalizeIters adds (the commit of an
// autocommit statement, the process list and FOUND_ROWS, expression
// closers), about fifteen allocations and a walk of the plan for each.
// tableIter does what those do for such a plan, and is kept by its
// PreparedSelect for the next execution.

// tableIter is the row iterator of a template that reads its table access
// alone. It opens the table's rows at the first Next, as GMS's
// TableRowIter does, and closes them at the end of the rows; Close does
// what GMS's wrappers do at the end of a statement, in their order: the
// rows closed, an autocommit transaction committed, ROW_COUNT and
// FOUND_ROWS set, the statement ended in the process list; then the
// transaction a PREPARE kept is taken up (recoveringIter). Panics and
// errors come out as recoveringIter gives them.
type tableIter struct {
	owner *PreparedSelect // gets the iterator back at Close
	query string
	table *Table
	lp    *lookupPlan
	at    int // the statement view's boundary when the lookup was made

	rows       *rowIter
	opened     bool
	n          int64 // rows returned (FOUND_ROWS)
	autocommit bool
	closed     bool
	// began is the transaction the execution began for itself (nil: it
	// read in one it found), which its end may keep for reuse
	// (txn.reusable).
	began *txn

	scratch indexedTable // lookupRows's, kept with the iterator
	mem     rowIterMem   // rows's, kept with the iterator
}

var _ sql.RowIter = (*tableIter)(nil)

// direct reports whether t runs on a tableIter: its plan is the table
// access alone, on a table of ours.
func (t *planTemplate) direct() bool {
	_, ok := t.root.(*plan.IndexedTableAccess)
	return ok && t.table != nil
}

// runDirect starts an execution of a direct template with lookup, as run
// does with the plan t.with would return, and returns its schema and
// iterator.
func (p *PreparedSelect) runDirect(ctx *sql.Context, e *sqle.Engine, query string, t *planTemplate, lookup sql.IndexLookup) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	// The transaction ctx holds after startStatement is one this
	// execution began when ctx held none before and the session had none
	// put aside (a PREPARE's or a procedure body's, which the start may
	// take up instead).
	had := ctx.GetTransaction() != nil
	if sess, ok := ctx.Session.(*Session); !ok || sess.nestedHeld.Load() {
		had = true
	}
	if err := startStatement(ctx); err != nil {
		return nil, nil, err
	}
	var began *txn
	if !had {
		began = txnOf(ctx)
	}
	countStatus(ctx, statusComSelect)
	autocommit := false
	if !ctx.IsInterpreted() {
		if sess, ok := ctx.Session.(*Session); ok {
			autocommit = sess.autocommit(ctx)
		} else if on, err := plan.IsSessionAutocommit(ctx); err != nil {
			clearAutocommit(ctx)
			return nil, nil, err
		} else {
			autocommit = on
		}
	}
	ti := p.iter
	if ti == nil || !ti.closed {
		ti = &tableIter{owner: p} // the kept one is still being read
	}
	p.iter = nil
	batch := ti.mem.batch // the point batches' memory outlives executions
	*ti = tableIter{owner: p, query: query, table: t.table, autocommit: autocommit, began: began}
	ti.mem.batch = batch
	// A SELECT of a table is read-only: e.IsReadOnly refuses nothing here.
	if ti.lp, ti.at, err = t.table.lookupRows(ctx, lookup, &ti.scratch); err != nil {
		ti.release()
		clearAutocommit(ctx)
		return nil, nil, err
	}
	return t.schema, ti, nil
}

// lookupRows encodes lookup and plans its reading as the table's
// LookupPartitions does for a static lookup, checking first that the
// table is read at the catalog version it was pinned to; at is the
// statement view's boundary the rows are read at. it is scratch memory for
// the table's indexed view, which the plan is made through.
func (t *Table) lookupRows(ctx *sql.Context, lookup sql.IndexLookup, it *indexedTable) (lp *lookupPlan, at int, err error) {
	if t.planPinned {
		if v, ok := txnOf(ctx).catalogVersion(); !ok || v != t.planVersion {
			return nil, 0, errStalePlan
		}
	}
	*it = indexedTable{Table: t, lookup: lookup, opts: t.store.accessOptions(ctx)}
	lp, err = it.plan(ctx, lookup, false)
	if err != nil {
		return nil, 0, err
	}
	if t.readsCurrent && !pessimistic(ctx) {
		it.guardForeignKey(ctx, lp)
	}
	return lp, viewBoundary(ctx), nil
}

// Next implements sql.RowIter.
func (ti *tableIter) Next(ctx *sql.Context) (row sql.Row, err error) {
	if ti.closed {
		return nil, io.EOF
	}
	defer recoverInto(&err, ti.query)
	if err := ctx.Err(); err != nil {
		return nil, StatementError(ti.query, err)
	}
	if !ti.opened {
		ti.opened = true
		if ti.rows, err = ti.table.newRowIterIn(ctx, ti.lp, ti.at, &ti.mem); err != nil {
			ti.rows = nil
			return nil, StatementError(ti.query, err)
		}
	}
	if ti.rows == nil {
		return nil, io.EOF
	}
	row, err = ti.rows.Next(ctx)
	if err == io.EOF {
		rows := ti.rows
		ti.rows = nil
		if err := rows.Close(ctx); err != nil {
			return nil, StatementError(ti.query, err)
		}
		return nil, io.EOF
	}
	if err != nil {
		return nil, StatementError(ti.query, err)
	}
	ti.n++
	return row, nil
}

// Close implements sql.RowIter.
func (ti *tableIter) Close(ctx *sql.Context) (err error) {
	if ti.closed {
		return nil
	}
	defer recoverInto(&err, ti.query)
	defer ti.release()
	if ti.rows != nil {
		err = ti.rows.Close(ctx)
		ti.rows = nil
	}
	return endRead(ctx, err == nil && ti.autocommit, ti.n, err, ti.began)
}

// endReadStatement ends a read statement that ran without GMS's
// iterators as GMS's would: the autocommit transaction committed (when
// commit says so and GMS would), ROW_COUNT() -1 and FOUND_ROWS() found,
// the process list entry and the root span ended, the transaction a
// PREPARE kept taken up (nestedtxn.go). It returns err, or the commit's error.
func endReadStatement(ctx *sql.Context, commit bool, found int64, err error) error {
	return endRead(ctx, commit, found, err, nil)
}

// endRead is endReadStatement for a statement that began began for itself
// (nil: none): when the commit ends it and nothing else can hold it
// (txn.reusable), the session's next transaction begins in its memory.
func endRead(ctx *sql.Context, commit bool, found int64, err error, began *txn) error {
	if commit && !ctx.GetIgnoreAutoCommit() {
		if tx := ctx.GetTransaction(); tx != nil {
			if ts, ok := ctx.Session.(sql.TransactionSession); ok {
				sess, _ := ts.(*Session)
				reuse := sess != nil && began != nil && tx == sql.Transaction(began) && began.reusable(sess)
				if err = ts.CommitTransaction(ctx, tx); err == nil {
					ctx.SetTransaction(nil)
					if reuse {
						sess.keepForReuse(began)
					}
				}
			}
		}
	}
	setQueryInfo(ctx, sql.RowCount, -1)
	setQueryInfo(ctx, sql.FoundRows, found)
	endStatement(ctx)
	return err
}

// endStatement ends a statement run without GMS's iterators as they end
// one, after its commit: the process list entry and the root span ended,
// the transaction a PREPARE kept taken up (nestedtxn.go).
func endStatement(ctx *sql.Context) {
	ctx.ProcessList.EndQuery(ctx)
	if span := ctx.RootSpan(); span != nil {
		span.End()
	}
	if s, ok := ctx.Session.(*Session); ok {
		s.takeUp(ctx)
	}
}

// release marks the iterator closed and gives it back to its
// PreparedSelect.
func (ti *tableIter) release() {
	p := ti.owner
	batch := ti.mem.batch
	*ti = tableIter{owner: p, closed: true}
	ti.mem.batch = batch
	if p != nil && p.iter == nil {
		p.iter = ti
	}
}
