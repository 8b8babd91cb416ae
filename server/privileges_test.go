package server

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// accountClient opens a pool for an account without a default database:
// an account without privileges may log in, but not use main.
func accountClient(t *testing.T, addr, user, password string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/", user, password, addr))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// execAll runs statements that must succeed.
func execAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
}

// TestServerFilePrivilege: reading and writing the server's files takes
// the FILE privilege, as in MySQL: without it SELECT ... INTO OUTFILE and
// LOAD DATA INFILE are refused with 1045 and LOAD_FILE is NULL, even
// inside the files folder.
func TestServerFilePrivilege(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"INSERT INTO t VALUES (1), (2)",
		"CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)",
		"INSERT INTO notes VALUES (1, 'x')",
		"CREATE TABLE other (id INT PRIMARY KEY)",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT ON main.t TO 'u'@'%'",
		"GRANT SELECT, UPDATE ON main.notes TO 'u'@'%'",
	)
	files := filepath.Join(data, filesDir)
	inside := filepath.Join(files, "in.txt")
	require.NoError(t, os.WriteFile(inside, []byte("3\n"), 0o600))
	u := client(t, s.Addr(), "u", "upw", "")

	out := filepath.Join(files, "u.txt")
	_, err := u.Exec(fmt.Sprintf("SELECT * FROM t INTO OUTFILE '%s'", out))
	require.Equal(t, uint16(1045), mysqlNumber(err), "%v", err)
	require.NoFileExists(t, out)
	_, err = u.Exec(fmt.Sprintf("SELECT * FROM t INTO DUMPFILE '%s'", out))
	require.Equal(t, uint16(1045), mysqlNumber(err), "%v", err)
	_, err = u.Exec(fmt.Sprintf("LOAD DATA INFILE '%s' INTO TABLE t", inside))
	require.Equal(t, uint16(1045), mysqlNumber(err), "%v", err)
	var got sql.NullString
	require.NoError(t, u.QueryRow("SELECT LOAD_FILE(?)", inside).Scan(&got))
	require.False(t, got.Valid, "LOAD_FILE without FILE is NULL")
	require.NoError(t, u.QueryRow("SELECT (SELECT LOAD_FILE(?))", inside).Scan(&got))
	require.False(t, got.Valid, "also in a subquery")
	// A single-table UPDATE is planned apart from other statements.
	_, err = u.Exec("UPDATE notes SET body = LOAD_FILE(?) WHERE id = 1", inside)
	require.NoError(t, err)
	require.NoError(t, u.QueryRow("SELECT body FROM notes").Scan(&got))
	require.False(t, got.Valid, "LOAD_FILE in an UPDATE is NULL too")

	execAll(t, root, "GRANT FILE ON *.* TO 'u'@'%'")
	_, err = u.Exec(fmt.Sprintf("SELECT * FROM t INTO OUTFILE '%s'", out))
	require.NoError(t, err)
	require.FileExists(t, out)
	require.NoError(t, u.QueryRow("SELECT LOAD_FILE(?)", inside).Scan(&got))
	require.Equal(t, "3\n", got.String)
	_, err = u.Exec(fmt.Sprintf("LOAD DATA INFILE '%s' INTO TABLE t", inside))
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, queryInts(t, root, "SELECT id FROM t ORDER BY id"))
	_, err = u.Exec(fmt.Sprintf("LOAD DATA INFILE '%s' INTO TABLE other", inside))
	require.Equal(t, uint16(1142), mysqlNumber(err), "FILE does not give INSERT: %v", err)
}

// TestServerFilesFolderPaths: paths are compared cleaned and with their
// symbolic links resolved, so neither a sibling folder whose name starts
// like the files folder, nor "..", nor a link reaches outside; such
// statements are refused with 1290 (LOAD_FILE is NULL), as MySQL refuses
// paths outside secure_file_priv.
func TestServerFilesFolderPaths(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	files := filepath.Join(data, filesDir)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("7\n"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(files, "link.txt")))
	require.NoError(t, os.Symlink(outside, filepath.Join(files, "linkdir")))
	sibling := files + "x"
	require.NoError(t, os.MkdirAll(sibling, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sibling, "s.txt"), []byte("8\n"), 0o600))

	for _, path := range []string{
		filepath.Join(sibling, "out.txt"),
		files + "/../sqly/out.txt",
		filepath.Join(files, "linkdir", "out.txt"),
		filepath.Join(outside, "out.txt"),
	} {
		_, err := root.Exec(fmt.Sprintf("SELECT * FROM t INTO OUTFILE '%s'", path))
		require.Equal(t, uint16(1290), mysqlNumber(err), "%s: %v", path, err)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing was written outside")
	require.NoFileExists(t, filepath.Join(sibling, "out.txt"))

	for _, path := range []string{
		filepath.Join(sibling, "s.txt"),
		files + "/../sqlx/s.txt",
		filepath.Join(files, "link.txt"),
		filepath.Join(files, "linkdir", "secret.txt"),
		secret,
	} {
		var got sql.NullString
		require.NoError(t, root.QueryRow("SELECT LOAD_FILE(?)", path).Scan(&got))
		require.False(t, got.Valid, "%s read as %q", path, got.String)
		_, err := root.Exec(fmt.Sprintf("LOAD DATA INFILE '%s' INTO TABLE t", path))
		require.Equal(t, uint16(1290), mysqlNumber(err), "%s: %v", path, err)
	}
	require.Equal(t, []int{1}, queryInts(t, root, "SELECT id FROM t"))

	// Inside, also by a relative path (taken from the folder).
	_, err = root.Exec("SELECT * FROM t INTO OUTFILE 'rel.txt'")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(files, "rel.txt"))
	var got sql.NullString
	require.NoError(t, root.QueryRow("SELECT LOAD_FILE('rel.txt')").Scan(&got))
	require.Equal(t, "1\n", got.String)
}

// TestServerKillUnknownThread: KILL of a connection that does not exist
// fails with 1094, as in MySQL (it answered OK).
func TestServerKillUnknownThread(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{"KILL 987654", "KILL QUERY 987654", "KILL CONNECTION 987654"} {
		_, err := root.Exec(q)
		require.Equal(t, uint16(1094), mysqlNumber(err), "%s: %v", q, err)
		require.ErrorContains(t, err, "Unknown thread id: 987654")
	}

	// An account without privileges kills its own connections, and
	// another's only with CONNECTION_ADMIN or SUPER (1095), as in MySQL;
	// an unknown id is 1094 for it too.
	execAll(t, root, "CREATE USER 'k'@'%' IDENTIFIED BY 'kpw'")
	ctx := context.Background()
	k := accountClient(t, s.Addr(), "k", "kpw")
	victim, err := k.Conn(ctx)
	require.NoError(t, err)
	defer victim.Close()
	var vid, rid int64
	require.NoError(t, victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&vid))
	rootConn, err := root.Conn(ctx)
	require.NoError(t, err)
	defer rootConn.Close()
	require.NoError(t, rootConn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&rid))
	_, err = k.Exec(fmt.Sprintf("KILL %d", rid))
	require.Equal(t, uint16(1095), mysqlNumber(err), "%v", err)
	require.NoError(t, rootConn.PingContext(ctx), "root's connection survives")
	_, err = k.Exec("KILL 987654")
	require.Equal(t, uint16(1094), mysqlNumber(err), "%v", err)
	_, err = k.Exec(fmt.Sprintf("KILL %d", vid))
	require.NoError(t, err, "its own connection")
	require.Error(t, victim.PingContext(ctx), "the killed connection is gone")
}

// TestServerOwnAccount: every account may see its own grants and set its
// own password, as in MySQL; another account's grants need SELECT on
// mysql.user (1142 naming it, as MySQL 8 words it).
func TestServerOwnAccount(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root, "CREATE USER 'u'@'%' IDENTIFIED BY 'upw'")
	u := accountClient(t, s.Addr(), "u", "upw")
	for _, q := range []string{"SHOW GRANTS", "SHOW GRANTS FOR CURRENT_USER()", "SHOW GRANTS FOR 'u'@'%'", "SHOW GRANTS FOR u"} {
		var g string
		require.NoError(t, u.QueryRow(q).Scan(&g), q)
		require.Equal(t, "GRANT USAGE ON *.* TO `u`@`%`", g, q)
	}
	var g string
	err := u.QueryRow("SHOW GRANTS FOR 'root'@'%'").Scan(&g)
	require.EqualError(t, err, "Error 1142 (42000): SELECT command denied to user 'u'@'127.0.0.1' for table 'user'")

	_, err = u.Exec("SET PASSWORD = 'new'")
	require.NoError(t, err)
	require.Equal(t, uint16(1045), mysqlNumber(accountClient(t, s.Addr(), "u", "upw").Ping()))
	u = accountClient(t, s.Addr(), "u", "new")
	require.NoError(t, u.Ping())
	_, err = u.Exec("SET PASSWORD FOR 'u'@'%' = 'newer'")
	require.NoError(t, err)
	require.NoError(t, accountClient(t, s.Addr(), "u", "newer").Ping())

	_, err = accountClient(t, s.Addr(), "u", "newer").Exec("SET PASSWORD FOR 'root'@'%' = 'stolen'")
	require.Error(t, err, "another account's password takes CREATE USER")
	require.NoError(t, client(t, s.Addr(), "root", "pw", "").Ping())
	_, err = root.Exec("SET PASSWORD FOR 'u'@'%' = 'reset'")
	require.NoError(t, err)
	require.NoError(t, accountClient(t, s.Addr(), "u", "reset").Ping())
	// With multi-statements on, as the mariadb client connects.
	multi, err := sql.Open("mysql", fmt.Sprintf("u:reset@tcp(%s)/?multiStatements=true", s.Addr()))
	require.NoError(t, err)
	defer multi.Close()
	_, err = multi.Exec("SET PASSWORD = 'multi'")
	require.NoError(t, err)
	require.NoError(t, accountClient(t, s.Addr(), "u", "multi").Ping())
	_, err = root.Exec("SET PASSWORD FOR 'u'@'%' = 'reset'")
	require.NoError(t, err)

	require.NoError(t, s.Shutdown(context.Background()))
	s = testServer(t, Config{Data: data})
	require.NoError(t, accountClient(t, s.Addr(), "u", "reset").Ping(), "the password was saved")
}

// TestServerSetGlobalNeedsPrivilege: the report's case. An account
// without privileges set autocommit off for everyone; root's next
// session lost its INSERT. Now the SET fails with 1227 and changes
// nothing; SYSTEM_VARIABLES_ADMIN allows it.
func TestServerSetGlobalNeedsPrivilege(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root, "CREATE TABLE t (id INT PRIMARY KEY)", "CREATE USER 'u'@'%' IDENTIFIED BY 'upw'")
	u := accountClient(t, s.Addr(), "u", "upw")
	for _, q := range []string{
		"SET GLOBAL autocommit = 0",
		"SET @@global.autocommit = 0",
		"SET @@GLOBAL.autocommit = 0",
		"SET GLOBAL max_allowed_packet = 1024",
		"SET PERSIST autocommit = 0",
		"SET @a = 1, GLOBAL autocommit = 0",
	} {
		_, err := u.Exec(q)
		require.Equal(t, uint16(1227), mysqlNumber(err), "%s: %v", q, err)
	}
	var a int
	require.NoError(t, root.QueryRow("SELECT @@global.autocommit").Scan(&a))
	require.Equal(t, 1, a)
	fresh := client(t, s.Addr(), "root", "pw", "")
	execAll(t, fresh, "INSERT INTO t VALUES (1)")
	require.NoError(t, fresh.Close())
	require.Equal(t, []int{1}, queryInts(t, root, "SELECT id FROM t"))

	// The session's own variables need nothing.
	_, err := u.Exec("SET SESSION autocommit = 0")
	require.NoError(t, err)

	execAll(t, root, "GRANT SUPER ON *.* TO 'u'@'%'")
	u = accountClient(t, s.Addr(), "u", "upw")
	_, err = u.Exec("SET GLOBAL sql_select_limit = @@global.sql_select_limit")
	require.NoError(t, err)
}

// TestServerLoadFileAfterMaxAllowedPacket: SET GLOBAL max_allowed_packet
// made LOAD_FILE fail for everyone with 1105 until a restart. The limit
// is the --max-allowed-packet flag's: the SET is refused (1238) and
// LOAD_FILE keeps working, NULL for files over the limit, as in MySQL.
func TestServerLoadFileAfterMaxAllowedPacket(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw", MaxAllowedPacket: 4096})
	root := client(t, s.Addr(), "root", "pw", "")
	_, err := root.Exec("SET GLOBAL max_allowed_packet = 1048576")
	require.Equal(t, uint16(1238), mysqlNumber(err), "%v", err)
	files := filepath.Join(data, filesDir)
	require.NoError(t, os.WriteFile(filepath.Join(files, "small"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(files, "big"), make([]byte, 5000), 0o600))
	var got sql.NullString
	require.NoError(t, root.QueryRow("SELECT LOAD_FILE('small')").Scan(&got))
	require.Equal(t, "x", got.String)
	require.NoError(t, root.QueryRow("SELECT LOAD_FILE('big')").Scan(&got))
	require.False(t, got.Valid, "a file over max_allowed_packet is NULL")
	var v int64
	require.NoError(t, root.QueryRow("SELECT @@global.max_allowed_packet").Scan(&v))
	require.Equal(t, int64(4096), v)
}

// TestServerReadOnly: read_only refuses writes (1290) to accounts without
// CONNECTION_ADMIN or SUPER; super_read_only to every account; both are
// turned off again by an administrator.
func TestServerReadOnly(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT ON main.* TO 'u'@'%'",
		"SET GLOBAL read_only = ON",
	)
	u := client(t, s.Addr(), "u", "upw", "")
	_, err := u.Exec("INSERT INTO t VALUES (1)")
	require.Equal(t, uint16(1290), mysqlNumber(err), "%v", err)
	require.NoError(t, u.QueryRow("SELECT COUNT(*) FROM t").Scan(new(int)), "reads go on")
	execAll(t, root, "INSERT INTO t VALUES (2)")

	execAll(t, root, "SET GLOBAL super_read_only = 1")
	_, err = root.Exec("INSERT INTO t VALUES (3)")
	require.Equal(t, uint16(1290), mysqlNumber(err), "%v", err)
	var ro, sro int
	require.NoError(t, root.QueryRow("SELECT @@global.read_only, @@global.super_read_only").Scan(&ro, &sro))
	require.Equal(t, []int{1, 1}, []int{ro, sro})

	execAll(t, root, "SET GLOBAL read_only = OFF")
	require.NoError(t, root.QueryRow("SELECT @@global.read_only, @@global.super_read_only").Scan(&ro, &sro))
	require.Equal(t, []int{0, 0}, []int{ro, sro}, "read_only off turns super_read_only off")
	execAll(t, u, "INSERT INTO t VALUES (4)")
	require.Equal(t, []int{2, 4}, queryInts(t, root, "SELECT id FROM t ORDER BY id"))
}

// TestServerMaxConnectionsGlobal: @@max_connections is the flag's value,
// and SET GLOBAL max_connections changes the limit for new connections.
func TestServerMaxConnectionsGlobal(t *testing.T) {
	s := testServer(t, Config{Password: "pw", MaxConnections: 7})
	root := client(t, s.Addr(), "root", "pw", "")
	root.SetMaxOpenConns(1)
	var n int
	require.NoError(t, root.QueryRow("SELECT @@max_connections").Scan(&n))
	require.Equal(t, 7, n)
	execAll(t, root, "CREATE USER 'u'@'%' IDENTIFIED BY 'upw'", "SET GLOBAL max_connections = 3")
	require.NoError(t, root.QueryRow("SELECT @@global.max_connections").Scan(&n))
	require.Equal(t, 3, n)
	require.NoError(t, root.QueryRow("SELECT @@max_connections").Scan(&n))
	require.Equal(t, 3, n, "a global-only variable reads the global value")

	u := accountClient(t, s.Addr(), "u", "upw")
	u.SetMaxIdleConns(0)
	ctx := context.Background()
	for range 2 {
		c, err := u.Conn(ctx)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.PingContext(ctx))
	}
	err := accountClient(t, s.Addr(), "u", "upw").Ping()
	require.Equal(t, uint16(1040), mysqlNumber(err), "%v", err)
}

// TestServerTableDeniedMessage: a statement refused for a privilege on a
// table fails with MySQL's 1142, naming the privilege, the account's user
// with the host the client connected from, and the first table the
// privilege is missing on; also for a table of a database where the
// account holds nothing (not 1044, which MySQL gives USE).
func TestServerTableDeniedMessage(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE td (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE tsrc (id INT PRIMARY KEY, v INT)",
		"CREATE DATABASE closed",
		"CREATE TABLE closed.secret (id INT PRIMARY KEY)",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT ON main.td TO 'u'@'%'",
	)
	u := client(t, s.Addr(), "u", "upw", "")
	for _, tc := range []struct{ q, msg string }{
		{"UPDATE td SET v = 1", "UPDATE command denied to user 'u'@'127.0.0.1' for table 'td'"},
		{"DELETE FROM td", "DELETE command denied to user 'u'@'127.0.0.1' for table 'td'"},
		{"INSERT INTO td VALUES (1, 1)", "INSERT command denied to user 'u'@'127.0.0.1' for table 'td'"},
		{"SELECT * FROM tsrc", "SELECT command denied to user 'u'@'127.0.0.1' for table 'tsrc'"},
		{"SELECT * FROM td JOIN tsrc ON td.id = tsrc.id", "SELECT command denied to user 'u'@'127.0.0.1' for table 'tsrc'"},
		{"SELECT * FROM closed.secret", "SELECT command denied to user 'u'@'127.0.0.1' for table 'secret'"},
		{"DROP TABLE td", "DROP command denied to user 'u'@'127.0.0.1' for table 'td'"},
	} {
		_, err := u.Exec(tc.q)
		require.Equal(t, uint16(1142), mysqlNumber(err), "%s: %v", tc.q, err)
		require.Equal(t, "Error 1142 (42000): "+tc.msg, err.Error(), tc.q)
	}
}
