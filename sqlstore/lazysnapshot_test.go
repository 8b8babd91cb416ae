package sqlstore_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// countRows returns SELECT COUNT(*) FROM snap as c sees it.
func countRows(t *testing.T, c *sqlstore.Conn) int64 {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT COUNT(*) FROM snap")
	require.NoError(t, err)
	defer rows.Close()
	row, err := rows.Next()
	require.NoError(t, err)
	_, err = rows.Next()
	require.ErrorIs(t, err, io.EOF)
	var n int64
	_, err = fmt.Sscan(fmt.Sprint(row[0]), &n)
	require.NoError(t, err)
	return n
}

// TestSnapshotAtFirstRead checks that a transaction takes its snapshot at
// its first read, as MySQL's REPEATABLE READ does, not at BEGIN; and that
// START TRANSACTION WITH CONSISTENT SNAPSHOT takes it at once.
func TestSnapshotAtFirstRead(t *testing.T) {
	ctx := context.Background()
	a, b := twoConns(t)
	exec := func(c *sqlstore.Conn, q string) {
		t.Helper()
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	exec(a, "CREATE TABLE snap (id INT PRIMARY KEY)")
	exec(a, "INSERT INTO snap VALUES (1)")
	exec(a, "SELECT 1")

	t.Run("begin", func(t *testing.T) {
		exec(a, "BEGIN")
		// A statement whose plan is kept and that reads no table takes
		// no snapshot (planning one for the first time reads the catalog
		// through the transaction, and takes it).
		exec(a, "SELECT 1")
		exec(b, "INSERT INTO snap VALUES (2)")
		n := countRows(t, a) // the first read: the snapshot is now
		require.EqualValues(t, 2, n)
		exec(b, "INSERT INTO snap VALUES (3)")
		require.EqualValues(t, 2, countRows(t, a), "a transaction's reads see one snapshot")
		exec(a, "COMMIT")
		require.EqualValues(t, 3, countRows(t, a))
	})
	t.Run("consistent_snapshot", func(t *testing.T) {
		exec(a, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
		exec(b, "INSERT INTO snap VALUES (4)")
		require.EqualValues(t, 3, countRows(t, a), "WITH CONSISTENT SNAPSHOT takes the snapshot at BEGIN")
		exec(a, "COMMIT")
		require.EqualValues(t, 4, countRows(t, a))
	})
	t.Run("write_first", func(t *testing.T) {
		// A write is a first use too: the snapshot is taken at it.
		exec(a, "BEGIN")
		exec(b, "INSERT INTO snap VALUES (5)")
		exec(a, "INSERT INTO snap VALUES (6)")
		exec(b, "INSERT INTO snap VALUES (7)")
		require.EqualValues(t, 6, countRows(t, a))
		exec(a, "COMMIT")
		require.EqualValues(t, 7, countRows(t, a))
	})
	t.Run("empty_commit", func(t *testing.T) {
		// A transaction that never used the engine commits and rolls
		// back as a no-op.
		exec(a, "BEGIN")
		exec(a, "COMMIT")
		exec(a, "BEGIN")
		exec(a, "ROLLBACK")
		exec(a, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
		exec(a, "COMMIT")
		require.EqualValues(t, 7, countRows(t, b))
	})
}
