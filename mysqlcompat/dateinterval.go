package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
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
// Targets GMS v0.20.0 (expression/arithmetic.go, function/time_math.go).
// Without it, TestTimeTextSpec (testdata/time_text) fails.

// dateInterval replaces e, date arithmetic with an INTERVAL, by DATE_ADD
// or DATE_SUB.
func dateInterval(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	a, ok := e.(*expression.Arithmetic)
	if !ok {
		return e, transform.SameTree, nil
	}
	d, err := dateOffset(a)
	if err != nil || d == nil {
		return e, transform.SameTree, err
	}
	return &dateIntervalExpr{Expression: d, arith: a}, transform.NewTree, nil
}

// dateOffset returns DATE_ADD or DATE_SUB for a, nil if a is not date
// arithmetic with an INTERVAL.
func dateOffset(a *expression.Arithmetic) (sql.Expression, error) {
	l, r := a.LeftChild, a.RightChild
	switch a.Op {
	case "+":
		if _, ok := l.(*expression.Interval); ok {
			l, r = r, l
		}
		if _, ok := r.(*expression.Interval); !ok {
			return nil, nil
		}
		if !isDate(l) {
			return nil, nil
		}
		return function.NewDateAdd(l, r)
	case "-":
		if _, ok := r.(*expression.Interval); !ok || !isDate(l) {
			return nil, nil
		}
		return function.NewDateSub(l, r)
	}
	return nil, nil
}

// isDate reports whether e is a DATE. DATETIME and TIMESTAMP keep GMS's
// arithmetic, which types them as MySQL does (and whose values stay
// numbers where GMS's DATE_SUB of a STR_TO_DATE would give text); strings
// and TIMEs keep it too (its DATE_ADD of a TIME wraps at a day).
func isDate(e sql.Expression) bool {
	t := e.Type()
	return t != nil && types.IsDateType(t)
}

// dateIntervalExpr is DATE_ADD or DATE_SUB written as arith.
type dateIntervalExpr struct {
	sql.Expression
	arith *expression.Arithmetic
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
	a, err := d.arith.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	arith := a.(*expression.Arithmetic)
	e, err := dateOffset(arith)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return arith, nil
	}
	return &dateIntervalExpr{Expression: e, arith: arith}, nil
}
