package sqlstore

import (
	"io"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// A template whose plan is a rangeAgg over its table access (SELECT
// SUM(k) FROM t WHERE id BETWEEN ? AND ?, the Project above the aggregate
// absorbed by it) runs, like a template of the table access alone
// (templateiter.go), without GMS's executor: through GMS, every execution
// built a new IndexedTableAccess and the plan around it (planTemplate.with),
// went through the engine's exec builders, opened the lookup's partitions
// and rows through the table's interfaces, and was wrapped by
// FinalizeIters (the autocommit transaction's commit, the process list,
// FOUND_ROWS, expression closers), about a fifth of the statement's CPU.
// aggIter reads the rows as the tableIter of the same template would, into
// the kept rangeAgg's accumulators, and ends the statement as the
// tableIter does. The rangeAgg, shared by every execution of the
// template, holds nothing of an execution: the accumulators live on
// Next's stack and the rows in the tableIter, the connection's.

// aggIter is the row iterator of a template that is a rangeAgg over its
// table access: one row, the aggregates', then io.EOF.
type aggIter struct {
	ti   *tableIter
	r    *rangeAgg
	done bool
}

var _ sql.RowIter = (*aggIter)(nil)

// directAgg returns the rangeAgg t runs on an aggIter: the plan is a
// rangeAgg over the table access, on a table of ours; or nil.
func (t *planTemplate) directAgg() *rangeAgg {
	ra, ok := t.root.(*rangeAgg)
	if !ok || t.table == nil {
		return nil
	}
	if _, ok := ra.in[0].(*plan.IndexedTableAccess); !ok {
		return nil
	}
	return ra
}

// runDirectAgg starts an execution of the template t, whose plan is ra,
// with lookup: the statement is started and the lookup planned as for a
// direct template (runDirect); the rows are read at the first Next.
func (p *PreparedSelect) runDirectAgg(ctx *sql.Context, e *sqle.Engine, query string, t *planTemplate, ra *rangeAgg, lookup sql.IndexLookup) (sql.Schema, sql.RowIter, error) {
	schema, iter, err := p.runDirect(ctx, e, query, t, lookup)
	if err != nil {
		return nil, nil, err
	}
	return schema, &aggIter{ti: iter.(*tableIter), r: ra}, nil
}

// Next implements sql.RowIter.
func (it *aggIter) Next(ctx *sql.Context) (row sql.Row, err error) {
	ti := it.ti
	if it.done || ti.closed {
		return nil, io.EOF
	}
	it.done = true
	defer recoverInto(&err, ti.query)
	if err := ctx.Err(); err != nil {
		return nil, StatementError(ti.query, err)
	}
	ti.opened = true
	rows, err := ti.table.newRowIterIn(ctx, ti.lp, ti.at, &ti.mem)
	if err != nil {
		return nil, StatementError(ti.query, err)
	}
	ti.rows = rows
	ai := rangeAggIter{r: it.r, rows: rows}
	if rows.rawValues() {
		ai.ri = rows
	}
	row, err = ai.Next(ctx)
	ti.rows = nil
	if cerr := rows.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, StatementError(ti.query, err)
	}
	ti.n = 1
	return row, nil
}

// Close implements sql.RowIter: it ends the statement as the tableIter's
// Close does (and gives the tableIter back to its PreparedSelect).
func (it *aggIter) Close(ctx *sql.Context) error {
	it.done = true
	return it.ti.Close(ctx)
}
