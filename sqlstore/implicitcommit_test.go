package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/sqltest"
)

// TestImplicitCommitSpec runs testdata/implicit_commit, the table of
// statements and whether MySQL 8 commits the open transaction for them.
// Commands:
//
//	exec
//	  statements, one a line, run in autocommit mode (setup and cleanup)
//	txn [mode=begin|autocommit0]
//	  statements, one a line, run in one transaction after an INSERT
//	  into probe, then ROLLBACK; a line "--- after" starts statements run
//	  after the ROLLBACK in autocommit mode (cleanup). Prints whether the
//	  insert survived ("commits: yes" or "commits: no") for a transaction
//	  opened with BEGIN and for one opened by a statement with
//	  autocommit=0, once if they agree, and the MySQL error number of a
//	  statement that failed. Another session checks that the insert was
//	  visible to it before the ROLLBACK exactly when it survives it, and
//	  "insert lost" is printed when the transaction itself no longer sees
//	  the insert before the ROLLBACK.
//	script
//	  statements, one a line, run in one fresh session; a line starting
//	  "other: " runs in another session. Prints the rows of each
//	  statement that returns a result set, after the statement, and the
//	  MySQL error number of a statement that failed. The session rolls
//	  back at the end.
func TestImplicitCommitSpec(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE probe (id INT PRIMARY KEY)")
	other := d.newCtx()
	next := 0
	datadriven.RunTest(t, "testdata/implicit_commit", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "exec":
			return specExec(t, d, td)
		case "txn":
			inside, after, _ := strings.Cut(td.Input, "--- after")
			modes := []string{"begin", "autocommit0"}
			if td.HasArg("mode") {
				var m string
				td.ScanArgs(t, "mode", &m)
				modes = []string{m}
			}
			var outs []string
			for _, mode := range modes {
				next++
				out := runInTxn(t, d, other, mode, next, sqltest.Lines(inside))
				for _, stmt := range sqltest.Lines(after) {
					if err := runStmt(d, d.ctx, stmt); err != nil {
						td.Fatalf(t, "%s: %v", stmt, err)
					}
				}
				outs = append(outs, out)
			}
			if len(outs) == 2 && outs[0] != outs[1] {
				return fmt.Sprintf("begin: %s\nautocommit0: %s\n", outs[0], outs[1])
			}
			return outs[0] + "\n"
		case "script":
			return runScript(t, d, d.newCtx(), other, sqltest.Lines(td.Input))
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}

// runInTxn inserts id into probe in a transaction of a fresh session
// opened as mode says, runs stmts, checks from other whether the insert is
// visible, rolls back and reports whether the insert survived.
func runInTxn(t *testing.T, d *testDB, other *sql.Context, mode string, id int, stmts []string) string {
	ctx := d.newCtx()
	switch mode {
	case "begin":
		require.NoError(t, runStmt(d, ctx, "BEGIN"))
	case "autocommit0":
		require.NoError(t, runStmt(d, ctx, "SET autocommit = 0"))
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	require.NoError(t, runStmt(d, ctx, fmt.Sprintf("INSERT INTO probe VALUES (%d)", id)))
	var out []string
	for _, stmt := range stmts {
		if err := runStmt(d, ctx, stmt); err != nil {
			out = append(out, fmt.Sprintf("error %d", MySQLError(err).Num))
		}
	}
	count := func(ctx *sql.Context) int64 {
		stmt := fmt.Sprintf("SELECT COUNT(*) FROM probe WHERE id = %d", id)
		rows, err := query(d.e, ctx.WithQuery(stmt), stmt)
		require.NoError(t, err)
		return rows[0][0].(int64)
	}
	if count(ctx) == 0 {
		out = append(out, "insert lost")
	}
	visible := count(other)
	require.NoError(t, runStmt(d, ctx, "ROLLBACK"))
	survived := count(other)
	switch {
	case visible == 1 && survived == 1:
		out = append(out, "commits: yes")
	case visible == 0 && survived == 0:
		out = append(out, "commits: no")
	default:
		out = append(out, fmt.Sprintf("visible before ROLLBACK: %d, survived: %d", visible, survived))
	}
	return strings.Join(out, ", ")
}

// runScript runs stmts in ctx, or in other for a line starting "other: ",
// and prints each statement's rows or error.
func runScript(t *testing.T, d *testDB, ctx, other *sql.Context, stmts []string) string {
	var b strings.Builder
	for _, line := range stmts {
		c, stmt := ctx, line
		if rest, ok := strings.CutPrefix(line, "other: "); ok {
			c, stmt = other, rest
		}
		c = c.WithQuery(stmt)
		schema, iter, err := Query(c, d.e, stmt, nil, nil)
		var rows []sql.Row
		if err == nil {
			rows, err = sql.RowIterToRows(c, iter)
		}
		switch {
		case err != nil:
			fmt.Fprintf(&b, "%s: error %d\n", line, MySQLError(err).Num)
		case len(schema) == 0, types.IsOkResultSchema(schema):
		default:
			for _, r := range rows {
				fmt.Fprintf(&b, "%s:", line)
				for _, v := range r {
					fmt.Fprintf(&b, " %v", v)
				}
				b.WriteString("\n")
			}
			if len(rows) == 0 {
				fmt.Fprintf(&b, "%s: no rows\n", line)
			}
		}
	}
	require.NoError(t, runStmt(d, ctx, "ROLLBACK"))
	return b.String()
}
