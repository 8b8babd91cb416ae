package sqlstore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// twoConns opens a store and two connections in database mydb: the first
// uses the plan cache, the second has plan reuse off, so that every
// statement it runs is planned by GMS: the reference.
func twoConns(t *testing.T) (cached, planned *sqlstore.Conn) {
	t.Helper()
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	cached, planned = e.NewConn(), e.NewConn()
	t.Cleanup(func() {
		require.NoError(t, cached.Close())
		require.NoError(t, planned.Close())
		require.NoError(t, e.Close())
	})
	ctx := context.Background()
	require.NoError(t, cached.UseDatabase(ctx, "mydb"))
	require.NoError(t, planned.UseDatabase(ctx, "mydb"))
	_, err = planned.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)
	return cached, planned
}

// result is what a query returned, for comparison: its columns as Strata
// describes them, its rows, or its error.
type result struct {
	cols []sqlstore.Column
	rows [][]any
	err  string
}

func queryResult(t *testing.T, c *sqlstore.Conn, q string) result {
	t.Helper()
	rows, err := c.Query(context.Background(), q)
	if err != nil {
		return result{err: err.Error()}
	}
	cols := append([]sqlstore.Column(nil), rows.Columns()...)
	var out [][]any
	for {
		vals, err := rows.Next()
		if err != nil {
			if err.Error() != "EOF" {
				_ = rows.Close()
				return result{err: err.Error()}
			}
			break
		}
		out = append(out, append([]any(nil), vals...))
	}
	require.NoError(t, rows.Close())
	return result{cols: cols, rows: out}
}

func plansReused(t *testing.T, c *sqlstore.Conn) int64 {
	t.Helper()
	r := queryResult(t, c, "SHOW SESSION STATUS LIKE 'Strata_plans_reused'")
	require.Empty(t, r.err)
	require.Len(t, r.rows, 1)
	n, err := strconv.ParseInt(fmt.Sprint(r.rows[0][1]), 10, 64)
	require.NoError(t, err)
	return n
}

// TestPlanCacheMatchesPlanned runs statements of many shapes, each several
// times with other literals, on a connection with the plan cache and on one
// without: columns, rows and errors are the same.
func TestPlanCacheMatchesPlanned(t *testing.T) {
	ctx := context.Background()
	cached, planned := twoConns(t)
	for _, c := range []*sqlstore.Conn{cached, planned} {
		_, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
		require.NoError(t, err)
	}
	for i := 0; i < 50; i++ {
		_, err := cached.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'c%d')", i*2-10, i%7, i))
		require.NoError(t, err)
	}
	shapes := []string{
		"SELECT 1",
		"SELECT %d",
		"select   %d AS x",
		"SELECT 'a', %d, NULL, 1.5, -2, 1e3, 0x1f, b'1', 18446744073709551615",
		"SELECT c FROM t WHERE id = %d",
		"SELECT c FROM t WHERE id = '%d'",
		"SELECT c FROM t WHERE id = -%d",
		"SELECT id, c FROM t WHERE id IN (%d, 3, 4, 70)",
		"SELECT c FROM t WHERE id BETWEEN %d AND 20",
		"SELECT SUM(k), COUNT(*) FROM t WHERE id BETWEEN %d AND 30",
		"SELECT DISTINCT k FROM t WHERE id BETWEEN %d AND 40 ORDER BY k",
		"SELECT c FROM t WHERE id BETWEEN %d AND 20 ORDER BY c LIMIT 3",
		"SELECT c FROM t WHERE id = %d OR id = 8",
		"SELECT 1 FROM t WHERE id = %d",
		"SELECT c FROM t WHERE id = %d /* 5 */",
		"SELECT c FROM t WHERE id = %d -- 7\n",
		"SELECT `c` FROM t WHERE id = %d AND c = 'x''5'",
		"SELECT c FROM t WHERE id > %d",
		"SELECT c FROM t WHERE id = %d.0",
		"SELECT c FROM t WHERE id = 99999999999999999999%d",
		"SELECT c FROM t WHERE k = %d",
		"SELECT c FROM t1 WHERE id = %d",
		"SELECT c FROM t WHERE c = 'c%d'",
		"SELECT c FROM t WHERE c = 'C%d  '",
		"SELECT id FROM t WHERE c IN ('c%d', 'c3 ', 'C4')",
		"SELECT id FROM t WHERE c BETWEEN 'c%d' AND 'c30'",
		"SELECT id FROM t WHERE c LIKE 'c%d%%'",
		"SELECT id FROM t WHERE id = '%d' AND c < 'c9'",
		"SELECT id FROM t WHERE k = '%d abc'",
		"SELECT id FROM t WHERE c = 'c%dxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
		"SELECT @v%d",
		"SELECT @@autocommit, %d",
	}
	for _, shape := range shapes {
		t.Run(shape, func(t *testing.T) {
			for i := 0; i < 6; i++ {
				q := shape
				if containsVerb(q) {
					q = fmt.Sprintf(shape, i*3-2)
				}
				require.Equal(t, queryResult(t, planned, q), queryResult(t, cached, q), "%s", q)
			}
		})
	}
	require.Positive(t, plansReused(t, cached))
}

func containsVerb(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '%' && s[i+1] == 'd' {
			return true
		}
	}
	return false
}

// TestPlanCacheFloorStatements: SET, BEGIN, COMMIT and ROLLBACK run on
// kept plans and do what they say, autocommit on and off.
func TestPlanCacheFloorStatements(t *testing.T) {
	ctx := context.Background()
	c, _ := twoConns(t)
	_, err := c.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY)")
	require.NoError(t, err)
	count := func() any {
		r := queryResult(t, c, "SELECT COUNT(*) FROM t")
		require.Empty(t, r.err)
		return r.rows[0][0]
	}
	before := plansReused(t, c)
	for i := 0; i < 3; i++ {
		_, err = c.Exec(ctx, "SET @x = 1")
		require.NoError(t, err)
		_, err = c.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		require.True(t, c.HoldsTransaction())
		_, err = c.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d)", 2*i))
		require.NoError(t, err)
		_, err = c.Exec(ctx, "ROLLBACK")
		require.NoError(t, err)
		require.Equal(t, int64(i), count())
		_, err = c.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		_, err = c.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d)", 2*i+1))
		require.NoError(t, err)
		_, err = c.Exec(ctx, "COMMIT")
		require.NoError(t, err)
		require.False(t, c.HoldsTransaction())
		require.Equal(t, int64(i+1), count())
	}
	require.GreaterOrEqual(t, plansReused(t, c)-before, int64(6))

	// Autocommit off, by a kept SET: writes wait for COMMIT.
	for i := 0; i < 2; i++ {
		_, err = c.Exec(ctx, "SET autocommit = 0")
		require.NoError(t, err)
		_, err = c.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d)", 100+i))
		require.NoError(t, err)
		require.True(t, c.HoldsTransaction())
		_, err = c.Exec(ctx, "ROLLBACK")
		require.NoError(t, err)
		_, err = c.Exec(ctx, "SET autocommit = 1")
		require.NoError(t, err)
		require.Equal(t, int64(3), count())
	}
	r := queryResult(t, c, "SELECT @x")
	require.Equal(t, [][]any{{int64(1)}}, r.rows)
}

// TestPlanCacheInvalidation: a kept plan or template is not used when what
// it was made under changed: the table's definition, the current
// database, sql_mode, the connection's character set.
func TestPlanCacheInvalidation(t *testing.T) {
	ctx := context.Background()
	c, _ := twoConns(t)
	exec := func(q string) {
		t.Helper()
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	rows := func(q string) [][]any {
		t.Helper()
		r := queryResult(t, c, q)
		require.Empty(t, r.err, q)
		return r.rows
	}
	exec("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))")
	exec("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	for i := 0; i < 3; i++ {
		require.Equal(t, [][]any{{"a"}}, rows("SELECT c FROM t WHERE id = 1"))
	}
	// DDL between executions.
	exec("DROP TABLE t")
	exec("CREATE TABLE t (id INT PRIMARY KEY, c INT)")
	exec("INSERT INTO t VALUES (1, 10)")
	require.Equal(t, [][]any{{int64(10)}}, rows("SELECT c FROM t WHERE id = 1"))
	exec("ALTER TABLE t ADD COLUMN d INT DEFAULT 7")
	require.Equal(t, [][]any{{int64(10)}}, rows("SELECT c FROM t WHERE id = 1"))
	exec("ALTER TABLE t RENAME COLUMN c TO e")
	r := queryResult(t, c, "SELECT c FROM t WHERE id = 1")
	require.Contains(t, r.err, "Unknown column 'c'")

	// Another database: the same text reads its table.
	exec("CREATE DATABASE other")
	exec("CREATE TABLE other.t (id INT PRIMARY KEY, c VARCHAR(10))")
	exec("INSERT INTO other.t VALUES (1, 'other')")
	exec("USE other")
	require.Equal(t, [][]any{{"other"}}, rows("SELECT c FROM t WHERE id = 1"))
	exec("USE mydb")

	// sql_mode: under ANSI_QUOTES "a" is a column, no longer a string.
	require.Equal(t, [][]any{{"a"}}, rows(`SELECT "a"`))
	exec("SET sql_mode = 'ANSI_QUOTES'")
	r = queryResult(t, c, `SELECT "a"`)
	require.NotEmpty(t, r.err)
	exec("SET sql_mode = DEFAULT")
	require.Equal(t, [][]any{{"a"}}, rows(`SELECT "a"`))

	// The connection's collation is the literal's.
	coll := func() string {
		r := queryResult(t, c, "SELECT 'x'")
		require.Empty(t, r.err)
		return r.cols[0].TypeName + fmt.Sprint(r.cols[0].Length)
	}
	first := coll()
	require.Equal(t, first, coll())
	exec("SET NAMES latin1")
	latin := queryResult(t, c, "SELECT COLLATION('x')")
	require.Equal(t, [][]any{{"latin1_swedish_ci"}}, latin.rows)

	// Plan reuse off: nothing is reused.
	exec("SET strata_plan_reuse = OFF")
	before := plansReused(t, c)
	for i := 0; i < 3; i++ {
		rows("SELECT 1")
		exec("SET @y = 2")
	}
	require.Equal(t, before, plansReused(t, c))
}

// TestPlanCacheBounded: many different texts keep the cache at its bound
// and every one still answers correctly.
func TestPlanCacheBounded(t *testing.T) {
	c, planned := twoConns(t)
	for i := 0; i < 700; i++ {
		q := fmt.Sprintf("SELECT %d AS n%d", i, i%300)
		require.Equal(t, queryResult(t, planned, q), queryResult(t, c, q))
	}
	require.LessOrEqual(t, sqlstore.PlanCacheLen(c), sqlstore.PlanCacheSize)
}

// TestStatementFloorAllocs bounds the allocations of the shortest
// statements, run on kept plans: a regression that plans them again
// (hundreds of allocations each) fails here.
func TestStatementFloorAllocs(t *testing.T) {
	ctx := context.Background()
	c, _ := twoConns(t)
	for _, tc := range []struct {
		name string
		max  float64
		op   func() error
	}{
		{"select_1", 0, func() error {
			rows, err := c.Query(ctx, "SELECT 1")
			if err != nil {
				return err
			}
			for {
				if _, err := rows.Next(); err != nil {
					break
				}
			}
			return rows.Close()
		}},
		{"set", 19, func() error { _, err := c.Exec(ctx, "SET @floor = 1"); return err }},
		{"begin_commit", 4, func() error {
			if _, err := c.Exec(ctx, "BEGIN"); err != nil {
				return err
			}
			_, err := c.Exec(ctx, "COMMIT")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.op())
			var err error
			n := testing.AllocsPerRun(200, func() {
				if e := tc.op(); e != nil {
					err = e
				}
			})
			require.NoError(t, err)
			t.Logf("%.0f allocations", n)
			require.LessOrEqual(t, n, tc.max)
		})
	}
}

// BenchmarkStatementFloor runs the shortest statements through a Conn:
//
//	go test ./sqlstore -run '^$' -bench ConnFloor -benchmem
func BenchmarkConnFloor(b *testing.B) {
	ctx := context.Background()
	st, _, err := kvstore.Open(b.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(b, err)
	e := st.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	require.NoError(b, c.UseDatabase(ctx, "mydb"))
	_, err = c.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))")
	require.NoError(b, err)
	_, err = c.Exec(ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	require.NoError(b, err)
	query := func(q string) func() error {
		return func() error {
			rows, err := c.Query(ctx, q)
			if err != nil {
				return err
			}
			for {
				if _, err := rows.Next(); err != nil {
					break
				}
			}
			return rows.Close()
		}
	}
	n := 0
	for _, bc := range []struct {
		name string
		op   func() error
	}{
		{"select_1", query("SELECT 1")},
		{"set", func() error { _, err := c.Exec(ctx, "SET @floor = 1"); return err }},
		{"begin_commit", func() error {
			if _, err := c.Exec(ctx, "BEGIN"); err != nil {
				return err
			}
			_, err := c.Exec(ctx, "COMMIT")
			return err
		}},
		{"point_select_text", func() error {
			n++
			return query("SELECT c FROM t WHERE id = " + strconv.Itoa(n%3+1))()
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestExecWriteRunsOnce holds Conn.Exec of a write to one pass through
// runWrite (the session asked once whether it is optimistic, the store's
// turns taken once), whether the plan cache runs the write or it is
// planned afresh; the second connection plans every statement.
func TestExecWriteRunsOnce(t *testing.T) {
	ctx := context.Background()
	cached, planned := twoConns(t)
	_, err := cached.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))")
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		conn  *sqlstore.Conn
		query string
	}{
		{"kept plan", cached, "UPDATE t SET c = 'k' WHERE id = 1"},
		{"not in the cache", cached, "UPDATE t SET c = CONCAT(c, 'x') WHERE c LIKE 'a%'"},
		{"plan reuse off", planned, "UPDATE t SET c = 'k' WHERE id = 1"},
		{"insert, not in the cache", cached, "INSERT INTO t SELECT id + 100, c FROM t WHERE id < 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.conn.Exec(ctx, "DELETE FROM t")
			require.NoError(t, err)
			_, err = tc.conn.Exec(ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
			require.NoError(t, err)
			for i := range 3 {
				before := sqlstore.WriteRuns(tc.conn)
				_, err := tc.conn.Exec(ctx, tc.query)
				require.NoError(t, err)
				require.Equal(t, 1, sqlstore.WriteRuns(tc.conn)-before, "execution %d", i)
				if tc.query[0] == 'I' {
					_, err = tc.conn.Exec(ctx, "DELETE FROM t WHERE id > 100")
					require.NoError(t, err)
				}
			}
		})
	}
}

// TestStatementStatusCounted: the statements the plan cache runs itself
// (constant SELECTs, templates, kept plans) count in Questions and
// Com_select, of the session and global, as the same statements planned
// by GMS do.
func TestStatementStatusCounted(t *testing.T) {
	ctx := context.Background()
	cached, planned := twoConns(t)
	_, err := cached.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, c INT)")
	require.NoError(t, err)
	_, err = cached.Exec(ctx, "INSERT INTO t VALUES (1, 1), (2, 2)")
	require.NoError(t, err)
	status := func(c *sqlstore.Conn, scope, name string) int64 {
		t.Helper()
		rows, err := c.Query(ctx, "SHOW "+scope+" STATUS LIKE '"+name+"'")
		require.NoError(t, err)
		defer rows.Close()
		vals, err := rows.Next()
		require.NoError(t, err)
		n, err := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64)
		require.NoError(t, err)
		return n
	}
	statements := []string{"SELECT 1", "SELECT c FROM t WHERE id = 1", "SELECT @@autocommit", "SELECT c FROM t WHERE c > 0", "UPDATE t SET c = 3 WHERE id = 2"}
	deltas := func(c *sqlstore.Conn) (d [3]int64) {
		before := [3]int64{status(c, "SESSION", "Questions"), status(c, "SESSION", "Com_select"), status(c, "GLOBAL", "Com_select")}
		for range 3 {
			for _, q := range statements {
				_, err := c.Exec(ctx, q)
				require.NoError(t, err, q)
			}
		}
		after := [3]int64{status(c, "SESSION", "Questions"), status(c, "SESSION", "Com_select"), status(c, "GLOBAL", "Com_select")}
		for i := range d {
			d[i] = after[i] - before[i]
		}
		return d
	}
	want := deltas(planned)
	require.NotZero(t, want[0])
	require.NotZero(t, want[1])
	require.Equal(t, want, deltas(cached))
}
