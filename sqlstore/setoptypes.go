package sqlstore

import (
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
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
// the sides are analyzed, before the check, and converts both sides of
// such a column to the type MySQL gives it:
//
//	DECIMAL and DECIMAL   DECIMAL wide enough for the integer digits and
//	                      the scale of both
//	DECIMAL and integer   the same, the integer counted by its digits
//	DECIMAL and float     DOUBLE
//
// Columns of other types that differ are left for GMS to report.

func init() {
	// It runs as part of GMS's finalizeUnions, which analyzes the sides,
	// once after the default batch and before the validation batch: under
	// finalizeUnions's id, as a rule of its own would cost each statement
	// the formatting of an unknown rule's name.
	for i, r := range analyzer.OnceAfterDefault {
		if r.Id.String() == "finalizeUnions" {
			finalize := r.Apply
			analyzer.OnceAfterDefault[i].Apply = func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
				n, same, err := finalize(ctx, a, n, scope, sel, qFlags)
				if err != nil {
					return nil, transform.SameTree, err
				}
				n, merged, err := mergeSetOpTypes(n, qFlags)
				if merged == transform.NewTree {
					same = merged
				}
				return n, same, err
			}
			return
		}
	}
	// Not found (another GMS): a rule of its own, last of the batch.
	analyzer.OnceAfterDefault = append(analyzer.OnceAfterDefault, analyzer.Rule{
		Id: setOpTypes,
		Apply: func(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
			return mergeSetOpTypes(n, qFlags)
		},
	})
}

// setOpTypes names mergeSetOpTypes among GMS's analyzer rules when it runs
// as a rule of its own.
const setOpTypes analyzer.RuleId = 10_003

// mergeSetOpTypes converts the sides of each set operation in n whose
// columns differ as a DECIMAL differs from an integer, a float or another
// DECIMAL to the column's merged type.
func mergeSetOpTypes(n sql.Node, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.IsSet(sql.QFlagAggregation) && !qFlags.IsSet(sql.QFlagAnyAgg) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		u, ok := n.(*plan.SetOp)
		if !ok {
			return n, transform.SameTree, nil
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
			return n, transform.SameTree, nil
		}
		nu, err := u.WithChildren(convertColumns(u.Left(), merged), convertColumns(u.Right(), merged))
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nu, transform.NewTree, nil
	})
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
