package mysqlcompat_test

import "testing"

// Tied ORDER BY values are peers, as in MySQL: one rank, and one frame end
// for an aggregate with ORDER BY and no frame. NULLs are peers of each
// other. An explicit ROWS frame still moves one row at a time.
func TestWindowPeers(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, i INT, d DECIMAL(10,2), b VARBINARY(5), s VARCHAR(5))")
	d.exec(`INSERT INTO t VALUES (1,1,1.5,'a','x'),(2,1,1.50,'a','x'),(3,2,2,'b','y'),
		(4,NULL,NULL,NULL,NULL),(5,NULL,NULL,NULL,NULL)`)
	d.requireRows([]queryRows{
		{"SELECT id, SUM(id) OVER (ORDER BY i) FROM t ORDER BY id", "[[1 12] [2 12] [3 15] [4 9] [5 9]]"},
		{"SELECT id, SUM(id) OVER (ORDER BY d DESC) FROM t ORDER BY id", "[[1 6] [2 6] [3 3] [4 15] [5 15]]"},
		{"SELECT id, COUNT(*) OVER (ORDER BY i), MAX(id) OVER (ORDER BY i), AVG(id) OVER (ORDER BY s) FROM t ORDER BY id",
			"[[1 4 5 3.0000] [2 4 5 3.0000] [3 5 5 3.0000] [4 2 5 4.5000] [5 2 5 4.5000]]"},
		{"SELECT id, SUM(id) OVER (PARTITION BY i IS NULL ORDER BY i, d) FROM t ORDER BY id", "[[1 3] [2 3] [3 6] [4 9] [5 9]]"},
		// Running extremes: GMS took MIN and MAX over the whole partition.
		{"SELECT id, MIN(id) OVER (ORDER BY id DESC), MAX(id) OVER (ORDER BY id) FROM t ORDER BY id",
			"[[1 1 1] [2 2 2] [3 3 3] [4 4 4] [5 5 5]]"},
		{"SELECT id, RANK() OVER (ORDER BY d), DENSE_RANK() OVER (ORDER BY b DESC), PERCENT_RANK() OVER (ORDER BY d) FROM t ORDER BY id",
			"[[1 3 2 0.5] [2 3 2 0.5] [3 5 1 1] [4 1 3 0] [5 1 3 0]]"},
		{"SELECT id, RANK() OVER (ORDER BY SUM(d)) FROM t GROUP BY id ORDER BY id", "[[1 3] [2 3] [3 5] [4 1] [5 1]]"},
		{"SELECT id, SUM(id) OVER (ORDER BY i, id ROWS UNBOUNDED PRECEDING) FROM t ORDER BY id", "[[1 10] [2 12] [3 15] [4 4] [5 9]]"},
		{"SELECT id, RANK() OVER (ORDER BY j), DENSE_RANK() OVER (ORDER BY j DESC) FROM (SELECT id, CAST(IF(id < 3, '{\"a\": [1]}', '[2]') AS JSON) j FROM t) x ORDER BY id",
			"[[1 1 2] [2 1 2] [3 3 1] [4 3 1] [5 3 1]]"},
		{"SELECT id, LAG(id) OVER (ORDER BY i, id), ROW_NUMBER() OVER (ORDER BY d, id) FROM t ORDER BY id",
			"[[1 5 3] [2 1 4] [3 2 5] [4 <nil> 1] [5 4 2]]"},
	})
}
