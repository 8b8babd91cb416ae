package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMinMaxKeyOverNoRows: MIN and MAX of a primary key answer one row,
// NULL when no row qualifies, as MySQL does (GMS's replaceAgg answered no
// row), and still read one row through the primary index.
func TestMinMaxKeyOverNoRows(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("CREATE TABLE c (a INT, b INT, PRIMARY KEY (a, b))")
	empty := []struct{ q, want string }{
		{"SELECT MAX(id) FROM t", "[[<nil>]]"},
		{"SELECT MIN(id) FROM t", "[[<nil>]]"},
		{"SELECT COALESCE(MAX(id), 0) + 1 FROM t", "[[1]]"},
		{"SELECT MAX(x.id) FROM t AS x WHERE x.id > 3", "[[<nil>]]"},
		{"SELECT (SELECT MAX(id) FROM t) IS NULL", "[[true]]"},
		{"SELECT MAX(a) FROM c", "[[<nil>]]"},
	}
	for _, tc := range empty {
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.q)), tc.q)
	}
	// The idiom that allocates ids: one row per statement.
	d.exec("INSERT INTO t (id, v) SELECT COALESCE(MAX(id), 0) + 1, 0 FROM t")
	d.exec("INSERT INTO t (id, v) SELECT COALESCE(MAX(id), 0) + 1, 0 FROM t")
	require.Equal(t, "[[1 0] [2 0]]", fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id")))

	d.exec("INSERT INTO t VALUES (5, 5), (9, 9), (20, 20)")
	d.exec("INSERT INTO c VALUES (1, 9), (2, 1), (2, 7), (3, 0)")
	filled := []struct{ q, want string }{
		{"SELECT MAX(id) FROM t", "[[20]]"},
		{"SELECT MIN(id) FROM t", "[[1]]"},
		{"SELECT MAX(id) FROM t WHERE id < 10", "[[9]]"},
		{"SELECT MIN(id) FROM t WHERE id > 5", "[[9]]"},
		{"SELECT MAX(id) FROM t WHERE id > 100", "[[<nil>]]"},
		{"SELECT MAX(id) FROM t WHERE v > 6 AND v < 10", "[[9]]"},
		{"SELECT MAX(a) FROM c WHERE (a = 2 AND b > 5) OR (a = 1)", "[[2]]"},
		{"SELECT MIN(a) FROM c WHERE b < 5", "[[2]]"},
	}
	for _, tc := range filled {
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.q)), tc.q)
	}
	for _, q := range []string{"SELECT MAX(id) FROM t", "SELECT MAX(id) FROM t WHERE id < 10", "SELECT MIN(id) FROM t"} {
		plan := fmt.Sprint(d.exec("EXPLAIN FORMAT=DEBUG " + q))
		require.Contains(t, plan, "IndexedTableAccess", q)
		require.NotContains(t, plan, "TopN", q)
		require.NotContains(t, plan, "Sort", q)
	}
	require.Contains(t, fmt.Sprint(d.exec("EXPLAIN FORMAT=DEBUG SELECT MAX(id) FROM t")), "reverse: true")
}
