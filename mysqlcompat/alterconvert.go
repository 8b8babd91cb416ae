package mysqlcompat

import (
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/shopspring/decimal"
)

// Values an ALTER TABLE converts
//
// When ALTER TABLE changes a column's type, GMS converts each stored value
// with the new type's Convert, which is not how MySQL copies a column:
//   - a binary string (BINARY, VARBINARY, BLOB) is read as a big-endian
//     number, as GMS reads a hex literal: VARBINARY '1' became INT 49, a
//     DECIMAL 0.49, and a date or ENUM failed. MySQL reads its text; only
//     BIT takes the bytes;
//   - a value the new type cannot hold failed with GMS's words (1105 "out
//     of range", "number has no digits") in every sql_mode. MySQL fails in
//     strict mode with the error an INSERT gets, naming the column and the
//     row (1366, 1265, 1264, 1292), and out of strict mode stores the value
//     adjusted as an INSERT would (lenient.go) with the same warning;
//   - a DATETIME cut to a DATE, and a DECIMAL rounded to a smaller scale,
//     were changed without a word; MySQL adds Note 1265 in every mode;
//   - a binary string into JSON was parsed; MySQL refuses it (3144), and
//     text that is no JSON is 3140 in every mode (GMS: 1105 out of strict);
//   - a date or time became a number as its Unix time; MySQL reads its
//     digits (20240102), and a number into a date by its digits;
//   - a number wider than a BIT failed with 1105; MySQL says 1406, and out
//     of strict mode stores the largest value the bits hold.
//
// AlterValue gives the value MySQL copies, which the new type's Convert
// then keeps as it is; the table's copy applies it to the changed column
// of each row as it reads them (sqlstore/alter.go).

// AlterValue returns v, a value of the type from, as ALTER TABLE copies it
// into the column name of the table table, of the type to, at the copy's
// row rowNum (from 1): the value, MySQL's warnings left on ctx, or in
// strict mode MySQL's error.
func AlterValue(ctx *sql.Context, from, to sql.Type, table, name string, v any, rowNum int64) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch {
	case types.IsJSON(to):
		if _, fromBinary := v.([]byte); !fromBinary || !types.IsBinaryType(from) {
			// Not a value that strict mode lets go: 3140 in every mode.
			if _, _, err := to.Convert(ctx, v); err != nil {
				return nil, mysql.NewSQLError(mysql.ERInvalidJSONText, "22032",
					"Invalid JSON text: \"%s\" at position 0 in value for column '%s.%s'.", jsonReason(err), table, name)
			}
		}
	case types.IsBit(to) && types.IsNumber(from):
		return bitValue(ctx, to, name, v, rowNum)
	case types.IsNumber(to) && (types.IsTime(from) || types.IsTimespan(from)):
		// A date or time is the number of its digits.
		if n, ok := timeDigits(v); ok {
			v = n
		}
	case types.IsTime(to) && (types.IsInteger(from) || types.IsDecimal(from)):
		if s, ok := numberDate(v); ok {
			v = s
		}
	}
	if _, fromEnum := from.(sql.EnumType); fromEnum {
		if _, toEnum := to.(sql.EnumType); toEnum {
			return v, nil // GMS maps the members by name
		}
	}
	if b, ok := v.([]byte); ok && types.IsBinaryType(from) {
		switch {
		case types.IsJSON(to):
			return nil, mysql.NewSQLError(mysql.ERInvalidJSONCharset, "22032",
				"Cannot create a JSON value from a string with CHARACTER SET 'binary'.")
		case !types.IsBit(to) && !types.IsText(to) && !types.IsBinaryType(to):
			v = string(b) // its text, as MySQL reads it
		}
	}
	// A value of an ENUM or SET read as a number is its index or bits,
	// as text its members.
	if types.IsEnum(from) || types.IsSet(from) {
		if s, ok := memberText(ctx, from, v); ok && !types.IsNumber(to) {
			v = s
		}
	}
	if str, ok := v.(string); ok && types.IsText(to) {
		if bad, at := unencodable(to, str); bad {
			if strictMode(ctx) {
				return nil, mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState,
					"Incorrect string value: '%s' for column '%s'%s", escapedBytes(str[at:]), name, atRow(rowNum))
			}
			ctx.Warn(mysql.ERTruncatedWrongValueForField, "Incorrect string value: '%s' for column '%s'%s", escapedBytes(str[at:]), name, atRow(rowNum))
			v = replaceUnencodable(to, str)
		}
	}
	col := &sql.Column{Name: name, Type: to}
	if strictMode(ctx) {
		if err := strictValues(ctx, sql.Schema{col}, sql.Row{v}, rowNum); err != nil {
			return nil, err
		}
		if isBigInt(to) {
			if x, inRange, ok := ExactInteger(to, v); ok {
				if !inRange {
					return nil, valueError(col, v, rowNum, false, nil)
				}
				return x, nil
			}
		}
		_, inRange, err := to.Convert(ctx, v)
		if err != nil || inRange != sql.InRange {
			if types.ErrLengthBeyondLimit.Is(err) {
				// An ALTER's copy reports a string cut as truncated,
				// where an INSERT says 1406 "Data too long".
				return nil, mysql.NewSQLError(mysql.ERWarnDataTruncated, "01000", "Data truncated for column '%s'%s", name, atRow(rowNum))
			}
			if se := valueError(col, v, rowNum, inRange == sql.InRange, err); se != nil {
				return nil, se
			}
			return nil, err
		}
	} else {
		v = adjustValue(ctx, to, name, v, rowNum)
	}
	noteNarrowed(ctx, from, to, name, v, rowNum)
	return v, nil
}

// memberText gives the text of v, an ENUM's index or a SET's bits.
func memberText(ctx *sql.Context, typ sql.Type, v any) (string, bool) {
	switch t := typ.(type) {
	case sql.EnumType:
		if i, ok := v.(uint16); ok {
			s, _ := t.At(int(i))
			return s, true
		}
	case sql.SetType:
		if bits, ok := v.(uint64); ok {
			s, err := t.BitsToString(bits)
			return s, err == nil
		}
	}
	return "", false
}

// noteNarrowed adds MySQL's Note 1265 when the value loses part of itself
// that the new type has no room for and that MySQL does not count as an
// error: a DATETIME's time cut by a DATE, a DECIMAL's digits rounded off
// by a smaller scale.
func noteNarrowed(ctx *sql.Context, from, to sql.Type, name string, v any, rowNum int64) {
	cut := false
	switch {
	case types.IsDateType(to) && (types.IsDatetimeType(from) || types.IsTimestampType(from)):
		if t, ok := v.(time.Time); ok {
			cut = t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0
		}
	case types.IsDecimal(to):
		var d decimal.Decimal
		switch x := v.(type) {
		case decimal.Decimal:
			d = x
		case decimal.NullDecimal:
			if !x.Valid {
				return
			}
			d = x.Decimal
		case float64:
			d = decimal.NewFromFloat(x)
		case float32:
			d = decimal.NewFromFloat32(x)
		case string:
			p, err := decimal.NewFromString(strings.TrimSpace(x))
			if err != nil {
				return
			}
			d = p
		default:
			return
		}
		scale := int32(to.(sql.DecimalType).Scale())
		cut = !d.Round(scale).Equal(d)
	}
	if cut {
		ctx.Session.Warn(&sql.Warning{Level: "Note", Code: mysql.ERWarnDataTruncated,
			Message: fmt.Sprintf("Data truncated for column '%s'%s", name, atRow(rowNum))})
	}
}

// unencodable reports whether s has a character the character set of the
// string type typ has no code for, and the byte it starts at.
func unencodable(typ sql.Type, s string) (bool, int) {
	st, ok := typ.(sql.StringType)
	if !ok {
		return false, 0
	}
	cs := st.Collation().CharacterSet()
	if cs == sql.CharacterSet_utf8mb4 || cs == sql.CharacterSet_binary || cs.Encoder() == nil {
		return false, 0
	}
	enc := cs.Encoder()
	for i, r := range s {
		if _, ok := enc.Encode([]byte(string(r))); !ok {
			return true, i
		}
	}
	return false, 0
}

// replaceUnencodable replaces each character of s that the character set
// of typ has no code for with '?', as MySQL converts.
func replaceUnencodable(typ sql.Type, s string) string {
	enc := typ.(sql.StringType).Collation().CharacterSet().Encoder()
	var b strings.Builder
	for _, r := range s {
		if _, ok := enc.Encode([]byte(string(r))); ok {
			b.WriteRune(r)
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// escapedBytes shows s as MySQL's 1366 "Incorrect string value" does: its
// first bytes, those outside printable ASCII as \xHH, "..." after six.
func escapedBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i == 6 {
			b.WriteString("...")
			break
		}
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02X", c)
		}
	}
	return b.String()
}

// jsonReason is the part of GMS's JSON error that says what is wrong.
func jsonReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// bitValue converts the number v into the BIT type typ: a number wider
// than its bits fails with 1406 in strict mode, and out of it is the
// largest the bits hold, with warning 1264 (as MariaDB 10.11 does).
func bitValue(ctx *sql.Context, typ sql.Type, name string, v any, rowNum int64) (any, error) {
	cv, _, err := typ.Convert(ctx, v)
	if err == nil {
		return cv, nil
	}
	if strictMode(ctx) {
		return nil, mysql.NewSQLError(mysql.ERDataTooLong, "22001", "Data too long for column '%s'%s", name, atRow(rowNum))
	}
	ctx.Warn(mysql.ERWarnDataOutOfRange, "Out of range value for column '%s'%s", name, atRow(rowNum))
	bits := typ.(types.BitType).NumberOfBits()
	return uint64(1)<<bits - 1, nil
}

// timeDigits gives a date, datetime or time as the number MySQL reads it
// as: 20240102, 20240102101112, 101112.
func timeDigits(v any) (int64, bool) {
	switch t := v.(type) {
	case time.Time:
		d := int64(t.Year())*10000 + int64(t.Month())*100 + int64(t.Day())
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
			return d, true // a DATE's, and a DATETIME's at midnight are both days
		}
		return d*1000000 + int64(t.Hour())*10000 + int64(t.Minute())*100 + int64(t.Second()), true
	case types.Timespan:
		us := t.AsMicroseconds()
		neg := us < 0
		if neg {
			us = -us
		}
		secs := us / 1e6
		n := secs/3600*10000 + secs/60%60*100 + secs%60
		if neg {
			n = -n
		}
		return n, true
	}
	return 0, false
}
