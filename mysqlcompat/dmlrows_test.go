package mysqlcompat_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// TestDMLRowsSpec checks that a single-table UPDATE and DELETE touch
// exactly the rows a SELECT with the same WHERE returns, for the
// predicates of testdata/dml_rows: those whose values the corrections
// change (CAST of strings to integers, PAD SPACE literals, LIKE prefixes,
// literals an index cannot hold exactly). GMS plans such statements with
// fixed batches of its own (install.go), whose index lookups the
// corrections must reach too. Each predicate runs on the engine, as text
// on a connection (its plan cache), and, with placeholders, as a prepared
// statement executed repeatedly (the kept plans of writetemplate.go and
// writedirect.go); each write runs in a transaction rolled back.
//
// Commands: "exec" runs statements; "rows" takes one predicate a line
// over table t (columns id and mark, an INT 0 in every row), which may end
// in ORDER BY and LIMIT, and prints the ids SELECT returns, sorted; "prepared" takes lines "predicate | arg | arg ...",
// the predicate with one placeholder, an execution for each argument (an
// integer, a 'string', a number with a point, a float64, or ending in m, a
// decimal). A write that
// touches other rows than the SELECT prints a line saying so and fails
// the test.
func TestDMLRowsSpec(t *testing.T) {
	datadriven.Walk(t, "testdata/dml_rows", func(t *testing.T, path string) {
		d := newTestDB(t)
		ctx := context.Background()
		e := d.s.OpenEngine()
		c := e.NewConn()
		t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
		// Out of strict mode, where an UPDATE whose WHERE warns
		// (CAST('3.9z' AS SIGNED)) runs, as in MySQL, rather than fails.
		_, err := query(d.e, d.ctx.WithQuery("SET sql_mode = ''"), "SET sql_mode = ''")
		require.NoError(t, err)
		connExec(t, c, "SET sql_mode = ''")
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "exec":
				out := specExec(t, d, td)
				require.NoError(t, c.UseDatabase(ctx, "mydb"))
				return out
			case "rows":
				var b strings.Builder
				for _, pred := range strings.Split(strings.TrimSpace(td.Input), "\n") {
					b.WriteString(dmlRows(t, d, c, pred, nil))
				}
				return b.String()
			case "prepared":
				var b strings.Builder
				for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
					parts := strings.Split(line, "|")
					pred := strings.TrimSpace(parts[0])
					for _, a := range parts[1:] {
						b.WriteString(dmlRows(t, d, c, pred, parseArg(t, strings.TrimSpace(a))))
					}
				}
				return b.String()
			default:
				td.Fatalf(t, "unknown command %q", td.Cmd)
				return ""
			}
		})
	})
}

// parseArg reads a prepared statement's argument: 'text', a number
// ending in m (a decimal.Decimal), a number with a point (float64) or an
// integer.
func parseArg(t *testing.T, s string) []sqlstore.Arg {
	var v any
	switch {
	case strings.HasPrefix(s, "'"):
		v = strings.TrimSuffix(strings.TrimPrefix(s, "'"), "'")
	case strings.HasSuffix(s, "m"):
		d, err := decimal.NewFromString(strings.TrimSuffix(s, "m"))
		require.NoError(t, err, s)
		v = d
	case strings.Contains(s, "."):
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		v = f
	default:
		i, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, s)
		v = i
	}
	return []sqlstore.Arg{{Ordinal: 1, Value: v}}
}

// dmlRows prints the ids SELECT ... WHERE pred returns, and a line for
// each UPDATE or DELETE with that WHERE that touched other rows, on the
// engine (without args) and on connection c.
func dmlRows(t *testing.T, d *testDB, c *sqlstore.Conn, pred string, args []sqlstore.Arg) string {
	t.Helper()
	label := pred
	if args != nil {
		label = fmt.Sprintf("%s [%T(%#v)]", pred, args[0].Value, args[0].Value)
		if d, ok := args[0].Value.(decimal.Decimal); ok {
			label = fmt.Sprintf("%s [%T(%s)]", pred, d, d)
		}
	}
	sel := "SELECT id FROM t WHERE " + pred
	upd := "UPDATE t SET mark = mark + 1 WHERE " + pred
	del := "DELETE FROM t WHERE " + pred
	want, err := connIDs(c, sel, args)
	if err != nil {
		return fmt.Sprintf("%s: %v\n", label, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", label, strings.Join(want, " "))
	all, err := connIDs(c, "SELECT id FROM t ORDER BY id", nil)
	require.NoError(t, err)
	mismatch := func(path string, got []string) {
		if !slices.Equal(got, want) {
			fmt.Fprintf(&b, "  %s touched %s\n", path, strings.Join(got, " "))
			t.Errorf("%s: %s touched [%s], SELECT returns [%s]", label, path, strings.Join(got, " "), strings.Join(want, " "))
		}
	}
	// On the engine, as GMS runs a statement.
	if args == nil {
		if got := engineSelect(t, d, sel); !slices.Equal(got, want) {
			fmt.Fprintf(&b, "  engine SELECT returned %s\n", strings.Join(got, " "))
			t.Errorf("%s: engine SELECT returns [%s], connection [%s]", label, strings.Join(got, " "), strings.Join(want, " "))
		}
		engineSelect(t, d, "BEGIN")
		engineSelect(t, d, upd)
		mismatch("engine UPDATE", engineSelect(t, d, "SELECT id FROM t WHERE mark <> 0"))
		engineSelect(t, d, "ROLLBACK")
		engineSelect(t, d, "BEGIN")
		engineSelect(t, d, del)
		mismatch("engine DELETE", missing(all, engineSelect(t, d, "SELECT id FROM t")))
		engineSelect(t, d, "ROLLBACK")
	}
	// On the connection: three runs each, so that plans are kept and
	// reused.
	ctx := context.Background()
	run := func(q string, stmt *sqlstore.Stmt) error {
		if stmt != nil {
			_, err := stmt.Exec(ctx, args...)
			return err
		}
		_, err := c.Exec(ctx, q, args...)
		return err
	}
	for _, prepared := range []bool{false, true} {
		var us, ds *sqlstore.Stmt
		kind := "text"
		if prepared {
			kind = "prepared"
			var err error
			us, err = c.Prepare(ctx, upd)
			require.NoError(t, err, upd)
			ds, err = c.Prepare(ctx, del)
			require.NoError(t, err, del)
		}
		for i := 1; i <= 3; i++ {
			connExec(t, c, "BEGIN")
			require.NoError(t, run(upd, us), upd)
			got, err := connIDs(c, "SELECT id FROM t WHERE mark <> 0 ORDER BY id", nil)
			require.NoError(t, err)
			mismatch(fmt.Sprintf("%s UPDATE (run %d)", kind, i), got)
			connExec(t, c, "ROLLBACK")
			connExec(t, c, "BEGIN")
			require.NoError(t, run(del, ds), del)
			got, err = connIDs(c, "SELECT id FROM t ORDER BY id", nil)
			require.NoError(t, err)
			mismatch(fmt.Sprintf("%s DELETE (run %d)", kind, i), missing(all, got))
			connExec(t, c, "ROLLBACK")
		}
		if prepared {
			require.NoError(t, us.Close())
			require.NoError(t, ds.Close())
		}
	}
	return b.String()
}

func connExec(t *testing.T, c *sqlstore.Conn, q string) {
	t.Helper()
	_, err := c.Exec(context.Background(), q)
	require.NoError(t, err, q)
}

// connIDs returns the first column of q's rows on c, printed.
func connIDs(c *sqlstore.Conn, q string, args []sqlstore.Arg) ([]string, error) {
	rows, err := c.Query(context.Background(), q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := []string{}
	for {
		r, err := rows.Next()
		if err == io.EOF {
			sortIDs(ids)
			return ids, nil
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, fmt.Sprint(r[0]))
	}
}

// engineSelect runs q on the engine, as GMS runs it, and returns the
// first column of its rows, printed and sorted.
func engineSelect(t *testing.T, d *testDB, q string) []string {
	t.Helper()
	rows, err := query(d.e, d.ctx.WithQuery(q), q)
	require.NoError(t, err, q)
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, fmt.Sprint(r[0]))
	}
	sortIDs(ids)
	return ids
}

// missing returns the ids of all that are not in left.
func missing(all, left []string) []string {
	out := []string{}
	for _, id := range all {
		if !slices.Contains(left, id) {
			out = append(out, id)
		}
	}
	return out
}

// sortIDs sorts printed integers by value.
func sortIDs(ids []string) {
	slices.SortFunc(ids, func(a, b string) int {
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		return cmp.Compare(x, y)
	})
}
