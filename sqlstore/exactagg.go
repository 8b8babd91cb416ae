package sqlstore

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// Exact SUM and AVG
//
// GMS types every SUM and AVG of a GROUP BY as DOUBLE and sums integers as
// float64: SUM of two BIGINT 9223372036854775807 is 1.8446744073709552e19,
// and SUM of a DECIMAL(17,2) column, summed exactly, is shown rounded to a
// double's 17 digits (123456789012345.67 + 0.01 read 1.2345678901234569e14).
// CREATE TABLE ... AS SELECT SUM(d) made a DOUBLE NOT NULL column. MySQL
// sums integers and decimals exactly, as DECIMAL:
//
//	SUM of DECIMAL(p,s)   DECIMAL(p+22, s)
//	AVG of DECIMAL(p,s)   DECIMAL(p+4, s+4), rounded half away from zero
//	SUM of an integer     DECIMAL(d+22, 0), d the digits of the type's range
//	AVG of an integer     DECIMAL(d+4, 4)
//
// (precision at most 65, scale at most 30), and both may be NULL: a group
// of NULLs, or no rows at all, sums to NULL. SUM and AVG of anything else
// (floats, strings, temporal values) stay DOUBLE, as in MySQL.
//
// So an analyzer rule (rules.go) replaces each SUM and AVG of a GROUP BY
// with an exactAgg of the right type, which sums integers in 128 bits and
// decimals exactly, and retypes the columns that read its result above the
// GROUP BY: GMS typed them DOUBLE when it built the plan, and the result's
// type (what a client and CREATE TABLE ... AS SELECT see) is theirs. Window
// aggregates (SUM(x) OVER ...) are left to GMS.

// exactAggregates replaces the SUM and AVG of each GroupBy with exactAgg and
// retypes the GetFields that read them.
func exactAggregates(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if tc, ok := n.(*plan.TableCopier); ok {
		// Its SELECT was analyzed on its own, this rule included.
		retypeCreateSelect(ctx, tc)
		return n, transform.SameTree, nil
	}
	if qFlags != nil && !qFlags.IsSet(sql.QFlagAggregation) || !hasGroupBy(n) {
		return n, transform.SameTree, nil
	}
	retyped := make(map[sql.ColumnId]sql.Type)
	n, same, err := transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return n, transform.SameTree, nil
		}
		var deps []sql.Expression
		for i, e := range gb.SelectedExprs {
			ne, changed, err := transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				if agg, ok := e.(*exactAgg); ok {
					// A subquery analyzed on its own before.
					retyped[agg.Id()] = agg.typ
					return e, transform.SameTree, nil
				}
				agg, ok := newExactAgg(e)
				if !ok {
					return e, transform.SameTree, nil
				}
				retyped[agg.Id()] = agg.typ
				return agg, transform.NewTree, nil
			})
			if err != nil {
				return nil, transform.SameTree, err
			}
			if changed == transform.NewTree {
				if deps == nil {
					deps = slices.Clone(gb.SelectedExprs)
				}
				deps[i] = ne
			}
		}
		if deps == nil {
			return n, transform.SameTree, nil
		}
		ngb := *gb
		ngb.SelectedExprs = deps
		return &ngb, transform.NewTree, nil
	})
	if err != nil || len(retyped) == 0 {
		return n, same, err
	}
	n, _, err = transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if sq, ok := n.(*plan.SubqueryAlias); ok {
			retypeSubqueryColumns(sq, retyped)
		}
		return transform.OneNodeExpressions(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			return transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				gf, ok := e.(*expression.GetField)
				if !ok {
					return e, transform.SameTree, nil
				}
				t, ok := retyped[gf.Id()]
				if !ok || gf.Type() == t && gf.IsNullable() {
					return e, transform.SameTree, nil
				}
				ngf := expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), true)
				return ngf.WithId(gf.Id()), transform.NewTree, nil
			})
		})
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, transform.NewTree, nil
}

// retypeCreateSelect gives the columns that CREATE TABLE ... AS SELECT
// (without a column list) makes of exact aggregates their type: GMS took
// the table's columns from the SELECT before analysis, when SUM and AVG
// were DOUBLE NOT NULL. A column list, where the user names the types,
// is left alone, and so is a statement whose text is not the CTAS itself
// (one inside a stored procedure).
func retypeCreateSelect(ctx *sql.Context, tc *plan.TableCopier) {
	ct, ok := tc.Destination.(*plan.CreateTable)
	if !ok {
		return
	}
	stmt, err := sqlparser.Parse(ctx.Query())
	if err != nil {
		return
	}
	if ddl, ok := stmt.(*sqlparser.DDL); !ok || ddl.TableSpec != nil || ddl.OptSelect == nil {
		return
	}
	src := tc.Source.Schema()
	for _, col := range ct.PkSchema().Schema {
		i := src.IndexOfColName(col.Name)
		if i < 0 || col.Type != types.Float64 {
			continue
		}
		if _, dec := src[i].Type.(sql.DecimalType); dec || src[i].Type == types.Float64 {
			// The table's columns are this statement's own copies.
			col.Type, col.Nullable = src[i].Type, src[i].Nullable
		}
	}
}

// hasGroupBy reports whether n holds a GroupBy. (The statement's flags
// spare most statements the walk, whose Children calls allocate.)
func hasGroupBy(n sql.Node) bool {
	if _, ok := n.(*plan.GroupBy); ok {
		return true
	}
	for _, c := range n.Children() {
		if hasGroupBy(c) {
			return true
		}
	}
	return false
}

// retypeSubqueryColumns adds to retyped the columns of sq that carry a
// retyped column of its child: a derived table's columns are read above it
// by their own ids, in the order of its schema.
func retypeSubqueryColumns(sq *plan.SubqueryAlias, retyped map[sql.ColumnId]sql.Type) {
	p, ok := sq.Child.(*plan.Project)
	if !ok {
		return
	}
	i := 0
	sq.Columns().ForEach(func(id sql.ColumnId) {
		if i >= len(p.Projections) {
			return
		}
		e := p.Projections[i]
		i++
		if a, ok := e.(*expression.Alias); ok {
			e = a.Child
		}
		if gf, ok := e.(*expression.GetField); ok {
			if t, ok := retyped[gf.Id()]; ok {
				retyped[id] = t
			}
		}
	})
}

// newExactAgg returns the exactAgg for e when e is a SUM or AVG without a
// window.
func newExactAgg(e sql.Expression) (*exactAgg, bool) {
	var inner sql.Aggregation
	avg := false
	switch a := e.(type) {
	case *aggregation.Sum:
		if a.Window() != nil {
			return nil, false
		}
		inner = a
	case *aggregation.Avg:
		if a.Window() != nil {
			return nil, false
		}
		inner, avg = a, true
	default:
		return nil, false
	}
	child := inner.Children()[0]
	typ, scale, exact := exactAggType(child.Type(), avg)
	return &exactAgg{inner: inner, child: child, avg: avg, exact: exact, typ: typ, scale: scale}, true
}

// exactAggType returns the type of SUM (or AVG) of a value of type t, the
// scale of an exact result, and whether the result is exact (DECIMAL).
func exactAggType(t sql.Type, avg bool) (sql.Type, int32, bool) {
	var prec, scale int
	if dt, ok := t.(sql.DecimalType); ok {
		prec, scale = int(dt.Precision()), int(dt.Scale())
	} else if prec = integerDigits(t); prec == 0 {
		return types.Float64, 0, false
	}
	if avg {
		prec, scale = prec+4, scale+4
	} else {
		prec += 22
	}
	prec, scale = min(prec, types.DecimalTypeMaxPrecision), min(scale, types.DecimalTypeMaxScale)
	dt, err := types.CreateDecimalType(uint8(prec), uint8(scale))
	if err != nil {
		return types.Float64, 0, false
	}
	return dt, int32(scale), true
}

// integerDigits returns the digits of the largest magnitude of integer type
// t (YEAR included, as MySQL counts it an integer), or 0 for other types.
func integerDigits(t sql.Type) int {
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8:
		return 3
	case sqltypes.Int16, sqltypes.Uint16:
		return 5
	case sqltypes.Int24:
		return 7
	case sqltypes.Uint24:
		return 8
	case sqltypes.Int32, sqltypes.Uint32:
		return 10
	case sqltypes.Int64:
		return 19
	case sqltypes.Uint64:
		return 20
	case sqltypes.Year:
		return 4
	}
	return 0
}

// exactAgg is SUM or AVG typed as MySQL types it: exact (DECIMAL) over
// integers and decimals, computed by exactSum; over anything else GMS's own
// aggregate computes, only the type's nullability changes.
type exactAgg struct {
	inner sql.Aggregation // *aggregation.Sum or *aggregation.Avg
	child sql.Expression
	avg   bool
	exact bool
	typ   sql.Type
	scale int32 // of an exact result
}

var _ sql.Aggregation = (*exactAgg)(nil)
var _ sql.CollationCoercible = (*exactAgg)(nil)

func (a *exactAgg) Type() sql.Type { return a.typ }

// IsNullable is true: a group of NULLs sums to NULL (GMS says SUM is never
// NULL, which made CREATE TABLE ... AS SELECT declare NOT NULL).
func (a *exactAgg) IsNullable() bool              { return true }
func (a *exactAgg) Resolved() bool                { return a.inner.Resolved() }
func (a *exactAgg) String() string                { return a.inner.String() }
func (a *exactAgg) DebugString() string           { return sql.DebugString(a.inner) }
func (a *exactAgg) Children() []sql.Expression    { return a.inner.Children() }
func (a *exactAgg) Id() sql.ColumnId              { return a.inner.Id() }
func (a *exactAgg) Window() *sql.WindowDefinition { return nil }

func (a *exactAgg) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, aggregation.ErrEvalUnsupportedOnAggregation.New(a.inner.String())
}

func (a *exactAgg) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

func (a *exactAgg) WithId(id sql.ColumnId) sql.IdExpression {
	na := *a
	na.inner = a.inner.WithId(id).(sql.Aggregation)
	return &na
}

func (a *exactAgg) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	inner, err := a.inner.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	na := *a
	na.inner, na.child = inner.(sql.Aggregation), children[0]
	return &na, nil
}

// WithWindow gives up exactness: the rule does not wrap window aggregates,
// and GMS computes those.
func (a *exactAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return a.inner.WithWindow(w)
}

func (a *exactAgg) NewWindowFunction() (sql.WindowFunction, error) {
	return a.inner.NewWindowFunction()
}

func (a *exactAgg) NewBuffer() (sql.AggregationBuffer, error) {
	if !a.exact {
		return a.inner.NewBuffer()
	}
	child, err := transform.Clone(a.child)
	if err != nil {
		return nil, err
	}
	return &exactSum{child: child, avg: a.avg, scale: a.scale}, nil
}

// exactSum sums integers in 128 bits (hi:lo, two's complement) and decimals
// as decimals; AVG divides at Eval.
type exactSum struct {
	child  sql.Expression
	avg    bool
	scale  int32
	rows   int64
	hi     int64
	lo     uint64
	dec    decimal.Decimal
	hasDec bool
}

func (s *exactSum) Update(ctx *sql.Context, row sql.Row) error {
	v, err := s.child.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	if err := s.add(ctx, v, true); err != nil {
		return err
	}
	s.rows++
	return nil
}

// add adds v; convert says whether a value of another Go type may be
// converted through the child's type first.
func (s *exactSum) add(ctx *sql.Context, v any, convert bool) error {
	switch v := v.(type) {
	case int8:
		s.addInt(int64(v))
	case int16:
		s.addInt(int64(v))
	case int32:
		s.addInt(int64(v))
	case int64:
		s.addInt(v)
	case int:
		s.addInt(int64(v))
	case uint8:
		s.addUint(uint64(v))
	case uint16:
		s.addUint(uint64(v))
	case uint32:
		s.addUint(uint64(v))
	case uint64:
		s.addUint(v)
	case uint:
		s.addUint(uint64(v))
	case decimal.Decimal:
		if s.hasDec {
			s.dec = s.dec.Add(v)
		} else {
			s.dec, s.hasDec = v, true
		}
	case decimal.NullDecimal:
		if v.Valid {
			return s.add(ctx, v.Decimal, false)
		}
	default:
		if !convert {
			return fmt.Errorf("SUM: unexpected value %v (%T) of %s", v, v, s.child.Type())
		}
		// A literal DECIMAL may evaluate to its text.
		cv, _, err := s.child.Type().Convert(ctx, v)
		if err != nil {
			return err
		}
		return s.add(ctx, cv, false)
	}
	return nil
}

func (s *exactSum) addInt(x int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(x), 0)
	s.hi += x>>63 + int64(carry)
}

func (s *exactSum) addUint(x uint64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, x, 0)
	s.hi += int64(carry)
}

// total returns the sum as a decimal.
func (s *exactSum) total() decimal.Decimal {
	var t decimal.Decimal
	switch {
	case s.hi == 0 && s.lo <= math.MaxInt64, s.hi == -1 && s.lo > math.MaxInt64:
		t = decimal.NewFromInt(int64(s.lo))
	default:
		b := new(big.Int).Lsh(big.NewInt(s.hi), 64)
		t = decimal.NewFromBigInt(b.Add(b, new(big.Int).SetUint64(s.lo)), 0)
	}
	if s.hasDec {
		t = t.Add(s.dec)
	}
	return t
}

func (s *exactSum) Eval(*sql.Context) (any, error) {
	if s.rows == 0 {
		return nil, nil
	}
	t := s.total()
	if s.avg {
		return t.DivRound(decimal.NewFromInt(s.rows), s.scale), nil
	}
	return t, nil
}

func (s *exactSum) Dispose() { expression.Dispose(s.child) }
