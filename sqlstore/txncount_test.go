package sqlstore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTxnStatementCounters: BEGIN and START TRANSACTION count Com_begin,
// COMMIT Com_commit, ROLLBACK Com_rollback (ROLLBACK TO SAVEPOINT not), in
// the session's and the global status, on the kept plans
// (txnstmt.go) and the planned path, as text and prepared.
func TestTxnStatementCounters(t *testing.T) {
	ctx := context.Background()
	for _, reuse := range []string{"ON", "OFF"} {
		c := openConn(t)
		_, err := c.Exec(ctx, "SET strata_plan_reuse = "+reuse)
		require.NoError(t, err)
		status := func(scope string) (n [3]int64) {
			t.Helper()
			for i, name := range []string{"Com_begin", "Com_commit", "Com_rollback"} {
				r, err := c.Query(ctx, "SHOW "+scope+" STATUS LIKE '"+name+"'")
				require.NoError(t, err)
				rows := allRows(t, r)
				require.NoError(t, r.Close())
				require.Len(t, rows, 1)
				v, err := strconv.ParseInt(fmt.Sprint(rows[0][1]), 10, 64)
				require.NoError(t, err)
				n[i] = v
			}
			return n
		}
		session, global := status("SESSION"), status("GLOBAL")
		stmts := []string{"BEGIN", "COMMIT", "START TRANSACTION READ WRITE", "SAVEPOINT s", "ROLLBACK TO SAVEPOINT s", "ROLLBACK", "BEGIN WORK", "COMMIT WORK"}
		for run := range 4 {
			for _, q := range stmts {
				if run%2 == 0 {
					_, err = c.Exec(ctx, q)
				} else {
					st, perr := c.Prepare(ctx, q)
					require.NoError(t, perr)
					_, err = st.Exec(ctx)
					require.NoError(t, st.Close())
				}
				require.NoError(t, err, q)
			}
		}
		want := [3]int64{session[0] + 12, session[1] + 8, session[2] + 4}
		require.Equal(t, want, status("SESSION"), "strata_plan_reuse %s", reuse)
		g := status("GLOBAL")
		for i := range g {
			require.GreaterOrEqual(t, g[i]-global[i], want[i]-session[i], "strata_plan_reuse %s", reuse)
		}
	}
}

// TestTxnStatementRowCount: ROW_COUNT() is 0 after BEGIN, COMMIT and
// ROLLBACK, as in MySQL and MariaDB (GMS gave a SELECT's -1), on the kept
// plans and the planned path, and a SELECT's -1 after a SELECT.
func TestTxnStatementRowCount(t *testing.T) {
	ctx := context.Background()
	for _, reuse := range []string{"ON", "OFF"} {
		c := openConn(t)
		for _, q := range []string{"SET strata_plan_reuse = " + reuse, "CREATE TABLE t (id INT PRIMARY KEY)"} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err)
		}
		rowCount := func() any {
			t.Helper()
			r, err := c.Query(ctx, "SELECT ROW_COUNT()")
			require.NoError(t, err)
			rows := allRows(t, r)
			require.NoError(t, r.Close())
			return rows[0][0]
		}
		for run := range 4 {
			for _, step := range []struct {
				q    string
				want int64
			}{
				{"BEGIN", 0}, {fmt.Sprintf("INSERT INTO t VALUES (%d), (%d)", 2*run, 2*run+1), 2}, {"COMMIT", 0},
				{"SELECT id FROM t", -1}, {"START TRANSACTION", 0}, {"SELECT id FROM t", -1}, {"ROLLBACK", 0},
			} {
				_, err := c.Exec(ctx, step.q)
				require.NoError(t, err)
				require.EqualValues(t, step.want, rowCount(), "strata_plan_reuse %s run %d: %s", reuse, run, step.q)
			}
		}
	}
}

// TestTxnStatementCountersComments: a transaction statement counts its
// Com_ variable when a comment of any kind comes before it.
func TestTxnStatementCountersComments(t *testing.T) {
	ctx := context.Background()
	c := openConn(t)
	status := func() (n [3]int64) {
		t.Helper()
		for i, name := range []string{"Com_begin", "Com_commit", "Com_rollback"} {
			r, err := c.Query(ctx, "SHOW SESSION STATUS LIKE '"+name+"'")
			require.NoError(t, err)
			rows := allRows(t, r)
			require.NoError(t, r.Close())
			v, err := strconv.ParseInt(fmt.Sprint(rows[0][1]), 10, 64)
			require.NoError(t, err)
			n[i] = v
		}
		return n
	}
	before := status()
	for range 2 {
		for _, q := range []string{"-- c\nBEGIN", "# c\nCOMMIT", "/* c */ START TRANSACTION", "--\tc\nROLLBACK", "#\nBEGIN", "-- c\r\nCOMMIT"} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
	}
	after := status()
	require.Equal(t, [3]int64{before[0] + 6, before[1] + 4, before[2] + 2}, after)
}
