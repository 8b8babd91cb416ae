package mysqlcompat_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// queryRows is a query and the rows queryTyped should return for it.
type queryRows struct{ q, rows string }

// requireRows runs each query and fails the test when its rows differ.
func (d *testDB) requireRows(cases []queryRows) {
	d.t.Helper()
	for _, tc := range cases {
		rows, _ := d.queryTyped(tc.q)
		require.Equal(d.t, tc.rows, rows, tc.q)
	}
}

func TestExactSumAndAvg(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(17,2), n BIGINT, u BIGINT UNSIGNED, g INT, f DOUBLE, y YEAR, tn TINYINT)")
	d.exec(`INSERT INTO t VALUES
		(1, 123456789012345.67, 9223372036854775807, 18446744073709551615, 1, 0.5, 2024, -128),
		(2, 0.01, 9223372036854775807, 18446744073709551615, 1, 0.25, 2025, -128),
		(3, NULL, NULL, NULL, 2, NULL, NULL, NULL),
		(4, -0.05, -5, 1, 3, 1, 1999, 7)`)
	for _, tc := range []struct {
		q, rows string
		types   []string
	}{
		{"SELECT SUM(d), AVG(d) FROM t WHERE id <= 2", "[[123456789012345.68 61728394506172.840000]]",
			[]string{"decimal(39,2) null", "decimal(21,6) null"}},
		{"SELECT SUM(n), AVG(n), SUM(u), AVG(u) FROM t WHERE id <= 2",
			"[[18446744073709551614 9223372036854775807.0000 36893488147419103230 18446744073709551615.0000]]",
			[]string{"decimal(41,0) null", "decimal(23,4) null", "decimal(42,0) null", "decimal(24,4) null"}},
		{"SELECT SUM(g), AVG(g), SUM(tn), AVG(y) FROM t", "[[7 1.7500 -249 2016.0000]]",
			[]string{"decimal(32,0) null", "decimal(14,4) null", "decimal(25,0) null", "decimal(8,4) null"}},
		// Floats stay DOUBLE, as in MySQL, but may be NULL.
		{"SELECT SUM(f), AVG(f) FROM t", "[[1.75 0.5833333333333334]]", []string{"double null", "double null"}},
		// AVG rounds half away from zero at four more digits.
		{"SELECT AVG(d) FROM t WHERE id IN (2, 4)", "[[-0.020000]]", nil},
		{"SELECT AVG(g) FROM t WHERE id IN (1, 2, 4)", "[[1.6667]]", nil},
		// No rows, and only NULLs, sum to NULL.
		{"SELECT SUM(d), AVG(n), SUM(f) FROM t WHERE id > 10", "[[<nil> <nil> <nil>]]", nil},
		{"SELECT g, SUM(d), SUM(n) FROM t GROUP BY g ORDER BY g",
			"[[1 123456789012345.68 18446744073709551614] [2 <nil> <nil>] [3 -0.05 -5]]", nil},
		{"SELECT g FROM t GROUP BY g HAVING SUM(n) > 18446744073709551613", "[[1]]", nil},
		{"SELECT g, SUM(n) s FROM t GROUP BY g ORDER BY s DESC LIMIT 1", "[[1 18446744073709551614]]", nil},
		{"SELECT SUM(d) + 1, SUM(n) - 1 FROM t WHERE id <= 2", "[[123456789012346.68 18446744073709551613]]", nil},
		{"SELECT SUM(DISTINCT n), AVG(DISTINCT g) FROM t", "[[9223372036854775802 2.0000]]", nil},
		{"SELECT * FROM (SELECT g, SUM(n) s FROM t GROUP BY g) x WHERE g = 1", "[[1 18446744073709551614]]",
			[]string{"int null", "decimal(41,0) null"}},
		{"SELECT (SELECT SUM(u) FROM t) AS q", "[[36893488147419103231]]", nil},
		{"SELECT id FROM t WHERE d < (SELECT SUM(d) FROM t) ORDER BY id", "[[2] [4]]", nil},
		{"SELECT SUM(t1.n) FROM t t1 JOIN t t2 ON t1.id = t2.id", "[[18446744073709551609]]", nil},
		// Over windows: exact, and a frame of NULLs (or no rows) is NULL.
		{"SELECT id, SUM(d) OVER (ORDER BY id), AVG(d) OVER (ORDER BY id) FROM t ORDER BY id",
			"[[1 123456789012345.67 123456789012345.670000] [2 123456789012345.68 61728394506172.840000] " +
				"[3 123456789012345.68 61728394506172.840000] [4 123456789012345.63 41152263004115.210000]]",
			[]string{"int", "decimal(39,2) null", "decimal(21,6) null"}},
		{"SELECT id, SUM(n) OVER (PARTITION BY g ORDER BY id) FROM t ORDER BY id",
			"[[1 9223372036854775807] [2 18446744073709551614] [3 <nil>] [4 -5]]", nil},
		{"SELECT id, SUM(u) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) FROM t ORDER BY id",
			"[[1 <nil>] [2 18446744073709551615] [3 36893488147419103230] [4 18446744073709551615]]", nil},
		{"SELECT id, AVG(n) OVER () FROM t WHERE id > 1 ORDER BY id",
			"[[2 4611686018427387901.0000] [3 4611686018427387901.0000] [4 4611686018427387901.0000]]", nil},
		// The sides of a UNION take the type MySQL merges them to.
		{"SELECT SUM(g) FROM t UNION ALL SELECT SUM(f) FROM t", "[[7] [1.75]]", []string{"double null"}},
		{"SELECT SUM(g) s FROM t UNION ALL SELECT SUM(d) FROM t WHERE id <= 2", "[[7.00] [123456789012345.68]]",
			[]string{"decimal(39,2) null"}},
		{"SELECT s + 1 FROM (SELECT SUM(n) s FROM t UNION SELECT AVG(g) FROM t) x ORDER BY 1",
			"[[2.7500] [18446744073709551610.0000]]", nil},
		// Over other SUMs, derived tables and common table expressions.
		{"SELECT SUM(s) FROM (SELECT g, SUM(n) s FROM t GROUP BY g) x", "[[18446744073709551609]]",
			[]string{"decimal(63,0) null"}},
		{"WITH c AS (SELECT g, SUM(n) s FROM t GROUP BY g) SELECT s FROM c ORDER BY g",
			"[[18446744073709551614] [<nil>] [-5]]", []string{"decimal(41,0) null"}},
		{"SELECT s2 FROM (SELECT s + 1 s2 FROM (SELECT SUM(n) s FROM t WHERE id <= 2) x) y",
			"[[18446744073709551615]]", nil},
		// A branch of another type makes the sum DOUBLE, as in MySQL.
		{"SELECT SUM(IF(g = 1, n, 0.5e0)), SUM(IFNULL(g, 0.5)) FROM t", "[[1.8446744073709552e+19 7.0]]",
			[]string{"double null", "decimal(33,1) null"}},
	} {
		rows, typs := d.queryTyped(tc.q)
		if rows != tc.rows {
			t.Errorf("%s:\n got %s\nwant %s", tc.q, rows, tc.rows)
		}
		if tc.types != nil {
			require.Equal(t, tc.types, typs, tc.q)
		}
	}

	// CREATE TABLE ... AS SELECT takes the exact types, and NULL.
	d.queryTyped("CREATE TABLE c AS SELECT g, SUM(d) s, AVG(d) a, SUM(n) sn, SUM(f) sf FROM t GROUP BY g")
	rows, _ := d.queryTyped("SHOW CREATE TABLE c")
	for _, col := range []string{"`s` decimal(39,2),", "`a` decimal(21,6),", "`sn` decimal(41,0),", "`sf` double\n"} {
		require.Contains(t, rows, col, "CREATE TABLE ... AS SELECT")
	}
	require.NotContains(t, rows, "NOT NULL")
	rows, _ = d.queryTyped("SELECT * FROM c ORDER BY g")
	require.Equal(t, "[[1 123456789012345.68 61728394506172.840000 18446744073709551614 0.75] [2 <nil> <nil> <nil> <nil>] [3 -0.05 -0.050000 -5 1]]", rows)

	// BIT sums as an integer.
	d.exec("CREATE TABLE bits (b BIT(8))")
	d.exec("INSERT INTO bits VALUES (b'11111111'), (b'1'), (NULL)")
	rows, typs := d.queryTyped("SELECT SUM(b), AVG(b) FROM bits")
	require.Equal(t, "[[256 128.0000]]", rows)
	require.Equal(t, []string{"decimal(25,0) null", "decimal(7,4) null"}, typs)

	d.queryTyped("CREATE TABLE w AS SELECT id, SUM(d) OVER (ORDER BY id) s, AVG(n) OVER () a FROM t")
	rows, _ = d.queryTyped("SHOW CREATE TABLE w")
	require.Contains(t, rows, "`s` decimal(39,2),\n  `a` decimal(23,4)\n", "CREATE TABLE ... AS SELECT over windows")
}

// TestExactSumMatchesBigInt sums random integers near the ends of BIGINT and
// BIGINT UNSIGNED, whose float64 sums lose digits, and compares with
// math/big.
func TestExactSumMatchesBigInt(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE r (id INT PRIMARY KEY, g INT, n BIGINT, u BIGINT UNSIGNED)")
	rng := rand.New(rand.NewPCG(7, 11))
	const groups = 4
	var sumN, sumU [groups]big.Int
	var vals []string
	for i := range 400 {
		n := rng.Int64()
		if rng.IntN(2) == 0 {
			n = -n - 1
		}
		u := rng.Uint64()
		g := i % groups
		sumN[g].Add(&sumN[g], big.NewInt(n))
		sumU[g].Add(&sumU[g], new(big.Int).SetUint64(u))
		vals = append(vals, fmt.Sprintf("(%d, %d, %d, %d)", i, g, n, u))
	}
	d.exec("INSERT INTO r VALUES " + strings.Join(vals, ", "))
	var want strings.Builder
	for g := range groups {
		if g > 0 {
			want.WriteString(" ")
		}
		fmt.Fprintf(&want, "[%d %s %s]", g, sumN[g].String(), sumU[g].String())
	}
	rows, _ := d.queryTyped("SELECT g, SUM(n), SUM(u) FROM r GROUP BY g ORDER BY g")
	require.Equal(t, "["+want.String()+"]", rows)
}

// TestExactSumOverSetOps: an exact aggregate over a derived table of an
// INTERSECT or EXCEPT (which keyDistincts runs over its own node,
// setopkeys.go) of exact sums is typed and computed as over a UNION's.
func TestExactSumOverSetOps(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(17,2), n BIGINT, g INT)")
	d.exec(`INSERT INTO t VALUES
		(1, 123456789012345.67, 9223372036854775807, 1),
		(2, 0.01, 9223372036854775807, 1),
		(3, -0.05, -5, 2)`)
	for _, op := range []string{"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"} {
		// The right side is the left's group 1 only: INTERSECT keeps it,
		// EXCEPT keeps group 2, UNION both.
		right := "SELECT g, SUM(d), SUM(n) FROM t WHERE g = 1 GROUP BY g"
		q := "SELECT SUM(sd), SUM(sn), AVG(sn) FROM (SELECT g, SUM(d) sd, SUM(n) sn FROM t GROUP BY g " + op + " " + right + ") x"
		rows, typs := d.queryTyped(q)
		want := map[string]string{
			"UNION":         "[[123456789012345.63 18446744073709551609 9223372036854775804.5000]]",
			"UNION ALL":     "[[246913578024691.31 36893488147419103223 12297829382473034407.6667]]",
			"INTERSECT":     "[[123456789012345.68 18446744073709551614 18446744073709551614.0000]]",
			"INTERSECT ALL": "[[123456789012345.68 18446744073709551614 18446744073709551614.0000]]",
			"EXCEPT":        "[[-0.05 -5 -5.0000]]",
			"EXCEPT ALL":    "[[-0.05 -5 -5.0000]]",
		}[op]
		if rows != want {
			t.Errorf("%s:\n got %s\nwant %s", q, rows, want)
		}
		require.Equal(t, []string{"decimal(61,2) null", "decimal(63,0) null", "decimal(45,4) null"}, typs, q)
	}
	// Its columns read above it, and a table made of it.
	const sides = "SELECT SUM(n) sn FROM t GROUP BY g %s SELECT SUM(n) FROM t WHERE g = 1 GROUP BY g"
	rows, typs := d.queryTyped("SELECT sn + 1 FROM (" + fmt.Sprintf(sides, "INTERSECT") + ") x")
	require.Equal(t, "[[18446744073709551615]]", rows)
	_, unionTyps := d.queryTyped("SELECT sn + 1 FROM (" + fmt.Sprintf(sides, "UNION ALL") + ") x")
	require.Equal(t, unionTyps, typs)
	d.queryTyped("CREATE TABLE c AS SELECT SUM(d) s FROM t GROUP BY g EXCEPT SELECT SUM(d) FROM t WHERE g = 1 GROUP BY g")
	rows, _ = d.queryTyped("SHOW CREATE TABLE c")
	require.Contains(t, rows, "`s` decimal(39,2)\n", "CREATE TABLE ... AS SELECT ... EXCEPT")
	rows, _ = d.queryTyped("SELECT * FROM c")
	require.Equal(t, "[[-0.05]]", rows)
}
