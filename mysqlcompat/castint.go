package mysqlcompat

import (
	"math"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// CAST of strings to integers
//
// GMS converts a string in CAST(s AS SIGNED) and CAST(s AS UNSIGNED) as a
// number of any form, rounded, and gives 0 without a warning for a string
// that is not all number: CAST('7x' AS SIGNED) was 0, CAST('1e3' AS
// SIGNED) 1000 and CAST('3.7' AS SIGNED) 4. MySQL reads the longest
// integer prefix: leading spaces and tabs, a sign, decimal digits; trailing
// white space is allowed and anything else is ignored with warning 1292
// ("Truncated incorrect INTEGER value"), so those are 7, 1 and 3. A
// prefix beyond 64 bits stops at the end of the range (1292): a positive
// one at 18446744073709551615, which as SIGNED is -1, a negative one at
// -9223372036854775808. A positive value above the signed range cast to
// SIGNED wraps to its negative complement, and a negative value cast to
// UNSIGNED to its positive complement, each with warning 1105.
//
// GMS also cast a DATE, DATETIME or TIMESTAMP to its Unix time, and a TIME
// to 0, where MySQL gives the number its digits make: 20200102,
// 20200102030405, -123456 for '-12:34:56', the seconds rounded.
//
// So an analyzer rule (install.go), run in GMS's once-before batch (before
// index lookups are planned: they evaluate a constant CAST for their
// ranges) and again with the value rules, replaces each CAST to SIGNED or
// UNSIGNED of a character or binary string (not a BLOB: GMS reads hex
// literals, typed as BLOBs, as numbers, as MySQL does), of a date, a time
// and CURDATE() (a string to GMS) with castInt, which converts as MySQL
// does and allocates nothing unless it warns. Other operands (numbers,
// decimals, JSON, YEAR) keep GMS's conversion.
//
// Targets GMS v0.20.0. Without it, TestCastIntegerSpec
// (testdata/cast_integer) fails.

// castStringInts replaces CAST(x AS SIGNED|UNSIGNED) of a string or a date
// with castInt.
func castStringInts(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource && len(ins.OnDupExprs) == 0 {
		// INSERT ... VALUES of literals: no CAST, and a walk allocates.
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		c, ok := e.(*expression.Convert)
		if !ok {
			// ENUMs compared with string literals (enumcompare.go) and
			// string literals compared with numbers (numcompare.go), in
			// the same walk.
			if ne, same, err := enumLiterals(ctx, e); err != nil || same == transform.NewTree {
				return ne, same, err
			}
			return numStringExpr(ctx, e)
		}
		from := castOperand(c.Child)
		if from == castOther {
			return e, transform.SameTree, nil
		}
		// The target is unexported; the type tells it.
		switch c.Type() {
		case types.Int64:
			return &castInt{conv: c, from: from}, transform.NewTree, nil
		case types.Uint64:
			return &castInt{conv: c, from: from, unsigned: true}, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// castFrom is the kind of operand castInt converts.
type castFrom uint8

const (
	castOther    castFrom = iota // left to GMS
	castString                   // a character or binary string
	castDatetime                 // a DATE, DATETIME or TIMESTAMP: a time.Time
	castTime                     // a TIME: a types.Timespan
	castCurDate                  // CURDATE(), which GMS types as a string
)

// castOperand returns the kind of e for castInt.
func castOperand(e sql.Expression) castFrom {
	if _, ok := e.(function.CurrDate); ok {
		return castCurDate
	}
	t := e.Type()
	if t == nil {
		return castOther
	}
	switch t.Type() {
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text, sqltypes.Binary, sqltypes.VarBinary:
		return castString
	case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
		return castDatetime
	case sqltypes.Time:
		return castTime
	}
	return castOther
}

// castInt is CAST(s AS SIGNED) or CAST(s AS UNSIGNED) of a string s, as
// MySQL converts it. It keeps GMS's Convert for everything else about the
// expression (its name, type, nullability), and for a value that is not a
// string after all.
type castInt struct {
	conv     *expression.Convert
	from     castFrom
	unsigned bool
}

var _ sql.Expression = (*castInt)(nil)
var _ sql.CollationCoercible = (*castInt)(nil)

// Resolved implements sql.Expression.
func (c *castInt) Resolved() bool { return c.conv.Resolved() }

// IsNullable implements sql.Expression.
func (c *castInt) IsNullable() bool { return c.conv.IsNullable() }

// Type implements sql.Expression.
func (c *castInt) Type() sql.Type { return c.conv.Type() }

// Children implements sql.Expression.
func (c *castInt) Children() []sql.Expression { return c.conv.Children() }

// String implements sql.Expression: as GMS's, so plans print the same.
func (c *castInt) String() string { return c.conv.String() }

// DebugString implements sql.DebugStringer.
func (c *castInt) DebugString() string { return c.conv.DebugString() }

// CollationCoercibility implements sql.CollationCoercible.
func (c *castInt) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return c.conv.CollationCoercibility(ctx)
}

// WithChildren implements sql.Expression.
func (c *castInt) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	conv, err := c.conv.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &castInt{conv: conv.(*expression.Convert), from: c.from, unsigned: c.unsigned}, nil
}

// Eval implements sql.Expression.
func (c *castInt) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	v, err := c.conv.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if c.from != castString {
		return c.evalDate(ctx, row, v)
	}
	var r strInt
	switch s := v.(type) {
	case string:
		r = parseStrInt(s)
		if r.truncated {
			ctx.Warn(1292, "Truncated incorrect INTEGER value: '%s'", s)
		}
	case []byte:
		r = parseStrInt(s)
		if r.truncated {
			ctx.Warn(1292, "Truncated incorrect INTEGER value: '%s'", s)
		}
	default:
		return c.conv.Eval(ctx, row)
	}
	// MySQL warns of the complement whether or not the string was
	// truncated, but not when the value was out of range.
	if c.unsigned {
		if r.negative {
			ctx.Warn(1105, "Cast to unsigned converted negative integer to its positive complement")
		}
		return r.bits, nil
	}
	if !r.negative && !r.overflow && r.bits > math.MaxInt64 {
		ctx.Warn(1105, "Cast to signed converted positive out-of-range integer to its negative complement")
	}
	return int64(r.bits), nil
}

// strInt is a string read as an integer as MySQL's my_strtoll10 reads it.
type strInt struct {
	bits      uint64 // the value, two's complement when negative
	negative  bool   // the string had a minus sign and was in range
	overflow  bool   // the integer was beyond the range of 64 bits
	truncated bool   // something other than the integer, or overflow: 1292
}

// parseStrInt reads the integer at the start of s: spaces and tabs, an
// optional sign, decimal digits, then white space. A string with anything else,
// no digits, or a value beyond 64 bits is truncated: the value read so
// far, or the end of the range it passed (18446744073709551615, or
// -9223372036854775808 with a minus sign).
func parseStrInt[T string | []byte](s T) strInt {
	// Before the number, spaces and tabs only: a string that starts with
	// a newline is 0 in MySQL.
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	overflow := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			overflow = true
			continue
		}
		u = u*10 + d
	}
	if i == start {
		return strInt{truncated: true}
	}
	if neg && u > 1<<63 {
		overflow = true
	}
	end := i
	for end < len(s) && isSpace(s[end]) {
		end++
	}
	r := strInt{truncated: end != len(s)}
	switch {
	case overflow && neg:
		r.bits, r.overflow, r.truncated = 1<<63, true, true
	case overflow:
		r.bits, r.overflow, r.truncated = math.MaxUint64, true, true
	case neg:
		r.bits, r.negative = -u, true
	default:
		r.bits = u
	}
	return r
}

// isSpace reports whether b is ASCII white space: what MySQL allows after
// the number without a warning.
func isSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// evalDate converts v, the value of a DATE, DATETIME, TIMESTAMP or TIME,
// or of CURDATE(), as MySQL does: the number its digits make, YYYYMMDD,
// YYYYMMDDhhmmss or hhmmss, the seconds rounded (truncated under the SQL
// mode TIME_TRUNCATE_FRACTIONAL), 0 for the zero date. GMS gave a date's
// Unix time and 0 for a TIME.
func (c *castInt) evalDate(ctx *sql.Context, row sql.Row, v interface{}) (interface{}, error) {
	var n uint64
	switch x := v.(type) {
	case time.Time:
		n = datetimeInt(ctx, x, c.conv.Child.Type().Type() == sqltypes.Date)
	case types.Timespan:
		// hhmmss, negative for a negative TIME; UNSIGNED keeps the bits
		// (MySQL's CAST takes the TIME's integer as it is).
		n = timeInt(ctx, x)
	case string:
		// CURDATE(): "YYYY-MM-DD".
		for i := 0; i < len(x); i++ {
			if x[i] >= '0' && x[i] <= '9' {
				n = n*10 + uint64(x[i]-'0')
			}
		}
	default:
		return c.conv.Eval(ctx, row)
	}
	if c.unsigned {
		return n, nil
	}
	return int64(n), nil
}

// timeInt returns t as the integer hhmmss, the seconds rounded as in
// datetimeInt, in two's complement when t is negative.
func timeInt(ctx *sql.Context, t types.Timespan) uint64 {
	us := t.AsMicroseconds()
	neg := us < 0
	abs := uint64(us)
	if neg {
		abs = -abs
	}
	secs := abs / 1_000_000
	if abs%1_000_000 >= 500_000 && !sql.LoadSqlMode(ctx).ModeEnabled("TIME_TRUNCATE_FRACTIONAL") {
		secs++
	}
	n := secs/3600*10000 + secs/60%60*100 + secs%60
	if neg {
		return -n
	}
	return n
}

// zeroDate is GMS's value of the zero date, '0000-00-00'.
var zeroDate = time.Unix(-62167219200, 0).UTC()

// datetimeInt returns t as the integer YYYYMMDD (date) or YYYYMMDDhhmmss.
func datetimeInt(ctx *sql.Context, t time.Time, date bool) uint64 {
	if t.Equal(zeroDate) {
		return 0
	}
	if date {
		return uint64(t.Year())*10000 + uint64(t.Month())*100 + uint64(t.Day())
	}
	// Read only here: loading the mode allocates.
	if t.Nanosecond() >= 500_000_000 && !sql.LoadSqlMode(ctx).ModeEnabled("TIME_TRUNCATE_FRACTIONAL") {
		t = t.Add(time.Second)
	}
	d := uint64(t.Year())*10000 + uint64(t.Month())*100 + uint64(t.Day())
	return d*1_000_000 + uint64(t.Hour())*10000 + uint64(t.Minute())*100 + uint64(t.Second())
}
