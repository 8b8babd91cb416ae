package server

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// TestIntArithColumnTypes: the result columns of integer arithmetic reach
// the client as MySQL 8 types them, a signed BIGINT unless an operand is
// unsigned, in the text protocol and for a prepared statement (whose
// arguments the server hands GMS as literals). A literal of 128 to 255,
// 32768 to 65535 or 2^31 to 2^32-1 made the result BIGINT UNSIGNED, and
// -5 * 208 failed with 1690 (mysqlcompat/intliteral.go).
func TestIntArithColumnTypes(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, c INT, u INT UNSIGNED)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO t VALUES (1, -5, 5)")
	require.NoError(t, err)

	check := func(q string, args []any, want []string, wantTypes []string) {
		t.Helper()
		rows, err := db.Query(q, args...)
		require.NoError(t, err, q)
		defer rows.Close()
		cols, err := rows.ColumnTypes()
		require.NoError(t, err, q)
		var types []string
		for _, c := range cols {
			types = append(types, c.DatabaseTypeName())
		}
		require.Equal(t, wantTypes, types, q)
		require.True(t, rows.Next(), q)
		got := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range got {
			ptrs[i] = &got[i]
		}
		require.NoError(t, rows.Scan(ptrs...), q)
		require.Equal(t, want, got, q)
		require.NoError(t, rows.Err(), q)
	}
	check("SELECT -5*208, 200+1", nil, []string{"-1040", "201"}, []string{"BIGINT", "BIGINT"})
	check("SELECT c*208, c DIV 200, c % 200, -c, u - 1, u * 200 FROM t", nil,
		[]string{"-1040", "0", "-5", "5", "4", "1000"},
		[]string{"BIGINT", "BIGINT", "BIGINT", "BIGINT", "UNSIGNED BIGINT", "UNSIGNED BIGINT"})
	// Server-side prepared: the arguments go in binary.
	check("SELECT c * ?, ? * -5, ? - 300 FROM t WHERE c - ? < 0", []any{200, 208, 255, 200},
		[]string{"-1000", "-1040", "-45"}, []string{"BIGINT", "BIGINT", "BIGINT"})

	_, err = db.Exec("UPDATE t SET c = c * 200 WHERE id = 1")
	require.NoError(t, err)
	var c int
	require.NoError(t, db.QueryRow("SELECT c FROM t WHERE id = 1").Scan(&c))
	require.Equal(t, -1000, c)
	_, err = db.Query("SELECT u - 200 FROM t")
	require.Equal(t, uint16(1690), mysqlNumber(err), "%v", err)
}

// TestIntArithMariaDBClient: the mariadb client reads the column of -5*208
// as a signed LONGLONG (BIGINT), with no UNSIGNED flag.
func TestIntArithMariaDBClient(t *testing.T) {
	mariadb := servertest.NeedTool(t, "mariadb")
	s := testServer(t, Config{Password: "pw"})
	host, port := servertest.HostPort(t, s.Addr())
	out, err := servertest.Tool(t, "", mariadb, "-h", host, "-P", port, "-uroot", "-ppw", "--table", "--column-type-info",
		"-e", "SELECT -5*208 AS a")
	require.NoError(t, err, out)
	require.Regexp(t, regexp.MustCompile(`Type:\s+LONGLONG`), out)
	require.NotContains(t, out, "UNSIGNED")
	require.Contains(t, out, "-1040")
}
