package tikvstore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/storage/tikv"
)

// twoProcesses opens two stores on one mock cluster split into regions,
// each with its own client-go store, catalog cache and counters: two
// Strata processes serving one cluster. It returns a connection of each,
// in database app.
func twoProcesses(t *testing.T) (a, b *sqlstore.Conn) {
	t.Helper()
	m, err := tikv.NewMock(splitKeys(4)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	conns := make([]*sqlstore.Conn, 2)
	for i := range conns {
		e, err := m.Open()
		if err != nil {
			t.Fatal(err)
		}
		st, err := OpenOn(e, &sqlstore.Options{SharedCatalog: true})
		if err != nil {
			t.Fatal(err)
		}
		eng := st.OpenEngine()
		c := eng.NewConn()
		t.Cleanup(func() {
			c.Close()
			eng.Close()
		})
		if err := c.UseDatabase(context.Background(), "app"); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0], conns[1]
}

// errNum returns the MySQL error number of err (0: none).
func errNum(err error) int {
	if err == nil {
		return 0
	}
	return int(sqlstore.MySQLError(err).Num)
}

// TestCatalogAcrossProcesses: a table one process creates, alters or
// drops is seen so by the other at its next statement, though the other
// cached the catalog before.
func TestCatalogAcrossProcesses(t *testing.T) {
	a, b := twoProcesses(t)
	exec(t, a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	exec(t, a, "INSERT INTO t VALUES (1, 10)")
	if got := query(t, b, "SELECT id, v FROM t"); got != "[1 10]" {
		t.Fatalf("b reads %s", got)
	}
	exec(t, b, "INSERT INTO t VALUES (2, 20)")
	exec(t, a, "ALTER TABLE t ADD COLUMN w INT DEFAULT 7")
	if got := query(t, b, "SELECT id, v, w FROM t ORDER BY id"); got != "[1 10 7 2 20 7]" {
		t.Fatalf("b reads %s after a's ALTER", got)
	}
	exec(t, b, "INSERT INTO t VALUES (3, 30, 3)")
	exec(t, b, "CREATE INDEX tv ON t (v)")
	if got := query(t, a, "SELECT id FROM t WHERE v = 30"); got != "[3]" {
		t.Fatalf("a reads %s through b's index", got)
	}
	exec(t, a, "DROP TABLE t")
	if _, err := b.Exec(context.Background(), "SELECT * FROM t"); errNum(err) != 1146 {
		t.Fatalf("b reads a dropped table: %v", err)
	}
	// A transaction that wrote a table another process drops before it
	// commits fails.
	exec(t, a, "CREATE TABLE u (id INT PRIMARY KEY)")
	exec(t, b, "BEGIN")
	exec(t, b, "INSERT INTO u VALUES (1)")
	exec(t, a, "DROP TABLE u")
	if _, err := b.Exec(context.Background(), "COMMIT"); err == nil {
		t.Fatal("a commit into a table dropped meanwhile succeeded")
	}
}

// TestAutoIncrementAcrossProcesses: two processes inserting into one table
// concurrently never hand out the same value.
func TestAutoIncrementAcrossProcesses(t *testing.T) {
	a, b := twoProcesses(t)
	exec(t, a, "CREATE TABLE t (id BIGINT PRIMARY KEY AUTO_INCREMENT, p INT)")
	const n = 150 // more than one block of each process
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []*sqlstore.Conn{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < n; j++ {
				if _, err := c.Exec(context.Background(), fmt.Sprintf("INSERT INTO t (p) VALUES (%d)", i)); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := query(t, a, "SELECT COUNT(*), COUNT(DISTINCT id) FROM t"); got != fmt.Sprintf("[%d %d]", 2*n, 2*n) {
		t.Fatalf("rows, distinct ids: %s", got)
	}
	// Each process's ids grow.
	for p := range 2 {
		rows, err := a.Query(context.Background(), fmt.Sprintf("SELECT id FROM t WHERE p = %d", p))
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for {
			vals, err := rows.Next()
			if err != nil {
				break
			}
			ids = append(ids, vals[0].(int64))
		}
		rows.Close()
		if len(ids) != n || !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }) {
			t.Fatalf("process %d: %d ids", p, len(ids))
		}
	}
}

// TestConflictsAcrossProcesses: row locks and write conflicts between two
// processes give the embedded engine's errors: 1205 after the lock wait
// timeout, 1213 to an optimistic transaction's losing commit.
func TestConflictsAcrossProcesses(t *testing.T) {
	a, b := twoProcesses(t)
	ctx := context.Background()
	exec(t, a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	exec(t, a, "INSERT INTO t VALUES (1, 0), (2, 0)")

	// Pessimistic (the default): b waits for a's row lock, then times out.
	exec(t, a, "BEGIN")
	exec(t, a, "UPDATE t SET v = 1 WHERE id = 1")
	exec(t, b, "SET innodb_lock_wait_timeout = 1")
	exec(t, b, "BEGIN")
	if _, err := b.Exec(ctx, "UPDATE t SET v = 2 WHERE id = 1"); errNum(err) != 1205 {
		t.Fatalf("b's update of a row a holds: %v, want 1205", err)
	}
	exec(t, b, "UPDATE t SET v = 2 WHERE id = 2")
	exec(t, b, "COMMIT")
	exec(t, a, "COMMIT")
	// b's next transaction, begun before a's commit, locks the row after
	// it and reads a's commit. (Its first lock comes after a's commit:
	// mocktikv, unlike TiKV, fails the prewrite of a row locked after
	// another transaction's commit that came after the first lock.)
	exec(t, b, "BEGIN")
	exec(t, a, "UPDATE t SET v = v + 1 WHERE id = 1")
	exec(t, b, "UPDATE t SET v = v + 10 WHERE id = 1")
	exec(t, b, "COMMIT")
	if got := query(t, a, "SELECT v FROM t ORDER BY id"); got != "[12 2]" {
		t.Fatalf("after both: %s", got)
	}

	// Optimistic: the second committer of a row gets 1213.
	exec(t, a, "SET strata_txn_mode = 'optimistic'")
	exec(t, b, "SET strata_txn_mode = 'optimistic'")
	exec(t, a, "BEGIN")
	exec(t, b, "BEGIN")
	exec(t, a, "UPDATE t SET v = 100 WHERE id = 2")
	exec(t, b, "UPDATE t SET v = 200 WHERE id = 2")
	exec(t, a, "COMMIT")
	if _, err := b.Exec(ctx, "COMMIT"); errNum(err) != 1213 {
		t.Fatalf("second optimistic commit: %v, want 1213", err)
	}
	if got := query(t, b, "SELECT v FROM t WHERE id = 2"); got != "[100]" {
		t.Fatalf("after the conflict: %s", got)
	}
}
