package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHashJoinKeys: hash joins over DECIMAL columns of any scale, DECIMAL
// against an integer, a double against a DECIMAL, and a string against a
// number find the pairs MySQL compares equal. GMS used the DECIMAL values
// themselves as map keys, which never compare equal, and converted a
// string key into the number's type.
func TestHashJoinKeys(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE a (id INT PRIMARY KEY, x DECIMAL(10,3), f DOUBLE)")
	d.exec("CREATE TABLE b (id INT PRIMARY KEY, y DECIMAL(5,2), n TINYINT, s VARCHAR(10))")
	d.exec("INSERT INTO a VALUES (1, 2.000, 2), (2, 1.010, 1.01), (3, 1.500, 0.5), (4, 10, 10), (5, 0.100, 3), (6, NULL, NULL)")
	d.exec("INSERT INTO b VALUES (1, 2.00, 2, '2'), (2, 1.01, 1, 'x'), (3, 1.5, 0, '1.5'), (4, 10.00, 10, '10.000'), (5, 0.1, 3, '3'), (6, NULL, NULL, NULL)")
	for _, tc := range []struct{ on, want string }{
		{"a.x = b.y", "[[1 1] [2 2] [3 3] [4 4] [5 5]]"},
		{"a.x = b.n", "[[1 1] [4 4]]"},
		{"a.f = b.y", "[[1 1] [2 2] [4 4]]"},
		{"a.x = b.s", "[[1 1] [3 3] [4 4]]"},
		{"a.f = b.s", "[[1 1] [4 4] [5 5]]"},
		{"a.x = b.y AND a.id = b.id", "[[1 1] [2 2] [3 3] [4 4] [5 5]]"},
	} {
		q := "SELECT /*+ HASH_JOIN(a, b) JOIN_ORDER(a, b) */ a.id, b.id FROM a JOIN b ON " + tc.on + " ORDER BY a.id, b.id"
		require.Contains(t, fmt.Sprint(d.exec("EXPLAIN FORMAT=TREE "+q)), "HashJoin", tc.on)
		require.Equal(t, tc.want, fmt.Sprint(d.exec(q)), tc.on)
	}
}
