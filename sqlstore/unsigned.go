package sqlstore

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
	"github.com/dolthub/vitess/go/mysql"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// DECIMAL values into BIGINT UNSIGNED
//
// GMS converts a DECIMAL into BIGINT UNSIGNED through a float64, and its
// bound for the type is wrong (3 x MaxInt64): 18446744073709551616 (one
// past the largest value; an integer literal that large is a DECIMAL) was
// stored as 9223372036854775808, 99999999999999999999 as the largest value,
// and large in-range DECIMALs lost their low digits, all without an error.
// MySQL rounds the DECIMAL to an integer and fails with 1264 when it is
// out of range (under IGNORE: stores the nearest end, with a warning).
//
// exactUnsigned does that conversion exactly. It is applied to every value
// assigned to a BIGINT UNSIGNED column by UPDATE (rangeChecked), and to the
// VALUES of an INSERT or REPLACE (below): the result is a uint64, which
// GMS's conversion leaves alone. An INSERT ... SELECT is not covered.

// maxUint64 is math.MaxUint64 as a DECIMAL.
var maxUint64 = decimal.NewFromBigInt(new(big.Int).SetUint64(math.MaxUint64), 0)

// isUint64 reports whether typ is BIGINT UNSIGNED.
func isUint64(typ sql.Type) bool { return typ.Type() == sqltypes.Uint64 }

// exactUnsigned converts v, bound for a BIGINT UNSIGNED column, when it is
// a DECIMAL: rounded half away from zero, it returns the uint64 and true
// when in range; the nearest end and false when not. ok is false for
// other values, which GMS converts well enough.
func exactUnsigned(v any) (u uint64, inRange, ok bool) {
	d, isDec := v.(decimal.Decimal)
	if !isDec {
		return 0, false, false
	}
	r := d.Round(0)
	switch {
	case r.Sign() < 0:
		return 0, false, true
	case r.GreaterThan(maxUint64):
		return math.MaxUint64, false, true
	}
	return r.BigInt().Uint64(), true, true
}

// checkUnsignedInserts wraps the VALUES of an INSERT or REPLACE that go
// into BIGINT UNSIGNED columns in unsignedChecked. The VALUES node is the
// insert's source, or under the projection that fills in the columns the
// statement left out.
func checkUnsignedInserts(ins *plan.InsertInto) (sql.Node, transform.TreeIdentity, error) {
	dest := ins.Destination.Schema()
	if !slices.ContainsFunc(dest, func(c *sql.Column) bool { return isUint64(c.Type) }) {
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
		if j := dest.IndexOfColName(name); j >= 0 && isUint64(dest[j].Type) {
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
			if _, done := e.(*unsignedChecked); done {
				continue
			}
			if !cloned {
				tuples[r], cloned = slices.Clone(tuple), true
			}
			tuples[r][i] = &unsignedChecked{value: e, col: cols[i].Name, ignore: ins.Ignore}
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

// unsignedChecked is a value bound for the BIGINT UNSIGNED column col,
// converted by exactUnsigned: out of range it fails with 1264, or under
// ignore becomes the nearest end with MySQL's warning.
type unsignedChecked struct {
	value  sql.Expression
	col    string
	ignore bool
}

var _ sql.Expression = (*unsignedChecked)(nil)

// Eval implements sql.Expression.
func (u *unsignedChecked) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := u.value.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	x, inRange, ok := exactUnsigned(v)
	switch {
	case !ok:
		return v, nil
	case inRange:
		return x, nil
	case u.ignore:
		ctx.Warn(mysql.ERWarnDataOutOfRange, "Out of range value for column '%s'", u.col)
		return x, nil
	}
	return nil, sql.ErrValueOutOfRange.New(v, u.col)
}

// Type implements sql.Expression: what the column receives.
func (u *unsignedChecked) Type() sql.Type { return types.Uint64 }

// IsNullable implements sql.Expression.
func (u *unsignedChecked) IsNullable() bool { return u.value.IsNullable() }

// Resolved implements sql.Expression.
func (u *unsignedChecked) Resolved() bool { return u.value.Resolved() }

// Children implements sql.Expression.
func (u *unsignedChecked) Children() []sql.Expression { return []sql.Expression{u.value} }

// WithChildren implements sql.Expression.
func (u *unsignedChecked) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(u, len(children), 1)
	}
	return &unsignedChecked{value: children[0], col: u.col, ignore: u.ignore}, nil
}

// String implements sql.Expression: the value as written.
func (u *unsignedChecked) String() string { return u.value.String() }

// DebugString implements sql.DebugStringer.
func (u *unsignedChecked) DebugString() string {
	return fmt.Sprintf("unsignedChecked(%s, %s)", sql.DebugString(u.value), strings.ToLower(u.col))
}
