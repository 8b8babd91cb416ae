package mysqlcompat_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLikeScopesDifferential runs each LIKE predicate in every scope a
// statement can nest it in, over a table with an index on the column, one
// with the column as primary key and one without an index, and requires
// the rows a full scan of an unindexed copy finds (the oracle). GMS
// rewrites the LIKEs of nested scopes (derived tables, CTEs, views, set
// operations, subqueries of filters) into ranges as it rewrites the
// statement's own, before it analyzes them (keepLikes).
func TestLikeScopesDifferential(t *testing.T) {
	d := newTestDB(t)
	values := []string{
		`'a%'`, `'ab'`, `'a_'`, `'ax'`, `'axb'`, `'aĀ'`, `'a€'`, `'a😀'`, `'a\\'`, `'a|'`, `'a|%'`,
		`'A'`, `'a'`, `'a '`, `'A  '`, `'a\t'`, `'é'`, `'e'`, `'Ébc'`, `'b'`, `NULL`,
	}
	// Each predicate over the column {c}, and the ids the oracle must find
	// under utf8mb4_0900_bin, and for some under the two case- and
	// accent-insensitive collations (MySQL 8's answers), which anchor the
	// oracle itself.
	preds := []struct {
		p   string
		bin []int // ids (1-based positions in values) under utf8mb4_0900_bin
		ci  []int // under utf8mb4_0900_ai_ci and utf8mb4_general_ci, if given
	}{
		{`{c} LIKE 'a\%'`, []int{1}, []int{1}},
		{`{c} LIKE 'a\_'`, []int{3}, nil},
		{`{c} LIKE 'a\_%'`, []int{3}, nil},
		{`{c} LIKE 'a|%' ESCAPE '|'`, []int{1}, nil},
		{`{c} LIKE 'a||%' ESCAPE '|'`, []int{10, 11}, nil},
		{`{c} LIKE 'a\\'`, []int{9}, nil},
		{`{c} LIKE 'a|' ESCAPE '|'`, []int{10}, nil},
		{`{c} LIKE 'a%'`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 16}, nil},
		{`{c} LIKE 'a_'`, []int{1, 2, 3, 4, 6, 7, 8, 9, 10, 14, 16}, nil},
		{`{c} LIKE 'a'`, []int{13}, []int{12, 13}},
		{`{c} LIKE 'a '`, []int{14}, []int{14}},
		{`{c} LIKE 'é%'`, []int{17}, []int{17, 18, 19}},
		{`{c} LIKE 'aĀ%'`, []int{6}, nil},
		{`{c} LIKE 'a%b'`, []int{2, 5}, nil},
		{`{c} LIKE NULL`, []int{}, []int{}},
		{`{c} NOT LIKE 'a%'`, []int{12, 15, 17, 18, 19, 20}, nil},
	}
	colls := []string{"utf8mb4_0900_bin", "utf8mb4_0900_ai_ci", "utf8mb4_general_ci"}
	for i, coll := range colls {
		col := fmt.Sprintf("VARCHAR(20) COLLATE %s", coll)
		d.exec(fmt.Sprintf("CREATE TABLE o%d (id INT, s %s)", i, col))
		d.exec(fmt.Sprintf("CREATE TABLE n%d (id INT, s %s)", i, col))
		d.exec(fmt.Sprintf("CREATE TABLE x%d (id INT PRIMARY KEY, s %s, KEY (s))", i, col))
		d.exec(fmt.Sprintf("CREATE TABLE p%d (s %s PRIMARY KEY, id INT)", i, col))
		d.exec(fmt.Sprintf("CREATE TABLE po%d (s %s, id INT)", i, col))
		var rows []string
		for j, v := range values {
			rows = append(rows, fmt.Sprintf("(%d, %s)", j+1, v))
		}
		for _, tbl := range []string{"o", "n", "x"} {
			d.exec(fmt.Sprintf("INSERT INTO %s%d VALUES %s", tbl, i, strings.Join(rows, ", ")))
		}
		// The primary key keeps one of the values equal under the
		// collation; its oracle holds the same rows.
		d.exec(fmt.Sprintf("INSERT IGNORE INTO p%d (id, s) SELECT id, s FROM o%d WHERE s IS NOT NULL ORDER BY id", i, i))
		d.exec(fmt.Sprintf("INSERT INTO po%d SELECT s, id FROM p%d", i, i))
	}
	d.exec("CREATE TABLE src (k INT)")
	d.exec("CREATE TABLE log (id INT)")
	d.exec("CREATE TABLE k (id INT PRIMARY KEY, v INT)")
	for j := range values {
		d.exec(fmt.Sprintf("INSERT INTO k VALUES (%d, 0)", j+1))
	}

	ids := func(q string) []string {
		t.Helper()
		rows, err := query(d.e, d.ctx, q)
		require.NoError(t, err, q)
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprint(r...))
		}
		slices.Sort(out)
		return out
	}
	twice := func(s []string) []string {
		out := slices.Concat(s, s)
		slices.Sort(out)
		return out
	}
	for ci, coll := range colls {
		for pi, pr := range preds {
			p := func(c string) string { return strings.ReplaceAll(pr.p, "{c}", c) }
			for _, pair := range [][2]string{{"n", "o"}, {"x", "o"}, {"p", "po"}} {
				T := fmt.Sprintf("%s%d", pair[0], ci)
				O := fmt.Sprintf("%s%d", pair[1], ci)
				want := ids(fmt.Sprintf("SELECT id FROM %s WHERE %s", O, p("s")))
				anchorIDs := pr.bin
				if coll != "utf8mb4_0900_bin" {
					anchorIDs = pr.ci
				}
				if anchorIDs != nil && pair[1] == "o" {
					var anchor []string
					for _, id := range anchorIDs {
						anchor = append(anchor, fmt.Sprint(id))
					}
					slices.Sort(anchor)
					require.Equal(t, anchor, want, "oracle %s under %s", pr.p, coll)
				}
				name := fmt.Sprintf("%s/%s/%s", coll, T, pr.p)
				scopes := []struct {
					scope, q string
					want     []string
				}{
					{"top", fmt.Sprintf("SELECT id FROM %s WHERE %s", T, p("s")), want},
					{"derived", fmt.Sprintf("SELECT * FROM (SELECT id FROM %s WHERE %s) dt", T, p("s")), want},
					{"derived in derived", fmt.Sprintf("SELECT id FROM (SELECT * FROM (SELECT id, s FROM %s) a WHERE %s) b", T, p("s")), want},
					{"IN", fmt.Sprintf("SELECT id FROM %s WHERE id IN (SELECT id FROM %s WHERE %s)", O, T, p("s")), want},
					{"EXISTS", fmt.Sprintf("SELECT a.id FROM %s a WHERE EXISTS (SELECT 1 FROM %s b WHERE b.id = a.id AND %s)", O, T, p("b.s")), want},
					{"scalar", fmt.Sprintf("SELECT a.id FROM %s a WHERE (SELECT COUNT(*) FROM %s b WHERE b.id = a.id AND %s) > 0", O, T, p("b.s")), want},
					{"scalar in projection", fmt.Sprintf("SELECT (SELECT COUNT(*) FROM %s WHERE %s)", T, p("s")), []string{fmt.Sprint(len(want))}},
					{"UNION ALL sides", fmt.Sprintf("SELECT id FROM %s WHERE %s UNION ALL SELECT id FROM %s WHERE %s", T, p("s"), T, p("s")), twice(want)},
					{"UNION right side", fmt.Sprintf("SELECT 0 FROM dual WHERE false UNION SELECT id FROM %s WHERE %s", T, p("s")), want},
					{"CTE", fmt.Sprintf("WITH c AS (SELECT id FROM %s WHERE %s) SELECT id FROM c", T, p("s")), want},
					{"recursive CTE", fmt.Sprintf("WITH RECURSIVE c (id, n) AS (SELECT id, 0 FROM %s WHERE %s UNION ALL SELECT t.id, c.n + 1 FROM c JOIN %s t ON t.id = c.id WHERE c.n < 1 AND %s) SELECT id FROM c", T, p("s"), T, p("t.s")), twice(want)},
				}
				for _, sc := range scopes {
					assert.Equal(t, sc.want, ids(sc.q), "%s: %s: %s", name, sc.scope, sc.q)
				}
				// Data-changing statements: the rows an UPDATE's
				// subquery picks.
				for _, u := range []string{
					fmt.Sprintf("UPDATE k SET v = 1 WHERE id IN (SELECT id FROM %s WHERE %s)", T, p("s")),
					fmt.Sprintf("UPDATE k SET v = 1 WHERE EXISTS (SELECT 1 FROM (SELECT id FROM %s WHERE %s) dt WHERE dt.id = k.id)", T, p("s")),
				} {
					d.exec(u)
					assert.Equal(t, want, ids("SELECT id FROM k WHERE v = 1"), "%s: %s", name, u)
					d.exec("UPDATE k SET v = 0")
				}
				// Stored bodies: a view, a trigger and a procedure.
				v := fmt.Sprintf("v_%d_%d_%s", ci, pi, T)
				d.exec(fmt.Sprintf("CREATE VIEW %s AS SELECT id FROM %s WHERE %s", v, T, p("s")))
				assert.Equal(t, want, ids("SELECT id FROM "+v), "%s: view", name)
				d.exec("DROP VIEW " + v)
				d.exec(fmt.Sprintf("CREATE TRIGGER tr AFTER INSERT ON src FOR EACH ROW INSERT INTO log SELECT id FROM %s WHERE %s", T, p("s")))
				d.exec("INSERT INTO src VALUES (1)")
				assert.Equal(t, want, ids("SELECT id FROM log"), "%s: trigger", name)
				d.exec("DROP TRIGGER tr")
				d.exec("DELETE FROM log")
				d.exec(fmt.Sprintf("CREATE PROCEDURE pr() SELECT id FROM %s WHERE %s", T, p("s")))
				assert.Equal(t, want, ids("CALL pr()"), "%s: procedure", name)
				d.exec("DROP PROCEDURE pr")
			}
		}
	}
}

// TestLikeEscapeArguments: an ESCAPE of more than one character fails as
// in MySQL, with 1210, wherever the LIKE is.
func TestLikeEscapeArguments(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), KEY (s))")
	for _, q := range []string{
		`SELECT 'a' LIKE 'a' ESCAPE 'xy'`,
		`SELECT id FROM t WHERE s LIKE 'a%' ESCAPE '||'`,
		`SELECT * FROM (SELECT id FROM t WHERE s LIKE 'a%' ESCAPE 'xy') x`,
		`SELECT id FROM t WHERE id IN (SELECT id FROM t WHERE s LIKE 'a' ESCAPE 'éé')`,
	} {
		_, err := query(d.e, d.ctx, q)
		require.Error(t, err, q)
		require.Contains(t, err.Error(), "Incorrect arguments to ESCAPE (errno 1210)", q)
	}
}

// TestLikeEscapesInStoredBodies: a trigger's and a procedure's \_ and \%
// are MySQL's (a backslash and the wildcard) when they run, in strict mode
// and out of it, and the statements show the same values.
func TestLikeEscapesInStoredBodies(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), KEY (s))")
	d.exec(`INSERT INTO t VALUES (1, 'a%'), (2, 'ab'), (3, 'a_'), (4, 'a\\%')`)
	d.exec("CREATE TABLE src (k INT)")
	d.exec("CREATE TABLE log (id INT, tag INT)")
	d.exec(`CREATE TRIGGER strict_tr AFTER INSERT ON src FOR EACH ROW INSERT INTO log SELECT id, 1 FROM t WHERE s LIKE 'a\%' OR s LIKE 'a\_' OR s LIKE 'a\\\%'`)
	d.exec("SET sql_mode = ''")
	d.exec(`CREATE TRIGGER lenient_tr AFTER INSERT ON src FOR EACH ROW INSERT INTO log SELECT id, 2 FROM (SELECT id FROM t WHERE s LIKE 'a\%') x`)
	d.exec(`CREATE PROCEDURE pr() SELECT id FROM t WHERE s LIKE 'a\_' OR s = 'a\\%'`)
	d.exec("SET sql_mode = DEFAULT")
	d.exec("INSERT INTO src VALUES (1)")
	rows := d.exec("SELECT id, tag FROM log ORDER BY tag, id")
	require.Equal(t, "[[1 1] [3 1] [4 1] [1 2]]", fmt.Sprint(rows))
	require.Equal(t, "[[3] [4]]", fmt.Sprint(d.exec("CALL pr()")))

	// The statements show the stored text, whose \_ and \% the parser
	// wrapper wrote \\_ and \\% (likeescapes.go): the same values.
	show := fmt.Sprint(d.exec("SHOW CREATE TRIGGER strict_tr"))
	require.Contains(t, show, `s LIKE 'a\\%' OR s LIKE 'a\\_' OR s LIKE 'a\\\\%'`)
	show = fmt.Sprint(d.exec("SHOW CREATE TRIGGER lenient_tr"))
	require.Contains(t, show, `(SELECT id FROM t WHERE s LIKE 'a\\%') x`)
	show = fmt.Sprint(d.exec("SHOW TRIGGERS"))
	require.Contains(t, show, `s LIKE 'a\\%' OR s LIKE 'a\\_'`)
	show = fmt.Sprint(d.exec("SELECT action_statement FROM information_schema.triggers WHERE trigger_name = 'strict_tr'"))
	require.Contains(t, show, `s LIKE 'a\\%' OR s LIKE 'a\\_' OR s LIKE 'a\\\\%'`)
	show = fmt.Sprint(d.exec("SHOW CREATE PROCEDURE pr"))
	require.Contains(t, show, `s LIKE 'a\\_' OR s = 'a\\%'`)
}

// BenchmarkLikeNestedScopes plans and runs a LIKE over an indexed column at
// top level and inside a derived table, an IN subquery and a UNION, over
// 10,000 rows of which 1,111 begin with the prefix.
func BenchmarkLikeNestedScopes(b *testing.B) {
	d := newTestDB(b)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), KEY (s))")
	for i := 0; i < 10_000; i += 1000 {
		var rows []string
		for j := i; j < i+1000; j++ {
			rows = append(rows, fmt.Sprintf("(%d, 'a%d')", j, j))
		}
		d.exec("INSERT INTO t VALUES " + strings.Join(rows, ", "))
	}
	for _, q := range []struct{ name, q string }{
		{"top", `SELECT COUNT(*) FROM t WHERE s LIKE 'a1%'`},
		{"derived", `SELECT COUNT(*) FROM (SELECT id FROM t WHERE s LIKE 'a1%') x`},
		{"in", `SELECT COUNT(*) FROM t WHERE id IN (SELECT id FROM t WHERE s LIKE 'a1%')`},
		{"union", `SELECT COUNT(*) FROM (SELECT id FROM t WHERE s LIKE 'a1%' UNION ALL SELECT id FROM t WHERE s LIKE 'a2%') x`},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rows, err := query(d.e, d.ctx, q.q)
				if err != nil || len(rows) != 1 {
					b.Fatal(q.q, rows, err)
				}
			}
		})
	}
}
