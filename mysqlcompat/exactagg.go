package mysqlcompat

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
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
// (floats, strings, temporal values) stay DOUBLE, as in MySQL, computed by
// GMS (which sums a DATETIME as its Unix time where MySQL sums the number
// its digits spell: a difference left as it is).
//
// So an analyzer rule (install.go) replaces each SUM and AVG of a GROUP BY
// or a window with an exactAgg of the right type, which sums integers in
// 128 bits and decimals exactly, and retypes the columns that read its
// result above the GROUP BY, through derived tables and unions: GMS typed
// them DOUBLE when it built the plan, and the result's type (what a client
// and CREATE TABLE ... AS SELECT see) is theirs. SUM and AVG over a window
// (SUM(x) OVER ...) are replaced alike; they compute through
// exactWindowSum. The sides of a UNION are matched by mergeSetOpTypes
// (setoptypes.go).
//
// Targets GMS v0.20.0. Without it, TestExactSumAndAvg fails.

// exactAggregates replaces the SUM and AVG of each GroupBy and Window with
// exactAgg and retypes the GetFields that read them.
func exactAggregates(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if tc, ok := n.(*plan.TableCopier); ok {
		// Its SELECT was analyzed on its own, this rule included.
		retypeCreateSelect(ctx, tc)
		return n, transform.SameTree, nil
	}
	if !hasGroupBy(n) {
		return n, transform.SameTree, nil
	}
	r := aggRetyper{types: make(map[sql.ColumnId]sql.Type)}
	nn, same, err := transform.NodeWithOpaque(n, r.node)
	if err != nil || same == transform.SameTree {
		return n, transform.SameTree, err
	}
	if setOpMismatch(nn) {
		// mergeSetOpTypes matches the sides of each UNION (INTERSECT,
		// EXCEPT) as GMS analyzes them; should retyping here still
		// leave sides that differ, the statement keeps GMS's
		// aggregates rather than fail GMS's check.
		return n, transform.SameTree, nil
	}
	return nn, transform.NewTree, nil
}

// aggRetyper walks a plan bottom-up: each node's GetFields of a retyped
// column first, then the node's own aggregates (so that SUM over a derived
// table's SUM sees its DECIMAL type), then what the node passes up.
type aggRetyper struct {
	// types are the new types of the retyped columns, by id.
	types map[sql.ColumnId]sql.Type
}

func (r *aggRetyper) node(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	same := transform.SameTree
	if len(r.types) > 0 {
		nn, id, err := transform.OneNodeExpressions(n, r.getField)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if id == transform.NewTree {
			n, same = nn, transform.NewTree
		}
	}
	switch nn := n.(type) {
	case *plan.SubqueryAlias:
		r.derivedColumns(nn)
	case *plan.GroupBy:
		if deps, ok := r.aggregates(nn.SelectedExprs); ok {
			ngb := *nn
			ngb.SelectedExprs = deps
			return &ngb, transform.NewTree, nil
		}
	case *plan.Window:
		exprs, changed := nn.SelectExprs, false
		if deps, ok := r.aggregates(exprs); ok {
			exprs, changed = deps, true
		}
		if peers, ok := windowPeers(exprs); ok {
			exprs, changed = peers, true
		}
		if changed {
			nw := *nn
			nw.SelectExprs = exprs
			return &nw, transform.NewTree, nil
		}
	}
	return n, same, nil
}

// getField retypes a GetField of a retyped column.
func (r *aggRetyper) getField(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	gf, ok := e.(*expression.GetField)
	if !ok {
		return e, transform.SameTree, nil
	}
	t, ok := r.types[gf.Id()]
	if !ok || gf.Type() == t && gf.IsNullable() {
		return e, transform.SameTree, nil
	}
	ngf := expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), true)
	return ngf.WithId(gf.Id()), transform.NewTree, nil
}

// aggregates replaces the SUMs and AVGs in exprs, recording their types;
// false when there were none to replace.
func (r *aggRetyper) aggregates(exprs []sql.Expression) ([]sql.Expression, bool) {
	var deps []sql.Expression
	for i, e := range exprs {
		ne, changed, _ := transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			agg, ok := e.(*exactAgg)
			if ok {
				// A subquery analyzed on its own before.
				r.record(agg)
				return e, transform.SameTree, nil
			}
			if agg, ok = newExactAgg(e); !ok {
				return e, transform.SameTree, nil
			}
			r.record(agg)
			return agg, transform.NewTree, nil
		})
		if changed == transform.NewTree {
			if deps == nil {
				deps = slices.Clone(exprs)
			}
			deps[i] = ne
		}
	}
	return deps, deps != nil
}

func (r *aggRetyper) record(agg *exactAgg) {
	if agg.Id() != 0 {
		r.types[agg.Id()] = agg.typ
	}
}

// derivedColumns records the columns of a derived table whose values come
// from a retyped column: the table's columns are read above it by their
// own ids, in the order of its schema.
func (r *aggRetyper) derivedColumns(sq *plan.SubqueryAlias) {
	if len(r.types) == 0 {
		return
	}
	if u, ok := setOpUnder(sq.Child); ok {
		sch := u.Schema()
		i := 0
		sq.Columns().ForEach(func(id sql.ColumnId) {
			if i < len(sch) && r.retypedAt(u, i) {
				r.types[id] = sch[i].Type
			}
			i++
		})
		return
	}
	p, ok := sq.Child.(sql.Projector)
	if !ok {
		return
	}
	exprs := p.ProjectedExprs()
	i := 0
	sq.Columns().ForEach(func(id sql.ColumnId) {
		if i >= len(exprs) {
			return
		}
		e := exprs[i]
		i++
		if r.reads(e) {
			r.types[id] = e.Type()
		}
	})
}

// retypedAt reports whether the i-th column of n's rows comes from a
// retyped column. It follows the columns of set operations, whose sides
// name their columns by ids not seen above them, by position.
func (r *aggRetyper) retypedAt(n sql.Node, i int) bool {
	switch n := n.(type) {
	case *plan.Project:
		if i >= len(n.Projections) {
			return false
		}
		return transform.InspectExpr(n.Projections[i], func(e sql.Expression) bool {
			switch e := e.(type) {
			case *toType, *exactAgg:
				return true
			case *expression.GetField:
				if _, ok := r.types[e.Id()]; ok {
					return true
				}
				// By its position in the child's rows (assigned
				// by now), for the projections GMS puts above
				// a union's sides.
				return r.retypedAt(n.Child, e.Index())
			}
			return false
		})
	case *plan.GroupBy:
		return i < len(n.SelectedExprs) && r.reads(n.SelectedExprs[i])
	case *plan.SetOp:
		return r.retypedAt(n.Left(), i) || r.retypedAt(n.Right(), i)
	case *keySetOp: // INTERSECT and EXCEPT by keys (setopkeys.go)
		return r.retypedAt(n.left, i) || r.retypedAt(n.right, i)
	case *plan.Distinct, *plan.Sort, *plan.Limit, *plan.TopN, *plan.Filter, *plan.Having, *plan.Offset, *keyDistinct:
		return r.retypedAt(n.Children()[0], i)
	}
	return false
}

// setOpUnder returns the set operation n is, or the one under the nodes
// keyDistincts puts over a UNION DISTINCT (keydistinct.go) and in place of
// an INTERSECT or EXCEPT (a keySetOp, setopkeys.go).
func setOpUnder(n sql.Node) (sql.Node, bool) {
	for {
		switch x := n.(type) {
		case *plan.SetOp, *keySetOp:
			return x, true
		case *plan.Limit, *plan.Offset, *plan.Sort, *keyDistinct:
			n = x.Children()[0]
		default:
			return nil, false
		}
	}
}

// reads reports whether e reads a retyped column or is an exact aggregate.
func (r *aggRetyper) reads(e sql.Expression) bool {
	return transform.InspectExpr(e, func(e sql.Expression) bool {
		switch e := e.(type) {
		case *expression.GetField:
			_, ok := r.types[e.Id()]
			return ok
		case *exactAgg:
			return true
		}
		return false
	})
}

// setOpMismatch reports whether the sides of a set operation in n have
// columns of different types.
func setOpMismatch(n sql.Node) bool {
	mismatch := false
	transform.Inspect(n, func(n sql.Node) bool {
		u, ok := n.(*plan.SetOp)
		if !ok || mismatch {
			return !mismatch
		}
		ls, rs := u.Left().Schema(), u.Right().Schema()
		for i := range min(len(ls), len(rs)) {
			if !reflect.DeepEqual(ls[i].Type, rs[i].Type) {
				mismatch = true
			}
		}
		return !mismatch
	})
	return mismatch
}

// retypeCreateSelect gives the columns that CREATE TABLE ... AS SELECT
// (without a column list) makes of exact aggregates their type: GMS took
// the table's columns from the SELECT before analysis, when SUM and AVG
// were DOUBLE NOT NULL (over a window, the argument's type, NOT NULL). A
// column list, where the user names the types, is left alone. When the
// statement's text is not the CTAS itself (one inside a stored procedure)
// the columns keep GMS's types but may be NULL.
func retypeCreateSelect(ctx *sql.Context, tc *plan.TableCopier) {
	ct, ok := tc.Destination.(*plan.CreateTable)
	if !ok {
		return
	}
	ctas := false
	if stmt, err := sqlparser.Parse(ctx.Query()); err == nil {
		if ddl, ok := stmt.(*sqlparser.DDL); ok {
			if ddl.TableSpec != nil {
				return
			}
			ctas = ddl.OptSelect != nil
		}
	}
	// The walk records the aggregates' and the derived tables' columns.
	r := aggRetyper{types: make(map[sql.ColumnId]sql.Type)}
	if _, _, err := transform.NodeWithOpaque(tc.Source, r.node); err != nil {
		return
	}
	src := tc.Source.Schema()
	for i := range src {
		if !r.retypedAt(tc.Source, i) {
			continue
		}
		for _, col := range ct.PkSchema().Schema {
			if col.Name != src[i].Name {
				continue
			}
			// The table's columns are this statement's own copies.
			col.Nullable = true
			if ctas {
				col.Type = src[i].Type
			}
		}
	}
}

// hasGroupBy reports whether n holds a GroupBy or a Window.
func hasGroupBy(n sql.Node) bool {
	return planHolds(n, func(n sql.Node) bool {
		switch n.(type) {
		case *plan.GroupBy, *plan.Window:
			return true
		}
		return false
	})
}

// planHolds reports whether n or a node below it satisfies match. The nodes
// a short statement is made of are followed by their Child field, as
// Children allocates; a table and the literal rows of an INSERT hold
// nothing.
func planHolds(n sql.Node, match func(sql.Node) bool) bool {
	for {
		if match(n) {
			return true
		}
		switch c := n.(type) {
		case *plan.Project:
			n = c.Child
		case *plan.Filter:
			n = c.Child
		case *plan.Sort:
			n = c.Child
		case *plan.Limit:
			n = c.Child
		case *plan.TopN:
			n = c.Child
		case *plan.Distinct:
			n = c.Child
		case *plan.GroupBy:
			n = c.Child
		case *plan.InsertInto:
			if c.LiteralValueSource {
				return false
			}
			return childrenHold(n, match)
		case sql.TableNode:
			return false
		default:
			return childrenHold(n, match)
		}
	}
}

func childrenHold(n sql.Node, match func(sql.Node) bool) bool {
	for _, c := range n.Children() {
		if planHolds(c, match) {
			return true
		}
	}
	return false
}

// newExactAgg returns the exactAgg for e when e is a SUM or AVG.
func newExactAgg(e sql.Expression) (*exactAgg, bool) {
	var inner sql.Aggregation
	avg := false
	switch a := e.(type) {
	case *aggregation.Sum:
		inner = a
	case *aggregation.Avg:
		inner, avg = a, true
	default:
		return nil, false
	}
	child := inner.Children()[0]
	var typ sql.Type = types.Float64
	scale, exact := int32(0), false
	if vt := exactValueType(child); vt != nil {
		typ, scale, exact = exactAggType(vt, avg)
	}
	return &exactAgg{inner: inner, child: child, avg: avg, exact: exact, typ: typ, scale: scale}, true
}

// exactValueType returns the integer or DECIMAL type that holds every value
// of e, or nil when e may have values of other types. GMS gives IF, IFNULL,
// COALESCE, CASE, GREATEST and LEAST the type of one branch even when
// another is a float, a string or a DECIMAL of larger scale
// (SUM(IF(c, i, 2.5e0)) was typed INT). MySQL types such an expression by
// all its branches: DOUBLE when one is a float or a string, so then the
// aggregate stays DOUBLE; a DECIMAL wide enough for all when they are
// integers and decimals.
func exactValueType(e sql.Expression) sql.Type {
	var branches []sql.Expression
	switch e := e.(type) {
	case *function.If:
		branches = e.Children()[1:]
	case *function.IfNull, *function.Coalesce, *function.Greatest, *function.Least:
		branches = e.Children()
	case *function.NullIf:
		branches = e.Children()[:1]
	case *expression.Case:
		for _, b := range e.Branches {
			branches = append(branches, b.Value)
		}
		if e.Else != nil {
			branches = append(branches, e.Else)
		}
	default:
		for _, c := range e.Children() {
			if _, ok := c.Type().(sql.DecimalType); ok || integerDigits(c.Type()) > 0 {
				if exactValueType(c) == nil {
					return nil
				}
			}
		}
		if !exactNumeric(e.Type()) {
			return nil
		}
		return e.Type()
	}
	var t sql.Type
	for _, b := range branches {
		if b.Type() == types.Null {
			continue
		}
		bt := exactValueType(b)
		switch {
		case bt == nil:
			return nil
		case t == nil || reflect.DeepEqual(t, bt):
			t = bt
		case integerDigits(t) > 0 && integerDigits(bt) > 0:
			if integerDigits(bt) > integerDigits(t) {
				t = bt
			}
		default:
			if t = mergedType(t, bt); t == nil {
				return nil
			}
		}
	}
	return t
}

// exactNumeric reports whether t is an integer or DECIMAL type.
func exactNumeric(t sql.Type) bool {
	_, dec := t.(sql.DecimalType)
	return dec || integerDigits(t) > 0
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
// t (YEAR and BIT included, as MySQL counts them integers), or 0 for other
// types.
func integerDigits(t sql.Type) int {
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8:
		return 3
	case sqltypes.Int16, sqltypes.Uint16:
		return 5
	case sqltypes.Int24, sqltypes.Uint24:
		return 8 // MySQL counts the signed one's display width too
	case sqltypes.Int32, sqltypes.Uint32:
		return 10
	case sqltypes.Int64:
		return 19
	case sqltypes.Uint64:
		return 20
	case sqltypes.Year:
		return 4
	case sqltypes.Bit:
		if bt, ok := t.(types.BitType); ok {
			// The digits of 2^n-1.
			return len(new(big.Int).Lsh(big.NewInt(1), uint(bt.NumberOfBits())).String())
		}
	}
	return 0
}

// IsExactAggregate reports whether e is a SUM or AVG this package put in
// place of GMS's, which aggregates the same rows.
func IsExactAggregate(e sql.Expression) bool {
	_, ok := e.(*exactAgg)
	return ok
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
func (a *exactAgg) Window() *sql.WindowDefinition { return a.inner.Window() }

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

func (a *exactAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	na := *a
	na.inner = a.inner.WithWindow(w).(sql.Aggregation)
	return &na
}

func (a *exactAgg) NewWindowFunction() (sql.WindowFunction, error) {
	if !a.exact {
		return a.inner.NewWindowFunction()
	}
	child, err := transform.Clone(a.child)
	if err != nil {
		return nil, err
	}
	fn := &exactWindowSum{child: child, avg: a.avg, scale: a.scale}
	if w := a.inner.Window(); w != nil && w.Frame != nil {
		if fn.framer, err = w.Frame.NewFramer(w); err != nil {
			return nil, err
		}
	}
	return fn, nil
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
	if t.Exponent() > -s.scale && s.scale < types.DecimalTypeMaxScale {
		// Integers summed with decimals (SUM(IFNULL(i, 0.5))) show the
		// type's scale. A scale of 30 is rather GMS's DECIMAL of unknown
		// scale (CAST(i AS DECIMAL)), whose values show their own.
		t = t.Round(s.scale)
	}
	return t, nil
}

func (s *exactSum) Dispose() { expression.Dispose(s.child) }

// exactWindowSum is SUM or AVG over a window frame (SUM(x) OVER ...),
// exact where GMS summed floats (and counted NULLs as 0: a frame of NULLs
// summed to 0, and averaged to NaN). It keeps the partition's prefix sums,
// so that each frame costs one subtraction.
type exactWindowSum struct {
	child  sql.Expression
	avg    bool
	scale  int32
	framer sql.WindowFramer
	start  int
	// prefix[i] is the sum of the partition's first i rows, counts[i] how
	// many of them were not NULL.
	prefix []decimal.Decimal
	counts []int64
}

var _ sql.WindowFunction = (*exactWindowSum)(nil)

func (w *exactWindowSum) Dispose() { expression.Dispose(w.child) }

// DefaultFramer is the window's frame, or MySQL's default for a window with
// ORDER BY (and, with all rows peers, without it): from the partition's
// start to the current row.
func (w *exactWindowSum) DefaultFramer() sql.WindowFramer {
	if w.framer != nil {
		return w.framer
	}
	return aggregation.NewUnboundedPrecedingToCurrentRowFramer()
}

func (w *exactWindowSum) StartPartition(ctx *sql.Context, iv sql.WindowInterval, buf sql.WindowBuffer) error {
	w.Dispose()
	n := iv.End - iv.Start
	w.start = iv.Start
	w.prefix = slices.Grow(w.prefix[:0], n+1)[:n+1]
	w.counts = slices.Grow(w.counts[:0], n+1)[:n+1]
	w.prefix[0], w.counts[0] = decimal.Zero, 0
	s := exactSum{child: w.child}
	for i := range n {
		v, err := w.child.Eval(ctx, buf[iv.Start+i])
		if err != nil {
			return err
		}
		if v != nil {
			if err := s.add(ctx, v, true); err != nil {
				return err
			}
			s.rows++
		}
		w.prefix[i+1], w.counts[i+1] = s.total(), s.rows
	}
	return nil
}

func (w *exactWindowSum) Compute(_ *sql.Context, iv sql.WindowInterval, _ sql.WindowBuffer) any {
	lo := max(iv.Start-w.start, 0)
	hi := min(iv.End-w.start, len(w.prefix)-1)
	if hi <= lo {
		return nil
	}
	rows := w.counts[hi] - w.counts[lo]
	if rows == 0 {
		return nil
	}
	t := w.prefix[hi].Sub(w.prefix[lo])
	if w.avg {
		return t.DivRound(decimal.NewFromInt(rows), w.scale)
	}
	return t
}
