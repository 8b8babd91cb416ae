package mysqlcompat

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// Values into BIGINT and BIGINT UNSIGNED
//
// GMS converts a DECIMAL into BIGINT UNSIGNED through a float64, and its
// bound for the type is wrong (3 x MaxInt64): 18446744073709551616 (one
// past the largest value; an integer literal that large is a DECIMAL) was
// stored as 9223372036854775808, 99999999999999999999 as the largest value,
// and large in-range DECIMALs lost their low digits, all without an error.
// A string beyond BIGINT's range ('9223372036854775808', '1e19') went
// through a float64 too and was stored as -9223372036854775808, and so was
// the DECIMAL 9223372036854775807.6, which rounds past the end. MySQL
// rounds to an integer and fails with 1264 when the result is out of range
// (under IGNORE: stores the nearest end, with a warning).
//
// ExactInteger does that conversion exactly, for DECIMALs and for strings
// that hold a number (others are left to GMS, which truncates or fails as
// before). It is applied to every value assigned to a BIGINT or BIGINT
// UNSIGNED column by UPDATE (rangeChecked), and to the VALUES of an INSERT
// or REPLACE (below): the result is an int64 or uint64, which GMS's
// conversion leaves alone. An INSERT ... SELECT is not covered.
//
// Targets GMS v0.20.0. Without it, TestBigIntFromString and
// TestUnsignedFromDecimal fail.

// maxUint64 is math.MaxUint64 as a DECIMAL; minInt64 and maxInt64 are
// BIGINT's ends.
var (
	maxUint64 = decimal.NewFromBigInt(new(big.Int).SetUint64(math.MaxUint64), 0)
	minInt64  = decimal.NewFromInt(math.MinInt64)
	maxInt64  = decimal.NewFromInt(math.MaxInt64)
)

// isUint64 reports whether typ is BIGINT UNSIGNED.
func isUint64(typ sql.Type) bool { return typ.Type() == sqltypes.Uint64 }

// isBigInt reports whether typ is BIGINT or BIGINT UNSIGNED.
func isBigInt(typ sql.Type) bool { return typ.Type() == sqltypes.Int64 || isUint64(typ) }

// asDecimal returns v as a DECIMAL, as GMS converts it; ok is false when
// it does not convert.
func asDecimal(ctx *sql.Context, v any) (d decimal.Decimal, ok bool) {
	x, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return decimal.Decimal{}, false
	}
	d, ok = x.(decimal.Decimal)
	return d, ok
}

// ExactInteger converts v, bound for a column of the type typ (BIGINT or
// BIGINT UNSIGNED), when it is a DECIMAL or a string that holds a number:
// rounded half away from zero, it returns the int64 or uint64 and true
// when in range, the nearest end and false when not. ok is false for other
// values, which GMS converts well enough.
func ExactInteger(typ sql.Type, v any) (x any, inRange, ok bool) {
	var d decimal.Decimal
	switch t := v.(type) {
	case decimal.Decimal:
		d = t
	case string:
		p, err := decimal.NewFromString(strings.TrimSpace(t))
		if err != nil {
			return nil, false, false
		}
		d = p
	default:
		return nil, false, false
	}
	r := d.Round(0)
	if isUint64(typ) {
		switch {
		case r.Sign() < 0:
			return uint64(0), false, true
		case r.GreaterThan(maxUint64):
			return uint64(math.MaxUint64), false, true
		}
		return r.BigInt().Uint64(), true, true
	}
	switch {
	case r.LessThan(minInt64):
		return int64(math.MinInt64), false, true
	case r.GreaterThan(maxInt64):
		return int64(math.MaxInt64), false, true
	}
	return r.IntPart(), true, true
}

// checkBigIntInserts wraps the VALUES of an INSERT or REPLACE that go
// into BIGINT and BIGINT UNSIGNED columns in bigIntChecked. The VALUES node is the
// insert's source, or under the projection that fills in the columns the
// statement left out.
func checkBigIntInserts(ins *plan.InsertInto) (sql.Node, transform.TreeIdentity, error) {
	dest := ins.Destination.Schema()
	if !slices.ContainsFunc(dest, func(c *sql.Column) bool { return isBigInt(c.Type) }) {
		return ins, transform.SameTree, nil // most tables: no allocation
	}
	names := ins.ColumnNames
	if len(names) == 0 {
		for _, c := range dest {
			names = append(names, c.Name)
		}
	}
	cols := make([]*sql.Column, len(names))
	some := false
	for i, name := range names {
		if j := dest.IndexOfColName(name); j >= 0 && isBigInt(dest[j].Type) {
			cols[i], some = dest[j], true
		}
	}
	if !some {
		return ins, transform.SameTree, nil
	}
	var vals *plan.Values
	proj, _ := ins.Source.(*plan.Project)
	switch src := ins.Source.(type) {
	case *plan.Values:
		vals = src
	case *plan.Project:
		vals, _ = src.Child.(*plan.Values)
	}
	if vals == nil {
		return ins, transform.SameTree, nil
	}
	tuples := make([][]sql.Expression, len(vals.ExpressionTuples))
	changed := false
	for r, tuple := range vals.ExpressionTuples {
		tuples[r] = tuple
		cloned := false
		for i, e := range tuple {
			if i >= len(cols) || cols[i] == nil {
				continue
			}
			if _, done := e.(*bigIntChecked); done {
				continue
			}
			if !cloned {
				tuples[r], cloned = slices.Clone(tuple), true
			}
			tuples[r][i] = &bigIntChecked{value: e, col: cols[i].Name, typ: cols[i].Type, ignore: ins.Ignore}
			changed = true
		}
	}
	if !changed {
		return ins, transform.SameTree, nil
	}
	nv := *vals
	nv.ExpressionTuples = tuples
	var src sql.Node = &nv
	if proj != nil {
		var err error
		if src, err = proj.WithChildren(src); err != nil {
			return nil, transform.SameTree, err
		}
	}
	return ins.WithSource(src), transform.NewTree, nil
}

// bigIntChecked is a value bound for the column col of the type typ
// (BIGINT or BIGINT UNSIGNED), converted by ExactInteger: out of range it
// fails with 1264, or under ignore becomes the nearest end with MySQL's
// warning.
type bigIntChecked struct {
	value  sql.Expression
	col    string
	typ    sql.Type
	ignore bool
}

var _ sql.Expression = (*bigIntChecked)(nil)

// Eval implements sql.Expression.
func (u *bigIntChecked) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := u.value.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	x, inRange, ok := ExactInteger(u.typ, v)
	switch {
	case !ok:
		return v, nil
	case inRange:
		return x, nil
	case lenientWrites(ctx, u.ignore):
		return v, nil // the INSERT's source adjusts it, naming the row (lenient.go)
	}
	return nil, sql.ErrValueOutOfRange.New(v, u.col)
}

// Type implements sql.Expression: what the column receives.
func (u *bigIntChecked) Type() sql.Type { return u.typ }

// IsNullable implements sql.Expression.
func (u *bigIntChecked) IsNullable() bool { return u.value.IsNullable() }

// Resolved implements sql.Expression.
func (u *bigIntChecked) Resolved() bool { return u.value.Resolved() }

// Children implements sql.Expression.
func (u *bigIntChecked) Children() []sql.Expression { return []sql.Expression{u.value} }

// WithChildren implements sql.Expression.
func (u *bigIntChecked) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(u, len(children), 1)
	}
	nu := *u
	nu.value = children[0]
	return &nu, nil
}

// String implements sql.Expression: the value as written.
func (u *bigIntChecked) String() string { return u.value.String() }

// DebugString implements sql.DebugStringer.
func (u *bigIntChecked) DebugString() string {
	return fmt.Sprintf("bigIntChecked(%s, %s %s)", sql.DebugString(u.value), strings.ToLower(u.col), u.typ)
}
