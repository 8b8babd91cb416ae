package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// keyWriteShapes are UPDATEs and DELETEs by a string key; %[1]s is a
// string column, %[2]s a literal, %[3]s another.
var keyWriteShapes = []string{
	"UPDATE t SET k = 5 WHERE %[1]s = %[2]s",
	"UPDATE t SET s2 = %[3]s WHERE %[1]s = %[2]s",
	"UPDATE t SET k = 7, s2 = %[3]s WHERE %[2]s = %[1]s",
	"DELETE FROM t WHERE %[1]s = %[2]s",
	"UPDATE t SET k = 6 WHERE k = %[2]s",
	"DELETE FROM t WHERE %[1]s LIKE %[2]s",
}

// TestPlanCacheStringKeyWritesSameResults runs random text UPDATEs and
// DELETEs by a string compared with a column, on a connection with the
// plan cache (which makes the string an argument of a kept template where
// the column is a character column that is a unique key) and one with
// plan reuse off, each in its own database: results, errors, warnings and
// the rows left are the same, under several collations (PAD SPACE and NO
// PAD, case-insensitive and binary), character sets and lengths of the
// column, strings longer than it or ending in spaces, and connection
// collations changed between executions; prepared too, with string
// arguments.
func TestPlanCacheStringKeyWritesSameResults(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	fast, ref := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = fast.Close(); _ = ref.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, fast.UseDatabase(ctx, "fw"))
	require.NoError(t, ref.UseDatabase(ctx, "rw"))
	_, err := ref.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	r := rand.New(rand.NewPCG(32, 11))
	rounds := 24
	if testing.Short() {
		rounds = 6
	}
	kinds := append([]string{"VARCHAR(12) COLLATE utf8mb4_0900_bin", "TEXT"}, func() (out []string) {
		for _, k := range stringColumnKinds {
			out = append(out, k.def)
		}
		return out
	}()...)
	exec := func(q string) {
		for _, c := range []*Conn{fast, ref} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
	}
	total := 0
	reused := fast.sess.plansReused.Load()
	for round := range rounds {
		kind := kinds[r.IntN(len(kinds))]
		key := "s1"
		if strings.HasPrefix(kind, "TEXT") {
			key = "s1(8)"
		}
		ddl := fmt.Sprintf("CREATE TABLE t (id INT PRIMARY KEY, k INT, s1 %s, s2 VARCHAR(10), KEY k_1 (k), UNIQUE KEY s_1 (%s))",
			strings.Replace(kind, " NOT NULL", "", 1), key)
		exec("DROP TABLE IF EXISTS t")
		exec(ddl)
		fill := func() {
			exec("SET sql_mode = ''")
			for id := 1; id <= 16; id++ {
				lit := keyLiterals[r.IntN(len(keyLiterals))]
				q := fmt.Sprintf("INSERT IGNORE INTO t VALUES (%d, %d, %s, %s)", id, id%3, lit, lit)
				require.Equal(t, execOutcome(t, ref, q), execOutcome(t, fast, q), q)
			}
		}
		exec("SET NAMES utf8mb4")
		fill()
		mode := []string{"", "STRICT_TRANS_TABLES", "PAD_CHAR_TO_FULL_LENGTH"}[r.IntN(3)]
		for half := range 2 {
			names := []string{"utf8mb4", "latin1", "utf8mb4 COLLATE utf8mb4_bin", "utf8mb4 COLLATE utf8mb4_general_ci"}[r.IntN(4)]
			exec("SET NAMES " + names)
			exec(fmt.Sprintf("SET sql_mode = '%s'", mode))
			shapes := []string{keyWriteShapes[r.IntN(len(keyWriteShapes))], keyWriteShapes[0], keyWriteShapes[3]}
			for i := range 30 {
				if i == 15 {
					fill()
					exec(fmt.Sprintf("SET sql_mode = '%s'", mode))
				}
				col := []string{"s1", "s1", "s2"}[r.IntN(3)]
				q := fmt.Sprintf(shapes[r.IntN(len(shapes))], col, keyLiterals[r.IntN(len(keyLiterals))], keyLiterals[r.IntN(len(keyLiterals))])
				total++
				ctxMsg := fmt.Sprintf("round %d (%s, sql_mode '%s', names %s, half %d)\n%s", round, ddl, mode, names, half, q)
				require.Equal(t, execOutcome(t, ref, q), execOutcome(t, fast, q), ctxMsg)
				require.Equal(t, tableRows(t, ref), tableRows(t, fast), ctxMsg)
				// The same by a prepared statement, with a string argument.
				arg := keyArgs[r.IntN(len(keyArgs))]
				pq := fmt.Sprintf("UPDATE t SET k = k + 2 WHERE %s = ?", col)
				if r.IntN(4) == 0 {
					pq = fmt.Sprintf("DELETE FROM t WHERE %s = ?", col)
				}
				var outs [2]outcome
				for j, c := range []*Conn{ref, fast} {
					res, err := c.Exec(ctx, pq, Arg{Ordinal: 1, Value: arg})
					if err != nil {
						outs[j].Err = err.Error()
					} else {
						outs[j].Result = res
					}
					outs[j].Warnings = connRows(t, c, "SHOW WARNINGS")
				}
				require.Equal(t, outs[0], outs[1], "%s\n%s with %q", ctxMsg, pq, arg)
				require.Equal(t, tableRows(t, ref), tableRows(t, fast), "%s\n%s with %q", ctxMsg, pq, arg)
				total++
			}
		}
	}
	hits := fast.sess.plansReused.Load() - reused
	t.Logf("%d statements: %d run on kept plans", total, hits)
	require.Greater(t, hits, int64(total/10), "too few statements ran on kept plans")
}

// TestPlanCacheStringKeyWritesHit: a text UPDATE or DELETE by a unique
// character key runs on one kept template whatever the string; a string
// compared with an integer column, a LIKE and a string ending in a space
// do not.
func TestPlanCacheStringKeyWritesHit(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, k INT, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, UNIQUE KEY name_1 (name), KEY k_1 (k))",
		"INSERT INTO t VALUES (1, 1, 'bob'), (2, 2, 'Alice'), (3, 3, 'carol')",
	} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	reused := func(q string) int64 {
		t.Helper()
		before := c.sess.plansReused.Load()
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
		return c.sess.plansReused.Load() - before
	}
	for _, q := range []string{"UPDATE t SET k = 0 WHERE name = 'warm'", "UPDATE t SET k = 0 WHERE name = 'up'", "DELETE FROM t WHERE name = 'warm'", "DELETE FROM t WHERE name = 'up'"} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	entries := PlanCacheLen(c)
	for i, name := range []string{"bob", "ALICE", "carol", "dave", "it's", "é", ""} {
		q := fmt.Sprintf("UPDATE t SET k = %d WHERE name = '%s'", 10+i, strings.ReplaceAll(name, "'", "''"))
		require.Equal(t, int64(1), reused(q), "%d: %s", i, q)
	}
	require.Equal(t, int64(1), reused("DELETE FROM t WHERE name = 'nobody'"))
	require.Equal(t, entries, PlanCacheLen(c))
	require.Equal(t, [][]any{{int64(1), int64(10)}, {int64(2), int64(11)}, {int64(3), int64(12)}}, connRows(t, c, "SELECT id, k FROM t ORDER BY id"))
	require.Equal(t, int64(1), reused("DELETE FROM t WHERE name = 'ALICE'"))
	require.Equal(t, [][]any{{int64(1)}, {int64(3)}}, connRows(t, c, "SELECT id FROM t ORDER BY id"))
	// A string ending in a space is planned, and the template stays for
	// the others.
	tmpl := func() *writeTemplate {
		t.Helper()
		st, err := c.parseOne(ctx, "UPDATE t SET k = ? WHERE name = ?")
		require.NoError(t, err)
		require.Len(t, st.wr.tmpls, 1)
		return st.wr.tmpls[0]
	}
	kept := tmpl()
	require.Zero(t, reused("UPDATE t SET k = 20 WHERE name = 'bob '"))
	require.Same(t, kept, tmpl())
	require.Equal(t, int64(1), reused("UPDATE t SET k = 21 WHERE name = 'bob'"))
	require.Equal(t, [][]any{{int64(21)}}, connRows(t, c, "SELECT k FROM t WHERE id = 1"))
	for _, q := range []string{
		"UPDATE t SET k = 1 WHERE name LIKE 'b%'",
		"UPDATE t SET k = 1 WHERE name = 'bob '",
		"UPDATE t SET k = 1 WHERE k = '2'",
		"DELETE FROM t WHERE k = '2'",
	} {
		for range 3 {
			require.Zero(t, reused(q), q)
		}
	}
}
