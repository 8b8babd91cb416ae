package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// Integer literals
//
// MySQL types an integer literal as a signed BIGINT up to 2^63-1, as a
// BIGINT UNSIGNED from 2^63 to 2^64-1 and as a DECIMAL beyond. GMS's
// planbuilder picks the smallest Go integer that holds it instead, trying
// signed before unsigned at each width: 127 is an int8, but 128 to 255 are
// uint8, 32768 to 65535 uint16 and 2^31 to 2^32-1 uint32, each typed
// unsigned. The arguments of a prepared statement reach the planbuilder as
// literals too (the server hands GMS their text), so c * ? bound to 200 is
// the same. An unsigned operand makes integer arithmetic BIGINT UNSIGNED,
// so -5 * 200 was out of range where MySQL gives -1000.
//
// The literal itself keeps GMS's type: comparisons and index lookups
// (a storage backend's, such as sqlstore's search.go and inexact.go) are
// built on it, and its value is the same. The integer operations of
// intarith.go ask unsignedOperand instead of the operand's type.
//
// Targets GMS v0.20.0. Without it, TestIntLiteralArithmeticStatements
// fails.

// unsignedOperand reports whether e is unsigned as an operand of integer
// arithmetic: its type is unsigned, and it is not a literal GMS typed
// unsigned only because it is positive (a BIGINT UNSIGNED literal, above
// 2^63-1, or an unsigned argument bound through the embedded driver, is
// unsigned in MySQL too).
func unsignedOperand(e sql.Expression) bool {
	t := e.Type()
	if !types.IsUnsigned(t) {
		return false
	}
	if _, ok := e.(*expression.Literal); ok {
		switch t.Type() {
		case sqltypes.Uint8, sqltypes.Uint16, sqltypes.Uint24, sqltypes.Uint32:
			return false
		}
	}
	return true
}
