package mysqlcompat_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A set operation's column of numeric sides that GMS converts to a type of
// its own takes MySQL's type instead, and keeps every value.
func TestUnionNumberTypes(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, c INT, dd DECIMAL(10,2), f DOUBLE, u BIGINT UNSIGNED, b BIGINT, ti TINYINT, tu TINYINT UNSIGNED, v VARCHAR(5))")
	d.exec("INSERT INTO t VALUES (1, 10, 1.50, 2.5, 3, -4, -1, 200, 'a'), (2, 9, 2.25, 1e300, 18446744073709551615, 9223372036854775807, 1, 255, 'b')")
	for _, tc := range []struct {
		q, rows string
		typ     string
	}{
		// GMS: LONGTEXT, numbers sent as text.
		{"SELECT f FROM t UNION ALL SELECT c FROM t", "[[2.5] [1e+300] [10] [9]]", "double null"},
		// GMS: BIGINT, 18446744073709551615 clamped to 2^63-1.
		{"SELECT c FROM t UNION ALL SELECT u FROM t", "[[10] [9] [3] [18446744073709551615]]", "decimal(20,0) null"},
		{"SELECT b FROM t UNION ALL SELECT u FROM t ORDER BY 1", "[[-4] [3] [9223372036854775807] [18446744073709551615]]", "decimal(20,0) null"},
		// GMS: DECIMAL(65,30), which 1e300 does not fit.
		{"SELECT f FROM t UNION ALL SELECT dd FROM t", "[[2.5] [1e+300] [1.5] [2.25]]", "double null"},
		// Left as GMS has them: no value is lost.
		{"SELECT ti FROM t UNION ALL SELECT tu FROM t", "[[-1] [1] [200] [255]]", "bigint null"},
		{"SELECT c FROM t UNION ALL SELECT v FROM t", "[[10] [9] [a] [b]]", "longtext null"},
		{"SELECT u FROM t UNION ALL SELECT u FROM t WHERE id = 2", "[[3] [18446744073709551615] [18446744073709551615]]", "bigint unsigned null"},
	} {
		rows, typs := d.queryTyped(tc.q)
		require.Equal(t, tc.rows, rows, tc.q)
		require.Equal(t, []string{tc.typ}, typs, tc.q)
	}
	d.queryTyped("CREATE TABLE z AS SELECT c FROM t UNION ALL SELECT u FROM t") // with the statement's text
	rows, typs := d.queryTyped("SELECT c FROM z ORDER BY c DESC LIMIT 1")
	require.Equal(t, "[[18446744073709551615]]", rows)
	require.Equal(t, []string{"decimal(20,0) null"}, typs)
}
