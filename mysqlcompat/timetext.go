package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// Dates and times as text
//
// MySQL gives a DATE, DATETIME, TIMESTAMP or TIME its shown text wherever
// a string is wanted: CAST(t AS CHAR) of a TIME is '12:34:56' and
// CONCAT(d, '') of the zero date '0000-00-00'. GMS converts these values
// to strings with its string type's Convert, which knows no TIME value
// (CAST gave NULL, CONCAT failed with error 1105) and formats a date as
// time.Time does (the zero date came out as 0000-01-01).
//
// So a value rule (textValues, install.go) gives the date and time operands of CAST
// and CONVERT to a character string, of CONCAT and of CONCAT_WS a
// timeText: the operand's value as its type shows it to a client, the
// text the server sends. Other operands keep GMS's conversion.
//
// Targets GMS v0.20.0 (expression/convert.go, function/concat.go,
// concat_ws.go). Without it, TestTimeTextSpec (testdata/time_text)
// fails.

// textValues is the value rule of the corrections of this file,
// dateinterval.go, intervalvalues.go, derivedcollation.go, enumcompare.go,
// likeescapes.go and datespaces.go: one walk of
// the plan's expressions for all of them, and one of its nodes for the set
// operations.
func textValues(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource && len(ins.OnDupExprs) == 0 {
		// INSERT ... VALUES of literals: nothing to correct, and a walk
		// allocates.
		return n, transform.SameTree, nil
	}
	n, same, err := transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		same := transform.SameTree
		for _, f := range [...]func(*sql.Context, sql.Expression) (sql.Expression, transform.TreeIdentity, error){textTime, intervalValue, dateInterval, concatCollation, enumString, likeTrailingEscape, dateSpaces} {
			ne, id, err := f(ctx, e)
			if err != nil {
				return nil, transform.SameTree, err
			}
			if id == transform.NewTree {
				e, same = ne, transform.NewTree
			}
		}
		return e, same, nil
	})
	if err != nil || !hasSetOp(n) {
		return n, same, err
	}
	n, same2, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if u, ok := n.(*plan.SetOp); ok {
			return setOpCollations(ctx, u) // derivedcollation.go
		}
		return n, transform.SameTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same && same2, nil
}

// textTime gives the date and time operands of a string conversion, e, a
// timeText.
func textTime(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch x := e.(type) {
	case *expression.Convert:
		if !types.IsText(x.Type()) || !isDateOrTime(x.Child) {
			return e, transform.SameTree, nil
		}
	case boundedConcat, boundedConcatWS, *function.Concat, *function.ConcatWithSeparator:
		// This package's CONCAT and CONCAT_WS (stringlimits.go), or GMS's.
	default:
		return e, transform.SameTree, nil
	}
	children := e.Children()
	var changed []sql.Expression
	for i, c := range children {
		if !isDateOrTime(c) {
			continue
		}
		if changed == nil {
			changed = append([]sql.Expression(nil), children...)
		}
		changed[i] = &timeText{child: c}
	}
	if changed == nil {
		return e, transform.SameTree, nil
	}
	ne, err := e.WithChildren(changed...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ne, transform.NewTree, nil
}

// isDateOrTime reports whether e is a DATE, DATETIME, TIMESTAMP or TIME
// (not already a timeText).
func isDateOrTime(e sql.Expression) bool {
	if _, ok := e.(*timeText); ok {
		return false
	}
	t := e.Type()
	if t == nil {
		return false
	}
	switch t.Type() {
	case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp, sqltypes.Time:
		return true
	}
	return false
}

// timeText is a date or time expression's value as the text its type
// shows: what a string conversion of it gives in MySQL.
type timeText struct {
	child sql.Expression
}

var (
	_ sql.Expression         = (*timeText)(nil)
	_ sql.CollationCoercible = (*timeText)(nil)
)

func (t *timeText) Resolved() bool             { return t.child.Resolved() }
func (t *timeText) IsNullable() bool           { return t.child.IsNullable() }
func (t *timeText) Children() []sql.Expression { return []sql.Expression{t.child} }

// String implements sql.Expression: as the operand's, so plans and
// column names read as GMS's.
func (t *timeText) String() string { return t.child.String() }

// DebugString implements sql.DebugStringer.
func (t *timeText) DebugString() string { return sql.DebugString(t.child) }

// Type implements sql.Expression: a string long enough for the text.
func (t *timeText) Type() sql.Type { return timeTextType }

// timeTextType is long enough for the longest text: a DATETIME(6).
var timeTextType = types.MustCreateString(sqltypes.VarChar, 32, sql.Collation_Default)

// CollationCoercibility implements sql.CollationCoercible: a temporal
// value's text is in the connection's collation, coercible as a number is
// (5), as MySQL derives it; GMS gave the binary collation, which made
// CONCAT(t, 'x') binary.
func (t *timeText) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return ctx.GetCollation(), 5
}

func (t *timeText) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &timeText{child: children[0]}, nil
}

// Eval implements sql.Expression.
func (t *timeText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	typ := t.child.Type()
	if _, ok := v.(string); ok && typ.Type() != sqltypes.Time {
		// A value GMS types as a date but holds as its text.
		return v, nil
	}
	out, err := typ.SQL(ctx, nil, v)
	if err != nil {
		return nil, err
	}
	return string(out.Raw()), nil
}
