package mysqlcompat

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Numbers and two-digit years as dates
//
// MySQL reads a number where a date is wanted by its digits: 20240101 and
// 240101 are 2024-01-01, 20240101123000 and 240101123000 2024-01-01
// 12:30:00; a two-digit year is 2000-2069 for 00-69 and 1970-1999 for
// 70-99, in numbers and in strings ('24-01-01'). So 20240101 + INTERVAL 1
// DAY and DATE_ADD(20240101, INTERVAL 1 DAY) are '2024-01-02'. GMS failed
// on the arithmetic (1105: Interval.Eval is a placeholder) and gave NULL
// with warning 1292 for DATE_ADD and for two-digit years. The date operand
// of date arithmetic (zeroDateGuard, dateinterval.go) is read through
// numberDate and fourDigitYear; a number operand of + and - INTERVAL
// becomes DATE_ADD and DATE_SUB, whose value is a string, as in MySQL.
//
// Targets GMS v0.20.0 (function/time_math.go, expression/arithmetic.go).
// Without it, TestValueSemanticsSpec (testdata/value_semantics) fails.

// isNumber reports whether e is an integer or a DECIMAL.
func isNumber(e sql.Expression) bool {
	t := e.Type()
	return t != nil && (types.IsInteger(t) || types.IsDecimal(t))
}

// numberDate returns the date or datetime text of v, an integer or a
// DECIMAL without a fraction, as MySQL's number_to_datetime reads it; ok
// is false for a number that is no date's digits.
func numberDate(v any) (string, bool) {
	var n uint64
	switch x := v.(type) {
	case decimal.Decimal:
		if !x.Equal(x.Truncate(0)) || x.Sign() < 0 || !x.LessThan(decimal.New(1, 14)) {
			return "", false
		}
		n = uint64(x.IntPart())
	default:
		s := fmt.Sprint(v)
		if strings.HasPrefix(s, "-") {
			return "", false
		}
		if _, err := fmt.Sscan(s, &n); err != nil {
			return "", false
		}
	}
	var full uint64 // YYYYMMDDhhmmss
	switch {
	case n < 101:
		return "", false
	case n <= 691231:
		full = (n + 20000000) * 1000000
	case n < 700101:
		return "", false
	case n <= 991231:
		full = (n + 19000000) * 1000000
	case n < 10000101:
		return "", false
	case n <= 99991231:
		full = n * 1000000
	case n < 101000000:
		return "", false
	case n <= 691231235959:
		full = n + 20000000000000
	case n < 700101000000:
		return "", false
	case n <= 991231235959:
		full = n + 19000000000000
	case n < 10000101000000:
		return "", false
	case n <= 99991231235959:
		full = n
	default:
		return "", false
	}
	date := full / 1000000
	clock := full % 1000000
	text := fmt.Sprintf("%04d-%02d-%02d", date/10000, date/100%100, date%100)
	if n > 99991231 {
		text += fmt.Sprintf(" %02d:%02d:%02d", clock/10000, clock/100%100, clock%100)
	}
	return text, true
}

// fourDigitYear returns s, a date written with a two-digit year
// ('24-01-01', '99/12/31 10:00:00'), with its century: 20 for 00-69, 19
// for 70-99. ok is false for other text, which stays as written.
func fourDigitYear(s string) (string, bool) {
	t := strings.TrimLeft(s, " \t\n\r")
	if len(t) < 3 || !isDigit(t[0]) || !isDigit(t[1]) || isDigit(t[2]) || t[2] == ' ' || t[2] == 'T' {
		return s, false
	}
	if t[0] < '7' {
		return "20" + t, true
	}
	return "19" + t, true
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
