package sqlstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnalyzeCardinality: after ANALYZE TABLE, SHOW INDEX and
// information_schema.STATISTICS give each index column the number of
// distinct values of the index's columns up to it (GMS gave 0), for the
// primary key, unique and non-unique, multi-column, prefix and string
// indexes under a case-insensitive collation and a keyless table's index;
// the counts survive a restart, and an index added since keeps GMS's 0.
func TestAnalyzeCardinality(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, s VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, KEY kab (a, b), UNIQUE KEY us (s), KEY ks (s(1)))")
	d.exec("SET cte_max_recursion_depth = 10000")
	d.exec("INSERT INTO t WITH RECURSIVE r (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 999) SELECT i, i % 10, i % 50, CONCAT(CHAR(97 + i % 26), i) FROM r")
	d.exec("CREATE TABLE k (x INT, KEY kx (x))")
	d.exec("INSERT INTO k VALUES (1), (1), (2), (NULL), (NULL)")
	show := func() string {
		return fmt.Sprint(d.exec("SELECT index_name, seq_in_index, cardinality FROM information_schema.statistics WHERE table_schema = 'mydb' AND table_name IN ('t', 'k') ORDER BY table_name, index_name, seq_in_index"))
	}
	showIndex := func(table string) string {
		var out []string
		for _, r := range d.exec("SHOW INDEX FROM " + table) {
			out = append(out, fmt.Sprint(r[2], " ", r[3], " ", r[6]))
		}
		return fmt.Sprint(out)
	}
	before := show()
	require.Equal(t, "[[kx 1 0] [kab 1 0] [kab 2 0] [ks 1 0] [PRIMARY 1 0] [us 1 0]]", before)
	d.exec("ANALYZE TABLE t, k")
	// NULLs count as one value each, as InnoDB's default
	// (innodb_stats_method = nulls_equal) counts them.
	want := "[[kx 1 3] [kab 1 10] [kab 2 50] [ks 1 26] [PRIMARY 1 1000] [us 1 1000]]"
	require.Equal(t, want, show())
	require.Equal(t, "[PRIMARY 1 1000 kab 1 10 kab 2 50 ks 1 26 us 1 1000]", showIndex("t"))
	d.reopen()
	require.Equal(t, want, show())
	d.exec("CREATE INDEX kb ON t (b)")
	require.Equal(t, "[PRIMARY 1 1000 kab 1 10 kab 2 50 kb 1 0 ks 1 26 us 1 1000]", showIndex("t"))
	d.exec("ANALYZE TABLE t")
	require.Equal(t, "[PRIMARY 1 1000 kab 1 10 kab 2 50 kb 1 50 ks 1 26 us 1 1000]", showIndex("t"))
}
