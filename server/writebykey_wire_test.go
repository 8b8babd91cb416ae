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

// byKeySetup makes table t (ids 1..n) and account u with SELECT,
// INSERT, UPDATE and DELETE on it.
func byKeySetup(t *testing.T, root *sql.DB, n int) {
	t.Helper()
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20))",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON main.* TO 'u'@'%'",
	)
	for i := 1; i <= n; i++ {
		execAll(t, root, fmt.Sprintf("INSERT INTO t VALUES (%d, 0, 'c%d')", i, i))
	}
}

// byKeyConn returns one connection of db, closed at the end of the test.
func byKeyConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestServerWritesByKey: prepared and text UPDATEs and DELETEs by key, and
// single-row INSERTs, run on kept plans without GMS's iterators under the
// server (the store's
// DirectWrites counts them), and give what the same statements planned in
// full give: rows changed and, with CLIENT_FOUND_ROWS, rows matched,
// ROW_COUNT() and FOUND_ROWS() after each, and the table's rows.
func TestServerWritesByKey(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	byKeySetup(t, root, 40)
	ctx := context.Background()

	// Each of the statements, with its arguments, on ids of its own.
	type stmt struct {
		q    string
		args []any
	}
	var stmts []stmt
	for i := range 4 {
		id := 1 + i%3 // ids 1..3; the fourth repeats the first
		stmts = append(stmts,
			stmt{"UPDATE t SET k = k + 1 WHERE id = ?", []any{id}},
			stmt{"UPDATE t SET c = ? WHERE id = ?", []any{"same", 4 + i%2}}, // changed once, then matched only
			stmt{"UPDATE t SET k = 5 WHERE id = ?", []any{99}},              // no row
			stmt{fmt.Sprintf("UPDATE t SET k = %d WHERE id = %d", 100+i%2, 6+i%3), nil},
			stmt{fmt.Sprintf("UPDATE t SET c = 'text' WHERE id = %d", 9), nil},
			stmt{"DELETE FROM t WHERE id = ?", []any{10 + i}},
			stmt{"DELETE FROM t WHERE id = ?", []any{10 + i}}, // gone
			stmt{fmt.Sprintf("DELETE FROM t WHERE id = %d", 20+i), nil},
			stmt{"INSERT INTO t VALUES (?, ?, ?)", []any{100 + i, i, "ins"}},
			stmt{fmt.Sprintf("INSERT INTO t (id, k, c) VALUES (%d, %d, 'text')", 200+i, i), nil},
		)
	}

	type result struct {
		affected, rowCount, foundRows int64
	}
	// run runs stmts on one connection of account u (foundRows: with
	// CLIENT_FOUND_ROWS), planned in full when reuse is off, and returns
	// each result and the table's rows.
	run := func(foundRows, reuse bool) ([]result, []string, int64) {
		params := ""
		if foundRows {
			params = "clientFoundRows=true"
		}
		u := client(t, s.Addr(), "u", "upw", params)
		c := byKeyConn(t, u)
		if !reuse {
			_, err := c.ExecContext(ctx, "SET strata_plan_reuse = OFF")
			require.NoError(t, err)
		}
		before := s.store.DirectWrites()
		var out []result
		for _, st := range stmts {
			res, err := c.ExecContext(ctx, st.q, st.args...)
			require.NoError(t, err, st.q)
			var r result
			r.affected, err = res.RowsAffected()
			require.NoError(t, err)
			require.NoError(t, c.QueryRowContext(ctx, "SELECT ROW_COUNT()").Scan(&r.rowCount))
			require.NoError(t, c.QueryRowContext(ctx, "SELECT FOUND_ROWS()").Scan(&r.foundRows))
			out = append(out, r)
		}
		direct := s.store.DirectWrites() - before
		rows, err := c.QueryContext(ctx, "SELECT CONCAT(id, ':', k, ':', c) FROM t ORDER BY id")
		require.NoError(t, err)
		defer rows.Close()
		var table []string
		for rows.Next() {
			var r string
			require.NoError(t, rows.Scan(&r))
			table = append(table, r)
		}
		require.NoError(t, rows.Err())
		// Back as it was for the next run.
		execAll(t, root, "DELETE FROM t")
		for i := 1; i <= 40; i++ {
			execAll(t, root, fmt.Sprintf("INSERT INTO t VALUES (%d, 0, 'c%d')", i, i))
		}
		return out, table, direct
	}
	for _, foundRows := range []bool{false, true} {
		planned, plannedRows, plannedDirect := run(foundRows, false)
		require.Zero(t, plannedDirect, "with strata_plan_reuse OFF every execution is planned")
		kept, keptRows, direct := run(foundRows, true)
		require.Equal(t, planned, kept, "clientFoundRows=%v", foundRows)
		require.Equal(t, plannedRows, keptRows, "clientFoundRows=%v", foundRows)
		// The first execution of each statement is planned (learned); the
		// later ones run by key.
		require.GreaterOrEqual(t, direct, int64(len(stmts)*3/4), "clientFoundRows=%v", foundRows)
	}
}

// TestServerWritesByKeyChecks: the checks the server makes as it builds
// a write plan are made on the direct path at every execution: read_only
// refuses an account without SUPER (1290) and lets it write again once
// off; a REVOKE between two executions refuses the next (1142) and a GRANT
// lets the one after run by key again.
func TestServerWritesByKeyChecks(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	byKeySetup(t, root, 40)
	ctx := context.Background()
	u := byKeyConn(t, client(t, s.Addr(), "u", "upw", ""))
	up, err := u.PrepareContext(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
	require.NoError(t, err)
	defer up.Close()
	del, err := u.PrepareContext(ctx, "DELETE FROM t WHERE id = ?")
	require.NoError(t, err)
	defer del.Close()
	textUp := func(id int) error {
		_, err := u.ExecContext(ctx, fmt.Sprintf("UPDATE t SET k = 7 WHERE id = %d", id))
		return err
	}
	textDel := func(id int) error {
		_, err := u.ExecContext(ctx, fmt.Sprintf("DELETE FROM t WHERE id = %d", id))
		return err
	}
	prepUp := func(id int) error { _, err := up.ExecContext(ctx, id); return err }
	prepDel := func(id int) error { _, err := del.ExecContext(ctx, id); return err }
	writes := []struct {
		name string
		run  func(id int) error
		ids  int // first id
		priv string
	}{
		{"prepared UPDATE", prepUp, 1, "UPDATE"},
		{"text UPDATE", textUp, 1, "UPDATE"},
		{"prepared DELETE", prepDel, 10, "DELETE"},
		{"text DELETE", textDel, 20, "DELETE"},
	}
	// direct runs w once and reports whether it ran by key.
	direct := func(w func(int) error, id int) bool {
		before := s.store.DirectWrites()
		require.NoError(t, w(id))
		return s.store.DirectWrites() == before+1
	}
	for _, w := range writes {
		for i := range 3 {
			require.NoError(t, w.run(w.ids+i), w.name)
		}
		require.True(t, direct(w.run, w.ids+3), "%s: runs by key once kept", w.name)
	}

	execAll(t, root, "SET GLOBAL read_only = ON")
	for _, w := range writes {
		before := s.store.DirectWrites()
		err := w.run(w.ids + 4)
		require.Equal(t, uint16(1290), mysqlNumber(err), "%s: %v", w.name, err)
		require.Contains(t, err.Error(), "--read-only option so it cannot execute this statement")
		require.Equal(t, before, s.store.DirectWrites(), w.name)
	}
	execAll(t, root, "SET GLOBAL read_only = OFF")
	for _, w := range writes {
		require.True(t, direct(w.run, w.ids+4), "%s: by key again after read_only", w.name)
	}

	for _, w := range writes {
		execAll(t, root, "REVOKE "+w.priv+" ON main.* FROM 'u'@'%'")
		err := w.run(w.ids + 5)
		require.Equal(t, uint16(1142), mysqlNumber(err), "%s: %v", w.name, err)
		require.Contains(t, err.Error(), w.priv+" command denied to user 'u'@'127.0.0.1' for table 't'")
		execAll(t, root, "GRANT "+w.priv+" ON main.* TO 'u'@'%'")
		require.True(t, direct(w.run, w.ids+5), "%s: by key again after GRANT", w.name)
	}
	// Ids 1..6 updated once by each UPDATE (the text one last), 10..15 and
	// 20..25 deleted.
	require.Equal(t, []int{7, 7, 7, 7, 7, 7, 0, 0, 0}, queryInts(t, root, "SELECT k FROM t WHERE id < 10 ORDER BY id"))
	require.Equal(t, []int{16, 17, 18, 19, 26}, queryInts(t, root, "SELECT id FROM t WHERE id BETWEEN 10 AND 26 ORDER BY id"))
}

// TestServerWritesByKeyGlobalRead: a kept UPDATE whose plan the server
// changes as it builds it (a read of a global-only variable, which the
// server makes read the global value) is not run by key.
func TestServerWritesByKeyGlobalRead(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	byKeySetup(t, root, 5)
	ctx := context.Background()
	u := byKeyConn(t, client(t, s.Addr(), "u", "upw", ""))
	up, err := u.PrepareContext(ctx, "UPDATE t SET k = @@max_connections WHERE id = ?")
	require.NoError(t, err)
	defer up.Close()
	before := s.store.DirectWrites()
	for i, max := range []int{40, 41, 42, 43} {
		execAll(t, root, fmt.Sprintf("SET GLOBAL max_connections = %d", max))
		_, err := up.ExecContext(ctx, 1+i%2)
		require.NoError(t, err)
		require.Equal(t, []int{max}, queryInts(t, root, fmt.Sprintf("SELECT k FROM t WHERE id = %d", 1+i%2)))
	}
	require.Equal(t, before, s.store.DirectWrites())
}

// TestServerWritesByKeyLoadFile: a kept UPDATE by key reading LOAD_FILE
// is not run by key and gets, at every execution, the server's LOAD_FILE:
// a name in the files folder for an account with FILE, NULL without.
func TestServerWritesByKeyLoadFile(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	byKeySetup(t, root, 5)
	require.NoError(t, os.WriteFile(filepath.Join(data, filesDir, "small"), []byte("x"), 0o600))
	ctx := context.Background()
	before := s.store.DirectWrites()
	for _, user := range []struct {
		db   *sql.DB
		want sql.NullString
	}{
		{root, sql.NullString{String: "x", Valid: true}},
		{client(t, s.Addr(), "u", "upw", ""), sql.NullString{}},
	} {
		c := byKeyConn(t, user.db)
		up, err := c.PrepareContext(ctx, "UPDATE t SET c = LOAD_FILE('small') WHERE id = ?")
		require.NoError(t, err)
		for i := range 4 {
			execAll(t, root, "UPDATE t SET c = 'before' WHERE id < 5")
			_, err := up.ExecContext(ctx, 1+i%2)
			require.NoError(t, err)
			var got sql.NullString
			require.NoError(t, root.QueryRow(fmt.Sprintf("SELECT c FROM t WHERE id = %d", 1+i%2)).Scan(&got))
			require.Equal(t, user.want, got, "execution %d", i)
		}
		require.NoError(t, up.Close())
	}
	require.Equal(t, before, s.store.DirectWrites())
}

// TestServerWritesByKeySuperReadOnly: an account with SUPER writes by key
// under read_only, and is refused under super_read_only (1290) as the
// server's executor refuses it.
func TestServerWritesByKeySuperReadOnly(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	byKeySetup(t, root, 10)
	ctx := context.Background()
	c := byKeyConn(t, client(t, s.Addr(), "root", "pw", ""))
	up, err := c.PrepareContext(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
	require.NoError(t, err)
	defer up.Close()
	for i := range 3 {
		_, err := up.ExecContext(ctx, 1+i)
		require.NoError(t, err)
	}
	execAll(t, root, "SET GLOBAL read_only = ON")
	before := s.store.DirectWrites()
	_, err = up.ExecContext(ctx, 4)
	require.NoError(t, err)
	require.Equal(t, before+1, s.store.DirectWrites(), "SUPER writes by key under read_only")
	execAll(t, root, "SET GLOBAL super_read_only = ON")
	_, err = up.ExecContext(ctx, 5)
	require.Equal(t, uint16(1290), mysqlNumber(err), "%v", err)
	require.Contains(t, err.Error(), "--super-read-only option so it cannot execute this statement")
	execAll(t, root, "SET GLOBAL read_only = OFF")
	_, err = up.ExecContext(ctx, 5)
	require.NoError(t, err)
	require.Equal(t, before+2, s.store.DirectWrites())
	require.Equal(t, []int{1, 1, 1, 1, 1, 0}, queryInts(t, root, "SELECT k FROM t WHERE id <= 6 ORDER BY id"))
}
