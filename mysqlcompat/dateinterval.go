package mysqlcompat

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// Date arithmetic with INTERVAL
//
// d + INTERVAL n unit, INTERVAL n unit + d and d - INTERVAL n unit are
// DATE_ADD and DATE_SUB in MySQL, typed as they are: a DATE plus days,
// months or years is a DATE ('2024-01-03'), plus hours a DATETIME. GMS's
// arithmetic types every such sum DATETIME, so d + INTERVAL 1 DAY showed
// '2024-01-03 00:00:00'. A value rule (textValues, install.go) gives these sums GMS's
// DATE_ADD and DATE_SUB, which type them as MySQL does; dateIntervalExpr keeps
// the arithmetic's text for plans and names.
//
// The zero date has no days to count from: MySQL's DATE_ADD and DATE_SUB
// of '0000-00-00' (a string, or a DATE or DATETIME column holding it, as
// written out of strict mode) are NULL with warning 1292 "Incorrect
// datetime value". GMS counted from 0000-01-01, which it holds for the
// zero date, and gave -0001-12-31 or failed with 1105 (outside of date
// range). The date operand of every DATE_ADD, DATE_SUB and date
// arithmetic with an INTERVAL is read through a zeroDateGuard.
//
// A TIME plus or minus an INTERVAL of days and smaller units is a TIME in
// MySQL, past 24 hours up to 838:59:59: TIME'23:00:00' + INTERVAL 2 HOUR is
// '25:00:00'. GMS's arithmetic made it a DATETIME of today and its
// DATE_ADD wrapped at a day; timeIntervalExpr computes it instead, NULL
// with warning 1441 past the TIME range or for months and years (as
// MariaDB does).
//
// Targets GMS v0.20.0 (expression/arithmetic.go, function/time_math.go).
// Without it, TestTimeTextSpec (testdata/time_text) fails.

// dateInterval replaces e, date arithmetic with an INTERVAL, DATE_ADD or
// DATE_SUB, by its MySQL form (rewriteInterval).
func dateInterval(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	ne, err := rewriteInterval(e)
	if err != nil || ne == nil {
		return e, transform.SameTree, err
	}
	return ne, transform.NewTree, nil
}

// rewriteInterval returns e, date arithmetic with an INTERVAL, DATE_ADD or
// DATE_SUB, as MySQL computes it: DATE_ADD and DATE_SUB for arithmetic on
// a DATE (dateIntervalExpr), a timeIntervalExpr for a TIME, and otherwise
// GMS's expression with its date operand guarded against the zero date.
// It returns nil when e is none of these or is already rewritten.
func rewriteInterval(e sql.Expression) (sql.Expression, error) {
	switch x := e.(type) {
	case *expression.Arithmetic:
		operand, iv, sub := arithInterval(x)
		switch {
		case iv == nil:
			return nil, nil
		case isTime(operand):
			return &timeIntervalExpr{time: operand, interval: iv, sub: sub, orig: x}, nil
		case isDate(operand) || isNumber(operand) || types.IsText(operand.Type()) || fractionalSeconds(operand, iv) != nil:
			var d sql.Expression
			var err error
			if sub {
				d, err = function.NewDateSub(guardZeroDate(operand), iv)
			} else {
				d, err = function.NewDateAdd(guardZeroDate(operand), iv)
			}
			if err != nil {
				return nil, err
			}
			return &dateIntervalExpr{Expression: d, arith: x, typ: fractionalSeconds(operand, iv)}, nil
		}
		if _, ok := operand.(*zeroDateGuard); ok {
			return nil, nil
		}
		l, r := x.LeftChild, x.RightChild
		if l == operand {
			l = guardZeroDate(l)
		} else {
			r = guardZeroDate(r)
		}
		return x.WithChildren(l, r)
	case *function.DateAdd:
		return rewriteDateFunc(x, x.Date, x.Interval, false)
	case *function.DateSub:
		return rewriteDateFunc(x, x.Date, x.Interval, true)
	}
	return nil, nil
}

// rewriteDateFunc is rewriteInterval of f, DATE_ADD (sub false) or
// DATE_SUB of date and iv.
func rewriteDateFunc(f sql.Expression, date sql.Expression, iv *expression.Interval, sub bool) (sql.Expression, error) {
	if isTime(date) {
		return &timeIntervalExpr{time: date, interval: iv, sub: sub, orig: f}, nil
	}
	if _, ok := date.(*zeroDateGuard); ok {
		return nil, nil
	}
	return f.WithChildren(guardZeroDate(date), iv)
}

// arithInterval returns the operand and the INTERVAL of a, arithmetic with
// an INTERVAL, and whether it is subtracted; iv is nil if a is other
// arithmetic.
func arithInterval(a *expression.Arithmetic) (operand sql.Expression, iv *expression.Interval, sub bool) {
	l, r := a.LeftChild, a.RightChild
	switch a.Op {
	case "+":
		if i, ok := l.(*expression.Interval); ok {
			if _, ok := r.(*expression.Interval); !ok {
				return r, i, false
			}
			return nil, nil, false
		}
		if i, ok := r.(*expression.Interval); ok {
			return l, i, false
		}
	case "-":
		if _, ok := l.(*expression.Interval); ok {
			return nil, nil, false
		}
		if i, ok := r.(*expression.Interval); ok {
			return l, i, true
		}
	}
	return nil, nil, false
}

// isDate reports whether e is a DATE. DATETIME and TIMESTAMP keep GMS's
// arithmetic, which types them as MySQL does (and whose values stay
// numbers where GMS's DATE_SUB of a STR_TO_DATE would give text); strings
// keep it too.
func isDate(e sql.Expression) bool {
	t := e.Type()
	return t != nil && types.IsDateType(t)
}

// isTime reports whether e is a TIME.
func isTime(e sql.Expression) bool {
	t := e.Type()
	return t != nil && t.Type() == sqltypes.Time
}

// fractionalSeconds returns the type of a DATETIME or TIMESTAMP operand
// plus iv, an INTERVAL of seconds with a fraction (intervalvalues.go), nil
// for other sums: a DATETIME with the fractional digits of both, as MySQL
// types it (GMS's arithmetic typed it DATETIME and rounded the seconds).
func fractionalSeconds(operand sql.Expression, iv *expression.Interval) sql.Type {
	m, ok := iv.Child.(*intervalMicros)
	if !ok {
		return nil
	}
	dt, ok := operand.Type().(sql.DatetimeType)
	if !ok || operand.Type().Type() == sqltypes.Date {
		return nil
	}
	digits := 6
	if d, ok := m.child.Type().(types.DecimalType_); ok {
		digits = int(d.Scale())
	}
	digits = min(max(digits, dt.Precision()), 6)
	return types.MustCreateDatetimeType(sqltypes.Datetime, digits)
}

// dateIntervalExpr is DATE_ADD or DATE_SUB written as arith; typ, when
// set, is the type of its values (fractionalSeconds).
type dateIntervalExpr struct {
	sql.Expression
	arith *expression.Arithmetic
	typ   sql.Type
}

// Type implements sql.Expression.
func (d *dateIntervalExpr) Type() sql.Type {
	if d.typ != nil {
		return d.typ
	}
	return d.Expression.Type()
}

// Eval implements sql.Expression: DATE_ADD's value, in typ.
func (d *dateIntervalExpr) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := d.Expression.Eval(ctx, row)
	if err != nil || v == nil || d.typ == nil {
		return v, err
	}
	v, _, err = d.typ.Convert(ctx, v)
	return v, err
}

var _ sql.CollationCoercible = (*dateIntervalExpr)(nil)

func (d *dateIntervalExpr) String() string      { return d.arith.String() }
func (d *dateIntervalExpr) DebugString() string { return sql.DebugString(d.arith) }

func (d *dateIntervalExpr) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, d.Expression)
}

// Children implements sql.Expression: the arithmetic's, in its order.
func (d *dateIntervalExpr) Children() []sql.Expression { return d.arith.Children() }

func (d *dateIntervalExpr) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return rewrittenWithChildren(d.arith, children)
}

// rewrittenWithChildren is orig, an expression rewriteInterval rewrote,
// with children, rewritten again.
func rewrittenWithChildren(orig sql.Expression, children []sql.Expression) (sql.Expression, error) {
	ne, err := orig.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	r, err := rewriteInterval(ne)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return ne, nil
	}
	return r, nil
}

// erDatetimeFunctionOverflow is MySQL's warning for a date or time
// function's result out of its type's range.
const erDatetimeFunctionOverflow = 1441

// maxTimeMicros is 838:59:59, the largest TIME, in microseconds.
const maxTimeMicros = ((838*60+59)*60 + 59) * 1_000_000

// timeIntervalExpr is a TIME plus or minus an INTERVAL (sub), a TIME as in
// MySQL; orig is the arithmetic, DATE_ADD or DATE_SUB it replaces, which
// gives its text and children.
type timeIntervalExpr struct {
	time     sql.Expression
	interval *expression.Interval
	sub      bool
	orig     sql.Expression
}

var _ sql.CollationCoercible = (*timeIntervalExpr)(nil)

func (t *timeIntervalExpr) Resolved() bool             { return t.orig.Resolved() }
func (t *timeIntervalExpr) IsNullable() bool           { return true }
func (t *timeIntervalExpr) Type() sql.Type             { return types.Time }
func (t *timeIntervalExpr) Children() []sql.Expression { return t.orig.Children() }
func (t *timeIntervalExpr) String() string             { return t.orig.String() }
func (t *timeIntervalExpr) DebugString() string        { return sql.DebugString(t.orig) }

func (t *timeIntervalExpr) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

func (t *timeIntervalExpr) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return rewrittenWithChildren(t.orig, children)
}

// Eval implements sql.Expression.
func (t *timeIntervalExpr) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.time.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	ts, err := types.Time.ConvertToTimespan(v)
	if err != nil {
		return nil, err
	}
	d, err := t.interval.EvalDelta(ctx, row)
	if err != nil || d == nil {
		return nil, err
	}
	if d.Years != 0 || d.Months != 0 {
		ctx.Warn(erDatetimeFunctionOverflow, "Datetime function: time field overflow")
		return nil, nil
	}
	// A part past a million days is past any TIME (838:59:59 from one
	// past -838:59:59 is under 70 days): refused before the sum, which
	// within these bounds cannot overflow, could wrap into the range.
	const days = 1_000_000
	if !within(d.Days, days) || !within(d.Hours, days*24) || !within(d.Minutes, days*24*60) ||
		!within(d.Seconds, days*24*3600) || !within(d.Microseconds, days*24*3600*1_000_000) {
		ctx.Warn(erDatetimeFunctionOverflow, "Datetime function: time field overflow")
		return nil, nil
	}
	delta := (((d.Days*24+d.Hours)*60+d.Minutes)*60+d.Seconds)*1_000_000 + d.Microseconds
	if t.sub {
		delta = -delta
	}
	res := int64(ts) + delta
	if res > maxTimeMicros || res < -maxTimeMicros {
		ctx.Warn(erDatetimeFunctionOverflow, "Datetime function: time field overflow")
		return nil, nil
	}
	return types.Timespan(res), nil
}

// within reports whether -limit <= n <= limit.
func within(n, limit int64) bool { return n >= -limit && n <= limit }

// erTruncatedWrongValue is MySQL's warning 1292, "Incorrect datetime
// value" here.
const erTruncatedWrongValue = 1292

// zeroTime is how GMS holds the zero date, 0000-00-00: 0000-01-01 UTC.
var zeroTime = time.Date(0, time.January, 1, 0, 0, 0, 0, time.UTC)

// guardZeroDate returns e read through a zeroDateGuard.
func guardZeroDate(e sql.Expression) sql.Expression {
	if _, ok := e.(*zeroDateGuard); ok {
		return e
	}
	return &zeroDateGuard{child: e}
}

// zeroDateGuard is the date operand of date arithmetic: its value, or
// NULL with warning 1292 for the zero date, from which MySQL does not
// count, and for a string that is no date.
type zeroDateGuard struct {
	child sql.Expression
}

var _ sql.CollationCoercible = (*zeroDateGuard)(nil)

func (g *zeroDateGuard) Resolved() bool             { return g.child.Resolved() }
func (g *zeroDateGuard) IsNullable() bool           { return true }
func (g *zeroDateGuard) Type() sql.Type             { return g.child.Type() }
func (g *zeroDateGuard) Children() []sql.Expression { return []sql.Expression{g.child} }

// String implements sql.Expression: the operand's, so plans and column
// names read as GMS's.
func (g *zeroDateGuard) String() string      { return g.child.String() }
func (g *zeroDateGuard) DebugString() string { return sql.DebugString(g.child) }

func (g *zeroDateGuard) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, g.child)
}

func (g *zeroDateGuard) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(g, len(children), 1)
	}
	return &zeroDateGuard{child: children[0]}, nil
}

// Eval implements sql.Expression.
func (g *zeroDateGuard) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := g.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	switch x := v.(type) {
	case time.Time:
		if x.Equal(zeroTime) {
			text := types.ZeroTimestampDatetimeStr
			if t := g.child.Type(); t != nil && t.Type() == sqltypes.Date {
				text = types.ZeroDateStr
			}
			ctx.Warn(erTruncatedWrongValue, "Incorrect datetime value: '%s'", text)
			return nil, nil
		}
	case string:
		// The zero date, and text that is no date ('2024-02-30'), which
		// GMS's arithmetic failed on with 1105.
		if isZeroDateText(x) {
			ctx.Warn(erTruncatedWrongValue, "Incorrect datetime value: '%s'", x)
			return nil, nil
		}
		if y, ok := fourDigitYear(x); ok {
			v = y
		}
		if _, _, err := types.DatetimeMaxPrecision.Convert(ctx, v); err != nil {
			ctx.Warn(erTruncatedWrongValue, "Incorrect datetime value: '%s'", x)
			return nil, nil
		}
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint, decimal.Decimal:
		// A number is a date as its digits are (numberdates.go).
		text, ok := numberDate(x)
		if ok {
			_, _, err := types.DatetimeMaxPrecision.Convert(ctx, text)
			ok = err == nil
		}
		if !ok {
			ctx.Warn(erTruncatedWrongValue, "Incorrect datetime value: '%v'", x)
			return nil, nil
		}
		return text, nil
	}
	return v, nil
}

// isZeroDateText reports whether s is the zero date's text, with or
// without a time: its year, month and day (digits between separators,
// before a space or a T) are all zeros. Other text is left to GMS's
// parsing.
func isZeroDateText(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r")
	parts, digits := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '0':
			digits++
		case c >= '1' && c <= '9':
			return false
		case c == ' ' || c == 'T':
			return parts == 2 && digits > 0
		case c == '-' || c == '/' || c == '.' || c == ':':
			if digits == 0 {
				return false
			}
			parts, digits = parts+1, 0
		default:
			return false
		}
	}
	return parts == 2 && digits > 0
}
