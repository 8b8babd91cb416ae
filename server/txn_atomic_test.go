package server

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// Reading a view once committed the open transaction (GMS binds the view's
// stored CREATE VIEW and took the query for DDL): a later ROLLBACK undid
// nothing and other sessions saw the writes before it. These tests run
// over the MySQL protocol; sqlstore/testdata/implicit_commit has the whole
// table of statements.

// TestServerViewReadsKeepTransaction runs each statement over a view in a
// transaction after an INSERT, opened with BEGIN and with autocommit off,
// as text and as a server-side prepared statement: another connection
// does not see the insert, and ROLLBACK undoes it.
func TestServerViewReadsKeepTransaction(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	execAll(t, db,
		"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO t VALUES (1, 10)",
		"CREATE VIEW v AS SELECT * FROM t",
		"CREATE TABLE probe (id INT PRIMARY KEY)",
	)
	ctx := context.Background()
	id := 0
	for _, stmt := range []string{
		"SELECT * FROM v",
		"SELECT * FROM t WHERE id IN (SELECT id FROM v)",
		"SHOW CREATE VIEW v",
		"SHOW FIELDS FROM v",
		"DESCRIBE v",
		"WITH c AS (SELECT * FROM v) SELECT * FROM c",
		"SELECT table_name FROM information_schema.views",
	} {
		for _, open := range []string{"BEGIN", "SET autocommit = 0"} {
			for _, prepared := range []bool{false, true} {
				id++
				conn, err := db.Conn(ctx)
				require.NoError(t, err)
				_, err = conn.ExecContext(ctx, open)
				require.NoError(t, err)
				_, err = conn.ExecContext(ctx, "INSERT INTO probe VALUES (?)", id)
				require.NoError(t, err)
				if prepared {
					ps, err := conn.PrepareContext(ctx, stmt)
					if err != nil {
						// Some statements have no prepared form in GMS.
						require.NoError(t, conn.Close())
						continue
					}
					rows, err := ps.QueryContext(ctx)
					drain(t, rows, err)
					require.NoError(t, ps.Close())
				} else {
					rows, err := conn.QueryContext(ctx, stmt)
					drain(t, rows, err)
				}
				var n int
				require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM probe WHERE id = ?", id).Scan(&n))
				require.Zero(t, n, "%s (%s, prepared %v): another connection saw the insert", stmt, open, prepared)
				_, err = conn.ExecContext(ctx, "ROLLBACK")
				require.NoError(t, err)
				require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM probe WHERE id = ?", id).Scan(&n))
				require.Zero(t, n, "%s (%s, prepared %v): the insert survived ROLLBACK", stmt, open, prepared)
				require.NoError(t, conn.Close())
			}
		}
	}

	// DDL still commits, before and after itself.
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{"SET autocommit = 0", "INSERT INTO probe VALUES (1000)", "CREATE TABLE t2 (x INT)", "ROLLBACK"} {
		_, err = conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	require.Equal(t, []int{1000}, queryInts(t, db, "SELECT id FROM probe WHERE id = 1000"))
	require.Equal(t, []int{0}, queryInts(t, db, "SELECT COUNT(*) FROM t2"), "the table stays after ROLLBACK")
}

// drain reads and closes a result.
func drain(t *testing.T, rows *sql.Rows, err error) {
	t.Helper()
	require.NoError(t, err)
	for rows.Next() {
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
}

// TestMariaDBViewTransaction runs the script in the mariadb client:
// the row inserted before reading the view is gone after ROLLBACK.
func TestMariaDBViewTransaction(t *testing.T) {
	mariadb := servertest.NeedTool(t, "mariadb")
	s := testServer(t, Config{Password: "pw"})
	host, port := servertest.HostPort(t, s.Addr())
	conn := []string{"-h", host, "-P", port, "-uroot", "-ppw", "--batch", "--skip-column-names", "main"}
	script := `CREATE TABLE t (id INT PRIMARY KEY);
CREATE VIEW v AS SELECT * FROM t;
BEGIN;
INSERT INTO t VALUES (1);
SELECT * FROM v;
SHOW CREATE VIEW v;
SHOW FIELDS FROM v;
ROLLBACK;
SET autocommit = 0;
INSERT INTO t VALUES (2);
SELECT * FROM v;
ROLLBACK;
SELECT COUNT(*) FROM t;
`
	out, err := servertest.Tool(t, script, mariadb, conn...)
	require.NoError(t, err, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "0", lines[len(lines)-1], out)
}

// TestMariaDBDumpSingleTransactionWithView dumps a database holding a view
// with --single-transaction, which reads the view between SAVEPOINT sp and
// ROLLBACK TO SAVEPOINT sp; it failed with "SAVEPOINT sp does not exist"
// when reading the view committed the dump's transaction.
func TestMariaDBDumpSingleTransactionWithView(t *testing.T) {
	dump := servertest.NeedTool(t, "mariadb-dump")
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	execAll(t, db,
		"CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))",
		"INSERT INTO items VALUES (1, 'pen'), (2, 'bag')",
		"CREATE VIEW cheap AS SELECT id, name FROM items WHERE id < 2",
		"CREATE TABLE zlast (id INT PRIMARY KEY)",
		"INSERT INTO zlast VALUES (7)",
	)
	host, port := servertest.HostPort(t, s.Addr())
	out, err := servertest.Tool(t, "", dump, "-h", host, "-P", port, "-uroot", "-ppw", "--single-transaction", "main")
	require.NoError(t, err, out)
	require.Contains(t, out, "CREATE TABLE `items`")
	require.Contains(t, out, "VIEW `cheap`")
	require.Contains(t, out, "INSERT INTO `zlast` VALUES\n(7);")
}

// TestServerCallAndPrepareKeepTransaction runs, over the MySQL protocol,
// the two other statements that lost an open transaction: a CALL (GMS ran
// the body outside the caller's transaction, and the caller's insert was
// lost) and a text PREPARE of a query over a view or of DDL (the server
// runs it through GMS's handler, and it committed). Each runs after an
// INSERT in a transaction opened with BEGIN and with autocommit off:
// another connection sees nothing before the end, ROLLBACK undoes
// everything and COMMIT keeps everything.
func TestServerCallAndPrepareKeepTransaction(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	execAll(t, db,
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"CREATE VIEW v AS SELECT * FROM t",
		"CREATE TABLE probe (id INT PRIMARY KEY)",
		"CREATE PROCEDURE addp(x INT) INSERT INTO probe VALUES (x)",
		"CREATE PROCEDURE countp() SELECT COUNT(*) FROM probe",
		"CREATE PROCEDURE nested(x INT) BEGIN CALL addp(x); CALL countp(); END",
	)
	ctx := context.Background()
	for _, c := range []struct {
		stmts []string
		rows  int // rows in probe at the end of the transaction
	}{
		{[]string{"CALL countp()"}, 1},
		{[]string{"CALL addp(2)"}, 2},
		{[]string{"CALL nested(2)", "CALL addp(3)"}, 3},
		{[]string{"PREPARE s FROM 'SELECT * FROM v'", "EXECUTE s", "DEALLOCATE PREPARE s"}, 1},
		{[]string{"PREPARE s FROM 'CREATE TABLE c (x INT)'"}, 1},
		{[]string{"PREPARE s FROM 'SELECT * FROM v'", "CALL addp(2)"}, 2},
	} {
		for _, open := range []string{"BEGIN", "SET autocommit = 0"} {
			for _, end := range []string{"ROLLBACK", "COMMIT"} {
				_, err := db.Exec("DELETE FROM probe")
				require.NoError(t, err)
				conn, err := db.Conn(ctx)
				require.NoError(t, err)
				for _, q := range append([]string{open, "INSERT INTO probe VALUES (1)"}, c.stmts...) {
					// No arguments: go-sql-driver sends text COM_QUERY.
					rows, err := conn.QueryContext(ctx, q)
					drain(t, rows, err)
				}
				var n int
				require.NoError(t, conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM probe").Scan(&n))
				require.Equal(t, c.rows, n, "%v (%s): the transaction lost a write", c.stmts, open)
				require.Equal(t, []int{0}, queryInts(t, db, "SELECT COUNT(*) FROM probe"), "%v (%s): another connection saw the writes", c.stmts, open)
				_, err = conn.ExecContext(ctx, end)
				require.NoError(t, err)
				want := 0
				if end == "COMMIT" {
					want = c.rows
				}
				require.Equal(t, []int{want}, queryInts(t, db, "SELECT COUNT(*) FROM probe"), "%v (%s, %s)", c.stmts, open, end)
				// The connection goes back to the pool.
				_, err = conn.ExecContext(ctx, "SET autocommit = 1")
				require.NoError(t, err)
				require.NoError(t, conn.Close())
			}
		}
	}
}

// TestMariaDBCallAndPrepareTransaction runs a CALL and a PREPARE in a
// transaction in the mariadb client: ROLLBACK leaves nothing.
func TestMariaDBCallAndPrepareTransaction(t *testing.T) {
	mariadb := servertest.NeedTool(t, "mariadb")
	s := testServer(t, Config{Password: "pw"})
	host, port := servertest.HostPort(t, s.Addr())
	conn := []string{"-h", host, "-P", port, "-uroot", "-ppw", "--batch", "--skip-column-names", "main"}
	script := `CREATE TABLE t (id INT PRIMARY KEY);
CREATE VIEW v AS SELECT * FROM t;
CREATE PROCEDURE addt(x INT) INSERT INTO t VALUES (x);
BEGIN;
INSERT INTO t VALUES (1);
PREPARE s FROM 'SELECT COUNT(*) FROM v';
CALL addt(2);
EXECUTE s;
ROLLBACK;
SELECT COUNT(*) FROM t;
`
	out, err := servertest.Tool(t, script, mariadb, conn...)
	require.NoError(t, err, out)
	require.Equal(t, []string{"2", "0"}, strings.Split(strings.TrimSpace(out), "\n"), out)
}
