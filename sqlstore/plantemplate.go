package sqlstore

import (
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Plan templates: how a PreparedSelect (prepared.go) recognises a plan it
// may reuse, and how it runs that plan with another execution's lookup.

// planTemplate is an analyzed plan whose lookup is replaced at every
// execution.
type planTemplate struct {
	root    sql.Node
	node    sql.TableNode // the lookup's table, pinned to the catalog version
	index   sql.Index
	typ     sql.Type // the lookup column's type
	reverse bool

	// table is node's table, and schema root's, for a template that runs
	// on a tableIter (templateiter.go); table is nil for the others.
	table  *Table
	schema sql.Schema

	db       string
	sqlMode  any
	selLimit any

	// str: the lookup's argument is a string (stringtemplate.go), coll
	// the connection's collation it was learned under.
	str  bool
	coll sql.CollationID
}

// learn returns n as a template, or nil when it is not one (see the top of
// this file). fit is false when the arguments did not fit the column, or
// the transaction reads an older catalog: those say nothing of the plan of
// later executions. exec is the engine's builder of row iterators, for the
// operators a template replaces (sorttemplate.go).
func (p *PreparedSelect) learn(ctx *sql.Context, exec sql.NodeExecBuilder, n sql.Node, args map[string]any) (t *planTemplate, fit bool) {
	// Odd arguments (NULL, a string, a value outside the column's type,
	// an empty interval) make GMS plan otherwise; they say nothing of the
	// plan for the others.
	str, isStr := p.stringPoint(args)
	if isStr && !p.textColumn(n) {
		return nil, false
	}
	if !isStr && !p.argsFit(ctx, n, args) {
		return nil, false
	}
	var ita *plan.IndexedTableAccess
	ok := true
	transform.Inspect(n, func(c sql.Node) bool {
		switch c := c.(type) {
		case *plan.Project, *plan.GroupBy, *plan.Sort, *plan.Distinct, *plan.OrderedDistinct, *plan.Limit, *plan.TopN, *quotaNode:
		case *plan.IndexedTableAccess:
			ok = ok && ita == nil && c.Typ == plan.ItaTypeStatic
			ita = c
			return false
		case nil:
		default:
			_, ok = mysqlcompat.DistinctInput(c)
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
	// The index begins with the predicate's column, an integer (or a
	// character column, for a string argument).
	col := index.t.schema[index.ix.cols[0]]
	if !strings.EqualFold(col.Name, p.col) || (p.qual != "" && p.qual != strings.ToLower(ita.Name())) {
		return nil, true
	}
	typ := ranges[0][0].Typ
	// GMS's ranges of a string column are of its promoted type (LONGTEXT
	// of its collation).
	if typ == nil || !(!isStr && types.IsInteger(typ) && typ.Type() == col.Type.Type() ||
		isStr && textKey(col.Type) && sameLiteralType(typ, col.Type.Promote())) {
		return nil, true
	}
	t = &planTemplate{
		index: lookup.Index, typ: typ, reverse: lookup.IsReverse,
		db: ctx.GetCurrentDatabase(), str: isStr,
	}
	if isStr {
		t.coll = ctx.GetCollation()
	}
	t.sqlMode, _ = ctx.GetSessionVariable(ctx, "sql_mode")
	t.selLimit, _ = ctx.GetSessionVariable(ctx, "sql_select_limit")
	// GMS's lookup is the one built here.
	mine, built := p.lookup(ctx, t, args)
	if !built {
		return nil, false
	}
	var myRanges sql.MySQLRangeCollection
	if isStr {
		myRanges = mine.Ranges.(sql.MySQLRangeCollection)
	} else {
		myRanges, built = mine.Ranges.(*intervalRanges).mysql()
	}
	if !built || !sameRanges(ctx, typ, myRanges, ranges) {
		return nil, true
	}
	transform.InspectExpressions(n, func(x sql.Expression) bool {
		switch x := x.(type) {
		case *expression.GetField, *expression.Alias, *expression.Star,
			*aggregation.Sum, *aggregation.Count, *aggregation.Min, *aggregation.Max, *aggregation.Avg, *quotaAgg:
		case *expression.Literal:
			ok = ok && !equalsArg(x.Value(), args) && (!isStr || x.Value() != any(str))
		default:
			_, keyed := mysqlcompat.KeyedColumn(x)
			ok = ok && (keyed || mysqlcompat.IsExactAggregate(x))
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
	t.trimProject(ita, rt, &pinned)
	t.root = aggregateByColumns(sortByKeys(t.root, exec))
	if t.root == sql.Node(ita) {
		if rt, ok := t.node.(*plan.ResolvedTable); ok {
			t.table, _ = rt.Table.(*Table)
			t.schema = t.node.Schema()
		}
	} else if ra, ok := t.root.(*rangeAgg); ok && ra.in[0] == sql.Node(ita) {
		// An aggregate over the access alone runs on an aggIter
		// (aggdirect.go), which reads the table as a direct template does.
		if rt, ok := t.node.(*plan.ResolvedTable); ok {
			t.table, _ = rt.Table.(*Table)
			t.schema = ra.Schema()
		}
	}
	return t, true
}

// trimProject drops a Project that only picks columns of the table access
// below it, when the table can be read projected to exactly those columns:
// GMS projects the table to the columns of the whole query, including the
// ones only the lookup used (the id of WHERE id BETWEEN ...), and then
// copies each row into a new one without them. The table read with the
// Project's columns returns the Project's rows itself, with the same
// schema, which is checked.
func (t *planTemplate) trimProject(ita *plan.IndexedTableAccess, rt *plan.ResolvedTable, tbl *Table) {
	pr, ok := t.root.(*plan.Project)
	if !ok || pr.Child != ita {
		return
	}
	child := ita.Schema()
	names := make([]string, 0, len(pr.Projections))
	seen := make(map[int]bool, len(pr.Projections))
	for _, x := range pr.Projections {
		gf, ok := x.(*expression.GetField)
		if !ok || gf.Index() < 0 || gf.Index() >= len(child) || seen[gf.Index()] {
			return
		}
		seen[gf.Index()] = true
		names = append(names, child[gf.Index()].Name)
	}
	trimmed, ok := tbl.WithProjections(names).(*Table)
	if !ok || trimmed.proj == nil {
		return
	}
	node, err := rt.ReplaceTable(trimmed)
	if err != nil || !sameColumns(pr.Schema(), node.Schema()) {
		return
	}
	t.node, t.root = node.(sql.TableNode), ita
}

// sameColumns reports whether two schemas describe the same result
// columns: names as written, sources, types and nullability.
func sameColumns(a, b sql.Schema) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || !strings.EqualFold(x.Source, y.Source) || x.Nullable != y.Nullable || !x.Type.Equals(y.Type) {
			return false
		}
	}
	return true
}

// argsFit reports whether args leave intervals that the type of the
// predicate's column in the table n reads can hold.
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
	set, ok := p.intervals(args)
	if !ok {
		return false
	}
	typ := tbl.def.schema[o].Type
	for _, iv := range set {
		if !intFits(ctx, typ, iv.lo) || !intFits(ctx, typ, iv.hi) {
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
	var mode, limit any
	if sess, ok := ctx.Session.(*Session); ok {
		v := sess.vars(ctx)
		mode, limit = v.sqlMode, v.selLimit
	} else {
		mode, _ = ctx.GetSessionVariable(ctx, "sql_mode")
		limit, _ = ctx.GetSessionVariable(ctx, "sql_select_limit")
	}
	return mode == t.sqlMode && limit == t.selLimit && (!t.str || ctx.GetCollation() == t.coll)
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

// intervals returns the values the predicate allows with args: sorted,
// disjoint closed intervals, as search.go makes them from the same
// predicate with literals. ok is false when an argument is not an integer,
// no interval is left, or one is unbounded on a side. The set is scratch
// memory of p, valid until the next call.
func (p *PreparedSelect) intervals(args map[string]any) (set intervalSet, ok bool) {
	set = p.set[:0]
	for _, t := range p.terms {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		empty := false
		for _, b := range t {
			v, ok := intArg(args[b.arg])
			if !ok {
				return nil, false
			}
			switch b.op {
			case ">=":
				lo = max(lo, v)
			case ">":
				if v == math.MaxInt64 {
					// Empty for a signed column, but not for a BIGINT
					// UNSIGNED one, whose values above it no interval
					// of int64s holds: GMS answers.
					return nil, false
				}
				lo = max(lo, v+1)
			case "<=":
				hi = min(hi, v)
			case "<":
				empty = empty || v == math.MinInt64
				hi = min(hi, v-1)
			}
		}
		if !empty {
			set = append(set, interval{lo, hi})
		}
	}
	p.set = set
	set = set.normalize()
	return set, len(set) > 0 && set.bounded()
}

// lookup builds the lookup of one execution; ok is false when the
// arguments leave no intervals the column's type holds (see intervals).
func (p *PreparedSelect) lookup(ctx *sql.Context, t *planTemplate, args map[string]any) (sql.IndexLookup, bool) {
	if t.str {
		s, ok := p.stringPoint(args)
		if !ok {
			return sql.IndexLookup{}, false
		}
		return p.stringLookup(ctx, t, s)
	}
	set, ok := p.intervals(args)
	if !ok {
		return sql.IndexLookup{}, false
	}
	// The bounds must fit the column's type, as GMS's ranges would.
	for _, iv := range set {
		if !intFits(ctx, t.typ, iv.lo) || !intFits(ctx, t.typ, iv.hi) {
			return sql.IndexLookup{}, false
		}
	}
	ranges := newIntervalRanges(ctx, t.typ, set, t.reverse)
	return sql.IndexLookup{Index: t.index, Ranges: ranges, IsReverse: t.reverse}, true
}

// intFits reports whether the integer type typ holds v, as fromInt64
// (GMS's Convert) would say, without converting: Convert boxes its result,
// two allocations per bound of every execution.
func intFits(ctx *sql.Context, typ sql.Type, v int64) bool {
	if lo, hi, ok := codec.IntRange(typ); ok {
		return lo <= v && v <= hi
	}
	_, ok := fromInt64(ctx, typ, v)
	return ok
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
