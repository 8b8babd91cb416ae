package server

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"sync"
	"testing"

	gmsserver "github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/go-sql-driver/mysql"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/clienttest"
)

// describe returns a result's column types as the client read them, and
// its rows as text.
func describe(t *testing.T) func(rows *sql.Rows, err error) (cols []string, out [][]string) {
	return func(rows *sql.Rows, err error) (cols []string, out [][]string) {
		t.Helper()
		return describeRows(t, rows, err)
	}
}

func describeRows(t *testing.T, rows *sql.Rows, err error) (cols []string, out [][]string) {
	t.Helper()
	require.NoError(t, err)
	defer rows.Close()
	types, err := rows.ColumnTypes()
	require.NoError(t, err)
	for _, ct := range types {
		n, _ := ct.Nullable()
		l, _ := ct.Length()
		p, s, _ := ct.DecimalSize()
		cols = append(cols, fmt.Sprintf("%s %s null=%v len=%d dec=%d,%d", ct.Name(), ct.DatabaseTypeName(), n, l, p, s))
	}
	for rows.Next() {
		vals := make([]sql.NullString, len(types))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return cols, out
}

// TestServerDirectMatchesHandler: statements the session's plan cache runs
// on the connection's goroutine (point and range selects as prepared
// statements and as text, SELECT 1, SET, BEGIN, COMMIT) answer as the
// engine's handler does: the same columns, described the same, the same
// rows, in batches past 128 rows. The reference is the same statement on a
// connection with plan reuse off (planned at every execution) or, for the
// column descriptions, a statement of another shape.
func TestServerDirectMatchesHandler(t *testing.T) {
	ctx := context.Background()
	s := testServer(t, Config{Data: t.TempDir(), Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(12), d DECIMAL(6,2), ts DATETIME(3), KEY k_idx (k))")
	for i := 1; i <= 300; i++ {
		execAll(t, root, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'c%d', %d.25, '2026-12-07 06:00:%02d.5')", i, i%10, i, i, i%60))
	}
	cached, err := root.Conn(ctx)
	require.NoError(t, err)
	defer cached.Close()
	planned, err := root.Conn(ctx)
	require.NoError(t, err)
	defer planned.Close()
	_, err = planned.ExecContext(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	for _, q := range []struct {
		text string
		args []any
	}{
		{"SELECT 1", nil},
		{"SELECT 1 AS one, 'x', 2.5", nil},
		{"SELECT c FROM t WHERE id = 7", nil},
		{"SELECT * FROM t WHERE id = ?", []any{7}},
		{"SELECT * FROM t WHERE id = ?", []any{1000}},
		{"SELECT id, c FROM t WHERE id BETWEEN ? AND ?", []any{5, 290}},
		{"SELECT id, c FROM t WHERE id BETWEEN 1 AND 128", nil},
		{"SELECT id, c FROM t WHERE id BETWEEN 1 AND 256", nil},
		{"SELECT SUM(k), COUNT(*) FROM t WHERE id BETWEEN ? AND ?", []any{1, 100}},
		{"SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c", []any{10, 30}},
		{"SELECT c FROM t WHERE k IN (?, ?) ORDER BY c LIMIT 5", []any{3, 4}},
		{"SELECT c FROM t WHERE id = ?", []any{"8"}},
	} {
		for i := 0; i < 4; i++ {
			wantCols, want := describe(t)(planned.QueryContext(ctx, q.text, q.args...))
			gotCols, got := describe(t)(cached.QueryContext(ctx, q.text, q.args...))
			require.Equal(t, wantCols, gotCols, q.text)
			require.Equal(t, want, got, q.text)
		}
	}
	// The columns of a template read as those of a statement GMS plans
	// (id > ? is no template).
	wantCols, _ := describe(t)(cached.QueryContext(ctx, "SELECT * FROM t WHERE id > ? LIMIT 1", 7))
	gotCols, _ := describe(t)(cached.QueryContext(ctx, "SELECT * FROM t WHERE id = ?", 8))
	require.Equal(t, wantCols, gotCols)

	// A client with multi-statement queries on sends COM_QUERY the
	// protocol layer hands over as a multi-statement query: the same
	// path, with reused plans.
	multi := client(t, s.Addr(), "root", "pw", "multiStatements=true")
	mconn, err := multi.Conn(ctx)
	require.NoError(t, err)
	defer mconn.Close()
	reused := func() int {
		var name string
		var n int
		require.NoError(t, mconn.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Strata_plans_reused'").Scan(&name, &n))
		return n
	}
	before := reused()
	for i := 1; i <= 5; i++ {
		q := fmt.Sprintf("SELECT id, c FROM t WHERE id BETWEEN %d AND %d", i, i+200)
		wantCols, want := describe(t)(planned.QueryContext(ctx, q))
		gotCols, got := describe(t)(mconn.QueryContext(ctx, q))
		require.Equal(t, wantCols, gotCols, q)
		require.Equal(t, want, got, q)
	}
	require.GreaterOrEqual(t, reused()-before, 4)

	// Transactions and variables through kept plans.
	for i := 0; i < 3; i++ {
		_, err = cached.ExecContext(ctx, "SET @v = 5")
		require.NoError(t, err)
		_, err = cached.ExecContext(ctx, "BEGIN")
		require.NoError(t, err)
		_, err = cached.ExecContext(ctx, "UPDATE t SET k = k + 1 WHERE id = 1")
		require.NoError(t, err)
		_, err = cached.ExecContext(ctx, "ROLLBACK")
		require.NoError(t, err)
	}
	require.Equal(t, []int{1}, queryInts(t, root, "SELECT k FROM t WHERE id = 1"))
	var v int
	require.NoError(t, cached.QueryRowContext(ctx, "SELECT @v").Scan(&v))
	require.Equal(t, 5, v)
}

// TestServerDirectChecksPrivileges: a prepared select on a reused plan
// checks the account's privileges at every execution, as planning does:
// after REVOKE the next execution is refused, with the error planning
// gives.
func TestServerDirectChecksPrivileges(t *testing.T) {
	ctx := context.Background()
	s := testServer(t, Config{Data: t.TempDir(), Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT ON main.t TO 'u'@'%'",
	)
	u := client(t, s.Addr(), "u", "upw", "")
	conn, err := u.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	stmt, err := conn.PrepareContext(ctx, "SELECT c FROM t WHERE id = ?")
	require.NoError(t, err)
	defer stmt.Close()
	for i := 0; i < 6; i++ {
		var c string
		require.NoError(t, stmt.QueryRowContext(ctx, 1+i%2).Scan(&c))
	}
	var c string
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT c FROM t WHERE id = 2").Scan(&c))
	require.Equal(t, "b", c)

	execAll(t, root, "REVOKE SELECT ON main.t FROM 'u'@'%'")
	err = stmt.QueryRowContext(ctx, 1).Scan(&c)
	require.Error(t, err)
	// As planning refuses it, and MySQL: 1142 names the table (1044 is
	// for USE of the database).
	const denied = "Error 1142 (42000): SELECT command denied to user 'u'@'127.0.0.1' for table 't'"
	require.EqualError(t, err, denied)
	err = conn.QueryRowContext(ctx, "SELECT c FROM t WHERE id = 2").Scan(&c)
	require.EqualError(t, err, denied)
}

// recorder keeps the bytes a client connection reads from the server.
type recorder struct {
	net.Conn
	mu  sync.Mutex
	got []byte
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	r.got = append(r.got, p[:n]...)
	r.mu.Unlock()
	return n, err
}

// take returns what was read since the last take.
func (r *recorder) take() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// recordedConn opens one connection whose responses are recorded.
func recordedConn(t *testing.T, addr, password string) (*sql.Conn, *recorder) {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "root", password, "tcp", addr, "main"
	rec := &recorder{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		rec.Conn = c
		return rec, err
	}
	connector, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn, rec
}

// TestServerDirectWritesMatchHandler: prepared INSERT, UPDATE and DELETE
// on kept plans (and text writes the plan cache parameterizes) answer
// byte for byte as the handler does: the same OK packets (affected rows,
// last insert id, status flags with autocommit and in-transaction,
// warning count, info) and the same error packets, and leave the same
// rows. The reference is the same statements on a connection with plan
// reuse off, writing a twin table.
func TestServerDirectWritesMatchHandler(t *testing.T) {
	ctx := context.Background()
	s := testServer(t, Config{Data: t.TempDir(), Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	for _, tbl := range []string{"wp", "wc"} {
		execAll(t, root, fmt.Sprintf(
			"CREATE TABLE %s (id INT PRIMARY KEY AUTO_INCREMENT, k INT NOT NULL, c VARCHAR(20), pad CHAR(10), UNIQUE KEY uk (k))", tbl))
	}
	planned, precv := recordedConn(t, s.Addr(), "pw")
	_, err := planned.ExecContext(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)
	cached, crecv := recordedConn(t, s.Addr(), "pw")
	reused := func() int {
		var name string
		var n int
		require.NoError(t, cached.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Strata_plans_reused'").Scan(&name, &n))
		return n
	}
	before := reused()

	type step struct {
		text string // %[1]s is the table
		args []any
	}
	steps := []step{
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{1, 10, "one", "p"}},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{2, 20, "two", nil}},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{nil, 30, "auto", "p"}},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{nil, 40, "auto", "p"}},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{2, 50, "dup", "p"}},                    // 1062
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{9, 60, "much too long a string", "p"}}, // 1406
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{300, 70, "small", "p"}},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{70000, 80, "wide", "p"}},
		{"UPDATE %[1]s SET c = ? WHERE id = ?", []any{"changed", 1}},
		{"UPDATE %[1]s SET c = ? WHERE id = ?", []any{"changed", 1}}, // matched, not changed
		{"UPDATE %[1]s SET c = ? WHERE id = ?", []any{"none", 1000}},
		{"UPDATE %[1]s SET k = ? WHERE id = ?", []any{20, 1}}, // 1062
		{"UPDATE %[1]s SET k = k + 1 WHERE id = ?", []any{3}},
		{"DELETE FROM %[1]s WHERE id = ?", []any{4}},
		{"DELETE FROM %[1]s WHERE id = ?", []any{4}},
		{"BEGIN", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{nil, 90, "in txn", "p"}},
		{"UPDATE %[1]s SET c = ? WHERE id = ?", []any{"txn", 2}},
		{"DELETE FROM %[1]s WHERE id = ?", []any{300}},
		{"COMMIT", nil},
		{"SET autocommit = 0", nil},
		{"UPDATE %[1]s SET c = ? WHERE id = ?", []any{"no ac", 2}},
		{"ROLLBACK", nil},
		{"SET autocommit = 1", nil},
		{"SET sql_mode = ''", nil},
		{"UPDATE %[1]s SET k = ? WHERE id = ?", []any{"77x", 2}}, // a warning
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{12, "88y", "warned", "p"}},
		{"SET sql_mode = DEFAULT", nil},
		// Text the plan cache parameterizes.
		{"UPDATE %[1]s SET k = 150 WHERE id = 1", nil},
		{"UPDATE %[1]s SET k = 151 WHERE id = 1", nil},
		{"INSERT INTO %[1]s (id, k) VALUES (500, 500)", nil},
		{"INSERT INTO %[1]s (id, k) VALUES (501, 501)", nil},
		{"INSERT INTO %[1]s (id, k) VALUES (501, 502)", nil}, // 1062
		{"DELETE FROM %[1]s WHERE id = 500", nil},
		{"DELETE FROM %[1]s WHERE id = 501", nil},
		// INSERT texts with strings: plain ones become arguments.
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (0, 600, 'auto', 'p')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (601, 601, 'it''s', 'p')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (602, 602, 'back\\'slash', 'p')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (603, 603, _utf8mb4'intro', N'n')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (604, 604, 'adj' 'acent', 'p')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (605, 605, 'much too long a string', 'p')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (606, 606, DATE '2026-12-07', 'p')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (607, 601, 'dup k', 'p')", nil},
		{"INSERT INTO %[1]s (id, k, c, pad) VALUES (0, 608, '', '')", nil},
	}
	run := func(conn *sql.Conn, rec *recorder, tbl string, st step, stmts map[string]*sql.Stmt) []byte {
		text := fmt.Sprintf(st.text, tbl)
		if st.args == nil {
			rec.take()
			_, _ = conn.ExecContext(ctx, text)
			return rec.take()
		}
		ps := stmts[text]
		if ps == nil {
			var err error
			ps, err = conn.PrepareContext(ctx, text)
			require.NoError(t, err)
			stmts[text] = ps
		}
		rec.take()
		_, _ = ps.ExecContext(ctx, st.args...)
		return rec.take()
	}
	pstmts, cstmts := map[string]*sql.Stmt{}, map[string]*sql.Stmt{}
	for round := 0; round < 3; round++ {
		for i, st := range steps {
			if round > 0 && st.args == nil && st.text[0] != 'U' && st.text[0] != 'I' && st.text[0] != 'D' {
				continue
			}
			// Error messages name the table: the same length in both.
			want := bytes.ReplaceAll(run(planned, precv, "wp", st, pstmts), []byte("'wp."), []byte("'wc."))
			got := run(cached, crecv, "wc", st, cstmts)
			require.NotEmpty(t, want)
			require.Equal(t, want, got, "round %d step %d: %s %v", round, i, st.text, st.args)
		}
	}
	// Kept plans ran most of them.
	require.Greater(t, reused()-before, len(steps))
	dump := func(tbl string) [][]string {
		_, rows := describe(t)(root.QueryContext(ctx, "SELECT * FROM "+tbl+" ORDER BY id"))
		return rows
	}
	require.Equal(t, dump("wp"), dump("wc"))
	require.NotEmpty(t, dump("wc"))
}

// TestServerDirectWritesCheckPrivileges: prepared writes on kept plans
// check the account's INSERT, UPDATE and DELETE privileges at every
// execution: after a REVOKE the next execution is refused with the error
// planning gives (a connection with plan reuse off is the reference), and
// nothing is written.
func TestServerDirectWritesCheckPrivileges(t *testing.T) {
	ctx := context.Background()
	s := testServer(t, Config{Data: t.TempDir(), Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON main.t TO 'u'@'%'",
	)
	u := client(t, s.Addr(), "u", "upw", "")
	cached, err := u.Conn(ctx)
	require.NoError(t, err)
	defer cached.Close()
	planned, err := u.Conn(ctx)
	require.NoError(t, err)
	defer planned.Close()
	_, err = planned.ExecContext(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)
	prep := func(conn *sql.Conn, text string) *sql.Stmt {
		st, err := conn.PrepareContext(ctx, text)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	ins := prep(cached, "INSERT INTO t VALUES (?, ?)")
	upd := prep(cached, "UPDATE t SET c = ? WHERE id = ?")
	del := prep(cached, "DELETE FROM t WHERE id = ?")
	for i := 1; i <= 6; i++ {
		_, err := ins.ExecContext(ctx, i, "a")
		require.NoError(t, err)
		_, err = upd.ExecContext(ctx, "b", i)
		require.NoError(t, err)
	}
	_, err = del.ExecContext(ctx, 6)
	require.NoError(t, err)
	_, err = del.ExecContext(ctx, 5)
	require.NoError(t, err)

	for _, c := range []struct {
		priv string
		stmt *sql.Stmt
		ref  *sql.Stmt
		args []any
	}{
		{"INSERT", ins, prep(planned, "INSERT INTO t VALUES (?, ?)"), []any{7, "x"}},
		{"UPDATE", upd, prep(planned, "UPDATE t SET c = ? WHERE id = ?"), []any{"x", 1}},
		{"DELETE", del, prep(planned, "DELETE FROM t WHERE id = ?"), []any{2}},
	} {
		execAll(t, root, "REVOKE "+c.priv+" ON main.t FROM 'u'@'%'")
		_, err := c.stmt.ExecContext(ctx, c.args...)
		require.Error(t, err, c.priv)
		_, want := c.ref.ExecContext(ctx, c.args...)
		require.Error(t, want, c.priv)
		require.Equal(t, want.Error(), err.Error(), c.priv)
		execAll(t, root, "GRANT "+c.priv+" ON main.t TO 'u'@'%'")
		_, err = c.stmt.ExecContext(ctx, c.args...)
		require.NoError(t, err, c.priv)
	}
	_, rows := describe(t)(root.QueryContext(ctx, "SELECT * FROM t ORDER BY id"))
	require.Equal(t, [][]string{{"1", "x"}, {"3", "b"}, {"4", "b"}, {"7", "x"}}, rows)
}

// TestServerDirectWriteConflictsRerun: autocommit writes on kept plans in
// optimistic transactions that lose a write conflict run again, as the
// handler's do: no client sees 1213, and no increment is lost.
func TestServerDirectWriteConflictsRerun(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "strata_txn_mode=%27optimistic%27")
	db.SetMaxOpenConns(8)
	execAll(t, db, "CREATE TABLE c (id INT PRIMARY KEY, n INT)", "INSERT INTO c VALUES (1, 0)")
	const workers, each = 8, 30
	clienttest.Concurrently(t, workers, func(g int) error {
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		inc, err := conn.PrepareContext(ctx, "UPDATE c SET n = n + 1 WHERE id = ?")
		if err != nil {
			return err
		}
		defer inc.Close()
		for range each {
			if _, err := inc.ExecContext(ctx, 1); err != nil {
				return err
			}
		}
		return nil
	})
	require.Equal(t, []int{workers * each}, queryInts(t, db, "SELECT n FROM c"))
	var name string
	var mode string
	require.NoError(t, db.QueryRow("SHOW VARIABLES LIKE 'strata_txn_mode'").Scan(&name, &mode))
	require.Equal(t, "optimistic", mode)
}

// TestRowValuesMatchRowToSQL converts rows of several types, with NULLs,
// as sendResult does and as GMS's RowToSQL does, and requires the same
// values; and that each row keeps its own values, over more rows than a
// chunk holds.
func TestRowValuesMatchRowToSQL(t *testing.T) {
	ctx := gsql.NewEmptyContext()
	schema := gsql.Schema{
		{Name: "id", Type: types.Int64},
		{Name: "c", Type: types.MustCreateString(sqltypes.Char, 12, gsql.Collation_Default), Nullable: true},
		{Name: "d", Type: types.MustCreateDecimalType(6, 2), Nullable: true},
		{Name: "f", Type: types.Float64, Nullable: true},
	}
	var rows []gsql.Row
	for i := range 300 {
		r := gsql.Row{int64(i), fmt.Sprintf("c%d", i), decimal.NewFromFloat(float64(i) + 0.25), float64(i) / 3}
		if i%7 == 0 {
			r[1], r[2], r[3] = nil, nil, nil
		}
		rows = append(rows, r)
	}
	var want [][]sqltypes.Value
	wbuf := gsql.NewByteBuffer(16)
	for _, r := range rows {
		v, err := gmsserver.RowToSQL(ctx, schema, r, nil, wbuf)
		require.NoError(t, err)
		want = append(want, v)
	}
	var vals rowValues
	var got [][]sqltypes.Value
	gbuf := gsql.NewByteBuffer(16)
	for _, r := range rows {
		v, err := vals.toSQL(ctx, schema, r, gbuf)
		require.NoError(t, err)
		require.Len(t, v, len(schema))
		require.Equal(t, len(schema), cap(v), "a row's slice must not reach into the next row's")
		got = append(got, v)
	}
	for i := range rows {
		require.Equal(t, len(want[i]), len(got[i]))
		for j := range want[i] {
			require.Equal(t, want[i][j].Type(), got[i][j].Type(), "row %d column %d", i, j)
			require.Equal(t, want[i][j].Raw(), got[i][j].Raw(), "row %d column %d", i, j)
		}
	}
	empty, err := vals.toSQL(ctx, nil, gsql.Row{}, gbuf)
	require.NoError(t, err)
	require.Empty(t, empty)
}
