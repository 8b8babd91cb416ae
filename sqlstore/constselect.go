package sqlstore

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// Statements that select constants and system variables from no table
// (SELECT 1, SELECT 'a' AS x, NULL, SELECT @@autocommit) are kept by the plan cache with their analyzed plan, a Project
// over the dual table. Building GMS's iterators for it at every execution
// (the dual table's partitions and rows, the Project, the commit,
// process-list and expression-closer wrappers, and the walks of the plan
// they make) and beginning and committing a transaction for it cost
// several times what evaluating the projections does. A constSelect
// evaluates them itself.
//
// What the planned path does that a reader could see is done here too, in
// its order: Questions and Com_select counted, the session validated (a
// parked or idle transaction taken up or rolled back), the warnings
// cleared, the projections evaluated in the statement's context at the
// first Next, and at Close an autocommit transaction committed, ROW_COUNT
// set to -1 and FOUND_ROWS to the rows returned, the statement ended in
// the process list. The one thing skipped is a transaction nobody reads:
// with autocommit on, outside BEGIN, and no transaction open, the planned
// path begins one and its Close commits it, with nothing read or written
// in between; with autocommit off (the statement would leave a
// transaction open) or inside one, the transaction is begun or kept as
// the planned path does. TestConstSelectMatchesPlanned compares the two.

// constSelect is the kept plan of a SELECT of constants from no table.
// It belongs to one connection's plan cache: not safe for concurrent use.
type constSelect struct {
	exprs  []sql.Expression // the Project's, evaluated per execution
	schema sql.Schema       // the Project's, made once
	iter   *constIter       // the last execution's, when closed
}

// newConstSelect returns the constSelect of an analyzed plan that is a
// Project of literals and system variables (keptProjection) over the dual
// table, or nil.
func newConstSelect(n sql.Node) *constSelect {
	p, ok := n.(*plan.Project)
	if !ok {
		return nil
	}
	rt, ok := p.Child.(*plan.ResolvedTable)
	if !ok || !plan.IsDualTable(rt.Table) {
		return nil
	}
	for _, x := range p.Projections {
		if !keptProjection(x) {
			return nil
		}
	}
	return &constSelect{exprs: p.Projections, schema: p.Schema()}
}

// run starts an execution, as runPlan would start the kept plan; reused
// counts it in Strata_plans_reused.
func (cs *constSelect) run(ctx *sql.Context, c *Conn, query string, reused bool) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	countStatus(ctx, statusQuestions)
	if err := ctx.Session.ValidateSession(ctx); err != nil {
		return nil, nil, StatementError(query, err)
	}
	autocommit := c.sess.autocommit(ctx)
	if ctx.GetTransaction() == nil && (!autocommit || ctx.GetIgnoreAutoCommit()) {
		// The transaction outlives the statement: begun as GMS begins it.
		tx, err := c.sess.StartTransaction(ctx, sql.ReadWrite)
		if err != nil {
			return nil, nil, StatementError(query, err)
		}
		ctx.SetTransaction(tx)
	}
	ctx.ClearWarnings()
	countStatus(ctx, statusComSelect)
	ci := cs.iter
	if ci == nil || !ci.closed {
		ci = &constIter{} // the kept one is still being read
	}
	cs.iter = nil
	*ci = constIter{owner: cs, query: query, row: ci.row[:0], autocommit: autocommit}
	if reused {
		c.sess.plansReused.Add(1)
	}
	return cs.schema, ci, nil
}

// constIter returns the one row of a constSelect's execution.
type constIter struct {
	owner      *constSelect // gets the iterator back at Close
	query      string
	row        sql.Row // Next's row, its memory kept with the iterator
	autocommit bool
	n          int64 // rows returned (FOUND_ROWS)
	done       bool
	closed     bool
}

var _ sql.RowIter = (*constIter)(nil)

// Next implements sql.RowIter.
func (ci *constIter) Next(ctx *sql.Context) (row sql.Row, err error) {
	if ci.closed || ci.done {
		return nil, io.EOF
	}
	defer recoverInto(&err, ci.query)
	ci.done = true
	row = ci.row[:0]
	for _, x := range ci.owner.exprs {
		v, err := x.Eval(ctx, nil)
		if err != nil {
			return nil, StatementError(ci.query, err)
		}
		row = append(row, v)
	}
	ci.row = row
	ci.n++
	return row, nil
}

// Close implements sql.RowIter: what GMS's wrappers do at the end of a
// SELECT, in their order (tableIter.Close).
func (ci *constIter) Close(ctx *sql.Context) (err error) {
	if ci.closed {
		return nil
	}
	defer recoverInto(&err, ci.query)
	defer ci.release()
	return endReadStatement(ctx, ci.autocommit, ci.n, nil)
}

// release marks the iterator closed and gives it back to its constSelect.
func (ci *constIter) release() {
	cs := ci.owner
	*ci = constIter{owner: cs, row: ci.row[:0], closed: true}
	if cs != nil && cs.iter == nil {
		cs.iter = ci
	}
}

// setQueryInfo sets the session's ROW_COUNT or FOUND_ROWS to v unless it
// holds v already: GMS keeps them boxed, so storing -1 (ROW_COUNT after
// every SELECT) allocates each time. A Session's are compared against its
// mirrors, without GMS's lookup by name.
func setQueryInfo(ctx *sql.Context, key string, v int64) {
	if s, ok := ctx.Session.(*Session); ok {
		m := &s.rowCount
		if key == sql.FoundRows {
			m = &s.foundRows
		}
		if m.Load() != v {
			s.SetLastQueryInfoInt(key, v)
		}
		return
	}
	if ctx.GetLastQueryInfoInt(key) != v {
		ctx.SetLastQueryInfoInt(key, v)
	}
}
