package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// TestIntegerArithmeticSQL: integer +, - and * compute exactly in SQL, with
// MySQL's result types: BIGINT UNSIGNED when an operand is unsigned, and
// 1690 for a result outside the type, where GMS wrapped or clamped (an
// UPDATE n = n + 1 at the maximum stored the minimum).
func TestIntegerArithmeticSQL(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE a (id INT PRIMARY KEY, n BIGINT, u BIGINT UNSIGNED, t TINYINT UNSIGNED)")
	d.exec("INSERT INTO a VALUES (1, 9223372036854775807, 18446744073709551615, 255), (2, -9223372036854775808, 10000000000000000000, 0)")
	for _, tc := range []struct{ q, want string }{
		{"SELECT u + 0, u - 1, u * 1 FROM a WHERE id = 1", "[[18446744073709551615 18446744073709551614 18446744073709551615]]"},
		{"SELECT u - 1, u + 5 FROM a WHERE id = 2", "[[9999999999999999999 10000000000000000005]]"},
		{"SELECT n - 1, n + 0 FROM a WHERE id = 1", "[[9223372036854775806 9223372036854775807]]"},
		{"SELECT n + 1, n * 1 FROM a WHERE id = 2", "[[-9223372036854775807 -9223372036854775808]]"},
		{"SELECT t + 1, t * 2, t - 255 FROM a WHERE id = 1", "[[256 510 0]]"},
		{"SELECT 2 * 3, 5 - 7, -3 * 4, 0 * -1", "[[6 -2 -12 0]]"},
		{"SELECT id + 1.5 FROM a WHERE id = 1", "[[2.5]]"},
	} {
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.q)), tc.q)
	}
	for _, q := range []string{
		"SELECT n + 1 FROM a WHERE id = 1",
		"SELECT n * 3 FROM a WHERE id = 1",
		"SELECT n - 1 FROM a WHERE id = 2",
		"SELECT u + 1 FROM a WHERE id = 1",
		"SELECT u * 2 FROM a WHERE id = 2",
		"SELECT t - 1 FROM a WHERE id = 2",
		"SELECT 9223372036854775807 + 1",
		"UPDATE a SET n = n + 1 WHERE id = 1",
		"UPDATE a SET u = u + 1 WHERE id = 1",
	} {
		err := d.execErr(q)
		require.Equal(t, 1690, int(mysqlErrno(err)), "%s: %v", q, err)
	}
	require.Equal(t, "[[1 9223372036854775807 18446744073709551615 255] [2 -9223372036854775808 10000000000000000000 0]]",
		fmt.Sprint(d.exec("SELECT * FROM a ORDER BY id")), "a failed UPDATE changed a row")
	d.exec("UPDATE a SET u = u + 1, n = n + 1 WHERE id = 2")
	require.Equal(t, "[[-9223372036854775807 10000000000000000001]]", fmt.Sprint(d.exec("SELECT n, u FROM a WHERE id = 2")))
}

// TestIntLiteralArithmeticStatements: the statements of the issue, where a
// literal of 128 to 255, 32768 to 65535 or 2^31 to 2^32-1 (typed unsigned
// by GMS, a signed BIGINT in MySQL) made arithmetic BIGINT UNSIGNED: in a
// SELECT list, WHERE, UPDATE SET, INSERT, a subquery, a prepared
// statement's arguments and an index lookup's bound.
func TestIntLiteralArithmeticStatements(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, c INT, u INT UNSIGNED, KEY (c))")
	d.exec("INSERT INTO t VALUES (1, -5, 5), (2, 3, 7)")
	for _, tc := range []struct{ q, want string }{
		{"SELECT -5 * 208", "[[-1040]]"},
		{"SELECT c*128, c*208, c*255, c*40000, c*3000000000 FROM t WHERE id = 1", "[[-640 -1040 -1275 -200000 -15000000000]]"},
		{"SELECT c*127, c*256, c*70000 FROM t WHERE id = 1", "[[-635 -1280 -350000]]"},
		{"SELECT CAST(-5 AS SIGNED) * 200", "[[-1000]]"},
		{"SELECT 200 - 201, 65535 - 65536, 4294967295 - 4294967296", "[[-1 -1 -1]]"},
		{"SELECT id FROM t WHERE c - 200 < 0 ORDER BY id", "[[1] [2]]"},
		{"SELECT id FROM t WHERE c > 255 - 300", "[[1] [2]]"},
		{"SELECT id FROM t WHERE c = -1040 DIV 208", "[[1]]"},
		{"SELECT (SELECT c * 200 FROM t WHERE id = 1)", "[[-1000]]"},
		{"SELECT c DIV 200, c % 200, -c, - u FROM t WHERE id = 1", "[[0 -5 5 -5]]"},
		{"SELECT u - 200 FROM t WHERE id = 1 AND u >= 200", "[]"},
	} {
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.q)), tc.q)
	}
	d.exec("UPDATE t SET c = c * 200 WHERE id = 1")
	d.exec("INSERT INTO t VALUES (3, -5 * 208, 1), (4, 200 - 300, 2)")
	require.Equal(t, "[[1 -1000] [2 3] [3 -1040] [4 -100]]", fmt.Sprint(d.exec("SELECT id, c FROM t ORDER BY id")))
	// An unsigned column stays unsigned: its result is BIGINT UNSIGNED.
	for _, q := range []string{"SELECT u - 200 FROM t WHERE id = 1", "SELECT u * -1 FROM t WHERE id = 1", "SELECT u DIV -1 FROM t WHERE id = 1",
		"UPDATE t SET c = u - 200 WHERE id = 1", "SELECT -(18446744073709551615 + 0)", "SELECT -9223372036854775807 - 2"} {
		require.Equal(t, 1690, int(mysqlErrno(d.execErr(q))), q)
	}

	// A prepared statement's arguments reach GMS as literals.
	arg := map[string]sqlparser.Expr{"v1": sqlparser.NewIntVal([]byte("200"))}
	for _, tc := range []struct{ q, want string }{
		{"SELECT c * ? FROM t WHERE id = 2", "[[600]]"},
		{"SELECT -5 * ?", "[[-1000]]"},
		{"SELECT id FROM t WHERE c - ? < 0 ORDER BY id", "[[1] [2] [3] [4]]"},
	} {
		sch, iter, err := sqlstore.Query(d.ctx, d.e, tc.q, nil, arg)
		require.NoError(t, err, tc.q)
		rows, err := sql.RowIterToRows(d.ctx, iter)
		require.NoError(t, err, tc.q)
		require.Equal(t, tc.want, fmt.Sprint(rows), tc.q)
		require.Equal(t, types.Int64, sch[0].Type.Promote(), tc.q)
	}
}

// TestIntArithmeticTypes: the result column's type is BIGINT, or BIGINT
// UNSIGNED when MySQL's is, whatever the operands' widths: GMS reported
// -c as c's own type and % as a DECIMAL.
func TestIntArithmeticTypes(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s TINYINT, u SMALLINT UNSIGNED)")
	for q, want := range map[string]sql.Type{
		"SELECT -5 * 208 FROM t":                 types.Int64,
		"SELECT 200 + 1 FROM t":                  types.Int64,
		"SELECT s * 200 FROM t":                  types.Int64,
		"SELECT u * 200 FROM t":                  types.Uint64,
		"SELECT s DIV 200 FROM t":                types.Int64,
		"SELECT s DIV u FROM t":                  types.Uint64,
		"SELECT s % u FROM t":                    types.Int64,
		"SELECT u % -3 FROM t":                   types.Uint64,
		"SELECT -s FROM t":                       types.Int64,
		"SELECT -u FROM t":                       types.Int64,
		"SELECT 18446744073709551615 - 1 FROM t": types.Uint64,
	} {
		sch, _, _, err := d.e.Query(d.ctx, q)
		require.NoError(t, err, q)
		require.Equal(t, want, sch[0].Type, q)
	}
}

// TestNoUnsignedSubtraction: under the SQL mode NO_UNSIGNED_SUBTRACTION a
// subtraction with an unsigned operand is a signed BIGINT (-1, not 1690),
// and a result beyond it fails as a BIGINT; addition stays unsigned.
func TestNoUnsignedSubtraction(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, u INT UNSIGNED, b BIGINT UNSIGNED)")
	d.exec("INSERT INTO t VALUES (1, 5, 18446744073709551615)")
	require.Equal(t, 1690, int(mysqlErrno(d.execErr("SELECT u - 7 FROM t"))))
	d.exec("SET sql_mode = 'STRICT_TRANS_TABLES,NO_UNSIGNED_SUBTRACTION'")
	for q, want := range map[string]string{
		"SELECT u - 7 FROM t":                           "[[-2]]",
		"SELECT u - CAST(7 AS UNSIGNED) FROM t":         "[[-2]]",
		"SELECT CAST(0 AS UNSIGNED) - 1":                "[[-1]]",
		"SELECT u + 7 FROM t":                           "[[12]]",
		"SELECT (SELECT u - 7 FROM t WHERE id = 1) - 0": "[[-2]]",
		"SELECT id FROM t WHERE u - 7 < 0":              "[[1]]",
	} {
		sch, iter, _, err := d.e.Query(d.ctx, q)
		require.NoError(t, err, q)
		rows, err := sql.RowIterToRows(d.ctx, iter)
		require.NoError(t, err, q)
		require.Equal(t, want, fmt.Sprint(rows), q)
		if q == "SELECT u + 7 FROM t" {
			require.Equal(t, types.Uint64, sch[0].Type, q)
		} else if q != "SELECT id FROM t WHERE u - 7 < 0" {
			require.Equal(t, types.Int64, sch[0].Type, q)
		}
	}
	err := d.execErr("SELECT b - 0 FROM t")
	require.Equal(t, 1690, int(mysqlErrno(err)))
	require.Contains(t, err.Error(), "BIGINT value is out of range")
}
