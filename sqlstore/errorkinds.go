package sqlstore

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer/analyzererrors"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/strata-db/strata/mysqlcompat"
)

// errorKind is a GMS error kind that GMS's own mapping (sql.CastSQLError)
// numbers 1105 but MySQL numbers otherwise.
type errorKind struct {
	kind  *goerrors.Kind
	num   int
	state string
	// message makes MySQL's message from GMS's; nil keeps GMS's.
	message func(string) string
	// serverOnly kinds are numbered by ServerError alone (privileges and
	// file access, which the driver reports as GMS does).
	serverOnly bool
	// re matches the kind's messages, for errors that reach the server
	// as text (see numberMessage); nil for a kind whose message has no
	// fixed form.
	re *regexp.Regexp
}

// errorKinds is the one table of those kinds, for MySQLError, ServerError
// and the MySQL-protocol server.
var errorKinds = []*errorKind{
	{kind: sql.ErrSyntaxError, num: mysql.ERParseError, state: mysql.SSClientError},
	{kind: sql.ErrPrimaryKeyViolation, num: mysql.ERDupEntry, state: "23000", message: dupEntryMessage, re: dupEntryRE},
	{kind: sql.ErrUniqueKeyViolation, num: mysql.ERDupEntry, state: "23000", message: dupEntryMessage, re: dupEntryRE},
	{kind: sql.ErrTableAlreadyExists, num: mysql.ERTableExists, state: "42S01", message: reworded(sql.ErrTableAlreadyExists, "Table '%s' already exists")},
	{kind: sql.ErrInvalidDatabaseName, num: mysql.ERWrongDbName, state: "42000"},
	{kind: sql.ErrInsertIntoNonNullableDefaultNullColumn, num: mysql.ERNoDefaultForField, state: mysql.SSUnknownSQLState},
	{kind: types.ErrLengthBeyondLimit, num: mysql.ERDataTooLong, state: "22001", message: dataTooLong},
	{kind: sql.ErrValueOutOfRange, num: mysql.ERWarnDataOutOfRange, state: "22003", message: prefixed("Out of range value")},
	{kind: types.ErrConvertToDecimalLimit, num: mysql.ERWarnDataOutOfRange, state: "22003", message: strings.TrimSpace},
	{kind: mysqlcompat.ErrIntOutOfRange, num: mysql.ERDataOutOfRange, state: "22003"},
	{kind: mysqlcompat.ErrRecursionDepth, num: 3636, state: mysql.SSUnknownSQLState}, // ER_CTE_MAX_RECURSION_DEPTH
	{kind: errTxnTooLarge, num: 1197, state: mysql.SSUnknownSQLState},                // ER_TRANS_CACHE_FULL
	{kind: sql.ErrColumnNotFound, num: mysql.ERBadFieldError, state: "42S22", message: reworded(sql.ErrColumnNotFound, "Unknown column '%s'")},
	{kind: sql.ErrTableColumnNotFound, num: mysql.ERBadFieldError, state: "42S22", message: reworded(sql.ErrTableColumnNotFound, "Unknown column '%[2]s' in '%[1]s'")},
	{kind: sql.ErrCheckConstraintViolated, num: 3819, state: mysql.SSUnknownSQLState, message: checkViolatedMessage},
	{kind: sql.ErrInsertIntoNonNullableProvidedNull, num: mysql.ERBadNullError, state: "23000", message: badNullMessage},
	// MySQL names the row (at row 2); GMS's error does not say which.
	{kind: sql.ErrInsertIntoMismatchValueCount, num: mysql.ERWrongValueCountOnRow, state: "21S01",
		message: func(string) string { return "Column count doesn't match value count" }},
	{kind: sql.ErrNonAggregatedColumnWithoutGroupBy, num: mysql.ERMixOfGroupFuncAndFields, state: "42000", message: mixedGroupMessage},
	{kind: sql.ErrDuplicateColumn, num: mysql.ERDupFieldName, state: "42S21", message: reworded(sql.ErrDuplicateColumn, "Duplicate column name '%s'")},
	{kind: sql.ErrColumnExists, num: mysql.ERDupFieldName, state: "42S21", message: reworded(sql.ErrColumnExists, "Duplicate column name '%s'")},
	{kind: sql.ErrDuplicateKey, num: mysql.ERDupKeyName, state: "42000"},
	{kind: sql.ErrInvalidColumnDefaultValue, num: mysql.ERInvalidDefault, state: "42000"},
	{kind: sql.ErrUnknownConstraint, num: 3940, state: mysql.SSUnknownSQLState},                       // ER_CONSTRAINT_NOT_FOUND
	{kind: sql.ErrCheckConstraintInvalidatedByColumnAlter, num: 3959, state: mysql.SSUnknownSQLState}, // ER_DEPENDENT_BY_CHECK_CONSTRAINT
	{kind: sql.ErrForeignKeyDropTable, num: 3730, state: mysql.SSUnknownSQLState, // ER_FK_CANNOT_DROP_PARENT
		message: reworded(sql.ErrForeignKeyDropTable, "Cannot drop table '%s' referenced by a foreign key constraint '%s'.")},
	{kind: sql.ErrTruncateReferencedFromForeignKey, num: 1701, state: "42000"},             // ER_TRUNCATE_ILLEGAL_FK
	{kind: sql.ErrForeignKeyDropColumn, num: 1828, state: mysql.SSUnknownSQLState},         // ER_FK_COLUMN_CANNOT_DROP
	{kind: sql.ErrForeignKeyColumnTypeMismatch, num: 3780, state: mysql.SSUnknownSQLState}, // ER_FK_INCOMPATIBLE_COLUMNS
	{kind: sql.ErrForeignKeyNotResolved, num: mysql.ErNoReferencedRow2, state: "23000", message: capitalized},
	{kind: sql.ErrTableNotFound, num: mysql.ERNoSuchTable, state: "42S02", message: reworded(sql.ErrTableNotFound, "Table '%s' doesn't exist")},
	{kind: sql.ErrDatabaseNotFound, num: mysql.ERBadDb, state: "42000", message: unknownDatabaseMessage},
	{kind: sql.ErrDatabaseExists, num: mysql.ERDbCreateExists, state: "HY000", message: reworded(sql.ErrDatabaseExists, "Can't create database '%s'; database exists")},
	{kind: sql.ErrViewDoesNotExist, num: mysql.ERBadTable, state: "42S02", message: reworded(sql.ErrViewDoesNotExist, "Unknown table '%s.%s'")},
	{kind: sql.ErrFunctionNotFound, num: 1305, state: "42000", message: reworded(sql.ErrFunctionNotFound, "FUNCTION %s does not exist")}, // ER_SP_DOES_NOT_EXIST
	{kind: sql.ErrStoredProcedureDoesNotExist, num: 1305, state: "42000", message: reworded(sql.ErrStoredProcedureDoesNotExist, "PROCEDURE %s does not exist")},
	{kind: sql.ErrCantDropFieldOrKey, num: mysql.ERCantDropFieldOrKey, state: "42000", message: reworded(sql.ErrCantDropFieldOrKey, "Can't DROP '%s'; check that column/key exists")},
	{kind: sql.ErrDuplicateAliasOrTable, num: mysql.ERNonUniqTable, state: "42000", message: reworded(sql.ErrDuplicateAliasOrTable, "Not unique table/alias: '%s'")},
	{kind: sql.ErrAmbiguousColumnName, num: 1052, state: "23000", message: reworded(sql.ErrAmbiguousColumnName, "Column '%[1]s' in field list is ambiguous")}, // ER_NON_UNIQ_ERROR
	{kind: planbuilder.ErrUnionSchemasDifferentLength, num: mysql.ERWrongNumberOfColumnsInSelect, state: "21000",
		message: func(string) string { return "The used SELECT statements have a different number of columns" }},
	{kind: sql.ErrExpectedSingleRow, num: mysql.ERSubqueryNo1Row, state: "21000", message: func(string) string { return "Subquery returns more than 1 row" }},
	{kind: sql.ErrInvalidBlobTextKey, num: mysql.ERBlobKeyWithoutLength, state: "42000", message: reworded(sql.ErrInvalidBlobTextKey, "BLOB/TEXT column '%s' used in key specification without a key length")},
	{kind: types.ErrLengthTooLarge, num: mysql.ERTooBigFieldLength, state: "42000", message: reworded(types.ErrLengthTooLarge, "Column length too big (length %s, max = %s); use BLOB or TEXT instead")},
	{kind: sql.ErrUnknownSystemVariable, num: mysql.ERUnknownSystemVariable, state: "HY000", message: unknownVariableMessage},
	{kind: sql.ErrSystemVariableReadOnly, num: mysql.ERIncorrectGlobalLocalVar, state: "HY000"},
	{kind: sql.ErrSystemVariableSessionOnly, num: mysql.ERLocalVariable, state: "HY000"},
	{kind: sql.ErrSystemVariableGlobalOnly, num: mysql.ERGlobalVariable, state: "HY000"},
	{kind: analyzererrors.ErrValidationGroupBy, num: mysql.ERWrongFieldWithGroup, state: "42000", message: reworded(analyzererrors.ErrValidationGroupBy,
		"Expression of SELECT list is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by")},
	{kind: sql.ErrGeneratedColumnValue, num: 3105, state: mysql.SSUnknownSQLState, // ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN
		message: reworded(sql.ErrGeneratedColumnValue, "The value specified for generated column '%s' in table '%s' is not allowed.")},
	{kind: sql.ErrForeignKeyChildViolation, num: mysql.ErNoReferencedRow2, state: "23000",
		message: reworded(sql.ErrForeignKeyChildViolation, "Cannot add or update a child row: a foreign key constraint fails (`%[2]s`, CONSTRAINT `%[1]s` REFERENCES `%[3]s`)")},
	{kind: sql.ErrForeignKeyParentViolation, num: mysql.ERRowIsReferenced2, state: "23000",
		message: reworded(sql.ErrForeignKeyParentViolation, "Cannot delete or update a parent row: a foreign key constraint fails (`%[2]s`, CONSTRAINT `%[1]s` REFERENCES `%[3]s`)")},
	{kind: sql.ErrPrivilegeCheckFailed, num: 1142, state: "42000", serverOnly: true},
	{kind: sql.ErrTableAccessDeniedForUser, num: 1142, state: "42000", serverOnly: true},
	{kind: sql.ErrDatabaseAccessDeniedForUser, num: 1044, state: "42000", serverOnly: true},
	{kind: sql.ErrSecureFilePriv, num: 1290, state: mysql.SSUnknownSQLState, serverOnly: true},
}

func init() {
	for _, k := range errorKinds {
		if k.re == nil && k.kind != sql.ErrSyntaxError { // its message is the parser's, of any form
			k.re = kindRE(k.kind)
		}
	}
}

// kindRE matches the messages of an error kind: its format with each verb
// standing for any text.
func kindRE(k *goerrors.Kind) *regexp.Regexp {
	parts := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`).Split(k.Message, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("(?s)^" + strings.Join(parts, ".*") + "$")
}

// numberKind returns MySQL's error for err when it is one of errorKinds
// (the server-only ones too when server is set).
func numberKind(err error, server bool) (*mysql.SQLError, bool) {
	for _, k := range errorKinds {
		if (server || !k.serverOnly) && k.kind.Is(err) {
			return k.sqlError(err.Error()), true
		}
	}
	return nil, false
}

// numberMessage returns MySQL's error for the message of an error that the
// protocol handler already numbered: num 1105 with a message of one of
// errorKinds', or a kind's own number with a message the kind rewrites.
func numberMessage(num int, msg string) (*mysql.SQLError, bool) {
	for _, k := range errorKinds {
		if num != mysql.ERUnknownError && (num != k.num || k.message == nil) {
			continue
		}
		if k.re != nil && k.re.MatchString(msg) {
			return k.sqlError(msg), true
		}
	}
	return nil, false
}

func (k *errorKind) sqlError(msg string) *mysql.SQLError {
	if k.message != nil {
		msg = k.message(msg)
	}
	return mysql.NewSQLError(k.num, k.state, "%s", msg)
}

// prefixed returns a message maker that puts MySQL's words before GMS's
// message, which lacks them.
func prefixed(words string) func(string) string {
	return func(msg string) string {
		if strings.HasPrefix(msg, words+" (") {
			// Numbered already (an error that went through MySQLError
			// before it reached ServerError): not worded twice.
			return msg
		}
		return words + " (" + msg + ")"
	}
}

// quotedRE finds the name GMS quotes in a message, with ” or "".
var quotedRE = regexp.MustCompile(`['"](.*)['"]`)

// checkViolatedMessage is MySQL's "Check constraint 'ck' is violated." from
// GMS's "Check constraint "ck" violated".
func checkViolatedMessage(msg string) string {
	m := quotedRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	return "Check constraint '" + m[1] + "' is violated."
}

// badNullMessage is MySQL's "Column 'c' cannot be null" from GMS's "column
// name 'c' is non-nullable but attempted to set a value of null".
func badNullMessage(msg string) string {
	m := quotedRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	return "Column '" + m[1] + "' cannot be null"
}

// dupEntryRE matches GMS's messages for a duplicate key, which end in the
// entry and key as dupEntry words them.
var dupEntryRE = regexp.MustCompile(`(?s)^duplicate (primary|unique) key given: '.*' for key '.*'$`)

// dupEntryMessage is MySQL's message for a duplicate key ("Duplicate entry
// '7' for key 't.PRIMARY'") from GMS's, whose cause dupEntry made. Other
// forms (a key GMS's own code found) stay as they are.
func dupEntryMessage(msg string) string {
	_, entry, ok := strings.Cut(msg, " key given: ")
	if !ok || !strings.HasPrefix(entry, "'") {
		return msg
	}
	return "Duplicate entry " + entry
}

// mixedGroupMessage is MySQL's message for a column outside aggregates
// under implicit grouping. GMS raises it without its arguments (the
// expression's position and the column), which its message then shows as
// formatting errors; those parts are left out.
func mixedGroupMessage(msg string) string {
	if strings.Contains(msg, "%!") {
		return "In aggregated query without GROUP BY, an expression of the SELECT list contains a nonaggregated column; " +
			"this is incompatible with sql_mode=only_full_group_by"
	}
	return "I" + strings.TrimPrefix(msg, "i")
}

// dataTooLong is MySQL's message for a value too long for its column. GMS's
// message holds the whole value, which may be megabytes.
func dataTooLong(msg string) string {
	const sep = "' is too large for column '"
	if i := strings.LastIndex(msg, sep); i >= 0 {
		col := strings.TrimSuffix(msg[i+len(sep):], "'")
		if strings.HasSuffix(col, ")") && strings.Contains(col, "(") {
			// A type's conversion (as in ALTER TABLE ... MODIFY) names the
			// type, not the column.
			return "Data too long for a column of type " + col
		}
		return "Data too long for column '" + col + "'"
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return "Data too long for column (" + msg + ")"
}

// reworded returns a message maker that puts the arguments of a message of
// kind k, in order, into MySQL's format (which may take them by index,
// %[2]s). Arguments GMS quoted with %q lose their quotes. A message that
// is not of the kind's form is kept.
func reworded(k *goerrors.Kind, format string) func(string) string {
	re := kindCaptureRE(k)
	return func(msg string) string {
		m := re.FindStringSubmatch(msg)
		if m == nil {
			return msg
		}
		args := make([]any, len(m)-1)
		for i, a := range m[1:] {
			if len(a) >= 2 && a[0] == '"' && a[len(a)-1] == '"' {
				a = a[1 : len(a)-1]
			}
			args[i] = a
		}
		return fmt.Sprintf(format, args...)
	}
}

// kindCaptureRE matches the messages of an error kind as kindRE does, with
// a group for each argument.
func kindCaptureRE(k *goerrors.Kind) *regexp.Regexp {
	parts := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`).Split(k.Message, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("(?s)^" + strings.Join(parts, "(.*?)") + "$")
}

// capitalized is GMS's message with MySQL's capital first letter.
func capitalized(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// unknownDatabaseMessage is MySQL's "Unknown database 'x'"; for the mysql
// database, which holds accounts, it says where accounts are: an embedded
// database has none (CREATE USER and GRANT there fail for the want of
// it), the MySQL-protocol server keeps them.
func unknownDatabaseMessage(msg string) string {
	name := reworded(sql.ErrDatabaseNotFound, "%s")(msg)
	if strings.EqualFold(name, "mysql") {
		return "Unknown database 'mysql': accounts and privileges belong to the MySQL-protocol server (sqlshell serve); an embedded database has none"
	}
	return "Unknown database '" + name + "'"
}

// unknownVariableMessage is MySQL's "Unknown system variable 'x'", which
// names the variable without its @@ and scope.
func unknownVariableMessage(msg string) string {
	name := reworded(sql.ErrUnknownSystemVariable, "%s")(msg)
	name = strings.TrimPrefix(name, "@@")
	for _, scope := range []string{"session.", "global.", "local.", "persist."} {
		if len(name) > len(scope) && strings.EqualFold(name[:len(scope)], scope) {
			name = name[len(scope):]
		}
	}
	return "Unknown system variable '" + name + "'"
}
