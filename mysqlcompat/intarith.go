package mysqlcompat

import (
	"math"
	"math/bits"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	goerrors "gopkg.in/src-d/go-errors.v1"
)

// Integer arithmetic
//
// GMS adds, subtracts and multiplies two integers as Go int64s: a result
// beyond the range wraps around (9223372036854775807 + 1 is
// -9223372036854775808), and when one operand is unsigned the other is
// first converted into int64, clamping (a BIGINT UNSIGNED 18446744073709551615
// + 0 is 9223372036854775807). UPDATE t SET n = n + 1 stored the wrapped or
// clamped value without an error. MySQL computes exactly: the result is
// BIGINT UNSIGNED when either operand is unsigned, BIGINT otherwise, and a
// result outside that type fails with 1690.
//
// DIV, % and unary minus had their own defects: DIV of 18446744073709551615
// by -1 wrapped, % of two integers was a DECIMAL, and the negation of a
// BIGINT UNSIGNED 18446744073709551615 was 1 (of -9223372036854775808, error
// 1264 instead of 1690), typed as its operand (TINYINT for a TINYINT
// column) where MySQL's is a BIGINT. And GMS types a positive integer
// literal by the smallest Go integer that holds it, so 200 is a TINYINT
// UNSIGNED and -5 * 200 was BIGINT UNSIGNED, out of range, where MySQL's
// literal 200 is a signed BIGINT (intliteral.go).
//
// So an analyzer rule (install.go) replaces each +, -, *, DIV and % of two
// integer operands, and each unary minus of one, with a version that
// computes on 64-bit magnitudes with the carry checked, types the result
// as MySQL does (BIGINT, or BIGINT UNSIGNED: for + - * DIV when either
// operand is unsigned, but for - not under the SQL mode
// NO_UNSIGNED_SUBTRACTION, and for % when the dividend is) and allocates
// nothing.
//
// Targets GMS v0.20.0. Without it, TestIntArithMySQL
// (testdata/intarith_mysql) and TestIntegerArithmeticSQL fail.

// ErrIntOutOfRange is MySQL's 1690 for an integer result outside its type.
var ErrIntOutOfRange = goerrors.NewKind("%s value is out of range in '%s'")

// checkIntArithmetic replaces integer +, -, *, DIV, % and unary minus with
// intArith, intDiv, intMod and intNeg.
func checkIntArithmetic(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource && len(ins.OnDupExprs) == 0 {
		// INSERT ... VALUES of literals, the most common write: nothing
		// to compute, and a walk of its expressions allocates.
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		x := exactIntExpr(e)
		if x == nil {
			return e, transform.SameTree, nil
		}
		if a, ok := x.(*intArith); ok && a.minus() && a.unsignedOps {
			// Read only here: loading the mode allocates.
			a.signedMinus = sql.LoadSqlMode(ctx).ModeEnabled(noUnsignedSubtraction)
		}
		return x, transform.NewTree, nil
	})
}

// noUnsignedSubtraction is the SQL mode under which a subtraction is a
// signed BIGINT even when an operand is unsigned.
const noUnsignedSubtraction = "NO_UNSIGNED_SUBTRACTION"

// exactIntExpr returns e's exact replacement, or nil when e is none of the
// integer operations replaced.
func exactIntExpr(e sql.Expression) sql.Expression {
	switch x := e.(type) {
	case *expression.Arithmetic:
		if integerOperands(x) {
			return &intArith{Arithmetic: x, unsignedOps: unsignedOperand(x.LeftChild) || unsignedOperand(x.RightChild)}
		}
	case *expression.IntDiv:
		if integerExpr(x.LeftChild) && integerExpr(x.RightChild) {
			return &intDiv{IntDiv: x, unsigned: unsignedOperand(x.LeftChild) || unsignedOperand(x.RightChild)}
		}
	case *expression.Mod:
		if integerExpr(x.LeftChild) && integerExpr(x.RightChild) {
			return &intMod{Mod: x, unsigned: unsignedOperand(x.LeftChild)}
		}
	case *expression.UnaryMinus:
		if integerExpr(x.Child) {
			return &intNeg{UnaryMinus: x}
		}
	}
	return nil
}

// integerOperands reports whether a is +, - or * of two integer operands.
func integerOperands(a *expression.Arithmetic) bool {
	switch strings.ToLower(a.Op) {
	case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr:
	default:
		return false
	}
	return integerExpr(a.LeftChild) && integerExpr(a.RightChild)
}

// integerExpr reports whether e is of an integer type (not BIT or YEAR,
// which GMS treats on its own terms, nor an INTERVAL: date arithmetic,
// dateinterval.go).
func integerExpr(e sql.Expression) bool {
	if _, ok := e.(*expression.Interval); ok {
		return false
	}
	t := e.Type()
	return types.IsInteger(t) && !types.IsBit(t) && !types.IsYear(t)
}

// bigintType returns the type of an integer result.
func bigintType(unsigned bool) sql.Type {
	if unsigned {
		return types.Uint64
	}
	return types.Int64
}

// bigintResult returns z as a BIGINT UNSIGNED (uint64) or BIGINT (int64),
// or MySQL's 1690 naming expr when z does not fit it or ok is false (the
// magnitude overflowed).
func bigintResult(z signedMag, ok, unsigned bool, expr sql.Expression) (any, error) {
	if unsigned {
		if !ok || (z.neg && z.abs != 0) {
			return nil, ErrIntOutOfRange.New("BIGINT UNSIGNED", expr.String())
		}
		return z.abs, nil
	}
	switch {
	case !ok:
	case !z.neg && z.abs <= math.MaxInt64:
		return int64(z.abs), nil
	case z.neg && z.abs <= 1<<63:
		return int64(-z.abs), nil // -(2^63) wraps to MinInt64, as it should
	}
	return nil, ErrIntOutOfRange.New("BIGINT", expr.String())
}

// evalOperands evaluates the two operands of a binary integer operation;
// null is true when either is NULL, and ok false when either is not a Go
// integer after all (GMS's own operation decides then).
func evalOperands(ctx *sql.Context, row sql.Row, left, right sql.Expression) (x, y signedMag, null, ok bool, err error) {
	l, err := left.Eval(ctx, row)
	if err != nil || l == nil {
		return x, y, true, true, err
	}
	r, err := right.Eval(ctx, row)
	if err != nil || r == nil {
		return x, y, true, true, err
	}
	x, okl := magnitudeOf(l)
	y, okr := magnitudeOf(r)
	return x, y, false, okl && okr, nil
}

// divisionByZero is MySQL's result for DIV or % by zero: NULL, with
// warning 1365.
func divisionByZero(ctx *sql.Context) (any, error) {
	if ctx != nil && ctx.Session != nil {
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: expression.ERDivisionByZero, Message: "Division by 0"})
	}
	return nil, nil
}

// intArith is an Arithmetic of two integers computed exactly (see above).
type intArith struct {
	*expression.Arithmetic
	// unsignedOps is whether either operand is unsigned (the operands'
	// types are fixed: a new child makes a new intArith).
	unsignedOps bool
	// signedMinus makes a subtraction signed whatever its operands, as
	// the SQL mode NO_UNSIGNED_SUBTRACTION does.
	signedMinus bool
}

var _ sql.Expression = (*intArith)(nil)

// minus reports whether a is a subtraction.
func (a *intArith) minus() bool { return a.Op == sqlparser.MinusStr }

// unsigned reports whether the result is BIGINT UNSIGNED.
func (a *intArith) unsigned() bool {
	return a.unsignedOps && !(a.signedMinus && a.minus())
}

// Type implements sql.Expression.
func (a *intArith) Type() sql.Type { return bigintType(a.unsigned()) }

// Eval implements sql.Expression.
func (a *intArith) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	x, y, null, ok, err := evalOperands(ctx, row, a.LeftChild, a.RightChild)
	if err != nil || null {
		return nil, err
	}
	if !ok {
		return a.Arithmetic.Eval(ctx, row)
	}
	var z signedMag
	switch strings.ToLower(a.Op) {
	case sqlparser.PlusStr:
		z, ok = x.add(y)
	case sqlparser.MinusStr:
		z, ok = x.add(y.negate())
	default:
		z, ok = x.mul(y)
	}
	return bigintResult(z, ok, a.unsigned(), a)
}

// WithChildren implements sql.Expression.
func (a *intArith) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := exactIntChildren(a.Arithmetic, children)
	if na, ok := e.(*intArith); ok {
		na.signedMinus = a.signedMinus
	}
	return e, err
}

// exactIntChildren returns e with children, replaced as checkIntArithmetic
// would when it still is an integer operation.
func exactIntChildren(e sql.Expression, children []sql.Expression) (sql.Expression, error) {
	ne, err := e.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if x := exactIntExpr(ne); x != nil {
		return x, nil
	}
	return ne, nil
}

// intDiv is a DIV of two integers computed exactly: GMS divided as int64s
// (a BIGINT UNSIGNED converted, wrapping) or as decimals.
type intDiv struct {
	*expression.IntDiv
	unsigned bool // the result is BIGINT UNSIGNED: either operand is
}

var _ sql.Expression = (*intDiv)(nil)

// Type implements sql.Expression.
func (d *intDiv) Type() sql.Type { return bigintType(d.unsigned) }

// Eval implements sql.Expression.
func (d *intDiv) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	x, y, null, ok, err := evalOperands(ctx, row, d.LeftChild, d.RightChild)
	if err != nil || null {
		return nil, err
	}
	if !ok {
		return d.IntDiv.Eval(ctx, row)
	}
	if y.abs == 0 {
		return divisionByZero(ctx)
	}
	return bigintResult(x.quo(y), true, d.unsigned, d)
}

// WithChildren implements sql.Expression.
func (d *intDiv) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return exactIntChildren(d.IntDiv, children)
}

// intMod is a % (or MOD) of two integers: GMS computed it as a DECIMAL.
// The remainder takes the sign of the dividend, and the result is unsigned
// when the dividend is; it always fits.
type intMod struct {
	*expression.Mod
	unsigned bool // the result is BIGINT UNSIGNED: the dividend is
}

var _ sql.Expression = (*intMod)(nil)

// Type implements sql.Expression.
func (m *intMod) Type() sql.Type { return bigintType(m.unsigned) }

// Eval implements sql.Expression.
func (m *intMod) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	x, y, null, ok, err := evalOperands(ctx, row, m.LeftChild, m.RightChild)
	if err != nil || null {
		return nil, err
	}
	if !ok {
		return m.Mod.Eval(ctx, row)
	}
	if y.abs == 0 {
		return divisionByZero(ctx)
	}
	return bigintResult(x.rem(y), true, m.unsigned, m)
}

// WithChildren implements sql.Expression.
func (m *intMod) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return exactIntChildren(m.Mod, children)
}

// intNeg is the unary minus of an integer: a signed BIGINT, or 1690 for the
// negation of -9223372036854775808 or of an unsigned value above 2^63.
type intNeg struct {
	*expression.UnaryMinus
}

var _ sql.Expression = (*intNeg)(nil)

// Type implements sql.Expression.
func (n *intNeg) Type() sql.Type { return types.Int64 }

// Eval implements sql.Expression.
func (n *intNeg) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	x, ok := magnitudeOf(v)
	if !ok {
		return n.UnaryMinus.Eval(ctx, row)
	}
	z := x.negate()
	if !z.neg && z.abs > math.MaxInt64 {
		// MySQL's form of the expression: -(x).
		return nil, ErrIntOutOfRange.New("BIGINT", "-("+n.Child.String()+")")
	}
	return bigintResult(z, true, false, n)
}

// WithChildren implements sql.Expression.
func (n *intNeg) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return exactIntChildren(n.UnaryMinus, children)
}

// signedMag is an integer as a sign and a 64-bit magnitude: every int64
// and uint64 fits.
type signedMag struct {
	neg bool
	abs uint64
}

// magnitudeOf returns the Go integer v as a signedMag.
func magnitudeOf(v any) (signedMag, bool) {
	var i int64
	switch x := v.(type) {
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case int:
		i = int64(x)
	case uint8:
		return signedMag{abs: uint64(x)}, true
	case uint16:
		return signedMag{abs: uint64(x)}, true
	case uint32:
		return signedMag{abs: uint64(x)}, true
	case uint64:
		return signedMag{abs: x}, true
	case uint:
		return signedMag{abs: uint64(x)}, true
	default:
		return signedMag{}, false
	}
	if i < 0 {
		return signedMag{neg: true, abs: uint64(-(i + 1)) + 1}, true
	}
	return signedMag{abs: uint64(i)}, true
}

// negate returns -x.
func (x signedMag) negate() signedMag { return signedMag{neg: !x.neg && x.abs != 0, abs: x.abs} }

// add returns x + y; ok is false when the magnitude overflows 64 bits.
func (x signedMag) add(y signedMag) (signedMag, bool) {
	if x.neg == y.neg {
		s, carry := bits.Add64(x.abs, y.abs, 0)
		return signedMag{neg: x.neg, abs: s}, carry == 0
	}
	if x.abs >= y.abs {
		return signedMag{neg: x.neg && x.abs != y.abs, abs: x.abs - y.abs}, true
	}
	return signedMag{neg: y.neg, abs: y.abs - x.abs}, true
}

// mul returns x * y; ok is false when the magnitude overflows 64 bits.
func (x signedMag) mul(y signedMag) (signedMag, bool) {
	hi, lo := bits.Mul64(x.abs, y.abs)
	return signedMag{neg: x.neg != y.neg && lo != 0, abs: lo}, hi == 0
}

// quo returns x / y truncated toward zero, as DIV does; y is not zero.
func (x signedMag) quo(y signedMag) signedMag {
	q := x.abs / y.abs
	return signedMag{neg: x.neg != y.neg && q != 0, abs: q}
}

// rem returns the remainder of x / y, with the sign of x; y is not zero.
func (x signedMag) rem(y signedMag) signedMag {
	r := x.abs % y.abs
	return signedMag{neg: x.neg && r != 0, abs: r}
}
