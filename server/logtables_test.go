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

// TestServerOwnTablesMultiStatement: the no-op that stands for CREATE
// TABLE or DROP TABLE IF EXISTS of one of the mysql database's own tables
// ends at the end of its statement: the statements after it in a
// multi-statement text run, and a delimiter in a string or comment of the
// no-op does not end it. Without multi-statements the text is refused.
func TestServerOwnTablesMultiStatement(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "multiStatements=true")
	for _, q := range []string{
		"CREATE TABLE mysql.user (x INT); CREATE TABLE main.after_noop (id INT PRIMARY KEY)",
		"DROP TABLE IF EXISTS mysql.db ; INSERT INTO main.after_noop VALUES (1)",
		"CREATE TABLE mysql.user (x VARCHAR(9) DEFAULT ';', /* ; */ y INT COMMENT 'a;''b') -- ;\n;INSERT INTO main.after_noop VALUES (2);",
		"CREATE TABLE IF NOT EXISTS mysql.general_log (x INT);INSERT INTO main.after_noop VALUES (3)",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM main.after_noop").Scan(&n))
	require.Equal(t, 3, n, "a statement after a no-op was not run")

	// Without multi-statements, such a text is refused, as MySQL refuses
	// it, rather than taken as a no-op that hides the second statement.
	single := client(t, s.Addr(), "root", "pw", "")
	_, err := single.Exec("CREATE TABLE mysql.user (x INT); CREATE TABLE main.not_run (id INT PRIMARY KEY)")
	require.Error(t, err)
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'not_run'").Scan(&n))
	require.Zero(t, n)
}

// TestFirstStatement: firstStatement ends the first statement at the
// first delimiter outside quotes and comments.
func TestFirstStatement(t *testing.T) {
	for _, c := range []struct{ q, first, rest string }{
		{"a; b", "a", " b"},
		{"a;  ", "a", ""},
		{"a", "a", ""},
		{"a ';' \"b;\" `c;` 'it''s;' 'x\\';'; b", "a ';' \"b;\" `c;` 'it''s;' 'x\\';'", " b"},
		{"a /* ; */ # ;\n -- ;\n; b", "a /* ; */ # ;\n -- ;\n", " b"},
		{"a --; b", "a --", " b"}, // "--" without a space after it starts no comment
		{"a 'open; b", "a 'open; b", ""},
	} {
		first, rest := firstStatement(c.q, ';')
		require.Equal(t, c.first, first, c.q)
		require.Equal(t, c.rest, rest, c.q)
	}
	first, rest := firstStatement("a; b // c", '/')
	require.Equal(t, "a; b ", first)
	require.Equal(t, "/ c", rest)
}

// TestServerOwnTablesPrivileges: the no-ops of the mysql database's own
// tables check the privilege of the statement they stand for: an account
// without DROP or CREATE on the mysql database is refused with MySQL's
// error 1142, not told the statement succeeded.
func TestServerOwnTablesPrivileges(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{
		"CREATE USER bob IDENTIFIED BY 'bpw'", "GRANT SELECT ON main.* TO bob",
		"CREATE USER carol IDENTIFIED BY 'cpw'", "GRANT CREATE, DROP ON mysql.* TO carol", "GRANT SELECT ON main.* TO carol",
	} {
		_, err := root.Exec(q)
		require.NoError(t, err, q)
	}
	bob := client(t, s.Addr(), "bob", "bpw", "")
	for q, want := range map[string]string{
		"DROP TABLE IF EXISTS mysql.user":                      "DROP command denied to user 'bob'@'127.0.0.1' for table 'user'",
		"CREATE TABLE mysql.user (x INT)":                      "CREATE command denied to user 'bob'@'127.0.0.1' for table 'user'",
		"CREATE TABLE IF NOT EXISTS mysql.general_log (x INT)": "CREATE command denied to user 'bob'@'127.0.0.1' for table 'general_log'",
	} {
		_, err := bob.Exec(q)
		require.Error(t, err, q)
		require.Contains(t, err.Error(), "Error 1142", q)
		require.Contains(t, err.Error(), want, q)
	}
	carol := client(t, s.Addr(), "carol", "cpw", "")
	for _, q := range []string{"DROP TABLE IF EXISTS mysql.user", "CREATE TABLE mysql.user (x INT)"} {
		_, err := carol.Exec(q)
		require.NoError(t, err, q)
	}
}

// FuzzFirstStatement: firstStatement splits at a delimiter and loses
// nothing: the first statement and the rest, with the delimiter between
// them, are the text (the rest dropped only when it is white space).
func FuzzFirstStatement(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE mysql.user (x INT); CREATE TABLE t (id INT)",
		"DROP TABLE IF EXISTS `us;er`; SELECT 'a;b', \"c;d\" -- ;\n; SELECT 1 /* ; */",
		"SELECT 'x\\';' # ;\n;",
		"a;",
		"'unclosed;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		first, rest := firstStatement(q, ';')
		if !strings.HasPrefix(q, first) {
			t.Fatalf("%q: first %q is not its beginning", q, first)
		}
		tail := q[len(first):]
		if rest != "" {
			if tail != ";"+rest {
				t.Fatalf("%q: first %q and rest %q do not make it", q, first, rest)
			}
			return
		}
		if tail != "" && (tail[0] != ';' || strings.TrimSpace(tail[1:]) != "") {
			t.Fatalf("%q: first %q, rest dropped %q", q, first, tail)
		}
	})
}
