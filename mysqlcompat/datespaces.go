package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Dates with trailing spaces
//
// MySQL reads a date or datetime string up to its end and ignores the
// spaces after it: YEAR('2020-01-01 ') is 2020 and CAST('2020-01-01 ' AS
// DATE) 2020-01-01, without a warning. GMS parses with time.Parse, which
// refuses the trailing space, so these gave NULL with warning 1292, and
// strict mode (strictwarnings.go) then failed an UPDATE whose WHERE or
// value reads such a string, which MySQL runs.
//
// So a value rule (dateSpaces, in textValues' walk) reads the string
// operands of the date functions, of CAST and CONVERT to DATE or
// DATETIME and of date arithmetic (zeroDateGuard) through a dateText,
// which drops the trailing white space before GMS parses the text; a
// string written to a DATE, DATETIME or TIMESTAMP column is trimmed so by
// INSERT (strictRow, adjustRow) and UPDATE (rangeChecked). Other
// text after a date (MySQL: the date with warning 1292) keeps GMS's NULL
// and warning.
//
// Targets GMS v0.20.0 (types/datetime.go's parseDatetime). Without it,
// TestStrictWritesSpec (testdata/strict_writes) fails.

// dateSpaces gives the string date operands of e a dateText, and makes a
// STR_TO_DATE a strToDate (strtodate.go). It runs in textValues' walk
// (timetext.go), so it costs the planning no walk of its own.
func dateSpaces(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	if s, ok := e.(*function.StrToDate); ok {
		return &strToDate{StrToDate: s}, transform.NewTree, nil
	}
	if !readsDateText(e) {
		return e, transform.SameTree, nil
	}
	children := e.Children()
	var changed []sql.Expression
	for i, c := range children {
		if i > 0 && !datesOnly(e) {
			break
		}
		if g, ok := c.(*zeroDateGuard); ok {
			// Date arithmetic's operand, guarded in the same walk
			// (dateinterval.go): the guard must read the trimmed text.
			if _, ok := g.child.(*dateText); ok || g.child.Type() == nil || !types.IsText(g.child.Type()) {
				continue
			}
			c = &zeroDateGuard{child: &dateText{child: g.child}}
		} else if _, ok := c.(*dateText); ok || c.Type() == nil || !types.IsText(c.Type()) {
			continue
		} else {
			c = &dateText{child: c}
		}
		if changed == nil {
			changed = append([]sql.Expression(nil), children...)
		}
		changed[i] = c
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

// readsDateText reports whether e reads its first operand (every operand
// for datesOnly) as a date or datetime.
func readsDateText(e sql.Expression) bool {
	switch x := e.(type) {
	case *expression.Convert:
		return types.IsTime(x.Type())
	case *zeroDateGuard, *dateIntervalExpr,
		*function.Year, *function.Quarter, *function.Month, *function.Day,
		*function.Weekday, *function.DayOfWeek, *function.DayOfYear,
		*function.Hour, *function.Minute, *function.Second, *function.Microsecond,
		*function.YearWeek, *function.Week, *function.WeekOfYear,
		*function.Date, *function.DayName, *function.MonthName,
		*function.DateFormat, *function.ToDays, *function.LastDay,
		*function.DatetimeConversion, *function.DateAdd, *function.DateSub,
		*function.DateDiff, *function.UnixTimestamp:
		return true
	}
	return false
}

// datesOnly reports whether every text operand of e is a date.
func datesOnly(e sql.Expression) bool {
	switch e.(type) {
	case *function.DateDiff, *dateIntervalExpr:
		// dateIntervalExpr's operands are its arithmetic's: the date and
		// the INTERVAL, either way round.
		return true
	}
	return false
}

// dateText is a string operand read as a date: its value without the
// trailing white space MySQL ignores there.
type dateText struct {
	child sql.Expression
}

var _ sql.CollationCoercible = (*dateText)(nil)

func (d *dateText) Resolved() bool             { return d.child.Resolved() }
func (d *dateText) IsNullable() bool           { return d.child.IsNullable() }
func (d *dateText) Type() sql.Type             { return d.child.Type() }
func (d *dateText) Children() []sql.Expression { return []sql.Expression{d.child} }

// String implements sql.Expression: the operand's, so plans and column
// names read as GMS's.
func (d *dateText) String() string      { return d.child.String() }
func (d *dateText) DebugString() string { return sql.DebugString(d.child) }

func (d *dateText) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, d.child)
}

func (d *dateText) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &dateText{child: children[0]}, nil
}

// Eval implements sql.Expression. Trimming slices the string: no
// allocation.
func (d *dateText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := d.child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		return trimDateSpaces(x), nil
	case []byte:
		return trimDateSpaces(string(x)), nil
	}
	return v, nil
}

// endsInSpace reports whether s ends in white space trimDateSpaces drops.
func endsInSpace(s string) bool {
	if s == "" {
		return false
	}
	switch s[len(s)-1] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// trimDateSpaces returns s without the trailing white space MySQL's date
// parsing skips (its my_isspace: space, tab, newline, vertical tab, form
// feed, carriage return). A string of spaces only is kept as it is.
func trimDateSpaces(s string) string {
	t := strings.TrimRight(s, " \t\n\v\f\r")
	if t == "" {
		return s
	}
	return t
}
