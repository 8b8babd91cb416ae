package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

func TestServerError(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		num   int
		state string
	}{
		{"nil", nil, 0, ""},
		{"no such table", sql.ErrTableNotFound.New("t"), 1146, "42S02"},
		{"duplicate key", sql.NewUniqueKeyErr("[1]", true, sql.Row{1}), 1062, "23000"},
		{"conflict", fmt.Errorf("commit: %w", ErrConflict), 1213, "40001"},
		{"privilege", sql.ErrPrivilegeCheckFailed.New("'u'@'%'"), 1142, "42000"},
		{"database access", sql.ErrDatabaseAccessDeniedForUser.New("'u'@'%'", "db"), 1044, "42000"},
		{"secure_file_priv", sql.ErrSecureFilePriv.New(), 1290, "HY000"},
		{"syntax", sql.ErrSyntaxError.New("syntax error at position 6 near 'selec'"), 1064, "42000"},
		{"table exists", sql.ErrTableAlreadyExists.New("t"), 1050, "42S01"},
		{"no default", sql.ErrInsertIntoNonNullableDefaultNullColumn.New("n"), 1364, "HY000"},
		{"no default in insert", sql.NewWrappedInsertError(sql.Row{1}, sql.ErrInsertIntoNonNullableDefaultNullColumn.New("n")), 1364, "HY000"},
		{"interrupted", fmt.Errorf("reading rows: %w", context.Canceled), 1317, "70100"},
		{"unknown", errors.New("boom"), 1105, "HY000"},
		{"data too long", sql.NewWrappedTypeConversionError("x", 1, types.ErrLengthBeyondLimit.New(strings.Repeat("x", 1<<20), "v")), 1406, "22001"},
		{"out of range as text", mysql.NewSQLError(1105, "HY000", "%s", sql.ErrValueOutOfRange.New(300, "tiny").Error()), 1264, "22003"},
		{"too long as text", mysql.NewSQLError(1105, "HY000", "%s", types.ErrLengthBeyondLimit.New("abcdef", "s").Error()), 1406, "22001"},
		{"unknown as text", mysql.NewSQLError(1105, "HY000", "%s", "boom"), 1105, "HY000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			se := ServerError(tc.err)
			if tc.err == nil {
				require.Nil(t, se)
				return
			}
			require.Equal(t, tc.num, se.Num)
			require.Equal(t, tc.state, se.State)
			require.Less(t, len(se.Message), 300, "a message holds no long value")
		})
	}
}

// TestDataTooLongMessage: the message names the column, or, when GMS's
// conversion named only the type (ALTER TABLE ... MODIFY), says so rather
// than calling the type a column.
func TestDataTooLongMessage(t *testing.T) {
	for _, tc := range []struct{ column, want string }{
		{"v", "Data too long for column 'v'"},
		{"varchar(3)", "Data too long for a column of type varchar(3)"},
	} {
		err := types.ErrLengthBeyondLimit.New("abcdefgh", tc.column)
		require.Equal(t, tc.want, MySQLError(err).Message)
	}
}

// TestStatementError: DROP TABLE of a missing table reports MySQL's 1051,
// from GMS's error and from the protocol handler's numbered one; other
// statements keep 1146.
func TestStatementError(t *testing.T) {
	gms := sql.ErrTableNotFound.New("nope")
	wire := mysql.NewSQLError(mysql.ERNoSuchTable, "42S02", "table not found: nope")
	for _, tc := range []struct {
		q   string
		err error
		num int
	}{
		{"DROP TABLE nope", gms, mysql.ERBadTable},
		{"  drop table if exists x, nope", wire, mysql.ERBadTable},
		{"DROP TEMPORARY TABLE nope", gms, mysql.ERBadTable},
		{"SELECT * FROM nope", gms, mysql.ERNoSuchTable},
		{"DROP VIEW nope", wire, mysql.ERNoSuchTable},
	} {
		se := MySQLError(StatementError(tc.q, tc.err))
		require.Equal(t, tc.num, se.Num, tc.q)
		if tc.num == mysql.ERBadTable {
			require.Equal(t, "Unknown table 'nope'", se.Message, tc.q)
		}
	}
	require.NoError(t, StatementError("DROP TABLE t", nil))

	// NULL into a NOT NULL column: 1138 under ALTER TABLE, 1048 elsewhere.
	null := sql.ErrInsertIntoNonNullableProvidedNull.New("v")
	wireNull := mysql.NewSQLError(mysql.ERBadNullError, "23000", "%s", null.Error())
	for _, tc := range []struct {
		q   string
		err error
		num int
	}{
		{"ALTER TABLE t MODIFY v INT NOT NULL", null, mysql.ERInvalidUseOfNull},
		{" alter table t change v v INT NOT NULL", wireNull, mysql.ERInvalidUseOfNull},
		{"INSERT INTO t VALUES (1, NULL)", null, mysql.ERBadNullError},
		{"UPDATE t SET v = NULL", wireNull, mysql.ERBadNullError},
	} {
		se := MySQLError(StatementError(tc.q, tc.err))
		require.Equal(t, tc.num, se.Num, tc.q)
	}
}

// TestAlterNotNullOverNulls: ALTER TABLE that makes a column holding NULLs
// NOT NULL fails, through Query, with 1138 and leaves the table as it was.
func TestAlterNotNullOverNulls(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (1, NULL), (2, 3)")
	q := "ALTER TABLE t MODIFY v INT NOT NULL"
	_, iter, err := Query(d.ctx, d.e, q, nil, nil)
	if err == nil {
		_, err = sql.RowIterToRows(d.ctx, iter)
	}
	se := MySQLError(err)
	require.NotNil(t, se, q)
	require.Equal(t, mysql.ERInvalidUseOfNull, se.Num, "%v", err)
	require.Equal(t, "22004", se.State)
	require.Equal(t, []sql.Row{{int64(1)}}, d.exec("SELECT COUNT(*) FROM t WHERE v IS NULL"))
	d.exec("INSERT INTO t VALUES (3, NULL)")
}
