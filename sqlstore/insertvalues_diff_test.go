package sqlstore

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInsertValuesSameResults runs random multi-row INSERTs into random
// tables on two connections, one with the VALUES fast path and the
// duplicate-key checks read in one batch (insertprefetch.go) and one that
// parses every statement (strata_plan_reuse off) and reads each key on its
// own, each in its own
// database: results (affected rows, insert IDs, warning counts), errors,
// warnings and the rows stored are the same. Rounds run strict and not,
// with duplicate keys, NULL into NOT NULL columns, values out of range or
// too long, strings for numbers and dates, and literals the fast path
// leaves to the parser.
func TestInsertValuesSameResults(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	fast, ref := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = fast.Close(); _ = ref.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, fast.UseDatabase(ctx, "fa"))
	require.NoError(t, ref.UseDatabase(ctx, "rb"))
	_, err := ref.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)
	ref.sess.noPrefetch = true // each duplicate-key check reads on its own

	r := rand.New(rand.NewPCG(32, 1))
	read, total, failed, warned := 0, 0, 0, 0
	rounds := 80
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		cols := randomColumns(r)
		mode := []string{"", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"}[r.IntN(4)]
		ddl := []string{"DROP TABLE IF EXISTS t", createTable(r, cols), fmt.Sprintf("SET sql_mode = '%s'", mode)}
		for _, q := range ddl {
			for _, c := range []*Conn{fast, ref} {
				_, err := c.Exec(ctx, q)
				require.NoError(t, err, q)
			}
		}
		for range 25 {
			q := randomInsert(r, cols)
			total++
			if checkInsertValues(t, fast.newContext(ctx, q), fast.eng.gms.Parser, q) {
				read++
			}
			got := execOutcome(t, fast, q)
			want := execOutcome(t, ref, q)
			require.Equal(t, want, got, "round %d (sql_mode '%s'), %s\n%s", round, mode, ddl[1], q)
			if got.Err != "" {
				failed++
			} else if len(got.Warnings) > 0 {
				warned++
			}
		}
		got := tableRows(t, fast)
		want := tableRows(t, ref)
		require.Equal(t, want, got, "round %d: rows of %s", round, ddl[1])
	}
	t.Logf("%d statements: %d read by the fast path, %d failed, %d with warnings", total, read, failed, warned)
	require.Greater(t, read, total/3, "the fast path read too few statements")
	require.Greater(t, failed, total/10, "too few statements failed")
	require.Greater(t, warned, total/20, "too few statements warned")
}

// column is one column of a random table: its definition and the literals
// its values are drawn from.
type column struct {
	name, def string
	lits      []string // the first good of them fit the column
	good      int
}

var columnKinds = []column{
	{def: "TINYINT", good: 4, lits: []string{"0", "1", "-128", "127", "128", "-129", "'5'", "'x'", "1.5", "2.5", "-0.5", "'12abc'", "TRUE", "1e2"}},
	{def: "TINYINT UNSIGNED NOT NULL", good: 2, lits: []string{"0", "255", "256", "-1", "'7'", "NULL", "1.49"}},
	{def: "SMALLINT DEFAULT 7", good: 3, lits: []string{"32767", "32768", "-32768", "1", "NULL"}},
	{def: "INT NOT NULL", good: 2, lits: []string{"1", "2147483647", "2147483648", "-2147483648", "NULL", "''", "' 3 '", "'3.7'"}},
	{def: "BIGINT", good: 3, lits: []string{"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "1", "'9'"}},
	{def: "BIGINT UNSIGNED", good: 1, lits: []string{"18446744073709551615", "18446744073709551616", "-1", "0", "9223372036854775808"}},
	{def: "DECIMAL(5,2)", good: 2, lits: []string{"1.005", "999.99", "1000", "-999.995", "'abc'", "0.1", "1e2", "'1.5'", "123.456"}},
	{def: "DOUBLE", good: 3, lits: []string{"1.5", "1e308", "-2.5e-7", "'nan'", "'1e3'", "0", "18446744073709551616"}},
	{def: "FLOAT", good: 1, lits: []string{"3.4e38", "3.5e38", "1.25", "'x'"}},
	{def: "VARCHAR(5)", good: 4, lits: []string{"'abc'", "'abcdef'", "''", "'é'", "'ééééé'", "'a\\'b'", "12", "123456", "1.5", "NULL", "'\\n\\t'"}},
	{def: "CHAR(3) NOT NULL DEFAULT 'z'", good: 1, lits: []string{"'ab'", "'abcd'", "'ab '", "NULL", "''", "7"}},
	{def: "TEXT", good: 2, lits: []string{"'some text'", "''", "NULL", "'it''s'"}},
	{def: "VARBINARY(4)", good: 1, lits: []string{"'ab'", "'abcde'", "'\\0\\0'", "3"}},
	{def: "DATE", good: 2, lits: []string{"'2024-01-02'", "'2024-02-30'", "'x'", "20240102", "'0000-00-00'", "NULL"}},
	{def: "DATETIME", good: 2, lits: []string{"'2024-01-02 03:04:05'", "'2024-01-02'", "'bad'", "20240102030405"}},
	{def: "BOOL", good: 3, lits: []string{"TRUE", "FALSE", "2", "'1'"}},
	{def: "ENUM('a','b')", good: 2, lits: []string{"'a'", "'b'", "'c'", "1", "3", "''"}},
	{def: "YEAR", good: 3, lits: []string{"2024", "'1999'", "99", "3000"}},
}

// randomColumns returns a primary key id and three to five other columns.
func randomColumns(r *rand.Rand) []column {
	cols := []column{{name: "id", good: 0, lits: []string{"1", "2", "3", "4", "5", "6", "7", "8", "NULL", "0", "-1", "'9'"}}}
	for i := range 3 + r.IntN(3) {
		k := columnKinds[r.IntN(len(columnKinds))]
		cols = append(cols, column{name: fmt.Sprintf("c%d", i), def: k.def, lits: k.lits, good: k.good})
	}
	return cols
}

func createTable(r *rand.Rand, cols []column) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE t (id INT PRIMARY KEY")
	if r.IntN(2) == 0 {
		b.WriteString(" AUTO_INCREMENT")
	}
	for _, c := range cols[1:] {
		fmt.Fprintf(&b, ", %s %s", c.name, c.def)
	}
	if r.IntN(4) == 0 && !strings.Contains(cols[1].def, "TEXT") {
		fmt.Fprintf(&b, ", UNIQUE KEY u (%s)", cols[1].name)
	}
	b.WriteString(")")
	return b.String()
}

// randomInsert returns an INSERT of two to six rows into t, with all
// columns or some of them named, sometimes IGNORE, with a literal now and
// then from the other columns' or the fast path's refusals.
func randomInsert(r *rand.Rand, cols []column) string {
	named := cols
	clean := r.IntN(2) == 0 // values that fit, keys mostly new
	var b strings.Builder
	b.WriteString("INSERT ")
	if r.IntN(5) == 0 {
		b.WriteString("IGNORE ")
	}
	b.WriteString("INTO t")
	switch r.IntN(3) {
	case 0: // all columns, no list
	case 1:
		named = nil
		for _, c := range cols {
			if c.name == "id" || r.IntN(3) > 0 || clean && strings.Contains(c.def, "NOT NULL") {
				named = append(named, c)
			}
		}
		fallthrough
	default:
		names := make([]string, len(named))
		for i, c := range named {
			names[i] = c.name
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(names, ", "))
	}
	b.WriteString(" VALUES ")
	for i := range 2 + r.IntN(5) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, c := range named {
			if j > 0 {
				b.WriteByte(',')
			}
			switch n := r.IntN(20); {
			case clean && c.name == "id":
				fmt.Fprint(&b, 10+r.IntN(100000))
			case clean:
				b.WriteString(c.lits[r.IntN(c.good)])
			case n == 0:
				b.WriteString(otherPieces[r.IntN(len(otherPieces))])
			case n == 1:
				b.WriteString(literalPieces[r.IntN(len(literalPieces))])
			case c.name == "id" && n < 12:
				fmt.Fprint(&b, 10+r.IntN(200)) // mostly new keys
			default:
				b.WriteString(c.lits[r.IntN(len(c.lits))])
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// outcome is what an INSERT did, as a client sees it.
type outcome struct {
	Result   Result
	Err      string
	Warnings [][]any
}

func execOutcome(t *testing.T, c *Conn, q string) outcome {
	t.Helper()
	var o outcome
	res, err := c.Exec(context.Background(), q)
	if err != nil {
		o.Err = err.Error()
	} else {
		o.Result = res
	}
	o.Warnings = connRows(t, c, "SHOW WARNINGS")
	return o
}

func tableRows(t *testing.T, c *Conn) [][]any {
	return connRows(t, c, "SELECT * FROM t ORDER BY id")
}

func connRows(t *testing.T, c *Conn, q string) [][]any {
	t.Helper()
	rows, err := c.Query(context.Background(), q)
	require.NoError(t, err, q)
	var out [][]any
	for {
		vals, err := rows.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, q)
		row := append([]any(nil), vals...)
		for i, v := range row {
			if b, ok := v.([]byte); ok {
				row[i] = append([]byte(nil), b...) // the Rows' buffer
			}
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Close())
	return out
}
