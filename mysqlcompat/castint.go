package mysqlcompat

import (
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
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
// So an analyzer rule (install.go) replaces each CAST to SIGNED or
// UNSIGNED of a character or binary string (not a BLOB: GMS reads hex
// literals, typed as BLOBs, as numbers, as MySQL does) with castInt, which
// parses as MySQL does and allocates nothing unless it warns. Other
// operands (numbers, decimals, dates, JSON) keep GMS's conversion.
//
// Targets GMS v0.20.0. Without it, TestCastIntegerSpec
// (testdata/cast_integer) fails.

// castStringInts replaces CAST(string AS SIGNED|UNSIGNED) with castInt.
func castStringInts(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource && len(ins.OnDupExprs) == 0 {
		// INSERT ... VALUES of literals: no CAST, and a walk allocates.
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		c, ok := e.(*expression.Convert)
		if !ok || !castableString(c.Child.Type()) {
			return e, transform.SameTree, nil
		}
		// The target is unexported; the type tells it.
		switch c.Type() {
		case types.Int64:
			return &castInt{conv: c}, transform.NewTree, nil
		case types.Uint64:
			return &castInt{conv: c, unsigned: true}, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// castableString reports whether t is a string type that MySQL reads as
// text in CAST to an integer.
func castableString(t sql.Type) bool {
	if t == nil {
		return false
	}
	switch t.Type() {
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text, sqltypes.Binary, sqltypes.VarBinary:
		return true
	}
	return false
}

// castInt is CAST(s AS SIGNED) or CAST(s AS UNSIGNED) of a string s, as
// MySQL converts it. It keeps GMS's Convert for everything else about the
// expression (its name, type, nullability), and for a value that is not a
// string after all.
type castInt struct {
	conv     *expression.Convert
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
	return &castInt{conv: conv.(*expression.Convert), unsigned: c.unsigned}, nil
}

// Eval implements sql.Expression.
func (c *castInt) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	v, err := c.conv.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
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
