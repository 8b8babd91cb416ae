package server

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.Equal(t, uint16(1044), mysqlNumber(err), "%v", err) // as planning refuses it
	err = conn.QueryRowContext(ctx, "SELECT c FROM t WHERE id = 2").Scan(&c)
	require.Equal(t, uint16(1044), mysqlNumber(err), "%v", err) // as planning refuses it
}
