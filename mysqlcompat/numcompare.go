package mysqlcompat

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Comparisons of numbers with constants of other types
//
// GMS compares a DECIMAL with another number by converting both into the
// DECIMAL's type, which rounds the other to that type's scale: on a
// DECIMAL(5,2) column d > 3.499 was d > 3.50, d = 3.501 found 3.50, and on
// a DECIMAL(10,0) column e = 2.5 found 3. Where the literal came first, the
// column was rounded to the literal's scale instead. A string compared with
// an integer column was converted into the column's type, which refused
// '3.9z' (1366) and rounded '3.5'; with a DECIMAL it was rounded to its
// scale. MySQL compares an integer or DECIMAL with an integer or DECIMAL
// as exact decimals, and with a float or a string as doubles, a string read
// by its numeric prefix with warning 1292 ("Truncated incorrect DOUBLE
// value") for the rest (Item_func::item_cmp_type; the constant converted
// once, so one warning per statement).
//
// Two rewrites correct it (and numliteral.go the binder's rounding).
// numStringExpr runs before GMS plans index lookups, in castStringInts's
// walk (Install's once-before chain, and planFixedRanges for the
// single-table UPDATE and DELETE): a string literal compared with an
// integer or DECIMAL becomes the number MySQL reads from it, an integer or
// DECIMAL literal when it has no exponent, else a DOUBLE, warning once for
// what it dropped; the lookup is then built from that number (sqlstore
// makes a range inclusive where the column cannot hold the bound exactly,
// and keeps the filter). exactNumberCompares, a value rule, replaces =,
// <=>, <, <=, >, >=, BETWEEN and IN whose operands are a non-constant and
// a constant of such mixed types (a DECIMAL and an integer or DECIMAL, a
// DECIMAL and a float, an integer or DECIMAL and a string) with
// numCompare, which compares each pair as MySQL does. Comparisons of two
// columns are left to GMS.
//
// Targets GMS v0.20.0 (expression/comparison.go castLeftAndRight,
// types.DecimalType_.Compare). Without it, TestNumberCompareSpec
// (testdata/number_compare) fails.

// numMode is how a pair of operands is compared.
type numMode uint8

const (
	numGMS     numMode = iota // as GMS does
	numDecimal                // as exact decimals
	numDouble                 // as doubles, strings by their numeric prefix
)

// exactNumber reports whether t is an integer or DECIMAL type.
func exactNumber(t sql.Type) bool {
	return t != nil && (types.IsInteger(t) || types.IsDecimal(t))
}

// pairMode returns how MySQL compares operands of types a and b, where
// GMS does otherwise.
func pairMode(a, b sql.Type) numMode {
	if a == nil || b == nil {
		return numGMS
	}
	switch {
	case exactNumber(a) && exactNumber(b):
		if types.IsDecimal(a) || types.IsDecimal(b) {
			return numDecimal
		}
	case types.IsDecimal(a) && types.IsFloat(b), types.IsFloat(a) && types.IsDecimal(b):
		return numDouble
	case exactNumber(a) && types.IsTextOnly(b), types.IsTextOnly(a) && exactNumber(b):
		return numDouble
	}
	return numGMS
}

// constant reports whether e reads no column, subquery or parameter: a
// value fixed for the statement.
func constant(e sql.Expression) bool {
	ok := true
	sql.Inspect(e, func(x sql.Expression) bool {
		switch x.(type) {
		case *expression.GetField, *plan.Subquery, *expression.BindVar, *expression.ProcedureParam, *expression.UserVar:
			ok = false
		}
		return ok
	})
	return ok
}

// numStringExpr replaces a string literal compared with an integer or
// DECIMAL by the number MySQL reads from it, and an exactLiteral by its
// literal (see the top of this file). castStringInts calls it for every
// expression but a CAST, in its walk.
func numStringExpr(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch x := e.(type) {
	case *exactLiteral:
		if l := literalOf(x); l != e {
			return l, transform.NewTree, nil
		}
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.GreaterThanOrEqual:
		c := x.(expression.Comparer)
		l, r := c.Left(), c.Right()
		nl, okL := numStringOf(ctx, l, r)
		nr, okR := numStringOf(ctx, r, l)
		if !okL && !okR {
			nl, okL = decimalInColumnType(ctx, l, r)
			nr, okR = decimalInColumnType(ctx, r, l)
			if !okL && !okR {
				return e, transform.SameTree, nil
			}
		}
		ne, err := e.WithChildren(nl, nr)
		return ne, transform.NewTree, err
	case *expression.Between:
		lo, okL := numStringOf(ctx, x.Lower, x.Val)
		hi, okH := numStringOf(ctx, x.Upper, x.Val)
		if !okL && !okH {
			return e, transform.SameTree, nil
		}
		return expression.NewBetween(x.Val, lo, hi), transform.NewTree, nil
	case *expression.InTuple:
		tup, ok := x.Right().(expression.Tuple)
		if !ok {
			return e, transform.SameTree, nil
		}
		var out expression.Tuple
		for i, el := range tup {
			if v, ok := numStringOf(ctx, el, x.Left()); ok {
				if out == nil {
					out = append(expression.Tuple(nil), tup...)
				}
				out[i] = v
			}
		}
		if out == nil {
			return e, transform.SameTree, nil
		}
		return expression.NewInTuple(x.Left(), out), transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// numStringOf returns s as a numeric literal when s is a string literal
// compared with other, an integer or DECIMAL; ok is false, and s returned,
// otherwise.
func numStringOf(ctx *sql.Context, s, other sql.Expression) (sql.Expression, bool) {
	if !numStringCompared(s, other) {
		return s, false
	}
	str := s.(*expression.Literal).Value().(string)
	num, rest, ok := numberPrefix(str)
	if !ok || !onlySpace(rest) {
		warnDouble(ctx, str, true)
	}
	if !ok {
		return expression.NewLiteral(int64(0), types.Int64), true
	}
	if l := exactNumberLiteral(num); l != nil {
		return l, true
	}
	return expression.NewLiteral(stringNumber(ctx, num, true), types.Float64), true
}

// exactNumberLiteral returns num, a number without an exponent, as an
// integer or DECIMAL literal, or nil when it has an exponent or more
// digits than a DECIMAL holds. Such a literal compares as MySQL's double
// does wherever a double tells the values apart (up to 15 digits), and an
// index range is built from it exactly: a double's range over a DECIMAL or
// BIGINT would have to take every value that rounds to it.
func exactNumberLiteral(num string) sql.Expression {
	for i := 0; i < len(num); i++ {
		if num[i] == 'e' || num[i] == 'E' {
			return nil
		}
	}
	if i, err := strconv.ParseInt(num, 10, 64); err == nil {
		return expression.NewLiteral(i, types.Int64)
	}
	d, err := decimal.NewFromString(num)
	if err != nil {
		return nil
	}
	scale := int32(0)
	if d.Exponent() < 0 {
		scale = -d.Exponent()
	}
	digits := int32(len(d.Coefficient().Text(10)))
	if d.Coefficient().Sign() < 0 {
		digits--
	}
	prec := max(digits, scale, 1)
	if scale > types.DecimalTypeMaxScale || prec > types.DecimalTypeMaxPrecision {
		return nil
	}
	t, err := types.CreateDecimalType(uint8(prec), uint8(scale))
	if err != nil {
		return nil
	}
	return expression.NewLiteral(d, t)
}

// decimalInColumnType returns lit, a DECIMAL literal compared with col, a
// DECIMAL column, in the column's type when the type holds its value
// exactly: what GMS's binder does when it is right (numliteral.go keeps
// the literal from it), so that the comparison is of one type and GMS
// drops the filter its range covers. ok is false, and lit returned,
// otherwise.
func decimalInColumnType(ctx *sql.Context, lit, col sql.Expression) (sql.Expression, bool) {
	l, ok := lit.(*expression.Literal)
	if !ok || !types.IsDecimal(l.Type()) {
		return lit, false
	}
	gf, ok := col.(*expression.GetField)
	if !ok || !types.IsDecimal(gf.Type()) || gf.Type().Equals(l.Type()) {
		return lit, false
	}
	d, ok := l.Value().(decimal.Decimal)
	if !ok {
		return lit, false
	}
	dt := gf.Type().(sql.DecimalType)
	if d.Exponent() < -int32(dt.Scale()) && !d.Equal(d.Truncate(int32(dt.Scale()))) {
		return lit, false
	}
	v, inRange, err := dt.Convert(ctx, d)
	cv, isDec := v.(decimal.Decimal)
	if err != nil || inRange != sql.InRange || !isDec || !cv.Equal(d) {
		return lit, false
	}
	return expression.NewLiteral(cv, gf.Type()), true
}

// numStringCompared reports whether s is a string literal compared with
// other, an integer or DECIMAL expression: what numStringExpr replaces.
func numStringCompared(s, other sql.Expression) bool {
	l, ok := s.(*expression.Literal)
	if !ok || !types.IsTextOnly(l.Type()) {
		return false
	}
	if _, ok := l.Value().(string); !ok {
		return false
	}
	return exactNumber(other.Type())
}

// stringNumber returns the double MySQL reads from s, warning 1292 when it
// drops more than white space (once: not when the statement has that
// warning already, for a literal, which a plan's corrections may convert
// more than once).
func stringNumber(ctx *sql.Context, s string, once bool) float64 {
	num, rest, ok := numberPrefix(s)
	if !ok || !onlySpace(rest) {
		warnDouble(ctx, s, once)
	}
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && math.IsInf(f, 0) {
		// MySQL stops at the largest double.
		f = math.Copysign(math.MaxFloat64, f)
	}
	return f
}

// exactNumberCompares replaces comparisons GMS makes in the wrong type with
// numCompare (see the top of this file).
func exactNumberCompares(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource && len(ins.OnDupExprs) == 0 && len(ins.Checks()) == 0 {
		// INSERT ... VALUES of literals: nothing to compare but its
		// CHECK constraints and the expressions of generated columns
		// (a projection over the values).
		if _, values := ins.Source.(*plan.Values); values {
			return n, transform.SameTree, nil
		}
	}
	n, same, err := transform.NodeExprs(n, exactCompare)
	if err != nil {
		return nil, transform.SameTree, err
	}
	// The expressions of virtual columns are the table's, not the plan's.
	n, same2, err := transform.Node(n, exactVirtualColumns)
	if err != nil {
		return nil, transform.SameTree, err
	}
	same = same && same2
	// An INSERT's source is not among its children: the expressions of
	// its generated columns, which GMS projects over it, are corrected
	// here.
	if ins, ok := n.(*plan.InsertInto); ok && ins.Source != nil {
		src, srcSame, err := transform.NodeExprs(ins.Source, exactCompare)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if srcSame == transform.NewTree {
			return ins.WithSource(src), transform.NewTree, nil
		}
	}
	return n, same, nil
}

// exactVirtualColumns corrects the comparisons of the virtual columns n,
// a table or an index lookup of one, computes.
func exactVirtualColumns(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	switch x := n.(type) {
	case *plan.ResolvedTable:
		t, same, err := exactVirtualTable(x.Table)
		if err != nil || same == transform.SameTree {
			return n, same, err
		}
		// ReplaceTable: WithTable would wrap the new table in the old.
		nt, err := x.ReplaceTable(t)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nt, transform.NewTree, nil
	case *plan.IndexedTableAccess:
		t, same, err := exactVirtualTable(x.Table)
		if err != nil || same == transform.SameTree {
			return n, same, err
		}
		it, ok := t.(sql.IndexedTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		nx := *x
		nx.Table = it
		return &nx, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// exactVirtualTable returns t, a table that computes virtual columns
// (directly or under GMS's process tracking), with their comparisons
// corrected.
func exactVirtualTable(t sql.Table) (sql.Table, transform.TreeIdentity, error) {
	vt, ok := t.(*plan.VirtualColumnTable)
	pt, tracked := t.(*plan.ProcessTable)
	if tracked {
		vt, ok = pt.Table.(*plan.VirtualColumnTable)
	}
	if !ok {
		return t, transform.SameTree, nil
	}
	var projs []sql.Expression
	for i, p := range vt.Projections {
		np, same, err := transform.Expr(p, exactCompare)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if same == transform.NewTree {
			if projs == nil {
				projs = append([]sql.Expression(nil), vt.Projections...)
			}
			projs[i] = np
		}
	}
	if projs == nil {
		return t, transform.SameTree, nil
	}
	var nt sql.Table = plan.NewVirtualColumnTable(vt.Table, projs)
	if tracked {
		npt := *pt
		npt.Table = nt
		nt = &npt
	}
	return nt, transform.NewTree, nil
}

// exactCompare replaces e, a comparison of numbers with constants of
// other types, by a numCompare (exactNumberCompares).
func exactCompare(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	var op numOp
	var kids []sql.Expression
	switch x := e.(type) {
	case *expression.Equals:
		op, kids = opEq, []sql.Expression{x.Left(), x.Right()}
	case *expression.NullSafeEquals:
		op, kids = opNullSafeEq, []sql.Expression{x.Left(), x.Right()}
	case *expression.LessThan:
		op, kids = opLt, []sql.Expression{x.Left(), x.Right()}
	case *expression.LessThanOrEqual:
		op, kids = opLe, []sql.Expression{x.Left(), x.Right()}
	case *expression.GreaterThan:
		op, kids = opGt, []sql.Expression{x.Left(), x.Right()}
	case *expression.GreaterThanOrEqual:
		op, kids = opGe, []sql.Expression{x.Left(), x.Right()}
	case *expression.Between:
		op, kids = opBetween, []sql.Expression{x.Val, x.Lower, x.Upper}
	case *expression.InTuple:
		tup, ok := x.Right().(expression.Tuple)
		if !ok {
			return e, transform.SameTree, nil
		}
		op, kids = opIn, append([]sql.Expression{x.Left()}, tup...)
	case *expression.HashInTuple:
		tup, ok := x.Right().(expression.Tuple)
		if !ok {
			return e, transform.SameTree, nil
		}
		op, kids = opIn, append([]sql.Expression{x.Left()}, tup...)
	default:
		return e, transform.SameTree, nil
	}
	modes := make([]numMode, len(kids)-1)
	wrap := false
	lconst := constant(kids[0])
	for i, k := range kids[1:] {
		modes[i] = pairMode(kids[0].Type(), k.Type())
		if modes[i] != numGMS && lconst != constant(k) {
			wrap = true
		}
	}
	if !wrap {
		return e, transform.SameTree, nil
	}
	return &numCompare{cmp: e, op: op, kids: kids, modes: modes}, transform.NewTree, nil
}

// numOp is the comparison a numCompare makes.
type numOp uint8

const (
	opEq numOp = iota
	opNullSafeEq
	opLt
	opLe
	opGt
	opGe
	opBetween // kids: value, lower, upper
	opIn      // kids: value, then the list
)

// numCompare is a comparison of numbers with values of other types, each
// pair of operands compared as MySQL does (modes, by the pair's types:
// kids[0] with each other kid). It keeps GMS's expression for its text
// and for the pairs GMS compares right.
type numCompare struct {
	cmp   sql.Expression
	op    numOp
	kids  []sql.Expression
	modes []numMode
}

var _ sql.Expression = (*numCompare)(nil)
var _ sql.CollationCoercible = (*numCompare)(nil)

// Resolved implements sql.Expression.
func (c *numCompare) Resolved() bool { return c.cmp.Resolved() }

// String implements sql.Expression: GMS's text.
func (c *numCompare) String() string { return c.cmp.String() }

// Type implements sql.Expression.
func (c *numCompare) Type() sql.Type { return types.Boolean }

// IsNullable implements sql.Expression.
func (c *numCompare) IsNullable() bool { return c.op != opNullSafeEq }

// Children implements sql.Expression.
func (c *numCompare) Children() []sql.Expression { return c.kids }

// CollationCoercibility implements sql.CollationCoercible.
func (c *numCompare) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

// WithChildren implements sql.Expression.
func (c *numCompare) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	if len(kids) != len(c.kids) {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(kids), len(c.kids))
	}
	var cmp sql.Expression
	var err error
	switch c.op {
	case opIn:
		cmp = expression.NewInTuple(kids[0], expression.NewTuple(kids[1:]...))
	default:
		cmp, err = c.cmp.WithChildren(kids...)
	}
	if err != nil {
		return nil, err
	}
	modes := make([]numMode, len(kids)-1)
	for i, k := range kids[1:] {
		modes[i] = pairMode(kids[0].Type(), k.Type())
	}
	return &numCompare{cmp: cmp, op: c.op, kids: kids, modes: modes}, nil
}

// Eval implements sql.Expression.
func (c *numCompare) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.kids[0].Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	switch c.op {
	case opIn:
		sawNull := v == nil
		for i, k := range c.kids[1:] {
			w, err := k.Eval(ctx, row)
			if err != nil {
				return nil, err
			}
			if v == nil || w == nil {
				sawNull = true
				continue
			}
			r, ok, err := c.compare(ctx, row, i, v, w)
			if err != nil {
				return nil, err
			}
			if !ok {
				return c.cmp.Eval(ctx, row)
			}
			if r == 0 {
				return true, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return false, nil
	case opBetween:
		lo, err := c.kids[1].Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		hi, err := c.kids[2].Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, nil
		}
		// v >= lo AND v <= hi, each NULL (nil) when its bound is.
		var ge, le any
		if lo != nil {
			r, ok, err := c.compare(ctx, row, 0, v, lo)
			if err != nil || !ok {
				return c.fallback(ctx, row, err)
			}
			ge = r >= 0
		}
		if hi != nil {
			r, ok, err := c.compare(ctx, row, 1, v, hi)
			if err != nil || !ok {
				return c.fallback(ctx, row, err)
			}
			le = r <= 0
		}
		if ge == false || le == false {
			return false, nil
		}
		if ge == nil || le == nil {
			return nil, nil
		}
		return true, nil
	}
	w, err := c.kids[1].Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if v == nil || w == nil {
		if c.op == opNullSafeEq {
			return v == nil && w == nil, nil
		}
		return nil, nil
	}
	r, ok, err := c.compare(ctx, row, 0, v, w)
	if err != nil || !ok {
		return c.fallback(ctx, row, err)
	}
	switch c.op {
	case opEq, opNullSafeEq:
		return r == 0, nil
	case opLt:
		return r < 0, nil
	case opLe:
		return r <= 0, nil
	case opGt:
		return r > 0, nil
	default:
		return r >= 0, nil
	}
}

// fallback returns err, or GMS's answer when err is nil.
func (c *numCompare) fallback(ctx *sql.Context, row sql.Row, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return c.cmp.Eval(ctx, row)
}

// compare compares v with w, non-NULL values of kids[0] and of the other
// kid of pair i; ok is false when a value is not of a kind it compares
// (GMS's comparison answers then).
func (c *numCompare) compare(ctx *sql.Context, _ sql.Row, i int, v, w any) (int, bool, error) {
	switch c.modes[i] {
	case numDecimal:
		a, ok := exactDecimal(v)
		if !ok {
			return 0, false, nil
		}
		b, ok := exactDecimal(w)
		if !ok {
			return 0, false, nil
		}
		return a.Cmp(b), true, nil
	case numDouble:
		a, ok := mysqlDouble(ctx, v)
		if !ok {
			return 0, false, nil
		}
		b, ok := mysqlDouble(ctx, w)
		if !ok {
			return 0, false, nil
		}
		switch {
		case a < b:
			return -1, true, nil
		case a > b:
			return 1, true, nil
		}
		return 0, true, nil
	}
	return 0, false, nil
}

// exactDecimal returns an integer or DECIMAL value as a decimal.
func exactDecimal(v any) (decimal.Decimal, bool) {
	switch x := v.(type) {
	case decimal.Decimal:
		return x, true
	case decimal.NullDecimal:
		return x.Decimal, x.Valid
	case int8:
		return decimal.NewFromInt(int64(x)), true
	case int16:
		return decimal.NewFromInt(int64(x)), true
	case int32:
		return decimal.NewFromInt(int64(x)), true
	case int64:
		return decimal.NewFromInt(x), true
	case int:
		return decimal.NewFromInt(int64(x)), true
	case uint8:
		return decimal.NewFromInt(int64(x)), true
	case uint16:
		return decimal.NewFromInt(int64(x)), true
	case uint32:
		return decimal.NewFromInt(int64(x)), true
	case uint64:
		return uintDecimal(x), true
	case uint:
		return uintDecimal(uint64(x)), true
	}
	return decimal.Decimal{}, false
}

// mysqlDouble returns a number or string value as the double MySQL
// compares: a string by its numeric prefix, with warning 1292 for the
// rest.
func mysqlDouble(ctx *sql.Context, v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case string:
		return stringNumber(ctx, x, false), true
	}
	if d, ok := exactDecimal(v); ok {
		return d.InexactFloat64(), true
	}
	return 0, false
}

// uintDecimal returns u as a decimal, above the int64 range too.
func uintDecimal(u uint64) decimal.Decimal {
	if u <= math.MaxInt64 {
		return decimal.NewFromInt(int64(u))
	}
	return decimal.NewFromBigInt(new(big.Int).SetUint64(u), 0)
}

// warnDouble warns that s was truncated to a double; with once, not when
// the statement has that warning already.
func warnDouble(ctx *sql.Context, s string, once bool) {
	const format = "Truncated incorrect DOUBLE value: '%s'"
	if once && ctx.Session != nil {
		msg := fmt.Sprintf(format, s)
		for _, w := range ctx.Session.Warnings() {
			if w.Code == 1292 && w.Message == msg {
				return
			}
		}
	}
	ctx.Warn(1292, format, s)
}
