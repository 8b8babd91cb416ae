package sqlstore

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
// So an analyzer rule (rules.go) replaces
// each +, - and * of two integer operands with an intArith, which computes
// on 64-bit magnitudes with the carry checked and allocates nothing.

// errIntOutOfRange is MySQL's 1690 for an integer result outside its type.
var errIntOutOfRange = goerrors.NewKind("%s value is out of range in '%s'")

// checkIntArithmetic replaces integer +, - and * with intArith.
func checkIntArithmetic(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource && len(ins.OnDupExprs) == 0 {
		// INSERT ... VALUES of literals, the most common write: nothing
		// to compute, and a walk of its expressions allocates.
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		a, ok := e.(*expression.Arithmetic)
		if !ok || !integerOperands(a) {
			return e, transform.SameTree, nil
		}
		return &intArith{Arithmetic: a}, transform.NewTree, nil
	})
}

// integerOperands reports whether a is +, - or * of two integer operands
// (not BIT or YEAR, which GMS treats on its own terms).
func integerOperands(a *expression.Arithmetic) bool {
	switch strings.ToLower(a.Op) {
	case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr:
	default:
		return false
	}
	for _, c := range []sql.Expression{a.LeftChild, a.RightChild} {
		t := c.Type()
		if !types.IsInteger(t) || types.IsBit(t) || types.IsYear(t) {
			return false
		}
	}
	return true
}

// intArith is an Arithmetic of two integers computed exactly (see above).
type intArith struct {
	*expression.Arithmetic
}

var _ sql.Expression = (*intArith)(nil)

// unsigned reports whether the result is BIGINT UNSIGNED.
func (a *intArith) unsigned() bool {
	return types.IsUnsigned(a.LeftChild.Type()) || types.IsUnsigned(a.RightChild.Type())
}

// Type implements sql.Expression.
func (a *intArith) Type() sql.Type {
	if a.unsigned() {
		return types.Uint64
	}
	return types.Int64
}

// Eval implements sql.Expression.
func (a *intArith) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, err := a.LeftChild.Eval(ctx, row)
	if err != nil || l == nil {
		return nil, err
	}
	r, err := a.RightChild.Eval(ctx, row)
	if err != nil || r == nil {
		return nil, err
	}
	x, okl := magnitudeOf(l)
	y, okr := magnitudeOf(r)
	if !okl || !okr {
		// Not a Go integer after all: GMS's arithmetic decides.
		return a.Arithmetic.Eval(ctx, row)
	}
	var z signedMag
	var ok bool
	switch strings.ToLower(a.Op) {
	case sqlparser.PlusStr:
		z, ok = x.add(y)
	case sqlparser.MinusStr:
		z, ok = x.add(y.negate())
	default:
		z, ok = x.mul(y)
	}
	if a.unsigned() {
		if !ok || (z.neg && z.abs != 0) {
			return nil, errIntOutOfRange.New("BIGINT UNSIGNED", a.String())
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
	return nil, errIntOutOfRange.New("BIGINT", a.String())
}

// WithChildren implements sql.Expression.
func (a *intArith) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := a.Arithmetic.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	na, ok := e.(*expression.Arithmetic)
	if !ok || !integerOperands(na) {
		return e, nil
	}
	return &intArith{Arithmetic: na}, nil
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
