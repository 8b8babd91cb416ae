package server

import (
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerDumpRoundTrip: a database with foreign keys, a view, a trigger,
// a procedure and generated columns (with an index and a CHECK), dumped with mariadb-dump (one
// database with routines and triggers, and every database) and loaded into
// a fresh server with the mariadb client, reads back the same:
// definitions, rows, triggers and routines. The dump's INSERTs give values
// for the generated columns, which the reload (sql_mode without strict
// mode) ignores; the mysql database's tables in the dump of every database
// leave the new server's as they are, and its accounts with them. Skipped
// where the MariaDB tools are not installed.
func TestServerDumpRoundTrip(t *testing.T) {
	dump, err := exec.LookPath("mariadb-dump")
	if err != nil {
		t.Skip("mariadb-dump is not installed")
	}
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Skip("the mariadb client is not installed")
	}
	src := testServer(t, Config{Password: "pw"})
	db := clientFor(t, src.Addr(), "")
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.p (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, KEY kn (name))",
		"CREATE TABLE shop.c (id INT PRIMARY KEY AUTO_INCREMENT, pid INT, price DECIMAL(6,2), note TEXT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES shop.p (id))",
		"INSERT INTO shop.p VALUES (1, 'a''b'), (2, 'tab\there'), (3, 'ünï')",
		"INSERT INTO shop.c (pid, price, note) VALUES (1, 1.50, NULL), (2, 3.25, 'x\\ny'), (1, 0.00, '')",
		"CREATE VIEW shop.v AS SELECT p.name, SUM(c.price) AS total FROM shop.p JOIN shop.c ON c.pid = p.id GROUP BY p.name",
		"CREATE TRIGGER shop.tr BEFORE INSERT ON shop.p FOR EACH ROW SET NEW.name = UPPER(NEW.name)",
		"CREATE PROCEDURE shop.pr(IN x INT) SELECT x + 1",
		"CREATE TABLE shop.g (id INT PRIMARY KEY, a INT, b VARCHAR(10), twice INT AS (a * 2) VIRTUAL, tag VARCHAR(20) AS (CONCAT(b, '!')) STORED, KEY kt (tag), CHECK (id > 0))",
		"INSERT INTO shop.g (id, a, b) VALUES (1, 1, 'x'), (2, NULL, 'y'), (3, 3, NULL)",
		"CREATE DATABASE plain",
		"CREATE TABLE plain.t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO plain.t VALUES (1, 'one')",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	run := func(name string, stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Stdin = bytes.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "%s %v: %s", name, args, errb.String())
		return out.Bytes()
	}
	conn := func(addr string) []string {
		host, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		return []string{"-h" + host, "-P" + port, "-uroot", "-ppw"}
	}

	// One database, with routines and triggers.
	one := run(dump, nil, append(conn(src.Addr()), "--routines", "--triggers", "--databases", "shop")...)
	dst := testServer(t, Config{Password: "pw"})
	run(client, one, conn(dst.Addr())...)
	want := describeTable(t, db, "shop")
	for _, part := range []string{"CONSTRAINT `fk` FOREIGN KEY", "KEY `kn`", `"tab\there"`, `"ünï"`, "BASE TABLE", "VIEW", "UPPER(NEW.name)", "x + 1", `"3.25"`,
		"GENERATED ALWAYS AS (concat(`b`,'!')) STORED", "GENERATED ALWAYS AS ((`a` * 2)) VIRTUAL", `"x!"`, `"6"`, "KEY `kt` (`tag`)", "CHECK ((`id` > 0))"} {
		require.Contains(t, want, part)
	}
	require.Contains(t, string(one), "INSERT INTO `g` VALUES\n(1,1,'x',2,'x!')") // values for the generated columns
	require.Equal(t, want, describeTable(t, clientFor(t, dst.Addr(), ""), "shop"))

	// Every database, mysql's included: its log tables, and its own tables
	// with no rows, which the reload leaves as they are. shop, which sorts
	// after mysql, loads; the new server's accounts are its own.
	_, err = db.Exec("CREATE USER bob IDENTIFIED BY 'bpw'")
	require.NoError(t, err)
	all := run(dump, nil, append(conn(src.Addr()), "--all-databases", "--triggers", "--routines")...)
	for _, part := range []string{"CREATE TABLE IF NOT EXISTS `general_log`", "DROP TABLE IF EXISTS `user`", "CREATE TABLE `user`", "USE `shop`"} {
		require.Contains(t, string(all), part)
	}
	require.Less(t, strings.Index(string(all), "USE `mysql`"), strings.Index(string(all), "USE `shop`"))
	dst2 := testServer(t, Config{Password: "pw"})
	run(client, all, conn(dst2.Addr())...)
	loaded := clientFor(t, dst2.Addr(), "")
	require.Equal(t, describeTable(t, db, "plain"), describeTable(t, loaded, "plain"))
	require.Equal(t, want, describeTable(t, loaded, "shop"))
	var n int
	require.NoError(t, loaded.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE user = 'bob'").Scan(&n))
	require.Zero(t, n)
	require.NoError(t, loaded.Ping())
}

// clientFor opens a pool to the server as root with password pw.
func clientFor(t *testing.T, addr, params string) *sql.DB {
	return client(t, addr, "root", "pw", params)
}

// describeTable prints a database's tables (SHOW CREATE TABLE and rows, in key
// order), views, triggers and procedures.
func describeTable(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var b strings.Builder
	rows := func(q string) [][]string {
		t.Helper()
		r, err := db.Query(q)
		require.NoError(t, err, q)
		defer r.Close()
		cols, err := r.Columns()
		require.NoError(t, err)
		var out [][]string
		for r.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, r.Scan(ptrs...))
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = fmt.Sprintf("%v:%q", v.Valid, v.String)
			}
			out = append(out, row)
		}
		require.NoError(t, r.Err())
		return out
	}
	for _, tr := range rows("SHOW FULL TABLES FROM " + name) {
		table := strings.Trim(strings.SplitN(tr[0], ":", 2)[1], `"`)
		fmt.Fprintln(&b, tr)
		if strings.Contains(tr[1], "VIEW") {
			fmt.Fprintln(&b, rows("SELECT * FROM "+name+"."+table+" ORDER BY 1"))
			continue
		}
		fmt.Fprintln(&b, rows("SHOW CREATE TABLE "+name+"."+table))
		fmt.Fprintln(&b, rows("SELECT * FROM "+name+"."+table+" ORDER BY 1"))
	}
	fmt.Fprintln(&b, rows("SELECT trigger_name, event_manipulation, event_object_table, action_statement FROM information_schema.triggers WHERE trigger_schema = '"+name+"'"))
	fmt.Fprintln(&b, rows("SELECT routine_name, routine_definition FROM information_schema.routines WHERE routine_schema = '"+name+"'"))
	return b.String()
}

// TestServerDumpRoundTripGeneratedValuesTrigger: a trigger and a procedure
// created out of strict mode whose bodies give generated columns values
// (which MariaDB and Strata ignore there) are dumped by mariadb-dump as
// written, with the sql_mode they were created in, and the dump reloads:
// they are created again, read back the same, and run on the loaded
// server. Skipped where the MariaDB tools are not installed.
func TestServerDumpRoundTripGeneratedValuesTrigger(t *testing.T) {
	dump, err := exec.LookPath("mariadb-dump")
	if err != nil {
		t.Skip("mariadb-dump is not installed")
	}
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Skip("the mariadb client is not installed")
	}
	src := testServer(t, Config{Password: "pw"})
	db := clientFor(t, src.Addr(), "sql_mode=%27%27")
	const body = "INSERT INTO shop.g VALUES (NEW.id, NEW.id * 10, 5, 6)"
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.g (id INT PRIMARY KEY, a INT, twice INT AS (a * 2) VIRTUAL, next INT AS (a + 1) STORED)",
		"CREATE TABLE shop.log (id INT PRIMARY KEY)",
		"CREATE TRIGGER shop.tr AFTER INSERT ON shop.log FOR EACH ROW " + body,
		"INSERT INTO shop.log VALUES (1), (2)",
		"CREATE PROCEDURE shop.pr(x INT) INSERT INTO shop.g (id, a, twice) VALUES (x, 1, 5)",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	run := func(name string, stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Stdin = bytes.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "%s %v: %s", name, args, errb.String())
		return out.Bytes()
	}
	conn := func(addr string) []string {
		host, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		return []string{"-h" + host, "-P" + port, "-uroot", "-ppw"}
	}
	out := run(dump, nil, append(conn(src.Addr()), "--triggers", "--routines", "--databases", "shop")...)
	require.Contains(t, string(out), body)
	dst := testServer(t, Config{Password: "pw"})
	run(client, out, conn(dst.Addr())...)
	loaded := clientFor(t, dst.Addr(), "")
	want := describeTable(t, db, "shop")
	require.Contains(t, want, body)
	require.Contains(t, want, `[true:"2" true:"20" true:"40" true:"21"]`)
	require.Equal(t, want, describeTable(t, loaded, "shop"))
	// The loaded trigger fires, and the procedure runs, in the default
	// (strict) sql_mode too: each runs in the mode it was created in.
	for _, s := range []*sql.DB{db, loaded} {
		_, err := s.Exec("INSERT INTO shop.log VALUES (3)")
		require.NoError(t, err)
		_, err = s.Exec("CALL shop.pr(4)")
		require.NoError(t, err)
	}
	require.Equal(t, describeTable(t, db, "shop"), describeTable(t, loaded, "shop"))
}
