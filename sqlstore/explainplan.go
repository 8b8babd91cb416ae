package sqlstore

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/mysqlcompat"
)

// The plan EXPLAIN describes
//
// An explainer walks the plan GMS analyzed for the statement, the plan
// that runs, and describes it twice over: as MySQL 8's iterator tree (an
// xop per operator, which FORMAT=TREE and EXPLAIN ANALYZE print) and as
// MySQL's selects and table accesses (an xSelect per SELECT, an xTable per
// table it reads, which the tabular and JSON forms print). Strata's own
// part is the table accesses: the index and key parts a lookup uses, the
// rows the planner's estimates give, and the access path that runs (the
// planner.Plan that the row iterator is given, as FORMAT=DEBUG and
// Strata_last_access show it).
//
// Estimates follow what Strata knows: a table's row count (exact once
// counted, else the engine's approximation), one row per point of a unique
// key, nonUniquePointRows per point of another index, the width of an
// integer range. Filters left above a table are guessed with MySQL's
// default selectivities for a condition without a histogram (10% for an
// equality, a third for an inequality, 11.11% for BETWEEN and LIKE).
// Costs are rows read times 0.1 (MySQL's row evaluation cost) plus 0.25
// per access: they order plans, they are not MySQL's cost model.

// xop is one operator of the iterator tree.
type xop struct {
	title string
	// node is the plan node whose row iterator EXPLAIN ANALYZE measures
	// for this operator; nil when there is none of its own.
	node  sql.Node
	rows  float64 // estimated rows per loop
	cost  float64
	noEst bool // MySQL prints no estimate on this line
	// uncounted: inside an expression's subquery, whose iterators GMS
	// builds without the measuring builder (explainanalyze.go).
	uncounted bool
	table     *xTable // the table access this operator is, if any
	boundary  bool    // a materialized select: its tables are not the parent's
	kids      []*xop
}

// xSelect is one SELECT of the statement, as MySQL numbers them.
type xSelect struct {
	id      int // 0 for a UNION RESULT
	typ     string
	tables  []*xTable
	members []*xSelect // of a UNION RESULT: the selects it merges
	subs    []*xSelect // subqueries of its expressions
	subKind []string   // per sub: "select_list_subqueries" or "attached_subqueries"
	cost    float64
	// temporary and filesort: the select groups, deduplicates or sorts.
	temporary, filesort, grouping bool
	dependent                     bool
	noRow                         bool    // a UNION ALL's result: not a row of the tabular form
	insert                        *xTable // the destination of INSERT ... SELECT
}

// xTable is one table access.
type xTable struct {
	name         string
	selectType   string // overrides its select's (INSERT's destination)
	typ          string // const, eq_ref, ref, range, index, ALL; "" for none
	def          *tableDef
	ix           *indexDef
	parts        int // key parts used
	keyLen       string
	possibleKeys []string
	ref          []string // what a ref or eq_ref lookup compares the key with
	rows         int64
	filtered     float64
	cond         []string // conditions applied to its rows
	refCols      map[string]bool
	covering     bool
	hashJoin     bool
	strata       string
	impossible   bool
	cols         []string
	derived      *xSelect // a derived table's select
	update       bool
	delete       bool
	cost         float64
}

type explainer struct {
	ctx     *sql.Context
	selects []*xSelect
	// inSubquery counts the expression subqueries being described.
	inSubquery int
}

func newExplainer(ctx *sql.Context) *explainer { return &explainer{ctx: ctx} }

func (x *explainer) newSelect(typ string) *xSelect {
	s := &xSelect{id: len(x.selects) + 1, typ: typ}
	for _, o := range x.selects {
		if o.id >= s.id {
			s.id = o.id + 1
		}
	}
	x.selects = append(x.selects, s)
	return s
}

// describe returns the operator tree of a statement's plan, filling
// x.selects; the first select is the statement's.
func (x *explainer) describe(n sql.Node) *xop {
	top := x.newSelect("")
	op := x.walk(n, top, "")
	if top.cost == 0 { // a UNION's first member has its own
		top.cost = op.cost
	}
	if top.typ == "" {
		top.typ = "SIMPLE"
		if len(x.selects) > 1 {
			top.typ = "PRIMARY"
		}
	}
	for _, s := range x.selects {
		for _, t := range s.tables {
			x.finishTable(t)
		}
		if s.insert != nil {
			x.finishTable(s.insert)
		}
	}
	return op
}

// walk describes n, part of select sel; alias names the table n reads
// when a TableAlias above it gave one.
func (x *explainer) walk(n sql.Node, sel *xSelect, alias string) *xop {
	switch n := n.(type) {
	case *quotaNode:
		return x.walk(n.child, sel, alias)
	case interface{ Wrapped() sql.Node }:
		// A node that only watches the one inside it (mysqlcompat's
		// insert-row counter).
		return x.walk(n.Wrapped(), sel, alias)
	case *plan.Project:
		op := x.walk(n.Child, sel, alias)
		x.subqueries(n.Projections, sel, op, "select_list_subqueries", "projection")
		return op
	case *plan.TableAlias:
		return x.walk(n.Child, sel, n.Name())
	case *plan.Filter, *plan.Having:
		var cond sql.Expression
		var child sql.Node
		if f, ok := n.(*plan.Filter); ok {
			cond, child = f.Expression, f.Child
		} else {
			h := n.(*plan.Having)
			cond, child = h.Cond, h.Child
		}
		in := x.walk(child, sel, alias)
		f := selectivity(cond)
		if _, ok := n.(*plan.Filter); ok {
			if t := lastTable(in); t != nil {
				t.cond = append(t.cond, exprText(cond))
				addRefCols(t, cond)
				t.filtered *= f
			}
		}
		op := &xop{title: "Filter: " + exprText(cond), node: n, rows: in.rows * f, cost: in.cost, kids: []*xop{in}}
		x.subqueries([]sql.Expression{cond}, sel, op, "attached_subqueries", "condition")
		return op
	case *plan.Limit:
		in := x.walk(n.Child, sel, alias)
		lim, _ := constInt(n.Limit)
		title := fmt.Sprintf("Limit: %s row(s)", exprText(n.Limit))
		if off, ok := n.Child.(*plan.Offset); ok {
			title = fmt.Sprintf("Limit/Offset: %s/%s row(s)", exprText(n.Limit), exprText(off.Offset))
			in = in.kids[0]
		}
		rows := in.rows
		if lim >= 0 && float64(lim) < rows {
			rows = float64(lim)
		}
		return &xop{title: title, node: n, rows: rows, cost: in.cost, kids: []*xop{in}}
	case *plan.Offset:
		in := x.walk(n.Child, sel, alias)
		return &xop{title: fmt.Sprintf("Offset: %s row(s)", exprText(n.Offset)), node: n, rows: in.rows, cost: in.cost, kids: []*xop{in}}
	case *plan.TopN:
		in := x.walk(n.Child, sel, alias)
		sel.filesort = true
		lim, _ := constInt(n.Limit)
		rows := in.rows
		if lim >= 0 && float64(lim) < rows {
			rows = float64(lim)
		}
		return &xop{title: fmt.Sprintf("Sort: %s, limit input to %s row(s) per chunk", sortText(n.Fields), exprText(n.Limit)), node: n, rows: rows, cost: in.cost + in.rows*0.1, kids: []*xop{in}}
	case *plan.Sort:
		in := x.walk(n.Child, sel, alias)
		sel.filesort = true
		return &xop{title: "Sort: " + sortText(n.SortFields), node: n, rows: in.rows, cost: in.cost + in.rows*0.1, kids: []*xop{in}}
	case *plan.GroupBy:
		in := x.walk(n.Child, sel, alias)
		if len(n.GroupByExprs) == 0 {
			op := &xop{title: "Aggregate: " + exprList(n.SelectedExprs, true), node: n, rows: 1, cost: in.cost + in.rows*0.1, kids: []*xop{in}}
			x.subqueries(n.SelectedExprs, sel, op, "select_list_subqueries", "projection")
			return op
		}
		sel.temporary, sel.grouping = true, true
		agg := &xop{title: "Aggregate using temporary table", noEst: true, uncounted: true, kids: []*xop{in}}
		x.subqueries(n.SelectedExprs, sel, agg, "select_list_subqueries", "projection")
		return &xop{title: "Table scan on <temporary>", node: n, rows: in.rows, cost: in.cost + in.rows*0.1, kids: []*xop{agg}}
	case *plan.Distinct, *plan.OrderedDistinct:
		in := x.walk(n.Children()[0], sel, alias)
		sel.temporary = true
		dedup := &xop{title: "Temporary table with deduplication", noEst: true, uncounted: true, kids: []*xop{in}}
		return &xop{title: "Table scan on <temporary>", node: n, rows: in.rows, cost: in.cost + in.rows*0.1, kids: []*xop{dedup}}
	case *plan.Window:
		in := x.walk(n.Child, sel, alias)
		sel.temporary = true
		var windows []string
		for _, e := range n.SelectExprs {
			if s := exprText(e); containsFold(s, " over ") {
				windows = append(windows, strings.ToLower(s))
			}
		}
		return &xop{title: "Window aggregate: " + strings.Join(windows, ", "), node: n, rows: in.rows, cost: in.cost + in.rows*0.1, kids: []*xop{in}}
	case *plan.JoinNode:
		return x.join(n, sel)
	case *plan.HashLookup:
		in := x.walk(n.Child, sel, alias)
		return &xop{title: "Hash", node: n, rows: in.rows, cost: in.cost, noEst: true, kids: []*xop{in}}
	case *plan.SubqueryAlias:
		d := x.newSelect("DERIVED")
		in := x.walk(n.Child, d, "")
		d.cost = in.cost
		t := &xTable{name: fmt.Sprintf("<derived%d>", d.id), typ: "ALL", rows: int64(math.Ceil(in.rows)), filtered: 100, derived: d}
		t.cost = 0.25 + in.rows*0.1
		sel.tables = append(sel.tables, t)
		mat := &xop{title: "Materialize", noEst: true, uncounted: true, boundary: true, kids: []*xop{in}}
		return &xop{title: "Table scan on " + n.Name(), node: n, rows: in.rows, cost: in.cost + t.cost, table: t, kids: []*xop{mat}}
	case *plan.SetOp:
		return x.setOp(n, sel)
	case *plan.ResolvedTable:
		if plan.IsDualTable(n) {
			return &xop{title: "Rows fetched before execution", node: n, rows: 1}
		}
		return x.scan(n, sel, alias)
	case *plan.IndexedTableAccess:
		return x.lookup(n, sel, alias)
	case *plan.EmptyTable:
		return &xop{title: "Zero rows (Impossible WHERE)", node: n}
	case *plan.Update:
		if sel.typ == "" {
			sel.typ = "UPDATE"
		}
		in := x.walk(n.Child, sel, alias)
		for _, t := range sel.tables {
			t.update = true
		}
		return &xop{title: "Update " + targetNames(sel), node: n, rows: in.rows, cost: in.cost, noEst: true, kids: []*xop{in}}
	case *plan.UpdateSource:
		return x.walk(n.Child, sel, alias)
	case *plan.DeleteFrom:
		if sel.typ == "" {
			sel.typ = "DELETE"
		}
		in := x.walk(n.Child, sel, alias)
		for _, t := range sel.tables {
			t.delete = true
		}
		return &xop{title: "Delete from " + targetNames(sel), node: n, rows: in.rows, cost: in.cost, noEst: true, kids: []*xop{in}}
	case *plan.InsertInto:
		name := tableName(n.Destination)
		sel.insert = &xTable{name: name, selectType: "INSERT", typ: "ALL"}
		if name == "" {
			sel.insert = nil
		}
		verb := "Insert into "
		if n.IsReplace {
			verb = "Replace into "
		}
		in := x.walk(n.Source, sel, "")
		return &xop{title: verb + name, node: n, rows: in.rows, cost: in.cost, noEst: true, kids: []*xop{in}}
	case *plan.Values:
		return &xop{title: "Rows fetched before execution", rows: float64(len(n.ExpressionTuples)), noEst: true}
	}
	// Anything else: its name as GMS prints it, and its children.
	title := strings.SplitN(n.String(), "\n", 2)[0]
	op := &xop{title: strings.TrimSpace(title), node: n, noEst: true}
	for _, c := range n.Children() {
		k := x.walk(c, sel, "")
		op.rows += k.rows
		op.cost += k.cost
		op.kids = append(op.kids, k)
	}
	return op
}

// targetNames names the tables an UPDATE or DELETE reads.
func targetNames(sel *xSelect) string {
	names := make([]string, 0, len(sel.tables))
	for _, t := range sel.tables {
		names = append(names, t.name)
	}
	return strings.Join(names, ", ")
}

// tableName is the name of the table a plan node reads or writes.
func tableName(n sql.Node) string {
	var name string
	transform.Inspect(n, func(n sql.Node) bool {
		if name != "" {
			return false
		}
		if nm, ok := n.(sql.Nameable); ok {
			switch n.(type) {
			case *plan.ResolvedTable, *plan.TableAlias, *plan.IndexedTableAccess:
				name = nm.Name()
				return false
			}
		}
		return true
	})
	return name
}

// lastTable is the last table access, in join order, of op's select.
func lastTable(op *xop) *xTable {
	if op.table != nil {
		return op.table
	}
	if op.boundary {
		return nil
	}
	for i := len(op.kids) - 1; i >= 0; i-- {
		if t := lastTable(op.kids[i]); t != nil {
			return t
		}
	}
	return nil
}

func (x *explainer) join(j *plan.JoinNode, sel *xSelect) *xop {
	left := x.walk(j.Left(), sel, "")
	right := x.walk(j.Right(), sel, "")
	op := &xop{node: j, kids: []*xop{left, right}}
	cond := ""
	if j.Filter != nil {
		cond = exprText(j.Filter)
		if strings.HasPrefix(cond, "(") && strings.HasSuffix(cond, ")") {
			cond = cond[1 : len(cond)-1]
		}
	}
	inner := lastTable(right)
	kind := "inner join"
	switch {
	case j.Op.IsSemi():
		kind = "semijoin"
	case j.Op.IsAnti():
		kind = "antijoin"
	case j.Op.IsLeftOuter():
		kind = "left join"
	case j.Op.IsFullOuter():
		kind = "full outer join"
	}
	switch {
	case j.Op.IsHash():
		switch kind {
		case "inner join":
			op.title = "Inner hash join"
		case "left join":
			op.title = "Left hash join"
		case "semijoin":
			op.title = "Hash semijoin"
		case "antijoin":
			op.title = "Hash antijoin"
		}
		if cond != "" {
			op.title += " (" + cond + ")"
		}
		if inner != nil {
			inner.hashJoin = true
			if j.Filter != nil {
				inner.cond = append(inner.cond, cond)
				addRefCols(inner, j.Filter)
				inner.filtered *= selectivity(j.Filter)
			}
		}
		op.rows = left.rows * right.rows * selectivity(j.Filter)
		op.cost = left.cost + right.cost + op.rows*0.1
	case j.Op.IsMerge():
		op.title = "Merge " + kind
		if cond != "" {
			op.title += " (" + cond + ")"
		}
		op.rows = left.rows * right.rows * selectivity(j.Filter)
		op.cost = left.cost + right.cost + op.rows*0.1
	default:
		op.title = "Nested loop " + kind
		if j.Op.IsRange() {
			op.title = "Range heap " + kind
		}
		if inner != nil && j.Filter != nil {
			addRefCols(inner, j.Filter)
			if !j.Op.IsLookup() {
				inner.cond = append(inner.cond, cond)
				inner.filtered *= selectivity(j.Filter)
			}
		}
		f := 1.0
		if !j.Op.IsLookup() {
			f = selectivity(j.Filter)
		}
		op.rows = left.rows * right.rows * f
		op.cost = left.cost + left.rows*right.cost
	}
	if j.Op.IsSemi() || j.Op.IsAnti() {
		op.rows = left.rows
	} else if j.Op.IsLeftOuter() && op.rows < left.rows {
		op.rows = left.rows
	}
	return op
}

// setOp describes a UNION, INTERSECT or EXCEPT: its members are selects of
// their own, after sel (which takes the first) and before the UNION RESULT.
func (x *explainer) setOp(n *plan.SetOp, sel *xSelect) *xop {
	var members []sql.Node
	var flatten func(n sql.Node)
	flatten = func(m sql.Node) {
		if s, ok := m.(*plan.SetOp); ok && s.SetOpType == n.SetOpType && s.Distinct == n.Distinct && s.Limit == nil && len(s.SortFields) == 0 {
			flatten(s.Left())
			flatten(s.Right())
			return
		}
		members = append(members, m)
	}
	flatten(n.Left())
	flatten(n.Right())
	verb := [...]string{"Union", "Intersect", "Except"}[min(max(n.SetOpType, 0), 2)]
	result := &xSelect{typ: strings.ToUpper(verb) + " RESULT"}
	var ids []string
	var kids []*xop
	var rows, cost float64
	for i, m := range members {
		s := sel
		if i == 0 {
			if sel.typ == "" {
				sel.typ = "PRIMARY"
			}
		} else {
			s = x.newSelect("UNION")
			if x.inSubquery > 0 {
				s.typ = "UNION"
			}
		}
		op := x.walk(m, s, "")
		s.cost = op.cost
		ids = append(ids, fmt.Sprint(s.id))
		result.members = append(result.members, s)
		rows += op.rows
		cost += op.cost
		if !n.Distinct && n.SetOpType == plan.UnionType {
			op = &xop{title: "Stream results", rows: op.rows, cost: op.cost, noEst: true, uncounted: true, kids: []*xop{op}}
		}
		kids = append(kids, op)
	}
	t := &xTable{name: "<" + strings.ToLower(verb) + strings.Join(ids, ",") + ">", typ: "ALL", filtered: -1}
	result.tables = []*xTable{t}
	x.selects = append(x.selects, result)
	if !n.Distinct && n.SetOpType == plan.UnionType {
		// UNION ALL streams its members: MySQL 8 shows no UNION RESULT
		// row for it, and no temporary table.
		result.noRow = true
		return &xop{title: "Append", node: n, rows: rows, cost: cost, noEst: true, kids: kids}
	}
	result.temporary = true
	mat := &xop{title: verb + " materialize with deduplication", noEst: true, uncounted: true, boundary: true, kids: kids}
	return &xop{title: "Table scan on <" + strings.ToLower(verb) + " temporary>", node: n, rows: rows, cost: cost + rows*0.1, kids: []*xop{mat}}
}

// subqueries describes the subqueries in exprs as selects of their own,
// and their operators as children of op.
func (x *explainer) subqueries(exprs []sql.Expression, sel *xSelect, op *xop, kind, where string) {
	for _, e := range exprs {
		if e == nil {
			continue
		}
		transform.InspectExpr(e, func(e sql.Expression) bool {
			sq, ok := e.(*plan.Subquery)
			if !ok {
				return false
			}
			dep := !sq.Correlated().Empty()
			typ := "SUBQUERY"
			if dep {
				typ = "DEPENDENT SUBQUERY"
			}
			s := x.newSelect(typ)
			s.dependent = dep
			x.inSubquery++
			in := x.walk(sq.Query, s, "")
			x.inSubquery--
			markUncounted(in)
			s.cost = in.cost
			sel.subs = append(sel.subs, s)
			sel.subKind = append(sel.subKind, kind)
			how := "run only once"
			if dep {
				how = "dependent"
			}
			op.kids = append(op.kids, &xop{title: fmt.Sprintf("Select #%d (subquery in %s; %s)", s.id, where, how), noEst: true, uncounted: true, boundary: true, kids: []*xop{in}})
			return true
		})
	}
}

func markUncounted(op *xop) {
	op.uncounted = true
	for _, k := range op.kids {
		markUncounted(k)
	}
}

// scan describes a full table scan.
func (x *explainer) scan(n *plan.ResolvedTable, sel *xSelect, alias string) *xop {
	name := alias
	if name == "" {
		name = n.Name()
	}
	t := &xTable{name: name, typ: "ALL", filtered: 100}
	sel.tables = append(sel.tables, t)
	op := &xop{title: "Table scan on " + name, node: n, table: t}
	tbl := strataTable(n.Table)
	if tbl == nil {
		// Another provider's table (information_schema, a table
		// function): no estimate.
		t.rows = 1
		op.rows, op.cost = 1, 0.35
		t.cost = op.cost
		return op
	}
	t.def = tbl.def
	t.cols = projectedColumns(tbl)
	t.rows = x.tableRows(tbl)
	t.strata = tbl.store.planScan(tbl.def, tbl.store.accessOptions(x.ctx), tbl.store.readerMutable(x.ctx, !tbl.readsCurrent)).String()
	op.rows = float64(t.rows)
	op.cost = 0.25 + op.rows*0.1
	t.cost = op.cost
	op.title += "; Strata: " + t.strata
	return op
}

// strataTable is the table of this package under t's wrappers, or nil.
func strataTable(t sql.Table) *Table {
	for t != nil {
		switch tt := t.(type) {
		case *Table:
			return tt
		case *explainedScan:
			return tt.Table
		case *indexedTable:
			return tt.Table
		case sql.TableWrapper:
			t = tt.Underlying()
		default:
			return nil
		}
	}
	return nil
}

func projectedColumns(t *Table) []string {
	var cols []string
	if t.proj == nil {
		for _, c := range t.def.schema {
			cols = append(cols, c.Name)
		}
		return cols
	}
	for _, o := range t.proj {
		cols = append(cols, t.def.schema[o].Name)
	}
	return cols
}

// tableRows is the planner's row count of a table: exact once counted,
// else the engine's approximation.
func (x *explainer) tableRows(t *Table) int64 {
	if !t.store.counters.hasEstimate(t.def.id) {
		_ = t.approximateCount()
	}
	rows, _, known := t.store.counters.estimate(t.def.id)
	if !known {
		return 1
	}
	return max(rows, 1)
}

// lookup describes an index lookup: static (its ranges known when the
// statement is planned) or a lookup join's probe, one per outer row.
func (x *explainer) lookup(n *plan.IndexedTableAccess, sel *xSelect, alias string) *xop {
	name := n.Name()
	if alias != "" {
		name = alias
	}
	t := &xTable{name: name, filtered: 100}
	sel.tables = append(sel.tables, t)
	op := &xop{node: n, table: t}
	it := indexedOf(n.Table)
	if it == nil {
		t.typ = "ref"
		op.title = "Index lookup on " + name
		op.rows, op.cost, t.rows = 1, 0.35, 1
		return op
	}
	t.def = it.def
	t.cols = projectedColumns(it.Table)
	keys := n.Expressions()
	probe := len(keys) > 0
	lp, err := it.plan(x.ctx, it.lookup, probe)
	if err != nil {
		t.typ = "ref"
		op.title = "Index lookup on " + name + " (" + err.Error() + ")"
		return op
	}
	ix := lp.ix
	t.ix = ix
	p := lp.choose(it.mutable)
	t.covering = p.Covering
	t.strata = p.String()
	if probe {
		t.strata += " per outer row"
	}
	total := x.tableRows(it.Table)
	colName := func(i int) string { return it.def.schema[ix.cols[i]].Name }
	var rows int64
	for i := range lp.spans {
		sp := &lp.spans[i]
		r := spanRows(x.ctx, it.def, ix, sp, total)
		if r == 0 {
			if eb := lp.access.ranges[i].EstBytes; eb > 0 {
				_, bytes, _ := it.store.counters.estimate(it.def.id)
				if bytes > 0 {
					r = max(1, eb*total/bytes)
				}
			}
		}
		if r == 0 {
			r = max(1, total/3)
		}
		rows += r
	}
	rows = min(rows, total)
	unique := ix.primary || ix.unique
	covering := ""
	if t.covering {
		covering = "covering "
	}
	capital := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	switch {
	case probe:
		t.parts = len(keys)
		for _, k := range keys {
			t.ref = append(t.ref, x.refText(k))
		}
		var eqs []string
		for i, k := range keys {
			if i < len(ix.cols) {
				eqs = append(eqs, colName(i)+"="+exprText(k))
			}
		}
		if unique && t.parts >= len(ix.cols) {
			t.typ = "eq_ref"
			rows = 1
			op.title = fmt.Sprintf("Single-row %sindex lookup on %s using %s (%s)", covering, name, ix.name, strings.Join(eqs, ", "))
		} else {
			t.typ = "ref"
			rows = min(max(total, 1), nonUniquePointRows)
			op.title = capital(fmt.Sprintf("%sindex lookup on %s using %s (%s)", covering, name, ix.name, strings.Join(eqs, ", ")))
		}
	case len(lp.spans) == 0:
		t.typ, t.impossible = "", true
		rows = 0
		op.title = "Zero rows (Impossible WHERE)"
	default:
		allPoints := true
		for i := range lp.spans {
			sp := &lp.spans[i]
			used := spanParts(sp, len(ix.cols))
			t.parts = max(t.parts, used)
			if !sp.point {
				allPoints = false
			}
		}
		sp := &lp.spans[0]
		switch {
		case len(lp.spans) == 1 && sp.whole:
			t.typ, t.parts = "index", len(ix.cols)
			op.title = capital(fmt.Sprintf("%sindex scan on %s using %s", covering, name, ix.name))
			if lp.reverse {
				op.title += " (reverse)"
			}
		case len(lp.spans) == 1 && allPoints && unique:
			t.typ = "const"
			t.ref = repeatConst(t.parts)
			op.title = fmt.Sprintf("Single-row %sindex lookup on %s using %s (%s)", covering, name, ix.name, strings.ReplaceAll(rangeText(sp, it.def, ix), " = ", "="))
		case len(lp.spans) == 1 && (sp.point || sp.rangeCol > 0 && spanParts(sp, len(ix.cols)) == sp.rangeCol):
			t.typ = "ref"
			t.ref = repeatConst(t.parts)
			op.title = capital(fmt.Sprintf("%sindex lookup on %s using %s (%s)", covering, name, ix.name, strings.ReplaceAll(rangeText(sp, it.def, ix), " = ", "=")))
		default:
			t.typ = "range"
			texts := make([]string, 0, min(len(lp.spans), 11))
			for i := range lp.spans {
				if i == 10 {
					texts = append(texts, fmt.Sprintf("... %d more", len(lp.spans)-10))
					break
				}
				texts = append(texts, "("+rangeText(&lp.spans[i], it.def, ix)+")")
			}
			op.title = capital(fmt.Sprintf("%sindex range scan on %s using %s over %s", covering, name, ix.name, strings.Join(texts, " OR ")))
			if lp.reverse {
				op.title += " (reverse)"
			}
		}
	}
	for i := 0; i < t.parts && i < len(ix.cols) && t.typ != "index"; i++ {
		if t.refCols == nil {
			t.refCols = map[string]bool{}
		}
		t.refCols[strings.ToLower(colName(i))] = true
	}
	t.rows = rows
	op.rows = float64(rows)
	op.cost = 0.25 + op.rows*0.1
	t.cost = op.cost
	op.title += "; Strata: " + t.strata
	return op
}

func repeatConst(n int) []string {
	r := make([]string, n)
	for i := range r {
		r[i] = "const"
	}
	return r
}

// indexedOf is the indexedTable under t's wrappers, or nil.
func indexedOf(t sql.Table) *indexedTable {
	for t != nil {
		switch tt := t.(type) {
		case *indexedTable:
			return tt
		case sql.TableWrapper:
			t = tt.Underlying()
		default:
			return nil
		}
	}
	return nil
}

// spanParts is the number of key parts a span bounds: every column of a
// point, else the columns up to the first that is not a point, and that
// one too when its range bounds it.
func spanParts(sp *span, cols int) int {
	switch {
	case sp.whole:
		return 0
	case sp.point || sp.rangeCol < 0:
		return cols
	case sp.rng != nil && sp.rangeCol < len(sp.rng) && unbounded(sp.rng[sp.rangeCol]):
		return sp.rangeCol
	}
	return sp.rangeCol + 1
}

func unbounded(c sql.MySQLRangeColumnExpr) bool {
	_, lo := c.LowerBound.(sql.BelowNull)
	_, hi := c.UpperBound.(sql.AboveAll)
	return lo && hi
}

// rangeText prints a span's conditions as MySQL's tree does:
// "id = 7", "10 <= id <= 20", "k = 5 AND 3 < id".
func rangeText(sp *span, d *tableDef, ix *indexDef) string {
	if sp.rng == nil {
		return "..."
	}
	var parts []string
	for i, c := range sp.rng {
		if i >= len(ix.cols) {
			break
		}
		name := d.schema[ix.cols[i]].Name
		if unbounded(c) {
			break
		}
		lo, loOK := cutText(c.LowerBound, true)
		hi, hiOK := cutText(c.UpperBound, false)
		if b, ok := c.LowerBound.(sql.Below); ok {
			if a, ok := c.UpperBound.(sql.Above); ok && fmt.Sprint(b.Key) == fmt.Sprint(a.Key) {
				parts = append(parts, name+" = "+valueText(b.Key))
				continue
			}
		}
		if _, ok := c.LowerBound.(sql.BelowNull); ok {
			if _, ok := c.UpperBound.(sql.AboveNull); ok {
				parts = append(parts, name+" IS NULL")
				continue
			}
		}
		switch {
		case loOK && hiOK:
			parts = append(parts, lo+" "+name+" "+hi)
		case loOK:
			parts = append(parts, lo+" "+name)
		case hiOK:
			parts = append(parts, name+" "+hi)
		default:
			parts = append(parts, name+" IS NOT NULL")
		}
		if i == sp.rangeCol {
			break
		}
	}
	return strings.Join(parts, " AND ")
}

// cutText prints one bound: lower bounds as "v <" or "v <=", upper ones
// as "< v" or "<= v"; ok is false for an open end.
func cutText(c sql.MySQLRangeCut, lower bool) (string, bool) {
	switch c := c.(type) {
	case sql.Below:
		if lower {
			return valueText(c.Key) + " <=", true
		}
		return "< " + valueText(c.Key), true
	case sql.Above:
		if lower {
			return valueText(c.Key) + " <", true
		}
		return "<= " + valueText(c.Key), true
	}
	return "", false
}

func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return "'" + strings.ReplaceAll(string(v), "'", "''") + "'"
	}
	return fmt.Sprint(v)
}

// finishTable completes a table access once the whole plan is seen: the
// indexes it could use (those whose first column its conditions or its
// lookup name) and its key length.
func (x *explainer) finishTable(t *xTable) {
	if t.def == nil {
		return
	}
	all := append([]*indexDef{t.def.primary}, t.def.secondary...)
	var possible []string
	for _, ix := range all {
		if ix == nil || len(ix.cols) == 0 {
			continue
		}
		if ix == t.ix || t.refCols[strings.ToLower(t.def.schema[ix.cols[0]].Name)] {
			possible = append(possible, ix.name)
		}
	}
	if t.typ == "index" && t.ix != nil && !t.refCols[strings.ToLower(t.def.schema[t.ix.cols[0]].Name)] {
		// A full index scan (for its order) is not a possible key.
		possible = slicesDelete(possible, t.ix.name)
	}
	t.possibleKeys = possible
	if t.ix != nil && t.parts > 0 {
		n := 0
		for i := 0; i < t.parts && i < len(t.ix.cols); i++ {
			var prefix uint16
			if t.ix.prefix != nil {
				prefix = t.ix.prefix[i]
			}
			n += keyLen(t.def.schema[t.ix.cols[i]], prefix)
		}
		t.keyLen = fmt.Sprint(n)
	}
}

func slicesDelete(s []string, v string) []string {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// keyLen is the bytes MySQL counts for a key part of column c (prefix: a
// prefix length in characters, 0 for the whole value): the column's
// storage size in the index, one more for a nullable column, two more for
// a variable-length one.
func keyLen(c *sql.Column, prefix uint16) int {
	n := 0
	if c.Nullable {
		n = 1
	}
	t := c.Type
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8, sqltypes.Year:
		n++
	case sqltypes.Int16, sqltypes.Uint16:
		n += 2
	case sqltypes.Int24, sqltypes.Uint24, sqltypes.Date:
		n += 3
	case sqltypes.Int32, sqltypes.Uint32, sqltypes.Float32:
		n += 4
	case sqltypes.Int64, sqltypes.Uint64, sqltypes.Float64:
		n += 8
	case sqltypes.Datetime:
		n += 5 + fspBytes(t)
	case sqltypes.Timestamp:
		n += 4 + fspBytes(t)
	case sqltypes.Time:
		n += 3 + fspBytes(t)
	case sqltypes.Decimal:
		if dt, ok := t.(sql.DecimalType); ok {
			n += decimalBytes(int(dt.Precision()), int(dt.Scale()))
		}
	case sqltypes.Enum:
		if et, ok := t.(sql.EnumType); ok && et.NumberOfElements() > 255 {
			n += 2
		} else {
			n++
		}
	case sqltypes.Set:
		if st, ok := t.(sql.SetType); ok {
			b := (st.NumberOfElements() + 7) / 8
			if b > 4 {
				b = 8
			}
			n += int(b)
		} else {
			n++
		}
	case sqltypes.Bit:
		if bt, ok := t.(types.BitType); ok {
			n += (int(bt.NumberOfBits()) + 7) / 8
		} else {
			n++
		}
	default:
		st, ok := t.(sql.StringType)
		if !ok {
			return n + 8
		}
		chars := st.MaxCharacterLength()
		if prefix > 0 {
			chars = int64(prefix)
		}
		per := int64(1)
		if !types.IsBinaryType(t) {
			per = int64(st.Collation().CharacterSet().MaxLength())
		}
		n += int(chars * per)
		if t.Type() != sqltypes.Char && t.Type() != sqltypes.Binary || prefix > 0 {
			n += 2
		}
	}
	return n
}

func fspBytes(t sql.Type) int {
	if dt, ok := t.(sql.DatetimeType); ok {
		return (dt.Precision() + 1) / 2
	}
	return 0
}

// decimalBytes is MySQL's packed DECIMAL size: four bytes per nine digits
// on each side of the point, fewer for the rest.
func decimalBytes(precision, scale int) int {
	dig := [...]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}
	intg := precision - scale
	return intg/9*4 + dig[intg%9] + scale/9*4 + dig[scale%9]
}

// refText prints what a lookup join's key compares with: a column as
// db.table.column, anything else as "func".
func (x *explainer) refText(e sql.Expression) string {
	if gf, ok := e.(*expression.GetField); ok {
		db := gf.Database()
		if db == "" {
			db = x.ctx.GetCurrentDatabase()
		}
		if db != "" {
			return db + "." + gf.Table() + "." + gf.Name()
		}
		return gf.Table() + "." + gf.Name()
	}
	if _, ok := e.(*expression.Literal); ok {
		return "const"
	}
	return "func"
}

// addRefCols notes the columns of t that cond compares as they are (not
// inside a function), for possible_keys.
func addRefCols(t *xTable, cond sql.Expression) {
	if cond == nil {
		return
	}
	note := func(e sql.Expression) {
		if gf, ok := e.(*expression.GetField); ok && strings.EqualFold(gf.Table(), t.name) {
			if t.refCols == nil {
				t.refCols = map[string]bool{}
			}
			t.refCols[strings.ToLower(gf.Name())] = true
		}
	}
	transform.InspectExpr(cond, func(e sql.Expression) bool {
		switch e.(type) {
		case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.Between, *expression.InTuple,
			*expression.IsNull, *expression.Like:
			for _, c := range e.Children() {
				note(c)
			}
		}
		return false
	})
}

// selectivity guesses the share of rows a condition keeps, with MySQL's
// defaults for a condition without a histogram.
func selectivity(e sql.Expression) float64 {
	switch e := e.(type) {
	case nil:
		return 1
	case *expression.And:
		// The bounds mysqlcompat puts beside a LIKE count as the LIKE.
		conj := expression.SplitConjunction(e)
		sel := 1.0
		for _, c := range conj {
			if !likeBound(c, conj) {
				sel *= selectivity(c)
			}
		}
		return sel
	case *expression.Or:
		return min(1, selectivity(e.LeftChild)+selectivity(e.RightChild))
	case *expression.Equals, *expression.NullSafeEquals:
		return 0.1
	case *expression.LessThan, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.GreaterThanOrEqual:
		return 1.0 / 3
	case *expression.Between, *expression.Like:
		return 1.0 / 9
	case *expression.InTuple:
		if t, ok := e.Right().(expression.Tuple); ok {
			return min(1, 0.1*float64(len(t)))
		}
		return 0.5
	case *expression.Not:
		return 1 - selectivity(e.Child)
	}
	if _, ok := mysqlcompat.KeptLike(e); ok {
		return 1.0 / 9
	}
	return 1
}

// likeBound reports whether c is a bound mysqlcompat put beside a LIKE
// among conj (mysqlcompat.LikeBounds).
func likeBound(c sql.Expression, conj []sql.Expression) bool {
	for _, l := range conj {
		lo, hi := mysqlcompat.LikeBounds(l)
		// Analysis rebuilds the comparisons; they print the same.
		if (lo != nil && c.String() == lo.String()) || (hi != nil && c.String() == hi.String()) {
			return true
		}
	}
	return false
}

// exprText prints an expression as GMS does, without its types.
func exprText(e sql.Expression) string {
	if e == nil {
		return ""
	}
	return e.String()
}

func exprList(es []sql.Expression, aggregatesOnly bool) string {
	var parts []string
	for _, e := range es {
		if aggregatesOnly {
			if _, ok := e.(sql.Aggregation); !ok {
				if _, ok := e.(*expression.Alias); !ok {
					continue
				}
			}
		}
		parts = append(parts, strings.ToLower(exprText(e)))
	}
	return strings.Join(parts, ", ")
}

func sortText(fields sql.SortFields) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = exprText(f.Column)
		if f.Order == sql.Descending {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

// constInt is a LIMIT's value (intLiteral's, one past the int64 range
// taken as its largest); -1 when it is not a constant.
func constInt(e sql.Expression) (int64, bool) {
	if v, ok := intLiteral(e); ok {
		return v, true
	}
	if l, ok := e.(*expression.Literal); ok {
		if _, ok := l.Value().(uint64); ok {
			return math.MaxInt64, true
		}
	}
	return -1, false
}

// comparableNode reports whether n can be a map key: plan nodes are pointers,
// but a few are slices.
func comparableNode(n sql.Node) bool {
	return n != nil && reflect.TypeOf(n).Kind() == reflect.Pointer
}
