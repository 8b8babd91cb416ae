package sqlstore

import (
	"errors"
	"math"
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Prepared selects. go-mysql-server binds and analyzes a prepared
// statement again at every execution, which is most of the cost of a
// short read: about 60% of a primary-key point select. Yet for the
// commonest prepared reads,
//
//	SELECT <columns, aggregates> FROM t WHERE c = ?
//	                                 | c IN (?, ...)
//	                                 | c BETWEEN ? AND ?
//	                                 | <any of those> OR <any of those>
//	[GROUP BY ...] [ORDER BY ...]
//
// where c is an integer column that begins an index, the arguments reach
// the analyzed plan only through the index lookup at its leaf. A
// PreparedSelect keeps the first such plan as a template, and later
// executions run it with a lookup built from their own arguments: sorted,
// duplicates dropped, overlapping intervals merged, as GMS builds it.
//
// A plan becomes a template only when it provably is one: nothing but
// projections, grouping, sorting and DISTINCT over one static
// IndexedTableAccess on an index whose first column is c; no filter left
// above it; no literal outside the lookup equal to an argument (a value
// that could have come from one); and the lookup GMS built equal to the one
// built here from the same arguments. A template is used only while what it
// was made from holds: the same current database, sql_mode and
// sql_select_limit; the catalog at the version it was made at (the table
// checks when the lookup starts, inside the statement's transaction, and a
// stale template is dropped and the statement planned afresh); and
// arguments that are integers within the column's type and leave at least
// one interval (others, such as NULL or 5000000000 for an INT column, go to
// GMS, whose answer stays the reference). With the privilege system on, as
// in the MySQL server, every execution is planned, so that grants are
// checked.

// planReuseVar is the session variable that turns plan reuse off for a
// session (SET strata_plan_reuse = OFF): every execution is then planned
// in full, to measure against.
const planReuseVar = "strata_plan_reuse"

// maxLearn is how many executions with fitting arguments a PreparedSelect
// plans in full hoping for a template before it looks only at every
// relearnEvery-th execution (what made the plan no template, such as
// sql_select_limit, may change).
const (
	maxLearn     = 3
	relearnEvery = 16
)

// errStalePlan is returned by a lookup that serves a template made at
// another catalog version than the statement's transaction reads.
var errStalePlan = errors.New("sqlstore: prepared plan made for another catalog version")

// PreparedSelect is what a prepared statement of the shape above keeps
// between executions. It belongs to one connection: not safe for
// concurrent use.
type PreparedSelect struct {
	col   string // the predicate's column, lower case
	qual  string // its table qualifier, lower case, or ""
	terms []term // the predicate's disjuncts
	tmpl  *planTemplate
	tries int // executions planned in full without a template resulting
	skips int // executions planned by GMS since the last look, past maxLearn

	set intervalSet // reused per execution
}

// term is one disjunct: a closed interval between two placeholders (by
// name, without the colon), or a point when lo == hi.
type term struct{ lo, hi string }

// planTemplate is an analyzed plan whose lookup is replaced at every
// execution.
type planTemplate struct {
	root    sql.Node
	node    sql.TableNode // the lookup's table, pinned to the catalog version
	index   sql.Index
	typ     sql.Type // the lookup column's type
	reverse bool

	db       string
	sqlMode  any
	selLimit any
}

// NewPreparedSelect returns the PreparedSelect of a parsed statement, or
// nil when the statement does not have the shape described above.
func NewPreparedSelect(stmt sqlparser.Statement) *PreparedSelect {
	sel, ok := stmt.(*sqlparser.Select)
	if !ok || sel.With != nil || sel.Into != nil || sel.Lock != "" || sel.Having != nil ||
		len(sel.Window) > 0 || sel.Limit != nil || sel.QueryOpts.SQLCalcFoundRows ||
		sel.Where == nil || sel.Where.Type != sqlparser.WhereStr || len(sel.From) != 1 {
		return nil
	}
	from, ok := sel.From[0].(*sqlparser.AliasedTableExpr)
	if !ok || from.Hints != nil || from.AsOf != nil || from.Lateral || len(from.Partitions) > 0 {
		return nil
	}
	if _, ok := from.Expr.(sqlparser.TableName); !ok {
		return nil
	}
	p := &PreparedSelect{}
	if !p.predicate(sel.Where.Expr) {
		return nil
	}
	// Every placeholder is in the predicate, and nothing runs a query of
	// its own.
	args := 0
	simple := true
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *sqlparser.SQLVal:
			if n.Type == sqlparser.ValArg {
				args++
			}
		case *sqlparser.Subquery, *sqlparser.ExistsExpr:
			simple = false
		}
		return simple, nil
	}, stmt)
	if !simple || args != p.numArgs() {
		return nil
	}
	return p
}

// predicate reads the WHERE clause into p.terms.
func (p *PreparedSelect) predicate(e sqlparser.Expr) bool {
	switch e := e.(type) {
	case *sqlparser.ParenExpr:
		return p.predicate(e.Expr)
	case *sqlparser.OrExpr:
		return p.predicate(e.Left) && p.predicate(e.Right)
	case *sqlparser.ComparisonExpr:
		if e.Escape != nil {
			return false
		}
		switch e.Operator {
		case sqlparser.EqualStr:
			col, val := e.Left, e.Right
			if _, isCol := col.(*sqlparser.ColName); !isCol {
				col, val = val, col
			}
			name, ok := placeholder(val)
			if !ok || !p.column(col) {
				return false
			}
			p.terms = append(p.terms, term{name, name})
			return true
		case sqlparser.InStr:
			tuple, ok := e.Right.(sqlparser.ValTuple)
			if !ok || len(tuple) == 0 || !p.column(e.Left) {
				return false
			}
			for _, v := range tuple {
				name, ok := placeholder(v)
				if !ok {
					return false
				}
				p.terms = append(p.terms, term{name, name})
			}
			return true
		}
	case *sqlparser.RangeCond:
		if e.Operator != sqlparser.BetweenStr || !p.column(e.Left) {
			return false
		}
		lo, ok1 := placeholder(e.From)
		hi, ok2 := placeholder(e.To)
		if !ok1 || !ok2 {
			return false
		}
		p.terms = append(p.terms, term{lo, hi})
		return true
	}
	return false
}

// column reports whether e is the predicate's column, recording it the
// first time.
func (p *PreparedSelect) column(e sqlparser.Expr) bool {
	c, ok := e.(*sqlparser.ColName)
	if !ok || c.StoredProcVal != nil || !c.Qualifier.DbQualifier.IsEmpty() {
		return false
	}
	name, qual := c.Name.Lowered(), strings.ToLower(c.Qualifier.Name.String())
	if p.col == "" {
		p.col, p.qual = name, qual
		return true
	}
	return p.col == name && p.qual == qual
}

// placeholder returns the name of a ? or :name placeholder.
func placeholder(e sqlparser.Expr) (string, bool) {
	v, ok := e.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.ValArg {
		return "", false
	}
	return strings.TrimPrefix(string(v.Val), ":"), true
}

func (p *PreparedSelect) numArgs() int {
	n := 0
	for _, t := range p.terms {
		n++
		if t.hi != t.lo {
			n++
		}
	}
	return n
}

// Query runs the statement with args, the arguments by placeholder name
// ("v1", "v2", ... for ? placeholders): through the template when it fits,
// else planned by GMS (and kept as the template when it is one). bind
// returns the arguments as the engine's bindings; it is called only when
// GMS plans the execution.
func (p *PreparedSelect) Query(ctx *sql.Context, e *sqle.Engine, query string, parsed sqlparser.Statement, bind func() (map[string]sqlparser.Expr, error), args map[string]any) (schema sql.Schema, iter sql.RowIter, err error) {
	planned := func() (sql.Schema, sql.RowIter, error) {
		bindings, err := bind()
		if err != nil {
			return nil, nil, err
		}
		return Query(ctx, e, query, parsed, bindings)
	}
	if e.Analyzer.Catalog.MySQLDb.Enabled() || !planReuse(ctx) {
		return planned()
	}
	if t := p.tmpl; t != nil && !t.fits(ctx) {
		p.tmpl, p.tries = nil, 0
	}
	if t := p.tmpl; t != nil {
		lookup, ok := p.lookup(ctx, t, args)
		if !ok {
			return planned()
		}
		sql.IncrementStatusVariable(ctx, "Questions", 1)
		schema, iter, err = p.run(ctx, e, query, func() (sql.Node, error) {
			return t.with(ctx, lookup)
		})
		if !errors.Is(err, errStalePlan) {
			if sess, ok := ctx.Session.(*Session); ok && err == nil {
				sess.plansReused.Add(1)
			}
			return schema, iter, err
		}
		p.tmpl, p.tries = nil, 0 // planned afresh below, the same question
	} else {
		if p.tries >= maxLearn {
			if p.skips++; p.skips < relearnEvery {
				return planned()
			}
			p.skips = 0
		}
		sql.IncrementStatusVariable(ctx, "Questions", 1)
	}
	return p.run(ctx, e, query, func() (sql.Node, error) {
		bindings, err := bind()
		if err != nil {
			return nil, err
		}
		n, err := e.BoundQueryPlan(ctx, query, parsed, bindings)
		if err != nil {
			return nil, err
		}
		if t, fit := p.learn(ctx, n, args); t != nil {
			p.tmpl, p.tries = t, 0
		} else if fit {
			p.tries++
		}
		return n, nil
	})
}

// planReuse reports whether ctx's session reuses plans.
func planReuse(ctx *sql.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, planReuseVar)
	if err != nil {
		return true
	}
	on, err := sql.ConvertToBool(ctx, v)
	return err != nil || on
}

// run executes the plan build returns as GMS's QueryWithBindings would
// (the caller counts the statement in Questions): the session validated,
// the transaction begun, then the plan built, its iterators made and
// wrapped (commit of autocommit statements, process list, FOUND_ROWS).
func (p *PreparedSelect) run(ctx *sql.Context, e *sqle.Engine, query string, build func() (sql.Node, error)) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	if err := ctx.Session.ValidateSession(ctx); err != nil {
		return nil, nil, err
	}
	if ctx.GetTransaction() == nil {
		if ts, ok := ctx.Session.(sql.TransactionSession); ok {
			tx, err := ts.StartTransaction(ctx, sql.ReadWrite)
			if err != nil {
				return nil, nil, err
			}
			ctx.SetTransaction(tx)
		}
	}
	ctx.ClearWarnings() // the statement's own warnings only, as in GMS
	n, err := build()
	if err == nil {
		sql.IncrementStatusVariable(ctx, "Com_select", 1)
		if (e.IsReadOnly() || e.IsServerLocked) && !plan.IsReadOnly(n) {
			err = sql.ErrReadOnly.New()
		}
	}
	if err == nil {
		iter, err = e.Analyzer.ExecBuilder.Build(ctx, n, nil)
	}
	if err == nil {
		iter, schema, err = rowexec.FinalizeIters(ctx, n, nil, iter)
	}
	if err != nil {
		clearAutocommit(ctx)
		return nil, nil, err
	}
	if schema == nil {
		schema = n.Schema()
	}
	return schema, &guardedIter{RowIter: iter, query: query}, nil
}

// clearAutocommit drops the transaction of an autocommit statement that
// failed before it ran (the session rolls it back at the next statement).
func clearAutocommit(ctx *sql.Context) {
	if ctx.GetIgnoreAutoCommit() {
		return
	}
	if on, err := plan.IsSessionAutocommit(ctx); err == nil && on {
		ctx.SetTransaction(nil)
	}
}

// learn returns n as a template, or nil when it is not one (see the top of
// this file). fit is false when the arguments did not fit the column, or
// the transaction reads an older catalog: those say nothing of the plan of
// later executions.
func (p *PreparedSelect) learn(ctx *sql.Context, n sql.Node, args map[string]any) (t *planTemplate, fit bool) {
	// Odd arguments (NULL, a string, a value outside the column's type,
	// an empty interval) make GMS plan otherwise; they say nothing of the
	// plan for the others.
	if !p.argsFit(ctx, n, args) {
		return nil, false
	}
	var ita *plan.IndexedTableAccess
	ok := true
	transform.Inspect(n, func(c sql.Node) bool {
		switch c := c.(type) {
		case *plan.Project, *plan.GroupBy, *plan.Sort, *plan.Distinct, *plan.OrderedDistinct:
		case *plan.IndexedTableAccess:
			ok = ok && ita == nil && c.Typ == plan.ItaTypeStatic
			ita = c
			return false
		case nil:
		default:
			ok = false
		}
		return ok
	})
	if !ok || ita == nil {
		return nil, true
	}
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil || lookup.IsPointLookup || lookup.IsEmptyRange || lookup.IsSpatialLookup {
		return nil, true
	}
	ranges, isRanges := lookup.Ranges.(sql.MySQLRangeCollection)
	index, isOurs := lookup.Index.(*Index)
	tbl, isTable := ita.UnderlyingTable().(*Table)
	if !isRanges || len(ranges) == 0 || !isOurs || !isTable || tbl.planPinned {
		return nil, true
	}
	// The index begins with the predicate's column, an integer.
	col := index.t.schema[index.ix.cols[0]]
	if !strings.EqualFold(col.Name, p.col) || (p.qual != "" && p.qual != strings.ToLower(ita.Name())) {
		return nil, true
	}
	typ := ranges[0][0].Typ
	if typ == nil || !types.IsInteger(typ) || typ.Type() != col.Type.Type() {
		return nil, true
	}
	t = &planTemplate{
		index: lookup.Index, typ: typ, reverse: lookup.IsReverse,
		db: ctx.GetCurrentDatabase(),
	}
	t.sqlMode, _ = ctx.GetSessionVariable(ctx, "sql_mode")
	t.selLimit, _ = ctx.GetSessionVariable(ctx, "sql_select_limit")
	// GMS's lookup is the one built here.
	mine, built := p.lookup(ctx, t, args)
	if !built {
		return nil, false
	}
	if !sameRanges(ctx, typ, mine.Ranges.(sql.MySQLRangeCollection), ranges) {
		return nil, true
	}
	transform.InspectExpressions(n, func(x sql.Expression) bool {
		switch x := x.(type) {
		case *expression.GetField, *expression.Alias, *expression.Star,
			*aggregation.Sum, *aggregation.Count, *aggregation.Min, *aggregation.Max, *aggregation.Avg:
		case *expression.Literal:
			ok = ok && !equalsArg(x.Value(), args)
		default:
			ok = false
		}
		return ok
	})
	if !ok {
		return nil, true
	}
	// Pin the table to the catalog version this transaction reads.
	tx := txnOf(ctx)
	if tx == nil {
		return nil, true
	}
	version, current := tx.catalogVersion()
	if !current {
		return nil, false // an older snapshot's catalog: try again later
	}
	// The table node must hold the lookup's table itself: a wrapper (the
	// one that computes virtual columns) would be lost in the swap.
	rt, isRT := ita.TableNode.(*plan.ResolvedTable)
	if !isRT || tbl.store != tx.store {
		return nil, true
	}
	if _, direct := rt.WrappedTable().(*indexedTable); !direct {
		return nil, true
	}
	pinned := *tbl
	pinned.planPinned, pinned.planVersion = true, version
	node, err := rt.ReplaceTable(&pinned)
	if err != nil {
		return nil, true
	}
	t.node = node.(sql.TableNode)
	t.root = n
	return t, true
}

// argsFit reports whether args are integers within the type of the
// predicate's column in the table n reads, and no interval is empty.
func (p *PreparedSelect) argsFit(ctx *sql.Context, n sql.Node, args map[string]any) bool {
	var tbl *Table
	transform.Inspect(n, func(c sql.Node) bool {
		if tn, ok := c.(sql.TableNode); ok && tbl == nil {
			tbl, _ = tn.UnderlyingTable().(*Table)
		}
		return tbl == nil
	})
	if tbl == nil {
		return true // no table of ours: not a template either way
	}
	o := tbl.def.schema.IndexOfColName(p.col)
	if o < 0 {
		return true
	}
	typ := tbl.def.schema[o].Type
	for _, tm := range p.terms {
		lo, ok1 := intArg(args[tm.lo])
		hi, ok2 := intArg(args[tm.hi])
		if !ok1 || !ok2 || lo > hi {
			return false
		}
		if _, ok := fromInt64(ctx, typ, lo); !ok {
			return false
		}
		if _, ok := fromInt64(ctx, typ, hi); !ok {
			return false
		}
	}
	return true
}

// equalsArg reports whether v is a number equal to an argument (all
// integers by then).
func equalsArg(v any, args map[string]any) bool {
	x, ok := toFloat(v)
	if !ok {
		return false
	}
	for _, a := range args {
		if y, ok := toFloat(a); ok && x == y {
			return true
		}
	}
	return false
}

// fits reports whether the session is as it was when t was made.
func (t *planTemplate) fits(ctx *sql.Context) bool {
	if ctx.GetCurrentDatabase() != t.db {
		return false
	}
	mode, _ := ctx.GetSessionVariable(ctx, "sql_mode")
	limit, _ := ctx.GetSessionVariable(ctx, "sql_select_limit")
	return mode == t.sqlMode && limit == t.selLimit
}

// with returns the template's plan reading lookup.
func (t *planTemplate) with(ctx *sql.Context, lookup sql.IndexLookup) (sql.Node, error) {
	ita, err := plan.NewStaticIndexedAccessForTableNode(ctx, t.node, lookup)
	if err != nil {
		return nil, err
	}
	n, _, err := transform.Node(t.root, func(c sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if _, ok := c.(*plan.IndexedTableAccess); ok {
			return ita, transform.NewTree, nil
		}
		return c, transform.SameTree, nil
	})
	return n, err
}

// lookup builds the lookup of one execution, as search.go builds it from
// the same predicate with literals; ok is false when an argument is not an
// integer within the column's type or no interval is left.
func (p *PreparedSelect) lookup(ctx *sql.Context, t *planTemplate, args map[string]any) (sql.IndexLookup, bool) {
	set := p.set[:0]
	for _, tm := range p.terms {
		lo, ok1 := intArg(args[tm.lo])
		hi, ok2 := intArg(args[tm.hi])
		if !ok1 || !ok2 {
			return sql.IndexLookup{}, false
		}
		set = append(set, interval{lo, hi})
	}
	p.set = set
	set = set.normalize()
	if len(set) == 0 {
		return sql.IndexLookup{}, false
	}
	ranges := make(sql.MySQLRangeCollection, len(set))
	for i, iv := range set {
		lo, ok1 := fromInt64(ctx, t.typ, iv.lo)
		hi, ok2 := fromInt64(ctx, t.typ, iv.hi)
		if !ok1 || !ok2 {
			return sql.IndexLookup{}, false
		}
		ranges[i] = sql.MySQLRange{sql.ClosedRangeColumnExpr(lo, hi, t.typ)}
	}
	return sql.NewIndexLookup(t.index, ranges, false, false, false, t.reverse), true
}

// intArg returns an integer argument.
func intArg(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// sameRanges reports whether two single-column range collections are
// equal.
func sameRanges(ctx *sql.Context, typ sql.Type, a, b sql.MySQLRangeCollection) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != 1 || len(b[i]) != 1 {
			return false
		}
		x, y := a[i][0], b[i][0]
		if !sameCut(ctx, typ, x.LowerBound, y.LowerBound) || !sameCut(ctx, typ, x.UpperBound, y.UpperBound) {
			return false
		}
	}
	return true
}

func sameCut(ctx *sql.Context, typ sql.Type, a, b sql.MySQLRangeCut) bool {
	ka, ok1 := cutKey(a)
	kb, ok2 := cutKey(b)
	_, belowA := a.(sql.Below)
	_, belowB := b.(sql.Below)
	if !ok1 || !ok2 || belowA != belowB || ka == nil || kb == nil {
		return false
	}
	c, err := typ.Compare(ctx, ka, kb)
	return err == nil && c == 0
}
