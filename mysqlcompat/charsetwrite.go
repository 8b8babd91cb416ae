package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
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
