package sqlstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// TestQueryInfoAfterStatements runs prepared point reads (which set
// ROW_COUNT and FOUND_ROWS through the session's mirrors of the two,
// setQueryInfo) between statements GMS runs and sets them itself (UPDATE,
// INSERT, SELECT SQL_CALC_FOUND_ROWS, CALL of a procedure), on a
// connection that keeps plans and on one that plans every statement:
// ROW_COUNT() and FOUND_ROWS() read after each are the same on both, and
// as MySQL has them where it is checked below. A mirror not kept by one of
// the writers would let a point read skip setting a value that changed.
func TestQueryInfoAfterStatements(t *testing.T) {
	ctx := context.Background()
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	cached, planned := e.NewConn(), e.NewConn()
	t.Cleanup(func() {
		require.NoError(t, cached.Close())
		require.NoError(t, planned.Close())
		require.NoError(t, e.Close())
	})
	point := map[*sqlstore.Conn]*sqlstore.Stmt{}
	for c, db := range map[*sqlstore.Conn]string{cached: "c", planned: "p"} {
		require.NoError(t, c.UseDatabase(ctx, db))
		for _, q := range []string{
			"CREATE TABLE t (id INT PRIMARY KEY, k INT)",
			"INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)",
			"CREATE PROCEDURE bump() BEGIN UPDATE t SET k = k + 1 WHERE id <= 2; END",
		} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		p, err := c.Prepare(ctx, "SELECT k FROM t WHERE id = ?")
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		point[c] = p
	}
	_, err = planned.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	read := func(c *sqlstore.Conn, id int) {
		t.Helper()
		rows, err := point[c].Query(ctx, sqlstore.Arg{Ordinal: 1, Value: int64(id)})
		require.NoError(t, err)
		for {
			if _, err := rows.Next(); err != nil {
				require.Equal(t, "EOF", err.Error())
				break
			}
		}
		require.NoError(t, rows.Close())
	}
	info := func(c *sqlstore.Conn) string {
		t.Helper()
		r := queryResult(t, c, "SELECT ROW_COUNT(), FOUND_ROWS()")
		require.Empty(t, r.err)
		return fmt.Sprint(r.rows)
	}
	// Each step runs a statement, then a point read at once: a probe of
	// ROW_COUNT() and FOUND_ROWS() between the two would set them itself
	// (to -1 and 1) and hide a point read that skipped its own.
	exec := func(q string) func(c *sqlstore.Conn) {
		return func(c *sqlstore.Conn) {
			t.Helper()
			r := queryResult(t, c, q)
			require.Empty(t, r.err, q)
		}
	}
	steps := []struct {
		name string
		run  func(c *sqlstore.Conn)
		id   int    // the point read's key
		want string // ROW_COUNT(), FOUND_ROWS() after the point read
	}{
		{"nothing", func(*sqlstore.Conn) {}, 99, "[[-1 0]]"},
		{"nothing", func(*sqlstore.Conn) {}, 1, "[[-1 1]]"},
		{"nothing", func(*sqlstore.Conn) {}, 98, "[[-1 0]]"},
		{"UPDATE of three rows", exec("UPDATE t SET k = k + 1"), 97, "[[-1 0]]"},
		{"UPDATE of three rows", exec("UPDATE t SET k = k + 1"), 2, "[[-1 1]]"},
		{"INSERT of two rows", exec("INSERT INTO t VALUES (4, 4), (5, 5)"), 96, "[[-1 0]]"},
		{"SQL_CALC_FOUND_ROWS", exec("SELECT SQL_CALC_FOUND_ROWS id FROM t ORDER BY id LIMIT 1"), 95, "[[-1 0]]"},
		{"SQL_CALC_FOUND_ROWS", exec("SELECT SQL_CALC_FOUND_ROWS id FROM t ORDER BY id LIMIT 1"), 3, "[[-1 1]]"},
		{"CALL", exec("CALL bump()"), 94, "[[-1 0]]"},
		{"CALL", exec("CALL bump()"), 4, "[[-1 1]]"},
		{"DELETE of no row", exec("DELETE FROM t WHERE id = 1000"), 93, "[[-1 0]]"},
	}
	for _, s := range steps {
		for _, c := range []*sqlstore.Conn{cached, planned} {
			s.run(c)
			read(c, s.id)
		}
		got, want := info(cached), info(planned)
		require.Equal(t, want, got, s.name)
		require.Equal(t, s.want, got, s.name)
	}
	// The statements themselves, read at once.
	for _, q := range []struct{ stmt, want string }{
		{"UPDATE t SET k = k + 1 WHERE id <= 2", "[[2 "},
		{"SELECT SQL_CALC_FOUND_ROWS id FROM t ORDER BY id LIMIT 1", "[[-1 5]]"},
	} {
		for _, c := range []*sqlstore.Conn{cached, planned} {
			read(c, 92)
			exec(q.stmt)(c)
			require.Contains(t, info(c), q.want, q.stmt)
		}
	}
}
