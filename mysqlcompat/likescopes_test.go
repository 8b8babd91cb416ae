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
	// under utf8mb4_0900_bin, which anchors the oracle itself.
	preds := []struct {
		p   string
		bin []int // ids (1-based positions in values) under utf8mb4_0900_bin
	}{
		{`{c} LIKE 'a\%'`, []int{1}},
		{`{c} LIKE 'a\_'`, []int{3}},
		{`{c} LIKE 'a\_%'`, []int{3}},
		{`{c} LIKE 'a|%' ESCAPE '|'`, []int{1}},
		{`{c} LIKE 'a||%' ESCAPE '|'`, []int{10, 11}},
		{`{c} LIKE 'a\\'`, []int{9}},
		{`{c} LIKE 'a|' ESCAPE '|'`, []int{10}},
		{`{c} LIKE 'a%'`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 16}},
		{`{c} LIKE 'a_'`, []int{1, 2, 3, 4, 6, 7, 8, 9, 10, 14, 16}},
		{`{c} LIKE 'a'`, []int{13}},
		{`{c} LIKE 'a '`, []int{14}},
		{`{c} LIKE 'é%'`, []int{17}},
		{`{c} LIKE 'aĀ%'`, []int{6}},
		{`{c} LIKE 'a%b'`, []int{2, 5}},
		{`{c} LIKE NULL`, nil},
		{`{c} NOT LIKE 'a%'`, []int{12, 15, 17, 18, 19, 20}},
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
				if coll == "utf8mb4_0900_bin" && pair[1] == "o" {
					var anchor []string
					for _, id := range pr.bin {
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
