package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerLogTables: SHOW CREATE TABLE of mysql.general_log and
// mysql.slow_log gives MySQL 8's definitions, by a qualified name or in the
// mysql database, and CREATE TABLE IF NOT EXISTS of them there (what a dump
// of every database holds) succeeds and changes nothing; the same names in
// another database are tables like any other.
func TestServerLogTables(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	var name, def string
	require.NoError(t, db.QueryRow("SHOW CREATE TABLE mysql.general_log").Scan(&name, &def))
	require.Equal(t, "general_log", name)
	require.True(t, strings.HasPrefix(def, "CREATE TABLE `general_log` (\n  `event_time` timestamp(6)"), def)
	require.Contains(t, def, "ENGINE=CSV")

	conn, err := db.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(t.Context(), "USE mysql")
	require.NoError(t, err)
	require.NoError(t, conn.QueryRowContext(t.Context(), "SHOW CREATE TABLE `slow_log`;").Scan(&name, &def))
	require.Equal(t, "slow_log", name)
	require.Contains(t, def, "COMMENT='Slow log'")
	_, err = conn.ExecContext(t.Context(), "CREATE TABLE IF NOT EXISTS `general_log` (`event_time` timestamp(6) NOT NULL) ENGINE=CSV")
	require.NoError(t, err)

	_, err = conn.ExecContext(t.Context(), "USE main")
	require.NoError(t, err)
	_, err = conn.ExecContext(t.Context(), "CREATE TABLE IF NOT EXISTS general_log (id INT PRIMARY KEY)")
	require.NoError(t, err)
	require.NoError(t, conn.QueryRowContext(t.Context(), "SHOW CREATE TABLE general_log").Scan(&name, &def))
	require.Contains(t, def, "`id` int NOT NULL")
}

// TestServerOwnTables: in the mysql database, DROP TABLE IF EXISTS and
// CREATE TABLE of its own tables (what a dump of every database holds for
// them) succeed and change nothing: the accounts stay, and a new
// connection logs in. DROP TABLE without IF EXISTS is refused as before,
// and the same statements elsewhere are ordinary ones. ownTables names
// the mysql database's tables.
func TestServerOwnTables(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{"CREATE USER bob IDENTIFIED BY 'bpw'", "GRANT SELECT ON main.* TO bob"} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}

	rows, err := db.Query("SHOW TABLES FROM mysql")
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, strings.ToLower(n))
	}
	require.NoError(t, rows.Err())
	require.Len(t, names, len(ownTables), "%v", names)
	for _, n := range names {
		require.True(t, ownTables[n], n)
	}

	conn, err := db.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{
		"USE mysql",
		"DROP TABLE IF EXISTS `user`;",
		"CREATE TABLE `user` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  PRIMARY KEY (`Host`)\n) ENGINE=InnoDB",
		"drop table if exists db",
		"CREATE TABLE IF NOT EXISTS tables_priv (x INT)",
		"DROP TABLE IF EXISTS mysql.role_edges",
	} {
		_, err := conn.ExecContext(t.Context(), q)
		require.NoError(t, err, q)
	}
	_, err = conn.ExecContext(t.Context(), "DROP TABLE `user`")
	require.Error(t, err)
	var n int
	require.NoError(t, conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM mysql.user WHERE User = 'bob'").Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, client(t, s.Addr(), "bob", "bpw", "").Ping())

	_, err = conn.ExecContext(t.Context(), "USE main")
	require.NoError(t, err)
	_, err = conn.ExecContext(t.Context(), "CREATE TABLE user (id INT PRIMARY KEY)")
	require.NoError(t, err)
	_, err = conn.ExecContext(t.Context(), "CREATE TABLE user (id INT PRIMARY KEY)")
	require.Error(t, err) // exists
	_, err = conn.ExecContext(t.Context(), "DROP TABLE IF EXISTS user")
	require.NoError(t, err)
	require.NoError(t, conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'user'").Scan(&n))
	require.Zero(t, n)
}
