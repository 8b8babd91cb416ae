package driver_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

func TestTxCommitAndRollbackVisibility(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	ctx := context.Background()
	other, err := db.Conn(ctx) // a second session, pinned
	require.NoError(t, err)
	defer other.Close()
	count := func() int64 {
		var n int64
		require.NoError(t, other.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n))
		return n
	}

	tests := []struct {
		name   string
		commit bool
		want   int64
	}{
		{"rollback", false, 0},
		{"commit", true, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustExec(t, db, "DELETE FROM t")
			tx, err := db.Begin()
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO t VALUES (1, 1), (2, 2)")
			require.Equal(t, int64(2), queryInt(t, tx, "SELECT COUNT(*) FROM t"), "own writes visible")
			require.Equal(t, int64(0), count(), "uncommitted writes invisible to other sessions")
			if tc.commit {
				require.NoError(t, tx.Commit())
			} else {
				require.NoError(t, tx.Rollback())
			}
			require.Equal(t, tc.want, count())
			require.ErrorIs(t, tx.Commit(), sql.ErrTxDone)
		})
	}
}

// TestTxSnapshotAndConflict: optimistic transactions read their snapshot,
// and the second of two writers of a row fails at commit with 1213.
func TestTxSnapshotAndConflict(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 0)")

	ctx := context.Background()
	begin := func() *sql.Tx {
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = c.ExecContext(ctx, "SET strata_txn_mode = 'optimistic'")
		require.NoError(t, err)
		tx, err := c.BeginTx(ctx, nil)
		require.NoError(t, err)
		return tx
	}
	a, b := begin(), begin()
	require.Equal(t, int64(0), queryInt(t, a, "SELECT v FROM t WHERE id = 1"))
	mustExec(t, b, "UPDATE t SET v = 2 WHERE id = 1")
	require.NoError(t, b.Commit())
	require.Equal(t, int64(0), queryInt(t, a, "SELECT v FROM t WHERE id = 1"), "a reads its snapshot")
	mustExec(t, a, "UPDATE t SET v = 1 WHERE id = 1")
	err := a.Commit()
	var me *mysql.SQLError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, mysql.ERLockDeadlock, me.Number())
	require.Equal(t, int64(2), queryInt(t, db, "SELECT v FROM t WHERE id = 1"))

	// The connection of the failed transaction is usable again.
	for range 4 {
		mustExec(t, db, "UPDATE t SET v = v + 1 WHERE id = 1")
	}
	require.Equal(t, int64(6), queryInt(t, db, "SELECT v FROM t WHERE id = 1"))
}

// TestTxWaitsPessimistic: in the default pessimistic mode the second writer
// of a row waits for the first to commit, then writes over its commit.
func TestTxWaitsPessimistic(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 0)")
	a, err := db.Begin()
	require.NoError(t, err)
	b, err := db.Begin()
	require.NoError(t, err)
	mustExec(t, a, "UPDATE t SET v = v + 1 WHERE id = 1")
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec("UPDATE t SET v = v + 10 WHERE id = 1")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the second writer did not wait: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, a.Commit())
	require.NoError(t, <-done)
	require.NoError(t, b.Commit())
	require.Equal(t, int64(11), queryInt(t, db, "SELECT v FROM t WHERE id = 1"))
}

func TestTxOptions(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	ctx := context.Background()

	ro, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	_, err = ro.Exec("INSERT INTO t VALUES (1)")
	require.Error(t, err)
	require.NoError(t, ro.Rollback())

	for _, lvl := range []sql.IsolationLevel{sql.LevelDefault, sql.LevelRepeatableRead, sql.LevelSnapshot} {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: lvl})
		require.NoError(t, err, lvl)
		require.NoError(t, tx.Rollback())
	}
	_, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	require.Error(t, err)
}

func TestFailedAutocommitStatementAppliesNothing(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO t VALUES (1)")
	_, err := db.Exec("INSERT INTO t VALUES (2), (1)")
	var me *mysql.SQLError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, mysql.ERDupEntry, me.Number())
	require.Equal(t, int64(1), queryInt(t, db, "SELECT COUNT(*) FROM t"))
	// The next statement runs in a fresh transaction and sees new commits.
	mustExec(t, db, "INSERT INTO t VALUES (3)")
	require.Equal(t, int64(2), queryInt(t, db, "SELECT COUNT(*) FROM t"))
}

// TestCloseWhileInUse: DB.Close closes only idle connections before it
// releases the connector; a transaction and a result set still in use keep
// the store open, finish normally, and the store closes after them.
func TestCloseWhileInUse(t *testing.T) {
	dir := t.TempDir()
	dsn := dir + "?db=mydb"
	db, err := sql.Open("strata", dsn)
	require.NoError(t, err)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	for i := range 100 {
		mustExec(t, db, "INSERT INTO t VALUES (?)", i)
	}
	db.SetMaxIdleConns(4)
	tx, err := db.Begin()
	require.NoError(t, err)
	mustExec(t, tx, "INSERT INTO t VALUES (1000)")
	rows, err := db.Query("SELECT id FROM t ORDER BY id")
	require.NoError(t, err)

	require.NoError(t, db.Close())
	n := 0
	for rows.Next() {
		n++
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Equal(t, 100, n)
	require.NoError(t, tx.Commit())

	// Everything was released: the folder opens again, with the row.
	db, err = sql.Open("strata", dsn)
	require.NoError(t, err)
	defer db.Close()
	require.EqualValues(t, 101, queryInt(t, db, "SELECT COUNT(*) FROM t"))
}
