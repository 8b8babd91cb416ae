package mysqlcompat

import (
	"errors"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/planbuilder/dateparse"
)

// STR_TO_DATE of text shorter than its format
//
// MySQL's STR_TO_DATE reads the text along the format and stops where the
// text ends: STR_TO_DATE('2020-01-01', '%Y-%m-%d %H') is 2020-01-01
// 00:00:00, without a warning. GMS fails the format's next specifier on
// the empty rest and gives NULL with warning 1411, which strict mode
// (strictwarnings.go) makes an error.
//
// So STR_TO_DATE is a strToDate (installed by dateSpaces,
// datespaces.go): when GMS's parse fails with the text used up, it parses
// again with the format's part before the failing specifier and returns
// that value if what is left of the format has only time specifiers and
// literals, whose missing fields are zero. A left date specifier keeps
// GMS's NULL and 1411 (MySQL gives a date with a zero part, which GMS's
// time.Time cannot hold: the day before the 1st of the month).
//
// Targets GMS v0.20.0 (function/str_to_date.go, planbuilder/dateparse).
// Without it, TestStrictWritesSpec (testdata/strict_writes) fails.

// strToDate is GMS's STR_TO_DATE with MySQL's reading of text that ends
// before its format.
type strToDate struct {
	*function.StrToDate
}

func (s *strToDate) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	ne, err := s.StrToDate.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	f, ok := ne.(*function.StrToDate)
	if !ok {
		return ne, nil
	}
	return &strToDate{StrToDate: f}, nil
}

// Eval implements sql.Expression.
func (s *strToDate) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	date, err := s.Date.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	format, err := s.Format.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	dateStr, ok1 := date.(string)
	formatStr, ok2 := format.(string)
	if !ok1 || !ok2 {
		// NULL and other types: GMS's answer.
		return s.StrToDate.Eval(ctx, row)
	}
	v, err := dateparse.ParseDateWithFormat(dateStr, formatStr)
	if err == nil {
		return v, nil
	}
	if v, ok := shortTextDate(dateStr, formatStr, err); ok {
		return v, nil
	}
	ctx.Warn(mysqlErrWrongValueForType, "Incorrect value: '%s' for function %s", dateStr, s.FunctionName())
	return nil, nil
}

// mysqlErrWrongValueForType is ER_WRONG_VALUE_FOR_TYPE, GMS's number for
// STR_TO_DATE's warning.
const mysqlErrWrongValueForType = 1411

// shortTextDate returns STR_TO_DATE(date, format) as MySQL reads it when
// GMS's parse failed with err because date ended before format (the rest
// of format has only time specifiers and literals); ok is false
// otherwise.
func shortTextDate(date, format string, err error) (any, bool) {
	var spec dateparse.ParseSpecifierErr
	var lit dateparse.ParseLiteralErr
	switch {
	case errors.As(err, &spec):
		if spec.Tokens != "" {
			return nil, false
		}
	case errors.As(err, &lit):
		if lit.Tokens != "" {
			return nil, false
		}
	default:
		return nil, false
	}
	// The ends of the format's specifiers and literals, one per parser.
	var ends []int
	for i := 0; i < len(format); i++ {
		if format[i] == '%' && i+1 < len(format) {
			i++
		}
		ends = append(ends, i+1)
	}
	// Parsing is a run of the parsers in turn, so the longest prefix that
	// parses ends just before the one that failed.
	for k := len(ends) - 2; k >= 0; k-- {
		prefix, rest := format[:ends[k]], format[ends[k]:]
		v, err := dateparse.ParseDateWithFormat(date, prefix)
		if err != nil {
			continue
		}
		if v == nil || !timeFormatOnly(rest) {
			return nil, false
		}
		return v, true
	}
	return nil, false
}

// timeFormatOnly reports whether format has only time specifiers and
// literals.
func timeFormatOnly(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			continue
		}
		i++
		if !strings.ContainsRune("fHhIiklprSsT", rune(format[i])) {
			return false
		}
	}
	return true
}
