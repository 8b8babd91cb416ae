package server

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// TestServerFailedCommitEndsTransaction: after a COMMIT that fails with
// 1213 (an optimistic transaction's conflict) the session is outside any
// transaction, as in MySQL: its next INSERT commits on its own, and another
// connection sees it without a COMMIT.
func TestServerFailedCommitEndsTransaction(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO c VALUES (1, 0)")
	require.NoError(t, err)

	ctx := context.Background()
	c1, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c1.Close()
	for _, q := range []string{"SET strata_txn_mode = 'optimistic'", "BEGIN", "UPDATE c SET n = n + 1 WHERE id = 1"} {
		_, err = c1.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = db.Exec("UPDATE c SET n = n + 10 WHERE id = 1")
	require.NoError(t, err)
	_, err = c1.ExecContext(ctx, "COMMIT")
	require.Equal(t, uint16(1213), mysqlNumber(err), "%v", err)

	_, err = c1.ExecContext(ctx, "INSERT INTO c VALUES (2, 2)")
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, queryInts(t, db, "SELECT id FROM c ORDER BY id"))
	require.Equal(t, []int{10}, queryInts(t, db, "SELECT n FROM c WHERE id = 1"))
}

// TestServerPerformanceSchema: the lock tables of performance_schema read
// over the wire as they do embedded (the server's privileged provider asks
// every database for its views).
func TestServerPerformanceSchema(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	_, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	require.NoError(t, err)
	for _, q := range []string{
		"SELECT * FROM performance_schema.metadata_locks",
		"SELECT * FROM performance_schema.data_locks",
		"SELECT * FROM performance_schema.data_lock_waits",
	} {
		rows, err := db.Query(q)
		require.NoError(t, err, q)
		require.NoError(t, rows.Close())
	}

	a, err := db.Conn(ctx)
	require.NoError(t, err)
	defer a.Close()
	_, err = a.ExecContext(ctx, "BEGIN")
	require.NoError(t, err)
	require.Equal(t, []int{0}, connInts(t, a, "SELECT COUNT(*) FROM t"))
	require.Equal(t, []int{1}, queryInts(t, db, "SELECT COUNT(*) FROM performance_schema.metadata_locks WHERE OBJECT_SCHEMA = 'main' AND OBJECT_NAME = 't' AND LOCK_STATUS = 'GRANTED'"))
	_, err = a.ExecContext(ctx, "COMMIT")
	require.NoError(t, err)
	require.Equal(t, []int{0}, queryInts(t, db, "SELECT COUNT(*) FROM performance_schema.metadata_locks WHERE OBJECT_NAME = 't'"))

	use, err := db.Conn(ctx)
	require.NoError(t, err)
	defer use.Close()
	_, err = use.ExecContext(ctx, "USE performance_schema")
	require.NoError(t, err)
	require.Equal(t, []int{0}, connInts(t, use, "SELECT COUNT(*) FROM data_lock_waits"))
	_, err = use.ExecContext(ctx, "CREATE VIEW v AS SELECT 1")
	require.EqualValues(t, 1044, mysqlNumber(err), "%v", err)
}

// TestMariaDBClientPerformanceSchema: the mariadb command-line client
// reads performance_schema's lock tables, by qualified name and after USE.
func TestMariaDBClientPerformanceSchema(t *testing.T) {
	mariadb := servertest.NeedTool(t, "mariadb")
	s := testServer(t, Config{Password: "pw"})
	host, port := servertest.HostPort(t, s.Addr())
	out, err := servertest.Tool(t, "", mariadb, "-h"+host, "-P"+port, "-uroot", "-ppw", "-N", "-B", "-e",
		"SELECT COUNT(*) FROM performance_schema.metadata_locks; SELECT COUNT(*) FROM performance_schema.data_locks; "+
			"USE performance_schema; SELECT COUNT(*) FROM data_lock_waits")
	require.NoError(t, err, out)
	require.Equal(t, "0\n0\n0\n", out)
}

// TestServerProcessListWaitStates: while a statement waits for a metadata
// lock, SHOW PROCESSLIST and information_schema.PROCESSLIST show its State
// as MySQL does, "Waiting for table metadata lock"; while one waits for a
// row lock, the stage it waits in ("updating" for an UPDATE). The States
// go once the waits end.
func TestServerProcessListWaitStates(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 10)"} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	a, err := db.Conn(ctx)
	require.NoError(t, err)
	defer a.Close()
	b, err := db.Conn(ctx)
	require.NoError(t, err)
	defer b.Close()
	// A failure leaves b waiting for a: a's transaction ends first.
	defer func() { _, _ = a.ExecContext(ctx, "ROLLBACK") }()
	bID := connInts(t, b, "SELECT CONNECTION_ID()")[0]
	states := func() (show, schema string) {
		rows, err := db.Query("SHOW PROCESSLIST")
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var id int
			var user, host, command, state string
			var dbName, info *string
			var secs int
			require.NoError(t, rows.Scan(&id, &user, &host, &dbName, &command, &secs, &state, &info))
			if id == bID {
				show = state
			}
		}
		require.NoError(t, rows.Err())
		require.NoError(t, db.QueryRow("SELECT COALESCE(STATE, '') FROM information_schema.PROCESSLIST WHERE ID = ?", bID).Scan(&schema))
		return show, schema
	}
	waitState := func(want string) {
		t.Helper()
		waitFor(t, "State "+want, func() bool {
			show, schema := states()
			return show == want && schema == want
		})
	}
	exec := func(c interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}, q string) {
		t.Helper()
		_, err := c.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	// A metadata lock wait: an ALTER behind a transaction that read t.
	exec(a, "BEGIN")
	require.Equal(t, []int{1}, connInts(t, a, "SELECT COUNT(*) FROM t"))
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "ALTER TABLE t ADD COLUMN c INT")
		done <- err
	}()
	waitState("Waiting for table metadata lock")
	exec(a, "COMMIT")
	require.NoError(t, <-done)
	show, schema := states()
	require.NotEqual(t, "Waiting for table metadata lock", show)
	require.NotEqual(t, "Waiting for table metadata lock", schema)

	// A row lock wait: an UPDATE of a row another transaction updated.
	exec(a, "BEGIN")
	exec(a, "UPDATE t SET v = 11 WHERE id = 1")
	go func() {
		_, err := b.ExecContext(ctx, "UPDATE t SET v = 12 WHERE id = 1")
		done <- err
	}()
	waitState("updating")
	exec(a, "COMMIT")
	require.NoError(t, <-done)
	show, schema = states()
	require.NotEqual(t, "updating", show)
	require.NotEqual(t, "updating", schema)
	require.Equal(t, []int{12}, queryInts(t, db, "SELECT v FROM t"))
}
