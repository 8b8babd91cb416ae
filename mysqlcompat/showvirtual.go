package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// SHOW of a table with virtual columns
//
// (The rule is virtualTables, in virtualchecks.go, which also gives such
// tables' INSERTs and UPDATEs their CHECK constraints.)
//
// GMS's binder reads a table with a VIRTUAL generated column through a
// wrapper that computes those columns (plan.VirtualColumnTable), and asks
// the wrapper, not the table, for what SHOW CREATE TABLE, SHOW INDEX and
// SHOW COLUMNS print: its indexes, CHECK constraints, primary key order,
// foreign keys, comment and AUTO_INCREMENT. The wrapper has none of them,
// so the table's secondary indexes and the rest were missing from all
// three, and from every dump (mariadb-dump writes SHOW CREATE TABLE), which
// then recreated the table without them. showVirtualTables gives those
// statements the table itself, which their iterators read nothing from but
// its definition, with the indexes, CHECK constraints and primary key GMS
// would have found on it.

// showVirtualTables is virtualTables' part for SHOW (virtualchecks.go).
func showVirtualTables(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	switch s := n.(type) {
	case *plan.ShowCreateTable:
		if s.IsView {
			return n, transform.SameTree, nil
		}
		rt, t := unwrapVirtual(s.Child)
		if rt == nil {
			return n, transform.SameTree, nil
		}
		nn, err := s.WithChildren(rt)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if nn, err = nn.(*plan.ShowCreateTable).WithTargetSchema(virtualKeyword(nn.(*plan.ShowCreateTable).TargetSchema())); err != nil {
			return nil, transform.SameTree, err
		}
		sc := nn.(*plan.ShowCreateTable)
		if sc.Indexes, err = shownIndexes(ctx, t); err != nil {
			return nil, transform.SameTree, err
		}
		if pk, ok := t.(sql.PrimaryKeyTable); ok {
			sc.PrimaryKeySchema = pk.PrimaryKeySchema()
		}
		if ct, ok := t.(sql.CheckTable); ok {
			defs, err := ct.GetChecks(ctx)
			if err != nil {
				return nil, transform.SameTree, err
			}
			checks := make(sql.CheckConstraints, len(defs))
			for i, d := range defs {
				// Printed, never evaluated: an expression that prints the
				// definition's text as GMS prints a bound one.
				checks[i] = &sql.CheckConstraint{Name: d.Name, Expr: expression.NewUnresolvedColumn(quoteColumns(d.CheckExpression)), Enforced: d.Enforced}
			}
			nn = sc.WithChecks(checks)
		}
		return nn, transform.NewTree, nil
	case *plan.ShowIndexes:
		rt, t := unwrapVirtual(s.Child)
		if rt == nil {
			return n, transform.SameTree, nil
		}
		idx, err := shownIndexes(ctx, t)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return &plan.ShowIndexes{UnaryNode: plan.UnaryNode{Child: rt}, IndexesToShow: idx}, transform.NewTree, nil
	case *plan.Filter: // SHOW COLUMNS ... LIKE
		if sc, ok := s.Child.(*plan.ShowColumns); ok {
			c, same, err := showVirtualTables(ctx, nil, sc, nil, nil, nil)
			if err != nil || same == transform.SameTree {
				return n, transform.SameTree, err
			}
			return plan.NewFilter(s.Expression, c), transform.NewTree, nil
		}
	case *plan.ShowColumns:
		rt, t := unwrapVirtual(s.Child)
		if rt == nil {
			return n, transform.SameTree, nil
		}
		nn, err := s.WithChildren(rt)
		if err != nil {
			return nil, transform.SameTree, err
		}
		sc := nn.(*plan.ShowColumns)
		if sc.Indexes, err = shownIndexes(ctx, t); err != nil {
			return nil, transform.SameTree, err
		}
		return sc, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// unwrapVirtual returns n, a table read through GMS's virtual-column
// wrapper, with the table itself in the wrapper's place, and the table; or
// nil for any other n.
func unwrapVirtual(n sql.Node) (*plan.ResolvedTable, sql.Table) {
	rt, ok := n.(*plan.ResolvedTable)
	if !ok {
		return nil, nil
	}
	t := virtualUnderlying(rt.Table)
	if t == nil {
		return nil, nil
	}
	nrt := *rt
	nrt.Table = t
	return &nrt, t
}

// shownIndexes returns t's indexes but those GMS generates itself, as the
// binder lists them for a table it reads directly.
func shownIndexes(ctx *sql.Context, t sql.Table) ([]sql.Index, error) {
	it, ok := t.(sql.IndexAddressableTable)
	if !ok {
		return nil, nil
	}
	all, err := it.GetIndexes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sql.Index, 0, len(all))
	for _, idx := range all {
		if !idx.IsGenerated() {
			out = append(out, idx)
		}
	}
	return out, nil
}

// quoteColumns returns the expression text, as a CHECK definition keeps it
// (GMS's printing of the expression, columns bare), with its column names
// in backticks, as GMS prints the expression it binds for a table it reads
// directly; or the text as it is, if it does not parse.
func quoteColumns(text string) string {
	st, err := ast.Parse("SELECT " + text)
	sel, _ := st.(*ast.Select)
	if err != nil || sel == nil || len(sel.SelectExprs) != 1 {
		return text
	}
	ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return text
	}
	buf := ast.NewTrackedBuffer(func(buf *ast.TrackedBuffer, node ast.SQLNode) {
		if c, ok := node.(*ast.ColName); ok && c.Qualifier.IsEmpty() {
			buf.Myprintf("%s", "`"+strings.ReplaceAll(c.Name.String(), "`", "``")+"`")
			return
		}
		node.Format(buf)
	})
	buf.Myprintf("%v", ae.Expr)
	return buf.String()
}

// virtualKeyword returns sch with its VIRTUAL generated columns printed by
// SHOW CREATE TABLE as MySQL prints them, `GENERATED ALWAYS AS (expr)
// VIRTUAL`: GMS writes the keyword STORED for the others and nothing for
// these. Their generated expression is one that prints so, and is never
// evaluated (the statement prints the definition only).
func virtualKeyword(sch sql.Schema) sql.Schema {
	out := make(sql.Schema, len(sch))
	for i, c := range sch {
		out[i] = c
		if c.Generated == nil || !c.Virtual {
			continue
		}
		g := *c.Generated
		g.Expr = printedAs{Expression: c.Generated.Expr, text: c.Generated.String() + " VIRTUAL"}
		g.Literal = true // printed as its expression, without parentheses
		col := *c
		col.Generated = &g
		out[i] = &col
	}
	return out
}

// printedAs is an expression that prints as text.
type printedAs struct {
	sql.Expression
	text string
}

func (p printedAs) String() string { return p.text }
