package mysqlcompat

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/strata-db/strata/sqlstore/codec"
)

// Values adjusted out of strict mode
//
// Out of strict mode (a sql_mode without STRICT_TRANS_TABLES and
// STRICT_ALL_TABLES; every Strata table is transactional, so either one
// makes a write strict), and under IGNORE in any mode, MySQL stores a
// value its column cannot hold adjusted, with a warning naming the column
// and the statement's row, where strict mode fails with that error:
//
//	integer, DECIMAL: out of range -> the type's nearest end, 1264;
//	  a string without a number -> 0, 1366 "Incorrect integer value";
//	  a number followed by other text -> the number, 1265
//	FLOAT, DOUBLE: as above, without the range
//	CHAR, VARCHAR, TEXT, BINARY, VARBINARY, BLOB: too long -> cut to the
//	  column's length, 1265 "Data truncated" (a Note when only spaces
//	  were cut from a character string; nothing for CHAR)
//	SET: the members it names, 1265
//	ENUM: an unknown member (or 0) -> '' (index 0), 1265
//	YEAR: rounded; below 0, 100 to 1900 or above 2155 -> 0000, 1264;
//	  a string without a number -> 0000, 1366; a number followed by
//	  other text -> the year, 1265 (yearOf)
//	DATE, DATETIME, TIMESTAMP, TIME that does not parse: zero, 1265
//	NULL for a NOT NULL column: the type's implicit default, 1048, in a
//	  statement of several rows, a SELECT or an UPDATE (insertNulls); a
//	  column given no value and without a default the same, 1364
//
// GMS fails each such INSERT and UPDATE outside IGNORE; under IGNORE it
// clamps and truncates with Notes of its own words (1105 "1000 out of
// range for tinyint"). So the adjustment is done before GMS converts: an
// INSERT's rows are adjusted by the source that counts them (insertRows,
// insertvalues.go), an assignment's value (UPDATE, ON DUPLICATE KEY UPDATE)
// by the rangeChecked that wraps it (assign.go). A value adjusted converts
// without error, so GMS's own conversion keeps it, and IGNORE's other
// effects (duplicate keys, NULL into NOT NULL) stay GMS's: out of strict
// mode a duplicate key still fails with 1062.
//
// In strict mode outside IGNORE nothing is adjusted: the INSERT's source
// checks one flag per row, an assignment looks at the mode only when its
// value does not convert.

// lenientWrites reports whether a write with IGNORE or not stores adjusted
// values (above).
func lenientWrites(ctx *sql.Context, ignore bool) bool {
	return ignore || !strictMode(ctx)
}

// adjustRow adjusts the values of row, an INSERT's row rowNum into sch, in
// place. row may hold outer-scope values before the columns. nulls, when
// set, takes NULL for NOT NULL columns as MySQL does out of strict mode.
func adjustRow(ctx *sql.Context, sch sql.Schema, row sql.Row, rowNum int64, nulls *insertNulls) {
	if len(row) < len(sch) {
		return
	}
	trimDateColumns(sch, row) // datespaces.go
	row = row[len(row)-len(sch):]
	if nulls != nil && nulls.order != nil {
		for _, i := range nulls.order {
			adjustColumn(ctx, sch[i], row, i, rowNum, nulls)
		}
		return
	}
	for i := range sch {
		adjustColumn(ctx, sch[i], row, i, rowNum, nulls)
	}
}

// adjustColumn adjusts the value of col, at i in row.
func adjustColumn(ctx *sql.Context, col *sql.Column, row sql.Row, i int, rowNum int64, nulls *insertNulls) {
	if row[i] != nil {
		row[i] = adjustValue(ctx, col.Type, col.Name, row[i], rowNum)
	} else if !col.Nullable && nulls != nil && nulls.takesNull {
		row[i] = nulls.take(ctx, col, i)
	}
}

// insertNulls is the order in which an INSERT's columns are adjusted, and
// what an INSERT out of strict mode does with NULL for a NOT
// NULL column: a column the statement gives no value and that has no
// default takes its type's implicit default with warning 1364; an explicit
// NULL does too, with 1048, in a statement of several rows or a SELECT (in
// one of a single row it is the error 1048, GMS's).
type insertNulls struct {
	deferred sql.FastIntSet // the columns without a value or default
	multiRow bool
	// takesNull is false under IGNORE, whose NULLs are GMS's.
	takesNull bool
	// order is the order of the columns to adjust (columnOrder).
	order []int
}

// take returns the value NULL for the NOT NULL column col (at i) is stored
// as, warning, or nil when it stays NULL (GMS then fails).
func (n *insertNulls) take(ctx *sql.Context, col *sql.Column, i int) any {
	switch {
	case n.deferred.Contains(i):
		ctx.Warn(mysql.ERNoDefaultForField, "Field '%s' doesn't have a default value", col.Name)
	case n.multiRow && !types.IsJSON(col.Type):
		ctx.Warn(mysql.ERBadNullError, "Column '%s' cannot be null", col.Name)
	default:
		return nil
	}
	return implicitDefault(col.Type)
}

// implicitDefault is the value a NOT NULL column of the type typ takes for
// NULL out of strict mode: its type's zero, but an ENUM's first member
// (GMS's zero is the empty string of index 0).
func implicitDefault(typ sql.Type) any {
	if et, ok := typ.(sql.EnumType); ok && et.NumberOfElements() > 0 {
		return uint16(1)
	}
	return typ.Zero()
}

// enumZero reports whether v converts to index 0 of the ENUM type typ (0,
// '0'): GMS stores it silently, MySQL as an unknown member.
func enumZero(ctx *sql.Context, typ sql.Type, v any) bool {
	if v == nil || !types.IsEnum(typ) {
		return false
	}
	cv, _, err := typ.Convert(ctx, v)
	return err == nil && cv == uint16(0)
}

// singleRowValues reports whether src, an INSERT's source, is VALUES of one
// row (under the projection that fills in the columns it leaves out).
func singleRowValues(src sql.Node) bool {
	for {
		switch x := src.(type) {
		case *plan.Values:
			return len(x.ExpressionTuples) == 1
		case *plan.Project:
			src = x.Child
		default:
			return false
		}
	}
}

// blankNumber reports whether v is a string of nothing but white space
// given for an integer or DECIMAL column: GMS reads it as 0 without a word
// (a DOUBLE's it refuses itself), where MySQL refuses it in strict mode
// with 1366 and stores 0 with that warning out of it.
func blankNumber(typ sql.Type, v any) bool {
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) == "" && (types.IsInteger(typ) || types.IsDecimal(typ))
}

// strictValues checks row, an INSERT's row rowNum into sch, in strict
// mode: it returns MySQL's error for the first value that strict mode
// refuses and GMS would take (a blank string for a number: blankNumber;
// 0 for an ENUM: enumZero), or that GMS words its own way (a YEAR's:
// yearOf), and stores each YEAR as MySQL reads it (GMS truncates 1999.6
// and refuses '1900.9'). Or nil.
func strictValues(ctx *sql.Context, sch sql.Schema, row sql.Row, rowNum int64) error {
	if len(row) < len(sch) {
		return nil
	}
	row = row[len(row)-len(sch):]
	for i, col := range sch {
		switch {
		case row[i] == nil:
		case types.IsYear(col.Type):
			y, code, ok := yearOf(row[i])
			switch {
			case !ok:
			case code == 0:
				row[i] = y
			default:
				return yearError(col.Name, row[i], code, rowNum)
			}
		case enumZero(ctx, col.Type, row[i]):
			return valueError(col, row[i], rowNum, true, nil)
		case blankNumber(col.Type, row[i]):
			if se := valueError(col, row[i], rowNum, true, nil); se != nil {
				return se
			}
		}
	}
	return nil
}

// adjustValue returns v, bound for the column name of the type typ, as
// MySQL stores it out of strict mode, with MySQL's warning when it had to
// be changed. A value that converts is returned as it is (but a YEAR's,
// which GMS truncates where MySQL rounds), and so is one this does not
// know how to adjust (JSON): GMS reports it.
func adjustValue(ctx *sql.Context, typ sql.Type, name string, v any, rowNum int64) any {
	if v == nil || types.IsJSON(typ) {
		return v
	}
	if types.IsYear(typ) {
		return adjustYear(ctx, name, v, rowNum)
	}
	if isBigInt(typ) {
		// GMS converts through a float64, which neither keeps BIGINT's
		// digits nor sees its range (bigint.go).
		if x, inRange, ok := ExactInteger(typ, v); ok {
			if inRange {
				return x
			}
			return adjustNumber(ctx, typ, name, v, x, rowNum)
		}
	}
	cv, inRange, err := typ.Convert(ctx, v)
	if err == nil && inRange == sql.InRange {
		if s, ok := v.(string); ok && types.IsNumber(typ) && strings.TrimSpace(s) == "" {
			// GMS reads an empty string as 0 without a word.
			return adjustNumber(ctx, typ, name, v, cv, rowNum)
		}
		if types.IsEnum(typ) && cv == uint16(0) {
			warnTruncated(ctx, name, rowNum) // 0 is no member
		}
		return v
	}
	switch {
	case types.IsInteger(typ), types.IsDecimal(typ), types.IsFloat(typ):
		return adjustNumber(ctx, typ, name, v, cv, rowNum)
	case types.IsEnum(typ):
		// An unknown member, or a number that is none's: the empty string
		// of index 0, which every ENUM holds.
		if !types.ErrConvertingToEnum.Is(err) {
			return v
		}
		warnTruncated(ctx, name, rowNum)
		return uint16(0)
	case types.IsSet(typ):
		s, ok := v.(string)
		if !ok || err == nil {
			return v
		}
		st := typ.(sql.SetType)
		var kept []string
		for _, m := range strings.Split(s, ",") {
			if _, _, err := st.Convert(ctx, m); err == nil && m != "" {
				kept = append(kept, m)
			}
		}
		warnTruncated(ctx, name, rowNum)
		return strings.Join(kept, ",")
	case types.IsText(typ) || types.IsBinaryType(typ):
		if !types.ErrLengthBeyondLimit.Is(err) {
			return v
		}
		return truncateString(ctx, typ, name, v, rowNum)
	case types.IsTime(typ) || types.IsTimespan(typ):
		// A date, time or datetime that does not parse, or is not one
		// (February 30th): the zero value, with 1265.
		if err == nil {
			return v
		}
		warnTruncated(ctx, name, rowNum)
		return typ.Zero()
	}
	return v
}

// adjustNumber adjusts v for the numeric type typ; cv is GMS's conversion.
func adjustNumber(ctx *sql.Context, typ sql.Type, name string, v, cv any, rowNum int64) any {
	var d decimal.Decimal
	truncated := false
	switch s := v.(type) {
	case string, []byte:
		text := s
		if b, ok := s.([]byte); ok {
			text = string(b)
		}
		num, rest, ok := numberPrefix(text.(string))
		if !ok {
			kind := "integer"
			switch {
			case types.IsDecimal(typ):
				kind = "decimal"
			case types.IsFloat(typ):
				kind = "double"
			}
			ctx.Warn(mysql.ERTruncatedWrongValueForField, "Incorrect %s value: '%s' for column '%s'%s", kind, messageValue(v), name, atRow(rowNum))
			return typ.Zero()
		}
		p, err := decimal.NewFromString(num)
		if err != nil {
			return v
		}
		d, truncated = p, !onlySpace(rest)
	default:
		p, ok := asDecimal(ctx, v)
		if !ok {
			return v
		}
		d = p
	}
	out, inRange := numberInto(ctx, typ, d)
	switch {
	case out == nil:
		return v
	case !inRange:
		ctx.Warn(mysql.ERWarnDataOutOfRange, "Out of range value for column '%s'%s", name, atRow(rowNum))
	case truncated:
		warnTruncated(ctx, name, rowNum)
	}
	return out
}

// numberInto converts d into the numeric type typ: the value, or the
// type's nearest end and false. nil when it does not convert.
func numberInto(ctx *sql.Context, typ sql.Type, d decimal.Decimal) (any, bool) {
	switch {
	case types.IsInteger(typ):
		r := d.Round(0)
		l, h, ok := codec.IntRange(typ)
		if !ok {
			return nil, false
		}
		lo, hi := decimal.NewFromInt(l), decimal.NewFromInt(h)
		if typ.Type() == sqltypes.Uint64 {
			hi = maxUint64
		}
		inRange := true
		if r.LessThan(lo) {
			r, inRange = lo, false
		} else if r.GreaterThan(hi) {
			r, inRange = hi, false
		}
		var x any = r.IntPart()
		if types.IsUnsigned(typ) {
			x = r.BigInt().Uint64()
		}
		c, _, err := typ.Convert(ctx, x)
		if err != nil {
			return nil, false
		}
		return c, inRange
	case types.IsDecimal(typ):
		if c, _, err := typ.Convert(ctx, d); err == nil {
			return c, true
		} else if !types.ErrConvertToDecimalLimit.Is(err) {
			return nil, false
		}
		c, _, err := typ.Convert(ctx, decimalEnd(ctx, typ, d))
		if err != nil {
			return nil, false
		}
		return c, false
	default:
		f, _ := d.Float64()
		c, inRange, err := typ.Convert(ctx, f)
		if err != nil {
			return nil, false
		}
		return c, inRange == sql.InRange
	}
}

// adjustYear returns v as a YEAR column stores it out of strict mode, with
// MySQL's warning (yearOf); a value yearOf does not read (a date) as it is.
func adjustYear(ctx *sql.Context, name string, v any, rowNum int64) any {
	y, code, ok := yearOf(v)
	if !ok {
		return v
	}
	if code != 0 {
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: code, Message: yearError(name, v, code, rowNum).Message})
	}
	return y
}

// yearError is MySQL's error for v, bound for the YEAR column name, of the
// code yearOf gave it.
func yearError(name string, v any, code int, rowNum int64) *mysql.SQLError {
	at := atRow(rowNum)
	switch code {
	case prefixNone:
		return mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState,
			"Incorrect integer value: '%s' for column '%s'%s", messageValue(v), name, at)
	case prefixTruncated:
		return mysql.NewSQLError(mysql.ERWarnDataTruncated, "01000", "Data truncated for column '%s'%s", name, at)
	}
	return mysql.NewSQLError(mysql.ERWarnDataOutOfRange, "22003", "Out of range value for column '%s'%s", name, at)
}

// yearOf returns the YEAR MySQL stores for v, a number or a string, and
// the code of what storing it gives (0: nothing; 1264, 1265 or 1366,
// warnings out of strict mode and errors in it); ok is false for other
// values (a date: GMS's). A number is rounded; 1 to 69 are 2001 to 2069,
// 70 to 99 are 1970 to 1999, 0 is 0000 (as a string of other than four
// characters 2000); below 0, 100 to 1900 and above 2155 are out of range
// (0000). A string is read by its number prefix (numprefix.go), its range
// checked before its rest.
func yearOf(v any) (y int16, code int, ok bool) {
	var d decimal.Decimal
	zero := int16(0)
	switch x := v.(type) {
	case string:
		return yearOfString(x)
	case []byte:
		return yearOfString(string(x))
	case int8:
		return yearOfNumber(int64(x), zero, 0)
	case int16:
		return yearOfNumber(int64(x), zero, 0)
	case int32:
		return yearOfNumber(int64(x), zero, 0)
	case int64:
		return yearOfNumber(x, zero, 0)
	case int:
		return yearOfNumber(int64(x), zero, 0)
	case uint8:
		return yearOfNumber(int64(x), zero, 0)
	case uint16:
		return yearOfNumber(int64(x), zero, 0)
	case uint32:
		return yearOfNumber(int64(x), zero, 0)
	case uint64:
		return yearOfNumber(int64(min(x, 1<<16)), zero, 0)
	case uint:
		return yearOfNumber(int64(min(x, 1<<16)), zero, 0)
	case float32:
		d = decimal.NewFromFloat32(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, mysql.ERWarnDataOutOfRange, true
		}
		d = decimal.NewFromFloat(x)
	case decimal.Decimal:
		d = x
	default:
		return 0, 0, false
	}
	return yearOfDecimal(d, zero, 0)
}

// yearOfString is yearOf of a string.
func yearOfString(s string) (int16, int, bool) {
	num, code := numberPrefixCode(s)
	if code == prefixNone {
		return 0, code, true
	}
	d, err := decimal.NewFromString(num)
	if err != nil {
		return 0, mysql.ERWarnDataOutOfRange, true // an exponent past int32
	}
	zero := int16(0)
	if len(s) != 4 {
		zero = 2000
	}
	return yearOfDecimal(d, zero, code)
}

// yearOfDecimal is yearOf of d, rounded; zero is the year 0 stands for,
// code the code when in range.
func yearOfDecimal(d decimal.Decimal, zero int16, code int) (int16, int, bool) {
	d = d.Round(0)
	if d.Sign() < 0 || d.GreaterThan(decimal.NewFromInt(2155)) {
		return 0, mysql.ERWarnDataOutOfRange, true
	}
	return yearOfNumber(d.IntPart(), zero, code)
}

// yearOfNumber is yearOf of the integer n.
func yearOfNumber(n int64, zero int16, code int) (int16, int, bool) {
	switch {
	case n < 0, n > 2155, n >= 100 && n <= 1900:
		return 0, mysql.ERWarnDataOutOfRange, true
	case n == 0:
		return zero, code, true
	case n < 70:
		return int16(n + 2000), code, true
	case n < 100:
		return int16(n + 1900), code, true
	}
	return int16(n), code, true
}

// truncateString cuts v to the length of the string type typ: characters
// for a character string, bytes for a binary one and for TEXT (whose limit
// GMS counts in bytes).
func truncateString(ctx *sql.Context, typ sql.Type, name string, v any, rowNum int64) any {
	st, ok := typ.(sql.StringType)
	if !ok {
		return v
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return v
	}
	binary := types.IsBinaryType(typ)
	var cut string
	switch {
	case binary || types.IsTextBlob(typ):
		n := int(st.MaxByteLength())
		if binary {
			n = int(st.MaxCharacterLength())
		}
		if n > len(s) {
			return v
		}
		// Not inside a character.
		for n > 0 && !binary && !utf8.RuneStart(s[n]) {
			n--
		}
		cut, s = s[n:], s[:n]
	default:
		n, chars := 0, int64(0)
		for n < len(s) && chars < st.MaxCharacterLength() {
			_, size := utf8.DecodeRuneInString(s[n:])
			n += size
			chars++
		}
		cut, s = s[n:], s[:n]
	}
	switch {
	case !binary && strings.TrimRight(cut, " ") == "":
		// Only spaces were cut: nothing for CHAR, a Note for the others,
		// as MySQL does in every mode.
		if typ.Type() != sqltypes.Char {
			ctx.Session.Warn(&sql.Warning{Level: "Note", Code: mysql.ERWarnDataTruncated, Message: "Data truncated for column '" + name + "'" + atRow(rowNum)})
		}
	default:
		warnTruncated(ctx, name, rowNum)
	}
	if _, isBytes := v.([]byte); isBytes {
		return []byte(s)
	}
	return s
}

func warnTruncated(ctx *sql.Context, name string, rowNum int64) {
	ctx.Warn(mysql.ERWarnDataTruncated, "Data truncated for column '%s'%s", name, atRow(rowNum))
}

// atRow is the end of a warning's message naming the statement's row.
func atRow(rowNum int64) string {
	if rowNum <= 0 {
		return ""
	}
	return " at row " + strconv.FormatInt(rowNum, 10)
}

// stmtRows counts the rows an UPDATE's assignment is evaluated for in the
// statement running now (the statement's process id tells a new one), for
// the row number of its warnings. The plan holding it may run again, in
// another statement.
type stmtRows struct {
	pid atomic.Uint64
	n   atomic.Int64
}

// next counts one more row of the statement of ctx and returns its number.
func (r *stmtRows) next(ctx *sql.Context) int64 {
	pid := ctx.Pid()
	if r.pid.Load() != pid {
		r.pid.Store(pid)
		r.n.Store(0)
	}
	return r.n.Add(1)
}
