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
