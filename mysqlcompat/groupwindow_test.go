package mysqlcompat_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore"
)

// groupsDB returns a database with t, grouped by k, and u, naming the keys.
func groupsDB(t *testing.T) *testDB {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c INT)")
	d.exec("CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(10))")
	d.exec("INSERT INTO t VALUES (1,1,10),(2,1,20),(3,2,5),(4,3,7),(5,3,8)")
	d.exec("INSERT INTO u VALUES (1,'one'),(2,'two'),(3,'three')")
	return d
}

func TestWindowsOverGroups(t *testing.T) {
	d := groupsDB(t)
	d.requireRows([]queryRows{
		{"SELECT k, COUNT(*), ROW_NUMBER() OVER (ORDER BY k) FROM t GROUP BY k",
			"[[1 2 1] [2 1 2] [3 2 3]]"},
		{"SELECT k, SUM(c), RANK() OVER (ORDER BY SUM(c) DESC) r FROM t GROUP BY k ORDER BY r",
			"[[1 30 1] [3 15 2] [2 5 3]]"},
		// The total of all groups, and shares of it.
		{"SELECT k, SUM(SUM(c)) OVER (), SUM(c) * 100 DIV SUM(SUM(c)) OVER () FROM t GROUP BY k ORDER BY k",
			"[[1 50 60] [2 50 10] [3 50 30]]"},
		{"SELECT k, SUM(c) s, LAG(SUM(c)) OVER (ORDER BY k) prev FROM t GROUP BY k ORDER BY k",
			"[[1 30 <nil>] [2 5 30] [3 15 5]]"},
		// Named windows, HAVING by alias, ORDER BY position.
		{"SELECT k AS kk, MAX(c) m, RANK() OVER w FROM t GROUP BY kk HAVING m > 5 WINDOW w AS (ORDER BY MAX(c)) ORDER BY 1",
			"[[1 20 2] [3 8 1]]"},
		// GROUP BY a position and an alias of an expression.
		{"SELECT id % 2 AS par, SUM(c), ROW_NUMBER() OVER (ORDER BY id % 2 DESC) FROM t GROUP BY 1 ORDER BY par",
			"[[0 27 2] [1 23 1]]"},
		{"SELECT id % 2 AS par, SUM(c), ROW_NUMBER() OVER (ORDER BY SUM(c)) FROM t GROUP BY par ORDER BY par",
			"[[0 27 2] [1 23 1]]"},
		// Implicit grouping: one group.
		{"SELECT SUM(c), COUNT(*) OVER () FROM t", "[[50 1]]"},
		{"SELECT SUM(c), ROW_NUMBER() OVER () FROM t WHERE id > 100", "[[<nil> 1]]"},
		// Partitions over groups; a grouped expression in a window.
		{"SELECT k, COUNT(*) n, ROW_NUMBER() OVER (PARTITION BY COUNT(*) ORDER BY k DESC) FROM t GROUP BY k ORDER BY k",
			"[[1 2 2] [2 1 1] [3 2 1]]"},
		// A subquery is evaluated per group.
		{"SELECT (SELECT name FROM u WHERE u.id = t.k) nm, SUM(c), RANK() OVER (ORDER BY (SELECT name FROM u WHERE u.id = t.k)) FROM t GROUP BY k ORDER BY 1",
			"[[one 30 1] [three 15 2] [two 5 3]]"},
		// DISTINCT and LIMIT apply to the windowed rows.
		{"SELECT DISTINCT COUNT(*) OVER () FROM t GROUP BY k", "[[3]]"},
		{"SELECT k, DENSE_RANK() OVER (ORDER BY COUNT(*)) FROM t GROUP BY k ORDER BY k LIMIT 1 OFFSET 1", "[[2 1]]"},
		// CTEs stay visible to the grouped part.
		{"WITH big AS (SELECT * FROM t WHERE c > 5) SELECT k, SUM(c), RANK() OVER (ORDER BY SUM(c)) FROM big GROUP BY k ORDER BY k",
			"[[1 30 2] [3 15 1]]"},
		// Inside a derived table, a union and INSERT ... SELECT's source.
		{"SELECT * FROM (SELECT k, RANK() OVER (ORDER BY SUM(c)) r FROM t GROUP BY k) dt ORDER BY r",
			"[[2 1] [3 2] [1 3]]"},
		{"SELECT 0, 0 UNION ALL SELECT k, ROW_NUMBER() OVER (ORDER BY k) FROM t GROUP BY k",
			"[[0 0] [1 1] [2 2] [3 3]]"},
	})

	// Columns keep the names they were written with.
	ctx := d.ctx.WithQuery("")
	sch, iter, _, err := d.e.Query(ctx, "SELECT k, SUM(c), SUM(c) AS s, RANK() OVER (ORDER BY SUM(c)) FROM t GROUP BY k")
	require.NoError(t, err)
	_, err = sql.RowIterToRows(ctx, iter)
	require.NoError(t, err)
	var names []string
	for _, c := range sch {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"k", "SUM(c)", "s", "RANK() OVER (ORDER BY SUM(c))"}, names)

	// Views, CREATE TABLE ... AS and INSERT ... SELECT.
	d.exec("CREATE VIEW v AS SELECT k, SUM(c) s, RANK() OVER (ORDER BY SUM(c)) r FROM t GROUP BY k")
	rows, _ := d.queryTyped("SELECT * FROM v ORDER BY k")
	require.Equal(t, "[[1 30 3] [2 5 1] [3 15 2]]", rows)
	d.exec("CREATE TABLE x AS SELECT k, SUM(c) s, RANK() OVER (ORDER BY SUM(c)) r FROM t GROUP BY k")
	d.exec("INSERT INTO x SELECT k + 10, SUM(c), ROW_NUMBER() OVER (ORDER BY k) FROM t GROUP BY k")
	rows, _ = d.queryTyped("SELECT * FROM x ORDER BY k")
	require.Equal(t, "[[1 30 3] [2 5 1] [3 15 2] [11 30 1] [12 5 2] [13 15 3]]", rows)

	// EXPLAIN shows the grouping under the window.
	plan := fmt.Sprint(d.exec("EXPLAIN FORMAT=TREE SELECT k, RANK() OVER (ORDER BY SUM(c)) FROM t GROUP BY k"))
	require.Contains(t, plan, mysqlcompat.GroupedTable)
	require.Contains(t, plan, "GroupBy")
}

// Subqueries over groups whose keys are not selected: GMS failed the
// scalar ones (1242, an index error) and answered EXISTS for the wrong row.
func TestSubqueriesOverGroups(t *testing.T) {
	d := groupsDB(t)
	d.requireRows([]queryRows{
		{"SELECT (SELECT name FROM u WHERE u.id = t.k) nm, SUM(c) FROM t GROUP BY k ORDER BY 1",
			"[[one 30] [three 15] [two 5]]"},
		{"SELECT (SELECT COUNT(*) FROM u WHERE u.id <= t.k) n, SUM(c) FROM t GROUP BY k ORDER BY 2",
			"[[2 5] [3 15] [1 30]]"},
		{"SELECT EXISTS (SELECT 1 FROM u WHERE u.id = t.k AND name = 'one') e, SUM(c) FROM t GROUP BY k ORDER BY 2",
			"[[0 5] [0 15] [1 30]]"},
		{"SELECT SUM(c), MAX(c) IN (SELECT id * 10 FROM u) FROM t GROUP BY k ORDER BY 1",
			"[[5 0] [15 0] [30 1]]"},
		{"SELECT SUM(c) s FROM t GROUP BY k HAVING (SELECT name FROM u WHERE u.id = t.k) <> 'two' ORDER BY 1",
			"[[15] [30]]"},
		{"SELECT SUM(c) FROM t GROUP BY k ORDER BY (SELECT name FROM u WHERE u.id = t.k)",
			"[[30] [15] [5]]"},
		{"SELECT SUM(c), RANK() OVER (ORDER BY EXISTS (SELECT 1 FROM u WHERE u.id = t.k AND name = 'two')) FROM t GROUP BY k ORDER BY 1",
			"[[5 3] [15 1] [30 1]]"},
		// With the keys selected GMS was right, and the statement is not
		// rewritten.
		{"SELECT k, EXISTS (SELECT 1 FROM u WHERE u.id = t.k AND name = 'one') e FROM t GROUP BY k ORDER BY k",
			"[[1 1] [2 0] [3 0]]"},
	})
}

// A column outside aggregates under implicit grouping fails as in MySQL
// (1140), with a message that reads as MySQL's, and nothing else does.
func TestWindowsOverGroupsErrors(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c INT)")
	for _, q := range []string{
		"SELECT SUM(c), c, ROW_NUMBER() OVER () FROM t",
		"SELECT AVG(c), LAST_VALUE(c) OVER (ORDER BY id) FROM t",
		"SELECT 1 + AVG(c) + 1, ROW_NUMBER() OVER (ORDER BY k) FROM t",
	} {
		err := d.execErr(q)
		require.Error(t, err, q)
		require.True(t, sql.ErrNonAggregatedColumnWithoutGroupBy.Is(err), "%s: %v", q, err)
		se := sqlstore.MySQLError(err)
		require.Equal(t, 1140, int(se.Num), q)
		require.NotContains(t, se.Message, "%!", q)
		require.True(t, strings.HasPrefix(se.Message, "In aggregated query without GROUP BY"), se.Message)
	}
}

// Ranks, running totals and per-partition counts over random groups equal
// the ones computed here from the rows.
func TestWindowsOverGroupsRandom(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT)")
	rng := rand.New(rand.NewPCG(3, 4))
	sums := map[int]int{}
	var vals []string
	for id := range 500 {
		g, v := rng.IntN(40), rng.IntN(1000)
		sums[g] += v
		vals = append(vals, fmt.Sprintf("(%d,%d,%d)", id, g, v))
	}
	d.exec("INSERT INTO t VALUES " + strings.Join(vals, ","))

	groups := make([]int, 0, len(sums))
	total := 0
	for g, s := range sums {
		groups = append(groups, g)
		total += s
	}
	sort.Ints(groups)
	perMod := map[int]int{}
	for _, g := range groups {
		perMod[g%3]++
	}
	var want []string
	running := 0
	for _, g := range groups {
		rank := 1
		for _, h := range groups {
			if sums[h] > sums[g] {
				rank++
			}
		}
		running += sums[g]
		want = append(want, fmt.Sprintf("[%d %d %d %d %d %d]", g, sums[g], rank, total, running, perMod[g%3]))
	}
	rows, _ := d.queryTyped(`SELECT g, SUM(v), RANK() OVER (ORDER BY SUM(v) DESC), SUM(SUM(v)) OVER (),
		SUM(SUM(v)) OVER (ORDER BY g), COUNT(*) OVER (PARTITION BY g % 3) FROM t GROUP BY g ORDER BY g`)
	require.Equal(t, "["+strings.Join(want, " ")+"]", rows)
}
