package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/stretchr/testify/require"
)

// memQuotaDB returns a store with t1 (200 short rows: a cross join of it
// with itself is 40,000 rows) and wide (10,000 rows of about 200 bytes).
func memQuotaDB(t *testing.T) *testDB {
	d := newTestDB(t)
	d.exec("CREATE TABLE t1 (id INT PRIMARY KEY, v INT, s VARCHAR(40))")
	d.exec(insertValues("t1", 0, 200, func(i int) string { return fmt.Sprintf("(%d, %d, 'row number %d')", i, i%50, i) }))
	d.exec("CREATE TABLE wide (id INT PRIMARY KEY, v INT, s VARCHAR(250))")
	pad := strings.Repeat("w", 180)
	d.exec(insertValues("wide", 0, 10_000, func(i int) string { return fmt.Sprintf("(%d, %d, '%s%d')", i, i%7, pad, i) }))
	return d
}

// TestMemQuota: with strata_mem_quota_query at 1 MiB, a sort, a GROUP BY,
// a hash join and a window over more than that fail with 3170, and the
// session's next statement runs; under the default quota they run.
func TestMemQuota(t *testing.T) {
	d := memQuotaDB(t)
	big := map[string]string{
		"sort":      "SELECT a.id, b.id FROM t1 a, t1 b ORDER BY a.s, b.s",
		"group":     "SELECT a.id, b.id, COUNT(*) FROM t1 a, t1 b GROUP BY a.id, b.id",
		"hash join": "SELECT COUNT(*) FROM wide a JOIN wide b ON a.v = b.v AND a.s = b.s",
		"window":    "SELECT id, ROW_NUMBER() OVER (ORDER BY s DESC) FROM wide",
	}
	for name, q := range big {
		rows, err := query(d.e, d.ctx, q)
		require.NoError(t, err, name)
		require.NotEmpty(t, rows, name)
	}
	d.exec("SET strata_mem_quota_query = 1048576")
	for name, q := range big {
		err := d.execErr(q)
		se := MySQLError(err)
		require.NotNil(t, se, "%s: %v", name, err)
		require.Equal(t, 3170, se.Num, "%s: %v", name, err)
		require.Equal(t, "HY000", se.SQLState(), name)
		require.Equal(t, "Memory capacity of 1048576 bytes for 'strata_mem_quota_query' exceeded in this query.", se.Message, name)
		// The session goes on, with a new account.
		require.Equal(t, "[[200]]", fmt.Sprint(d.exec("SELECT COUNT(*) FROM t1")), name)
		require.Equal(t, "[[0 0] [0 1]]", fmt.Sprint(d.exec("SELECT a.id, b.id FROM t1 a, t1 b WHERE a.id < 2 AND b.id < 2 ORDER BY a.id, b.id LIMIT 2")), name)
	}
	// Small buffers fit, one statement after another: each sort gives its
	// rows back when it closes.
	for range 20 {
		require.Len(t, d.exec("SELECT id FROM wide WHERE id < 2000 ORDER BY s DESC"), 2000)
		require.Len(t, d.exec("SELECT v, COUNT(*) FROM wide GROUP BY v"), 7)
	}
	// A GROUP BY's result has the column names it had.
	sch, iter, _, err := d.e.Query(d.ctx, "SELECT v, COUNT(*), MAX(s) AS m FROM wide GROUP BY v")
	require.NoError(t, err)
	_, err = sql.RowIterToRows(d.ctx, iter)
	require.NoError(t, err)
	require.Equal(t, []string{"v", "COUNT(*)", "m"}, []string{sch[0].Name, sch[1].Name, sch[2].Name})

	// 0 is no quota.
	d.exec("SET strata_mem_quota_query = 0")
	require.Len(t, d.exec(big["sort"]), 40_000)
	d.exec("SET strata_mem_quota_query = DEFAULT")
	require.Equal(t, fmt.Sprint(defaultMemQuota), fmt.Sprint(d.exec("SELECT @@strata_mem_quota_query")[0][0]))
	require.GreaterOrEqual(t, defaultMemQuota, int64(minDefaultMemQuota))
}

// TestMemQuotaTopN: ORDER BY ... LIMIT n keeps n rows (GMS's TopN), also
// when the sort columns are not returned, so it runs under a quota far
// below what the whole input would take, and gives the rows a full sort
// gives.
func TestMemQuotaTopN(t *testing.T) {
	d := memQuotaDB(t)
	for _, q := range []string{
		"SELECT a.id, b.id FROM t1 a, t1 b ORDER BY a.s DESC, b.s LIMIT 5",
		"SELECT a.id, b.id FROM t1 a, t1 b ORDER BY a.s DESC, b.s LIMIT 5 OFFSET 3",
		"SELECT a.id + b.id FROM t1 a, t1 b ORDER BY a.s, b.v DESC, b.id LIMIT 4",
	} {
		d.exec("SET strata_mem_quota_query = 0")
		want := fmt.Sprint(d.exec(q))
		plan := fmt.Sprint(d.exec("EXPLAIN PLAN " + q))
		require.Contains(t, plan, "TopN", q)
		d.exec("SET strata_mem_quota_query = 1048576")
		require.Equal(t, want, fmt.Sprint(d.exec(q)), q)
	}
}

// TestMemQuotaNested: the buffers of derived tables, common table
// expressions, subquery expressions, the sides of a UNION and the SELECT
// of CREATE TABLE ... AS SELECT are under the quota as the statement's own
// are, and the quota's wrappers, added once the statement is analyzed,
// change none of what the analyzer makes of them: the columns a GROUP BY
// in a derived table reads, and the exact type of its SUM.
func TestMemQuotaNested(t *testing.T) {
	d := memQuotaDB(t)
	const groups = "SELECT a.id, b.id i2, COUNT(*) c FROM t1 a, t1 b GROUP BY a.id, b.id"
	const sorted = "SELECT a.id, b.id i2 FROM t1 a, t1 b ORDER BY a.s, b.s"
	big := []struct{ q, rows string }{
		{"SELECT COUNT(*) FROM (" + groups + ") x", "[[40000]]"},
		{"WITH c AS (" + sorted + ") SELECT COUNT(*) FROM c", "[[40000]]"},
		{"SELECT (SELECT MAX(c) FROM (" + groups + ") x)", "[[1]]"},
		{"SELECT id FROM t1 WHERE id < 3 AND id IN (SELECT x.i2 FROM (" + groups + ") x)", "[[0] [1] [2]]"},
		{"SELECT COUNT(*) FROM (" + groups + " UNION ALL SELECT 1, 2, 3) x", "[[40001]]"},
		{"CREATE TABLE copied AS " + groups, "[[{40000 0 <nil>}]]"},
	}
	for _, tc := range big {
		d.exec("SET strata_mem_quota_query = 0")
		require.Equal(t, tc.rows, fmt.Sprint(d.exec(tc.q)), tc.q)
		d.exec("DROP TABLE IF EXISTS copied")
		d.exec("SET strata_mem_quota_query = 1048576")
		err := d.execErr(tc.q)
		se := MySQLError(err)
		require.NotNil(t, se, "%s: %v", tc.q, err)
		require.Equal(t, 3170, se.Num, "%s: %v", tc.q, err)
	}

	// Under a quota the statement fits in: the GROUP BY of a derived
	// table, whose columns GMS indexes anew when it analyzes the
	// statement around it, and a SUM, typed DECIMAL through it.
	d.exec("SET strata_mem_quota_query = 1048576")
	for _, tc := range []struct{ q, rows, types string }{
		{"SELECT DISTINCT COUNT(*) OVER () FROM t1 GROUP BY v", "[[50]]", "[bigint]"},
		{"SELECT * FROM (SELECT v, SUM(id) s FROM t1 GROUP BY v) x WHERE v = 1", "[[1 304]]",
			"[int null decimal(32,0) null]"},
		{"SELECT s FROM (SELECT SUM(id) s, v FROM t1 GROUP BY v) x ORDER BY v LIMIT 1", "[[300]]",
			"[decimal(32,0) null]"},
		{"SELECT v, n FROM (SELECT v, COUNT(*) n FROM t1 WHERE id < 100 GROUP BY v UNION ALL SELECT 0, 0) x ORDER BY v, n LIMIT 2",
			"[[0 0] [0 2]]", "[int null bigint]"},
	} {
		rows, typs := d.queryTyped(tc.q)
		require.Equal(t, tc.rows, rows, tc.q)
		require.Equal(t, tc.types, fmt.Sprint(typs), tc.q)
	}
}

// TestMemQuotaNestedPass: memQuota skips the passes in which GMS analyzes
// a derived table, a subquery expression or a side of a set operation on
// its own, and runs in a statement's, a procedure's or a trigger's.
func TestMemQuotaNestedPass(t *testing.T) {
	nested := nestedPass(analyzer.NewDefault(nil))
	all := analyzer.DefaultRuleSelector
	require.False(t, nested(all), "statement")
	require.False(t, nested(analyzer.NewProcRuleSelector(all)), "procedure")
	require.True(t, nested(analyzer.NewFinalizeSubquerySel(all)), "subquery")
	require.True(t, nested(analyzer.NewFinalizeUnionSel(all)), "set operation")
}
