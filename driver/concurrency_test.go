package driver_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/clienttest"
)

// TestManyGoroutines shares one *sql.DB between goroutines that insert
// through a shared prepared statement, read, and increment one counter in
// transactions retried on write conflicts. Run it with -race.
func TestManyGoroutines(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(6)
	mustExec(t, db, "CREATE TABLE rows_ (id INT PRIMARY KEY, g INT, v VARCHAR(20))")
	mustExec(t, db, "CREATE TABLE counter (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "INSERT INTO counter VALUES (1, 0)")
	ins, err := db.Prepare("INSERT INTO rows_ VALUES (?, ?, ?)")
	require.NoError(t, err)
	defer ins.Close()

	const workers, perWorker = 8, 25
	clienttest.Concurrently(t, workers, func(g int) error { return worker(db, ins, g, perWorker) })
	require.Equal(t, int64(workers*perWorker), queryInt(t, db, "SELECT COUNT(*) FROM rows_"))
	require.Equal(t, int64(workers*perWorker), queryInt(t, db, "SELECT n FROM counter WHERE id = 1"))
	for g := range workers {
		require.Equal(t, int64(perWorker), queryInt(t, db, "SELECT COUNT(*) FROM rows_ WHERE g = ?", g))
	}
}

func worker(db *sql.DB, ins *sql.Stmt, g, n int) error {
	for i := range n {
		id := g*1000 + i
		if _, err := ins.Exec(id, g, fmt.Sprintf("w%d-%d", g, i)); err != nil {
			return fmt.Errorf("insert %d: %w", id, err)
		}
		var v string
		if err := db.QueryRow("SELECT v FROM rows_ WHERE id = ?", id).Scan(&v); err != nil {
			return fmt.Errorf("read %d: %w", id, err)
		}
		if v != fmt.Sprintf("w%d-%d", g, i) {
			return fmt.Errorf("read %d: got %q", id, v)
		}
		if err := increment(db); err != nil {
			return err
		}
	}
	return nil
}

// increment adds one to the counter in a transaction, reading it FOR UPDATE
// as a MySQL application must (a plain read sees the snapshot), and
// retrying on 1213 (a conflict in optimistic mode, a deadlock).
func increment(db *sql.DB) error {
	for {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow("SELECT n FROM counter WHERE id = 1 FOR UPDATE").Scan(&n); err != nil {
			_ = tx.Rollback()
			return err
		}
		if _, err := tx.Exec("UPDATE counter SET n = ? WHERE id = 1", n+1); err != nil {
			_ = tx.Rollback()
			return err
		}
		err = tx.Commit()
		var me *mysql.SQLError
		if errors.As(err, &me) && me.Number() == mysql.ERLockDeadlock {
			continue
		}
		return err
	}
}

// TestAutocommitCounter: single autocommit increments of one row from
// several connections all succeed, as InnoDB's would by waiting: the
// driver runs a write whose commit lost a conflict again. Inside a
// transaction the conflict stays the application's.
func TestAutocommitCounter(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "INSERT INTO c VALUES (1, 0)")
	inc, err := db.Prepare("UPDATE c SET n = n + ? WHERE id = 1")
	require.NoError(t, err)
	defer inc.Close()
	const workers, each = 8, 40
	clienttest.Concurrently(t, workers, func(g int) error {
		for i := range each {
			var err error
			if (g+i)%2 == 0 {
				_, err = db.Exec("UPDATE c SET n = n + 1 WHERE id = 1")
			} else {
				_, err = inc.Exec(1)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.EqualValues(t, workers*each, queryInt(t, db, "SELECT n FROM c WHERE id = 1"))
}

// TestCounterForUpdate: the read-modify-write counter with arguments
// (prepared plans) in pessimistic transactions, the default: every
// transaction waits for the row and commits, none fails.
func TestCounterForUpdate(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "INSERT INTO c VALUES (1, 0)")
	const workers, each = 8, 25
	clienttest.Concurrently(t, workers, func(int) error {
		for range each {
			if err := clienttest.IncrementForUpdate(db); err != nil {
				return err
			}
		}
		return nil
	})
	require.Equal(t, int64(workers*each), queryInt(t, db, "SELECT n FROM c WHERE id = 1"))
}

// TestAutocommitCounterOptimistic: the same increments in optimistic
// transactions, where the second of two commits of the row loses a
// conflict: every autocommit UPDATE still succeeds, by text and prepared,
// because the driver runs a conflicted one again.
func TestAutocommitCounterOptimistic(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "INSERT INTO c VALUES (1, 0)")
	const workers, each = 8, 40
	clienttest.Concurrently(t, workers, func(g int) error {
		conn, err := db.Conn(context.Background())
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(context.Background(), "SET SESSION strata_txn_mode = 'optimistic'"); err != nil {
			return err
		}
		for i := range each {
			if (g+i)%2 == 0 {
				_, err = conn.ExecContext(context.Background(), "UPDATE c SET n = n + 1 WHERE id = 1")
			} else {
				_, err = conn.ExecContext(context.Background(), "UPDATE c SET n = n + ? WHERE id = 1", 1)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.EqualValues(t, workers*each, queryInt(t, db, "SELECT n FROM c WHERE id = 1"))
}
