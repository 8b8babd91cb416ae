package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// sqlStates maps MySQL error numbers to the SQLSTATE MySQL sends with
// them, for the numbers GMS produces without one (GMS sends HY000 for
// almost every error). Numbers missing here keep the state they have.
var sqlStates = map[int]string{
	1007: "HY000", // ER_DB_CREATE_EXISTS
	1044: "42000", // ER_DBACCESS_DENIED_ERROR
	1045: "28000", // ER_ACCESS_DENIED_ERROR
	1046: "3D000", // ER_NO_DB_ERROR
	1048: "23000", // ER_BAD_NULL_ERROR
	1049: "42000", // ER_BAD_DB_ERROR
	1050: "42S01", // ER_TABLE_EXISTS_ERROR
	1051: "42S02", // ER_BAD_TABLE_ERROR
	1054: "42S22", // ER_BAD_FIELD_ERROR
	1055: "42000", // ER_WRONG_FIELD_WITH_GROUP
	1060: "42S21", // ER_DUP_FIELDNAME
	1061: "42000", // ER_DUP_KEYNAME
	1062: "23000", // ER_DUP_ENTRY
	1064: "42000", // ER_PARSE_ERROR
	1091: "42000", // ER_CANT_DROP_FIELD_OR_KEY
	1105: "HY000", // ER_UNKNOWN_ERROR
	1136: "21S01", // ER_WRONG_VALUE_COUNT_ON_ROW
	1142: "42000", // ER_TABLEACCESS_DENIED_ERROR
	1146: "42S02", // ER_NO_SUCH_TABLE
	1149: "42000", // ER_SYNTAX_ERROR
	1213: "40001", // ER_LOCK_DEADLOCK
	1227: "42000", // ER_SPECIFIC_ACCESS_DENIED_ERROR
	1235: "42000", // ER_NOT_SUPPORTED_YET
	1241: "21000", // ER_OPERAND_COLUMNS
	1242: "21000", // ER_SUBQUERY_NO_1_ROW
	1264: "22003", // ER_WARN_DATA_OUT_OF_RANGE
	1292: "22007", // ER_TRUNCATED_WRONG_VALUE
	1317: "70100", // ER_QUERY_INTERRUPTED
	1364: "HY000", // ER_NO_DEFAULT_FOR_FIELD
	1366: "HY000", // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	1406: "22001", // ER_DATA_TOO_LONG
	1451: "23000", // ER_ROW_IS_REFERENCED_2
	1452: "23000", // ER_NO_REFERENCED_ROW_2
	1792: "25006", // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	3819: "HY000", // ER_CHECK_CONSTRAINT_VIOLATED
}

// ServerError returns the error a MySQL server sends for err: MySQLError's
// number and message (privilege and secure_file_priv errors, which
// MySQLError leaves as 1105, get MySQL's 1142, 1044 and 1290), with the SQLSTATE MySQL pairs with that number
// (clients print both: ERROR 1146 (42S02): ...). The MySQL-protocol server,
// the shell and the database/sql driver use it; nil stays nil.
func ServerError(err error) *mysql.SQLError {
	if err == nil {
		return nil
	}
	if se, ok := numberKind(sql.UnwrapError(err), true); ok {
		return se
	}
	se := MySQLError(err)
	if se == nil {
		return nil
	}
	// An error the protocol handler numbered before it reached us: only
	// its message tells the kind, or, numbered as MySQL does, its message
	// is still GMS's.
	if ne, ok := numberMessage(se.Num, se.Message); ok {
		return ne
	}
	if st, ok := sqlStates[se.Num]; ok && se.State != st && (se.State == "" || se.State == mysql.SSUnknownSQLState) {
		c := *se
		c.State = st
		return &c
	}
	return se
}
