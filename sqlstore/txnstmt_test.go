package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// TestTxnStmtMatchesPlanned runs scripts of BEGIN, START TRANSACTION,
// COMMIT, ROLLBACK, savepoints, reads and writes on a connection that keeps
// the plans of the transaction statements (txnstmt.go) and on one that
// plans every statement: after each statement the results and errors,
// whether the session holds a transaction, ROW_COUNT and FOUND_ROWS and
// @@autocommit are the same, and so are the committed rows another
// connection reads at the end of each script.
func TestTxnStmtMatchesPlanned(t *testing.T) {
	ctx := context.Background()
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	cached, planned, reader := e.NewConn(), e.NewConn(), e.NewConn()
	t.Cleanup(func() {
		require.NoError(t, cached.Close())
		require.NoError(t, planned.Close())
		require.NoError(t, reader.Close())
		require.NoError(t, e.Close())
	})
	// Each its own database, so that the two do not wait on each other's
	// locks.
	dbs := map[*sqlstore.Conn]string{cached: "c", planned: "p"}
	for c, db := range dbs {
		require.NoError(t, c.UseDatabase(ctx, db))
		_, err := c.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, k INT)")
		require.NoError(t, err)
	}
	_, err = planned.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	// Round 0 runs every statement as text; rounds 1 and 2 run the
	// transaction statements as prepared statements, prepared for each
	// execution and prepared once (the kept plan found through the
	// statement, Stmt.fixedFor).
	round := 0
	kept := map[*sqlstore.Conn]map[string]*sqlstore.Stmt{cached: {}, planned: {}}
	run := func(c *sqlstore.Conn, q string) any {
		var r result
		switch first, _ := sqlstore.LeadingWords(q); {
		case round == 0 || !strings.EqualFold(first, "begin") && !strings.EqualFold(first, "start") &&
			!strings.EqualFold(first, "commit") && !strings.EqualFold(first, "rollback"):
			r = queryResult(t, c, q)
		case round == 1:
			r = preparedResult(t, c, q)
		default:
			st := kept[c][q]
			if st == nil {
				var err error
				st, err = c.Prepare(ctx, q)
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				kept[c][q] = st
			}
			r = stmtResult(t, st)
		}
		return []any{r, c.HoldsTransaction(), queryResult(t, c, "SELECT ROW_COUNT(), FOUND_ROWS(), @@autocommit")}
	}
	committed := func(c *sqlstore.Conn) result {
		return queryResult(t, reader, fmt.Sprintf("SELECT id, k FROM %s.t ORDER BY id", dbs[c]))
	}
	scripts := [][]string{
		{"BEGIN", "INSERT INTO t VALUES (1, 1)", "SELECT id, k FROM t", "COMMIT", "COMMIT"},
		{"BEGIN", "INSERT INTO t VALUES (2, 2)", "ROLLBACK", "SELECT id, k FROM t", "ROLLBACK"},
		{"START TRANSACTION", "UPDATE t SET k = k + 1", "BEGIN", "ROLLBACK", "SELECT id, k FROM t"},
		{"BEGIN", "INSERT INTO t VALUES (3, 3)", "SAVEPOINT s1", "INSERT INTO t VALUES (4, 4)",
			"ROLLBACK TO SAVEPOINT s1", "SELECT id, k FROM t", "RELEASE SAVEPOINT s1", "COMMIT"},
		{"START TRANSACTION READ ONLY", "SELECT id, k FROM t", "INSERT INTO t VALUES (5, 5)", "COMMIT",
			"INSERT INTO t VALUES (5, 5)"},
		{"START TRANSACTION READ WRITE", "INSERT INTO t VALUES (6, 6)", "COMMIT"},
		{"START TRANSACTION WITH CONSISTENT SNAPSHOT", "SELECT COUNT(*) FROM t", "DELETE FROM t WHERE id = 6", "COMMIT"},
		{"SET autocommit = 0", "INSERT INTO t VALUES (7, 7)", "COMMIT", "COMMIT", "INSERT INTO t VALUES (8, 8)",
			"ROLLBACK", "BEGIN", "INSERT INTO t VALUES (9, 9)", "COMMIT", "SELECT 1", "ROLLBACK", "SET autocommit = 1"},
		{"SET autocommit = 0", "INSERT INTO t VALUES (10, 10)", "BEGIN", "ROLLBACK", "SET autocommit = 1"},
		{"BEGIN", "INSERT INTO t VALUES (1, 1)", "COMMIT", "SELECT id, k FROM t"}, // a duplicate key inside
		{"COMMIT", "ROLLBACK", "BEGIN", "BEGIN", "COMMIT"},
		{"begin", "insert into t values (11, 11)", "commit"},
	}
	before := plansReused(t, cached)
	for round = range 3 {
		for i, script := range scripts {
			for _, q := range script {
				got, want := run(cached, q), run(planned, q)
				require.Equal(t, want, got, "round %d script %d: %s", round, i, q)
			}
			require.Equal(t, committed(planned), committed(cached), "round %d script %d", round, i)
		}
		for _, c := range []*sqlstore.Conn{cached, planned} {
			_, err := c.Exec(ctx, "DELETE FROM t")
			require.NoError(t, err)
		}
	}
	// The kept plans ran: of each round after the first, at least every
	// BEGIN, COMMIT and ROLLBACK.
	require.Greater(t, plansReused(t, cached)-before, int64(2*30))
	require.Zero(t, plansReused(t, planned))
}

// TestTxnStmtOpenResult runs BEGIN and COMMIT while a result of the
// connection is still open, on kept plans: the open result's transaction
// is committed by BEGIN, as the planned path does, and the rows written
// after it are in the transaction BEGIN began.
func TestTxnStmtOpenResult(t *testing.T) {
	ctx := context.Background()
	cached, planned := twoConns(t)
	_, err := cached.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY)")
	require.NoError(t, err)
	_, err = cached.Exec(ctx, "INSERT INTO t VALUES (1), (2)")
	require.NoError(t, err)
	for _, c := range []*sqlstore.Conn{cached, planned} {
		rows, err := c.Query(ctx, "SELECT id FROM t")
		require.NoError(t, err)
		_, err = rows.Next()
		require.NoError(t, err)
		_, err = c.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		require.True(t, c.HoldsTransaction())
		require.NoError(t, rows.Close())
		_, err = c.Exec(ctx, "INSERT INTO t VALUES (3)")
		require.NoError(t, err)
		_, err = c.Exec(ctx, "ROLLBACK")
		require.NoError(t, err)
		require.False(t, c.HoldsTransaction())
		require.Len(t, queryResult(t, c, "SELECT id FROM t").rows, 2)
	}
}

// TestTxnStmtFailedCommit: a COMMIT on a kept plan that loses an
// optimistic transaction's conflict fails as a planned one does (1213),
// and leaves the session outside any transaction, its writes not applied
// and its next write committed on its own.
func TestTxnStmtFailedCommit(t *testing.T) {
	ctx := context.Background()
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	cached, planned, other := e.NewConn(), e.NewConn(), e.NewConn()
	t.Cleanup(func() {
		require.NoError(t, cached.Close())
		require.NoError(t, planned.Close())
		require.NoError(t, other.Close())
		require.NoError(t, e.Close())
	})
	for _, c := range []*sqlstore.Conn{cached, planned, other} {
		require.NoError(t, c.UseDatabase(ctx, "f"))
		_, err := c.Exec(ctx, "SET strata_txn_mode = 'optimistic'")
		require.NoError(t, err)
	}
	_, err = other.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	require.NoError(t, err)
	_, err = other.Exec(ctx, "INSERT INTO t VALUES (1, 0), (2, 0)")
	require.NoError(t, err)
	_, err = planned.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)
	var errs []string
	for i, c := range []*sqlstore.Conn{cached, planned, cached, planned} {
		id := 1 + i/2 // each row once on each connection
		for _, q := range []string{"BEGIN", fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", id)} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		_, err := other.Exec(ctx, fmt.Sprintf("UPDATE t SET v = v + 100 WHERE id = %d", id))
		require.NoError(t, err)
		_, err = c.Exec(ctx, "COMMIT")
		require.Error(t, err)
		errs = append(errs, err.Error())
		require.False(t, c.HoldsTransaction())
		_, err = c.Exec(ctx, fmt.Sprintf("UPDATE t SET v = v + 10000 WHERE id = %d", id))
		require.NoError(t, err)
	}
	require.Equal(t, errs[0], errs[1])
	require.Equal(t, errs[2], errs[3])
	require.Contains(t, errs[0], "1213")
	// Two conflicts lost and two autocommit writes applied on each row.
	require.Equal(t, [][]any{{int64(1), int64(20200)}, {int64(2), int64(20200)}},
		queryResult(t, other, "SELECT id, v FROM t ORDER BY id").rows)
}
