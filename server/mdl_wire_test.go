package server

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerMDLDeadlock: over the wire, a transaction that read a table and
// then writes it while another connection's ALTER TABLE waits for it fails
// with 1213 at once (MySQL's "read, ALTER waits, write: deadlock", the
// transaction the victim), is rolled back, and leaves its connection
// outside any transaction: its next statement autocommits and a ROLLBACK
// after it undoes nothing. The ALTER completes. A DDL statement that fails
// afterwards on the first connection holds no lock once it has failed:
// the other connection's DDL runs while the first stays idle.
func TestServerMDLDeadlock(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE other (id INT PRIMARY KEY)",
		"INSERT INTO t VALUES (1, 10), (2, 10)",
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	a, err := db.Conn(ctx)
	require.NoError(t, err)
	defer a.Close()
	b, err := db.Conn(ctx)
	require.NoError(t, err)
	defer b.Close()
	exec := func(c *sql.Conn, q string) {
		t.Helper()
		_, err := c.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	exec(a, "BEGIN")
	exec(a, "INSERT INTO other VALUES (1)")
	require.Equal(t, []int{2}, connInts(t, a, "SELECT COUNT(*) FROM t"))
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "ALTER TABLE t ADD COLUMN c INT")
		done <- err
	}()
	waitFor(t, "the ALTER waiting for its metadata lock", func() bool {
		return queryInts(t, db, "SELECT COUNT(*) FROM performance_schema.metadata_locks WHERE OBJECT_NAME = 't' AND LOCK_TYPE = 'EXCLUSIVE' AND LOCK_STATUS = 'PENDING'")[0] == 1
	})
	_, err = a.ExecContext(ctx, "UPDATE t SET v = 11 WHERE id = 1")
	require.EqualValues(t, 1213, mysqlNumber(err), "%v", err)
	require.NoError(t, <-done)
	require.Equal(t, []int{3}, queryInts(t, db, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME = 't'"))
	require.Empty(t, queryInts(t, db, "SELECT id FROM other"))
	exec(a, "INSERT INTO other VALUES (2)")
	require.Equal(t, []int{2}, queryInts(t, db, "SELECT id FROM other"))
	exec(a, "ROLLBACK")
	require.Equal(t, []int{2}, queryInts(t, db, "SELECT id FROM other"))

	// A failed DDL statement releases its locks as it ends.
	_, err = a.ExecContext(ctx, "CREATE UNIQUE INDEX uv ON t (v)")
	require.EqualValues(t, 1062, mysqlNumber(err), "%v", err)
	exec(b, "SET lock_wait_timeout = 1")
	exec(b, "ALTER TABLE t ADD COLUMN z INT")
	require.Equal(t, []int{0}, queryInts(t, db, "SELECT COUNT(*) FROM performance_schema.metadata_locks"))
}

// connInts runs q on c and returns its first column.
func connInts(t *testing.T, c *sql.Conn, q string) []int {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	require.NoError(t, err)
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	require.NoError(t, rows.Err())
	return out
}
