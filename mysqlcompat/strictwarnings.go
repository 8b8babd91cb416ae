package mysqlcompat

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// Warnings that strict mode makes errors
//
// MySQL 8 in strict mode (STRICT_TRANS_TABLES or STRICT_ALL_TABLES; every
// Strata table is transactional) fails an INSERT, REPLACE or UPDATE
// without IGNORE at the first warning of certain kinds its expressions
// raise, with the warning's number and message as the error: an invalid
// date given to date arithmetic (SET d = DATE_ADD('0000-00-00', INTERVAL 1
// DAY), 1292), a string CAST to a number or a date with text it cannot
// read (1292), STR_TO_DATE's 1411, and division by zero (1365) when the
// mode also has ERROR_FOR_DIVISION_BY_ZERO. GMS keeps them warnings and
// stores NULL or the truncated value in every mode.
//
// The session keeps the first such warning of the running statement
// (StrictWarner, sqlstore's Session.Warn), so a statement that warns
// nothing pays one method call per row: an INSERT's rows are checked as
// their source yields them (countingIter), an UPDATE's as each assigned
// value is evaluated (rangeChecked), before the value is written, and the
// failed statement's rows are undone as for any error. The kept plans of
// INSERTs and UPDATEs run the same expressions, so they fail alike.
//
// Warnings raised only by an UPDATE's or DELETE's WHERE clause are not
// checked (MySQL fails those too).

// StrictWarner is a session that keeps the first warnings of the running
// statement that strict mode makes errors (StrictErrorCode): first is the
// first of them, other the first that is not division by zero (which is
// an error only under ERROR_FOR_DIVISION_BY_ZERO); nil when there were
// none.
type StrictWarner interface {
	StrictWarnings() (first, other *sql.Warning)
}

// MySQL's numbers that vitess does not name.
const (
	erWarnNullToNotNull = 1263
	erDivisionByZero    = 1365
	erInvalidLogarithm  = 3020 // ER_INVALID_ARGUMENT_FOR_LOGARITHM: LN(0)
)

// StrictErrorCode reports whether a warning numbered code fails a
// data-changing statement in strict mode (MySQL's Strict_error_handler
// list, of the numbers GMS raises).
func StrictErrorCode(code int) bool {
	switch code {
	case mysql.ERTruncatedWrongValue, // 1292
		mysql.ErrWrongValueForType,          // 1411
		mysql.ERWarnDataOutOfRange,          // 1264
		erDivisionByZero,                    // 1365
		mysql.ERTruncatedWrongValueForField, // 1366
		mysql.ERWarnDataTruncated,           // 1265
		mysql.ERDataTooLong,                 // 1406
		mysql.ERBadNullError,                // 1048
		mysql.ERNoDefaultForField,           // 1364
		erWarnNullToNotNull,                 // 1263
		erCutValueGroupConcat,               // 1260
		erDatetimeFunctionOverflow,          // 1441
		erInvalidLogarithm:                  // 3020
		return true
	}
	return false
}

// strictWarningError returns the error a data-changing statement, with
// IGNORE or not, fails with for the warnings its session has kept, or nil.
func strictWarningError(ctx *sql.Context, ignore bool) error {
	s, ok := ctx.Session.(StrictWarner)
	if !ok {
		return nil
	}
	first, other := s.StrictWarnings()
	if first == nil || ignore || !strictMode(ctx) {
		return nil
	}
	w := first
	if w.Code == erDivisionByZero && !divisionByZeroErrors(ctx) {
		if w = other; w == nil {
			return nil
		}
	}
	msg := w.Message
	if w.Code == erInvalidLogarithm {
		msg = "Invalid argument for logarithm" // MySQL's words; GMS adds the value
	}
	return mysql.NewSQLError(w.Code, strictErrorState(w.Code), "%s", msg)
}

// divisionByZeroErrors reports whether the session's sql_mode has
// ERROR_FOR_DIVISION_BY_ZERO.
func divisionByZeroErrors(ctx *sql.Context) bool {
	return sqlModeHas(ctx, "ERROR_FOR_DIVISION_BY_ZERO")
}

// sqlModeHas reports whether the session's sql_mode has the mode name.
func sqlModeHas(ctx *sql.Context, name string) bool {
	v, err := ctx.GetSessionVariable(ctx, "sql_mode")
	mode, ok := v.(string)
	if err != nil || !ok {
		return false
	}
	for mode != "" {
		var m string
		m, mode, _ = strings.Cut(mode, ",")
		if strings.EqualFold(strings.TrimSpace(m), name) {
			return true
		}
	}
	return false
}

// strictErrorState is MySQL's SQLSTATE for the error numbered code.
func strictErrorState(code int) string {
	switch code {
	case mysql.ERTruncatedWrongValue:
		return "22007"
	case erDivisionByZero:
		return "22012"
	case mysql.ERWarnDataOutOfRange:
		return "22003"
	case mysql.ERWarnDataTruncated:
		return "01000"
	case mysql.ERDataTooLong:
		return "22001"
	case mysql.ERBadNullError, erWarnNullToNotNull:
		return "23000"
	case erDatetimeFunctionOverflow:
		return "22008"
	case erInvalidLogarithm:
		return "2201E"
	}
	return mysql.SSUnknownSQLState
}

// Zero dates
//
// With NO_ZERO_DATE, strict mode refuses a zero date or datetime
// ('0000-00-00', 0) for a DATE, DATETIME or TIMESTAMP column with 1292,
// as MySQL 8 does; GMS stored it in every mode. (Out of strict mode MySQL
// stores it with a warning; GMS stores it without one.)

// isZeroDate reports whether v, converted to the DATE, DATETIME or TIMESTAMP
// type typ, is the zero date.
func isZeroDate(ctx *sql.Context, typ sql.Type, v any) bool {
	if !types.IsTime(typ) || v == nil {
		return false
	}
	cv, _, err := typ.Convert(ctx, v)
	t, ok := cv.(time.Time)
	return err == nil && ok && t.Equal(zeroDate)
}

// noZeroDate reports whether the session's sql_mode has NO_ZERO_DATE.
func noZeroDate(ctx *sql.Context) bool {
	return sqlModeHas(ctx, "NO_ZERO_DATE")
}

// strictRow checks row, an INSERT's row rowNum into sch, in strict mode
// outside IGNORE: the warnings its expressions raised, the values strict
// mode refuses (strictValues) and zero dates (zeroDates), in that order.
func strictRow(ctx *sql.Context, sch sql.Schema, row sql.Row, rowNum int64) error {
	if err := strictWarningError(ctx, false); err != nil {
		return err
	}
	trimDateColumns(sch, row)
	if err := strictValues(ctx, sch, row, rowNum); err != nil {
		return err
	}
	return zeroDates(ctx, sch, row, rowNum)
}

// trimDateColumns drops the trailing white space of row's strings for
// DATE, DATETIME and TIMESTAMP columns of sch, which MySQL ignores and
// GMS's conversion refuses (datespaces.go). Only a string ending in white
// space pays more than a type assertion.
func trimDateColumns(sch sql.Schema, row sql.Row) {
	if len(row) < len(sch) {
		return
	}
	row = row[len(row)-len(sch):]
	for i, col := range sch {
		if s, ok := row[i].(string); ok && endsInSpace(s) && types.IsTime(col.Type) {
			row[i] = trimDateSpaces(s)
		}
	}
}

// zeroDates returns MySQL's error for the first zero date of row, an
// INSERT's row rowNum into sch, under NO_ZERO_DATE, or nil. The mode is
// looked up only for a value that may be a zero date.
func zeroDates(ctx *sql.Context, sch sql.Schema, row sql.Row, rowNum int64) error {
	if len(row) < len(sch) {
		return nil
	}
	row = row[len(row)-len(sch):]
	checked, refuse := false, false
	for i, col := range sch {
		if !types.IsTime(col.Type) || !maybeZeroDate(row[i]) || !isZeroDate(ctx, col.Type, row[i]) {
			continue
		}
		if !checked {
			checked, refuse = true, noZeroDate(ctx)
		}
		if refuse {
			return valueError(col, zeroDateValue(col.Type, row[i]), rowNum, true, nil)
		}
	}
	return nil
}

// zeroDateValue returns v, a zero date for the DATE, DATETIME or TIMESTAMP
// type typ, as MySQL's error message shows it: a time as '0000-00-00' (not
// time.Time's text), a DECIMAL with its scale ('0.0').
func zeroDateValue(typ sql.Type, v any) any {
	switch x := v.(type) {
	case time.Time:
		if typ.Type() == sqltypes.Date {
			return types.ZeroDateStr
		}
		return types.ZeroTimestampDatetimeStr
	case decimal.Decimal:
		if x.Exponent() < 0 {
			return x.StringFixed(-x.Exponent())
		}
	}
	return v
}

// maybeZeroDate reports whether v may convert to the zero date: a string
// whose first character other than a space is 0, the number 0 (a DECIMAL
// 0.0 too), a time.
func maybeZeroDate(v any) bool {
	switch v := v.(type) {
	case string:
		v = strings.TrimLeft(v, " ")
		return v != "" && v[0] == '0'
	case time.Time:
		return v.Equal(zeroDate)
	case int64:
		return v == 0
	case int32:
		return v == 0
	case int8:
		return v == 0
	case int16:
		return v == 0
	case int:
		return v == 0
	case uint64:
		return v == 0
	case uint32:
		return v == 0
	case uint8:
		return v == 0
	case uint16:
		return v == 0
	case float64:
		return v == 0
	case float32:
		return v == 0
	case decimal.Decimal:
		return v.IsZero()
	case decimal.NullDecimal:
		return v.Valid && v.Decimal.IsZero()
	}
	return false
}
