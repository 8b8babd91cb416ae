package mysqlcompat

import (
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// Set operations over exact aggregates
//
// GMS matches the column types of the two sides of a UNION (INTERSECT,
// EXCEPT) when it builds the plan, while every SUM and AVG is still DOUBLE;
// then it analyzes each side on its own, exactAggregates included, and
// checks that the sides still match. A side whose SUM became DECIMAL(32,0)
// no longer matches a side whose SUM of a float stayed DOUBLE, or one whose
// SUM of a DECIMAL(10,2) became DECIMAL(32,2). mergeSetOpTypes runs after
// the sides are analyzed (GMS's finalizeUnions), before the check (the
// validation batch): in AfterJoinsRule, at the end of the once-after batch.
// It converts both sides of such a column to the type MySQL gives it:
//
//	DECIMAL and DECIMAL   DECIMAL wide enough for the integer digits and
//	                      the scale of both
//	DECIMAL and integer   the same, the integer counted by its digits
//	DECIMAL and float     DOUBLE
//
// Columns of other types that differ are left for GMS to report.
//
// Sides GMS converted
//
// Where the sides' types differ when GMS builds the plan, it converts both
// to a type of its choosing, which for numbers is not MySQL's and loses
// values: DOUBLE and an integer became LONGTEXT (numbers reached clients as
// text), a signed integer and BIGINT UNSIGNED became BIGINT (values past
// 2^63-1 were clamped), and DOUBLE and DECIMAL became DECIMAL(65,30)
// (doubles past 10^35 did not fit). For a column of two numeric sides that
// GMS converted so, mergeSetOpTypes converts the sides' own values to
// MySQL's type instead: DOUBLE when either is a float, DECIMAL(20,0) for
// BIGINT and BIGINT UNSIGNED (MySQL's promotion), and the wider signed
// integer for the others (see unionIntType).
//
// Targets GMS v0.20.0. Without it, TestUnionNumberTypes fails.

// mergeSetOpTypesRule is mergeSetOpTypes as a rule.
func mergeSetOpTypesRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return mergeSetOpTypes(n, qFlags)
}

// mergeSetOpTypes converts the sides of each set operation in n whose
// columns differ as a DECIMAL differs from an integer, a float or another
// DECIMAL to the column's merged type.
func mergeSetOpTypes(n sql.Node, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !hasSetOp(n) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		u, ok := n.(*plan.SetOp)
		if !ok {
			return n, transform.SameTree, nil
		}
		same := transform.SameTree
		if nu, ok := mergeConverted(u); ok {
			u, same = nu, transform.NewTree
		}
		if qFlags != nil && !qFlags.IsSet(sql.QFlagAggregation) && !qFlags.IsSet(sql.QFlagAnyAgg) {
			return u, same, nil
		}
		ls, rs := u.Left().Schema(), u.Right().Schema()
		if len(ls) != len(rs) {
			return n, transform.SameTree, nil
		}
		merged := make([]sql.Type, len(ls))
		differ := false
		for i := range ls {
			if reflect.DeepEqual(ls[i].Type, rs[i].Type) {
				continue
			}
			if merged[i] = mergedType(ls[i].Type, rs[i].Type); merged[i] != nil {
				differ = true
			}
		}
		if !differ {
			return u, same, nil
		}
		nu, err := u.WithChildren(convertColumns(u.Left(), merged), convertColumns(u.Right(), merged))
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nu, transform.NewTree, nil
	})
}

// hasSetOp reports whether n holds a set operation.
func hasSetOp(n sql.Node) bool {
	return planHolds(n, func(n sql.Node) bool {
		_, ok := n.(*plan.SetOp)
		return ok
	})
}

// mergeConverted returns u with the columns GMS converted to a type that
// is not MySQL's (see the top of this file) converted to MySQL's instead.
func mergeConverted(u *plan.SetOp) (*plan.SetOp, bool) {
	lp, lok := u.Left().(*plan.Project)
	rp, rok := u.Right().(*plan.Project)
	if !lok || !rok || len(lp.Projections) != len(rp.Projections) {
		return nil, false
	}
	var lexprs, rexprs []sql.Expression
	for i := range lp.Projections {
		lv, lconv := convertedColumn(lp.Projections[i])
		rv, rconv := convertedColumn(rp.Projections[i])
		if !lconv && !rconv {
			continue
		}
		t := unionNumberType(lv.Type(), rv.Type(), lp.Projections[i].Type())
		if t == nil {
			continue
		}
		if lexprs == nil {
			lexprs = append([]sql.Expression(nil), lp.Projections...)
			rexprs = append([]sql.Expression(nil), rp.Projections...)
		}
		lexprs[i] = convertedTo(lp.Projections[i], lv, t)
		rexprs[i] = convertedTo(rp.Projections[i], rv, t)
	}
	if lexprs == nil {
		return nil, false
	}
	nl, err := lp.WithExpressions(lexprs...)
	if err != nil {
		return nil, false
	}
	nr, err := rp.WithExpressions(rexprs...)
	if err != nil {
		return nil, false
	}
	nu, err := u.WithChildren(nl, nr)
	if err != nil {
		return nil, false
	}
	return nu.(*plan.SetOp), true
}

// convertedColumn returns the value under a set operation side's
// projection e, and whether GMS converted it there (an alias of a CONVERT;
// a side already of the target type is left an alias of the value).
func convertedColumn(e sql.Expression) (sql.Expression, bool) {
	a, ok := e.(*expression.Alias)
	if !ok {
		return e, false
	}
	if c, ok := a.Child.(*expression.Convert); ok {
		return c.Child, true
	}
	return a.Child, false
}

// convertedTo returns projection e, of value v, converting v to t instead,
// under e's name and column id.
func convertedTo(e, v sql.Expression, t sql.Type) sql.Expression {
	conv := &toType{UnaryExpression: expression.UnaryExpression{Child: v}, typ: t}
	if a, ok := e.(*expression.Alias); ok {
		na := *a
		na.Child = conv
		return &na
	}
	if gf, ok := e.(*expression.GetField); ok {
		return expression.NewAlias(gf.Name(), conv).WithId(gf.Id())
	}
	return expression.NewAlias(e.String(), conv)
}

// unionNumberType returns MySQL's type for a set operation's column of
// numeric sides l and r, which GMS converted to gms, when gms loses values
// that MySQL's keeps; nil otherwise.
func unionNumberType(l, r, gms sql.Type) sql.Type {
	if !types.IsNumber(l) || !types.IsNumber(r) {
		return nil
	}
	if types.IsFloat(l) || types.IsFloat(r) {
		if types.IsFloat(gms) {
			return nil
		}
		return types.Float64
	}
	if types.IsText(gms) || types.IsDecimal(gms) && !types.IsDecimal(l) && !types.IsDecimal(r) {
		if types.IsDecimal(l) || types.IsDecimal(r) {
			return mergedType(l, r)
		}
		return unionIntType(l, r)
	}
	if types.IsInteger(gms) && (l.Type() == sqltypes.Uint64 || r.Type() == sqltypes.Uint64) {
		return unionIntType(l, r)
	}
	return nil
}

// unionIntType is MySQL's type for a column of integer sides: the wider of
// two signed or two unsigned integers; for a signed and an unsigned one,
// the signed one if it is wider, else the signed type twice as wide as the
// unsigned one, and DECIMAL(20,0) past BIGINT.
func unionIntType(l, r sql.Type) sql.Type {
	lb, lu, lok := intBits(l)
	rb, ru, rok := intBits(r)
	if !lok || !rok {
		return nil
	}
	if lu == ru {
		if lb < rb {
			return r
		}
		return l
	}
	sb, ub := lb, rb
	if lu {
		sb, ub = rb, lb
	}
	bits := max(sb, 2*ub)
	switch {
	case bits <= 16:
		return types.Int16
	case bits <= 32:
		return types.Int32
	case bits <= 64:
		return types.Int64
	}
	t, err := types.CreateDecimalType(20, 0)
	if err != nil {
		return nil
	}
	return t
}

// intBits returns an integer type's width in bits and whether it is
// unsigned.
func intBits(t sql.Type) (bits int, unsigned, ok bool) {
	switch t.Type() {
	case sqltypes.Int8:
		return 8, false, true
	case sqltypes.Uint8:
		return 8, true, true
	case sqltypes.Int16:
		return 16, false, true
	case sqltypes.Uint16:
		return 16, true, true
	case sqltypes.Int24:
		return 24, false, true
	case sqltypes.Uint24:
		return 24, true, true
	case sqltypes.Int32:
		return 32, false, true
	case sqltypes.Uint32:
		return 32, true, true
	case sqltypes.Int64:
		return 64, false, true
	case sqltypes.Uint64:
		return 64, true, true
	}
	return 0, false, false
}

// mergedType returns the type MySQL gives a set operation's column whose
// sides are of types l and r, or nil when neither is a DECIMAL or the other
// is not a number.
func mergedType(l, r sql.Type) sql.Type {
	ld, lok := l.(sql.DecimalType)
	rd, rok := r.(sql.DecimalType)
	if !lok && !rok {
		return nil
	}
	if !lok {
		l, r, ld, rd = r, l, rd, ld
	}
	if types.IsFloat(r) {
		return types.Float64
	}
	intDigits, scale := int(ld.Precision()-ld.Scale()), int(ld.Scale())
	switch {
	case rd != nil:
		intDigits = max(intDigits, int(rd.Precision()-rd.Scale()))
		scale = max(scale, int(rd.Scale()))
	case integerDigits(r) > 0:
		intDigits = max(intDigits, integerDigits(r))
	default:
		return nil
	}
	scale = min(scale, types.DecimalTypeMaxScale)
	prec := min(intDigits+scale, types.DecimalTypeMaxPrecision)
	t, err := types.CreateDecimalType(uint8(prec), uint8(scale))
	if err != nil {
		return nil
	}
	return t
}

// convertColumns projects side's columns, converting those with a merged
// type to it; the projection keeps each column's name.
func convertColumns(side sql.Node, merged []sql.Type) sql.Node {
	sch := side.Schema()
	ids := sideColumnIds(side, len(sch))
	exprs := make([]sql.Expression, len(sch))
	for i, col := range sch {
		gf := expression.NewGetFieldWithTable(i, 0, col.Type, col.DatabaseSource, col.Source, col.Name, col.Nullable).WithId(ids[i]).(*expression.GetField)
		t := merged[i]
		if t == nil || reflect.DeepEqual(col.Type, t) {
			exprs[i] = gf
			continue
		}
		exprs[i] = expression.NewAlias(col.Name, &toType{UnaryExpression: expression.UnaryExpression{Child: gf}, typ: t}).WithId(ids[i])
	}
	return plan.NewProject(exprs, side)
}

// sideColumnIds returns the ids of the columns side projects, 0 where a
// column has none.
func sideColumnIds(side sql.Node, n int) []sql.ColumnId {
	ids := make([]sql.ColumnId, n)
	if p, ok := side.(sql.Projector); ok {
		for i, e := range p.ProjectedExprs() {
			if ide, ok := e.(sql.IdExpression); ok && i < n {
				ids[i] = ide.Id()
			}
		}
	}
	return ids
}

// toType converts its child's values to a set operation's merged type.
// (CAST to DECIMAL cannot: without a scale it casts to GMS's internal
// DECIMAL(65,30), and its DECIMAL(p,s) is a column's type, which does not
// match the DECIMAL of an exact aggregate on the other side.)
type toType struct {
	expression.UnaryExpression
	typ sql.Type
}

var _ sql.CollationCoercible = (*toType)(nil)

func (c *toType) Type() sql.Type { return c.typ }

func (c *toType) String() string { return c.Child.String() }

func (c *toType) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

func (c *toType) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	return &toType{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: c.typ}, nil
}

func (c *toType) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if v, _, err = c.typ.Convert(ctx, v); err != nil {
		return nil, err
	}
	if dt, ok := c.typ.(sql.DecimalType); ok && dt.Scale() < types.DecimalTypeMaxScale {
		if d, ok := v.(decimal.Decimal); ok {
			// Shown with the column's scale, as the other side's values
			// (but see exactSum.Eval on a scale of 30).
			v = d.Round(int32(dt.Scale()))
		}
	}
	return v, nil
}
