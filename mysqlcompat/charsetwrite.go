package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// Text a column's character set cannot hold
//
// GMS keeps every string as Go (UTF-8) text and stores what an INSERT or
// UPDATE gives a latin1, ascii or utf8mb3 column as it is: 'a中' went
// into a latin1 column unchanged, and reading it back as latin1 failed.
// MySQL converts the value to the column's character set as it writes
// it: in strict mode a character the set has no code for fails the
// statement with 1366 "Incorrect string value", naming its bytes, the
// column and the row; out of strict mode (or under IGNORE) it becomes '?'
// with that warning. The value rules (lenient.go, assign.go) and ALTER
// TABLE's copy (alterconvert.go) convert through these.

// stringValueError is MySQL's error for s, bound for the column name at
// row rowNum, whose character at byte at the column's set cannot hold.
func stringValueError(name, s string, at int, rowNum int64) *mysql.SQLError {
	return mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState,
		"Incorrect string value: '%s' for column '%s'%s", escapedBytes(s[at:]), name, atRow(rowNum))
}

// convertUnencodable returns s, bound for the column name of the type typ
// at row rowNum, with each character from byte at on that typ's set
// cannot hold replaced by '?', and warns as MySQL does.
func convertUnencodable(ctx *sql.Context, typ sql.Type, name, s string, at int, rowNum int64) string {
	ctx.Warn(mysql.ERTruncatedWrongValueForField, "Incorrect string value: '%s' for column '%s'%s", escapedBytes(s[at:]), name, atRow(rowNum))
	return replaceUnencodable(typ, s)
}

// bytesText reads b, a binary string (a hex literal, a binary column's
// value) bound for a column of the string type typ, as MySQL copies it:
// as text of the column's character set. It returns the text, or false
// and the offset of the first bytes that are no character of the set.
// ok is true and s empty when typ's set is utf8mb4 or binary or typ is
// no character string: the value is left to GMS.
func bytesText(typ sql.Type, b []byte) (s string, at int, conv, ok bool) {
	if !types.IsText(typ) {
		return "", 0, false, true
	}
	enc := narrowEncoder(typ)
	if enc == nil {
		return "", 0, false, true
	}
	cs := typ.(sql.StringType).Collation().CharacterSet()
	if cs == sql.CharacterSet_utf8mb3 {
		// UTF-8 already: every character must be one utf8mb3 holds.
		s = string(b)
		if bad, at := unencodable(typ, s); bad {
			return s, at, true, false
		}
		return s, 0, true, true
	}
	if d, ok := enc.Decode(b); ok {
		return string(d), 0, true, true
	}
	for i := range b {
		if _, ok := enc.Decode(b[i : i+1]); !ok {
			return string(b), i, true, false
		}
	}
	return string(b), 0, true, false
}

// replaceBadBytes returns b read as text of the character set of typ,
// each byte that is no character of it '?', as MySQL converts out of
// strict mode.
func replaceBadBytes(typ sql.Type, b []byte) string {
	cs := typ.(sql.StringType).Collation().CharacterSet()
	if cs == sql.CharacterSet_utf8mb3 {
		return replaceUnencodable(typ, string(b))
	}
	enc := cs.Encoder()
	var sb strings.Builder
	for i := range b {
		if d, ok := enc.Decode(b[i : i+1]); ok {
			sb.Write(d)
		} else {
			sb.WriteByte('?')
		}
	}
	return sb.String()
}
