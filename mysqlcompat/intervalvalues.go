package mysqlcompat

import (
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// INTERVAL values that are not integers
//
// MySQL reads the value of INTERVAL n SECOND as a decimal when it has
// fractional digits (a DECIMAL, a float or a string): INTERVAL 1.5 SECOND
// is a second and a half, microseconds beyond the sixth digit dropped.
// The value of every other single unit is an integer: a DECIMAL or a
// float rounded (INTERVAL 1.5 DAY is 2 days, -1.5 is -2), a string read
// by its integer prefix with warning 1292 "Truncated incorrect INTEGER
// value" ('1.5' DAY is 1 day). GMS converted every value to an integer,
// rounding 1.5 SECOND to 2 and '1.5' DAY to 2.
//
// intervalValue (a value rule, textValues) gives an INTERVAL whose value is
// no integer a child that converts it as MySQL does: intervalInt, or for
// SECOND an intervalMicros under the unit MICROSECOND. Integer values
// keep GMS's INTERVAL, and its text in plans.
//
// Targets GMS v0.20.0 (expression/interval.go EvalDelta). Without it,
// TestValueSemanticsSpec (testdata/value_semantics) fails.

// singleUnits are the units GMS reads as one integer.
var singleUnits = map[string]bool{
	"MICROSECOND": true, "SECOND": true, "MINUTE": true, "HOUR": true, "DAY": true,
	"WEEK": true, "MONTH": true, "QUARTER": true, "YEAR": true,
}

// intervalValue rewrites e, an INTERVAL of a single unit whose value is not
// an integer, to read its value as MySQL does.
func intervalValue(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	iv, ok := e.(*expression.Interval)
	if !ok || !singleUnits[iv.Unit] {
		return e, transform.SameTree, nil
	}
	switch iv.Child.(type) {
	case *intervalInt, *intervalMicros:
		return e, transform.SameTree, nil
	}
	t := iv.Child.Type()
	if t == nil || types.IsInteger(t) || types.IsNull(iv.Child) || t == types.Null {
		return e, transform.SameTree, nil
	}
	if iv.Unit == "SECOND" {
		return expression.NewInterval(&intervalMicros{intervalNumber{child: iv.Child}}, "MICROSECOND"), transform.NewTree, nil
	}
	return expression.NewInterval(&intervalInt{intervalNumber{child: iv.Child}}, iv.Unit), transform.NewTree, nil
}

// intervalNumber holds what intervalInt and intervalMicros share: a child
// whose text they show.
type intervalNumber struct {
	child sql.Expression
}

func (n *intervalNumber) Resolved() bool             { return n.child.Resolved() }
func (n *intervalNumber) IsNullable() bool           { return n.child.IsNullable() }
func (n *intervalNumber) Type() sql.Type             { return types.Int64 }
func (n *intervalNumber) Children() []sql.Expression { return []sql.Expression{n.child} }
func (n *intervalNumber) String() string             { return n.child.String() }
func (n *intervalNumber) DebugString() string        { return sql.DebugString(n.child) }

// intervalInt is an INTERVAL's value as MySQL reads an integer from it.
type intervalInt struct{ intervalNumber }

func (n *intervalInt) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &intervalInt{intervalNumber{child: children[0]}}, nil
}

// Eval implements sql.Expression: an int64, or NULL.
func (n *intervalInt) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	switch x := v.(type) {
	case decimal.Decimal:
		return x.Round(0).IntPart(), nil
	case float64:
		return int64(math.RoundToEven(x)), nil
	case float32:
		return int64(math.RoundToEven(float64(x))), nil
	case string:
		return stringInterval(ctx, x), nil
	case []byte:
		return stringInterval(ctx, string(x)), nil
	}
	c, _, err := types.Int64.Convert(ctx, v)
	return c, err
}

// stringInterval reads s's integer prefix, warning 1292 when s holds more.
func stringInterval(ctx *sql.Context, s string) int64 {
	r := parseStrInt(s)
	if r.truncated {
		ctx.Warn(erTruncatedWrongValue, "Truncated incorrect INTEGER value: '%s'", s)
	}
	return int64(r.bits)
}

// intervalMicros is the value of INTERVAL n SECOND in microseconds, read
// as a decimal (digits past the sixth dropped).
type intervalMicros struct{ intervalNumber }

func (n *intervalMicros) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &intervalMicros{intervalNumber{child: children[0]}}, nil
}

// String implements sql.Expression: the child's, whose unit is written
// as SECOND (the INTERVAL shows MICROSECOND).
func (n *intervalMicros) String() string { return n.child.String() }

// Eval implements sql.Expression: an int64, or NULL.
func (n *intervalMicros) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	var d decimal.Decimal
	switch x := v.(type) {
	case decimal.Decimal:
		d = x
	case float64:
		d = decimal.NewFromFloat(x)
	case float32:
		d = decimal.NewFromFloat32(x)
	case string, []byte:
		s, _ := v.(string)
		if b, ok := v.([]byte); ok {
			s = string(b)
		}
		num, rest, ok := numberPrefix(s)
		if !ok || !onlySpace(rest) {
			ctx.Warn(erTruncatedWrongValue, "Truncated incorrect DECIMAL value: '%s'", s)
		}
		if !ok {
			return int64(0), nil
		}
		if strings.ContainsAny(num, "eE") {
			f, _, err := types.Float64.Convert(ctx, num)
			if err != nil {
				return nil, err
			}
			d = decimal.NewFromFloat(f.(float64))
		} else if d, err = decimal.NewFromString(num); err != nil {
			return nil, err
		}
	default:
		c, _, err := types.Int64.Convert(ctx, v)
		if err != nil || c == nil {
			return nil, err
		}
		return c.(int64) * 1_000_000, nil
	}
	return d.Shift(6).Truncate(0).IntPart(), nil
}
