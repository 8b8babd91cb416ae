package driver_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTxViewReadsKeepTransaction reads a view, as a one-shot query, as a
// prepared statement with an argument and through SHOW statements, inside
// a transaction after an INSERT: another connection does not see the
// insert, and Rollback undoes it. Reading a view once committed the
// transaction (GMS took the view's stored CREATE VIEW for DDL).
func TestTxViewReadsKeepTransaction(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10), (2, 20)")
	mustExec(t, db, "CREATE VIEW v AS SELECT * FROM t")
	mustExec(t, db, "CREATE TABLE probe (id INT PRIMARY KEY)")
	ctx := context.Background()
	for i, read := range []func(tx *sql.Tx) error{
		func(tx *sql.Tx) error { return drainQuery(tx.Query("SELECT * FROM v")) },
		func(tx *sql.Tx) error { return drainQuery(tx.Query("SELECT * FROM v WHERE id = ?", 1)) },
		func(tx *sql.Tx) error {
			ps, err := tx.Prepare("SELECT v FROM v WHERE id = ?")
			if err != nil {
				return err
			}
			defer ps.Close()
			var v int
			return ps.QueryRow(2).Scan(&v)
		},
		func(tx *sql.Tx) error { return drainQuery(tx.Query("SHOW CREATE VIEW v")) },
		func(tx *sql.Tx) error { return drainQuery(tx.Query("SHOW FIELDS FROM v")) },
		func(tx *sql.Tx) error {
			if _, err := tx.Exec("SAVEPOINT sp"); err != nil {
				return err
			}
			if err := drainQuery(tx.Query("SELECT * FROM v")); err != nil {
				return err
			}
			_, err := tx.Exec("ROLLBACK TO SAVEPOINT sp")
			return err
		},
	} {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = tx.Exec("INSERT INTO probe VALUES (?)", i)
		require.NoError(t, err)
		require.NoError(t, read(tx), "read %d", i)
		require.Zero(t, queryInt(t, db, "SELECT COUNT(*) FROM probe WHERE id = ?", i), "read %d: another connection saw the insert", i)
		require.NoError(t, tx.Rollback())
		require.Zero(t, queryInt(t, db, "SELECT COUNT(*) FROM probe WHERE id = ?", i), "read %d: the insert survived Rollback", i)
	}
}

// drainQuery reads and closes a result.
func drainQuery(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// TestTxCallKeepsTransaction calls procedures inside a transaction after
// an INSERT: the procedure sees the insert, its own writes belong to the
// transaction, Rollback undoes both and Commit keeps both. GMS ran the
// body in a transaction of its own, and the session rolled back the
// caller's: the insert was lost.
func TestTxCallKeepsTransaction(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE probe (id INT PRIMARY KEY)")
	mustExec(t, db, "CREATE PROCEDURE addp(x INT) INSERT INTO probe VALUES (x)")
	mustExec(t, db, "CREATE PROCEDURE countp() SELECT COUNT(*) FROM probe")
	mustExec(t, db, "CREATE PROCEDURE nested(x INT) BEGIN CALL addp(x); CALL addp(x + 1); END")
	ctx := context.Background()
	for _, end := range []string{"rollback", "commit"} {
		mustExec(t, db, "DELETE FROM probe")
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		mustExec(t, tx, "INSERT INTO probe VALUES (1)")
		require.Equal(t, int64(1), queryInt(t, tx, "CALL countp()"), "the procedure sees the caller's insert")
		mustExec(t, tx, "CALL addp(2)")
		mustExec(t, tx, "CALL nested(3)")
		require.Equal(t, int64(4), queryInt(t, tx, "SELECT COUNT(*) FROM probe"), "%s: the transaction lost a write", end)
		require.Zero(t, queryInt(t, db, "SELECT COUNT(*) FROM probe"), "%s: another connection saw the writes", end)
		if end == "rollback" {
			require.NoError(t, tx.Rollback())
			require.Zero(t, queryInt(t, db, "SELECT COUNT(*) FROM probe"), "writes survived Rollback")
		} else {
			require.NoError(t, tx.Commit())
			require.Equal(t, int64(4), queryInt(t, db, "SELECT COUNT(*) FROM probe"), "writes lost at Commit")
		}
	}

	// Without a transaction each statement of the body commits.
	mustExec(t, db, "DELETE FROM probe")
	mustExec(t, db, "CALL nested(10)")
	require.Equal(t, int64(2), queryInt(t, db, "SELECT COUNT(*) FROM probe"))
}

// TestTxPrepareKeepsTransaction runs an SQL PREPARE of a query over a view
// and of DDL inside a transaction: neither commits it.
func TestTxPrepareKeepsTransaction(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, db, "CREATE VIEW v AS SELECT * FROM t")
	tx, err := db.Begin()
	require.NoError(t, err)
	mustExec(t, tx, "INSERT INTO t VALUES (1)")
	mustExec(t, tx, "PREPARE s FROM 'SELECT * FROM v'")
	mustExec(t, tx, "PREPARE d FROM 'CREATE TABLE c (x INT)'")
	require.Zero(t, queryInt(t, db, "SELECT COUNT(*) FROM t"), "another connection saw the insert")
	require.Equal(t, int64(1), queryInt(t, tx, "SELECT COUNT(*) FROM v"))
	require.NoError(t, tx.Rollback())
	require.Zero(t, queryInt(t, db, "SELECT COUNT(*) FROM t"), "the insert survived Rollback")
}
