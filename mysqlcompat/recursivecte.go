package mysqlcompat

import (
	"errors"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	goerrors "gopkg.in/src-d/go-errors.v1"
)

// Recursive common table expressions
//
// MySQL stops a recursive CTE whose recursive part would run more than
// cte_max_recursion_depth times (default 1000) with error 3636. GMS's
// iterator (rowexec's recursiveCteIter) ignores the variable and stops at
// a fixed 10,001 iterations with an error of its own, so a user who raised
// the variable still met the limit, and one who relied on MySQL's default
// looped ten times longer. limitRecursion replaces each RecursiveCte of a
// plan with recursiveCTE, which runs the same algorithm and counts
// iterations as MySQL does: an iteration is one run of the recursive part
// over the rows the previous one produced (the first over the anchor's
// rows), and the one that would exceed the depth fails before it runs.

// ErrRecursionDepth is MySQL's ER_CTE_MAX_RECURSION_DEPTH (3636, HY000):
// sqlstore numbers it.
var ErrRecursionDepth = goerrors.NewKind("Recursive query aborted after %d iterations. Try increasing @@cte_max_recursion_depth to a larger value.")

// limitRecursion is the rule that puts recursiveCTE in place of every
// RecursiveCte of n, in derived tables and subquery expressions too. Run
// again over its own output it changes nothing. GMS flags every statement
// with a CTE (or a view, or a derived table) as having a subquery; the
// others, most statements, are not walked. (GMS's fixed batches of simple
// statements, which pass no flags, hold no CTE but in a subquery of a
// single-table UPDATE or DELETE, which keeps GMS's limit.)
func limitRecursion(_ *sql.Context, a *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags == nil || !qFlags.SubqueryIsSet() {
		return n, transform.SameTree, nil
	}
	return replaceRecursiveCTEs(a, n)
}

func replaceRecursiveCTEs(a *analyzer.Analyzer, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	n, same, err := transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if r, ok := n.(*plan.RecursiveCte); ok {
			return &recursiveCTE{cte: r, exec: a.ExecBuilder}, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, sameSq, err := transform.NodeExprsWithOpaque(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		sq, ok := e.(*plan.Subquery)
		if !ok || sq.Query == nil {
			return e, transform.SameTree, nil
		}
		q, same, err := replaceRecursiveCTEs(a, sq.Query)
		if err != nil || same {
			return e, transform.SameTree, err
		}
		return sq.WithQuery(q), transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same && sameSq, nil
}

// recursiveCTE is a RecursiveCte that runs itself (sql.ExecSourceRel),
// bounded by cte_max_recursion_depth. The rest is the wrapped node's. GMS's
// rules that look for a RecursiveCte by type have run when the rule puts
// this in its place; but a subquery's execution prepends the outer row to
// every row source of its plan (plan.PrependRowInPlan), which it does
// inside a RecursiveCte by type and inside other nodes through their
// children: so this node, unlike the one it wraps, is not opaque.
type recursiveCTE struct {
	cte  *plan.RecursiveCte
	exec sql.NodeExecBuilder
}

var (
	_ sql.ExecSourceRel      = (*recursiveCTE)(nil)
	_ sql.Nameable           = (*recursiveCTE)(nil)
	_ sql.CollationCoercible = (*recursiveCTE)(nil)
)

func (r *recursiveCTE) Name() string         { return r.cte.Name() }
func (r *recursiveCTE) Schema() sql.Schema   { return r.cte.Schema() }
func (r *recursiveCTE) Children() []sql.Node { return r.cte.Children() }
func (r *recursiveCTE) Resolved() bool       { return r.cte.Resolved() }
func (r *recursiveCTE) IsReadOnly() bool     { return r.cte.IsReadOnly() }
func (r *recursiveCTE) String() string       { return r.cte.String() }
func (r *recursiveCTE) DebugString() string  { return sql.DebugString(r.cte) }

// CollationCoercibility implements sql.CollationCoercible.
func (r *recursiveCTE) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return r.cte.CollationCoercibility(ctx)
}

// WithChildren implements sql.Node.
func (r *recursiveCTE) WithChildren(children ...sql.Node) (sql.Node, error) {
	n, err := r.cte.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &recursiveCTE{cte: n.(*plan.RecursiveCte), exec: r.exec}, nil
}

// RowIter implements sql.ExecSourceRel, with the LIMIT and ORDER BY of the
// union around the recursion as GMS applies them.
func (r *recursiveCTE) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	depth, err := recursionDepth(ctx)
	if err != nil {
		return nil, err
	}
	var iter sql.RowIter = &recursiveIter{n: r, row: row, depth: depth}
	u := r.cte.Union()
	switch {
	case u.Limit != nil && len(u.SortFields) > 0:
		limit, err := iters.GetInt64Value(ctx, u.Limit)
		if err != nil {
			return nil, err
		}
		iter = iters.NewTopRowsIter(u.SortFields, limit, false, iter, len(u.Schema()))
	case u.Limit != nil:
		limit, err := iters.GetInt64Value(ctx, u.Limit)
		if err != nil {
			return nil, err
		}
		iter = &iters.LimitIter{Limit: limit, ChildIter: iter}
	case len(u.SortFields) > 0:
		iter = iters.NewSortIter(u.SortFields, iter)
	}
	return iter, nil
}

// recursionDepth is the session's cte_max_recursion_depth.
func recursionDepth(ctx *sql.Context) (uint64, error) {
	v, err := ctx.GetSessionVariable(ctx, "cte_max_recursion_depth")
	if err != nil {
		return 0, err
	}
	switch v := v.(type) {
	case int64:
		return uint64(max(v, 0)), nil
	case uint64:
		return v, nil
	case int:
		return uint64(max(v, 0)), nil
	}
	return 1000, nil
}

// recursiveIter returns the anchor's rows, then each iteration's, running
// the recursive part over the rows of the iteration before it (put in the
// node's working table) until one produces none.
type recursiveIter struct {
	n     *recursiveCTE
	row   sql.Row
	depth uint64

	iter       sql.RowIter // the anchor's or the current iteration's
	started    bool
	iterations uint64
	produced   []sql.Row         // this iteration's rows: the next one's input
	seen       sql.KeyValueCache // rows returned, under UNION DISTINCT
}

// Next implements sql.RowIter.
func (it *recursiveIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !it.started {
		it.started = true
		if it.n.cte.Union().Distinct {
			it.seen = sql.NewMapCache()
		}
		iter, err := it.n.exec.Build(ctx, it.n.cte.Left(), it.row)
		if err != nil {
			return nil, err
		}
		it.iter = iter
	}
	for {
		if it.iter == nil {
			return nil, io.EOF
		}
		row, err := it.iter.Next(ctx)
		if errors.Is(err, io.EOF) {
			if err := it.nextIteration(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if it.seen != nil {
			key, err := sql.HashOf(ctx, row)
			if err != nil {
				return nil, err
			}
			if v, _ := it.seen.Get(key); v != nil {
				continue
			}
			if err := it.seen.Put(key, struct{}{}); err != nil {
				return nil, err
			}
		}
		it.produced = append(it.produced, row)
		return row, nil
	}
}

// nextIteration closes the finished iterator and starts the recursive part
// over what it produced; when it produced nothing the recursion is over
// (it.iter left nil).
func (it *recursiveIter) nextIteration(ctx *sql.Context) error {
	err := it.iter.Close(ctx)
	it.iter = nil
	if err != nil {
		return err
	}
	if len(it.produced) == 0 {
		return nil
	}
	it.iterations++
	if it.iterations > it.depth {
		return ErrRecursionDepth.New(it.iterations)
	}
	if w := it.n.cte.Working; w != nil {
		w.Buf = it.produced
	}
	it.produced = nil
	iter, err := it.n.exec.Build(ctx, it.n.cte.Right(), it.row)
	if err != nil {
		return err
	}
	it.iter = iter
	return nil
}

// Close implements sql.RowIter.
func (it *recursiveIter) Close(ctx *sql.Context) error {
	if w := it.n.cte.Working; w != nil {
		w.Buf = nil
	}
	it.produced, it.seen = nil, nil
	if it.iter != nil {
		err := it.iter.Close(ctx)
		it.iter = nil
		return err
	}
	return nil
}
