package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/sqlstore"
)

// TestStrictWritesSpec runs testdata/strict_writes on one connection in
// process: data-changing statements whose values warn, under strict mode,
// out of it and with IGNORE. "run" runs each line once as text. "kept"
// runs each line four times, as text twice and as one prepared statement
// twice, so the second runs take the plans the plan cache keeps, and
// prints the outcome once when all four agree (a line "stmt ;; undo" runs
// undo, unprinted, after each run, so a successful write can be repeated).
func TestStrictWritesSpec(t *testing.T) {
	runWritesSpec(t, "testdata/strict_writes")
}

// runWritesSpec runs the spec at path on one connection: "run" runs each
// line once as text, "kept" four times (text twice, one prepared statement
// twice), printing the outcome once when the runs agree; "stmt ;; undo"
// runs undo, unprinted, after each run.
func runWritesSpec(t *testing.T, path string) {
	c := openConn(t)
	ctx := context.Background()
	datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
		var out strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			q, undo, _ := strings.Cut(line, ";;")
			q, undo = strings.TrimSpace(q), strings.TrimSpace(undo)
			fmt.Fprintf(&out, "> %s\n", q)
			runs := 1
			switch td.Cmd {
			case "run":
			case "kept":
				runs = 4
			default:
				td.Fatalf(t, "unknown command %q", td.Cmd)
			}
			var first string
			for i := range runs {
				got := strictRun(t, c, q, i >= 2)
				if undo != "" {
					if _, err := c.Exec(ctx, undo); err != nil {
						t.Fatalf("%s: %v", undo, err)
					}
				}
				if i == 0 {
					first = got
				} else if got != first {
					fmt.Fprintf(&out, "run %d differs from the first:\n%s", i+1, got)
				}
			}
			out.WriteString(first)
		}
		return out.String()
	})
}

// strictRun runs one statement, as text or prepared, and returns its
// outcome: the rows of a query, or a write's counts and its warnings, or
// the error.
func strictRun(t *testing.T, c *sqlstore.Conn, q string, prepared bool) string {
	t.Helper()
	ctx := context.Background()
	var out strings.Builder
	write := !strings.HasPrefix(q, "SELECT") && !strings.HasPrefix(q, "SHOW")
	var err error
	if write {
		var res sqlstore.Result
		if prepared {
			var st *sqlstore.Stmt
			if st, err = c.Prepare(ctx, q); err == nil {
				res, err = st.Exec(ctx)
				st.Close()
			}
		} else {
			res, err = c.Exec(ctx, q)
		}
		if err == nil {
			fmt.Fprintf(&out, "ok, %d rows", res.RowsAffected)
			if res.Info != "" {
				fmt.Fprintf(&out, " (%s)", res.Info)
			}
			out.WriteByte('\n')
			if res.Warnings > 0 {
				rows, err := c.Query(ctx, "SHOW WARNINGS")
				if err != nil {
					t.Fatalf("SHOW WARNINGS: %v", err)
				}
				if err := diagRows(&out, rows); err != nil {
					t.Fatalf("SHOW WARNINGS: %v", err)
				}
			}
		}
	} else {
		var rows *sqlstore.Rows
		if prepared {
			var st *sqlstore.Stmt
			if st, err = c.Prepare(ctx, q); err == nil {
				rows, err = st.Query(ctx)
				defer st.Close()
			}
		} else {
			rows, err = c.Query(ctx, q)
		}
		if err == nil {
			err = diagRows(&out, rows)
		}
	}
	if err != nil {
		var se *mysql.SQLError
		if !errors.As(err, &se) {
			t.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintf(&out, "error %d (%s): %s\n", se.Num, se.State, se.Message)
	}
	return out.String()
}
