package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// ORDER BY a selected expression over DISTINCT
//
// SELECT DISTINCT s IS NULL FROM f ORDER BY 1 sorts the rows of the
// DISTINCT, which hold only what the SELECT list computes; GMS's sort
// recomputes s IS NULL there from f.s, which those rows do not have, and
// failed with 1105 "unable to find field with index 2 in row of 1
// columns" (an alias, ORDER BY k, was right: GMS reads the column). MySQL
// sorts by the selected column. sortSelected makes each sort field over a
// DISTINCT's SELECT list that is one of its expressions (the same alias,
// as GMS resolves ORDER BY 1 and ORDER BY s IS NULL) read that column.
//
// Targets GMS v0.20.0 (planbuilder's ORDER BY of a DISTINCT projection).
// Without it, TestPlanningSpec/distinct_order fails.
func sortSelected(n sql.Node) (sql.Node, bool) {
	var fields sql.SortFields
	var child sql.Node
	switch x := n.(type) {
	case *plan.Sort:
		fields, child = x.SortFields, x.Child
	case *plan.TopN:
		fields, child = x.Fields, x.Child
	default:
		return n, false
	}
	var proj *plan.Project
	switch c := child.(type) {
	case *plan.Distinct:
		proj, _ = c.Child.(*plan.Project)
	case *plan.OrderedDistinct:
		proj, _ = c.Child.(*plan.Project)
	case *keyDistinct:
		proj, _ = c.child.(*plan.Project)
	}
	if proj == nil {
		return n, false
	}
	sch := proj.Schema()
	var out sql.SortFields
	for i, f := range fields {
		a, ok := f.Column.(*expression.Alias)
		if !ok {
			continue
		}
		j := selected(proj.Projections, a)
		if j < 0 {
			continue
		}
		if out == nil {
			out = append(sql.SortFields(nil), fields...)
		}
		gf := expression.NewGetField(j, sch[j].Type, sch[j].Name, sch[j].Nullable)
		out[i].Column, out[i].Column2 = gf, gf
	}
	if out == nil {
		return n, false
	}
	switch x := n.(type) {
	case *plan.Sort:
		return plan.NewSort(out, x.Child), true
	default:
		nt := *x.(*plan.TopN)
		nt.Fields = out
		return &nt, true
	}
}

// selected returns the position of the SELECT list's expression that a
// is, or -1: an alias of the same id, or of the same name and expression.
func selected(projections []sql.Expression, a *expression.Alias) int {
	for j, p := range projections {
		pa, ok := p.(*expression.Alias)
		if !ok {
			continue
		}
		if a.Id() != 0 && pa.Id() == a.Id() {
			return j
		}
		if strings.EqualFold(pa.Name(), a.Name()) && sameExpr(pa.Child, a.Child) {
			return j
		}
	}
	return -1
}

// sameExpr reports whether a and b print the same, exec indexes aside.
func sameExpr(a, b sql.Expression) bool {
	return a.String() == b.String()
}
