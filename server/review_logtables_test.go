package server

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReviewOwnTablesMultiStatement: the no-op that stands for CREATE TABLE
// of one of the mysql database's own tables must not swallow the
// statements that follow it in a multi-statement text: MySQL runs them
// (here it would refuse the CREATE, and stop; a no-op has to go on).
func TestReviewOwnTablesMultiStatement(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "multiStatements=true")
	_, err := db.Exec("CREATE TABLE mysql.user (x INT); CREATE TABLE main.after_noop (id INT PRIMARY KEY)")
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'after_noop'").Scan(&n))
	require.Equal(t, 1, n, "the statement after the no-op was not run")
}

// TestReviewOwnTablesPrivileges: an account without privileges on the
// mysql database is refused DROP TABLE and CREATE TABLE there (MySQL:
// error 1142), not told they succeeded.
func TestReviewOwnTablesPrivileges(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{"CREATE USER bob IDENTIFIED BY 'bpw'", "GRANT SELECT ON main.* TO bob"} {
		_, err := root.Exec(q)
		require.NoError(t, err, q)
	}
	bob := client(t, s.Addr(), "bob", "bpw", "")
	for _, q := range []string{"DROP TABLE IF EXISTS mysql.user", "CREATE TABLE mysql.user (x INT)"} {
		_, err := bob.Exec(q)
		require.Error(t, err, q)
		require.Contains(t, err.Error(), "1142", q)
	}
}
