package sqlstore

import (
	"errors"
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
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
//	                                 | c >= ? AND c < ?  (any of =, <, <=, >, >=)
//	                                 | <any of those> OR <any of those>
//	[GROUP BY ...] [ORDER BY ...] [LIMIT <constant>]
//
// where c is an integer column that begins an index, the arguments reach
// the analyzed plan only through the index lookup at its leaf. A
// PreparedSelect keeps the first such plan as a template, and later
// executions run it with a lookup built from their own arguments: sorted,
// duplicates dropped, overlapping intervals merged, as GMS builds it.
//
// A plan becomes a template only when it provably is one: nothing but
// projections, grouping, sorting, DISTINCT and a constant LIMIT over one static
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
// GMS, whose answer stays the reference), and leave every interval
// bounded on both sides (id > ? alone goes to GMS). With the privilege
// system on, as in the MySQL server, each execution on a template checks
// that the account may read the table (allowed), as GMS's binding would.

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
	nargs int    // the placeholders in the predicate
	tmpl  *planTemplate
	tries int // executions planned in full without a template resulting
	skips int // executions planned by GMS since the last look, past maxLearn
	// notText: a string argument met a column that is no character
	// column, whose string keys convert (stringtemplate.go).
	notText bool

	set  intervalSet // reused per execution
	iter *tableIter  // the last direct execution's, when closed
}

// term is one disjunct of the predicate: the conjunction of its bounds.
type term []bound

// bound compares the column with a placeholder (by name, without the
// colon): op is one of >=, >, <=, < (= is a >= and a <=).
type bound struct{ op, arg string }

// NewPreparedSelect returns the PreparedSelect of a parsed statement, or
// nil when the statement does not have the shape described above.
func NewPreparedSelect(stmt sqlparser.Statement) *PreparedSelect {
	sel, ok := stmt.(*sqlparser.Select)
	if !ok || sel.With != nil || sel.Into != nil || sel.Having != nil ||
		len(sel.Window) > 0 || sel.QueryOpts.SQLCalcFoundRows ||
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
	args, simple := placeholdersNoSubquery(stmt)
	if !simple || args != p.nargs {
		return nil
	}
	return p
}

// placeholdersNoSubquery counts the ? placeholders of stmt, and reports
// whether it holds no subquery (the walk stops at the first one).
func placeholdersNoSubquery(stmt sqlparser.SQLNode) (args int, simple bool) {
	simple = true
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
	return args, simple
}

// predicate reads the WHERE clause into p.terms: a disjunction of IN
// lists and conjunctions.
func (p *PreparedSelect) predicate(e sqlparser.Expr) bool {
	switch e := e.(type) {
	case *sqlparser.ParenExpr:
		return p.predicate(e.Expr)
	case *sqlparser.OrExpr:
		return p.predicate(e.Left) && p.predicate(e.Right)
	case *sqlparser.ComparisonExpr:
		if e.Operator == sqlparser.InStr {
			tuple, ok := e.Right.(sqlparser.ValTuple)
			if !ok || len(tuple) == 0 || e.Escape != nil || !p.column(e.Left) {
				return false
			}
			for _, v := range tuple {
				name, ok := placeholder(v)
				if !ok {
					return false
				}
				p.nargs++
				p.terms = append(p.terms, term{{">=", name}, {"<=", name}})
			}
			return true
		}
	}
	var t term
	if !p.conjunct(e, &t) {
		return false
	}
	p.terms = append(p.terms, t)
	return true
}

// conjunct adds to t the bounds of a conjunction of comparisons and
// BETWEENs of the column with placeholders.
func (p *PreparedSelect) conjunct(e sqlparser.Expr, t *term) bool {
	switch e := e.(type) {
	case *sqlparser.ParenExpr:
		return p.conjunct(e.Expr, t)
	case *sqlparser.AndExpr:
		return p.conjunct(e.Left, t) && p.conjunct(e.Right, t)
	case *sqlparser.ComparisonExpr:
		op, col, val := e.Operator, e.Left, e.Right
		if _, isCol := col.(*sqlparser.ColName); !isCol {
			op, col, val = flipped[op], val, col
		}
		name, ok := placeholder(val)
		if e.Escape != nil || !ok || !p.column(col) {
			return false
		}
		switch op {
		case "=":
			*t = append(*t, bound{">=", name}, bound{"<=", name})
		case ">", ">=", "<", "<=":
			*t = append(*t, bound{op, name})
		default:
			return false
		}
		p.nargs++
		return true
	case *sqlparser.RangeCond:
		if e.Operator != sqlparser.BetweenStr || !p.column(e.Left) {
			return false
		}
		lo, ok1 := placeholder(e.From)
		hi, ok2 := placeholder(e.To)
		if !ok1 || !ok2 {
			return false
		}
		p.nargs += 2
		*t = append(*t, bound{">=", lo}, bound{"<=", hi})
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
	if !planReuse(ctx) {
		return planned()
	}
	if t := p.tmpl; t != nil && !t.fits(ctx) {
		p.tmpl, p.tries = nil, 0
	}
	if t := p.tmpl; t != nil {
		if !allowed(ctx, e, t) {
			return planned() // and GMS's binding refuses it
		}
		lookup, ok := p.lookup(ctx, t, args)
		if !ok {
			return planned()
		}
		countStatus(ctx, statusQuestions)
		if t.direct() {
			schema, iter, err = p.runDirect(ctx, e, query, t, lookup)
		} else if ra := t.directAgg(); ra != nil {
			schema, iter, err = p.runDirectAgg(ctx, e, query, t, ra, lookup)
		} else {
			schema, iter, err = p.run(ctx, e, query, func() (sql.Node, error) {
				return t.with(ctx, lookup)
			})
		}
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
		countStatus(ctx, statusQuestions)
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
		if t, fit := p.learn(ctx, e.Analyzer.ExecBuilder, n, args); t != nil {
			p.tmpl, p.tries = t, 0
		} else if fit {
			p.tries++
		}
		return n, nil
	})
}

// allowed reports whether the session's account may read the template's
// table now. With the privilege system on (the MySQL server), GMS checks
// privileges when it binds a statement, which a reused plan skips: the
// check is made here at every execution instead, against the grants as
// they are now.
func allowed(ctx *sql.Context, e *sqle.Engine, t *planTemplate) bool {
	db := e.Analyzer.Catalog.MySQLDb
	if !db.Enabled() {
		return true
	}
	var dbName string
	if d := t.node.Database(); d != nil {
		dbName = d.Name()
	}
	return db.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(
		sql.PrivilegeCheckSubject{Database: dbName, Table: t.node.Name()}, sql.PrivilegeType_Select))
}

// planReuse reports whether ctx's session reuses plans.
func planReuse(ctx *sql.Context) bool {
	if sess, ok := ctx.Session.(*Session); ok {
		return sess.vars(ctx).planReuse
	}
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
	if err := startStatement(ctx); err != nil {
		return nil, nil, err
	}
	n, err := build()
	if err == nil {
		countStatus(ctx, statusComSelect)
		if (e.IsReadOnly() || e.IsServerLocked) && !plan.IsReadOnly(n) {
			err = sql.ErrReadOnly.New()
		}
	}
	if err == nil {
		iter, err = e.Analyzer.ExecBuilder.Build(ctx, n, nil)
	}
	if err == nil {
		iter, schema, err = rowexec.FinalizeIters(ctx, n, triggerFlags(n), iter)
	}
	if err != nil {
		clearAutocommit(ctx)
		return nil, nil, err
	}
	if schema == nil {
		schema = n.Schema()
	}
	return schema, &recoveringIter{RowIter: iter, query: query}, nil
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
