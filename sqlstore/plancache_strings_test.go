package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/stretchr/testify/require"
)

// stringColumnKinds are columns whose values compare and convert by
// collation: PAD SPACE and NO PAD, case-insensitive and binary, another
// character set, lengths short enough to truncate.
var stringColumnKinds = []column{
	{def: "CHAR(4) COLLATE utf8mb4_0900_ai_ci", lits: []string{"'ab'", "'AB  '", "'abcd'", "'abcde'", "'é'"}},
	{def: "VARCHAR(6) COLLATE utf8mb4_general_ci", lits: []string{"'abc'", "'ABC '", "'abc   x'", "''", "'  '"}},
	{def: "VARCHAR(6) COLLATE utf8mb4_bin NOT NULL", lits: []string{"'Abc'", "'abc'", "'abcdefg'", "NULL"}},
	{def: "VARCHAR(8) CHARACTER SET latin1", lits: []string{"'caf\u00e9'", "'\u20ac'", "'x'", "'123456789'"}},
	{def: "BINARY(3)", lits: []string{"'ab'", "'abc'", "'abcd'", "''"}},
}

// setPieces are values an UPDATE's SET assigns that are not plain strings,
// or strings the plan cache must leave in the text.
var setPieces = []string{
	"'x' COLLATE utf8mb4_bin", "_latin1'x'", "N'n'", "'a' 'b'", "CONCAT('a', 'b')", "c0", "`c0`", "'a\\'b'",
	"DEFAULT", "NULL", "7", "-3", "1.5", "'  7 '", "'12abc'", "'2024-01-02'", "'" + strings.Repeat("z", 300) + "'",
}

// TestPlanCacheUpdateStringsSameResults runs random text UPDATEs by key
// whose SET assigns literals (plain strings among them, which the plan
// cache makes arguments) on a connection with the plan cache and one with
// plan reuse off, each in its own database: results, errors, warnings and
// the rows stored are the same. Tables mix numeric, temporal and string
// columns of several collations; statements mix strict and non-strict
// sql_mode, the connection's character set, strings too long for the
// column, strings for numbers, and WHERE clauses whose strings stay in the
// text (a string key, a string column, LIKE).
func TestPlanCacheUpdateStringsSameResults(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	fast, ref := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = fast.Close(); _ = ref.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, fast.UseDatabase(ctx, "fa"))
	require.NoError(t, ref.UseDatabase(ctx, "rb"))
	_, err := ref.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	r := rand.New(rand.NewPCG(32, 7))
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	total, failed, warned := 0, 0, 0
	reused := fast.sess.plansReused.Load()
	for round := range rounds {
		cols := randomColumns(r)
		for range 2 {
			k := stringColumnKinds[r.IntN(len(stringColumnKinds))]
			cols = append(cols, column{name: fmt.Sprintf("c%d", len(cols)-1), def: k.def, lits: k.lits, good: 1})
		}
		mode := []string{"", "STRICT_TRANS_TABLES", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION", "PAD_CHAR_TO_FULL_LENGTH"}[r.IntN(4)]
		names := []string{"utf8mb4", "latin1", "utf8mb4 COLLATE utf8mb4_bin"}[r.IntN(3)]
		setup := []string{"DROP TABLE IF EXISTS t", createTable(r, cols), "SET sql_mode = ''", "SET NAMES " + names}
		for id := 1; id <= 8; id++ {
			setup = append(setup, fmt.Sprintf("INSERT IGNORE INTO t (id) VALUES (%d)", id))
		}
		setup = append(setup, fmt.Sprintf("SET sql_mode = '%s'", mode))
		for _, q := range setup {
			for _, c := range []*Conn{fast, ref} {
				_, err := c.Exec(ctx, q)
				require.NoError(t, err, q)
			}
		}
		// A few shapes per round, so that texts repeat with other values.
		shapes := make([][]column, 3)
		for i := range shapes {
			for range 1 + r.IntN(3) {
				shapes[i] = append(shapes[i], cols[1+r.IntN(len(cols)-1)])
			}
		}
		for range 30 {
			q := randomUpdate(r, cols, shapes[r.IntN(len(shapes))])
			total++
			got := writeOutcome(t, fast, q)
			want := writeOutcome(t, ref, q)
			require.Equal(t, want, got, "round %d (sql_mode '%s', names %s), %s\n%s", round, mode, names, setup[1], q)
			if got.Err != "" {
				failed++
			} else if len(got.Warnings) > 0 {
				warned++
			}
		}
		require.Equal(t, tableRows(t, ref), tableRows(t, fast), "round %d: rows of %s", round, setup[1])
	}
	hits := fast.sess.plansReused.Load() - reused
	t.Logf("%d statements: %d run on kept plans, %d failed, %d with warnings", total, hits, failed, warned)
	require.Greater(t, hits, int64(total/10), "too few statements ran on kept plans")
	require.Greater(t, failed, total/20, "too few statements failed")
	require.Greater(t, warned, total/20, "too few statements warned")
}

// writeOutcome is execOutcome without the warnings of a statement that
// failed (see selectOutcome).
func writeOutcome(t *testing.T, c *Conn, q string) outcome {
	o := execOutcome(t, c, q)
	if o.Err != "" {
		o.Warnings = nil
	}
	return o
}

// randomUpdate returns an UPDATE of t assigning the columns set, mostly
// by key (WHERE id = n), mostly literals of the column's kind.
func randomUpdate(r *rand.Rand, cols, set []column) string {
	var b strings.Builder
	b.WriteString("UPDATE t SET ")
	for i, c := range set {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s = ", c.name)
		switch n := r.IntN(10); {
		case n == 0:
			b.WriteString(setPieces[r.IntN(len(setPieces))])
		case n == 1:
			b.WriteString(literalPieces[r.IntN(len(literalPieces))])
		case n == 2:
			o := cols[r.IntN(len(cols))]
			b.WriteString(o.lits[r.IntN(len(o.lits))])
		default:
			b.WriteString(c.lits[r.IntN(len(c.lits))])
		}
	}
	s := cols[len(cols)-1]
	switch n := r.IntN(12); {
	case n == 0:
		fmt.Fprintf(&b, " WHERE id = '%d'", 1+r.IntN(9))
	case n == 1:
		fmt.Fprintf(&b, " WHERE %s = %s", s.name, s.lits[r.IntN(len(s.lits))])
	case n == 2:
		fmt.Fprintf(&b, " WHERE %s LIKE 'a%%'", s.name)
	case n == 3:
		fmt.Fprintf(&b, " WHERE id BETWEEN %d AND %d", 1+r.IntN(4), 4+r.IntN(5))
	case n == 4:
		fmt.Fprintf(&b, " WHERE id = %d AND %s = 'ab'", 1+r.IntN(9), s.name)
	default:
		fmt.Fprintf(&b, " WHERE id = %d", 1+r.IntN(9))
	}
	return b.String()
}

// TestPlanCacheUpdateStringsHit: a text UPDATE by key that assigns a
// different string at each execution runs on one kept template, under one
// entry of the plan cache; a string in its WHERE clause compared with a
// column of another type than a character column stays in the text, an
// entry per text.
func TestPlanCacheUpdateStringsHit(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, k INT, c CHAR(120), pad VARCHAR(60))",
		"INSERT INTO t VALUES (1, 1, 'a', 'b'), (2, 2, 'c', 'd')",
	} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	run := func(q string) {
		t.Helper()
		res, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
		require.Equal(t, int64(1), res.RowsAffected, q)
	}
	run("UPDATE t SET c = 'warm' WHERE id = 1")
	entries := PlanCacheLen(c)
	before := c.sess.plansReused.Load()
	const n = 20
	for i := range n {
		run(fmt.Sprintf("UPDATE t SET c = 'value %d' WHERE id = %d", i, 1+i%2))
		run(fmt.Sprintf("UPDATE t SET c = 'value %d', pad = 'it''s %d' WHERE id = %d", i, i, 1+i%2))
	}
	// The second shape learns its template at its first executions.
	require.GreaterOrEqual(t, c.sess.plansReused.Load()-before, int64(2*n-maxLearn))
	require.LessOrEqual(t, PlanCacheLen(c), entries+2)
	r := connRows(t, c, "SELECT c, pad FROM t WHERE id = 2")
	require.Equal(t, [][]any{{fmt.Sprintf("value %d", n-1), fmt.Sprintf("it's %d", n-1)}}, r)

	// A string compared in WHERE with a character column is an argument
	// too (stringwrites_test.go): the texts share one entry. Compared with
	// a column of another type, it is no argument once that is seen: each
	// text is its own.
	entries = PlanCacheLen(c)
	for i := range 5 {
		_, err := c.Exec(ctx, fmt.Sprintf("UPDATE t SET k = 3 WHERE c = 'value %d'", i))
		require.NoError(t, err)
	}
	require.Equal(t, entries+1, PlanCacheLen(c))
	entries = PlanCacheLen(c)
	for i := range 5 {
		_, err := c.Exec(ctx, fmt.Sprintf("UPDATE t SET c = 'x' WHERE k = '%d'", i))
		require.NoError(t, err)
	}
	require.Equal(t, entries+1+4, PlanCacheLen(c))
}

// keyLiterals are strings compared with character keys: case and accent
// variants, trailing and leading spaces (PAD SPACE and NO PAD), strings
// longer than the column, characters outside latin1, and literals the
// plan cache leaves in the text.
var keyLiterals = []string{
	"'ab'", "'AB'", "'ab  '", "'ab\t'", "' ab'", "''", "'abcdefghijklmnopqrstuvwxyzabcdefghijklmnop'", "'ab" + strings.Repeat(" ", 40) + "'",
	"'é'", "'E'", "'e'", "'\u20ac'", "'it''s'", "'a\\\\b'", "_latin1'ab'", "'a' 'b'", "N'ab'", "'ab' COLLATE utf8mb4_bin",
	"'5'", "'5abc'", "'x'", "5", "NULL",
}

// keyArgs are string arguments of prepared equalities on character keys.
var keyArgs = []string{"ab", "AB", "ab  ", "ab\t", " ab", "", "é", "E", "\u20ac", "it's", "a\\b", "5", strings.Repeat("ab", 30)}

// keyShapes are SELECTs by a key; %[1]s is a string column with an index,
// %[2]s a literal, %[3]s another.
var keyShapes = []string{
	"SELECT id FROM t WHERE %[1]s = %[2]s ORDER BY id",
	"SELECT id, %[1]s FROM t WHERE %[1]s = %[2]s",
	"SELECT COUNT(*), MAX(id) FROM t WHERE %[1]s = %[2]s",
	"SELECT id FROM t WHERE %[2]s = %[1]s ORDER BY id DESC",
	"SELECT id FROM t WHERE %[1]s IN (%[2]s, %[3]s) ORDER BY id",
	"SELECT id FROM t WHERE %[1]s BETWEEN %[2]s AND %[3]s ORDER BY id",
	"SELECT id FROM t WHERE %[1]s < %[2]s ORDER BY id",
	"SELECT id FROM t WHERE %[1]s LIKE %[2]s ORDER BY id",
	"SELECT id FROM t WHERE k = %[2]s ORDER BY id",
	"SELECT id FROM t WHERE id = %[2]s",
	"SELECT id, %[3]s FROM t WHERE %[1]s = %[2]s ORDER BY id",
	"SELECT %[1]s FROM t WHERE %[1]s = %[2]s AND k = 1",
}

// TestPlanCacheSelectStringsSameResults runs text SELECTs comparing
// columns with literals, strings among them, on a connection with the
// plan cache (which makes a string an argument of a kept template where
// the predicate is one equality on a character column) and one with plan
// reuse off: rows, errors and warnings are the same, under several
// collations of the columns and of the connection, changed between
// executions.
func TestPlanCacheSelectStringsSameResults(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	fast, ref := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = fast.Close(); _ = ref.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, fast.UseDatabase(ctx, "fs"))
	require.NoError(t, ref.UseDatabase(ctx, "rs"))
	_, err := ref.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	r := rand.New(rand.NewPCG(32, 9))
	rounds := 30
	if testing.Short() {
		rounds = 6
	}
	kinds := append([]string{"VARCHAR(12) COLLATE utf8mb4_0900_bin", "TEXT"}, func() (out []string) {
		for _, k := range stringColumnKinds {
			out = append(out, k.def)
		}
		return out
	}()...)
	exec := func(q string) {
		for _, c := range []*Conn{fast, ref} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
	}
	total, warned := 0, 0
	reused := fast.sess.plansReused.Load()
	for round := range rounds {
		kind := kinds[r.IntN(len(kinds))]
		key := "s1"
		if strings.HasPrefix(kind, "TEXT") {
			key = "s1(8)"
		}
		ddl := fmt.Sprintf("CREATE TABLE t (id INT PRIMARY KEY, k INT, s1 %s, s2 VARCHAR(10), KEY k_1 (k), %s s_1 (%s))",
			strings.Replace(kind, " NOT NULL", "", 1), []string{"KEY", "UNIQUE KEY"}[r.IntN(2)], key)
		exec("DROP TABLE IF EXISTS t")
		exec(ddl)
		exec("SET sql_mode = ''")
		exec("SET NAMES utf8mb4")
		for id := 1; id <= 24; id++ {
			lit := keyLiterals[r.IntN(len(keyLiterals))]
			q := fmt.Sprintf("INSERT IGNORE INTO t VALUES (%d, %d, %s, %s)", id, id%3, lit, lit)
			require.Equal(t, execOutcome(t, ref, q), execOutcome(t, fast, q), q)
		}
		mode := []string{"", "STRICT_TRANS_TABLES", "PAD_CHAR_TO_FULL_LENGTH"}[r.IntN(3)]
		exec(fmt.Sprintf("SET sql_mode = '%s'", mode))
		for half := range 2 {
			names := []string{"utf8mb4", "latin1", "utf8mb4 COLLATE utf8mb4_bin", "utf8mb4 COLLATE utf8mb4_general_ci"}[r.IntN(4)]
			exec("SET NAMES " + names)
			shapes := []string{keyShapes[r.IntN(len(keyShapes))], keyShapes[r.IntN(len(keyShapes))], keyShapes[0]}
			for range 30 {
				col := []string{"s1", "s1", "s2"}[r.IntN(3)]
				q := fmt.Sprintf(shapes[r.IntN(len(shapes))], col, keyLiterals[r.IntN(len(keyLiterals))], keyLiterals[r.IntN(len(keyLiterals))])
				total++
				got, want := selectOutcome(fast, q), selectOutcome(ref, q)
				require.Equal(t, want, got, "round %d (%s, sql_mode '%s', names %s, half %d)\n%s", round, ddl, mode, names, half, q)
				for _, w := range got.Warnings {
					if w[0] == "warning" {
						warned++
						break
					}
				}
				// The same equality prepared, with a string argument.
				arg := keyArgs[r.IntN(len(keyArgs))]
				pq := fmt.Sprintf("SELECT id, k FROM t WHERE %s = ? ORDER BY id", col)
				got, want = selectOutcome(fast, pq, Arg{Ordinal: 1, Value: arg}), selectOutcome(ref, pq, Arg{Ordinal: 1, Value: arg})
				require.Equal(t, want, got, "round %d (%s, sql_mode '%s', names %s, half %d)\n%s with %q", round, ddl, mode, names, half, pq, arg)
				total++
			}
		}
	}
	hits := fast.sess.plansReused.Load() - reused
	t.Logf("%d statements: %d run on kept plans, %d with warnings", total, hits, warned)
	require.Greater(t, hits, int64(total/10), "too few statements ran on kept plans")
	require.Greater(t, warned, total/50, "too few statements warned")
}

// selectOutcome is what a query returned: its rows or error, and the
// warnings of a query that ran (after an error, SHOW WARNINGS of a
// statement run on a kept plan and of one planned differ, with or without
// string arguments).
func selectOutcome(c *Conn, q string, args ...Arg) outcome {
	var o outcome
	rows, err := c.Query(context.Background(), q, args...)
	if err == nil {
		var out [][]any
		for {
			vals, err := rows.Next()
			if err != nil {
				if err.Error() != "EOF" {
					o.Err = err.Error()
				}
				break
			}
			out = append(out, append([]any(nil), vals...))
		}
		if err := rows.Close(); err != nil && o.Err == "" {
			o.Err = err.Error()
		}
		o.Result.RowsAffected = int64(len(out))
		o.Warnings = append(o.Warnings, out...)
	} else {
		o.Err = err.Error()
	}
	if o.Err != "" {
		return o
	}
	w, err := c.Query(context.Background(), "SHOW WARNINGS")
	if err == nil {
		for {
			vals, err := w.Next()
			if err != nil {
				break
			}
			o.Warnings = append(o.Warnings, append([]any{"warning"}, vals...))
		}
		_ = w.Close()
	}
	return o
}

// TestPlanCacheSelectStringsHit: a text SELECT by one equality on a
// character key runs on one kept template whatever the string; a LIKE, a
// string compared with an integer column, and a string ending in a space
// do not.
func TestPlanCacheSelectStringsHit(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, k INT, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, UNIQUE KEY name_1 (name), KEY k_1 (k))",
		"INSERT INTO t VALUES (1, 1, 'bob'), (2, 2, 'Alice'), (3, 3, 'carol')",
	} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	reused := func(q string) int64 {
		t.Helper()
		before := c.sess.plansReused.Load()
		connRows(t, c, q)
		return c.sess.plansReused.Load() - before
	}
	for _, q := range []string{"SELECT id FROM t WHERE name = 'warm'", "SELECT id FROM t WHERE name = 'up'"} {
		connRows(t, c, q)
	}
	entries := PlanCacheLen(c)
	for i, name := range []string{"bob", "ALICE", "carol", "dave", "it's", "é", ""} {
		q := fmt.Sprintf("SELECT id FROM t WHERE name = '%s'", strings.ReplaceAll(name, "'", "''"))
		require.Equal(t, int64(1), reused(q), "%d: %s", i, q)
	}
	require.Equal(t, [][]any{{int64(2)}}, connRows(t, c, "SELECT id FROM t WHERE name = 'alice'"))
	require.Equal(t, entries, PlanCacheLen(c))

	for _, q := range []string{
		"SELECT id FROM t WHERE name LIKE 'b%'",
		"SELECT id FROM t WHERE name = 'bob '",
		"SELECT id FROM t WHERE k = '2'",
		"SELECT id FROM t WHERE name = 'bob' COLLATE utf8mb4_bin",
		"SELECT id FROM t WHERE name IN ('bob', 'carol')",
	} {
		for range 3 {
			require.Zero(t, reused(q), q)
		}
	}
}

// TestConvertKey: convertKey answers as the promoted type's Convert for
// strings of every kind, into character keys of several character sets.
func TestConvertKey(t *testing.T) {
	ctx := sql.NewEmptyContext()
	for _, typ := range []sql.Type{
		types.MustCreateString(sqltypes.VarChar, 4, sql.Collation_utf8mb4_0900_bin),
		types.MustCreateString(sqltypes.Char, 2, sql.Collation_utf8mb4_general_ci),
		types.MustCreateString(sqltypes.VarChar, 3, sql.Collation_latin1_swedish_ci),
		types.CreateText(sql.Collation_utf8mb4_0900_ai_ci),
	} {
		typ := typ.Promote()
		for _, s := range append([]string{"", "a", "\xff", "a\x80b", "caf\u00e9", "\u20ac", strings.Repeat("x", 300), "\x00"}, keyArgs...) {
			want, _, err := typ.Convert(ctx, s)
			got, ok := convertKey(ctx, typ, s)
			require.Equal(t, err == nil && want != nil, ok, "%s: %q", typ, s)
			if ok {
				require.Equal(t, want, got, "%s: %q", typ, s)
			}
		}
	}
}
