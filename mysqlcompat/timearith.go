package mysqlcompat

import (
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// ADDTIME and SUBTIME
//
// ADDTIME(expr1, expr2) and SUBTIME(expr1, expr2) add a TIME to (or take
// it from) a TIME or a DATETIME: a TIME's result is a TIME past a day, up
// to 838:59:59 (beyond, 838:59:59 with warning 1292 "Truncated incorrect
// time value"), a DATE's, DATETIME's or TIMESTAMP's a DATETIME, and a
// string's a string of the kind its text is. GMS v0.20.0 has neither
// function (error 1305), so Function gives them, per engine. Without it,
// TestTimeTextSpec (testdata/time_text) fails.

func newAddTime(l, r sql.Expression) sql.Expression {
	return &addTime{BinaryExpressionStub: expression.BinaryExpressionStub{LeftChild: l, RightChild: r}}
}

func newSubTime(l, r sql.Expression) sql.Expression {
	return &addTime{BinaryExpressionStub: expression.BinaryExpressionStub{LeftChild: l, RightChild: r}, sub: true}
}

// addTime is ADDTIME, or SUBTIME when sub.
type addTime struct {
	expression.BinaryExpressionStub
	sub bool
}

var (
	_ sql.FunctionExpression = (*addTime)(nil)
	_ sql.CollationCoercible = (*addTime)(nil)
)

func (a *addTime) FunctionName() string {
	if a.sub {
		return "subtime"
	}
	return "addtime"
}

func (a *addTime) Description() string {
	if a.sub {
		return "subtracts expr2 from expr1."
	}
	return "adds expr2 to expr1."
}

func (a *addTime) String() string {
	return fmt.Sprintf("%s(%s,%s)", a.FunctionName(), a.LeftChild, a.RightChild)
}

func (a *addTime) IsNullable() bool { return true }

// Type implements sql.Expression: a TIME for a TIME, a DATETIME for a
// date type, else a string.
func (a *addTime) Type() sql.Type {
	switch t := a.LeftChild.Type(); {
	case t == nil:
	case t.Type() == sqltypes.Time:
		return types.Time
	case types.IsDateType(t) || types.IsDatetimeType(t) || types.IsTimestampType(t):
		return types.DatetimeMaxPrecision
	}
	return addTimeTextType
}

// addTimeTextType holds the longest text: a DATETIME(6).
var addTimeTextType = types.MustCreateString(sqltypes.VarChar, 32, sql.Collation_Default)

func (a *addTime) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	if types.IsText(a.Type()) {
		return ctx.GetCollation(), 4
	}
	return sql.Collation_binary, 5
}

func (a *addTime) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 2)
	}
	return &addTime{BinaryExpressionStub: expression.BinaryExpressionStub{LeftChild: children[0], RightChild: children[1]}, sub: a.sub}, nil
}

// Eval implements sql.Expression.
func (a *addTime) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, err := a.LeftChild.Eval(ctx, row)
	if err != nil || l == nil {
		return nil, err
	}
	r, err := a.RightChild.Eval(ctx, row)
	if err != nil || r == nil {
		return nil, err
	}
	delta, ok := timeValue(ctx, r)
	if !ok {
		return nil, nil
	}
	if a.sub {
		delta = -delta
	}
	text := false
	switch x := l.(type) {
	case time.Time:
		if x.Equal(zeroTime) {
			text := types.ZeroTimestampDatetimeStr
			if t := a.LeftChild.Type(); t != nil && t.Type() == sqltypes.Date {
				text = types.ZeroDateStr
			}
			ctx.Warn(erTruncatedWrongValue, "Incorrect datetime value: '%s'", text)
			return nil, nil
		}
		return addToDatetime(x, delta), nil
	case types.Timespan:
		return addToTime(ctx, int64(x), delta), nil
	case int64, int32, uint64, uint32, decimal.Decimal:
		// A number past the largest TIME (838:59:59 as 8385959) is a
		// datetime's digits (numberdates.go).
		if d, ok := numberDate(x); ok && len(d) > len("2006-01-02") {
			l = d
		}
	}
	switch x := l.(type) {
	case string:
		text = true
		if d, ok := digitsDatetime(x); ok {
			x = d
		}
		if hasDatePart(x) {
			t, _, err := types.DatetimeMaxPrecision.Convert(ctx, x)
			if err != nil || isZeroDateText(x) {
				ctx.Warn(erTruncatedWrongValue, "Incorrect datetime value: '%s'", x)
				return nil, nil
			}
			res := addToDatetime(t.(time.Time), delta)
			if res == nil {
				return nil, nil
			}
			return res.(time.Time).Format(sql.TimestampDatetimeLayout), nil
		}
	}
	base, ok := timeValue(ctx, l)
	if !ok {
		return nil, nil
	}
	res := addToTime(ctx, int64(base), delta)
	if text && res != nil {
		return res.(types.Timespan).String(), nil
	}
	return res, nil
}

// timeValue returns v read as a TIME, in microseconds; false, with
// warning 1292, if it is none.
func timeValue(ctx *sql.Context, v any) (int64, bool) {
	if s, ok := v.(string); ok {
		// 'D hh:mm:ss', days before the time, which GMS does not read.
		if days, rest, neg, ok := dayPrefix(s); ok {
			ts, err := types.Time.ConvertToTimespan(rest)
			if err == nil && ts >= 0 && days <= 34 {
				v := days*24*3_600_000_000 + int64(ts)
				if neg {
					v = -v
				}
				return v, true
			}
		}
	}
	ts, err := types.Time.ConvertToTimespan(v)
	if err != nil {
		ctx.Warn(erTruncatedWrongValue, "Truncated incorrect time value: '%v'", v)
		return 0, false
	}
	return int64(ts), true
}

// dayPrefix splits s, '[-]D rest', into its days, the rest, and whether
// the whole is negative (its sign applies to the days and the time);
// false if s does not begin with a number of days and a space.
func dayPrefix(s string) (days int64, rest string, neg, ok bool) {
	s = strings.TrimLeft(s, " ")
	if neg = strings.HasPrefix(s, "-"); neg {
		s = s[1:]
	}
	i := 0
	for i < len(s) && i < 3 && s[i] >= '0' && s[i] <= '9' {
		days = days*10 + int64(s[i]-'0')
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ' ' {
		return 0, "", false, false
	}
	return days, strings.TrimLeft(s[i:], " "), neg, true
}

// addToDatetime returns t plus delta microseconds, nil past the DATETIME
// range.
func addToDatetime(t time.Time, delta int64) any {
	res := t.Add(time.Duration(delta) * time.Microsecond)
	if res.Year() < 0 || res.Year() > 9999 {
		return nil
	}
	return res
}

// addToTime returns the TIME base plus delta microseconds, at the end of
// the TIME range with warning 1292 past it.
func addToTime(ctx *sql.Context, base, delta int64) any {
	res := base + delta
	if res > maxTimeMicros || res < -maxTimeMicros {
		text := types.Timespan(res).String()
		if res > 0 {
			res = maxTimeMicros
		} else {
			res = -maxTimeMicros
		}
		ctx.Warn(erTruncatedWrongValue, "Truncated incorrect time value: '%s'", text)
	}
	return types.Timespan(res)
}

// hasDatePart reports whether s, an operand of ADDTIME, is a date and
// time rather than a time: a '-' or '/' before its first space, after
// the sign of a negative time.
func hasDatePart(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "-")
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	return strings.ContainsAny(s, "-/")
}

// digitsDatetime returns s, 12 or 14 digits (YYMMDDhhmmss,
// YYYYMMDDhhmmss) and an optional fraction, as a datetime's text: MySQL
// reads such a string as a datetime, not a TIME.
func digitsDatetime(s string) (string, bool) {
	t := strings.TrimSpace(s)
	digits, frac := t, ""
	if i := strings.IndexByte(t, '.'); i >= 0 {
		digits, frac = t[:i], t[i:]
	}
	if len(digits) != 12 && len(digits) != 14 {
		return s, false
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return s, false
		}
		n = n*10 + uint64(digits[i]-'0')
	}
	d, ok := numberDate(n)
	if !ok {
		return s, false
	}
	return d + frac, true
}

// timeFunctions are the functions of this file Function gives.
var timeFunctions = map[string]sql.Function{
	"addtime": sql.Function2{Name: "addtime", Fn: newAddTime},
	"subtime": sql.Function2{Name: "subtime", Fn: newSubTime},
}
