package sqlstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLookupJoinStringIndexNumberKey: a lookup join whose INT key
// probes a string index finds every row whose text MySQL compares equal
// ('01', '1.0', ' 1' equal 1), as the join without the index does; the
// lookup found only the key's own text.
func TestLookupJoinStringIndexNumberKey(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE s (id INT PRIMARY KEY, code VARCHAR(20), KEY (code))")
	d.exec("CREATE TABLE n (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO s VALUES (1, '1'), (2, '01'), (3, '1.0'), (4, ' 1'), (5, '2')")
	d.exec("INSERT INTO n VALUES (1, 1), (2, 3)")
	for _, tc := range []struct{ q, want string }{
		{"SELECT /*+ LOOKUP_JOIN(n, s) */ n.id, s.id FROM n JOIN s ON s.code = n.v ORDER BY 1, 2",
			"[[1 1] [1 2] [1 3] [1 4]]"},
		{"SELECT /*+ LOOKUP_JOIN(n, s) */ n.id, s.id FROM n LEFT JOIN s ON s.code = n.v ORDER BY 1, 2",
			"[[1 1] [1 2] [1 3] [1 4] [2 <nil>]]"},
		{"SELECT /*+ LOOKUP_JOIN(n, s) */ n.id, s.id FROM n JOIN s ON s.code = n.v AND s.id > 2 ORDER BY 1, 2",
			"[[1 3] [1 4]]"},
		// A string key keeps the index: its text is the one value.
		{"SELECT /*+ LOOKUP_JOIN(n, s) */ n.id, s.id FROM n JOIN s ON s.code = CONCAT('0', n.v) ORDER BY 1, 2",
			"[[1 2]]"},
	} {
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.q)), tc.q)
	}
	plan := fmt.Sprint(d.exec("EXPLAIN PLAN SELECT /*+ LOOKUP_JOIN(n, s) */ n.id, s.id FROM n JOIN s ON s.code = CONCAT('0', n.v)"))
	require.Contains(t, plan, "LookupJoin")
}

// TestLookupJoinNullSafeKeyRechecked: under <=>, a key the index column
// cannot hold (clamped into it by GMS's conversion) matches nothing, a
// NULL key the NULL rows, and the join keeps its index.
func TestLookupJoinNullSafeKeyRechecked(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE b (id INT PRIMARY KEY, t TINYINT, KEY (t))")
	d.exec("CREATE TABLE a (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO b VALUES (1, 127), (2, NULL), (3, 5)")
	d.exec("INSERT INTO a VALUES (1, 1000), (2, NULL), (3, 5)")
	q := "SELECT /*+ LOOKUP_JOIN(a, b) */ a.id, b.id FROM a JOIN b ON b.t <=> a.v ORDER BY 1, 2"
	require.Equal(t, "[[2 2] [3 3]]", fmt.Sprint(d.exec(q)))
	require.Equal(t, "[[1 <nil>] [2 2] [3 3]]", fmt.Sprint(d.exec(
		"SELECT /*+ LOOKUP_JOIN(a, b) */ a.id, b.id FROM a LEFT JOIN b ON b.t <=> a.v ORDER BY 1, 2")))
	require.Contains(t, fmt.Sprint(d.exec("EXPLAIN PLAN "+q)), "LookupJoin")
}

// TestSemiJoinStringIndexNumberKey: the same for the semi and anti joins
// GMS plans for IN, EXISTS and NOT EXISTS over a large inner table (a
// lookup into a projected table, through a projection).
func TestSemiJoinStringIndexNumberKey(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE s (id INT PRIMARY KEY, code VARCHAR(20), KEY (code))")
	d.exec("CREATE TABLE n (id INT PRIMARY KEY, v INT)")
	d.exec("SET cte_max_recursion_depth = 3000")
	d.exec("INSERT INTO s WITH RECURSIVE r(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM r WHERE i < 3000) SELECT i, CONCAT('x', i) FROM r")
	d.exec("INSERT INTO s VALUES (1, '01'), (2, '7.0')")
	d.exec("INSERT INTO n VALUES (1, 1), (2, 3), (3, 7)")
	d.exec("ANALYZE TABLE s, n")
	for _, tc := range []struct{ q, want string }{
		{"SELECT id FROM n WHERE v IN (SELECT code FROM s) ORDER BY 1", "[[1] [3]]"},
		{"SELECT id FROM n WHERE EXISTS (SELECT 1 FROM s WHERE s.code = n.v) ORDER BY 1", "[[1] [3]]"},
		{"SELECT id FROM n WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.code = n.v) ORDER BY 1", "[[2]]"},
	} {
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.q)), tc.q)
	}
}
