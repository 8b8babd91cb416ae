package mysqlcompat

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// String functions bounded by max_allowed_packet
//
// GMS builds the result of REPEAT, LPAD, RPAD, SPACE, CONCAT, CONCAT_WS and
// REPLACE whatever its size: SELECT REPEAT('x', 3221225472) asks for a
// 2 GiB string (the count is clamped to 32 bits) and more as the result is
// copied, and a process short of that much memory dies with "fatal error:
// out of memory", which no recover catches. MySQL computes the size first:
// a result longer than the session's max_allowed_packet is NULL with
// warning 1301 ("Result of repeat() was larger than max_allowed_packet
// (67108864) - truncated"). The functions here do the same, with the
// session's value (the embedded engine has no wire, but the variable is
// there and SET changes it), and the result is built only when it fits.
//
// Sizes are of the result's bytes, exact: MySQL checks LPAD and RPAD
// against the length times the character set's longest character, a
// bound that refuses some results that would fit.
//
// A database provider resolves these names (Function) before GMS's
// built-in registry (analyzer.Catalog.Function asks the provider first),
// so each engine whose provider does uses them and GMS's package state is
// left alone. INSERT(str, pos, len, newstr), which GMS lacks, is here too.
//
// Targets GMS v0.20.0. Without it, TestStringLimitsSpec
// (testdata/string_limits) fails.

// maxAllowedPacketVar is the session variable the results are bounded by.
const maxAllowedPacketVar = "max_allowed_packet"

// erWarnAllowedPacketOverflowed is MySQL's warning 1301
// (ER_WARN_ALLOWED_PACKET_OVERFLOWED), which vitess does not name.
const erWarnAllowedPacketOverflowed = 1301

// minMaxAllowedPacket is the least value max_allowed_packet takes: a result
// no longer fits whatever the session's value, so the variable is not read.
const minMaxAllowedPacket = 1024

// boundedStringFunctions are the functions Function puts before GMS's.
var boundedStringFunctions = map[string]sql.Function{
	"repeat":    sql.Function2{Name: "repeat", Fn: newBoundedRepeat},
	"space":     sql.Function1{Name: "space", Fn: newBoundedSpace},
	"lpad":      sql.FunctionN{Name: "lpad", Fn: newBoundedLeftPad},
	"rpad":      sql.FunctionN{Name: "rpad", Fn: newBoundedRightPad},
	"concat":    sql.FunctionN{Name: "concat", Fn: newBoundedConcat},
	"concat_ws": sql.FunctionN{Name: "concat_ws", Fn: newBoundedConcatWS},
	"replace":   sql.Function3{Name: "replace", Fn: newBoundedReplace},
	"insert":    sql.Function4{Name: "insert", Fn: newInsertString},
}

// Function returns the function of that name this package defines in
// place of GMS's built-in (REPEAT, SPACE, LPAD, RPAD, CONCAT, CONCAT_WS,
// REPLACE, and INSERT, which GMS lacks), for a database provider's
// sql.FunctionProvider: GMS's analyzer asks the provider before its own
// registry, so the functions are per engine. Names come lower case.
func Function(name string) (sql.Function, bool) {
	if f, ok := generatedValuesFunction(name); ok { // genvalues.go
		return f, true
	}
	if f, ok := exactLiteralFunction(name); ok { // numliteral.go
		return f, true
	}
	if f, ok := timeFunctions[name]; ok { // timearith.go
		return f, true
	}
	f, ok := boundedStringFunctions[name]
	return f, ok
}

// resultFits reports whether a result of size bytes (negative: larger than
// an int holds) fits the session's max_allowed_packet; when it does not, it
// records warning 1301 for function fn. Results of up to
// minMaxAllowedPacket bytes fit without a look at the session.
func resultFits(ctx *sql.Context, fn string, size int64) bool {
	if size >= 0 && size <= minMaxAllowedPacket {
		return true
	}
	limit := maxAllowedPacket(ctx)
	if size >= 0 && size <= limit {
		return true
	}
	ctx.Warn(erWarnAllowedPacketOverflowed, "Result of %s() was larger than max_allowed_packet (%d) - truncated", fn, limit)
	return false
}

// maxAllowedPacket returns the session's max_allowed_packet (the engine's
// default when the session has none).
func maxAllowedPacket(ctx *sql.Context) int64 {
	if ctx != nil && ctx.Session != nil {
		if v, err := ctx.GetSessionVariable(ctx, maxAllowedPacketVar); err == nil {
			if n, ok := IntValue(v); ok {
				return n
			}
		}
	}
	return 1 << 30
}

// IntValue returns the value of an integer system variable as an int64
// (a uint64 past math.MaxInt64 as math.MaxInt64).
func IntValue(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case uint64:
		return int64(min(n, math.MaxInt64)), true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case uint32:
		return int64(n), true
	}
	return 0, false
}

// mulSize returns a*b, or -1 when it overflows (both are not negative).
func mulSize(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return -1
	}
	return a * b
}

// evalString evaluates e as GMS's string functions do: nil for NULL,
// otherwise the value converted to text.
func evalString(ctx *sql.Context, e sql.Expression, row sql.Row) (s string, null bool, err error) {
	v, err := e.Eval(ctx, row)
	if err != nil || v == nil {
		return "", true, err
	}
	if s, err = valueText(ctx, v); err != nil {
		return "", true, err
	}
	return s, false, nil
}

// evalInt evaluates e as an integer; an out of range value comes clamped
// to int64.
func evalInt(ctx *sql.Context, e sql.Expression, row sql.Row) (n int64, null bool, err error) {
	v, err := e.Eval(ctx, row)
	if err != nil || v == nil {
		return 0, true, err
	}
	if n, ok := v.(int64); ok {
		return n, false, nil
	}
	v, _, err = types.Int64.Convert(ctx, v)
	if err != nil {
		return 0, true, err
	}
	return v.(int64), false, nil
}

// boundedRepeat is REPEAT(str, count). A count below 1 gives the empty string as in
// MySQL (GMS fails on a negative count).
type boundedRepeat struct{ *function.Repeat }

func newBoundedRepeat(str, count sql.Expression) sql.Expression {
	return boundedRepeat{function.NewRepeat(str, count).(*function.Repeat)}
}

func (r boundedRepeat) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 2)
	}
	return newBoundedRepeat(children[0], children[1]), nil
}

func (r boundedRepeat) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	s, null, err := evalString(ctx, r.LeftChild, row)
	if null {
		return nil, err
	}
	n, null, err := evalInt(ctx, r.RightChild, row)
	if null {
		return nil, err
	}
	if n <= 0 || s == "" {
		return "", nil
	}
	if !resultFits(ctx, "repeat", mulSize(int64(len(s)), n)) {
		return nil, nil
	}
	return strings.Repeat(s, int(n)), nil
}

// boundedSpace is SPACE(n); GMS's builds the string a space at a time.
type boundedSpace struct{ *function.Space }

func newBoundedSpace(n sql.Expression) sql.Expression {
	return boundedSpace{function.NewSpace(n).(*function.Space)}
}

func (s boundedSpace) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(s, len(children), 1)
	}
	return newBoundedSpace(children[0]), nil
}

func (s boundedSpace) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := s.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	c, _, err := types.Int64.Convert(ctx, v)
	if err != nil {
		// As GMS's SPACE does.
		ctx.Warn(mysql.ERTruncatedWrongValue, "Truncated incorrect INTEGER value: '%v'", v)
		c = int64(0)
	}
	n := c.(int64)
	if n <= 0 {
		return "", nil
	}
	if !resultFits(ctx, "space", n) {
		return nil, nil
	}
	return strings.Repeat(" ", int(n)), nil
}

// boundedPad is LPAD or RPAD(str, len, padstr): str cut or padded to len
// characters (GMS's counts bytes, and may cut a character in two).
type boundedPad struct {
	sql.Expression // GMS's *function.Pad, for what is not evaluation
	left           bool
	str, n, pad    sql.Expression
}

func newBoundedLeftPad(args ...sql.Expression) (sql.Expression, error) {
	return newBoundedPad(true, args)
}

func newBoundedRightPad(args ...sql.Expression) (sql.Expression, error) {
	return newBoundedPad(false, args)
}

func newBoundedPad(left bool, args []sql.Expression) (sql.Expression, error) {
	var p sql.Expression
	var err error
	if left {
		p, err = function.NewLeftPad(args...)
	} else {
		p, err = function.NewRightPad(args...)
	}
	if err != nil {
		return nil, err
	}
	return &boundedPad{Expression: p, left: left, str: args[0], n: args[1], pad: args[2]}, nil
}

func (p *boundedPad) FunctionName() string {
	return p.Expression.(sql.FunctionExpression).FunctionName()
}
func (p *boundedPad) Description() string { return p.Expression.(sql.FunctionExpression).Description() }

func (p *boundedPad) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, p.Expression)
}

func (p *boundedPad) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return newBoundedPad(p.left, children)
}

func (p *boundedPad) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	s, null, err := evalString(ctx, p.str, row)
	if null {
		return nil, err
	}
	n, null, err := evalInt(ctx, p.n, row)
	if null {
		return nil, err
	}
	pad, null, err := evalString(ctx, p.pad, row)
	if null {
		return nil, err
	}
	if n <= 0 {
		return "", nil
	}
	chars := int64(utf8.RuneCountInString(s))
	if n <= chars {
		return s[:charOffset(s, int(n))], nil
	}
	padChars := int64(utf8.RuneCountInString(pad))
	if padChars == 0 {
		return "", nil
	}
	fill := n - chars
	full, part := fill/padChars, int(fill%padChars)
	partBytes := charOffset(pad, part)
	size := mulSize(full, int64(len(pad)))
	if size >= 0 {
		size += int64(len(s) + partBytes)
	}
	if !resultFits(ctx, p.FunctionName(), size) {
		return nil, nil
	}
	var b strings.Builder
	b.Grow(int(size))
	if !p.left {
		b.WriteString(s)
	}
	for range full {
		b.WriteString(pad)
	}
	b.WriteString(pad[:partBytes])
	if p.left {
		b.WriteString(s)
	}
	return b.String(), nil
}

// charOffset returns the byte offset of character n of s (len(s) past its
// end).
func charOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// maxStackArgs is how many arguments CONCAT evaluates without allocating
// room for them.
const maxStackArgs = 8

// boundedConcat is CONCAT(str, ...): NULL if any argument is.
type boundedConcat struct{ *function.Concat }

func newBoundedConcat(args ...sql.Expression) (sql.Expression, error) {
	c, err := function.NewConcat(args...)
	if err != nil {
		return nil, err
	}
	return boundedConcat{c.(*function.Concat)}, nil
}

func (c boundedConcat) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return newBoundedConcat(children...)
}

func (c boundedConcat) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	args := c.Children()
	var buf [maxStackArgs]string
	parts := buf[:0]
	var size int64
	for _, a := range args {
		s, null, err := evalString(ctx, a, row)
		if null {
			return nil, err
		}
		parts = append(parts, s)
		size += int64(len(s))
	}
	return joinBounded(ctx, "concat", parts, "", size)
}

// joinBounded joins parts with sep, whose sizes add up to size without the
// separators, when the result fits.
func joinBounded(ctx *sql.Context, fn string, parts []string, sep string, size int64) (any, error) {
	if len(parts) > 1 {
		size += int64(len(parts)-1) * int64(len(sep))
	}
	if !resultFits(ctx, fn, size) {
		return nil, nil
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	var b strings.Builder
	b.Grow(int(size))
	for i, p := range parts {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
	}
	return b.String(), nil
}

// boundedConcatWS is CONCAT_WS(sep, str, ...): NULL if sep is, NULL
// arguments skipped.
type boundedConcatWS struct{ *function.ConcatWithSeparator }

func newBoundedConcatWS(args ...sql.Expression) (sql.Expression, error) {
	c, err := function.NewConcatWithSeparator(args...)
	if err != nil {
		return nil, err
	}
	return boundedConcatWS{c.(*function.ConcatWithSeparator)}, nil
}

func (c boundedConcatWS) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return newBoundedConcatWS(children...)
}

func (c boundedConcatWS) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	args := c.Children()
	sep, null, err := evalString(ctx, args[0], row)
	if null {
		return nil, err
	}
	var buf [maxStackArgs]string
	parts := buf[:0]
	var size int64
	for _, a := range args[1:] {
		s, null, err := evalString(ctx, a, row)
		if err != nil {
			return nil, err
		}
		if null {
			continue
		}
		parts = append(parts, s)
		size += int64(len(s))
	}
	if len(parts) == 0 {
		return "", nil
	}
	return joinBounded(ctx, "concat_ws", parts, sep, size)
}

// boundedReplace is REPLACE(str, from, to).
type boundedReplace struct {
	sql.Expression // GMS's *function.Replace, for what is not evaluation
	str, from, to  sql.Expression
}

func newBoundedReplace(str, from, to sql.Expression) sql.Expression {
	return &boundedReplace{Expression: function.NewReplace(str, from, to), str: str, from: from, to: to}
}

func (r *boundedReplace) FunctionName() string { return "replace" }
func (r *boundedReplace) Description() string {
	return r.Expression.(sql.FunctionExpression).Description()
}

func (r *boundedReplace) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, r.Expression)
}

func (r *boundedReplace) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 3 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 3)
	}
	return newBoundedReplace(children[0], children[1], children[2]), nil
}

func (r *boundedReplace) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	s, null, err := evalString(ctx, r.str, row)
	if null {
		return nil, err
	}
	from, null, err := evalString(ctx, r.from, row)
	if null {
		return nil, err
	}
	to, null, err := evalString(ctx, r.to, row)
	if null {
		return nil, err
	}
	if from == "" || s == "" {
		return s, nil
	}
	if grow := int64(len(to) - len(from)); grow > 0 {
		// At most len(s)/len(from) matches: count them only when that
		// many could take the result past the smallest bound.
		most := mulSize(int64(len(s)/len(from)), grow)
		if most < 0 || int64(len(s))+most > minMaxAllowedPacket {
			size := mulSize(int64(strings.Count(s, from)), grow)
			if size >= 0 {
				size += int64(len(s))
			}
			if !resultFits(ctx, "replace", size) {
				return nil, nil
			}
		}
	}
	return strings.ReplaceAll(s, from, to), nil
}

// insertString is INSERT(str, pos, len, newstr): str with the len
// characters from position pos (from 1) replaced by newstr; str itself
// when pos is not within it, and the rest of str replaced when len runs
// past its end or is negative. NULL if any argument is.
type insertString struct {
	str, pos, n, ins sql.Expression
}

var (
	_ sql.FunctionExpression = (*insertString)(nil)
	_ sql.CollationCoercible = (*insertString)(nil)
)

func newInsertString(str, pos, n, ins sql.Expression) sql.Expression {
	return &insertString{str: str, pos: pos, n: n, ins: ins}
}

func (f *insertString) FunctionName() string { return "insert" }
func (f *insertString) Description() string {
	return "returns str with the substring of len characters at pos replaced by newstr."
}
func (f *insertString) Type() sql.Type { return types.LongText }
func (f *insertString) Children() []sql.Expression {
	return []sql.Expression{f.str, f.pos, f.n, f.ins}
}
func (f *insertString) Resolved() bool {
	return f.str.Resolved() && f.pos.Resolved() && f.n.Resolved() && f.ins.Resolved()
}
func (f *insertString) IsNullable() bool {
	return f.str.IsNullable() || f.pos.IsNullable() || f.n.IsNullable() || f.ins.IsNullable()
}
func (f *insertString) String() string {
	return fmt.Sprintf("insert(%s, %s, %s, %s)", f.str, f.pos, f.n, f.ins)
}

func (f *insertString) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	c, k := sql.GetCoercibility(ctx, f.str)
	oc, ok := sql.GetCoercibility(ctx, f.ins)
	return sql.ResolveCoercibility(c, k, oc, ok)
}

func (f *insertString) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 4 {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(children), 4)
	}
	return newInsertString(children[0], children[1], children[2], children[3]), nil
}

func (f *insertString) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	s, null, err := evalString(ctx, f.str, row)
	if null {
		return nil, err
	}
	pos, null, err := evalInt(ctx, f.pos, row)
	if null {
		return nil, err
	}
	n, null, err := evalInt(ctx, f.n, row)
	if null {
		return nil, err
	}
	ins, null, err := evalString(ctx, f.ins, row)
	if null {
		return nil, err
	}
	chars := int64(utf8.RuneCountInString(s))
	if pos < 1 || pos > chars {
		return s, nil
	}
	if n < 0 || n > chars-pos+1 {
		n = chars - pos + 1
	}
	start := charOffset(s, int(pos-1))
	end := start + charOffset(s[start:], int(n))
	size := int64(start + len(ins) + len(s) - end)
	if !resultFits(ctx, "insert", size) {
		return nil, nil
	}
	var b strings.Builder
	b.Grow(int(size))
	b.WriteString(s[:start])
	b.WriteString(ins)
	b.WriteString(s[end:])
	return b.String(), nil
}

// valueText returns v as text, as CONCAT and GROUP_CONCAT append it.
func valueText(ctx *sql.Context, v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	c, _, err := types.LongText.Convert(ctx, v)
	if err != nil || c == nil {
		return "", err
	}
	s, _, err := sql.Unwrap[string](ctx, c)
	return s, err
}
