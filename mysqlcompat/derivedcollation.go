package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Collations derived for CONCAT and set operations
//
// MySQL gives CONCAT(s, '') and a UNION, INTERSECT or EXCEPT column of a
// string column and a literal the collation its coercibility rules derive:
// a column's (coercibility 2) wins over a literal's (4). GMS derives it
// for COLLATION() but types CONCAT LONGTEXT in the default collation
// (utf8mb4_0900_bin), and converts a set operation's column whose sides
// differ to that LONGTEXT as well. Grouping, DISTINCT and set operations
// hash and compare values by their type, so under utf8mb4_general_ci
// (PAD SPACE, case-insensitive) COUNT(DISTINCT CONCAT(s, '')) counted 'a'
// and 'A ' apart, and SELECT s ... UNION SELECT 'a' kept both.
//
// A value rule (textValues, install.go) gives such a CONCAT or CONCAT_WS, and both
// sides of such a set operation column, a derivedCollation: the same
// values, typed LONGTEXT in the derived collation.
//
// Targets GMS v0.20.0 (function/concat.go, concat_ws.go,
// planbuilder/set_op.go mergeSetOpSchemas). Without it,
// TestDerivedCollationSpec (testdata/derived_collation) fails.

// concatCollation types e, a CONCAT or CONCAT_WS, in the collation MySQL
// derives for it.
func concatCollation(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch x := e.(type) {
	case *derivedCollation:
		if inner, ok := x.child.(*derivedCollation); ok {
			return inner, transform.NewTree, nil // derived again: one is enough
		}
	case boundedConcat, boundedConcatWS, *function.Concat, *function.ConcatWithSeparator:
		coll, _ := sql.GetCoercibility(ctx, e)
		if !textIn(e.Type(), coll) {
			return &derivedCollation{child: e, typ: types.CreateLongText(coll)}, transform.NewTree, nil
		}
	}
	return e, transform.SameTree, nil
}

// textIn reports whether t is text in coll, or coll is no collation to
// type text in.
func textIn(t sql.Type, coll sql.CollationID) bool {
	st, ok := t.(sql.StringType)
	if !ok || types.IsBinaryType(t) {
		return true
	}
	if coll == sql.Collation_Unspecified || coll == sql.Collation_binary {
		return true
	}
	return st.Collation() == coll
}

// setOpCollations types the string columns of u that GMS converted to
// its default collation in the collation derived from the two sides.
func setOpCollations(ctx *sql.Context, u *plan.SetOp) (sql.Node, transform.TreeIdentity, error) {
	lp, ok1 := u.Left().(*plan.Project)
	rp, ok2 := u.Right().(*plan.Project)
	if !ok1 || !ok2 || len(lp.Projections) != len(rp.Projections) {
		return u, transform.SameTree, nil
	}
	var lexprs, rexprs []sql.Expression
	var err error
	for i := range lp.Projections {
		lcoll, lco, lconv, lok := sideColumn(ctx, lp, i)
		rcoll, rco, rconv, rok := sideColumn(ctx, rp, i)
		if !lok || !rok || !lconv && !rconv {
			continue // not text, or not converted by GMS
		}
		coll, _ := sql.ResolveCoercibility(lcoll, lco, rcoll, rco)
		if textIn(lp.Projections[i].Type(), coll) {
			continue
		}
		if lexprs == nil {
			lexprs = append([]sql.Expression(nil), lp.Projections...)
			rexprs = append([]sql.Expression(nil), rp.Projections...)
		}
		typ := types.CreateLongText(coll)
		if lexprs[i], err = retype(lexprs[i], typ); err != nil {
			return nil, transform.SameTree, err
		}
		if rexprs[i], err = retype(rexprs[i], typ); err != nil {
			return nil, transform.SameTree, err
		}
	}
	if lexprs == nil {
		return u, transform.SameTree, nil
	}
	l, err := lp.WithExpressions(lexprs...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	r, err := rp.WithExpressions(rexprs...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, err := u.WithChildren(l, r)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, transform.NewTree, nil
}

// sideColumn returns the collation and coercibility of column i of a
// set operation's side p, a projection, and whether GMS converted it to
// text (Alias(Convert(x))); ok is false when the column is not text. A
// converted column's are those of the expression under the conversion:
// the column of the projection p reads, when that is a projection too.
func sideColumn(ctx *sql.Context, p *plan.Project, i int) (coll sql.CollationID, co byte, converted, ok bool) {
	e := p.Projections[i]
	if !types.IsText(e.Type()) || types.IsBinaryType(e.Type()) {
		return 0, 0, false, false
	}
	if a, isAlias := e.(*expression.Alias); isAlias {
		e = a.Child
	}
	c, converted := e.(*expression.Convert)
	if !converted {
		coll, co = sql.GetCoercibility(ctx, e)
		return coll, co, false, true
	}
	src := c.Child
	if cp, isProject := p.Child.(*plan.Project); isProject && i < len(cp.Projections) {
		src = cp.Projections[i]
		if a, isAlias := src.(*expression.Alias); isAlias {
			src = a.Child
		}
	}
	coll, co = sql.GetCoercibility(ctx, src)
	return coll, co, true, true
}

// retype gives e the type typ, under its alias if it has one.
func retype(e sql.Expression, typ sql.StringType) (sql.Expression, error) {
	if a, ok := e.(*expression.Alias); ok {
		return a.WithChildren(&derivedCollation{child: a.Child, typ: typ})
	}
	return &derivedCollation{child: e, typ: typ}, nil
}

// derivedCollation is child's text typed in the collation MySQL derives
// for it.
type derivedCollation struct {
	child sql.Expression
	typ   sql.StringType
}

var (
	_ sql.Expression         = (*derivedCollation)(nil)
	_ sql.CollationCoercible = (*derivedCollation)(nil)
)

func (d *derivedCollation) Resolved() bool             { return d.child.Resolved() }
func (d *derivedCollation) IsNullable() bool           { return d.child.IsNullable() }
func (d *derivedCollation) Children() []sql.Expression { return []sql.Expression{d.child} }
func (d *derivedCollation) Type() sql.Type             { return d.typ }
func (d *derivedCollation) String() string             { return d.child.String() }
func (d *derivedCollation) DebugString() string        { return sql.DebugString(d.child) }

func (d *derivedCollation) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	_, co := sql.GetCoercibility(ctx, d.child)
	return d.typ.Collation(), co
}

func (d *derivedCollation) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &derivedCollation{child: children[0], typ: d.typ}, nil
}

// Eval implements sql.Expression: the child's value, already text.
func (d *derivedCollation) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	return d.child.Eval(ctx, row)
}
